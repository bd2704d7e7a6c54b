//! Kvrocks' namespace replication (`repl-namespace-enabled yes`,
//! `src/server/namespace.cc`): the namespace tokens kept in the store, as
//! a JSON object of token → namespace under
//! [`NAMESPACE_TOKENS_KEY`] in the propagate column family, and sent to
//! replicas.
//!
//! - **Where the tokens live.** Without namespace replication they are
//!   kept in the configuration file only (`namespace.NAME TOKEN` lines).
//!   With it, a master writes them to the store at every change and the
//!   configuration file loses its `namespace.` lines ([`rewrite`]). At
//!   start, and whenever the setting changes, the tokens are those of the
//!   configuration file the server started with, then those of the store
//!   whose token the file does not have ([`load_and_rewrite`]); a store
//!   holding tokens refuses to switch the setting off (`cannot switch off
//!   repl_namespace_enabled when namespaces exist in db`, also at start).
//! - **How replicas learn them.** A Kvrocks replica gets the store's record
//!   in the master's write batches or its checkpoint; a redcodec replica
//!   of a Kvrocks master reads it there too
//!   ([`redcodec_kvrocks::changes::Changes::namespace_tokens`]). Replicas
//!   that follow with the Redis protocol get `NAMESPACE SET ns token` and
//!   `NAMESPACE DEL ns` in the stream ([`propagate`], applied by
//!   [`apply_from_stream`]) and the tokens of a full copy in the RDB's
//!   auxiliary field [`RDB_AUX`]. A replica keeps what it learns in its
//!   own store, as a Kvrocks replica keeps its master's batches, and
//!   refuses NAMESPACE's changes (`namespace is read-only for slave`).
//! - A replica without namespace replication, or of a format without
//!   namespace tokens, leaves the master's tokens alone (a Kvrocks replica
//!   would store them and then fail to load them), and says so once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use redcodec_engine::store::Batch;
use redcodec_kvrocks::layout::{NAMESPACE_TOKENS_KEY, PROPAGATE};

use crate::config::NamespaceMode;
use crate::settings::REPL_NAMESPACE_ENABLED;
use crate::state::Shared;

/// The auxiliary field of a full copy's RDB that carries the master's
/// stored tokens (the store's JSON), when it replicates them.
pub const RDB_AUX: &str = "redcodec-namespace-tokens";

/// Kvrocks' refusal to run without namespace replication over a store
/// that holds tokens.
pub const SWITCHED_OFF: &str =
    "ERR cannot switch off repl_namespace_enabled when namespaces exist in db";

/// Kvrocks' refusal of a change of the tokens on a replica.
pub const READ_ONLY: &str = "ERR namespace is read-only for slave";

/// The tokens `(namespace, token)` as the store keeps them: a JSON object
/// of token → namespace, in token order (Kvrocks' `jsoncons::json`
/// object, which sorts its members).
pub fn to_json(tokens: &[(String, String)]) -> String {
    let map: BTreeMap<&str, &str> = tokens
        .iter()
        .map(|(ns, token)| (token.as_str(), ns.as_str()))
        .collect();
    serde_json::to_string(&map).unwrap_or_else(|_| "{}".into())
}

/// The tokens `(namespace, token)` of the store's JSON, in token order.
pub fn from_json(bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    let map: BTreeMap<String, String> = serde_json::from_slice(bytes)
        .map_err(|e| format!("ERR the namespace tokens are not a JSON object of strings: {e}"))?;
    Ok(map.into_iter().map(|(token, ns)| (ns, token)).collect())
}

/// The tokens the store holds (none on a format without tokens).
pub fn stored(shared: &Shared) -> Result<Vec<(String, String)>, String> {
    if shared.config.namespaces != NamespaceMode::Tokens {
        return Ok(Vec::new());
    }
    let engine = shared.engines.current().map_err(|e| e.to_string())?;
    match engine.store().get(PROPAGATE, NAMESPACE_TOKENS_KEY) {
        Ok(Some(json)) => from_json(&json),
        Ok(None) => Ok(Vec::new()),
        Err(e) => Err(format!("ERR reading the namespace tokens: {e}")),
    }
}

/// Writes `tokens` to the store.
fn store(shared: &Shared, tokens: &[(String, String)]) -> Result<(), String> {
    let engine = shared.engines.current().map_err(|e| e.to_string())?;
    let mut batch = Batch::default();
    batch.put(
        PROPAGATE,
        NAMESPACE_TOKENS_KEY.to_vec(),
        to_json(tokens).into_bytes(),
    );
    engine
        .store()
        .write(batch)
        .map_err(|e| format!("ERR writing the namespace tokens: {e}"))
}

/// Kvrocks' `Namespace::LoadAndRewrite`, at start and when the setting
/// changes: the tokens become those of the configuration file the server
/// started with, then the store's whose token the file does not have; with
/// namespace replication on and tokens in that file, they are written
/// where they now belong ([`rewrite`]). The error is the reply.
pub fn load_and_rewrite(shared: &Shared) -> Result<(), String> {
    if shared.config.namespaces != NamespaceMode::Tokens || shared.cluster.enabled() {
        return Ok(());
    }
    let from_store = stored(shared)?;
    let enabled = shared.replicates_namespace_tokens();
    if !from_store.is_empty() && !enabled {
        return Err(SWITCHED_OFF.into());
    }
    let mut tokens = shared.namespace_tokens.changing();
    let mut all = shared.config.namespace_tokens.clone();
    for (ns, token) in from_store {
        if !all.iter().any(|(_, t)| *t == token) {
            all.push((ns, token));
        }
    }
    *tokens = all;
    if shared.config.namespace_tokens.is_empty() || !enabled {
        return Ok(());
    }
    rewrite(shared, &tokens)
}

