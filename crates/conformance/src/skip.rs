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
