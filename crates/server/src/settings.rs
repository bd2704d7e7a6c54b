//! The table of settings `CONFIG GET` and `CONFIG SET` work on.

use std::collections::BTreeMap;

use crate::frame::DEFAULT_MAX_BULK_LEN;

/// Settings by name, with their current values. Settings Redis has but
/// that change nothing here are kept so clients and tests can set and read
/// them back.
pub struct Settings {
    values: BTreeMap<&'static str, String>,
    /// The values the server started from (CONFIG REWRITE appends the
    /// settings that differ).
    initial: BTreeMap<&'static str, String>,
}

/// Integer settings and their ranges (Kvrocks' `IntField`s).
const INTEGERS: &[(&str, i64, i64)] = &[
    ("migrate-speed", 0, i32::MAX as i64),
    ("migrate-pipeline-size", 1, i32::MAX as i64),
    ("migrate-batch-size-kb", 1, i32::MAX as i64),
    ("migrate-batch-rate-limit-mb", 0, i32::MAX as i64),
    ("repl-ping-replica-period", 1, i32::MAX as i64),
    ("max-replication-mb", 0, i32::MAX as i64),
    (SLOWLOG_SLOWER_THAN, -1, i64::MAX),
    (SLOWLOG_MAX_LEN, 0, i64::MAX),
];

/// Settings that take one of a few names (Kvrocks' `EnumField`s: any case
/// taken, the canonical name kept).
const ENUMS: &[(&str, &[&str])] = &[
    (
        "migrate-type",
        crate::cluster::migrate::migrate_types::MIGRATE_TYPES,
    ),
    (REPL_NAMESPACE_ENABLED, &["yes", "no"]),
];

/// Kvrocks' setting of namespace replication (`crate::namespace_replication`).
pub const REPL_NAMESPACE_ENABLED: &str = "repl-namespace-enabled";

/// The classes of keyspace notifications ([`crate::keyspace_events`]).
pub const KEYSPACE_EVENTS: &str = "notify-keyspace-events";

/// SLOWLOG's threshold in microseconds ([`crate::slowlog`]).
pub const SLOWLOG_SLOWER_THAN: &str = "slowlog-log-slower-than";
/// SLOWLOG's length.
pub const SLOWLOG_MAX_LEN: &str = "slowlog-max-len";

/// Settings that `CONFIG SET` refuses (they are fixed at start).
const IMMUTABLE: &[&str] = &[
    "port",
    "bind",
    "dir",
    "databases",
    "daemonize",
    "appendfsync",
];