/// Kvrocks' `Namespace::Rewrite`, after a change of the tokens (the caller
/// holds them locked): the configuration file, if the server has one (its
/// `namespace.` lines only without namespace replication), then, on a
/// master with namespace replication, the store.
pub fn rewrite(shared: &Shared, tokens: &[(String, String)]) -> Result<(), String> {
    if shared.config.config_file.is_some() {
        crate::config_rewrite::rewrite_file(shared, tokens)?;
    }
    if shared.replica.is_replica() || !shared.replicates_namespace_tokens() {
        return Ok(());
    }
    store(shared, tokens)
}

/// Sends a change of the tokens (`NAMESPACE SET ns token` or `NAMESPACE
/// DEL ns`) to the replicas that follow with the Redis protocol, when
/// the tokens are replicated.
pub fn propagate(shared: &Shared, ns: &str, token: Option<&str>) {
    if shared.replica.is_replica() || !shared.replicates_namespace_tokens() {
        return;
    }
    let command = match token {
        Some(token) => vec![
            b"NAMESPACE".to_vec(),
            b"SET".to_vec(),
            ns.as_bytes().to_vec(),
            token.as_bytes().to_vec(),
        ],
        None => vec![
            b"NAMESPACE".to_vec(),
            b"DEL".to_vec(),
            ns.as_bytes().to_vec(),
        ],
    };
    shared.repl.core().feed(&[command]);
}

/// The auxiliary field of a full copy's RDB with the stored tokens, when
/// the tokens are replicated ([`RDB_AUX`]; none otherwise).
pub fn rdb_aux(shared: &Shared) -> Vec<(Vec<u8>, Vec<u8>)> {
    if !shared.replicates_namespace_tokens() {
        return Vec::new();
    }
    let tokens = shared.namespace_tokens.list();
    vec![(RDB_AUX.as_bytes().to_vec(), to_json(&tokens).into_bytes())]
}

/// Whether a replica that leaves its master's tokens alone has said so.
static IGNORED_SAID: AtomicBool = AtomicBool::new(false);

/// A replica takes its master's stored tokens, the store's JSON `json`
/// (`None`: the master keeps none), as its own store's and loads them, as
/// a Kvrocks replica does with the master's record; a failure is logged
/// and the data goes on being followed.
pub fn learn_json(shared: &Shared, json: Option<&[u8]>) {
    let learned = json
        .map(from_json)
        .transpose()
        .and_then(|tokens| learn(shared, tokens));
    if let Err(e) = learned {
        eprintln!("redcodec serve: replication: failed to load namespaces: {e}");
    }
}

/// [`learn_json`] of tokens already read; the error is for the log.
fn learn(shared: &Shared, tokens: Option<Vec<(String, String)>>) -> Result<(), String> {
    if !shared.replicates_namespace_tokens() {
        if tokens.is_some_and(|t| !t.is_empty()) && !IGNORED_SAID.swap(true, Ordering::SeqCst) {
            eprintln!(
                "redcodec serve: replication: the master's namespace tokens are left alone \
                 (this server does not replicate them: {REPL_NAMESPACE_ENABLED} is no, or its format has none)"
            );
        }
        return Ok(());
    }
    store(shared, &tokens.unwrap_or_default())?;
    load_and_rewrite(shared)
}

/// A replica applies `NAMESPACE SET ns token` or `NAMESPACE DEL ns` of its
/// master's stream to the tokens it keeps of its master. The error is for
/// the log.
pub fn apply_from_stream(shared: &Shared, args: &[Bytes]) -> Result<(), String> {
    let word = |i: usize| String::from_utf8_lossy(&args[i]).into_owned();
    let sub = args.get(1).map(|s| s.to_ascii_lowercase());
    let mut tokens = stored(shared)?;
    match (sub.as_deref(), args.len()) {
        (Some(b"set"), 4) => {
            let (ns, token) = (word(2), word(3));
            tokens.retain(|(n, t)| *n != ns && *t != token);
            tokens.push((ns, token));
        }
        (Some(b"del"), 3) => {
            let ns = word(2);
            tokens.retain(|(n, _)| *n != ns);
        }
        _ => return Ok(()),
    }
    learn(shared, Some(tokens))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_keeps_tokens_as_kvrocks_json_in_token_order() {
        let tokens = vec![
            ("n2".to_string(), "t2".to_string()),
            ("n1".to_string(), "t1".to_string()),
        ];
        let json = to_json(&tokens);
        assert_eq!(json, r#"{"t1":"n1","t2":"n2"}"#);
        assert_eq!(
            from_json(json.as_bytes()).unwrap(),
            [("n1".into(), "t1".into()), ("n2".into(), "t2".into())]
        );
        assert_eq!(to_json(&[]), "{}");
        assert!(from_json(b"{}").unwrap().is_empty());
        assert!(from_json(b"[1]").unwrap_err().contains("not a JSON object"));
        assert!(from_json(br#"{"t":1}"#).is_err());
        assert!(from_json(b"\xff").is_err());
    }
}
