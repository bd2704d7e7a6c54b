//! One TCP connection to one server: opened with a time limit, commands
//! sent in pipelines (one round trip for many), replies returned in order.
//! A refusal is a [`redis::Value::ServerError`] reply for the caller to
//! judge; a broken connection is an error naming the server.

use std::time::Duration;

use redis::{Cmd, ConnectionInfo, ConnectionLike, Value};

use crate::error::{fail, MigrateError};

/// How long to wait for a connection, and for the replies of a pipeline.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REPLY_TIMEOUT: Duration = Duration::from_secs(300);

/// A connection to one server.
pub struct Link {
    con: redis::Connection,
    name: String,
}

impl Link {
    /// Connects to the server `info` names (`name` in messages).
    pub fn connect(info: &ConnectionInfo, name: &str) -> Result<Link, MigrateError> {
        let cannot = |e: redis::RedisError| fail(format!("cannot connect to {name}: {e}"));
        let client = redis::Client::open(info.clone()).map_err(cannot)?;
        let con = client
            .get_connection_with_timeout(CONNECT_TIMEOUT)
            .map_err(cannot)?;
        con.set_read_timeout(Some(REPLY_TIMEOUT)).map_err(cannot)?;
        con.set_write_timeout(Some(REPLY_TIMEOUT)).map_err(cannot)?;
        Ok(Link {
            con,
            name: name.to_string(),
        })
    }

    /// Sends `commands` in one round trip and returns their replies in
    /// order.
    pub fn pipeline(&mut self, commands: &[Cmd]) -> Result<Vec<Value>, MigrateError> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        let mut packed = Vec::new();
        for c in commands {
            c.write_packed_command(&mut packed);
        }
        let count = commands.len();
        let replies = self
            .con
            .req_packed_commands(&packed, 0, count)
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
}
