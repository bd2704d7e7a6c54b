//! Watching what commands did: a server replicating its writes installs
//! an [`Observer`] on the engine ([`EngineCore::set_observer`]) and is
//! called after every command that committed, and after every key the
//! active expiry deleted, while the keys' locks are still held — so two
//! commands on one key reach the observer in the order they applied.

use std::sync::Arc;

use redcodec_codec::Codec;

use crate::core::EngineCore;
pub use crate::event::CommandEvent;
use crate::store::KvStore;

/// Called after each command with the engine (to read the state the
/// command left, without taking locks: the caller holds them) and the
/// event.
pub type Observer<C, S> = Arc<dyn Fn(&EngineCore<C, S>, &CommandEvent<'_>) + Send + Sync>;

impl<C: Codec, S: KvStore> EngineCore<C, S> {
    /// Installs (or, with `None`, removes) the observer of commands.
    pub fn set_observer(&self, observer: Option<Observer<C, S>>) {
        let mut held = self.observer.write();
        self.observed
            .store(observer.is_some(), std::sync::atomic::Ordering::Release);
        *held = observer;
    }

    /// Whether an observer is installed.
    pub fn has_observer(&self) -> bool {
        self.observed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Calls the observer, if any, with `event`.
    pub(crate) fn notify(&self, event: &CommandEvent<'_>) {
        let observer = self.observer.read().clone();
        if let Some(observer) = observer {
            observer(self, event);
        }
    }
}
