//! `redcodec serve --config FILE`: Kvrocks' and Pika's configuration
//! files, so that redcodec starts where their binaries start (their test
//! harnesses, their operators' scripts): the file read into the options
//! of `serve`'s command line ([`expand`]), which the command line parses.
//!
//! Kvrocks writes `name value` lines, Pika `name : value`; `#` starts a
//! comment. The settings that mean something here become `serve`'s own
//! options, placed before the command line's, so an option given on the
//! command line wins:
//!
//! | file | option |
//! |---|---|
//! | `port` | `--port` |
//! | `bind` (Kvrocks: the first address) | `--bind` |
//! | `dir` (Kvrocks: the store is `<dir>/db`) | `--dir` |
//! | `db-path` (Pika: the store is `<db-path>/db0`; Pika 2's nemo: `<db-path>`) | `--dir` |
//! | `requirepass`, `masterauth` | the same |
//! | `slaveof HOST PORT`, `slaveof : HOST:PORT` | `--replicaof HOST:PORT` |
//! | `namespace.NAME TOKEN` (Kvrocks) | `--namespace-token NAME=TOKEN` |
//! | `cluster-enabled yes` (Kvrocks) | `--cluster` |
//! | `migrate-type`, `migrate-speed`, `migrate-pipeline-size`, `migrate-batch-size-kb`, `migrate-batch-rate-limit-mb` (Kvrocks) | `--config-set NAME=VALUE` |
//! | `db-name`, `rocksdb.wal_ttl_seconds`, `rocksdb.wal_size_limit_mb` (Kvrocks) | `--db-name`, `--wal-ttl-seconds`, `--wal-size-limit-mb` |
//!
//! `db-instance-num` (Pika 4) must be the 3 redcodec's floyd layout has.
//! Every other setting is named in one warning and ignored.

use std::path::{Path, PathBuf};

/// Settings that change nothing here, quietly taken (threads, logs…).
const QUIET: &[&str] = &[
    "workers",
    "thread-num",
    "thread-pool-size",
    "daemonize",
    "log-dir",
    "log-path",
    "log-level",
    "pidfile",
    "timeout",
    "maxclients",
];

/// Kvrocks settings taken as they are (`CONFIG SET` takes them too).
const SETTINGS: &[&str] = &[
    "migrate-type",
    "migrate-speed",
    "migrate-pipeline-size",
    "migrate-batch-size-kb",
    "migrate-batch-rate-limit-mb",
];

/// One `name value` setting of the file, in order.
fn settings(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            // Pika splits at the first `:` (`name : value`, `name:value`;
            // the value may be empty); Kvrocks: `name value` (a `:` only
            // after the name, e.g. `bind 127.0.0.1 ::1`).
            let (name, value) = match line.split_once(':') {
                Some((name, value)) if !name.trim().contains(char::is_whitespace) => (name, value),
                _ => line.split_once(char::is_whitespace).unwrap_or((line, "")),
            };
            (name.trim().to_ascii_lowercase(), value.trim().to_string())
        })
        .collect()
}

/// Where a store of `format` lives for a Pika `db-path`.
fn pika_store(db_path: &str, format: &str) -> PathBuf {
    let base = Path::new(db_path);
    if format == "nemo" {
        base.to_path_buf()
    } else {
        base.join("db0")
    }
}

/// The `serve` options the file at `path` stands for, for a store of
/// `format`; warnings go to stderr.
pub fn serve_options(path: &Path, format: &str) -> Result<Vec<String>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("--config {}: {e}", path.display()))?;
    let mut out = Vec::new();
    let mut ignored = Vec::new();
    let opt = |out: &mut Vec<String>, flag: &str, value: String| {
        out.push(flag.to_string());
        out.push(value);
    };
    for (name, value) in settings(&text) {
        match name.as_str() {
            "port" => opt(&mut out, "--port", value),
            "bind" => {
                if let Some(first) = value.split_whitespace().next() {
                    opt(&mut out, "--bind", first.to_string());
                }
            }
            "dir" => opt(
                &mut out,
                "--dir",
                Path::new(&value).join("db").display().to_string(),
            ),
            "db-path" => opt(
                &mut out,
                "--dir",
                pika_store(&value, format).display().to_string(),
            ),
            "requirepass" | "masterauth" if !value.is_empty() => {
                opt(&mut out, &format!("--{name}"), value);
            }
            "requirepass" | "masterauth" => {}
            "slaveof" if !value.is_empty() => {
                let target = match value.split_whitespace().collect::<Vec<_>>()[..] {
                    [host, port] => format!("{host}:{port}"),
                    _ => value.clone(),
                };
                opt(&mut out, "--replicaof", target);
            }
            "slaveof" => {}
            "db-name" => opt(&mut out, "--db-name", value),
            "rocksdb.wal_ttl_seconds" => opt(&mut out, "--wal-ttl-seconds", value),
            "rocksdb.wal_size_limit_mb" => opt(&mut out, "--wal-size-limit-mb", value),
            "cluster-enabled" => match value.as_str() {
                "yes" => out.push("--cluster".to_string()),
                "no" => {}
                other => {
                    return Err(format!(
                        "--config {}: cluster-enabled {other}: expected yes or no",
                        path.display()
                    ))
                }
            },
            "db-instance-num" if value != "3" => {
                return Err(format!(
                    "--config {}: db-instance-num {value}: redcodec's floyd layout has 3 instances",
                    path.display()
                ))
            }
            "db-instance-num" => {}
            n if n.starts_with("namespace.") => {
                opt(
                    &mut out,
                    "--namespace-token",
                    format!("{}={value}", &n["namespace.".len()..]),
                );
            }
            n if SETTINGS.contains(&n) => opt(&mut out, "--config-set", format!("{n}={value}")),
            n if QUIET.contains(&n) => {}
            _ => ignored.push(name),
        }
    }
    if !ignored.is_empty() {
        eprintln!(
            "redcodec serve: --config {}: ignored (no meaning here): {}",
            path.display(),
            ignored.join(", ")
        );
    }
    Ok(out)
}

