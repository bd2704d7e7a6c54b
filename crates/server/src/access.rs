//! How a command reaches the engine: through the shared slot, or through
//! an engine already held (a leaf: sessions, subsystems and
//! [`crate::commands`] pass it along).

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

impl Access<'_> {
    /// Runs `f` with the engine in `namespace`.
    pub fn with<R>(
        &self,
        namespace: &str,
        f: impl FnOnce(&Engine<AnyCodec>) -> R,
    ) -> Result<R, Reply> {
        match self {
            Access::Shared(slot) => {
                let engine = slot.shared(namespace)?;
                Ok(f(&engine))
            }
            Access::Held(engine, held) if *held == namespace => Ok(f(engine)),
            Access::Held(..) => Err(Reply::error(
                "ERR a transaction cannot change namespace after SELECT or AUTH",
            )),
        }
    }
}
