//! A full disk under `redcodec serve`, on every format, without root: the
//! server runs under a file-size limit (`RLIMIT_FSIZE` of 1 MiB through
//! `prlimit`, with `SIGXFSZ` ignored, so a write past it fails with
//! `EFBIG` as on a full disk). A client writes 4 KiB values until the
//! store refuses them. Checked:
//!
//! - the refused writes get `ERR storage error: …` replies: the server
//!   neither crashes nor hangs, and goes on refusing writes;
//! - another client still reads every acknowledged value;
//! - restarted without the limit, the server has every acknowledged write,
//!   takes new ones, and `redcodec check` finds nothing.
//!
//! Also a read-only store directory (a read-only bind mount in a mount
//! namespace of its own, as root; `chmod` otherwise): `serve` refuses to
//! start with a clear error and leaves the directory as it was, and
//! `check` reads it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod common;
mod serve_support;
use common::command;
use serve_support::{formats, store_dir, Serve};

/// The file-size limit: far above what opening a store writes (options
/// files, the first LOG lines), far below what the writes need.
const LIMIT_BYTES: usize = 1 << 20;
/// The size of each value.
const VALUE_BYTES: usize = 4096;
/// Writes sent at most: twice what the limit holds. More means the limit
/// did not work.
const MAX_WRITES: usize = 2 * LIMIT_BYTES / VALUE_BYTES;
/// Writes sent after the first refused one: each must be refused too.
const AFTER_FULL: usize = 20;

/// The hash tag every key of the test carries: floyd routes a key by its
/// tag, so all of them land in one instance and fill one write-ahead log,
/// as a full disk would refuse every instance (a file-size limit refuses
/// only the file that reaches it). The other formats ignore tags.
const TAG: &str = "{full}";

/// The name of write `i`'s key.
fn key(i: usize) -> String {
    format!("{TAG}w{i}")
}

/// The hash the test writes first.
fn hash_key() -> String {
    format!("{TAG}h")
}

fn value(i: usize) -> String {
    format!("{i:08}{}", "x".repeat(VALUE_BYTES - 8))
}

/// A connection with a generous read timeout, so that a hung server fails
/// the test instead of hanging it.
fn conn(serve: &Serve) -> redis::Connection {
    let c = serve.conn();
    c.set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    c
}

fn set(c: &mut redis::Connection, i: usize) -> redis::RedisResult<()> {
    redis::cmd("SET").arg(key(i)).arg(value(i)).query(c)
}

fn get(c: &mut redis::Connection, i: usize) -> Option<String> {
    redis::cmd("GET").arg(key(i)).query(c).expect("GET replies")
}

fn check_clean(format: &str, dir: &Path) {
    let (ok, out, err) = common::run(
        &["check", "--format", format, "--dir", common::path(dir)],
        "",
    );
    assert!(ok, "{format}: check found something:\n{out}\n{err}");
}

#[test]
fn a_full_disk_refuses_writes_and_loses_no_acknowledged_one() {
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let limit = format!("--fsize={LIMIT_BYTES}");
        let mut serve = Serve::start_wrapped(
            &[
                "sh",
                "-c",
                r#"trap '' XFSZ; exec prlimit "$0" "$@""#,
                &limit,
            ],
            format,
            &dir,
            &["--sync", "always"],
            &[],
        );
        let mut writer = conn(&serve);
        // A hash, so that `SET` over it writes two instances on
        // blackwidow and nemo once the disk is full (and one on floyd, the
        // instance of the tag).
        let ok: i64 = command(&["HSET", &hash_key(), "f", "v"])
            .query(&mut writer)
            .expect("HSET");
        assert_eq!(ok, 1);
        let mut acknowledged = Vec::new();
        let mut refused = Vec::new();
        for i in 0..MAX_WRITES {
            match set(&mut writer, i) {
                Ok(()) if refused.is_empty() => acknowledged.push(i),
                Ok(()) => panic!("{format}: write {i} acknowledged after a refused one"),
                Err(e) => refused.push(e.to_string()),
            }
            if refused.len() > AFTER_FULL {
                break;
            }
        }
        assert!(
            refused.len() > AFTER_FULL,
            "{format}: {} writes of {VALUE_BYTES} bytes under a {LIMIT_BYTES}-byte limit, none refused",
            acknowledged.len()
        );
        assert!(acknowledged.len() > 10, "{format}: {}", acknowledged.len());
        for e in &refused {
            assert!(e.contains("storage error"), "{format}: {e}");
        }
        let over: redis::RedisResult<()> = redis::cmd("SET")
            .arg(hash_key())
            .arg("s")
            .query(&mut writer);
        let over = over.expect_err("SET over a hash on a full disk");
        assert!(
            over.to_string().contains("storage error"),
            "{format}: {over}"
        );
        assert!(serve.running(), "{format}: the server exited");
        let mut reader = conn(&serve);
        let hash: Option<String> = command(&["HGET", &hash_key(), "f"])
            .query(&mut reader)
            .expect("HGET after a refused SET over the hash");
        assert_eq!(hash.as_deref(), Some("v"), "{format}");
        for &i in &acknowledged {
            assert_eq!(get(&mut reader, i), Some(value(i)), "{format}: w{i}");
        }
        let pong: String = redis::cmd("PING").query(&mut writer).expect("PING");
        assert_eq!(pong, "PONG");
        drop((writer, reader));
        serve.signal("KILL");

        let serve = Serve::start(format, &dir, &[]);
        let mut c = conn(&serve);
        for &i in &acknowledged {
            assert_eq!(
                get(&mut c, i),
                Some(value(i)),
                "{format}: w{i} after restart"
            );
        }
        // A refused write left nothing, not even half a command.
        let first_refused = acknowledged.len();
        assert_eq!(get(&mut c, first_refused), None, "{format}");
        let t: String = redis::cmd("TYPE")
            .arg(hash_key())
            .query(&mut c)
            .expect("TYPE");
        assert_eq!(t, "hash", "{format}");
        set(&mut c, MAX_WRITES).expect("a write after the restart");
        drop(c);
        drop(serve);
        check_clean(format, &dir);
        eprintln!(
            "{format}: {} writes acknowledged, then refused: {}",
            acknowledged.len(),
            refused[0]
        );
    }
}

