//! A Redis-compatible server named by a URL (`redis://[:PASS@]HOST:PORT[/DB]`),
//! parsed by the `redis` crate's own parser, or a cluster named by one of
//! its nodes (`redis-cluster://[:PASS@]HOST:PORT`).

use std::path::PathBuf;

use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo};

use crate::error::{fail, MigrateError};

/// The scheme of a cluster's URL.
const CLUSTER_SCHEME: &str = "redis-cluster://";

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
    /// Database number (0 in a cluster).
    pub db: i64,
    /// Whether this is the seed node of a cluster (`redis-cluster://`):
    /// keys go to the master of their slot.
    pub cluster: bool,
}

impl Endpoint {
    /// Parses `url`. Only TCP without TLS is supported.
    pub fn parse(url: &str) -> Result<Endpoint, MigrateError> {
        let cluster = url.starts_with(CLUSTER_SCHEME);
        let plain = match url.strip_prefix(CLUSTER_SCHEME) {
            Some(rest) => format!("redis://{rest}"),
            None => url.to_string(),
        };
        let parsed = redis::parse_redis_url(&plain).ok_or_else(|| {
            fail(format!(
                "'{url}' is not a server URL: expected redis://HOST:PORT[/DB] or redis-cluster://HOST:PORT"
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
        if cluster && db != 0 {
            return Err(fail(format!(
                "'{url}': a cluster has only database 0; use redis-cluster://HOST:PORT"
            )));
        }
        // Older servers (Pika, Ardb) know no CLIENT SETINFO.
        let settings = info.redis_settings().clone().set_skip_set_lib_name();
        let info = info.set_redis_settings(settings);
        Ok(Endpoint {
            info,
            host,
            port,
            db,
            cluster,
        })
    }

    /// The server for messages: `redis://HOST:PORT/DB`, or
    /// `redis-cluster://HOST:PORT`, without credentials.
    pub fn name(&self) -> String {
        let host = if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.cluster {
            return format!("{CLUSTER_SCHEME}{host}:{}", self.port);
        }
        format!("redis://{host}:{}/{}", self.port, self.db)
    }

    /// The checkpoint file used unless `--checkpoint` names one:
    /// `redcodec-migrate-HOST-PORT-DB.checkpoint` in the current directory
    /// (`redcodec-migrate-cluster-HOST-PORT.checkpoint` for a cluster).
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
        if self.cluster {
            return PathBuf::from(format!(
                "redcodec-migrate-cluster-{host}-{}.checkpoint",
                self.port
            ));
        }
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
        let c = Endpoint::parse("redis-cluster://:pw@127.0.0.1:7000").unwrap();
        assert!(c.cluster);
        assert_eq!(c.name(), "redis-cluster://127.0.0.1:7000");
        assert_eq!(c.info.redis_settings().password(), Some("pw"));
        assert_eq!(
            c.default_checkpoint(),
            PathBuf::from("redcodec-migrate-cluster-127.0.0.1-7000.checkpoint")
        );
        assert!(Endpoint::parse("redis-cluster://127.0.0.1:7000/2").is_err());
        assert!(is_url("redis-cluster://h:1"));
    }
}
