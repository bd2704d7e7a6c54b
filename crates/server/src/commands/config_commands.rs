//! CONFIG GET SET RESETSTAT REWRITE.

use bytes::Bytes;
use std::sync::atomic::Ordering;

use redcodec_engine::Reply;

use crate::state::Shared;

/// CONFIG RESETSTAT: what Redis 7.0 resets (INFO commandstats and
/// errorstats; stats' `total_connections_received`,
/// `total_commands_processed`, `total_error_replies`, `keyspace_hits`,
/// `keyspace_misses`; persistence's `rdb_saves`).
fn reset_stats(shared: &Shared) {
    shared.command_stats.reset();
    shared.error_stats.reset();
    shared.clients.received.store(0, Ordering::Relaxed);
    shared.saves.reset_stats();
    shared.engines.keyspace_lookups().reset();
}

/// CONFIG GET, SET, RESETSTAT, REWRITE (the subcommand and its arity
/// checked before, by [`super::subcommands`]).
pub fn config(shared: &Shared, args: &[Bytes]) -> Reply {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    match sub.as_str() {
        "get" => {
            let pairs = shared.settings.lock().get(&args[2..]);
            Reply::Array(
                pairs
                    .into_iter()
                    .flat_map(|(n, v)| [Reply::bulk(n), Reply::bulk(v)])
                    .collect(),
            )
        }
        // configSetCommand: name-value pairs, else a syntax error.
        "set" if !args.len().is_multiple_of(2) => Reply::error("ERR syntax error"),
        "set" => {
            let pairs: Vec<(Vec<u8>, Vec<u8>)> = args[2..]
                .chunks(2)
                .map(|p| (p[0].to_vec(), p[1].to_vec()))
                .collect();
            let mut settings = shared.settings.lock();
            let replication = crate::settings::REPL_NAMESPACE_ENABLED;
            let was = settings.value(replication).unwrap_or("no").to_string();
            match settings.set(&pairs) {
                Ok(()) => {
                    shared
                        .max_bulk_len
                        .store(settings.max_bulk_len(), Ordering::SeqCst);
                    shared.repl.configure(&settings);
                    shared.keyspace_events.configure(
                        settings
                            .value(crate::settings::KEYSPACE_EVENTS)
                            .unwrap_or(""),
                    );
                    crate::scripting::apply_threshold(&settings, &shared.scripts.control);
                    settings.configure_slowlog(&shared.slowlog);
                    let switched = settings.value(replication) != Some(was.as_str());
                    drop(settings);
                    if switched {
                        // Kvrocks' callback of the setting: the tokens are
                        // loaded again, and the old value comes back when
                        // that fails.
                        if let Err(e) = crate::namespace_replication::load_and_rewrite(shared) {
                            let undo = [(replication.as_bytes().to_vec(), was.into_bytes())];
                            let _ = shared.settings.lock().set(&undo);
                            return Reply::Error(e);
                        }
                    }
                    Reply::ok()
                }
                Err(e) => Reply::Error(e),
            }
        }
        "resetstat" => {
            reset_stats(shared);
            Reply::ok()
        }
        "rewrite" => {
            let tokens = shared.namespace_tokens.locked();
            match crate::config_rewrite::rewrite_file(shared, &tokens) {
                Ok(()) => Reply::ok(),
                Err(e) => Reply::Error(e),
            }
        }
        _ => super::subcommands::syntax_error(args),
    }
}