/// Every file under `dir` and its bytes.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read file");
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    out
}

/// A wrapper that makes its first argument, a directory, read-only for
/// the command after it: a read-only bind mount in a mount namespace of
/// its own as root (where permissions stop nothing), else `chmod`. `None`
/// (with the reason) where neither works.
fn read_only_wrapper() -> Result<Vec<&'static str>, String> {
    let uid = Command::new("id").arg("-u").output().expect("id runs");
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Ok(vec!["sh", "-c", r#"chmod -R a-w "$0" && exec "$@""#]);
    }
    let probe = Command::new("unshare").args(["-m", "true"]).output();
    match probe {
        Ok(out) if out.status.success() => Ok(vec![
            "unshare",
            "-m",
            "sh",
            "-c",
            r#"mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@""#,
        ]),
        Ok(out) => Err(format!(
            "running as root, and `unshare -m` fails ({}): no read-only directory can be made",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!(
            "running as root, and `unshare` does not run ({e}): no read-only directory can be made"
        )),
    }
}

#[test]
fn a_read_only_directory_is_refused_and_left_as_it_was() {
    let wrapper = match read_only_wrapper() {
        Ok(w) => w,
        Err(reason) => {
            redcodec_conformance::skip::record("serve on a read-only directory", &reason);
            return;
        }
    };
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let serve = Serve::start(format, &dir, &["--sync", "always"]);
        let mut c = conn(&serve);
        set(&mut c, 1).expect("SET");
        drop(c);
        serve.signal("TERM");
        let before = snapshot(&dir);

        let run = |args: &[&str]| {
            let out = Command::new(wrapper[0])
                .args(&wrapper[1..])
                .arg(&dir)
                .arg(env!("CARGO_BIN_EXE_redcodec"))
                .args(args)
                .arg("--format")
                .arg(format)
                .arg("--dir")
                .arg(&dir)
                .output()
                .expect("wrapper runs");
            (
                out.status.success(),
                common::text(&out.stdout),
                common::text(&out.stderr),
            )
        };
        // The server cannot open the store read-write: it says why and
        // exits (a server that started would answer no one here, and be
        // killed by the timeout of the test run).
        let (ok, out, err) = run(&["serve", "--port", "0"]);
        assert!(
            !ok,
            "{format}: serve started on a read-only directory: {out}"
        );
        assert!(
            err.contains("Read-only file system") || err.contains("Permission denied"),
            "{format}: {err}"
        );
        eprintln!("{format}: serve on a read-only directory: {}", err.trim());
        // `check` opens it read-only and reads it.
        let (ok, out, err) = run(&["check"]);
        assert!(
            ok,
            "{format}: check on a read-only directory:\n{out}\n{err}"
        );
        let _ = Command::new("chmod")
            .arg("-R")
            .arg("u+w")
            .arg(&dir)
            .status();
        assert!(snapshot(&dir) == before, "{format}: the directory changed");
    }
}