impl Settings {
    /// The table with Redis 7.0's defaults and the server's own values.
    pub fn new(port: u16, bind: &str, dir: &str, sync: &str, requirepass: &str) -> Settings {
        let mut values = BTreeMap::new();
        let mut put = |k: &'static str, v: &str| {
            values.insert(k, v.to_string());
        };
        put("port", &port.to_string());
        put("bind", bind);
        put("dir", dir);
        put("requirepass", requirepass);
        put("appendfsync", sync);
        put("appendonly", "no");
        put("save", "");
        put("databases", "16");
        put("daemonize", "no");
        put("timeout", "0");
        put("maxclients", "10000");
        put("maxmemory", "0");
        put("maxmemory-policy", "noeviction");
        put("proto-max-bulk-len", &DEFAULT_MAX_BULK_LEN.to_string());
        put("client-query-buffer-limit", "1073741824");
        put("list-compress-depth", "0");
        put("list-max-ziplist-size", "-2");
        put("list-max-listpack-size", "-2");
        put("hash-max-ziplist-entries", "128");
        put("hash-max-ziplist-value", "64");
        put("hash-max-listpack-entries", "128");
        put("hash-max-listpack-value", "64");
        put("set-max-intset-entries", "512");
        put("zset-max-ziplist-entries", "128");
        put("zset-max-ziplist-value", "64");
        put("zset-max-listpack-entries", "128");
        put("zset-max-listpack-value", "64");
        put("lazyfree-lazy-user-del", "no");
        put("lazyfree-lazy-user-flush", "no");
        put(KEYSPACE_EVENTS, "");
        // Kvrocks' slot migration (`CLUSTERX MIGRATE`), with its defaults.
        put("migrate-speed", "4096");
        put("migrate-pipeline-size", "16");
        put("migrate-type", "redis-command");
        put("migrate-batch-size-kb", "16");
        put("migrate-batch-rate-limit-mb", "16");
        put("loglevel", "notice");
        put(SLOWLOG_SLOWER_THAN, "10000");
        put(SLOWLOG_MAX_LEN, "128");
        put("latency-tracking", "no");
        put("lua-time-limit", "5000");
        put("busy-reply-threshold", "5000");
        put("active-expire-effort", "1");
        put("hz", "10");
        // Pika's cache setting: redcodec has no cache in front of the
        // store, so 0 (none) is its value; Pika's own Go suite sets it
        // before every test.
        put("cache-model", "0");
        // Kvrocks' namespace replication (`crate::namespace_replication`).
        put(REPL_NAMESPACE_ENABLED, "no");
        put("repl-ping-replica-period", "10");
        // Kvrocks' limit on a full copy's `_fetch_file` (MiB/s, 0: none).
        put("max-replication-mb", "0");
        put(
            "repl-backlog-size",
            &crate::master::backlog_size::DEFAULT_BACKLOG_SIZE.to_string(),
        );
        Settings {
            initial: values.clone(),
            values,
        }
    }

    /// The settings CONFIG REWRITE writes: every one CONFIG SET can
    /// change, as `(name, value, changed)`, `changed` when it differs from
    /// the value the server started from (before `serve --config-set`).
    pub fn rewritable(&self) -> Vec<(&'static str, &str, bool)> {
        self.values
            .iter()
            .filter(|(name, _)| !IMMUTABLE.contains(name))
            .map(|(name, value)| (*name, value.as_str(), self.initial.get(name) != Some(value)))
            .collect()
    }

    /// `[name, value]` pairs of every setting matching one of `patterns`
    /// (glob, case-insensitive), in name order.
    pub fn get(&self, patterns: &[impl AsRef<[u8]>]) -> Vec<(String, String)> {
        self.values
            .iter()
            .filter(|(name, _)| {
                patterns
                    .iter()
                    .any(|p| redcodec_protocol::glob::matches(p.as_ref(), name.as_bytes(), true))
            })
            .map(|(n, v)| match *n {
                // Kept as given (`A` with `n` is written back as `A`
                // alone, as Redis writes it, but still publishes `new`).
                KEYSPACE_EVENTS => (
                    n.to_string(),
                    crate::keyspace_events::normalized(v).unwrap_or_default(),
                ),
                _ => (n.to_string(), v.clone()),
            })
            .collect()
    }

    /// The value of `name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Sets every `(name, value)` pair, or none: the error names the first
    /// unknown or immutable setting, or a value that does not parse.
    pub fn set(&mut self, pairs: &[(Vec<u8>, Vec<u8>)]) -> Result<(), String> {
        let mut checked = Vec::new();
        for (name, value) in pairs {
            let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
            let Some((key, _)) = self.values.get_key_value(lower.as_str()) else {
                return Err(format!(
                    "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
                    String::from_utf8_lossy(name)
                ));
            };
            if IMMUTABLE.contains(key) {
                return Err(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{key}') - can't set immutable config"
                ));
            }
            let value = String::from_utf8_lossy(value).into_owned();
            let value = if matches!(
                *key,
                "proto-max-bulk-len"
                    | "client-query-buffer-limit"
                    | "maxmemory"
                    | "repl-backlog-size"
            ) {
                match parse_memory(&value) {
                    Some(n) => n.to_string(),
                    None => {
                        return Err(format!(
                            "ERR CONFIG SET failed (possibly related to argument '{key}') - argument must be a memory value"
                        ))
                    }
                }
            } else if *key == KEYSPACE_EVENTS {
                match crate::keyspace_events::normalized(&value) {
                    Ok(_) => value,
                    Err(e) => {
                        return Err(format!(
                            "ERR CONFIG SET failed (possibly related to argument '{key}') - {e}"
                        ))
                    }
                }
            } else if let Some((_, names)) = ENUMS.iter().find(|(n, _)| n == key) {
                match names.iter().find(|n| n.eq_ignore_ascii_case(&value)) {
                    Some(n) => n.to_string(),
                    None => {
                        let names: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
                        return Err(format!(
                            "ERR CONFIG SET '{}' error: failed to set new value: invalid enum option, acceptable values are {}",
                            String::from_utf8_lossy(name),
                            names.join(", ")
                        ));
                    }
                }
            } else if let Some(&(_, min, max)) = INTEGERS.iter().find(|(n, _, _)| n == key) {
                match value.parse::<i64>() {
                    Ok(n) if (min..=max).contains(&n) => n.to_string(),
                    Ok(_) => {
                        return Err(format!(
                            "ERR CONFIG SET failed (possibly related to argument '{key}') - argument must be between {min} and {max} inclusive"
                        ))
                    }
                    Err(_) => {
                        return Err(format!(
                            "ERR CONFIG SET failed (possibly related to argument '{key}') - argument couldn't be parsed into an integer"
                        ))
                    }
                }
            } else {
                value
            };
            checked.push((*key, value));
        }
        for (key, value) in checked {
            self.values.insert(key, value);
        }
        Ok(())
    }

    /// An integer setting, or `default` if it does not parse.
    pub fn integer(&self, name: &str, default: i64) -> i64 {
        self.value(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    /// Hands SLOWLOG its two settings.
    pub fn configure_slowlog(&self, slowlog: &crate::slowlog::SlowLog) {
        slowlog.configure(
            self.integer(SLOWLOG_SLOWER_THAN, 10_000),
            self.integer(SLOWLOG_MAX_LEN, 128),
        );
    }

    /// `proto-max-bulk-len` as a number.
    pub fn max_bulk_len(&self) -> i64 {
        self.value("proto-max-bulk-len")
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_MAX_BULK_LEN)
    }
}

