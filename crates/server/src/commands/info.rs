//! INFO: server, clients, persistence, stats, keyspace.

use std::fmt::Write;
use std::sync::atomic::Ordering;

use redcodec_engine::{Engine, Reply};

use super::connection::REDIS_VERSION;
use super::Access;
use crate::session::Session;
use crate::state::Shared;

const DEFAULT: &[&str] = &["server", "clients", "persistence", "stats", "keyspace"];

/// INFO [section …].
pub fn info(shared: &Shared, session: &Session, access: &Access<'_>, args: &[Vec<u8>]) -> Reply {
    let asked: Vec<String> = args[1..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    let all = asked.is_empty()
        || asked
            .iter()
            .any(|a| matches!(a.as_str(), "all" | "everything" | "default"));
    let mut sections = Vec::new();
    for name in DEFAULT {
        if all || asked.iter().any(|a| a == name) {
            sections.push(section(shared, session, access, name));
        }
    }
    Reply::Bulk(sections.join("\r\n").into_bytes())
}

fn section(shared: &Shared, session: &Session, access: &Access<'_>, name: &str) -> String {
    let mut s = String::new();
    match name {
        "server" => {
            s.push_str("# Server\r\n");
            let _ = write!(
                s,
                "redis_version:{REDIS_VERSION}\r\nredis_mode:standalone\r\nos:{}\r\narch_bits:64\r\nprocess_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\nexecutable:redcodec\r\n",
                std::env::consts::OS,
                std::process::id(),
                shared.config.port,
                shared.started.elapsed().as_secs(),
                shared.started.elapsed().as_secs() / 86400,
            );
        }
        "clients" => {
            let _ = write!(
                s,
                "# Clients\r\nconnected_clients:{}\r\nblocked_clients:{}\r\ntracking_clients:0\r\nmaxclients:10000\r\n",
                shared.clients.count(),
                shared.clients.blocked(),
            );
        }
        "persistence" => {
            let saves = &shared.saves;
            let _ = write!(
                s,
                "# Persistence\r\nloading:0\r\nasync_loading:0\r\nrdb_changes_since_last_save:{}\r\nrdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\nrdb_last_bgsave_time_sec:{}\r\nrdb_current_bgsave_time_sec:{}\r\nrdb_saves:{}\r\naof_enabled:0\r\naof_rewrite_in_progress:0\r\n",
                saves.changes(),
                u8::from(saves.in_progress()),
                saves.last_save(),
                saves.last_status(),
                saves.last_bgsave_secs(),
                saves.current_bgsave_secs(),
                saves.saves(),
            );
        }
        "stats" => {
            let _ = write!(
                s,
                "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\ninstantaneous_ops_per_sec:0\r\nrejected_connections:0\r\nexpired_keys:0\r\nevicted_keys:0\r\nkeyspace_hits:0\r\nkeyspace_misses:0\r\ntotal_error_replies:{}\r\n",
                shared.clients.received.load(Ordering::Relaxed),
                shared.command_stats.processed(),
                shared.error_stats.total(),
            );
        }
        "keyspace" => {
            s.push_str("# Keyspace\r\n");
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
        _ => {}
    }
    s
}
