//! What a write sends to replicas: the command as it ran, or the
//! deterministic form Redis 7 propagates in its place, so a replica that
//! applies it reaches the master's state whatever its clock and its
//! random draws.
//!
//! - Relative expiries become absolute: `EXPIRE`/`PEXPIRE`/`EXPIREAT`
//!   and `GETEX EX|PX|EXAT|PXAT` → `PEXPIREAT key ms`; `SETEX`,
//!   `PSETEX` and `SET … EX|PX|EXAT` → `SET key value PXAT ms`;
//!   `RESTORE key ttl …` → `RESTORE key ms … ABSTTL`. An expiry already
//!   past deleted the key: `DEL key`. `GETEX PERSIST` → `PERSIST key`;
//!   a `GETEX` without options is a read, not sent.
//! - `SPOP` → `SREM key members…`, or `DEL key` when it emptied the set.
//! - `INCRBYFLOAT` → `SET key value KEEPTTL`; `HINCRBYFLOAT` → `HSET
//!   key field value`.
//! - Kvrocks' `CAS key old new [EX|PX|EXAT|PXAT n]` that swapped → `SET
//!   key new [PXAT ms]` (a CAS without expiry leaves none, as SET does).
//! - Everything else as it ran (the blocking pops reach the engine as
//!   the non-blocking pops they perform, which are sent as such).
//!
//! The absolute times are read from the key the command left (its
//! metadata's expiry), so they are the master's stored times exactly.

use redcodec_engine::internals::keyspace::Ctx;
use redcodec_engine::observe::CommandEvent;
use redcodec_engine::{EngineCore, Reply};
use redcodec_formats::AnyCodec;

use crate::command_roles::Propagation;

/// One command to send, as its arguments.
pub type Args = Vec<Vec<u8>>;

pub use redcodec_protocol::encode_request as encode;

/// The key's absolute expiry in unix ms after the command: `Some(0)`
/// when it has none, `None` when the key is gone.
fn expiry_after(core: &EngineCore<AnyCodec>, key: &[u8]) -> Option<u64> {
    let ctx = Ctx::new(core);
    ctx.live(key).ok().flatten().map(|m| m.expire_ms)
}

/// Whether the key holds the string `value` after the command (a `SET`
/// with `NX`/`XX` and `GET` replies the old value whether it set or not).
fn holds_string(core: &EngineCore<AnyCodec>, key: &[u8], value: &[u8]) -> bool {
    let ctx = Ctx::new(core);
    matches!(ctx.live(key), Ok(Some(m))
        if m.data_type == redcodec_codec::DataType::String && m.value == value)
}

fn del(key: &[u8]) -> Args {
    vec![b"DEL".to_vec(), key.to_vec()]
}

fn owned(args: &[&[u8]]) -> Args {
    args.iter().map(|a| a.to_vec()).collect()
}

/// `key` now: its absolute expiry as `PEXPIREAT`, `PERSIST` when it has
/// none, `DEL` when it is gone.
fn expiry_of(core: &EngineCore<AnyCodec>, key: &[u8]) -> Args {
    match expiry_after(core, key) {
        None => del(key),
        Some(0) => vec![b"PERSIST".to_vec(), key.to_vec()],
        Some(ms) => vec![
            b"PEXPIREAT".to_vec(),
            key.to_vec(),
            ms.to_string().into_bytes(),
        ],
    }
}

/// `SET key value` with the key's stored expiry (`PXAT`), or `DEL` when
/// the key is gone.
fn set_with_expiry(core: &EngineCore<AnyCodec>, key: &[u8], value: &[u8]) -> Args {
    match expiry_after(core, key) {
        None => del(key),
        Some(0) => vec![b"SET".to_vec(), key.to_vec(), value.to_vec()],
        Some(ms) => vec![
            b"SET".to_vec(),
            key.to_vec(),
            value.to_vec(),
            b"PXAT".to_vec(),
            ms.to_string().into_bytes(),
        ],
    }
}

fn has_option(args: &[&[u8]], options: &[&str]) -> bool {
    args.iter()
        .any(|a| options.iter().any(|o| a.eq_ignore_ascii_case(o.as_bytes())))
}

/// The bulk strings of a reply (one, or an array's).
fn bulks(reply: &Reply) -> Vec<Vec<u8>> {
    match reply {
        Reply::Bulk(b) => vec![b.clone()],
        Reply::Array(items) => items.iter().flat_map(bulks).collect(),
        _ => Vec::new(),
    }
}

/// The commands that carry out `event` (a write that changed something,
/// reaching replicas as `propagation` says) on a replica.
pub fn rewrite(
    core: &EngineCore<AnyCodec>,
    propagation: Propagation,
    event: &CommandEvent<'_>,
) -> Vec<Args> {
    let a = event.args;
    let key = a.get(1).copied().unwrap_or_default();
    let one = match propagation {
        Propagation::Expiry => expiry_of(core, key),
        Propagation::GetEx if has_option(&a[2..], &["ex", "px", "exat", "pxat", "persist"]) => {
            expiry_of(core, key)
        }
        Propagation::GetEx => return Vec::new(),
        Propagation::SetEx if a.len() == 4 => set_with_expiry(core, key, a[3]),
        Propagation::Set if a.len() > 3 && has_option(&a[3..], &["ex", "px", "exat", "pxat"]) => {
            let conditional = has_option(&a[3..], &["nx", "xx"]);
            if conditional && expiry_after(core, key).is_some() && !holds_string(core, key, a[2]) {
                return Vec::new();
            }
            set_with_expiry(core, key, a[2])
        }
        // SORT without STORE only reads.
        Propagation::Sort if !has_option(&a[2..], &["store"]) => return Vec::new(),
        Propagation::Restore if a.len() >= 4 => {
            let mut out = vec![b"RESTORE".to_vec(), key.to_vec()];
            match expiry_after(core, key) {
                None => return vec![del(key)],
                Some(ms) => out.push(ms.to_string().into_bytes()),
            }
            out.push(a[3].to_vec());
            if has_option(&a[4..], &["replace"]) {
                out.push(b"REPLACE".to_vec());
            }
            out.push(b"ABSTTL".to_vec());
            out
        }
        Propagation::SPop => {
            if expiry_after(core, key).is_none() {
                del(key)
            } else {
                let mut out = vec![b"SREM".to_vec(), key.to_vec()];
                out.extend(bulks(event.reply));
                if out.len() == 2 {
                    return Vec::new();
                }
                out
            }
        }
        Propagation::IncrByFloat => match event.reply {
            Reply::Bulk(v) => vec![
                b"SET".to_vec(),
                key.to_vec(),
                v.clone(),
                b"KEEPTTL".to_vec(),
            ],
            _ => owned(a),
        },
        Propagation::Cas if a.len() >= 4 => set_with_expiry(core, key, a[3]),
        Propagation::HIncrByFloat if a.len() == 4 => match event.reply {
            Reply::Bulk(v) => vec![b"HSET".to_vec(), key.to_vec(), a[2].to_vec(), v.clone()],
            _ => owned(a),
        },
        _ => owned(a),
    };
    vec![one]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_resp_arrays_of_bulk_strings() {
        let mut out = Vec::new();
        encode(&[b"SET".as_slice(), b"k", b""], &mut out);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
    }
}
