//! CONFIG GET SET RESETSTAT REWRITE.

use std::sync::atomic::Ordering;

use redcodec_engine::Reply;

use crate::state::Shared;

/// CONFIG RESETSTAT: what Redis 7.0 resets (INFO commandstats and
/// errorstats; stats' `total_connections_received`,
/// `total_commands_processed`, `total_error_replies`; persistence's
/// `rdb_saves`).
fn reset_stats(shared: &Shared) {
    shared.command_stats.reset();
    shared.error_stats.reset();
    shared.clients.received.store(0, Ordering::Relaxed);
    shared.saves.reset_stats();
}

/// CONFIG subcommand ….
pub fn config(shared: &Shared, args: &[Vec<u8>]) -> Reply {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    match sub.as_str() {
        "get" if args.len() >= 3 => {
            let pairs = shared.settings.lock().get(&args[2..]);
            Reply::Array(
                pairs
                    .into_iter()
                    .flat_map(|(n, v)| [Reply::bulk(n), Reply::bulk(v)])
                    .collect(),
            )
        }
        "set" if args.len() >= 4 && args.len().is_multiple_of(2) => {
            let pairs: Vec<(Vec<u8>, Vec<u8>)> = args[2..]
                .chunks(2)
                .map(|p| (p[0].clone(), p[1].clone()))
                .collect();
            let mut settings = shared.settings.lock();
            match settings.set(&pairs) {
                Ok(()) => {
                    shared
                        .max_bulk_len
                        .store(settings.max_bulk_len(), Ordering::SeqCst);
                    Reply::ok()
                }
                Err(e) => Reply::Error(e),
            }
        }
        "resetstat" if args.len() == 2 => {
            reset_stats(shared);
            Reply::ok()
        }
        "rewrite" if args.len() == 2 => {
            Reply::error("ERR The server is running without a config file")
        }
        _ => Reply::error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try CONFIG HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}
