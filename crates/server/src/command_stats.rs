//! Per-command counters for INFO commandstats, as Redis 7.0 keeps them:
//! calls, microseconds, rejected calls (refused before running: wrong
//! arity, not allowed inside MULTI, not authenticated) and failed calls
//! (ran and replied with an error).
//!
//! The table is built once when the server starts, from the engine's
//! command table and the server's own commands, and never changes: a
//! command finds its counters with one hash lookup and bumps relaxed
//! atomics, with no lock on the way. The container commands the server
//! answers (CLIENT, COMMAND, CONFIG, FUNCTION, MEMORY, OBJECT) count per
//! subcommand under Redis' names (`config|get`), for the subcommands of
//! [`crate::commands::subcommands::CONTAINERS`]; an unknown subcommand
//! is counted nowhere, as in Redis.

use bytes::Bytes;
use rustc_hash::FxHashMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::commands::subcommands;

/// One command's counters, on a cache line of their own (commands run
/// on several threads at once).
#[derive(Default)]
#[repr(align(64))]
struct Counters {
    calls: AtomicU64,
    usec: AtomicU64,
    rejected: AtomicU64,
    failed: AtomicU64,
}

impl Counters {
    fn reset(&self) {
        for c in [&self.calls, &self.usec, &self.rejected, &self.failed] {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// `cmdstat_<name>:…` as Redis writes it, if the command was counted
    /// at all.
    fn render(&self, name: &str, out: &mut String) {
        let calls = self.calls.load(Ordering::Relaxed);
        let usec = self.usec.load(Ordering::Relaxed);
        let rejected = self.rejected.load(Ordering::Relaxed);
        let failed = self.failed.load(Ordering::Relaxed);
        if calls == 0 && rejected == 0 && failed == 0 {
            return;
        }
        let per_call = if calls == 0 {
            0.0
        } else {
            usec as f64 / calls as f64
        };
        let _ = write!(
            out,
            "cmdstat_{name}:calls={calls},usec={usec},usec_per_call={per_call:.2},rejected_calls={rejected},failed_calls={failed}\r\n"
        );
    }
}

/// A command's counters and, for a container, its subcommands'.
struct Entry {
    name: &'static str,
    counters: Counters,
    /// In name order, for INFO.
    subcommands: Vec<&'static str>,
    sub_counters: Vec<Counters>,
}

/// The counters of every command, and the total of commands run.
pub struct CommandStats {
    /// In name order, for INFO.
    entries: Vec<Entry>,
    /// Index into `entries` by lower-case name.
    index: FxHashMap<&'static str, usize>,
    /// Commands run (`total_commands_processed`).
    processed: AtomicU64,
}

impl CommandStats {
    /// Counters for every command in `names` (lower-case).
    pub fn new(names: impl IntoIterator<Item = &'static str>) -> CommandStats {
        let mut names: Vec<&'static str> = names.into_iter().collect();
        names.sort_unstable();
        names.dedup();
        let entries: Vec<Entry> = names
            .into_iter()
            .map(|name| {
                let mut subcommands: Vec<&'static str> = subcommands::container(name)
                    .map(|c| c.subcommands.iter().map(|s| s.name).collect())
                    .unwrap_or_default();
                subcommands.sort_unstable();
                Entry {
                    name,
                    counters: Counters::default(),
                    sub_counters: subcommands.iter().map(|_| Counters::default()).collect(),
                    subcommands,
                }
            })
            .collect();
        let index = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name, i))
            .collect();
        CommandStats {
            entries,
            index,
            processed: AtomicU64::new(0),
        }
    }

    /// The counters `args` (named `name`, lower-case) count in: the
    /// subcommand's for a container given one, none for an unknown
    /// command or subcommand.
    fn counters(&self, name: &str, args: &[Bytes]) -> Option<&Counters> {
        let entry = &self.entries[*self.index.get(name)?];
        if entry.subcommands.is_empty() {
            return Some(&entry.counters);
        }
        let Some(sub) = args.get(1) else {
            return Some(&entry.counters);
        };
        entry
            .subcommands
            .iter()
            .position(|s| sub.eq_ignore_ascii_case(s.as_bytes()))
            .map(|i| &entry.sub_counters[i])
    }

    /// Counts a command that ran for `took`, and whether it replied with
    /// an error.
    pub fn ran(&self, name: &str, args: &[Bytes], took: Duration, failed: bool) {
        self.processed.fetch_add(1, Ordering::Relaxed);
        if let Some(c) = self.counters(name, args) {
            c.calls.fetch_add(1, Ordering::Relaxed);
            let usec = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
            c.usec.fetch_add(usec, Ordering::Relaxed);
            if failed {
                c.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Counts a command refused before it ran.
    pub fn rejected(&self, name: &str, args: &[Bytes]) {
        if let Some(c) = self.counters(name, args) {
            c.rejected.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Commands run since the start or the last CONFIG RESETSTAT.
    pub fn processed(&self) -> u64 {
        self.processed.load(Ordering::Relaxed)
    }

    /// CONFIG RESETSTAT: every counter back to 0.
    pub fn reset(&self) {
        self.processed.store(0, Ordering::Relaxed);
        for e in &self.entries {
            e.counters.reset();
            e.sub_counters.iter().for_each(Counters::reset);
        }
    }

    /// The `cmdstat_…` lines of every command counted, in name order, a
    /// container's subcommands after it.
    pub fn render(&self, out: &mut String) {
        for e in &self.entries {
            e.counters.render(e.name, out);
            for (sub, c) in e.subcommands.iter().zip(&e.sub_counters) {
                c.render(&format!("{}|{sub}", e.name), out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::frame::args_of as args;

    fn rendered(stats: &CommandStats) -> String {
        let mut out = String::new();
        stats.render(&mut out);
        out
    }

    #[test]
    fn counts_calls_rejections_and_failures_per_command_and_subcommand() {
        let stats = CommandStats::new(["set", "get", "config"]);
        let us = Duration::from_micros;
        stats.ran("set", &args(&["set", "k", "v"]), us(3), false);
        stats.ran("set", &args(&["SET", "k", "v"]), us(4), true);
        stats.rejected("set", &args(&["set", "k"]));
        stats.ran("config", &args(&["config", "GET", "save"]), us(10), false);
        stats.rejected("config", &args(&["config"]));
        // Unknown commands and subcommands count nowhere.
        stats.ran("nosuch", &args(&["nosuch"]), us(1), true);
        stats.ran("config", &args(&["config", "nosuch"]), us(1), true);
        assert_eq!(
            rendered(&stats),
            "cmdstat_config:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0\r\n\
             cmdstat_config|get:calls=1,usec=10,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n\
             cmdstat_set:calls=2,usec=7,usec_per_call=3.50,rejected_calls=1,failed_calls=1\r\n"
        );
        assert_eq!(stats.processed(), 5);
        stats.reset();
        assert_eq!(rendered(&stats), "");
        assert_eq!(stats.processed(), 0);
    }
}
