//! Read commands over a store of arbitrary records.
//!
//! Input: an [`arbitrary`] [`Input`] — a format, records, and commands.
//! A record is either raw bytes at any column family of the format's
//! layout, or a key made with the format's encoders from a
//! [`roundtrip::Case`] (metadata of any type, with any element count,
//! list bounds, version and expiry, and elements of any kind and version)
//! and then damaged (a byte changed, the value cut short), so that records
//! of one key disagree as a corrupt or foreign store's do. User keys come
//! from a pool of four, so records meet. The records go into an in-memory
//! engine ([`Engine::in_memory`], no RocksDB), which then runs read
//! commands of every kind on keys of the pool with words, numbers and
//! bytes as arguments.
//!
//! Every command must reply (a value or an error reply): no panic, no
//! allocation beyond libFuzzer's limit from a count a record states, no
//! endless loop (libFuzzer's timeout).

use std::sync::Arc;

use arbitrary::{Arbitrary, Unstructured};
use redcodec_codec::{Codec, Place};
use redcodec_engine::store::{Batch, KvStore};
use redcodec_engine::{Engine, ManualClock};
use redcodec_formats::{AnyCodec, Format, FormatOptions};

use crate::roundtrip::{self, Case};

/// The user keys every record and command is about.
pub const KEYS: [&[u8]; 4] = [b"k", b"l", b"m", b""];

/// The read commands run, lower-case.
pub const COMMANDS: &[&str] = &[
    "get",
    "mget",
    "strlen",
    "getrange",
    "getbit",
    "bitcount",
    "lcs",
    "exists",
    "type",
    "ttl",
    "pttl",
    "expiretime",
    "pexpiretime",
    "dbsize",
    "keys",
    "scan",
    "randomkey",
    "hget",
    "hmget",
    "hgetall",
    "hkeys",
    "hvals",
    "hlen",
    "hexists",
    "hstrlen",
    "hscan",
    "hrandfield",
    "lrange",
    "lindex",
    "llen",
    "lpos",
    "smembers",
    "sismember",
    "smismember",
    "scard",
    "sscan",
    "srandmember",
    "sinter",
    "sintercard",
    "sunion",
    "sdiff",
    "zrange",
    "zrevrange",
    "zrangebyscore",
    "zrevrangebyscore",
    "zrangebylex",
    "zrevrangebylex",
    "zscore",
    "zmscore",
    "zcard",
    "zrank",
    "zrevrank",
    "zscan",
    "zcount",
    "zlexcount",
    "zrandmember",
    "zunion",
    "zinter",
    "zintercard",
    "zdiff",
];

/// Words the commands' options are made of, and numbers at the edges.
const WORDS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "-2",
    "3",
    "10",
    "-10",
    "100",
    "-100",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967296",
    "inf",
    "+inf",
    "-inf",
    "(1",
    "(0",
    "1.5",
    "[a",
    "(a",
    "[k",
    "-",
    "+",
    "a",
    "b",
    "*",
    "k*",
    "WITHSCORES",
    "WITHVALUES",
    "REV",
    "BYSCORE",
    "BYLEX",
    "LIMIT",
    "COUNT",
    "MATCH",
    "TYPE",
    "string",
    "hash",
    "list",
    "set",
    "zset",
    "RANK",
    "MAXLEN",
    "LEN",
    "IDX",
    "MINMATCHLEN",
    "WITHMATCHLEN",
    "BYTE",
    "BIT",
    "WEIGHTS",
    "AGGREGATE",
    "SUM",
    "MIN",
    "MAX",
    "NOVALUES",
];

/// Commands whose count argument asks for that many elements (repeated
/// if negative), whatever the store holds: their counts stay small, so
/// that a large reply means a bug, not a large request.
const COUNTED: &[&str] = &["srandmember", "hrandfield", "zrandmember"];

/// One record of the store.
#[derive(Arbitrary, Debug)]
pub enum RecordIn {
    /// Raw bytes at column family `place` (an index into the layout).
    Raw {
        /// Which column family.
        place: u8,
        /// The record's key.
        key: Vec<u8>,
        /// Its value.
        value: Vec<u8>,
    },
    /// A key of the pool through the format's encoders, then damaged.
    Encoded {
        /// Which key of [`KEYS`].
        key: u8,
        /// Its metadata and elements.
        case: Case,
        /// Changes byte `.0` (modulo the length) of the metadata value to
        /// `.1`.
        damage: Option<(u16, u8)>,
        /// Cuts the metadata value to this many bytes.
        cut: Option<u8>,
    },
}

