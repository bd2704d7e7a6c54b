//! Active expiry, for formats that declare
//! [`redcodec_codec::Capabilities::active_expiry`] (Ardb): compaction
//! filters report expired keys into [`redcodec_store::ExpiredKeys`] instead of dropping
//! them, and a background task started with the engine deletes, every
//! period, each reported key that is still expired.
//!
//! The task decides with the engine's clock (so a manual clock drives it),
//! takes the key's lock like any command, and deletes through the same path
//! as `DEL`. It stops, and is joined, when the engine is dropped.
//! [`crate::EngineCore::expire_reported_keys`] runs one pass directly.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use redcodec_codec::Codec;

use crate::engine::EngineCore;

/// The background thread of active expiry; stopped and joined on drop.
pub(crate) struct ExpiryTask {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl ExpiryTask {
    /// Starts a thread that runs [`EngineCore::expire_reported_keys`] every
    /// `period` of real time until the task is dropped.
    pub(crate) fn start<C: Codec>(
        core: Arc<EngineCore<C>>,
        period: Duration,
    ) -> std::io::Result<ExpiryTask> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = stop.clone();
        let thread = std::thread::Builder::new()
            .name("redcodec-expiry".into())
            .spawn(move || {
                let (stopped, wake) = &*signal;
                loop {
                    {
                        let mut stopped = stopped.lock();
                        if !*stopped {
                            wake.wait_for(&mut stopped, period);
                        }
                        if *stopped {
                            return;
                        }
                    }
                    // A failed pass leaves the keys it could not handle
                    // reported; the next pass tries again.
                    let _ = core.expire_reported_keys();
                }
            })?;
        Ok(ExpiryTask {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for ExpiryTask {
    fn drop(&mut self) {
        let (stopped, wake) = &*self.stop;
        *stopped.lock() = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
