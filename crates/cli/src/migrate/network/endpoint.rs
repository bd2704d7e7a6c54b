//! A Redis-compatible server named by a URL (`redis://HOST:PORT[/DB]`),
//! parsed by the `redis` crate's own parser.

use std::path::PathBuf;

use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo};

use crate::error::CliError;

use super::fail;

/// Whether a `--from` or `--to` value names a server rather than a format.
pub fn is_url(value: &str) -> bool {
    value.contains("://")
}

/// A server to connect to.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// What the `redis` crate connects with (address, database, password).
    pub info: ConnectionInfo,
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Database number.
    pub db: i64,
}

impl Endpoint {
    /// Parses `url`. Only TCP without TLS is supported.
    pub fn parse(url: &str) -> Result<Endpoint, CliError> {
        let parsed = redis::parse_redis_url(url).ok_or_else(|| {
            fail(format!(
                "'{url}' is not a server URL: expected redis://HOST:PORT[/DB]"
            ))
        })?;
        let info = parsed
            .into_connection_info()
            .map_err(|e| fail(format!("'{url}' is not a usable server URL: {e}")))?;
        let (host, port) = match info.addr() {
            ConnectionAddr::Tcp(host, port) => (host.clone(), *port),
            ConnectionAddr::TcpTls { .. } => {
                return Err(fail(format!(
                    "'{url}': TLS connections are not supported; use redis://HOST:PORT[/DB]"
                )))
            }
            _ => {
                return Err(fail(format!(
                    "'{url}': only TCP servers are supported; use redis://HOST:PORT[/DB]"
                )))
            }
        };
        let db = info.redis_settings().db();
        // Older servers (Pika, Ardb) know no CLIENT SETINFO.
        let settings = info.redis_settings().clone().set_skip_set_lib_name();
        let info = info.set_redis_settings(settings);
        Ok(Endpoint {
            info,
            host,
            port,
            db,
        })
    }

    /// The server for messages: `redis://HOST:PORT/DB`, without credentials.
    pub fn name(&self) -> String {
        let host = if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("redis://{host}:{}/{}", self.port, self.db)
    }

    /// The checkpoint file used unless `--checkpoint` names one:
    /// `redcodec-migrate-HOST-PORT-DB.checkpoint` in the current directory.
    pub fn default_checkpoint(&self) -> PathBuf {
        let host: String = self
            .host
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        PathBuf::from(format!(
            "redcodec-migrate-{host}-{}-{}.checkpoint",
            self.port, self.db
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_host_port_and_database() {
        let e = Endpoint::parse("redis://127.0.0.1:7001/3").unwrap();
        assert_eq!((e.host.as_str(), e.port, e.db), ("127.0.0.1", 7001, 3));
        assert_eq!(e.name(), "redis://127.0.0.1:7001/3");
        assert_eq!(
            e.default_checkpoint(),
            PathBuf::from("redcodec-migrate-127.0.0.1-7001-3.checkpoint")
        );
        let e = Endpoint::parse("redis://:secret@localhost:6380").unwrap();
        assert_eq!(e.name(), "redis://localhost:6380/0");
        assert!(Endpoint::parse("http://localhost:6379").is_err());
        assert!(is_url("redis://x") && !is_url("kvrocks"));
    }
}
