//! Command lookup: the table of every command by name, built by the engine
//! from `cmd::table()`, and Redis' reply to an unknown command. A
//! leaf: nothing below it imports it.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::store::{DefaultStore, KvStore};
use redcodec_codec::Codec;

pub use crate::command::{CommandSpec, Flags, Handler, Keys, Shape, ShapeRule, Table};
use crate::error::CmdError;
use crate::fnv::FnvHasher;

/// Longest command name the table holds; longer names are unknown.
const MAX_NAME: usize = 32;

/// Every command, by lower-case name, looked up without allocating.
pub struct CommandTable<C: Codec, S: KvStore = DefaultStore>(
    HashMap<&'static str, CommandSpec<C, S>, BuildHasherDefault<FnvHasher>>,
);

impl<C: Codec, S: KvStore> CommandTable<C, S> {
    /// The lookup table of the commands registered in `t`.
    pub fn new(t: Table<C, S>) -> CommandTable<C, S> {
        debug_assert!(t.0.keys().all(|name| name.len() <= MAX_NAME));
        CommandTable(t.0.into_iter().collect())
    }

    /// The command named `name`, in any letter case, with its lower-case
    /// name.
    pub fn get(&self, name: &[u8]) -> Option<(&'static str, &CommandSpec<C, S>)> {
        lookup_lower(name, |lower| {
            self.0
                .get_key_value(lower)
                .map(|(name, spec)| (*name, spec))
        })
    }

    /// Every command with its lower-case name, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &CommandSpec<C, S>)> {
        self.0.iter().map(|(name, spec)| (*name, spec))
    }
}

impl<C: Codec, S: KvStore> Default for CommandTable<C, S> {
    /// The table of every command the engine has.
    fn default() -> CommandTable<C, S> {
        CommandTable::new(crate::cmd::table())
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

/// Runs `find` on `name` lower-cased in a stack buffer (no allocation): a
/// command table's lookup in any letter case. A name longer than any
/// command's, or not UTF-8, finds nothing.
pub fn lookup_lower<R>(name: &[u8], find: impl FnOnce(&str) -> Option<R>) -> Option<R> {
    if name.len() > MAX_NAME {
        return None;
    }
    let mut buf = [0u8; MAX_NAME];
    let lower = &mut buf[..name.len()];
    lower.copy_from_slice(name);
    lower.make_ascii_lowercase();
    find(std::str::from_utf8(lower).ok()?)
}
