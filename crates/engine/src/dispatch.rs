//! The command table: name, arity, which arguments are keys (for locking),
//! and the function that runs it.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use redcodec_codec::Codec;

use crate::cmd;
use crate::error::{CmdError, CmdResult};
use crate::fnv::FnvHasher;
use crate::keyspace::Ctx;
use crate::reply::Reply;

/// A command implementation.
pub type Handler<C> = fn(&mut Ctx<'_, C>, &[&[u8]]) -> CmdResult<Reply>;

/// Which arguments of a command are keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Keys {
    /// No keys (PING, ECHO, KEYS, SCAN, DBSIZE).
    None,
    /// The first argument.
    First,
    /// The first two arguments.
    FirstTwo,
    /// Every argument.
    All,
    /// Every argument from the first, stepping by `step` (MSET: 2).
    Every(usize),
    /// A destination, then a count, then that many keys (ZUNIONSTORE).
    DestNumKeys,
    /// The whole keyspace, exclusively (FLUSHALL).
    Everything,
}

impl Keys {
    /// The keys among `args` (name first).
    pub fn of<'a>(&self, args: &[&'a [u8]]) -> Vec<&'a [u8]> {
        let rest = &args[1..];
        match self {
            Keys::None | Keys::Everything => Vec::new(),
            Keys::First => rest.iter().take(1).copied().collect(),
            Keys::FirstTwo => rest.iter().take(2).copied().collect(),
            Keys::All => rest.to_vec(),
            Keys::Every(step) => rest.iter().step_by(*step).copied().collect(),
            Keys::DestNumKeys => {
                let n = rest
                    .get(1)
                    .and_then(|n| crate::number::parse_i64(n))
                    .unwrap_or(0)
                    .clamp(0, rest.len() as i64) as usize;
                rest.iter()
                    .take(1)
                    .chain(rest.iter().skip(2).take(n))
                    .copied()
                    .collect()
            }
        }
    }
}

/// One command.
pub struct CommandSpec<C: Codec> {
    /// Redis arity: `n` exactly n arguments (name included), `-n` at least n.
    pub arity: i32,
    /// Key positions.
    pub keys: Keys,
    /// The implementation.
    pub run: Handler<C>,
}

impl<C: Codec> CommandSpec<C> {
    /// Whether `argc` arguments (name included) fit the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        let argc = argc as i32;
        if self.arity >= 0 {
            argc == self.arity
        } else {
            argc >= -self.arity
        }
    }
}

/// The table being filled by each command family.
pub struct Table<C: Codec>(pub(crate) HashMap<&'static str, CommandSpec<C>>);

impl<C: Codec> Table<C> {
    /// Registers a command under its lower-case name.
    pub fn add(&mut self, name: &'static str, arity: i32, keys: Keys, run: Handler<C>) {
        self.0.insert(name, CommandSpec { arity, keys, run });
    }
}

/// Longest command name the table holds; longer names are unknown.
const MAX_NAME: usize = 32;

/// Every command, by lower-case name, looked up without allocating.
pub struct CommandTable<C: Codec>(
    HashMap<&'static str, CommandSpec<C>, BuildHasherDefault<FnvHasher>>,
);

impl<C: Codec> CommandTable<C> {
    /// The table of every command the engine implements.
    pub fn new() -> CommandTable<C> {
        let mut t = Table(HashMap::new());
        cmd::register(&mut t);
        debug_assert!(t.0.keys().all(|name| name.len() <= MAX_NAME));
        CommandTable(t.0.into_iter().collect())
    }

    /// The command named `name`, in any letter case, with its lower-case
    /// name.
    pub fn get(&self, name: &[u8]) -> Option<(&'static str, &CommandSpec<C>)> {
        if name.len() > MAX_NAME {
            return None;
        }
        let mut buf = [0u8; MAX_NAME];
        let lower = &mut buf[..name.len()];
        lower.copy_from_slice(name);
        lower.make_ascii_lowercase();
        let lower = std::str::from_utf8(lower).ok()?;
        self.0
            .get_key_value(lower)
            .map(|(name, spec)| (*name, spec))
    }

    /// Every command with its lower-case name, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &CommandSpec<C>)> {
        self.0.iter().map(|(name, spec)| (*name, spec))
    }
}

impl<C: Codec> Default for CommandTable<C> {
    fn default() -> Self {
        CommandTable::new()
    }
}

/// Redis' reply to an unknown command.
pub fn unknown_command(args: &[&[u8]]) -> CmdError {
    let mut listed = String::new();
    for a in &args[1..] {
        if listed.len() >= 128 {
            break;
        }
        let room = 128 - listed.len();
        let text = String::from_utf8_lossy(a);
        let cut: String = text.chars().take(room).collect();
        listed.push_str(&format!("'{cut}' "));
    }
    let name: String = String::from_utf8_lossy(args[0]).chars().take(128).collect();
    CmdError::UnknownCommand {
        name: name.replace(['\r', '\n'], " "),
        args: listed.replace(['\r', '\n'], " "),
    }
}
