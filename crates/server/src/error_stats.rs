//! INFO errorstats and `total_error_replies`: every error reply the
//! server sends (a command's, one inside EXEC's array, a refusal, a
//! protocol error) counts once, under its prefix as Redis 7.0 takes it
//! (`ERR`, `WRONGTYPE`, `EXECABORT`…).
//!
//! Only error replies reach the lock here; other replies never touch it.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use redcodec_engine::Reply;

/// Error replies by prefix, and their total.
#[derive(Default)]
pub struct ErrorStats {
    total: AtomicU64,
    by_prefix: Mutex<BTreeMap<String, u64>>,
}

/// The prefix Redis counts an error under: its first word when a space
/// comes within the first 31 characters (Redis looks at 32 bytes of
/// `-TEXT`), else `ERR`.
pub fn prefix(text: &str) -> &str {
    let head = &text.as_bytes()[..text.len().min(31)];
    match head.iter().position(|&b| b == b' ') {
        Some(end) => &text[..end],
        None => "ERR",
    }
}

/// A name as INFO may print it: `#`, `:`, CR and LF become `_`, as
/// Redis' `getSafeInfoString` does.
pub fn info_safe(name: &str) -> String {
    name.replace(['#', ':', '\r', '\n'], "_")
}

impl ErrorStats {
    /// Counts `reply` if it is an error.
    pub fn note(&self, reply: &Reply) {
        if let Reply::Error(text) = reply {
            self.note_error(text);
        }
    }

    /// Counts one error reply of text `text` (without the leading `-`).
    pub fn note_error(&self, text: &str) {
        self.total.fetch_add(1, Ordering::Relaxed);
        let prefix = prefix(text);
        let mut by_prefix = self.by_prefix.lock();
        match by_prefix.get_mut(prefix) {
            Some(n) => *n += 1,
            None => {
                by_prefix.insert(prefix.to_string(), 1);
            }
        }
    }

    /// `total_error_replies`.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// CONFIG RESETSTAT: no errors counted.
    pub fn reset(&self) {
        let mut by_prefix = self.by_prefix.lock();
        by_prefix.clear();
        self.total.store(0, Ordering::Relaxed);
    }

    /// The `errorstat_<PREFIX>:count=N` lines, in prefix order.
    pub fn render(&self, out: &mut String) {
        for (prefix, n) in self.by_prefix.lock().iter() {
            let _ = write!(out, "errorstat_{}:count={n}\r\n", info_safe(prefix));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_count_under_their_first_word() {
        assert_eq!(prefix("WRONGTYPE Operation against a key"), "WRONGTYPE");
        assert_eq!(prefix("ERR"), "ERR");
        assert_eq!(prefix(&"X".repeat(40)), "ERR");
        assert_eq!(prefix(&format!("{} y", "X".repeat(30))), "X".repeat(30));
        assert_eq!(prefix(&format!("{} y", "X".repeat(31))), "ERR");

        let stats = ErrorStats::default();
        stats.note(&Reply::error("ERR syntax error"));
        stats.note(&Reply::error("WRONGTYPE Operation against a key"));
        stats.note(&Reply::error("ERR unknown command"));
        stats.note(&Reply::ok());
        stats.note_error("A:B odd");
        let mut out = String::new();
        stats.render(&mut out);
        assert_eq!(
            out,
            "errorstat_A_B:count=1\r\nerrorstat_ERR:count=2\r\nerrorstat_WRONGTYPE:count=1\r\n"
        );
        assert_eq!(stats.total(), 4);
        stats.reset();
        let mut out = String::new();
        stats.render(&mut out);
        assert_eq!((out.as_str(), stats.total()), ("", 0));
    }
}
