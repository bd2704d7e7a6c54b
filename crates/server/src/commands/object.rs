//! OBJECT ENCODING, REFCOUNT, FREQ and IDLETIME: what Redis 7.0
//! would answer for a key's current value under the server's settings.
//!
//! A store on disk has no in-memory object, so the encoding is the one
//! Redis gives a value like this one loaded fresh: strings `int`, `embstr`
//! or `raw`; lists `quicklist` (Redis 7.0's only list encoding); sets
//! `intset` or `hashtable`; hashes `listpack` or `hashtable`; sorted sets
//! `listpack` or `skiplist`, by the `*-max-listpack-*` and
//! `set-max-intset-entries` settings. Access times are not kept: IDLETIME
//! is 0 (every key counts as just used) and FREQ, under an LFU policy, the
//! counter of a key never read again (5).

use bytes::Bytes;
use redcodec_engine::internals::number::parse_i64;
use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use crate::access::Access;
use crate::session::Session;
use crate::settings::Settings;
use crate::state::Shared;

/// Redis' `OBJ_SHARED_INTEGERS`: strings holding 0..10000 share one object.
const SHARED_INTEGERS: i64 = 10_000;
/// The reference count of a shared object (`OBJ_SHARED_REFCOUNT`, INT_MAX).
const SHARED_REFCOUNT: i64 = i32::MAX as i64;
/// The longest string Redis keeps `embstr`.
const EMBSTR_MAX: usize = 44;
/// The LFU counter of a new key (`LFU_INIT_VAL`).
const LFU_INIT: i64 = 5;

/// The settings OBJECT answers by, read once per call.
struct Limits {
    hash_entries: i64,
    hash_value: i64,
    zset_entries: i64,
    zset_value: i64,
    intset_entries: i64,
    /// Whether strings holding small integers share one object (not under
    /// a maxmemory LRU or LFU policy).
    shared_integers: bool,
    lfu: bool,
}

impl Limits {
    fn of(settings: &Settings) -> Limits {
        let int = |name: &str, default: i64| {
            settings
                .value(name)
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        let policy = settings.value("maxmemory-policy").unwrap_or("noeviction");
        let evicting = settings.value("maxmemory").is_some_and(|m| m != "0");
        Limits {
            hash_entries: int("hash-max-listpack-entries", 128),
            hash_value: int("hash-max-listpack-value", 64),
            zset_entries: int("zset-max-listpack-entries", 128),
            zset_value: int("zset-max-listpack-value", 64),
            intset_entries: int("set-max-intset-entries", 512),
            shared_integers: !(evicting && (policy.contains("lru") || policy.contains("lfu"))),
            lfu: policy.contains("lfu"),
        }
    }
}

/// OBJECT ENCODING, REFCOUNT, FREQ, IDLETIME key (the subcommand and its
/// arity checked before, by [`super::subcommands`], which answers HELP).
pub fn object(shared: &Shared, session: &Session, access: &Access<'_>, args: &[Bytes]) -> Reply {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    if !matches!(sub.as_str(), "encoding" | "refcount" | "freq" | "idletime") {
        return super::subcommands::syntax_error(args);
    }
    let limits = Limits::of(&shared.settings.lock());
    match access.with(&session.namespace, |engine| {
        answer(engine, &sub, &args[2], &limits)
    }) {
        Ok(r) | Err(r) => r,
    }
}

fn answer(engine: &Engine<AnyCodec>, sub: &str, key: &[u8], limits: &Limits) -> Reply {
    let kind = match engine.execute(&[b"type".as_slice(), key]) {
        Reply::Status(t) => t,
        other => return other,
    };
    if kind == "none" {
        return Reply::Nil;
    }
    match sub {
        "encoding" => match encoding(engine, &kind, key, limits) {
            Ok(name) => Reply::bulk(name),
            Err(e) => e,
        },
        "refcount" => {
            let shared = kind == "string"
                && limits.shared_integers
                && matches!(engine.execute(&[b"get".as_slice(), key]),
                    Reply::Bulk(v) if small_integer(&v));
            Reply::Integer(if shared { SHARED_REFCOUNT } else { 1 })
        }
        "freq" if !limits.lfu => Reply::error(
            "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
        ),
        "freq" => Reply::Integer(LFU_INIT),
        _ if limits.lfu => Reply::error(
            "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
        ),
        _ => Reply::Integer(0),
    }
}

