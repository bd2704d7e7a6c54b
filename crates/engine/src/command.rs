//! What a command is: its arity, which arguments are keys (for locking),
//! its [`Flags`] (write, blocking, allowed in MULTI…), the RESP3 shape of
//! its reply ([`ShapeRule`]) and the function that runs it; and the
//! [`Table`] that `cmd/table.rs` fills with every command. A leaf under
//! the command families: `cmd` builds the table, [`crate::dispatch`]
//! looks commands up in it.
//!
//! [`Flags`], [`Shape`] and [`ShapeRule`] are the one description of a
//! command's properties for the engine's commands and the server's own
//! alike: the server's registry (`redcodec_server::registry`) holds its
//! commands with the same three, so COMMAND, MULTI, WATCH, scripts and
//! replies read one description per command.

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
    /// Every argument but the last (BLPOP's keys before the timeout).
    AllButLast,
    /// A count as the second argument, then that many keys (BLMPOP's
    /// `timeout numkeys key…`, EVAL's `script numkeys key…`).
    CountSecond,
    /// The second argument, when there is one (OBJECT ENCODING's key).
    Second,
    /// Every argument after the first (BITOP's destination and sources).
    AfterFirst,
    /// The first argument and the argument after each `STORE` or
    /// `STOREDIST` from the fifth on (GEORADIUS, GEORADIUSBYMEMBER: Redis'
    /// `georadiusGetKeys`).
    GeoRadius,
}

impl Keys {
    /// The keys among `args` (name first).
    pub fn of<'a, A: AsRef<[u8]>>(&self, args: &'a [A]) -> Vec<&'a [u8]> {
        let mut keys = Vec::new();
        self.push_of(args, &mut keys);
        keys
    }

    /// [`Keys::of`], pushed onto `keys`: the keys of a whole pipeline
    /// gather in one vector.
    pub fn push_of<'a, A: AsRef<[u8]>>(&self, args: &'a [A], keys: &mut Vec<&'a [u8]>) {
        let rest = args.get(1..).unwrap_or_default();
        let arg = |i: usize| rest.get(i).map(AsRef::as_ref);
        let count = |i: usize| arg(i).and_then(crate::number::parse_i64);
        let (from, n) = match self {
            Keys::None | Keys::Everything => return,
            Keys::First => (0, 1),
            Keys::FirstTwo => (0, 2),
            Keys::All => (0, rest.len()),
            Keys::Every(step) => {
                keys.extend(rest.iter().step_by(*step).map(AsRef::as_ref));
                return;
            }
            Keys::NumKeys => {
                let most = (rest.len() as i64 - 1).max(0);
                (1, count(0).unwrap_or(0).clamp(0, most) as usize)
            }
            Keys::AllButLast => (0, rest.len().saturating_sub(1)),
            Keys::CountSecond => {
                let n = arg(1).and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok());
                (2, n.unwrap_or(0))
            }
            Keys::Second => (1, 1),
            Keys::AfterFirst => (1, rest.len()),
            Keys::Sort => {
                keys.extend(arg(0));
                sort_store_keys(rest.get(1..).unwrap_or_default(), keys);
                return;
            }
            Keys::GeoRadius => {
                keys.extend(arg(0));
                let mut i = 4;
                while i + 1 < rest.len() {
                    let word = rest[i].as_ref();
                    if word.eq_ignore_ascii_case(b"store")
                        || word.eq_ignore_ascii_case(b"storedist")
                    {
                        keys.push(rest[i + 1].as_ref());
                        i += 1;
                    }
                    i += 1;
                }
                return;
            }
            Keys::DestNumKeys => {
                keys.extend(arg(0));
                (
                    2,
                    count(1).unwrap_or(0).clamp(0, rest.len() as i64) as usize,
                )
            }
        };
        keys.extend(rest.iter().skip(from).take(n).map(AsRef::as_ref));
    }
}

