//! The store side of active expiry: one pass over the keys the compaction
//! filters reported ([`redcodec_store::ExpiredKeys`]), deleting each one
//! that is still expired, the way `DEL` deletes.

use redcodec_codec::Codec;

use crate::core::EngineCore;
use crate::error::CmdError;
use crate::keyspace::Ctx;

impl<C: Codec> EngineCore<C> {
    /// One pass of active expiry, as the background task runs it every
    /// period: takes every key the compaction filters reported
    /// ([`Codec::gc_expired_key`]) and deletes each one whose metadata is
    /// still expired at the clock's current time, the way `DEL` deletes.
    /// Returns how many keys were deleted. Keys whose pass fails stay
    /// reported. While the store holds expiry (a replica's:
    /// [`redcodec_store::Store::expiry_hold`]) the pass deletes nothing and
    /// the reported keys wait. Tests call this to drive the task
    /// deterministically.
    pub fn expire_reported_keys(&self) -> Result<usize, CmdError> {
        if self.store.expiry_hold().is_held() {
            return Ok(0);
        }
        let reported = self.store.expired_keys().drain();
        let mut deleted = 0;
        let mut failure = None;
        for key in reported {
            match self.expire_key(&key) {
                Ok(true) => deleted += 1,
                Ok(false) => {}
                Err(e) => {
                    self.store.expired_keys().report(key);
                    failure.get_or_insert(e);
                }
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(deleted),
        }
    }

    /// Deletes each key watched for its expiry (`EngineCore::expiry_watch`:
    /// keys written with one while `expired` events are published) whose
    /// time has come, announcing `expired` as Redis' active expiry does;
    /// how many it deleted. A key written again since is left as it is
    /// (its new expiry, if any, is watched too). Nothing is deleted while
    /// the store holds expiry (a replica's).
    pub fn expire_watched_keys(&self) -> Result<usize, CmdError> {
        if self.store.expiry_hold().is_held() {
            return Ok(0);
        }
        let now = self.clock.now_ms();
        // Due: expired at `now` (`Meta::expired_at`: before it).
        let due: Vec<(u64, Vec<u8>)> = {
            let mut watch = self.expiry_watch.lock();
            let later = watch.split_off(&(now, Vec::new()));
            std::mem::replace(&mut *watch, later).into_iter().collect()
        };
        let mut deleted = 0;
        for (at, key) in due {
            match self.expire_key(&key) {
                Ok(true) => deleted += 1,
                Ok(false) => self.watch_again(&key)?,
                Err(e) => {
                    // Tried again at the next pass.
                    self.expiry_watch.lock().insert((at, key));
                    return Err(e);
                }
            }
        }
        Ok(deleted)
    }

    /// Watches `key` again if it is live with an expiry: written again
    /// since it was watched, or stored with an expiry its format rounds up.
    fn watch_again(&self, key: &[u8]) -> Result<(), CmdError> {
        let _held = self.locks.lock_keys(&[key]);
        let ctx = Ctx::new(self);
        if let Some(meta) = ctx.view(key)?.live.filter(|m| m.expire_ms != 0) {
            self.expiry_watch
                .lock()
                .insert((meta.expire_ms, key.to_vec()));
        }
        Ok(())
    }

    /// Whether keys are watched for their expiry.
    pub fn watches_expiries(&self) -> bool {
        !self.expiry_watch.lock().is_empty()
    }

    /// Deletes `key` if its metadata is expired now; whether it did.
    fn expire_key(&self, key: &[u8]) -> Result<bool, CmdError> {
        let _held = self.locks.lock_keys(&[key]);
        let mut ctx = Ctx::new(self);
        let view = ctx.view(key)?;
        let mut deleted = false;
        for meta in &view.dead {
            if meta.expired_at(ctx.now_ms()) {
                ctx.remove_key(key, meta)?;
                deleted = true;
            }
        }
        let events = ctx.take_events();
        ctx.commit()?;
        self.publish_key_events(&events);
        if deleted {
            self.notify(&crate::observe::CommandEvent {
                args: &[b"del", key],
                reply: &crate::Reply::Integer(1),
                unchanged: &[],
                expired: &[],
            });
        }
        Ok(deleted)
    }
}
