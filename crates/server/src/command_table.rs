//! The registry's table as every layer reads it: a command by name or
//! by [`SpecId`] (O(1)), and the checks before a command runs. The table
//! is built once per process by [`crate::commands::registry`] and
//! installed by [`install`] when a server starts.

use bytes::Bytes;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use redcodec_engine::internals::dispatch::{self, lookup_lower, Flags};
use redcodec_engine::Reply;

use crate::command_spec::Spec;
use crate::commands::subcommands;
use crate::spec_id::SpecId;

/// Every command, by lower-case name.
pub struct Registry {
    specs: Vec<Spec>,
    by_name: FxHashMap<&'static str, usize>,
}

impl Registry {
    /// The table of `specs`, each given its place.
    pub fn from_specs(mut specs: Vec<Spec>) -> Registry {
        let mut by_name = FxHashMap::with_capacity_and_hasher(specs.len(), Default::default());
        for (i, spec) in specs.iter_mut().enumerate() {
            spec.id = SpecId(u32::try_from(i).expect("fewer commands than u32::MAX"));
            by_name.insert(spec.name, i);
        }
        Registry { specs, by_name }
    }

    /// The command named `name`, in any letter case (Kvrocks'
    /// replication commands are unknown but at the client loop's edge:
    /// [`Registry::get_at_edge`]).
    pub fn get(&self, name: &[u8]) -> Option<&Spec> {
        self.get_at_edge(name)
            .filter(|spec| !spec.has(Flags::KVROCKS_MASTER))
    }

    /// The command named `name`, in any letter case, Kvrocks'
    /// replication commands included.
    pub fn get_at_edge(&self, name: &[u8]) -> Option<&Spec> {
        lookup_lower(name, |lower| self.by_name.get(lower)).map(|&i| &self.specs[i])
    }

    /// The command of `id`.
    pub fn by_id(&self, id: SpecId) -> &Spec {
        &self.specs[id.0 as usize]
    }

    /// Every command (COMMAND lists, INFO commandstats counts), in no
    /// particular order: not Kvrocks' replication commands.
    pub fn iter(&self) -> impl Iterator<Item = &Spec> {
        self.specs
            .iter()
            .filter(|spec| !spec.has(Flags::KVROCKS_MASTER))
    }
}

/// The table the server runs with.
static INSTALLED: OnceLock<&'static Registry> = OnceLock::new();

/// Installs the table (once per process: the data is the same for every
/// server).
pub fn install(registry: &'static Registry) {
    let _ = INSTALLED.set(registry);
}

/// The installed table.
pub fn table() -> &'static Registry {
    INSTALLED
        .get()
        .expect("the command table is installed when a server starts")
}

/// The command named `name` (any case) in the table.
pub fn get(name: &[u8]) -> Option<&'static Spec> {
    table().get(name)
}

/// The command named `name` if a request of it with `len` arguments
/// (name first) may join a write group ([`Spec::groups`]): a client's
/// pipeline and a replica's stream group alike.
pub fn joining(name: &[u8], len: usize) -> Option<&'static Spec> {
    get(name).filter(|spec| spec.groups(len))
}

/// The command named `name` (any case) of a request that follows one of
/// `last`: `last` itself when the name is its, compared rather than
/// looked up (a pipeline or a replication stream mostly repeats one
/// command).
pub fn get_after(last: &'static Spec, name: &[u8]) -> Option<&'static Spec> {
    if name.eq_ignore_ascii_case(last.name.as_bytes()) {
        Some(last)
    } else {
        get(name)
    }
}

/// The command of `id` in the table.
pub fn by_id(id: SpecId) -> &'static Spec {
    table().by_id(id)
}

/// The command named `name` (any case) in the table, Kvrocks'
/// replication commands included (the client loop's edge).
pub fn get_at_edge(name: &[u8]) -> Option<&'static Spec> {
    table().get_at_edge(name)
}

/// Checks a command before running or queueing it, as Redis 7.0 does:
/// unknown command, unknown subcommand of a container, wrong arity (of
/// the subcommand, when there is one), with Redis' texts; returns the
/// command's spec.
pub fn check(args: &[Bytes]) -> Result<&'static Spec, Reply> {
    check_resolved(get(&args[0]), args)
}

/// [`check`] for a request already looked up in the registry.
pub fn check_resolved(spec: Option<&'static Spec>, args: &[Bytes]) -> Result<&'static Spec, Reply> {
    let Some(spec) = spec else {
        let argv: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        return Err(Reply::Error(dispatch::unknown_command(&argv).to_string()));
    };
    if let (Some(container), true) = (spec.container, args.len() > 1) {
        return subcommands::check(container, args).map(|()| spec);
    }
    if !spec.arity_ok(args.len()) {
        return Err(Reply::error(format!(
            "ERR wrong number of arguments for '{}' command",
            spec.name
        )));
    }
    Ok(spec)
}
