//! `APPLYBATCH <raw write batch> [LOWPRI]`: Kvrocks' command for the
//! `raw-key-value` slot migration (`src/commands/cmd_server.cc`). A source
//! Kvrocks node sends the slot's records as RocksDB write batches of its
//! own layout (`BatchSender`: a `LogData` naming the type, then metadata and
//! subkey puts; later the WAL batches written meanwhile); Kvrocks applies
//! the bytes as they are.
//!
//! A batch this node could have written itself goes to the store as it is
//! ([`super::apply_raw`]). Otherwise the batch is read as the changes it makes
//! ([`redcodec_kvrocks::changes`], as the Kvrocks replica reads its
//! master's stream) and those run through the client's own session, so any
//! format can import a slot, and the importing connection's rights hold.
//! The reply is the batch's size, as Kvrocks'.

use bytes::Bytes;
use redcodec_engine::Reply;

use crate::replica::kvrocks::apply::apply;
use crate::session::Session;
use crate::state::Shared;

/// `APPLYBATCH` (arity -2, refused inside MULTI).
pub fn apply_batch(shared: &Shared, session: &mut Session, args: &[Bytes]) -> Reply {
    if args.len() > 3 {
        return Reply::error("ERR wrong number of arguments");
    }
    if args.len() == 3 && !args[2].eq_ignore_ascii_case(b"lowpri") {
        return Reply::error("ERR only support LOWPRI option");
    }
    let raw = &args[1];
    if let Some(reply) = super::apply_raw::try_apply(shared, session, raw) {
        return reply;
    }
    let changes = match redcodec_kvrocks::changes::decode(raw, shared.cluster.enabled()) {
        Ok(changes) => changes,
        Err(e) => return Reply::error(format!("ERR the write batch does not decode: {e}")),
    };
    let namespace = session.namespace.clone();
    let mut reported = 0;
    let failed = apply(shared, session, &changes, &mut reported);
    session.namespace = namespace;
    if let Some(error) = failed {
        return error;
    }
    if let Some(skipped) = changes.skipped.first() {
        return Reply::error(format!(
            "ERR key '{}' of the batch is not applied: {}",
            String::from_utf8_lossy(&skipped.key),
            skipped.reason
        ));
    }
    Reply::Integer(i64::try_from(raw.len()).unwrap_or(i64::MAX))
}
