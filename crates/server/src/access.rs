//! How a command reaches the engine: through the shared slot, or through
//! an engine already held (a leaf: sessions, subsystems and
//! [`crate::commands`] pass it along).

use std::ops::Deref;

use parking_lot::MappedRwLockReadGuard;
use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use crate::engines::EngineSlot;

/// How a command reaches the engine: through the shared slot, or
/// through an engine already held exclusively (inside EXEC).
pub enum Access<'a> {
    /// Take the engine shared for this command.
    Shared(&'a EngineSlot),
    /// The engine EXEC holds, and its namespace.
    Held(&'a Engine<AnyCodec>, &'a str),
}

impl<'a> Access<'a> {
    /// Runs `f` with the engine in `namespace`.
    pub fn with<R>(
        &self,
        namespace: &str,
        f: impl FnOnce(&Engine<AnyCodec>) -> R,
    ) -> Result<R, Reply> {
        self.engine(namespace).map(|engine| f(&engine))
    }

    /// The engine in `namespace` (borrowed only to choose it: the caller
    /// may change what holds the name while it uses the engine).
    pub fn engine(&self, namespace: &str) -> Result<EngineRef<'a>, Reply> {
        match *self {
            Access::Shared(slot) => slot.shared(namespace).map(EngineRef::Shared),
            Access::Held(engine, held) if held == namespace => Ok(EngineRef::Held(engine)),
            Access::Held(..) => Err(Reply::error(
                "ERR a transaction cannot change namespace after SELECT or AUTH",
            )),
        }
    }
}

/// An engine reached through [`Access::engine`]: taken shared from the
/// slot for as long as this lives, or already held.
pub enum EngineRef<'a> {
    /// Taken shared from the slot.
    Shared(MappedRwLockReadGuard<'a, Engine<AnyCodec>>),
    /// Held by the caller.
    Held(&'a Engine<AnyCodec>),
}

impl Deref for EngineRef<'_> {
    type Target = Engine<AnyCodec>;

    fn deref(&self) -> &Engine<AnyCodec> {
        match self {
            EngineRef::Shared(guard) => guard,
            EngineRef::Held(engine) => engine,
        }
    }
}
