//! What the server holds: keys probed a page at a time (type, expiry,
//! size, lowest and highest score) and values read back — small ones
//! whole, many in one round trip; big ones in chunks (`LRANGE` windows,
//! `HSCAN`, `SSCAN`, `ZSCAN`), so memory does not grow with a key's size.

use std::collections::HashSet;

use redcodec_codec::DataType;
use redcodec_engine::internals::number::parse_f64;
use redcodec_engine::value::Value;
use redis::{Cmd, Value as Reply};
use sha2::{Digest, Sha256};

use super::reply::{bytes, int, scan_reply, strings};
use super::server::{ExpiryQuery, Server};
use crate::error::MigrateError;

/// A sorted-set member and its score.
pub type Scored = (Vec<u8>, f64);

/// A hash field and its value.
type Field = (Vec<u8>, Vec<u8>);

/// A key's type on the server.
#[derive(Clone, Debug, PartialEq)]
pub enum RemoteType {
    /// One redcodec models.
    Modelled(DataType),
    /// Another (`stream`, a module's type): its name as `TYPE` gives it.
    Other(String),
}

/// A key's absolute expiry as read from the server.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ServerExpiry {
    /// Unix milliseconds.
    pub at_ms: u64,
    /// Read with `PEXPIRETIME`; otherwise `TIME` + `PTTL`, exact to within
    /// the moment between the two commands.
    pub exact: bool,
}

/// A key on the server, without its elements.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteKey {
    /// The key.
    pub key: Vec<u8>,
    /// Its type.
    pub kind: RemoteType,
    /// Its expiry, if it has one.
    pub expire: Option<ServerExpiry>,
    /// Elements (1 for a string; 0 for a type redcodec does not model).
    pub len: u64,
    /// A sorted set's lowest and highest scored members (when asked for).
    pub score_range: Option<(Scored, Scored)>,
}

impl RemoteKey {
    /// Its type, if redcodec models it.
    pub fn data_type(&self) -> Option<DataType> {
        match self.kind {
            RemoteType::Modelled(t) => Some(t),
            RemoteType::Other(_) => None,
        }
    }

    /// Whether its value is read whole, in one command: a string, or a
    /// collection of at most `chunk` elements (not a type redcodec does not
    /// model).
    pub fn read_whole(&self, chunk: usize) -> bool {
        match self.kind {
            RemoteType::Modelled(DataType::String) => true,
            RemoteType::Modelled(_) => self.len <= chunk as u64,
            RemoteType::Other(_) => false,
        }
    }
}

/// The message for a key that changed between two reads.
fn changed(server: &Server, key: &[u8], command: &str) -> MigrateError {
    server.refused(
        command,
        Some(key),
        "the key changed while it was read; migrate from a server nobody writes to \
         (or rerun with --resume to read it again)",
    )
}

/// `command key` as a [`Cmd`].
fn on_key(command: &str, key: &[u8]) -> Cmd {
    let mut c = redis::cmd(command);
    c.arg(key);
    c
}

fn length_command(data_type: DataType) -> Option<&'static str> {
    match data_type {
        DataType::String => None,
        DataType::Hash => Some("HLEN"),
        DataType::List => Some("LLEN"),
        DataType::Set => Some("SCARD"),
        DataType::ZSet => Some("ZCARD"),
    }
}