/// SORT's destination, as Redis' `sortGetKeys` finds it: the argument
/// after the last `STORE` (as SORT itself stores to the last), skipping
/// the values of `LIMIT`, `BY` and `GET`; a `STORE` does not skip its own
/// argument, so `STORE a STORE b` names `b`.
fn sort_store_keys<'a, A: AsRef<[u8]>>(options: &'a [A], keys: &mut Vec<&'a [u8]>) {
    let is = |arg: &[u8], name: &str| arg.eq_ignore_ascii_case(name.as_bytes());
    let mut store = None;
    let mut j = 0;
    while j < options.len() {
        let arg = options[j].as_ref();
        if is(arg, "limit") {
            j += 2;
        } else if is(arg, "by") || is(arg, "get") {
            j += 1;
        } else if is(arg, "store") && j + 1 < options.len() {
            store = Some(options[j + 1].as_ref());
        }
        j += 1;
    }
    keys.extend(store);
}

/// A command's properties, as a set of bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(u32);

impl Flags {
    /// No property.
    pub const NONE: Flags = Flags(0);
    /// May change the keys it names (WATCH counters, blocked clients,
    /// READONLY replicas, read-only scripts).
    pub const WRITE: Flags = Flags(1);
    /// A reply of 0 says the write changed nothing (SADD, DEL…), as does
    /// a negative one (Kvrocks' CAS and CAD: -1 for a missing key).
    pub const ZERO_IS_NO_CHANGE: Flags = Flags(1 << 1);
    /// A blocking pop (waits for a key outside MULTI).
    pub const BLOCKING: Flags = Flags(1 << 2);
    /// Refused inside MULTI (`Command not allowed inside a transaction`).
    pub const NO_MULTI: Flags = Flags(1 << 3);
    /// Runs at once inside MULTI instead of being queued (EXEC, DISCARD,
    /// MULTI, WATCH, QUIT, RESET).
    pub const TRANSACTION: Flags = Flags(1 << 4);
    /// Allowed before authentication (AUTH, HELLO, QUIT, RESET).
    pub const NO_AUTH: Flags = Flags(1 << 5);
    /// A script may not call it (Redis' `NOSCRIPT`).
    pub const NO_SCRIPT: Flags = Flags(1 << 6);
    /// Other clients may run it while a script is busy (Redis'
    /// `ALLOW_BUSY`).
    pub const ALLOW_BUSY: Flags = Flags(1 << 7);
    /// Writes although the engine does not see it as a write (BLMPOP,
    /// BZMPOP through the server): read-only scripts refuse it.
    pub const SERVER_WRITE: Flags = Flags(1 << 8);
    /// Runs a script (EVAL, EVALSHA, FCALL and their `_RO` forms).
    pub const SCRIPT: Flags = Flags(1 << 9);
    /// Administrative (SAVE, SHUTDOWN, CONFIG…).
    pub const ADMIN: Flags = Flags(1 << 10);
    /// May write through what it runs (EVAL, EVALSHA, FCALL: not the
    /// `_RO` forms): a cluster tracks its keys' slot as a write's.
    pub const MAY_WRITE: Flags = Flags(1 << 12);
    /// Runs while a replica loads a full copy (Redis' `LOADING` flag);
    /// anything else gets `-LOADING`.
    pub const LOADING: Flags = Flags(1 << 13);
    /// Kvrocks' replication protocol (`_db_name`, `_fetch_meta`,
    /// `_fetch_file`): answered before Redis' checks.
    pub const KVROCKS_MASTER: Flags = Flags(1 << 11);
    /// Runs a cached Lua script that may take a lane of its own, beside
    /// scripts on other keys (EVAL, EVALSHA and their `_RO` forms; not
    /// FCALL, whose libraries share one Lua state).
    pub const LANE: Flags = Flags(1 << 14);
    /// Names its script by SHA1 (EVALSHA, EVALSHA_RO), not by its body.
    pub const BY_SHA: Flags = Flags(1 << 15);
    /// Reads the keyspace without naming a key (KEYS, SCAN, DBSIZE,
    /// RANDOMKEY): a read-only command to Redis' COMMAND INFO.
    pub const READS_KEYSPACE: Flags = Flags(1 << 16);
    /// Runs on a RESP2 connection that is subscribed to channels (Redis'
    /// `(P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET`).
    pub const WHILE_SUBSCRIBED: Flags = Flags(1 << 17);
    /// A read that may store what it computed (PFCOUNT's cached
    /// cardinality, Redis' `may_replicate`): when it stored something it
    /// counts as a change (WATCH, replicas) like a write, while replicas
    /// still serve it.
    pub const MAY_REPLICATE: Flags = Flags(1 << 18);
    /// A Pub/Sub command (Redis' `pubsub` flag): the names a sharded one
    /// takes (SSUBSCRIBE, SPUBLISH) route it in a cluster as keys do, but
    /// it reads and writes no key.
    pub const PUBSUB: Flags = Flags(1 << 19);
    /// Publishes a message (PUBLISH, SPUBLISH): the message goes on to
    /// replicas, Redis' `may_replicate`, so CLIENT PAUSE WRITE holds it.
    pub const PUBLISH: Flags = Flags(1 << 20);

