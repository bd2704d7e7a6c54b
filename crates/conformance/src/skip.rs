//! Tests that cannot run here (no `redis-server` on the machine) say so
//! where the project's test command counts it: a skip is reported, never
//! passed silently.
//!
//! `scripts/test` sets `REDCODEC_SKIP_LOG` to a file; [`record`] appends
//! one line per skip to it, and the script prints them and their count in
//! its closing summary.

use std::io::Write;

/// The environment variable naming the skip log.
pub const SKIP_LOG: &str = "REDCODEC_SKIP_LOG";

/// Reports that `test` was skipped because of `reason`: on stderr, and as a
/// line of the skip log when one is set.
pub fn record(test: &str, reason: &str) {
    eprintln!("SKIPPED: {test}: {reason}");
    let Ok(path) = std::env::var(SKIP_LOG) else {
        return;
    };
    let line = format!("{test}: {}\n", reason.replace('\n', " "));
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = file.write_all(line.as_bytes());
    }
}

/// What a test needs cannot be had here (`reason`): a failure when the
/// environment variable `require` is `1` (as CI sets it), otherwise a
/// recorded skip of `test`.
pub fn unavailable(require: &str, test: &str, reason: &str) {
    if std::env::var(require).is_ok_and(|v| v == "1") {
        panic!("{test} cannot run ({require}=1): {reason}");
    }
    record(test, reason);
}

/// A program some tests run, with the Debian package that installs it and
/// the environment variable that makes it required.
#[derive(Clone, Copy, Debug)]
pub struct Tool {
    /// The program's name.
    pub program: &'static str,
    /// The Debian package that installs it.
    pub package: &'static str,
    /// The variable that, at `1`, fails a test that cannot run it.
    pub require: &'static str,
}

/// `chromium` (renders `report.html`).
pub const CHROMIUM: Tool = Tool::new("chromium", "chromium", "REDCODEC_REQUIRE_CHROMIUM");
/// Debian's `ldb` (RocksDB 7.8.3).
pub const LDB: Tool = Tool::new("ldb", "rocksdb-tools", "REDCODEC_REQUIRE_LDB");
/// `redis-cli`, required with redis-server.
pub const REDIS_CLI: Tool = Tool::new("redis-cli", "redis-tools", "REDCODEC_REQUIRE_REDIS");
/// `valgrind` (counts instructions under callgrind).
pub const VALGRIND: Tool = Tool::new("valgrind", "valgrind", "REDCODEC_REQUIRE_VALGRIND");

impl Tool {
    /// A tool: `program`, from `package`, required under `require=1`.
    pub const fn new(program: &'static str, package: &'static str, require: &'static str) -> Tool {
        Tool {
            program,
            package,
            require,
        }
    }

    /// The program when it runs (`PROGRAM --version` succeeds);
    /// otherwise `None` after [`unavailable`] for `test`.
    pub fn find(self, test: &str) -> Option<&'static str> {
        let runs = std::process::Command::new(self.program)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if runs {
            return Some(self.program);
        }
        let reason = format!(
            "{} is not installed (apt-get install {})",
            self.program, self.package
        );
        unavailable(self.require, test, &reason);
        None
    }
}