/// `args` (the process' arguments) with `serve … --config FILE` replaced by
/// the options the file stands for, placed right after `serve` so that the
/// command line's own options come later and win.
pub fn expand(args: Vec<String>) -> Result<Vec<String>, String> {
    let Some(serve) = args.iter().position(|a| a == "serve") else {
        return Ok(args);
    };
    let find = |flag: &str| -> Option<(usize, String)> {
        args.iter().enumerate().skip(serve).find_map(|(i, a)| {
            if a == flag {
                args.get(i + 1).map(|v| (i, v.clone()))
            } else {
                a.strip_prefix(&format!("{flag}="))
                    .map(|v| (i, v.to_string()))
            }
        })
    };
    let Some((at, file)) = find("--config") else {
        return Ok(args);
    };
    let format = find("--format").map(|(_, f)| f).unwrap_or_default();
    let from_file = serve_options(Path::new(&file), &format)?;
    let width = if args[at] == "--config" { 2 } else { 1 };
    let mut out: Vec<String> = args[..=serve].to_vec();
    out.extend(from_file);
    out.extend(args[serve + 1..at].iter().cloned());
    out.extend(args[at + width..].iter().cloned());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_syntaxes_read() {
        let kvrocks = "# comment\nbind 0.0.0.0 ::1\nport 6666\ndir /tmp/kv\nworkers 8\nnamespace.ns1 tok1\ncluster-enabled yes\nrocksdb.compression snappy\n";
        assert_eq!(
            settings(kvrocks),
            [
                ("bind", "0.0.0.0 ::1"),
                ("port", "6666"),
                ("dir", "/tmp/kv"),
                ("workers", "8"),
                ("namespace.ns1", "tok1"),
                ("cluster-enabled", "yes"),
                ("rocksdb.compression", "snappy"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        let pika = "port : 9221\nrequirepass :\ndb-path : ./db/\nslaveof : 10.0.0.1:9221\n\
                    cache-type: string\nport:27991\n";
        assert_eq!(
            settings(pika),
            [
                ("port", "9221"),
                ("requirepass", ""),
                ("db-path", "./db/"),
                ("slaveof", "10.0.0.1:9221"),
                ("cache-type", "string"),
                ("port", "27991"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }

    fn options(text: &str, format: &str) -> Result<Vec<String>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.conf");
        std::fs::write(&path, text).unwrap();
        serve_options(&path, format)
    }

    #[test]
    fn settings_become_options() {
        let got = options(
            "bind 0.0.0.0 ::1\nport 6666\ndir /tmp/kv\nrequirepass pw\nslaveof 10.0.0.1 6666\nnamespace.ns1 tok1\ncluster-enabled yes\nworkers 8\nmigrate-type raw-key-value\n",
            "kvrocks",
        )
        .unwrap();
        assert_eq!(
            got,
            [
                "--bind",
                "0.0.0.0",
                "--port",
                "6666",
                "--dir",
                "/tmp/kv/db",
                "--requirepass",
                "pw",
                "--replicaof",
                "10.0.0.1:6666",
                "--namespace-token",
                "ns1=tok1",
                "--cluster",
                "--config-set",
                "migrate-type=raw-key-value"
            ]
        );
        let got = options(
            "port : 9221\nrequirepass :\ndb-path : /data/db/\ndb-instance-num : 3\n",
            "floyd",
        )
        .unwrap();
        assert_eq!(got, ["--port", "9221", "--dir", "/data/db/db0"]);
        let got = options("db-path : /data/db\n", "nemo").unwrap();
        assert_eq!(got, ["--dir", "/data/db"]);
        assert!(options("db-instance-num : 5\n", "floyd")
            .unwrap_err()
            .contains("3 instances"));
        assert!(options("cluster-enabled maybe\n", "kvrocks").is_err());
    }

    #[test]
    fn kvrocks_master_settings_become_options() {
        let got = options(
            "db-name orders.db\nrocksdb.wal_ttl_seconds 60\nrocksdb.wal_size_limit_mb 512\n",
            "kvrocks",
        )
        .unwrap();
        assert_eq!(
            got,
            [
                "--db-name",
                "orders.db",
                "--wal-ttl-seconds",
                "60",
                "--wal-size-limit-mb",
                "512"
            ]
        );
    }

    #[test]
    fn the_command_line_comes_after_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.conf");
        std::fs::write(&path, "port 6666\ndir /tmp/kv\n").unwrap();
        let args: Vec<String> = ["redcodec", "serve", "--format", "kvrocks", "--config"]
            .iter()
            .map(ToString::to_string)
            .chain([path.display().to_string(), "--port".into(), "7000".into()])
            .collect();
        assert_eq!(
            expand(args).unwrap(),
            [
                "redcodec",
                "serve",
                "--port",
                "6666",
                "--dir",
                "/tmp/kv/db",
                "--format",
                "kvrocks",
                "--port",
                "7000"
            ]
        );
        let plain: Vec<String> = ["redcodec", "dump", "--format", "kvrocks"]
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(expand(plain.clone()).unwrap(), plain);
    }
}