    /// Both sets of properties.
    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// Whether every property of `other` is set.
    pub const fn has(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, other: Flags) -> Flags {
        self.with(other)
    }
}

/// How a RESP2 reply is reshaped for RESP3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// As it is (nulls become `_`).
    Plain,
    /// A flat `[k, v, k, v…]` array becomes a map (HGETALL, CONFIG GET).
    Map,
    /// An array becomes a set (SMEMBERS, SINTER…).
    Set,
    /// A bulk number becomes a double (ZSCORE, ZINCRBY).
    Double,
    /// An array of bulk numbers or nils becomes doubles (ZMSCORE).
    Doubles,
    /// `[m, s, m, s…]` with scores becomes `[[m, s], …]`, scores as
    /// doubles (ZRANGE … WITHSCORES, ZPOPMIN with a count).
    ScoredPairs,
    /// `[m, s]` with the score as a double (ZPOPMIN without a count).
    ScoredFlat,
    /// `[f, v, f, v…]` becomes `[[f, v], …]` (HRANDFIELD … WITHVALUES).
    Pairs,
    /// `[key, m, s]` with the score as a double (BZPOPMIN).
    KeyScored,
    /// `[key, [[m, s], …]]` with scores as doubles (BZMPOP).
    KeyScoredPairs,
    /// An array of `[x, y]` bulk numbers or nils: each pair's numbers
    /// become doubles (GEOPOS).
    Positions,
    /// An array of members, or of `[member, …, [x, y]]` items: the
    /// numbers of a nested pair become doubles (GEOSEARCH … WITHCOORD).
    Located,
    /// A bulk string becomes a verbatim string of format `txt` (INFO,
    /// CLIENT INFO, CLIENT LIST: Redis' `addReplyVerbatim`).
    Verbatim,
}

/// Which [`Shape`] a command's RESP3 reply takes, from its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeRule {
    /// Always this shape.
    Always(Shape),
    /// `then` when a word after the first argument is `word` (any case,
    /// as ZRANGE's `WITHSCORES`), else `otherwise`.
    WithWord {
        /// The word.
        word: &'static str,
        /// The shape with it.
        then: Shape,
        /// The shape without it.
        otherwise: Shape,
    },
    /// `then` with more than `argc` words (name included, as ZPOPMIN's
    /// count), else `otherwise`.
    MoreThan {
        /// The words without the optional argument.
        argc: usize,
        /// The shape with it.
        then: Shape,
        /// The shape without it.
        otherwise: Shape,
    },
    /// `then` when the first argument (a subcommand) is one of `subs`
    /// (any case), else plain.
    Subcommand {
        /// The subcommands, lower-case.
        subs: &'static [&'static str],
        /// Their shape.
        then: Shape,
    },
}

impl ShapeRule {
    /// A plain reply.
    pub const PLAIN: ShapeRule = ShapeRule::Always(Shape::Plain);

    /// `then` when a word after the first argument is `word`.
    pub const fn with_word(word: &'static str, then: Shape) -> ShapeRule {
        ShapeRule::WithWord {
            word,
            then,
            otherwise: Shape::Plain,
        }
    }

