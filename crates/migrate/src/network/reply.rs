//! Replies of a Redis-compatible server read as what a migration needs:
//! integers, byte strings, arrays, `SCAN` pages, refusals as Redis prints
//! them.

use redis::{Cmd, Value};

/// The name of a command, for messages.
pub fn command_name(command: &Cmd) -> String {
    command
        .args_iter()
        .next()
        .map(|a| match a {
            redis::Arg::Simple(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            _ => String::new(),
        })
        .unwrap_or_default()
}

/// A server error as Redis prints it: `CODE detail`.
pub fn describe(e: &redis::ServerError) -> String {
    match e.details() {
        Some(detail) => format!("{} {detail}", e.code()),
        None => e.code().to_string(),
    }
}

/// An integer reply.
pub fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) => Some(*n),
        Value::BulkString(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        Value::SimpleString(s) => s.parse().ok(),
        _ => None,
    }
}

/// A bulk or status reply as bytes (`None` for nil or anything else).
pub fn bytes(v: Value) -> Option<Vec<u8>> {
    match v {
        Value::BulkString(b) => Some(b),
        Value::SimpleString(s) => Some(s.into_bytes()),
        Value::Okay => Some(b"OK".to_vec()),
        _ => None,
    }
}

/// An array of bulk strings (a RESP3 map or set flattened).
pub fn strings(v: Value) -> Option<Vec<Vec<u8>>> {
    let items = match v {
        Value::Array(items) | Value::Set(items) => items,
        Value::Map(pairs) => pairs.into_iter().flat_map(|(a, b)| [a, b]).collect(),
        _ => return None,
    };
    items.into_iter().map(bytes).collect()
}

/// A `SCAN`-family reply: the next cursor and the items.
pub fn scan_reply(v: Value) -> Option<(u64, Vec<Vec<u8>>)> {
    let Value::Array(mut parts) = v else {
        return None;
    };
    if parts.len() != 2 {
        return None;
    }
    let items = strings(parts.pop()?)?;
    let cursor = bytes(parts.pop()?)?;
    let cursor = std::str::from_utf8(&cursor).ok()?.parse().ok()?;
    Some((cursor, items))
}
