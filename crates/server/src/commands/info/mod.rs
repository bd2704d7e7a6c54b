//! INFO [section …], with Redis 7.0.15's sections, in its order:
//! server, clients, memory, persistence, stats, replication, cpu,
//! modules, commandstats, errorstats, latencystats, cluster, keyspace;
//! then Kvrocks' rocksdb, given only when asked for by its name.
//!
//! Selection as Redis' `genInfoSectionDict`: no argument or `default`
//! gives every section but commandstats and latencystats; `all` and
//! `everything` give every section (there are no modules, so they are
//! the same); other names (any letter case) add their section, each
//! once; an unknown name adds nothing. Sections are separated by a blank
//! line; asking for nothing known gives an empty string.
//!
//! What each field means here (`sections`):
//!
//! - **memory**: `used_memory` is the process' resident anonymous memory
//!   (`RssAnon` of `/proc/self/status`: the heap, thread stacks,
//!   RocksDB's memtables and block cache; `VmRSS` where the kernel does
//!   not report `RssAnon`) — there is no Redis allocator to ask;
//!   `used_memory_rss` is `VmRSS`, `used_memory_peak` the largest resident
//!   set so far (`VmHWM`); each is 0 without `/proc`. `maxmemory` and
//!   `maxmemory_policy` are CONFIG's settings (nothing is evicted);
//!   `mem_allocator` the allocator the binary was built with. The store's
//!   own memory, summed over its column families: `store_memtables`
//!   (`rocksdb.cur-size-all-mem-tables`), `store_block_cache`
//!   (`rocksdb.block-cache-usage`), `store_table_readers`
//!   (`rocksdb.estimate-table-readers-mem`: index and filter blocks held
//!   outside the block cache).
//! - **cpu**: `getrusage` of the process (every thread) and of its
//!   children.
//! - **persistence**: SAVE and BGSAVE ([`crate::persistence`]);
//!   `rdb_changes_since_last_save` counts the write commands that changed
//!   something since the last successful save.
//! - **replication**: a master without replicas; `master_replid` is
//!   random at every start.
//! - **commandstats**, **errorstats**: [`crate::command_stats`],
//!   [`crate::error_stats`]. **latencystats** is its header only: no
//!   latency histograms are kept (Redis with `latency-tracking no`).
//! - **rocksdb**: the part of Kvrocks' section an operator polls after
//!   COMPACT or BGSAVE: `num_running_compactions` and
//!   `num_running_flushes` (RocksDB's properties, summed), `is_bgsaving`
//!   and `is_compacting` (`yes` or `no`, while a BGSAVE or a COMPACT
//!   runs).

mod sections;

use bytes::Bytes;
use redcodec_engine::Reply;

use crate::access::Access;
use crate::session::Session;
use crate::state::Shared;

/// Every section: its name in Redis' section dictionary, its header, and
/// whether it is a default section.
const SECTIONS: &[(&str, &str, bool)] = &[
    ("server", "Server", true),
    ("clients", "Clients", true),
    ("memory", "Memory", true),
    ("persistence", "Persistence", true),
    ("stats", "Stats", true),
    ("replication", "Replication", true),
    ("cpu", "CPU", true),
    ("module_list", "Modules", true),
    ("commandstats", "Commandstats", false),
    ("errorstats", "Errorstats", true),
    ("latencystats", "Latencystats", false),
    ("cluster", "Cluster", true),
    ("keyspace", "Keyspace", true),
    (KVROCKS_SECTION, "RocksDB", false),
];

/// Kvrocks' section, given when asked for by name only.
const KVROCKS_SECTION: &str = "rocksdb";

/// The sections INFO's arguments ask for.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// `all` or `everything`.
    all: bool,
    /// Section names asked for, lower-case.
    names: Vec<String>,
}

impl Selection {
    /// Reads INFO's arguments (after the command name).
    pub fn parse(args: &[Bytes]) -> Selection {
        let mut sel = Selection::default();
        if args.is_empty() {
            sel.add_defaults();
        }
        for arg in args {
            let name = String::from_utf8_lossy(arg).to_ascii_lowercase();
            match name.as_str() {
                "default" => sel.add_defaults(),
                "all" | "everything" => sel.all = true,
                _ => sel.names.push(name),
            }
        }
        sel
    }

    fn add_defaults(&mut self) {
        for (name, _, default) in SECTIONS {
            if *default {
                self.names.push((*name).to_string());
            }
        }
    }

    /// Whether the section named `name` (as in `SECTIONS`) is asked for.
    /// Kvrocks' rocksdb section only by its name: `all` is Redis' all.
    pub fn wants(&self, name: &str) -> bool {
        let asked = |n: &str| self.names.iter().any(|a| a == n);
        (self.all && name != KVROCKS_SECTION)
            || asked(name)
            || (name == "module_list" && asked("modules"))
    }

    /// The headers of the sections asked for, in Redis' order (each once).
    pub fn sections(&self) -> Vec<(&'static str, &'static str)> {
        SECTIONS
            .iter()
            .filter(|(name, _, _)| self.wants(name))
            .map(|&(name, header, _)| (name, header))
            .collect()
    }
}

/// INFO [section …].
pub fn info(shared: &Shared, session: &Session, access: &Access<'_>, args: &[Bytes]) -> Reply {
    let selection = Selection::parse(&args[1..]);
    let sections: Vec<String> = selection
        .sections()
        .into_iter()
        .map(|(name, header)| {
            let mut s = format!("# {header}\r\n");
            sections::write(shared, session, access, name, &mut s);
            s
        })
        .collect();
    Reply::Bulk(sections.join("\r\n").into_bytes())
}
