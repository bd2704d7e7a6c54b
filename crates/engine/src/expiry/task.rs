//! The task side of active expiry: a background thread that runs a pass
//! every period of real time, or at once when asked, until dropped. It
//! knows nothing of the engine: the engine hands it the pass to run.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

/// What the task and its owner share.
#[derive(Default)]
struct State {
    /// The owner dropped the task.
    stopped: bool,
    /// A pass was asked for now ([`ExpiryTask::tick`]).
    woken: bool,
    /// A pass is running.
    running: bool,
    /// Passes completed so far.
    passes: u64,
}

/// The background thread of active expiry; stopped and joined on drop.
pub(crate) struct ExpiryTask {
    shared: Arc<(Mutex<State>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl ExpiryTask {
    /// Starts a thread that runs `pass` every `period` of real time, or at
    /// once when [`ExpiryTask::tick`] asks, until the task is dropped.
    #[cfg_attr(not(feature = "rocksdb"), allow(dead_code))] // only `Engine::open` starts one
    pub(crate) fn start(
        period: Duration,
        pass: impl Fn() + Send + 'static,
    ) -> std::io::Result<ExpiryTask> {
        let shared = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let signal = shared.clone();
        let thread = std::thread::Builder::new()
            .name("redcodec-expiry".into())
            .spawn(move || {
                let (state, cond) = &*signal;
                loop {
                    {
                        let mut state = state.lock();
                        if !state.stopped && !state.woken {
                            cond.wait_for(&mut state, period);
                        }
                        if state.stopped {
                            return;
                        }
                        state.woken = false;
                        state.running = true;
                    }
                    pass();
                    {
                        let mut state = state.lock();
                        state.running = false;
                        state.passes += 1;
                    }
                    cond.notify_all();
                }
            })?;
        Ok(ExpiryTask {
            shared,
            thread: Some(thread),
        })
    }

    /// Makes the task run one pass now, and returns once a pass has
    /// completed after this call (whatever the clock: tests drive the task
    /// with a manual clock and no real-time wait).
    pub(crate) fn tick(&self) {
        let (state, cond) = &*self.shared;
        let mut state = state.lock();
        // A pass already running may have taken its keys before this call:
        // wait for the one after it.
        let target = state.passes + 1 + u64::from(state.running);
        state.woken = true;
        cond.notify_all();
        while state.passes < target && !state.stopped {
            cond.wait(&mut state);
        }
    }
}

impl Drop for ExpiryTask {
    fn drop(&mut self) {
        let (state, cond) = &*self.shared;
        state.lock().stopped = true;
        cond.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
