//! The command path as the subsystems see it: what a script's
//! `redis.call`, a replica applying its master's stream, a slot import or
//! a key move needs to run a command, without naming
//! [`crate::commands`] (which lists the subsystems' handlers). The
//! commands implement [`CommandPath`] and install it when a server
//! starts ([`crate::commands::install`]); a call through it is one
//! trait-object call.

use std::sync::OnceLock;

use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use crate::access::Access;
use crate::command_spec::Spec;
use crate::session::{Answer, Session};
use crate::state::Shared;

/// Running commands (implemented by [`crate::commands`]).
pub trait CommandPath: Sync {
    /// Runs a resolved command at once, shown to the monitors.
    fn run_spec(
        &self,
        shared: &Shared,
        session: &mut Session,
        access: &Access<'_>,
        spec: &Spec,
        args: &[Vec<u8>],
    ) -> Reply;

    /// Runs a non-blocking command by its name (any case); an unknown
    /// one gets the engine's reply.
    fn run_sync(
        &self,
        shared: &Shared,
        session: &mut Session,
        access: &Access<'_>,
        name: &str,
        args: &[Vec<u8>],
    ) -> Reply;

    /// Runs a command on the engine (WATCH counters bumped, blocked
    /// clients served after a write).
    fn run_engine(
        &self,
        shared: &Shared,
        session: &mut Session,
        engine: &Engine<AnyCodec>,
        name: &str,
        args: &[Vec<u8>],
    ) -> Reply;

    /// Queues a command inside MULTI.
    fn queue(&self, session: &mut Session, args: Vec<Vec<u8>>) -> Reply;

    /// EXEC.
    fn exec(&self, shared: &Shared, session: &mut Session) -> Answer;
}

/// The path the server runs with.
static INSTALLED: OnceLock<&'static dyn CommandPath> = OnceLock::new();

/// Installs the command path (once per process).
pub fn install(path: &'static dyn CommandPath) {
    let _ = INSTALLED.set(path);
}

/// The installed command path.
pub fn path() -> &'static dyn CommandPath {
    *INSTALLED
        .get()
        .expect("the command path is installed when a server starts")
}
