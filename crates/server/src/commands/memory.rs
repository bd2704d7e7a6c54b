//! MEMORY USAGE: an estimate of a key's size, from its length and its
//! elements (a store on disk has no in-memory object to measure).

use bytes::Bytes;
use redcodec_engine::internals::number::parse_i64;
use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use crate::access::Access;
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

/// Checks MEMORY USAGE's options as `memoryCommand` does: `SAMPLES n`
/// pairs, `n` an integer of at least 0 (the estimate reads every element
/// anyway).
fn check_samples(options: &[Bytes]) -> Result<(), Reply> {
    let mut rest = options;
    while let [option, tail @ ..] = rest {
        let [count, tail @ ..] = tail else {
            return Err(Reply::error("ERR syntax error"));
        };
        if !option.eq_ignore_ascii_case(b"samples") {
            return Err(Reply::error("ERR syntax error"));
        }
        match parse_i64(count) {
            None => return Err(Reply::error("ERR value is not an integer or out of range")),
            Some(n) if n < 0 => return Err(Reply::error("ERR syntax error")),
            Some(_) => {}
        }
        rest = tail;
    }
    Ok(())
}

/// MEMORY USAGE key [SAMPLES count] (the subcommand and its arity checked
/// before, by [`super::subcommands`]).
pub fn memory(session: &Session, access: &Access<'_>, args: &[Bytes]) -> Reply {
    if !args[1].eq_ignore_ascii_case(b"usage") {
        return super::subcommands::syntax_error(args);
    }
    if let Err(e) = check_samples(&args[3..]) {
        return e;
    }
    match access.with(&session.namespace, |engine| estimate(engine, &args[2])) {
        Ok(r) | Err(r) => r,
    }
}
