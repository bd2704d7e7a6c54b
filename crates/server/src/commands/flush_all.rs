//! FLUSHALL as the store's layout of namespaces asks: where namespaces
//! are Kvrocks' tokens, only the administrator (the default namespace)
//! may run it, it empties every namespace (the codec's
//! `flush_all_ranges`), and every watched key of the other namespaces
//! is touched, as Kvrocks' `updateAllWatchedKeys` marks them (in the
//! connection's own, those that existed, as Redis does). Elsewhere it is
//! the engine's FLUSHALL of the connection's keyspace.

use bytes::Bytes;
use redcodec_engine::Reply;

use super::run::run_in_namespace;
use crate::access::Access;
use crate::command_spec::Spec;
use crate::config::NamespaceMode;
use crate::session::Session;
use crate::state::Shared;

/// Kvrocks' `errAdminPermissionRequired`, as a reply.
pub const ADMIN_REQUIRED: &str = "ERR admin permission required to perform the command";

/// FLUSHALL `[ASYNC|SYNC]`.
pub fn flush_all(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    spec: &Spec,
    args: &[Bytes],
) -> Reply {
    let tokens = shared.config.namespaces == NamespaceMode::Tokens;
    if tokens && !session.is_admin(shared) {
        return Reply::error(ADMIN_REQUIRED);
    }
    let reply = run_in_namespace(shared, session, access, spec, args);
    if tokens && !reply.is_error() {
        shared.watch.touch_all_but(&session.namespace);
    }
    reply
}
