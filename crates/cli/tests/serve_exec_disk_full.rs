//! `EXEC` on a full disk, on every format: the server runs under a
//! file-size limit (as in `serve_disk_full.rs`: `RLIMIT_FSIZE` through
//! `prlimit`, `SIGXFSZ` ignored), a client fills the store until a write
//! is refused, then sends a transaction. Its writes commit as one store
//! write, which the disk refuses: every queued command's reply is that
//! storage error, and none of them is applied — not before, and not
//! after a restart without the limit.

use std::io::{BufRead, BufReader, Write};
use std::time::Duration;

mod common;
mod serve_support;
use serve_support::{formats, store_dir, Serve};

const LIMIT_BYTES: usize = 1 << 20;
const VALUE_BYTES: usize = 4096;
const MAX_WRITES: usize = 2 * LIMIT_BYTES / VALUE_BYTES;
/// Floyd routes keys by hash tag: one tag fills one instance's log.
const TAG: &str = "{full}";

fn conn(serve: &Serve) -> redis::Connection {
    let c = serve.conn();
    c.set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    c
}

fn key(name: &str) -> String {
    format!("{TAG}{name}")
}

/// The transaction sent on the full disk, as RESP.
fn transaction() -> Vec<u8> {
    let mut out = Vec::new();
    let a = key("a");
    let h = key("h");
    let n = key("n");
    let kept = key("kept");
    let commands: [&[&str]; 6] = [
        &["MULTI"],
        &["SET", &a, "1"],
        &["HSET", &h, "f", "v"],
        &["INCR", &n],
        &["GET", &kept],
        &["EXEC"],
    ];
    for words in commands {
        out.extend(format!("*{}\r\n", words.len()).bytes());
        for w in words {
            out.extend(format!("${}\r\n{w}\r\n", w.len()).bytes());
        }
    }
    out
}

/// The transaction's keys as a reader sees them: `a`, `h`'s field, `n`.
fn state(c: &mut redis::Connection) -> (Option<String>, Option<String>, Option<String>) {
    let a = redis::cmd("GET").arg(key("a")).query(c).expect("GET");
    let h = redis::cmd("HGET")
        .arg(key("h"))
        .arg("f")
        .query(c)
        .expect("HGET");
    let n = redis::cmd("GET").arg(key("n")).query(c).expect("GET");
    (a, h, n)
}

#[test]
fn exec_whose_commit_the_disk_refuses_answers_the_error_to_every_command() {
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
        let mut c = conn(&serve);
        redis::cmd("SET")
            .arg(key("kept"))
            .arg("k")
            .query::<()>(&mut c)
            .expect("SET");
        let value = "x".repeat(VALUE_BYTES);
        let refused = (0..MAX_WRITES).find_map(|i| {
            redis::cmd("SET")
                .arg(key(&format!("w{i}")))
                .arg(&value)
                .query::<()>(&mut c)
                .err()
        });
        let refused = refused.unwrap_or_else(|| panic!("{format}: no write refused"));
        assert!(
            refused.to_string().contains("storage error"),
            "{format}: {refused}"
        );

        // Sent raw: EXEC's reply is an array of errors.
        let mut raw = serve.raw();
        raw.set_read_timeout(Some(Duration::from_secs(120)))
            .expect("timeout");
        raw.write_all(&transaction()).expect("send");
        let mut reader = BufReader::new(raw);
        let mut lines = Vec::new();
        while lines.len() < 10 {
            let mut line = String::new();
            let n = reader.read_line(&mut line).expect("reply");
            assert!(n > 0, "{format}: the server closed after {lines:?}");
            lines.push(line.trim_end().to_string());
        }
        assert_eq!(
            lines[..6],
            ["+OK", "+QUEUED", "+QUEUED", "+QUEUED", "+QUEUED", "*4"],
            "{format}"
        );
        for line in &lines[6..] {
            assert!(line.starts_with("-ERR storage error: "), "{format}: {line}");
            assert_eq!(line, &lines[6], "{format}: one error for every command");
        }
        assert_eq!(state(&mut c), (None, None, None), "{format}: applied");
        drop(c);
        assert!(serve.running(), "{format}: the server exited");
        serve.signal("KILL");
        let serve = Serve::start(format, &dir, &[]);
        let mut c = conn(&serve);
        assert_eq!(
            state(&mut c),
            (None, None, None),
            "{format}: after a restart"
        );
        let kept: Option<String> = redis::cmd("GET")
            .arg(key("kept"))
            .query(&mut c)
            .expect("GET");
        assert_eq!(kept.as_deref(), Some("k"), "{format}");
        eprintln!(
            "{format}: EXEC on a full disk answered {} to each command",
            lines[6]
        );
    }
}
