//! SAVE and BGSAVE make what was written durable in the store's table
//! files, on every format: after both, the server is killed with SIGKILL
//! and every write-ahead log file is deleted; a restarted server still
//! has every saved key, and has lost the key written after the last save
//! (which only its WAL held: the check has teeth).

use std::path::Path;
use std::time::{Duration, Instant};

use redcodec_formats::Format;
use redis::Commands;

mod serve_support;
use serve_support::{store_dir, Serve};

/// Deletes every WAL file (`NNNNNN.log`) under `dir`; returns how many.
fn delete_wals(dir: &Path) -> usize {
    let mut deleted = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            deleted += delete_wals(&path);
        } else if path.extension().is_some_and(|x| x == "log") {
            std::fs::remove_file(&path).unwrap();
            deleted += 1;
        }
    }
    deleted
}

/// A field of an INFO text.
fn field(info: &str, name: &str) -> String {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no {name} in {info}"))
        .to_string()
}

#[test]
fn saved_keys_survive_a_kill_without_the_wal() {
    for format in Format::ALL.iter().map(|f| f.name()) {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &["--sync", "no"]);
        let mut c = server.conn();
        let _: () = c.set("saved", "by SAVE").unwrap();
        let _: () = c.hset("hash", "field", "by SAVE").unwrap();
        let ok: String = redis::cmd("SAVE").query(&mut c).unwrap();
        assert_eq!(ok, "OK", "{format}");

        let _: () = c.rpush("list", "by BGSAVE").unwrap();
        let started: String = redis::cmd("BGSAVE").query(&mut c).unwrap();
        assert_eq!(started, "Background saving started", "{format}");
        // A save ends whatever the machine's load; the limit only stops a
        // hung test.
        let deadline = Instant::now() + Duration::from_secs(120);
        let info = loop {
            let info: String = redis::cmd("INFO").arg("persistence").query(&mut c).unwrap();
            if field(&info, "rdb_bgsave_in_progress") == "0" {
                break info;
            }
            assert!(Instant::now() < deadline, "{format}: BGSAVE never ended");
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(field(&info, "rdb_last_bgsave_status"), "ok", "{format}");
        assert_eq!(field(&info, "rdb_changes_since_last_save"), "0", "{format}");

        let _: () = c.set("unsaved", "only in the WAL").unwrap();
        drop(c);
        drop(server); // SIGKILL
        assert!(delete_wals(&dir) > 0, "{format}: no WAL file");

        let server = Serve::start(format, &dir, &["--sync", "no"]);
        let mut c = server.conn();
        let saved: Option<String> = c.get("saved").unwrap();
        let field_value: Option<String> = c.hget("hash", "field").unwrap();
        let list: Vec<String> = c.lrange("list", 0, -1).unwrap();
        let unsaved: Option<String> = c.get("unsaved").unwrap();
        assert_eq!(saved.as_deref(), Some("by SAVE"), "{format}");
        assert_eq!(field_value.as_deref(), Some("by SAVE"), "{format}");
        assert_eq!(list, ["by BGSAVE"], "{format}");
        assert_eq!(unsaved, None, "{format}: the WAL was not what held it");
    }
}