/// Whether a string value is one of Redis' shared integers.
fn small_integer(value: &[u8]) -> bool {
    parse_i64(value).is_some_and(|n| (0..SHARED_INTEGERS).contains(&n))
}

/// The encoding of a string value (`tryObjectEncoding` on a fresh value).
fn string_encoding(value: &[u8]) -> &'static str {
    if value.len() <= 20 && parse_i64(value).is_some() {
        "int"
    } else if value.len() <= EMBSTR_MAX {
        "embstr"
    } else {
        "raw"
    }
}

/// The elements of a collection read with `command key [args]`, or the
/// error reply (the key changed type in between).
fn read(engine: &Engine<AnyCodec>, command: &[&[u8]]) -> Result<Vec<Vec<u8>>, Reply> {
    match engine.execute(command) {
        Reply::Array(items) => Ok(items
            .into_iter()
            .filter_map(|r| match r {
                Reply::Bulk(b) => Some(b),
                _ => None,
            })
            .collect()),
        Reply::Nil => Err(Reply::Nil),
        other => Err(other),
    }
}

/// The number of elements of a collection (`command key`).
fn count(engine: &Engine<AnyCodec>, command: &[u8], key: &[u8]) -> Result<i64, Reply> {
    match engine.execute(&[command, key]) {
        Reply::Integer(n) => Ok(n),
        other => Err(other),
    }
}

/// Whether the collection at `key` has at most `entries` elements
/// (`count_command`) and its elements (`read_command`) pass `fits`: Redis'
/// condition for a compact encoding.
fn compact(
    engine: &Engine<AnyCodec>,
    key: &[u8],
    count_command: &[u8],
    read_command: &[&[u8]],
    entries: i64,
    fits: impl Fn(&[Vec<u8>]) -> bool,
) -> Result<bool, Reply> {
    Ok(count(engine, count_command, key)? <= entries && fits(&read(engine, read_command)?))
}

fn encoding(
    engine: &Engine<AnyCodec>,
    kind: &str,
    key: &[u8],
    limits: &Limits,
) -> Result<&'static str, Reply> {
    let shorter_than =
        |limit: i64| move |items: &[Vec<u8>]| items.iter().all(|i| i.len() as i64 <= limit);
    let pick = |compact: bool, small: &'static str, large: &'static str| {
        if compact {
            small
        } else {
            large
        }
    };
    Ok(match kind {
        "string" => match engine.execute(&[b"get".as_slice(), key]) {
            Reply::Bulk(v) => string_encoding(&v),
            other => return Err(other),
        },
        "list" => "quicklist",
        "set" => pick(
            compact(
                engine,
                key,
                b"scard",
                &[b"smembers", key],
                limits.intset_entries,
                |m| m.iter().all(|m| parse_i64(m).is_some()),
            )?,
            "intset",
            "hashtable",
        ),
        "hash" => pick(
            compact(
                engine,
                key,
                b"hlen",
                &[b"hgetall", key],
                limits.hash_entries,
                shorter_than(limits.hash_value),
            )?,
            "listpack",
            "hashtable",
        ),
        "zset" => pick(
            compact(
                engine,
                key,
                b"zcard",
                &[b"zrange", key, b"0", b"-1"],
                limits.zset_entries,
                shorter_than(limits.zset_value),
            )?,
            "listpack",
            "skiplist",
        ),
        _ => return Err(Reply::Nil),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_encode_as_redis_encodes_fresh_values() {
        assert_eq!(string_encoding(b"-12"), "int");
        assert_eq!(string_encoding(b"9223372036854775807"), "int");
        assert_eq!(string_encoding(b"12345678901234567890"), "embstr");
        assert_eq!(string_encoding(b"+1"), "embstr");
        assert_eq!(string_encoding(&[b'x'; 44]), "embstr");
        assert_eq!(string_encoding(&[b'x'; 45]), "raw");
        assert!(small_integer(b"0") && small_integer(b"9999"));
        assert!(!small_integer(b"10000") && !small_integer(b"-1") && !small_integer(b"01"));
    }
}
