//! One connection to the server: commands sent in pipelines (one round
//! trip for many commands), replies checked, and every failure named with
//! the server and, where there is one, the key.

use std::time::Duration;

use redis::{Cmd, ConnectionLike, Value};

use redcodec_engine::reply::quote_bytes;

use super::endpoint::Endpoint;
use super::fail;
use crate::error::CliError;

/// How long to wait for a connection, and for the replies of a pipeline.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REPLY_TIMEOUT: Duration = Duration::from_secs(300);

/// How the server tells a key's expiry.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ExpiryQuery {
    /// `PEXPIRETIME` (Redis 7): the absolute time, exactly.
    Absolute,
    /// `TIME` then `PTTL` in the same pipeline (older servers): the
    /// absolute time to within the moment between the two commands.
    Relative,
}

/// A connected server.
pub struct Server {
    con: redis::Connection,
    name: String,
    expiry: ExpiryQuery,
}

impl Server {
    /// Connects to `endpoint` (selecting its database) and learns how it
    /// tells expiries.
    pub fn connect(endpoint: &Endpoint) -> Result<Server, CliError> {
        let name = endpoint.name();
        let cannot = |e: redis::RedisError| fail(format!("cannot connect to {name}: {e}"));
        let client = redis::Client::open(endpoint.info.clone()).map_err(cannot)?;
        let con = client
            .get_connection_with_timeout(CONNECT_TIMEOUT)
            .map_err(cannot)?;
        con.set_read_timeout(Some(REPLY_TIMEOUT)).map_err(cannot)?;
        con.set_write_timeout(Some(REPLY_TIMEOUT)).map_err(cannot)?;
        let mut server = Server {
            con,
            name,
            expiry: ExpiryQuery::Relative,
        };
        let mut probe = redis::cmd("PEXPIRETIME");
        probe.arg("redcodec:probe");
        if let Value::Int(_) = server.pipeline(&[probe])?.remove(0) {
            server.expiry = ExpiryQuery::Absolute;
        }
        Ok(server)
    }

    /// The server for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How this server tells expiries.
    pub fn expiry_query(&self) -> ExpiryQuery {
        self.expiry
    }

    /// Sends `commands` in one round trip and returns their replies in
    /// order; a command the server refuses has a [`Value::ServerError`]
    /// reply (see [`Server::checked`]). A connection failure is an error.
    pub fn pipeline(&mut self, commands: &[Cmd]) -> Result<Vec<Value>, CliError> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        let mut packed = Vec::new();
        for c in commands {
            c.write_packed_command(&mut packed);
        }
        self.send_packed(&packed, commands.len())
    }

    /// Sends `count` commands already packed into `packed`, as
    /// [`Server::pipeline`].
    pub fn send_packed(&mut self, packed: &[u8], count: usize) -> Result<Vec<Value>, CliError> {
        let replies = self
            .con
            .req_packed_commands(packed, 0, count)
            .map_err(|e| fail(format!("{}: {e}", self.name)))?;
        if replies.len() != count {
            return Err(fail(format!(
                "{}: {} replies to {count} commands",
                self.name,
                replies.len()
            )));
        }
        Ok(replies)
    }

    /// One command; a refusal is an error naming `key` (if any).
    pub fn call(&mut self, command: Cmd, key: Option<&[u8]>) -> Result<Value, CliError> {
        let name = command_name(&command);
        let reply = self.pipeline(&[command])?.remove(0);
        self.checked(reply, &name, key)
    }

    /// `reply` unless it is the server's refusal of `command` on `key`.
    pub fn checked(
        &self,
        reply: Value,
        command: &str,
        key: Option<&[u8]>,
    ) -> Result<Value, CliError> {
        match reply {
            Value::ServerError(e) => Err(self.refused(command, key, &describe(&e))),
            reply => Ok(reply),
        }
    }

    /// The error for a refused or unexpected reply to `command` on `key`.
    pub fn refused(&self, command: &str, key: Option<&[u8]>, why: &str) -> CliError {
        match key {
            Some(key) => fail(format!(
                "{}: {command} of key {}: {why}",
                self.name,
                quote_bytes(key)
            )),
            None => fail(format!("{}: {command}: {why}", self.name)),
        }
    }

    /// How many keys the selected database holds.
    fn dbsize(&mut self) -> Result<u64, CliError> {
        let reply = self.call(redis::cmd("DBSIZE"), None)?;
        int(&reply)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| self.refused("DBSIZE", None, &format!("unexpected reply {reply:?}")))
    }

    /// A key the selected database holds, if any: `DBSIZE`, and, where
    /// that says 0, a `SCAN` until the first key or the end (Pika answers
    /// `DBSIZE` from a count it refreshes only now and then).
    pub fn any_key(&mut self) -> Result<Option<(u64, Vec<u8>)>, CliError> {
        let size = self.dbsize()?;
        let mut cursor = 0;
        loop {
            let (next, keys) = self.scan(cursor, 100)?;
            if let Some(key) = keys.into_iter().next() {
                return Ok(Some((size.max(1), key)));
            }
            cursor = next;
            if cursor == 0 {
                return Ok(None);
            }
        }
    }

    /// One page of `SCAN cursor COUNT count`: the next cursor (0: done)
    /// and the keys.
    pub fn scan(&mut self, cursor: u64, count: usize) -> Result<(u64, Vec<Vec<u8>>), CliError> {
        let mut c = redis::cmd("SCAN");
        c.arg(cursor).arg("COUNT").arg(count);
        let reply = self.call(c, None)?;
        scan_reply(reply).ok_or_else(|| self.refused("SCAN", None, "unexpected reply"))
    }
}

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
