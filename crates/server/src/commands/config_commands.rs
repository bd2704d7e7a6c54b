//! CONFIG GET SET RESETSTAT REWRITE.

use bytes::Bytes;
use std::sync::atomic::Ordering;

use redcodec_engine::Reply;

use crate::config::NamespaceMode;
use crate::namespace_tokens::CONFIG_PREFIX;
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
            let replication = crate::namespace_replication::SETTING;
            let was = settings.value(replication).unwrap_or("no").to_string();
            match settings.set(&pairs) {
                Ok(()) => {
                    shared
                        .max_bulk_len
                        .store(settings.max_bulk_len(), Ordering::SeqCst);
                    shared.repl.configure(&settings);
                    crate::scripting::apply_threshold(&settings, &shared.scripts.control);
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
            match rewrite_file(shared, &tokens) {
                Ok(()) => Reply::ok(),
                Err(e) => Reply::Error(e),
            }
        }
        _ => super::subcommands::syntax_error(args),
    }
}

/// Rewrites the configuration file the server was started with: the
/// settings CONFIG SET changes, and in Tokens mode the namespace tokens
/// `tokens` (every `namespace.` line replaced by theirs, as Kvrocks'
/// `Config::Rewrite` does; none with namespace replication, whose tokens
/// the store keeps). The caller holds the tokens locked
/// ([`crate::namespace_tokens`]), so writes of the file follow the changes
/// in order. The error is the reply.
pub fn rewrite_file(shared: &Shared, tokens: &[(String, String)]) -> Result<(), String> {
    let Some(path) = &shared.config.config_file else {
        return Err("ERR The server is running without a config file".into());
    };
    let owned = shared.config.namespaces == NamespaceMode::Tokens;
    // With namespace replication the tokens live in the store, and the
    // file loses its `namespace.` lines (Kvrocks' `Config::Rewrite`).
    let in_file = owned && !crate::namespace_replication::enabled(shared);
    let names: Vec<(String, &str)> = match in_file {
        true => tokens
            .iter()
            .map(|(ns, token)| (format!("{CONFIG_PREFIX}{ns}"), token.as_str()))
            .collect(),
        false => Vec::new(),
    };
    let settings = shared.settings.lock();
    let mut lines: Vec<(&str, &str, bool)> = settings.rewritable();
    lines.extend(
        names
            .iter()
            .map(|(name, token)| (name.as_str(), *token, true)),
    );
    crate::config_file::rewrite(path, &lines, owned.then_some(CONFIG_PREFIX))
}
