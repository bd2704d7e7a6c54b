//! The server a migration talks to, one node or a cluster behind the same
//! calls: commands sent in pipelines (one round trip for many commands
//! per node), replies checked, and every failure named with the server
//! and, where there is one, the key.

use redis::{Cmd, Value};

use redcodec_engine::reply::quote_bytes;

use super::cluster::Cluster;
use super::endpoint::Endpoint;
use super::link::Link;
use super::reply::{command_name, describe, int, scan_reply};
use crate::error::{fail, MigrateError};

/// How the server tells a key's expiry.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ExpiryQuery {
    /// `PEXPIRETIME` (Redis 7): the absolute time, exactly.
    Absolute,
    /// `TIME` then `PTTL` in the same pipeline (older servers): the
    /// absolute time to within the moment between the two commands.
    Relative,
}

/// One server, or every master of a cluster.
enum Nodes {
    One(Link),
    Cluster(Cluster),
}

/// A connected server.
pub struct Server {
    nodes: Nodes,
    name: String,
    expiry: ExpiryQuery,
}

impl Server {
    /// Connects to `endpoint` (selecting its database; for a cluster,
    /// learning its topology) and learns how it tells expiries.
    pub fn connect(endpoint: &Endpoint) -> Result<Server, MigrateError> {
        let name = endpoint.name();
        let nodes = if endpoint.cluster {
            Nodes::Cluster(Cluster::connect(
                &endpoint.info,
                &endpoint.host,
                endpoint.port,
            )?)
        } else {
            Nodes::One(Link::connect(&endpoint.info, &name)?)
        };
        let mut server = Server {
            nodes,
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

    /// Sends `commands` in one round trip (one per node of a cluster) and
    /// returns their replies in order; a command the server refuses has a
    /// [`Value::ServerError`] reply (see [`Server::checked`]). A
    /// connection failure is an error.
    pub fn pipeline(&mut self, commands: &[Cmd]) -> Result<Vec<Value>, MigrateError> {
        match &mut self.nodes {
            Nodes::One(link) => link.pipeline(commands),
            Nodes::Cluster(cluster) => cluster.pipeline(commands),
        }
    }

    /// One command; a refusal is an error naming `key` (if any).
    pub fn call(&mut self, command: Cmd, key: Option<&[u8]>) -> Result<Value, MigrateError> {
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
    ) -> Result<Value, MigrateError> {
        match reply {
            Value::ServerError(e) => Err(self.refused(command, key, &describe(&e))),
            reply => Ok(reply),
        }
    }

    /// The error for a refused or unexpected reply to `command` on `key`.
    pub fn refused(&self, command: &str, key: Option<&[u8]>, why: &str) -> MigrateError {
        match key {
            Some(key) => fail(format!(
                "{}: {command} of key {}: {why}",
                self.name,
                quote_bytes(key)
            )),
            None => fail(format!("{}: {command}: {why}", self.name)),
        }
    }

    /// How many keys the selected database (every master) holds.
    fn dbsize(&mut self) -> Result<u64, MigrateError> {
        let reply = match &mut self.nodes {
            Nodes::One(link) => link.pipeline(&[redis::cmd("DBSIZE")])?.remove(0),
            Nodes::Cluster(cluster) => cluster.dbsize()?,
        };
        let reply = self.checked(reply, "DBSIZE", None)?;
        int(&reply)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| self.refused("DBSIZE", None, &format!("unexpected reply {reply:?}")))
    }

    /// A key the selected database holds, if any: `DBSIZE`, and, where
    /// that says 0, a `SCAN` until the first key or the end (Pika answers
    /// `DBSIZE` from a count it refreshes only now and then).
    pub fn any_key(&mut self) -> Result<Option<(u64, Vec<u8>)>, MigrateError> {
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

    /// One page of `SCAN cursor COUNT count` (over every master of a
    /// cluster in turn): the next cursor (0: done) and the keys.
    pub fn scan(&mut self, cursor: u64, count: usize) -> Result<(u64, Vec<Vec<u8>>), MigrateError> {
        let reply = match &mut self.nodes {
            Nodes::One(link) => {
                let mut c = redis::cmd("SCAN");
                c.arg(cursor).arg("COUNT").arg(count);
                link.pipeline(&[c])?.remove(0)
            }
            Nodes::Cluster(cluster) => cluster.scan(cursor, count)?,
        };
        let reply = self.checked(reply, "SCAN", None)?;
        scan_reply(reply).ok_or_else(|| self.refused("SCAN", None, "unexpected reply"))
    }
}
