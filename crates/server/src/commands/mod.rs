//! The commands the server answers itself, and the hand-over of every
//! other command to the engine.

pub mod blocking;
pub mod client;
pub mod command;
pub mod config_commands;
pub mod connection;
pub mod info;
pub mod memory;
mod move_key;
mod object;
pub mod registry;
pub mod run;
pub mod save;
pub mod subcommands;
pub mod transaction;

use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use crate::session::Session;
use crate::state::Shared;

pub use crate::access::Access;
pub use crate::command_table::{check, check_resolved};
pub use registry::{Run, Spec};
pub use run::{run_engine, run_engine_spec, run_spec, run_sync};
pub use subcommands::arity_ok;

/// The command path the subsystems run commands through.
struct Path;

impl crate::runner::CommandPath for Path {
    fn run_spec(
        &self,
        shared: &Shared,
        session: &mut Session,
        access: &Access<'_>,
        spec: &Spec,
        args: &[Vec<u8>],
    ) -> Reply {
        run_spec(shared, session, access, spec, args)
    }

    fn run_sync(
        &self,
        shared: &Shared,
        session: &mut Session,
        access: &Access<'_>,
        name: &str,
        args: &[Vec<u8>],
    ) -> Reply {
        run_sync(shared, session, access, name, args)
    }

    fn run_engine(
        &self,
        shared: &Shared,
        session: &mut Session,
        engine: &Engine<AnyCodec>,
        name: &str,
        args: &[Vec<u8>],
    ) -> Reply {
        run_engine(shared, session, engine, name, args)
    }

    fn queue(&self, session: &mut Session, args: Vec<Vec<u8>>) -> Reply {
        transaction::queue(session, args)
    }

    fn exec(&self, shared: &Shared, session: &mut Session) -> crate::session::Answer {
        transaction::exec(shared, session)
    }
}

/// Installs the registry's table ([`crate::command_table`]) and the
/// command path ([`crate::runner`]) the subsystems use: once per process,
/// before a server runs.
pub fn install() {
    crate::command_table::install(&registry::REGISTRY);
    crate::runner::install(&Path);
}
