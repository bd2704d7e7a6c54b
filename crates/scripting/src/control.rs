//! What other connections see of the script that runs: whether one runs,
//! whether it has run past `busy-reply-threshold` (they then get `BUSY`),
//! SCRIPT KILL and FUNCTION KILL.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// `-BUSY` while an EVAL script runs long.
pub const BUSY_EVAL: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
/// `-BUSY` while a function runs long.
pub const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
/// SCRIPT KILL or FUNCTION KILL with nothing running.
pub const NOT_BUSY: &str = "NOTBUSY No scripts in execution right now.";
/// KILL after the script wrote.
pub const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
/// The error a killed script ends with.
pub const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";

/// How long a run lasts before [`RunControl::on_long_run`]'s function is
/// called.
pub const LONG_RUN: Duration = Duration::from_millis(1);

/// The state of the running script, shared with every connection.
#[derive(Debug)]
pub struct RunControl {
    running: AtomicBool,
    busy: AtomicBool,
    kill: AtomicBool,
    wrote: AtomicBool,
    eval: AtomicBool,
    threshold_ms: AtomicU64,
    started: Mutex<Instant>,
    load_deadline: Mutex<Option<Instant>>,
    long_run: OnceLock<fn()>,
    long_noted: AtomicBool,
    /// A lane's control ([`RunControl::for_lane`]): a run gives up once
    /// it lasts [`LONG_RUN`].
    lane: bool,
    gave_up: AtomicBool,
}

impl Default for RunControl {
    fn default() -> Self {
        RunControl {
            running: AtomicBool::new(false),
            busy: AtomicBool::new(false),
            kill: AtomicBool::new(false),
            wrote: AtomicBool::new(false),
            eval: AtomicBool::new(true),
            threshold_ms: AtomicU64::new(5000),
            started: Mutex::new(Instant::now()),
            load_deadline: Mutex::new(None),
            long_run: OnceLock::new(),
            long_noted: AtomicBool::new(false),
            lane: false,
            gave_up: AtomicBool::new(false),
        }
    }
}

impl RunControl {
    /// The control of a [`crate::Lane`]: no connection sees its runs
    /// (never busy, never killed by SCRIPT KILL); a run that lasts
    /// [`LONG_RUN`], or [`RunControl::give_up`], stops at its next hook
    /// and [`RunControl::gave_up`] says so.
    pub fn for_lane() -> RunControl {
        RunControl {
            lane: true,
            threshold_ms: AtomicU64::new(0),
            ..RunControl::default()
        }
    }

    /// The run stops at its next hook, and is known to have given up
    /// (a lane's run about to need what its lane does not hold).
    pub fn give_up(&self) {
        self.gave_up.store(true, Ordering::SeqCst);
        self.kill.store(true, Ordering::SeqCst);
    }

    /// Whether the last run gave up ([`RunControl::give_up`], or a
    /// lane's run that lasted [`LONG_RUN`]).
    pub fn gave_up(&self) -> bool {
        self.gave_up.load(Ordering::SeqCst)
    }

    /// Sets `busy-reply-threshold` (`lua-time-limit`), in milliseconds;
    /// 0 never makes other clients wait with BUSY.
    pub fn set_threshold_ms(&self, ms: u64) {
        self.threshold_ms.store(ms, Ordering::Relaxed);
    }

    /// Sets the function a run calls, from the thread it runs on, once it
    /// has lasted [`LONG_RUN`] (the server's hand-off of the connections
    /// that wait behind it); the first one set stays.
    pub fn on_long_run(&self, f: fn()) {
        let _ = self.long_run.set(f);
    }

    /// A run starts (`eval`: an EVAL script, else a function).
    pub(crate) fn start(&self, eval: bool) {
        *self.started.lock() = Instant::now();
        self.long_noted.store(false, Ordering::Relaxed);
        self.kill.store(false, Ordering::SeqCst);
        self.wrote.store(false, Ordering::SeqCst);
        self.busy.store(false, Ordering::SeqCst);
        self.gave_up.store(false, Ordering::SeqCst);
        self.eval.store(eval, Ordering::SeqCst);
        self.running.store(true, Ordering::SeqCst);
    }

