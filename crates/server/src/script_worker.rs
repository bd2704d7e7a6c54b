//! Where a script runs: on the async worker that read its request when
//! the engine is free, so that a short script costs no thread switch; off
//! the workers (tokio's `block_in_place`) when it must wait for the
//! engine; and a script that runs long hands the worker's other
//! connections to another thread, so that they get their `BUSY` replies
//! while it runs.
//!
//! `block_in_place` for every script cost half of `-P 1` EVALSHA's rate:
//! each one moved the worker's core to another thread, and Lua's memory
//! was then freed on threads that had not allocated it.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redcodec_engine::Reply;
use tokio::runtime::{Handle, RuntimeFlavor};

use crate::engines::{EngineGuard, EngineSlot};

thread_local! {
    /// This thread runs a script off the workers already.
    static OFF_WORKER: Cell<bool> = const { Cell::new(false) };
}

/// How long a hand-off waits for another thread to take the worker's
/// tasks before the script goes on where it is.
const HAND_OFF_WAIT: Duration = Duration::from_millis(50);

/// Whether this thread is a worker of a multi-thread runtime, running
/// tasks (not already off the workers).
fn on_worker() -> bool {
    !OFF_WORKER.get()
        && Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread)
}

/// Runs `f` with the engine held exclusively in `namespace` (or the
/// reason it cannot be): on this worker when no one holds the engine,
/// off the workers (`off_worker`) when it has to wait for it.
pub fn exclusively<T>(
    slot: &EngineSlot,
    namespace: &str,
    f: impl FnOnce(Result<EngineGuard<'_>, Reply>) -> T,
) -> T {
    match slot.try_exclusive(namespace) {
        Some(guard) => f(guard),
        None => off_worker(|| f(slot.exclusive(namespace))),
    }
}

/// Runs `f` off the async workers (it may wait on locks, or run long):
/// the worker's tasks go to another thread first. Inline elsewhere.
fn off_worker<T>(f: impl FnOnce() -> T) -> T {
    if !on_worker() {
        return f();
    }
    tokio::task::block_in_place(|| {
        struct Back;
        impl Drop for Back {
            fn drop(&mut self) {
                OFF_WORKER.set(false);
            }
        }
        OFF_WORKER.set(true);
        let _back = Back;
        f()
    })
}

/// Called once by a script that has run long on a worker: the worker's
/// other tasks go to another thread, and the script goes on here. A
/// task spawned now can only run once a thread holds the worker's queue
/// (or another worker, free to serve, stole it): the hand-off waits for
/// it, so that `block_in_place` does not take the queue straight back.
pub fn hand_off() {
    if !on_worker() {
        return;
    }
    let taken = Arc::new(AtomicBool::new(false));
    let flag = taken.clone();
    tokio::spawn(async move { flag.store(true, Ordering::Release) });
    tokio::task::block_in_place(|| {
        let until = Instant::now() + HAND_OFF_WAIT;
        while !taken.load(Ordering::Acquire) && Instant::now() < until {
            std::thread::sleep(Duration::from_micros(50));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_a_runtime_both_run_inline() {
        assert_eq!(off_worker(|| 7), 7);
        hand_off();
        assert!(!OFF_WORKER.get());
    }

    #[test]
    fn a_long_script_leaves_the_workers_queue_to_another_thread() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            // Hold both workers: one with a "script" that hands off and
            // then blocks until a task queued behind it ran; the other
            // blocked until the same. Without the hand-off nothing could
            // run the queued task.
            let ran = Arc::new(AtomicBool::new(false));
            let both = Arc::new(std::sync::Barrier::new(2));
            let (r1, b1) = (ran.clone(), both.clone());
            let script = tokio::spawn(async move {
                b1.wait();
                let r = r1.clone();
                tokio::spawn(async move { r.store(true, Ordering::Release) });
                hand_off();
                let until = Instant::now() + Duration::from_secs(60);
                while !r1.load(Ordering::Acquire) && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(1));
                }
                r1.load(Ordering::Acquire)
            });
            let (r2, b2) = (ran.clone(), both.clone());
            let other = tokio::spawn(async move {
                b2.wait();
                let until = Instant::now() + Duration::from_secs(60);
                while !r2.load(Ordering::Acquire) && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
            assert!(script.await.unwrap(), "the queued task never ran");
            other.await.unwrap();
        });
    }

    #[test]
    fn off_worker_marks_the_thread_and_clears_the_mark() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        rt.block_on(async {
            tokio::spawn(async {
                assert!(on_worker());
                let inside = off_worker(|| (OFF_WORKER.get(), on_worker()));
                assert_eq!(inside, (true, false));
                assert!(!OFF_WORKER.get());
            })
            .await
            .unwrap();
        });
    }
}