/// Probes `keys` in two round trips: their types, then their expiries,
/// sizes and (with `scores`) sorted sets' lowest and highest members.
/// Keys that no longer exist are left out.
pub fn probe(
    server: &mut Server,
    keys: Vec<Vec<u8>>,
    scores: bool,
) -> Result<Vec<RemoteKey>, MigrateError> {
    let types: Vec<Cmd> = keys.iter().map(|k| on_key("TYPE", k)).collect();
    let replies = server.pipeline(&types)?;
    let mut found = Vec::with_capacity(keys.len());
    for (key, reply) in keys.into_iter().zip(replies) {
        let reply = server.checked(reply, "TYPE", Some(&key))?;
        let name = bytes(reply).ok_or_else(|| server.refused("TYPE", Some(&key), "no type"))?;
        let kind = match DataType::from_redis_name(&name) {
            Some(t) => RemoteType::Modelled(t),
            None if name == b"none" => continue,
            None => RemoteType::Other(String::from_utf8_lossy(&name).into_owned()),
        };
        found.push(RemoteKey {
            key,
            kind,
            expire: None,
            len: 0,
            score_range: None,
        });
    }

    let query = server.expiry_query();
    let mut commands = Vec::new();
    if query == ExpiryQuery::Relative {
        commands.push(redis::cmd("TIME"));
    }
    for k in &found {
        let Some(t) = k.data_type() else { continue };
        commands.push(on_key(
            match query {
                ExpiryQuery::Absolute => "PEXPIRETIME",
                ExpiryQuery::Relative => "PTTL",
            },
            &k.key,
        ));
        if let Some(length) = length_command(t) {
            commands.push(on_key(length, &k.key));
        }
        if scores && t == DataType::ZSet {
            for at in ["0", "-1"] {
                let mut c = on_key("ZRANGE", &k.key);
                c.arg(at).arg(at).arg("WITHSCORES");
                commands.push(c);
            }
        }
    }
    let mut replies = server.pipeline(&commands)?.into_iter();
    let now_ms = match query {
        ExpiryQuery::Absolute => 0,
        ExpiryQuery::Relative => {
            let reply = replies.next().unwrap_or(Reply::Nil);
            let reply = server.checked(reply, "TIME", None)?;
            time_ms(reply).ok_or_else(|| server.refused("TIME", None, "unexpected reply"))?
        }
    };
    let mut live = Vec::with_capacity(found.len());
    for mut k in found {
        let Some(t) = k.data_type() else {
            live.push(k);
            continue;
        };
        let mut next = |command: &str| {
            let reply = replies.next().unwrap_or(Reply::Nil);
            server.checked(reply, command, Some(&k.key))
        };
        let expiry_command = match query {
            ExpiryQuery::Absolute => "PEXPIRETIME",
            ExpiryQuery::Relative => "PTTL",
        };
        let ttl = next(expiry_command)?;
        let ttl = int(&ttl).ok_or_else(|| changed(server, &k.key, expiry_command))?;
        let length = match length_command(t) {
            Some(command) => {
                let reply = next(command)?;
                int(&reply).ok_or_else(|| changed(server, &k.key, command))?
            }
            None => 1,
        };
        if scores && t == DataType::ZSet {
            let lowest = next("ZRANGE")?;
            let highest = next("ZRANGE")?;
            let first =
                |r: Reply| -> Option<Scored> { zset_pairs(strings(r)?).ok()?.into_iter().next() };
            if let (Some(lo), Some(hi)) = (first(lowest), first(highest)) {
                k.score_range = Some((lo, hi));
            }
        }
        if ttl == -2 || length <= 0 {
            continue; // gone meanwhile
        }
        k.len = length as u64;
        k.expire = match (ttl, query) {
            (-1, _) => None,
            (n, ExpiryQuery::Absolute) => Some(ServerExpiry {
                at_ms: n.max(0) as u64,
                exact: true,
            }),
            (n, ExpiryQuery::Relative) => Some(ServerExpiry {
                at_ms: now_ms + n.max(0) as u64,
                exact: false,
            }),
        };
        live.push(k);
    }
    Ok(live)
}

/// A `TIME` reply in unix milliseconds.
fn time_ms(reply: Reply) -> Option<u64> {
    let parts = strings(reply)?;
    let number = |b: &Vec<u8>| -> Option<u64> { std::str::from_utf8(b).ok()?.parse().ok() };
    Some(number(parts.first()?)? * 1000 + number(parts.get(1)?)? / 1000)
}

/// Member–score pairs of a `WITHSCORES` or `ZSCAN` reply.
fn zset_pairs(items: Vec<Vec<u8>>) -> Result<Vec<Scored>, String> {
    let mut out = Vec::with_capacity(items.len() / 2);
    let mut it = items.into_iter();
    while let Some(member) = it.next() {
        let score = it.next().ok_or("a member without its score")?;
        let parsed = parse_f64(&score).ok_or_else(|| {
            format!(
                "score '{}' is not a number",
                String::from_utf8_lossy(&score)
            )
        })?;
        out.push((member, parsed));
    }
    Ok(out)
}

