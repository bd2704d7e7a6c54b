//! The writing side of a migration into a server: each key becomes `DEL`,
//! its elements in commands of at most one chunk (`SET`, `RPUSH`, `HMSET`,
//! `SADD`, `ZADD`) and `PEXPIREAT` with the absolute expiry, so writing a
//! key again gives the same result. Commands are queued and sent in
//! pipelines (into a cluster, one per master, each key to its slot's
//! master); every reply is checked, and a refusal names the key.
//!
//! `HMSET` rather than a many-field `HSET`: servers older than Redis 4
//! (Pika, Ardb) take one field per `HSET`; Redis 7 still has `HMSET`.

use redcodec_engine::internals::number::format_score;
use redcodec_engine::value::Value;
use redis::Cmd;

use super::reply::command_name;
use super::server::Server;
use crate::error::MigrateError;

/// Queued commands, sent together.
#[derive(Default)]
pub struct Outbox {
    commands: Vec<Cmd>,
    /// For each queued command: the index of its key in `keys`, and its name.
    names: Vec<(usize, String)>,
    keys: Vec<Vec<u8>>,
    elements: usize,
    bytes: usize,
}

impl Outbox {
    /// Elements and bytes queued since the last send.
    pub fn size(&self) -> (usize, usize) {
        (self.elements, self.bytes)
    }

    fn queue(&mut self, key: &[u8], command: Cmd, elements: usize) {
        if self.keys.last().map(Vec::as_slice) != Some(key) {
            self.keys.push(key.to_vec());
        }
        self.bytes += command.get_packed_command().len();
        self.elements += elements;
        self.names
            .push((self.keys.len() - 1, command_name(&command)));
        self.commands.push(command);
    }

    /// Queues the start of `key`: `DEL`, so that what the server held
    /// under it (of any type) goes.
    pub fn begin_key(&mut self, key: &[u8]) {
        let mut c = redis::cmd("DEL");
        c.arg(key);
        self.queue(key, c, 0);
    }

    /// Queues one chunk of `key`'s elements as one command.
    pub fn chunk(&mut self, key: &[u8], value: &Value) {
        let (name, n) = match value {
            Value::String(_) => ("SET", 1),
            Value::Hash(v) => ("HMSET", v.len()),
            Value::List(v) => ("RPUSH", v.len()),
            Value::Set(v) => ("SADD", v.len()),
            Value::ZSet(v) => ("ZADD", v.len()),
        };
        if n == 0 {
            return;
        }
        let mut c = redis::cmd(name);
        c.arg(key);
        match value {
            Value::String(v) => {
                c.arg(v.as_slice());
            }
            Value::Hash(pairs) => {
                for (f, v) in pairs {
                    c.arg(f.as_slice()).arg(v.as_slice());
                }
            }
            Value::List(items) | Value::Set(items) => {
                for item in items {
                    c.arg(item.as_slice());
                }
            }
            Value::ZSet(members) => {
                for (m, s) in members {
                    c.arg(format_score(*s)).arg(m.as_slice());
                }
            }
        }
        self.queue(key, c, n);
    }

    /// Queues `PEXPIREAT key at_ms`.
    pub fn expire_at(&mut self, key: &[u8], at_ms: u64) {
        let mut c = redis::cmd("PEXPIREAT");
        c.arg(key).arg(at_ms);
        self.queue(key, c, 0);
    }

    /// Sends everything queued in one pipeline and checks every reply.
    pub fn send(&mut self, server: &mut Server) -> Result<(), MigrateError> {
        if self.commands.is_empty() {
            return Ok(());
        }
        let replies = server.pipeline(&self.commands)?;
        for ((key, name), reply) in self.names.iter().zip(replies) {
            server.checked(reply, name, Some(&self.keys[*key]))?;
        }
        self.commands.clear();
        self.names.clear();
        self.keys.clear();
        self.elements = 0;
        self.bytes = 0;
        Ok(())
    }
}