/// Redis' memory values: a number with an optional k, kb, m, mb, g, gb.
fn parse_memory(text: &str) -> Option<i64> {
    let lower = text.to_ascii_lowercase();
    let units: [(&str, i64); 6] = [
        ("kb", 1024),
        ("mb", 1024 * 1024),
        ("gb", 1024 * 1024 * 1024),
        ("k", 1000),
        ("m", 1_000_000),
        ("g", 1_000_000_000),
    ];
    for (suffix, factor) in units {
        if let Some(n) = lower.strip_suffix(suffix) {
            return n.parse::<i64>().ok()?.checked_mul(factor);
        }
    }
    lower.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrate_type_takes_kvrocks_names() {
        let mut s = Settings::new(6379, "127.0.0.1", "/tmp", "everysec", "");
        assert_eq!(s.value("migrate-type"), Some("redis-command"));
        assert_eq!(s.integer("migrate-batch-size-kb", 0), 16);
        assert_eq!(s.integer("migrate-batch-rate-limit-mb", 0), 16);
        s.set(&[(b"MIGRATE-TYPE".to_vec(), b"Raw-Key-Value".to_vec())])
            .unwrap();
        assert_eq!(s.value("migrate-type"), Some("raw-key-value"));
        assert_eq!(
            s.set(&[(b"Migrate-Type".to_vec(), b"raw".to_vec())]),
            Err("ERR CONFIG SET 'Migrate-Type' error: failed to set new value: invalid enum option, acceptable values are 'redis-command', 'raw-key-value'".into())
        );
        assert_eq!(s.value("migrate-type"), Some("raw-key-value"));
        s.set(&[(b"migrate-batch-rate-limit-mb".to_vec(), b"0".to_vec())])
            .unwrap();
        assert!(s
            .set(&[(b"migrate-batch-size-kb".to_vec(), b"0".to_vec())])
            .is_err());
    }

    #[test]
    fn get_and_set_follow_redis() {
        let mut s = Settings::new(6379, "127.0.0.1", "/tmp", "everysec", "");
        assert_eq!(s.get(&[b"save".to_vec()]), vec![("save".into(), "".into())]);
        assert!(s.get(&[b"nonexistent".to_vec()]).is_empty());
        assert_eq!(s.get(&[b"appendfs*".to_vec()])[0].1, "everysec");
        assert_eq!(s.get(&[b"APPENDFS[xyz]NC".to_vec()])[0].1, "everysec");
        // A pattern that makes a naive matcher try every split of every
        // name (exponential): Redis' matcher gives up at once.
        let crafted = [b"*?".repeat(40), b"#".to_vec()].concat();
        assert!(s.get(&[crafted]).is_empty());
        s.set(&[(b"proto-max-bulk-len".to_vec(), b"10000000000".to_vec())])
            .unwrap();
        assert_eq!(s.max_bulk_len(), 10_000_000_000);
        assert_eq!(s.integer("migrate-speed", 0), 4096);
        s.set(&[(b"migrate-speed".to_vec(), b"0".to_vec())])
            .unwrap();
        assert_eq!(s.integer("migrate-speed", 4096), 0);
        assert_eq!(
            s.set(&[(b"migrate-pipeline-size".to_vec(), b"0".to_vec())]),
            Err("ERR CONFIG SET failed (possibly related to argument 'migrate-pipeline-size') - argument must be between 1 and 2147483647 inclusive".into())
        );
        assert_eq!(
            s.set(&[(b"migrate-speed".to_vec(), b"fast".to_vec())]),
            Err("ERR CONFIG SET failed (possibly related to argument 'migrate-speed') - argument couldn't be parsed into an integer".into())
        );
        let e = s.set(&[(b"foo".to_vec(), b"1".to_vec())]).unwrap_err();
        assert_eq!(
            e,
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
        );
    }
}
