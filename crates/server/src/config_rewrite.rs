//! CONFIG REWRITE's file: the settings CONFIG SET changed and Kvrocks'
//! namespace tokens, written back into the configuration file the server
//! started with.

use crate::config::NamespaceMode;
use crate::namespace_tokens::CONFIG_PREFIX;
use crate::state::Shared;

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
    let in_file = owned && !shared.replicates_namespace_tokens();
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