    /// The run ended.
    pub(crate) fn end(&self) {
        self.running.store(false, Ordering::SeqCst);
        self.busy.store(false, Ordering::SeqCst);
        self.kill.store(false, Ordering::SeqCst);
    }

    /// Called by the Lua hook every few thousand instructions: calls the
    /// long-run function once past [`LONG_RUN`], marks the run busy past
    /// the threshold; `true` when it must stop (killed).
    pub(crate) fn tick(&self) -> bool {
        if self.lane {
            let long = self.running.load(Ordering::Relaxed)
                && !self.gave_up.load(Ordering::Relaxed)
                && self.started.lock().elapsed() >= LONG_RUN;
            if long {
                self.give_up();
            }
        } else if self.running.load(Ordering::Relaxed) {
            let long = self
                .long_run
                .get()
                .filter(|_| !self.long_noted.load(Ordering::Relaxed));
            let busy = !self.busy.load(Ordering::Relaxed);
            if long.is_some() || busy {
                let elapsed = self.started.lock().elapsed();
                if let Some(f) = long.filter(|_| elapsed >= LONG_RUN) {
                    self.long_noted.store(true, Ordering::Relaxed);
                    f();
                }
                let limit = self.threshold_ms.load(Ordering::Relaxed);
                if busy && limit > 0 && elapsed.as_millis() >= u128::from(limit) {
                    self.busy.store(true, Ordering::SeqCst);
                }
            }
        }
        self.kill.load(Ordering::SeqCst)
    }

    /// Sets when a FUNCTION LOAD running now must stop; gives the
    /// previous deadline.
    pub(crate) fn load_deadline(&self, at: Option<Instant>) -> Option<Instant> {
        std::mem::replace(&mut *self.load_deadline.lock(), at)
    }

    /// Whether a FUNCTION LOAD ran past its deadline.
    pub(crate) fn load_overdue(&self) -> bool {
        self.load_deadline
            .lock()
            .is_some_and(|at| Instant::now() >= at)
    }

    /// The server shuts down: the running script stops at its next hook,
    /// written or not (SHUTDOWN NOSAVE, SIGTERM).
    pub fn abort(&self) {
        if self.running.load(Ordering::SeqCst) {
            self.kill.store(true, Ordering::SeqCst);
        }
    }

    /// The script wrote: it can no longer be killed.
    pub fn note_write(&self) {
        self.wrote.store(true, Ordering::SeqCst);
    }

    /// Whether the run was killed.
    pub fn killed(&self) -> bool {
        self.kill.load(Ordering::SeqCst)
    }

    /// The BUSY error other clients get while a script runs past the
    /// threshold, `None` otherwise.
    pub fn busy_error(&self) -> Option<&'static str> {
        if !self.busy.load(Ordering::SeqCst) {
            return None;
        }
        Some(if self.eval.load(Ordering::SeqCst) {
            BUSY_EVAL
        } else {
            BUSY_FUNCTION
        })
    }

    /// SCRIPT KILL (`eval`) or FUNCTION KILL: `Ok` once the kill is
    /// asked for, else Redis' error text.
    /// Only a run past the threshold can be killed: before, Redis would
    /// not have read the KILL until the script ended.
    pub fn kill(&self, eval: bool) -> Result<(), &'static str> {
        if !self.running.load(Ordering::SeqCst) || !self.busy.load(Ordering::SeqCst) {
            return Err(NOT_BUSY);
        }
        if self.wrote.load(Ordering::SeqCst) {
            return Err(UNKILLABLE);
        }
        let running_eval = self.eval.load(Ordering::SeqCst);
        if eval && !running_eval {
            return Err(BUSY_FUNCTION);
        }
        if !eval && running_eval {
            return Err(BUSY_EVAL);
        }
        self.kill.store(true, Ordering::SeqCst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    fn count() {
        CALLS.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn the_long_run_function_is_called_once_per_long_run() {
        let control = RunControl::default();
        control.on_long_run(count);
        // Not running: never called.
        std::thread::sleep(LONG_RUN * 2);
        control.tick();
        assert_eq!(CALLS.load(Ordering::SeqCst), 0);
        for run in 1..=2 {
            control.start(true);
            std::thread::sleep(LONG_RUN * 2);
            control.tick();
            control.tick();
            control.end();
            assert_eq!(CALLS.load(Ordering::SeqCst), run);
        }
    }
}
