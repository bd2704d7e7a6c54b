//! SIGTERM and SIGINT for a process that serves (`redcodec serve`,
//! `redcodec migrate --follow`), taken on a thread of their own with
//! `sigwait(3)`.
//!
//! Both signals are blocked before the runtime starts, so every thread
//! the server makes inherits the block: one sent at any moment — even
//! before the server listens, or while every thread is parked — stays
//! pending until the waiting thread takes it. None is lost and none
//! kills the process before the store is flushed.

use std::future::Future;
use std::io;

/// SIGTERM and SIGINT, blocked in the calling thread (and so in every
/// thread it starts afterwards).
pub struct ShutdownSignals {
    set: libc::sigset_t,
}

impl ShutdownSignals {
    /// Blocks SIGTERM and SIGINT in the calling thread. Call it before
    /// any other thread is started.
    pub fn block() -> io::Result<ShutdownSignals> {
        // SAFETY: the set is initialised by sigemptyset before use, and
        // pthread_sigmask only reads it.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::sigaddset(&mut set, libc::SIGINT);
            let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Ok(ShutdownSignals { set })
        }
    }

    /// Starts the thread that waits for the first of the two signals;
    /// the future completes when it arrives (and is said on stderr).
    pub fn wait(self) -> io::Result<impl Future<Output = ()> + Send + 'static> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let mut signal: libc::c_int = 0;
                // SAFETY: `set` holds blocked signals, as sigwait wants.
                let rc = unsafe { libc::sigwait(&self.set, &mut signal) };
                let name = match signal {
                    libc::SIGTERM => "SIGTERM",
                    libc::SIGINT => "SIGINT",
                    _ => "a signal",
                };
                if rc == 0 {
                    eprintln!("redcodec serve: {name} received, shutting down");
                } else {
                    eprintln!("redcodec serve: waiting for signals failed ({rc}), shutting down");
                }
                let _ = tx.send(());
            })?;
        Ok(async move {
            let _ = rx.await;
        })
    }
}
