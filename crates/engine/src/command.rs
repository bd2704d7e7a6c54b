//! What a command is: its arity, which arguments are keys (for locking),
//! and the function that runs it; and the [`Table`] that `cmd/table.rs`
//! fills with every command. A leaf under the command families: `cmd`
//! builds the table, [`crate::dispatch`] looks commands up in it.

use std::collections::HashMap;

use crate::store::{DefaultStore, KvStore};
use redcodec_codec::Codec;

use crate::error::CmdResult;
use crate::keyspace::Ctx;
use crate::reply::Reply;

/// A command implementation.
pub type Handler<C, S = DefaultStore> = fn(&mut Ctx<'_, C, S>, &[&[u8]]) -> CmdResult<Reply>;

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
    /// A count as the first argument, then that many keys (LMPOP, ZMPOP,
    /// SINTERCARD, ZUNION).
    NumKeys,
    /// The whole keyspace, exclusively (FLUSHALL).
    Everything,
    /// The first argument and the destination after each `STORE` among
    /// SORT's options.
    Sort,
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
            Keys::NumKeys => {
                let n = rest
                    .first()
                    .and_then(|n| crate::number::parse_i64(n))
                    .unwrap_or(0)
                    .clamp(0, (rest.len() as i64 - 1).max(0)) as usize;
                rest.iter().skip(1).take(n).copied().collect()
            }
            Keys::Sort => rest
                .iter()
                .take(1)
                .copied()
                .chain(sort_store_keys(rest.get(1..).unwrap_or_default()))
                .collect(),
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

/// The destinations among SORT's options: the argument after each
/// `STORE`, skipping the values of `LIMIT`, `BY` and `GET` as SORT's parser
/// does.
fn sort_store_keys<'a>(options: &[&'a [u8]]) -> Vec<&'a [u8]> {
    let is = |arg: &[u8], name: &str| arg.eq_ignore_ascii_case(name.as_bytes());
    let mut keys = Vec::new();
    let mut j = 0;
    while j < options.len() {
        let left = options.len() - j - 1;
        let arg = options[j];
        if is(arg, "limit") && left >= 2 {
            j += 2;
        } else if (is(arg, "by") || is(arg, "get")) && left >= 1 {
            j += 1;
        } else if is(arg, "store") && left >= 1 {
            keys.push(options[j + 1]);
            j += 1;
        }
        j += 1;
    }
    keys
}

/// One command.
pub struct CommandSpec<C: Codec, S: KvStore = DefaultStore> {
    /// Redis arity: `n` exactly n arguments (name included), `-n` at least n.
    pub arity: i32,
    /// Key positions.
    pub keys: Keys,
    /// The implementation.
    pub run: Handler<C, S>,
}

impl<C: Codec, S: KvStore> CommandSpec<C, S> {
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
pub struct Table<C: Codec, S: KvStore = DefaultStore>(
    pub(crate) HashMap<&'static str, CommandSpec<C, S>>,
);

impl<C: Codec, S: KvStore> Default for Table<C, S> {
    fn default() -> Self {
        Table(HashMap::new())
    }
}

impl<C: Codec, S: KvStore> Table<C, S> {
    /// Registers a command under its lower-case name.
    pub fn add(&mut self, name: &'static str, arity: i32, keys: Keys, run: Handler<C, S>) {
        self.0.insert(name, CommandSpec { arity, keys, run });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_names_its_key_and_store_destinations() {
        let args: Vec<&[u8]> = vec![
            b"sort", b"src", b"by", b"store", b"limit", b"0", b"1", b"store", b"dst",
        ];
        assert_eq!(Keys::Sort.of(&args), vec![&b"src"[..], b"dst"]);
        let args: Vec<&[u8]> = vec![b"sort", b"src", b"get", b"#", b"store"];
        assert_eq!(Keys::Sort.of(&args), vec![&b"src"[..]]);
    }
}