/// Field–value pairs of a flat reply.
fn hash_pairs(items: Vec<Vec<u8>>) -> Result<Vec<Field>, String> {
    if !items.len().is_multiple_of(2) {
        return Err("a field without its value".into());
    }
    let mut out = Vec::with_capacity(items.len() / 2);
    let mut it = items.into_iter();
    while let (Some(f), Some(v)) = (it.next(), it.next()) {
        out.push((f, v));
    }
    Ok(out)
}

/// `items` as a value of type `t`.
fn to_value(t: DataType, items: Vec<Vec<u8>>) -> Result<Value, String> {
    Ok(match t {
        DataType::String => Value::String(items.into_iter().next().unwrap_or_default()),
        DataType::Hash => Value::Hash(hash_pairs(items)?),
        DataType::List => Value::List(items),
        DataType::Set => Value::Set(items),
        DataType::ZSet => Value::ZSet(zset_pairs(items)?),
    })
}

/// The command that reads a whole value of type `t`.
fn whole_command(t: DataType, key: &[u8]) -> (Cmd, &'static str) {
    match t {
        DataType::String => (on_key("GET", key), "GET"),
        DataType::Hash => (on_key("HGETALL", key), "HGETALL"),
        DataType::List => {
            let mut c = on_key("LRANGE", key);
            c.arg(0).arg(-1);
            (c, "LRANGE")
        }
        DataType::Set => (on_key("SMEMBERS", key), "SMEMBERS"),
        DataType::ZSet => {
            let mut c = on_key("ZRANGE", key);
            c.arg(0).arg(-1).arg("WITHSCORES");
            (c, "ZRANGE")
        }
    }
}

/// Reads the whole values of `keys` (types redcodec models) in one round
/// trip; `None` for a key gone meanwhile.
pub fn read_whole(
    server: &mut Server,
    keys: &[&RemoteKey],
) -> Result<Vec<Option<Value>>, MigrateError> {
    let mut commands = Vec::with_capacity(keys.len());
    let mut names = Vec::with_capacity(keys.len());
    for k in keys {
        let t = k.data_type().unwrap_or(DataType::String);
        let (c, name) = whole_command(t, &k.key);
        commands.push(c);
        names.push(name);
    }
    let replies = server.pipeline(&commands)?;
    let mut out = Vec::with_capacity(keys.len());
    for ((k, name), reply) in keys.iter().zip(names).zip(replies) {
        let t = k.data_type().unwrap_or(DataType::String);
        let reply = server.checked(reply, name, Some(&k.key))?;
        let items = match (t, reply) {
            (_, Reply::Nil) => Vec::new(),
            (DataType::String, r) => {
                vec![bytes(r).ok_or_else(|| server.refused(name, Some(&k.key), "not a string"))?]
            }
            (_, r) => strings(r).ok_or_else(|| changed(server, &k.key, name))?,
        };
        if items.is_empty() {
            out.push(None);
            continue;
        }
        let value = to_value(t, items).map_err(|why| server.refused(name, Some(&k.key), &why))?;
        out.push(Some(value));
    }
    Ok(out)
}

/// Most elements of the values read whole in one round trip: memory stays
/// bounded however many small keys a page holds.
const WHOLE_READ_ELEMENTS: u64 = 8 * 1024;

/// A key's value as [`for_each_value`] hands it over.
pub enum Fetched {
    /// Read whole.
    Whole(Value),
    /// Gone between the probe and the read.
    Gone,
    /// Too big to read whole: read it with [`read_chunked`].
    Big,
}

