//! Which namespace of this server a Kvrocks namespace maps to.

use crate::config::NamespaceMode;
use crate::state::Shared;

/// The namespace of this server that a Kvrocks namespace maps to: the
/// default namespace (`__namespace`) to this server's default keyspace;
/// another to the namespace of the same name where the format has named
/// namespaces (Kvrocks, Ardb); `None` on a format with one keyspace.
pub fn destination(shared: &Shared, namespace: &[u8]) -> Option<String> {
    if namespace == redcodec_kvrocks::DEFAULT_NAMESPACE {
        return crate::replica::load::namespace_of(shared, 0);
    }
    match shared.config.namespaces {
        NamespaceMode::Tokens | NamespaceMode::DbIndex => {
            Some(String::from_utf8_lossy(namespace).into_owned())
        }
        NamespaceMode::None => None,
    }
}
