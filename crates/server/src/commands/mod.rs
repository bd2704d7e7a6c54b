//! The commands the server answers itself, and the hand-over of every
//! other command to the engine.

pub mod acl_categories;
pub mod blocking;
pub mod channels;
pub mod client;
pub mod command;
pub mod config_commands;
pub mod connection;
pub mod flush_all;
pub mod info;
pub mod memory;
mod move_key;
pub mod namespace;
mod object;
pub mod registry;
pub mod run;
pub mod save;
pub mod subcommands;
pub mod transaction;

pub use crate::access::Access;
pub use crate::command_table::{check, check_resolved};
pub use registry::{Run, Spec};
pub use run::{run_engine, run_engine_spec, run_spec, run_sync};
pub use subcommands::arity_ok;

/// Installs the registry's table ([`crate::command_table`]) and the
/// command path ([`crate::runner`]) the subsystems use: once per process,
/// before a server runs.
pub fn install() {
    crate::command_table::install(&registry::REGISTRY);
    crate::runner::install(crate::runner::CommandPath {
        run_spec,
        run_sync,
        run_engine,
        queue: transaction::queue,
        exec: transaction::exec,
    });
}