/// Calls `visit` with each of `keys` in order and its value: values of at
/// most `chunk` elements are read whole, a group of keys per round trip;
/// bigger ones are left to `visit`.
pub fn for_each_value(
    server: &mut Server,
    keys: &[RemoteKey],
    chunk: usize,
    mut visit: impl FnMut(&mut Server, &RemoteKey, Fetched) -> Result<(), MigrateError>,
) -> Result<(), MigrateError> {
    let cost = |k: &RemoteKey| if k.read_whole(chunk) { k.len.max(1) } else { 0 };
    let mut start = 0;
    while start < keys.len() {
        let (mut end, mut elements) = (start, 0);
        while end < keys.len()
            && (end == start || elements + cost(&keys[end]) <= WHOLE_READ_ELEMENTS)
        {
            elements += cost(&keys[end]);
            end += 1;
        }
        let group = &keys[start..end];
        let small: Vec<&RemoteKey> = group.iter().filter(|k| k.read_whole(chunk)).collect();
        let mut values = read_whole(server, &small)?.into_iter();
        for k in group {
            let fetched = if !k.read_whole(chunk) {
                Fetched::Big
            } else {
                match values.next().flatten() {
                    Some(v) => Fetched::Whole(v),
                    None => Fetched::Gone,
                }
            };
            visit(server, k, fetched)?;
        }
        start = end;
    }
    Ok(())
}

/// Elements already delivered, by a hash of their identity (field or
/// member): `SCAN`-family commands may return an element twice.
struct Seen(HashSet<[u8; 16]>);

impl Seen {
    fn first_time(&mut self, id: &[u8]) -> bool {
        let hash: [u8; 32] = Sha256::digest(id).into();
        let mut short = [0u8; 16];
        short.copy_from_slice(&hash[..16]);
        self.0.insert(short)
    }
}

/// Reads the value of `key` in chunks of about `chunk` elements and hands
/// them to `sink` (a list's in order). With `distinct`, an element the
/// server returns twice is delivered once. Returns the elements
/// delivered (0: the key is gone).
pub fn read_chunked(
    server: &mut Server,
    key: &RemoteKey,
    chunk: usize,
    distinct: bool,
    sink: &mut dyn FnMut(Value) -> Result<(), MigrateError>,
) -> Result<u64, MigrateError> {
    let t = key.data_type().unwrap_or(DataType::String);
    let chunk = chunk.max(1);
    let mut delivered = 0u64;
    match t {
        DataType::String => {
            let value = read_whole(server, &[key])?.pop().flatten();
            if let Some(v) = value {
                sink(v)?;
                delivered = 1;
            }
        }
        DataType::List => loop {
            let mut c = on_key("LRANGE", &key.key);
            c.arg(delivered).arg(delivered + chunk as u64 - 1);
            let reply = server.call(c, Some(&key.key))?;
            let items = strings(reply).ok_or_else(|| changed(server, &key.key, "LRANGE"))?;
            let n = items.len();
            if n > 0 {
                sink(Value::List(items))?;
            }
            delivered += n as u64;
            if n < chunk {
                break;
            }
        },
        DataType::Hash | DataType::Set | DataType::ZSet => {
            let command = match t {
                DataType::Hash => "HSCAN",
                DataType::Set => "SSCAN",
                _ => "ZSCAN",
            };
            let mut seen = Seen(HashSet::new());
            let mut cursor = 0u64;
            loop {
                let mut c = on_key(command, &key.key);
                c.arg(cursor).arg("COUNT").arg(chunk);
                let reply = server.call(c, Some(&key.key))?;
                let (next, items) =
                    scan_reply(reply).ok_or_else(|| changed(server, &key.key, command))?;
                let mut value = to_value(t, items)
                    .map_err(|why| server.refused(command, Some(&key.key), &why))?;
                if distinct {
                    match &mut value {
                        Value::Hash(pairs) => pairs.retain(|(f, _)| seen.first_time(f)),
                        Value::Set(members) => members.retain(|m| seen.first_time(m)),
                        Value::ZSet(members) => members.retain(|(m, _)| seen.first_time(m)),
                        _ => {}
                    }
                }
                let n = value.element_count();
                if n > 0 {
                    sink(value)?;
                }
                delivered += n;
                cursor = next;
                if cursor == 0 {
                    break;
                }
            }
        }
    }
    Ok(delivered)
}
