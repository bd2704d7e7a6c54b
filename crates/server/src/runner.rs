//! The command path as the subsystems see it: what a script's
//! `redis.call`, a replica applying its master's stream, a slot import or
//! a key move needs to run a command, without naming
//! [`crate::commands`] (which lists the subsystems' handlers). The
//! commands install a [`CommandPath`] of functions when a server starts
//! ([`crate::commands::install`]); a call through it is one call through
//! a function pointer.

use bytes::Bytes;
use std::sync::OnceLock;

use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use crate::access::Access;
use crate::command_spec::Spec;
use crate::session::{Answer, Session};
use crate::state::Shared;

/// Runs a resolved command at once, shown to the monitors.
pub type RunSpec = fn(&Shared, &mut Session, &Access<'_>, &Spec, &[Bytes]) -> Reply;

/// Runs a non-blocking command `args` (its name first, any case); an
/// unknown one gets the engine's reply.
pub type RunSync = fn(&Shared, &mut Session, &Access<'_>, &[Bytes]) -> Reply;

/// Runs a command `args` (its name first) on the engine (WATCH counters
/// bumped, blocked clients served after a write).
pub type RunEngine = fn(&Shared, &mut Session, &Engine<AnyCodec>, &[Bytes]) -> Reply;

/// Running commands: the functions [`crate::commands`] installs.
pub struct CommandPath {
    /// See [`RunSpec`].
    pub run_spec: RunSpec,
    /// See [`RunSync`].
    pub run_sync: RunSync,
    /// See [`RunEngine`].
    pub run_engine: RunEngine,
    /// Queues a command inside MULTI.
    pub queue: fn(&mut Session, Vec<Bytes>) -> Reply,
    /// EXEC.
    pub exec: fn(&Shared, &mut Session) -> Answer,
}

/// The path the server runs with.
static INSTALLED: OnceLock<CommandPath> = OnceLock::new();

/// Installs the command path (once per process).
pub fn install(path: CommandPath) {
    let _ = INSTALLED.set(path);
}

/// The installed command path.
pub fn path() -> &'static CommandPath {
    INSTALLED
        .get()
        .expect("the command path is installed when a server starts")
}
