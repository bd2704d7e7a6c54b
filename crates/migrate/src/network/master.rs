//! The master a follower replicates (`migrate --follow --from
//! redis://[:PASS@]HOST:PORT`), named by its URL: a replica copies every
//! database, so the URL names none.

use crate::error::{fail, MigrateError};

/// A master to follow as a replica.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Master {
    /// Host name or address (an IPv6 address without its brackets).
    pub host: String,
    /// TCP port (6379 when the URL names none).
    pub port: u16,
    /// The password to AUTH with, if the URL holds one.
    pub password: Option<String>,
}

impl Master {
    /// Parses `url`, `redis://[:PASS@]HOST:PORT` (TCP without TLS, no
    /// database but 0); the errors name `--follow`, the option that asks
    /// for a master.
    pub fn parse(url: &str) -> Result<Master, MigrateError> {
        let bad = || {
            fail(format!(
                "--follow: '{url}' is not a master's URL: expected redis://[:PASS@]HOST:PORT"
            ))
        };
        let parsed = redis::parse_redis_url(url).ok_or_else(bad)?;
        if parsed.scheme() != "redis" {
            return Err(fail(format!(
                "--follow: '{url}': only redis:// (TCP without TLS) is supported"
            )));
        }
        let host = parsed.host_str().ok_or_else(bad)?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host)
            .to_string();
        let port = parsed.port().unwrap_or(6379);
        if !matches!(parsed.path(), "" | "/" | "/0") {
            return Err(fail(format!(
                "--follow: '{url}': a replica copies every database; name none"
            )));
        }
        Ok(Master {
            host,
            port,
            password: parsed.password().map(str::to_string),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(url: &str) -> (String, u16, Option<String>) {
        let m = Master::parse(url).unwrap();
        (m.host, m.port, m.password)
    }

    #[test]
    fn masters_are_named_by_url() {
        assert_eq!(
            parsed("redis://127.0.0.1:6380"),
            ("127.0.0.1".to_string(), 6380, None)
        );
        assert_eq!(
            parsed("redis://:secret@db.example:7000/"),
            ("db.example".to_string(), 7000, Some("secret".to_string()))
        );
        assert_eq!(parsed("redis://h").1, 6379);
        assert!(Master::parse("redis://h:1/3").is_err());
        assert!(Master::parse("rediss://h:1").is_err());
        assert!(Master::parse("kvrocks").is_err());
    }
}
