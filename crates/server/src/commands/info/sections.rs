//! The fields of each INFO section (what they mean: the parent module's
//! documentation).

use std::fmt::Write;
use std::sync::atomic::Ordering;

use redcodec_engine::Engine;

use super::super::connection::REDIS_VERSION;
use crate::access::Access;
use crate::process::{self, human_bytes};
use crate::session::Session;
use crate::state::Shared;

/// The RocksDB properties INFO memory reports, summed over the store's
/// column families, with their field names.
const STORE_MEMORY: [(&str, &str); 3] = [
    ("store_memtables", "rocksdb.cur-size-all-mem-tables"),
    ("store_block_cache", "rocksdb.block-cache-usage"),
    ("store_table_readers", "rocksdb.estimate-table-readers-mem"),
];

/// Writes the fields of the section `name` (after its header) to `s`.
pub fn write(shared: &Shared, session: &Session, access: &Access<'_>, name: &str, s: &mut String) {
    match name {
        "server" => server(shared, s),
        "clients" => {
            let _ = write!(
                s,
                "connected_clients:{}\r\nblocked_clients:{}\r\ntracking_clients:0\r\nmaxclients:10000\r\n",
                shared.clients.count(),
                shared.clients.blocked(),
            );
        }
        "memory" => memory(shared, session, access, s),
        "persistence" => persistence(shared, s),
        "stats" => {
            let (hits, misses) = shared.engines.keyspace_lookups().get();
            let _ = write!(
                s,
                "total_connections_received:{}\r\ntotal_commands_processed:{}\r\ninstantaneous_ops_per_sec:0\r\nrejected_connections:0\r\n{}expired_keys:0\r\nevicted_keys:0\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\ntotal_error_replies:{}\r\n",
                shared.clients.received.load(Ordering::Relaxed),
                shared.command_stats.processed(),
                shared.repl.info_stats(),
                hits,
                misses,
                shared.error_stats.total(),
            );
        }
        "replication" if crate::replica::info::write(shared, s) => {}
        "replication" => {
            s.push_str(&shared.repl.info_replication(shared));
        }
        "cpu" => {
            let cpu = process::cpu_usage();
            let _ = write!(
                s,
                "used_cpu_sys:{}\r\nused_cpu_user:{}\r\nused_cpu_sys_children:{}\r\nused_cpu_user_children:{}\r\n",
                cpu.sys, cpu.user, cpu.sys_children, cpu.user_children,
            );
        }
        "commandstats" => shared.command_stats.render(s),
        "errorstats" => shared.error_stats.render(s),
        "cluster" => s.push_str(shared.cluster.info_section()),
        "keyspace" => {
            let counts = access.with(&session.namespace, Engine::keyspace_counts);
            if let Ok(Ok(c)) = counts {
                if c.keys > 0 {
                    let _ = write!(
                        s,
                        "db{}:keys={},expires={},avg_ttl={}\r\n",
                        session.db, c.keys, c.expires, c.avg_ttl_ms
                    );
                }
            }
        }
        "rocksdb" => rocksdb(shared, access, session, s),
        // Modules and latencystats: the header only.
        _ => {}
    }
}

fn server(shared: &Shared, s: &mut String) {
    let uptime = shared.started.elapsed().as_secs();
    let _ = write!(
        s,
        "redis_version:{REDIS_VERSION}\r\nredis_mode:standalone\r\nos:{}\r\narch_bits:64\r\nprocess_id:{}\r\nrun_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{uptime}\r\nuptime_in_days:{}\r\nexecutable:redcodec\r\n",
        std::env::consts::OS,
        std::process::id(),
        shared.run_id,
        shared.config.port,
        uptime / 86400,
    );
}

fn memory(shared: &Shared, session: &Session, access: &Access<'_>, s: &mut String) {
    let mem = process::memory();
    let used = if mem.anon > 0 { mem.anon } else { mem.rss };
    let total = process::total_system_memory();
    let (maxmemory, policy) = {
        let settings = shared.settings.lock();
        let max: u64 = settings
            .value("maxmemory")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let policy = settings
            .value("maxmemory-policy")
            .unwrap_or("noeviction")
            .to_string();
        (max, policy)
    };
    let _ = write!(
        s,
        "used_memory:{used}\r\nused_memory_human:{}\r\nused_memory_rss:{}\r\nused_memory_rss_human:{}\r\nused_memory_peak:{}\r\nused_memory_peak_human:{}\r\ntotal_system_memory:{total}\r\ntotal_system_memory_human:{}\r\nmaxmemory:{maxmemory}\r\nmaxmemory_human:{}\r\nmaxmemory_policy:{policy}\r\nmem_allocator:{}\r\n",
        human_bytes(used),
        mem.rss,
        human_bytes(mem.rss),
        mem.peak_rss,
        human_bytes(mem.peak_rss),
        human_bytes(total),
        human_bytes(maxmemory),
        shared.config.allocator,
    );
    crate::scripting::info_memory(shared, s);
    let store = access
        .with(&session.namespace, |engine| {
            STORE_MEMORY.map(|(_, property)| engine.store().property_sum(property).unwrap_or(0))
        })
        .unwrap_or_default();
    for ((field, _), bytes) in STORE_MEMORY.iter().zip(store) {
        let _ = write!(s, "{field}:{bytes}\r\n");
    }
}

fn rocksdb(shared: &Shared, access: &Access<'_>, session: &Session, s: &mut String) {
    let running = |property: &str| {
        access
            .with(&session.namespace, |engine| {
                engine.store().property_sum(property).unwrap_or(0)
            })
            .unwrap_or(0)
    };
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let _ = write!(
        s,
        "num_running_compactions:{}\r\nnum_running_flushes:{}\r\nis_bgsaving:{}\r\nis_compacting:{}\r\n",
        running("rocksdb.num-running-compactions"),
        running("rocksdb.num-running-flushes"),
        yes_no(shared.saves.in_progress()),
        yes_no(shared.saves.compacting()),
    );
}

fn persistence(shared: &Shared, s: &mut String) {
    let saves = &shared.saves;
    let _ = write!(
        s,
        "loading:{}\r\nasync_loading:0\r\nrdb_changes_since_last_save:{}\r\nrdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\nrdb_last_bgsave_time_sec:{}\r\nrdb_current_bgsave_time_sec:{}\r\nrdb_saves:{}\r\naof_enabled:0\r\naof_rewrite_in_progress:0\r\n",
        u8::from(shared.replica.is_loading()),
        saves.changes(),
        u8::from(saves.in_progress()),
        saves.last_save(),
        saves.last_status(),
        saves.last_bgsave_secs(),
        saves.current_bgsave_secs(),
        saves.saves(),
    );
}
