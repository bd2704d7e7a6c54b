//! Which database each namespace is replicated as.

use crate::config::NamespaceMode;
use crate::state::Shared;

/// The database a namespace is replicated as: where namespaces are
/// database indexes, the index (0-15) it is named after; elsewhere, and
/// for a default namespace not named after one, 0 for the default
/// namespace. `None`: the namespace is not replicated.
pub fn database_of(shared: &Shared, namespace: &str) -> Option<u32> {
    let index = namespace.parse::<u32>().ok().filter(|db| *db < 16);
    match shared.config.namespaces {
        NamespaceMode::DbIndex if index.is_some() => index,
        _ => (namespace == shared.config.default_namespace).then_some(0),
    }
}
