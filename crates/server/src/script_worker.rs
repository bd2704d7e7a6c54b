//! Where a script runs: on the async worker that read its request when
//! the engine is free, so that a short script costs no thread switch; off
//! the workers (tokio's `block_in_place`) when it must wait for the
//! engine; and a script that runs long hands the worker's other
//! connections to another thread, so that they get their `BUSY` replies
//! while it runs. Scripts and transactions wait for each other before
//! they get here, as suspended tasks
//! ([`crate::admission::Admission::exclusive`]), so the engine is mostly
//! free when a script asks for it; it waits here for commands sharing the
//! engine, or a namespace switch.
//!
//! `block_in_place` for every script cost half of `-P 1` EVALSHA's rate:
//! each one moved the worker's core to another thread, and Lua's memory
//! was then freed on threads that had not allocated it.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redcodec_engine::Reply;
use tokio::runtime::{Handle, RuntimeFlavor};

use crate::engines::{EngineGuard, EngineSlot};

thread_local! {
    /// This thread runs a script off the workers already.
    static OFF_WORKER: Cell<bool> = const { Cell::new(false) };
}

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
/// other tasks go to other threads, and the script goes on here.
/// `block_in_place` hands the worker's core (its queue) to a new thread,
/// but takes it back if that thread has not started by the time the
/// closure returns; the script would then run on holding a queue no one
/// serves, and with no worker polling the sockets if the others are
/// parked. So the hand-off also wakes a parked worker, through a task
/// spawned while this thread holds no core (it goes to the runtime's
/// shared queue, and a parked worker is notified), and waits until some
/// worker has run it: that worker then steals the tasks queued here and
/// parks on the sockets, whether the core comes back or not. The wait
/// ends: the new thread runs the task if no other worker does, and the
/// blocking pool always starts it. `true` once a worker ran the task,
/// `false` when not on a worker (nothing to hand off).
pub fn hand_off() -> bool {
    if !on_worker() {
        return false;
    }
    let awake = Arc::new(AtomicBool::new(false));
    tokio::task::block_in_place(|| {
        let flag = awake.clone();
        tokio::spawn(async move { flag.store(true, Ordering::Release) });
        while !awake.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_micros(50));
        }
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::time::Instant;

    /// Waits for `flag`, at most a minute (a guard against a hang, not a
    /// measure); whether it was set.
    fn wait_for(flag: &AtomicBool) -> bool {
        let until = Instant::now() + Duration::from_secs(60);
        while !flag.load(Ordering::Acquire) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        flag.load(Ordering::Acquire)
    }

    #[test]
    fn outside_a_runtime_both_run_inline() {
        assert_eq!(off_worker(|| 7), 7);
        assert!(!hand_off());
        assert!(!OFF_WORKER.get());
    }

    #[test]
    fn a_hand_off_no_new_thread_can_take_still_leaves_the_queue_to_a_parked_worker() {
        // The blocking pool is full, so the thread `block_in_place` asks
        // for never starts and the script's thread takes its core back:
        // the other worker, parked, must still be woken to run the task
        // queued behind the script.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let holding = Arc::new(AtomicBool::new(false));
        let h = holding.clone();
        rt.spawn_blocking(move || {
            h.store(true, Ordering::Release);
            let _ = hold.recv();
        });
        assert!(wait_for(&holding));
        rt.block_on(async {
            let ran = Arc::new(AtomicBool::new(false));
            let r = ran.clone();
            let script = tokio::spawn(async move {
                let queued = r.clone();
                tokio::spawn(async move { queued.store(true, Ordering::Release) });
                let handed = hand_off();
                (handed, wait_for(&r))
            });
            assert_eq!(
                script.await.unwrap(),
                (true, true),
                "handed off, queued task ran"
            );
        });
        drop(release);
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
                assert!(hand_off());
                wait_for(&r1)
            });
            let (r2, b2) = (ran.clone(), both.clone());
            let other = tokio::spawn(async move {
                b2.wait();
                wait_for(&r2);
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
