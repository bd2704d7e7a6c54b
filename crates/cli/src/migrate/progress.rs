//! The progress of a migration on stderr: a bar over elements with keys,
//! bytes, rate and ETA. indicatif draws nothing when stderr is not a
//! terminal; the summary printed afterwards is the record.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use redcodec_migrate::{Flow, Observer, Plan, Skipped, Tally};

use redcodec_migrate::summary::{human_bytes, thousands};

/// How many progress calls (one per key or chunk) between two updates of
/// the bar's position, and of its message (which costs a string).
const POSITION_EVERY: u64 = 16;
const MESSAGE_EVERY: u64 = 256;

/// The progress bar, as a migration [`Observer`].
pub struct Bar {
    bar: ProgressBar,
    total_keys: u64,
    /// Elements an interrupted run had done (not part of this run's rate).
    start_elements: u64,
    calls: u64,
    pause_after: Option<u64>,
}

impl Bar {
    /// A bar on stderr; `pause_after`: the testing aid of
    /// `--pause-after-commits`.
    pub fn new(pause_after: Option<u64>) -> Bar {
        Bar::on(ProgressBar::new(0), pause_after)
    }

    fn on(bar: ProgressBar, pause_after: Option<u64>) -> Bar {
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {percent:>3}% {human_pos}/{human_len} elements · {msg} · ETA {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        bar.set_message("planning");
        Bar {
            bar,
            total_keys: 0,
            start_elements: 0,
            calls: 0,
            pause_after,
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn message(&self, done: &Tally) {
        let seconds = self.bar.elapsed().as_secs_f64().max(1e-3);
        let rate = done.elements.saturating_sub(self.start_elements) as f64 / seconds;
        self.bar.set_message(format!(
            "{}/{} keys · {} · {} elements/s",
            thousands(done.keys),
            thousands(self.total_keys),
            human_bytes(done.bytes),
            thousands(rate as u64)
        ));
    }
}

impl Observer for Bar {
    fn planned(&mut self, plan: &Plan) {
        self.total_keys = plan.done.keys + plan.keys;
        self.start_elements = plan.done.elements;
        self.bar.set_length(plan.done.elements + plan.elements);
        self.bar.set_position(plan.done.elements);
        self.bar.reset_eta();
        self.message(&plan.done);
    }

    fn progressed(&mut self, done: &Tally) {
        self.calls += 1;
        if self.calls % POSITION_EVERY == 1 {
            self.bar.set_position(done.elements);
        }
        if self.calls % MESSAGE_EVERY == 1 {
            self.message(done);
        }
    }

    fn skipped(&mut self, skipped: &Skipped) {
        self.bar.suspend(|| eprintln!("skipping {skipped}"));
    }

    fn committed(&mut self, commit: u64) -> Flow {
        if self.pause_after == Some(commit) {
            self.bar
                .suspend(|| eprintln!("paused after commit {commit}"));
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        Flow::Continue
    }
}