    /// The shape of the reply to `args` (name first).
    pub fn shape<A: AsRef<[u8]>>(&self, args: &[A]) -> Shape {
        match *self {
            ShapeRule::Always(shape) => shape,
            ShapeRule::WithWord {
                word,
                then,
                otherwise,
            } => {
                let found = args
                    .iter()
                    .skip(2)
                    .any(|a| a.as_ref().eq_ignore_ascii_case(word.as_bytes()));
                if found {
                    then
                } else {
                    otherwise
                }
            }
            ShapeRule::MoreThan {
                argc,
                then,
                otherwise,
            } => {
                if args.len() > argc {
                    then
                } else {
                    otherwise
                }
            }
            ShapeRule::Subcommand { subs, then } => {
                let sub = args.get(1).map(AsRef::as_ref);
                if sub
                    .is_some_and(|sub| subs.iter().any(|s| sub.eq_ignore_ascii_case(s.as_bytes())))
                {
                    then
                } else {
                    Shape::Plain
                }
            }
        }
    }
}

/// One command.
pub struct CommandSpec<C: Codec, S: KvStore = DefaultStore> {
    /// Redis arity: `n` exactly n arguments (name included), `-n` at least n.
    pub arity: i32,
    /// Key positions.
    pub keys: Keys,
    /// Its properties.
    pub flags: Flags,
    /// The RESP3 shape of its reply.
    pub reply_shape: ShapeRule,
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

    /// Sets the RESP3 shape of its reply (plain unless set).
    pub fn shaped(&mut self, rule: ShapeRule) -> &mut Self {
        self.reply_shape = rule;
        self
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
    /// Registers a command under its lower-case name; its reply is
    /// plain in RESP3 unless [`CommandSpec::shaped`] says otherwise.
    pub fn add(
        &mut self,
        name: &'static str,
        arity: i32,
        keys: Keys,
        flags: Flags,
        run: Handler<C, S>,
    ) -> &mut CommandSpec<C, S> {
        let spec = CommandSpec {
            arity,
            keys,
            flags,
            reply_shape: ShapeRule::PLAIN,
            run,
        };
        self.0.entry(name).insert_entry(spec).into_mut()
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
        // Redis' sortGetKeys: the last STORE only.
        let args: Vec<&[u8]> = vec![
            b"sort",
            b"abc",
            b"store",
            b"invalid",
            b"store",
            b"stillbad",
            b"store",
            b"def",
        ];
        assert_eq!(Keys::Sort.of(&args), vec![&b"abc"[..], b"def"]);
    }

    #[test]
    fn each_rule_names_its_keys_and_a_pipeline_gathers_them_in_order() {
        let words = |line: &'static str| {
            line.split_whitespace()
                .map(str::as_bytes)
                .collect::<Vec<_>>()
        };
        let cases: [(Keys, &str, &str); 12] = [
            (Keys::None, "ping x", ""),
            (Keys::Everything, "flushall async", ""),
            (Keys::First, "set k v", "k"),
            (Keys::FirstTwo, "rename a b", "a b"),
            (Keys::All, "del a b c", "a b c"),
            (Keys::Every(2), "mset a 1 b 2", "a b"),
            (Keys::NumKeys, "zunion 2 a b weights", "a b"),
            (Keys::NumKeys, "lmpop 9 a left", "a left"),
            (Keys::AllButLast, "blpop a b 0", "a b"),
            (Keys::CountSecond, "eval s 1 k a", "k"),
            (Keys::Second, "object encoding k", "k"),
            (Keys::DestNumKeys, "zunionstore d 2 a b", "d a b"),
        ];
        for (keys, line, expected) in cases {
            let args = words(line);
            assert_eq!(keys.of(&args), words(expected), "{line}");
        }
        let (first, second) = (words("set k v"), words("mset a 1 b 2"));
        let mut gathered = Vec::new();
        Keys::First.push_of(&first, &mut gathered);
        Keys::Every(2).push_of(&second, &mut gathered);
        assert_eq!(gathered, words("k a b"));
        assert!(Keys::All.of::<&[u8]>(&[]).is_empty());
    }
}
