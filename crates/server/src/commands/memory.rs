//! MEMORY USAGE: an estimate of a key's size, from its length and its
//! elements (a store on disk has no in-memory object to measure).

use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use super::Access;
use crate::session::Session;

/// Per-record overhead counted for the key and each element.
const RECORD_OVERHEAD: i64 = 16;

fn estimate(engine: &Engine<AnyCodec>, key: &[u8]) -> Reply {
    let kind = match engine.execute(&[b"type".as_slice(), key]) {
        Reply::Status(t) => t,
        other => return other,
    };
    let size: &[u8] = match kind.as_str() {
        "none" => return Reply::Nil,
        "string" => b"strlen",
        "hash" => b"hlen",
        "list" => b"llen",
        "set" => b"scard",
        "zset" => b"zcard",
        _ => return Reply::Integer(key.len() as i64 + RECORD_OVERHEAD),
    };
    let n = match engine.execute(&[size, key]) {
        Reply::Integer(n) => n,
        other => return other,
    };
    let per_element = if kind == "string" { 1 } else { RECORD_OVERHEAD };
    Reply::Integer(key.len() as i64 + RECORD_OVERHEAD + n.saturating_mul(per_element))
}

/// MEMORY USAGE key [SAMPLES count].
pub fn memory(session: &Session, access: &Access<'_>, args: &[Vec<u8>]) -> Reply {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    let samples_ok =
        args.len() == 3 || (args.len() == 5 && args[3].eq_ignore_ascii_case(b"samples"));
    if sub != "usage" || !samples_ok {
        return Reply::error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try MEMORY HELP.",
            String::from_utf8_lossy(&args[1])
        ));
    }
    match access.with(&session.namespace, |engine| estimate(engine, &args[2])) {
        Ok(r) | Err(r) => r,
    }
}
