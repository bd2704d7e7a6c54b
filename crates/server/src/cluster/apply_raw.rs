//! `APPLYBATCH`'s direct path: the batch's records written to the store as
//! they are, in one write, as Kvrocks applies them
//! (`Storage::ApplyWriteBatch`). A cluster node's store is in Kvrocks'
//! slotted layout, the same as the batch's, so nothing needs decoding.
//!
//! Taken only when the batch is one this node could have written itself,
//! and nothing else needs to see its writes as commands; otherwise
//! [`super::apply_batch`] reads it as the changes it makes:
//!
//! - the connection imports (`CLUSTER IMPORT <range> 0`) and works in the
//!   default namespace, and every key of the batch is in that namespace
//!   and in a slot being imported (its stored slot the one its key hashes
//!   to);
//! - only puts and deletes of metadata (of the five types redcodec
//!   models), subkeys and the score index, and `LogData`;
//! - no replica has ever followed this node (its replication stream has
//!   no offset): replicas get commands, and the decoded path sends them.
//!
//! The keys' locks are held during the write.

use redcodec_codec::Place;
use redcodec_engine::store::Batch;
use redcodec_engine::Reply;
use redcodec_kvrocks::batch::{self, Record};
use redcodec_kvrocks::keys::{InternalKey, KeyScheme};
use redcodec_kvrocks::layout;
use redcodec_kvrocks::meta::{self, Header};
use redcodec_kvrocks::slot::slot;

use super::parse::SlotRange;
use crate::session::Session;
use crate::state::Shared;

/// The family a record of column family `cf` goes to, if the direct path
/// takes it.
fn place_of(cf: u32) -> Option<Place> {
    [layout::DEFAULT, layout::METADATA, layout::ZSET_SCORE]
        .into_iter()
        .find(|p| p.cf as u32 == cf)
}

/// The user key of a record, if it is of this namespace and of a slot of
/// `range` (the stored slot must be the key's own).
fn user_key<'a>(
    scheme: &KeyScheme,
    range: SlotRange,
    place: Place,
    key: &'a [u8],
) -> Option<&'a [u8]> {
    let (stored, user) = if place == layout::METADATA {
        let rest = key.strip_prefix(scheme.namespace_prefix())?;
        let s = rest.get(..2)?;
        (u16::from_be_bytes([s[0], s[1]]), &rest[2..])
    } else {
        let ik = InternalKey::parse(key, true).ok()?;
        if key.get(..scheme.namespace_prefix().len())? != scheme.namespace_prefix() {
            return None;
        }
        (ik.slot?, ik.user_key)
    };
    (range.contains(stored) && slot(user) == stored).then_some(user)
}

/// Applies `raw` directly if it may be (see the module docs): the reply,
/// or `None` for the decoded path.
pub fn try_apply(shared: &Shared, session: &Session, raw: &[u8]) -> Option<Reply> {
    if session.namespace != shared.config.default_namespace
        || !shared.cluster.link(session.info.id).importing
        || shared.repl.core().offset() != 0
        || !shared.repl.links().is_empty()
    {
        return None;
    }
    let range = shared.cluster.state.read().importing_range?;
    let scheme = KeyScheme::new(session.namespace.as_bytes(), true).ok()?;
    let parsed = batch::parse(raw).ok()?;
    let mut writes = Batch::default();
    let mut keys: Vec<&[u8]> = Vec::new();
    for record in &parsed.records {
        match *record {
            Record::LogData(_) => {}
            Record::Put { cf, key, value } => {
                let place = place_of(cf)?;
                keys.push(user_key(&scheme, range, place, key)?);
                if place == layout::METADATA {
                    let header = Header::decode(value).ok()?;
                    meta::type_of(header.type_code())?;
                }
                writes.put(place, key.to_vec(), value.to_vec());
            }
            Record::Delete { cf, key } => {
                let place = place_of(cf)?;
                keys.push(user_key(&scheme, range, place, key)?);
                writes.delete(place, key.to_vec());
            }
            _ => return None,
        }
    }
    keys.sort_unstable();
    keys.dedup();
    let engine = match shared.engines.shared(&session.namespace) {
        Ok(engine) => engine,
        Err(reply) => return Some(reply),
    };
    let _held = engine.lock_keys(&keys);
    Some(match engine.store().write(writes) {
        Ok(()) => Reply::Integer(i64::try_from(raw.len()).unwrap_or(i64::MAX)),
        Err(e) => Reply::error(format!("ERR {e}")),
    })
}