/// One argument of a command.
#[derive(Arbitrary, Debug)]
pub enum Arg {
    /// A key of [`KEYS`].
    Key(u8),
    /// A word of [`WORDS`].
    Word(u8),
    /// A number.
    Int(i64),
    /// Bytes.
    Bytes(Vec<u8>),
}

/// One command: a name of [`COMMANDS`], its arguments after the first key.
#[derive(Arbitrary, Debug)]
pub struct CommandIn {
    name: u8,
    key: u8,
    args: Vec<Arg>,
}

/// One fuzz input.
#[derive(Arbitrary, Debug)]
pub struct Input {
    format: u8,
    records: Vec<RecordIn>,
    commands: Vec<CommandIn>,
}

fn pick<T: Copy>(items: &[T], i: u8) -> T {
    items[usize::from(i) % items.len()]
}

/// The records of `r` for `codec`, as (place, key, value).
fn records_of(codec: &AnyCodec, r: &RecordIn) -> Vec<(Place, Vec<u8>, Vec<u8>)> {
    match r {
        RecordIn::Raw { place, key, value } => {
            let places: Vec<Place> = codec.layout().places().collect();
            vec![(pick(&places, *place), key.clone(), value.clone())]
        }
        RecordIn::Encoded {
            key,
            case,
            damage,
            cut,
        } => {
            let key = pick(&KEYS, *key);
            let mut out = roundtrip::records(codec, key, case);
            if let Some((_, _, value)) = out.first_mut() {
                if let Some((at, byte)) = damage {
                    if !value.is_empty() {
                        let at = usize::from(*at) % value.len();
                        value[at] = *byte;
                    }
                }
                if let Some(n) = cut {
                    value.truncate(usize::from(*n));
                }
            }
            out
        }
    }
}

/// The arguments of `c`: its name, its key, then its arguments.
fn command_of(c: &CommandIn) -> Vec<Vec<u8>> {
    let name = pick(COMMANDS, c.name);
    let counted = COUNTED.contains(&name);
    let mut args = vec![name.as_bytes().to_vec(), pick(&KEYS, c.key).to_vec()];
    for a in c.args.iter().take(12) {
        args.push(match a {
            Arg::Key(k) => pick(&KEYS, *k).to_vec(),
            Arg::Word(w) => pick(WORDS, *w).as_bytes().to_vec(),
            Arg::Int(n) if counted => (n % 1000).to_string().into_bytes(),
            Arg::Int(n) => n.to_string().into_bytes(),
            Arg::Bytes(b) => b.clone(),
        });
    }
    if counted {
        // Words hold no count larger than 100 but `4294967296` and the
        // i64 edges; replace those.
        for a in args.iter_mut().skip(2) {
            if std::str::from_utf8(a)
                .ok()
                .and_then(|s| s.parse::<i64>().ok())
                .is_some_and(|n| n.unsigned_abs() > 1000)
            {
                *a = b"7".to_vec();
            }
        }
    }
    args
}

/// Builds the store of `input` and runs its commands; returns the replies
/// (for tests).
pub fn run(input: &Input) -> Vec<String> {
    let format = pick(Format::ALL, input.format);
    let codec = format
        .codec(&FormatOptions::default())
        .expect("every format opens with default options");
    let clock = Arc::new(ManualClock::at_ms(1_700_000_000_000));
    let engine = Engine::in_memory(codec.clone(), clock).expect("an in-memory engine");
    let mut batch = Batch::default();
    for r in input.records.iter().take(64) {
        for (place, key, value) in records_of(&codec, r) {
            batch.put(place, key, value);
        }
    }
    engine.store().write(batch).expect("a memory write");
    input
        .commands
        .iter()
        .take(16)
        .map(|c| format!("{:?}", engine.execute(&command_of(c))))
        .collect()
}

/// The fuzz target: `data` as an [`Input`].
pub fn fuzz(data: &[u8]) {
    if let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) {
        run(&input);
    }
}
