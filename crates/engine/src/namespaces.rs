//! The namespaces a store holds, and whether its keys carry the cluster
//! slots the codec expects — both read from the store, whatever namespace
//! the engine was opened with.
//!
//! Namespaces are found as [`redcodec_codec::Capabilities::namespaces`] says: in the keys
//! of the metadata family ([`Namespaces::Prefix`], through
//! [`Codec::key_shape`]), or as column families
//! ([`Namespaces::ColumnFamily`]).

use redcodec_codec::{Codec, Namespaces};

use crate::error::{CmdResult, EngineError};
use crate::store::Store;

/// One namespace of a store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceInfo {
    /// Its name.
    pub name: Vec<u8>,
}

/// Every namespace `store` (opened with `codec`) holds, in the store's
/// order (none for a format without namespaces). With an engine:
/// `namespaces(engine.codec(), engine.store())`.
///
/// Where namespaces are in the keys, one key of each is read: the walk
/// seeks past a namespace's keys once it met the first (a whole scan of
/// the metadata family took a tenth of an `analyze`).
pub fn namespaces<C: Codec>(codec: &C, store: &Store) -> CmdResult<Vec<NamespaceInfo>> {
    let Some((range, _)) = codec.meta_ranges().into_iter().next() else {
        return Ok(Vec::new());
    };
    let place = range.place;
    match codec.capabilities().namespaces {
        Namespaces::None => Ok(Vec::new()),
        Namespaces::ColumnFamily => {
            let mut names: Vec<Vec<u8>> = store
                .other_families(place.instance)
                .iter()
                .map(|n| n.as_bytes().to_vec())
                .collect();
            if store.has_cf(place) {
                names.push(store.layout().cf(place).name.as_bytes().to_vec());
            }
            names.sort();
            Ok(names
                .into_iter()
                .map(|name| NamespaceInfo { name })
                .collect())
        }
        Namespaces::Prefix { .. } => {
            let mut found: Vec<NamespaceInfo> = Vec::new();
            let mut it = store.scan_family(place);
            while let Some((key, _)) = it.next_ref()? {
                let Some(shape) = codec.key_shape(place, key) else {
                    continue;
                };
                if found.last().is_none_or(|last| last.name != shape.namespace) {
                    found.push(NamespaceInfo {
                        name: shape.namespace,
                    });
                }
                match shape.namespace_end {
                    Some(end) => it.seek(&end),
                    None => break,
                }
            }
            Ok(found)
        }
    }
}

/// Metadata keys sampled by [`check_slots`].
const SAMPLE: usize = 16;

/// Refuses a store whose keys carry cluster slots when the codec expects
/// none, or the reverse: read with the wrong expectation, every user key
/// would be off by two bytes. Judged on the first metadata keys of the
/// engine's namespace; a store without keys passes.
pub(crate) fn check_slots<C: Codec>(codec: &C, store: &Store) -> Result<(), EngineError> {
    let Namespaces::Prefix { slots } = codec.capabilities().namespaces else {
        return Ok(());
    };
    let Some((range, _)) = codec.meta_ranges().into_iter().next() else {
        return Ok(());
    };
    let mut it = store.scan(&range, None, false);
    let (mut seen, mut slotted) = (0, 0);
    while seen < SAMPLE {
        let Some((key, _)) = it.next()? else { break };
        let Some(shape) = codec.key_shape(range.place, &key) else {
            continue;
        };
        seen += 1;
        slotted += usize::from(shape.slotted);
    }
    match (slots, seen, slotted) {
        (_, 0, _) => Ok(()),
        (false, n, s) if s == n => Err(EngineError::Open(format!(
            "every key of this {} store carries a cluster slot (cluster mode): open it in cluster mode (--cluster)",
            codec.name()
        ))),
        (true, _, 0) => Err(EngineError::Open(format!(
            "no key of this {} store carries a cluster slot: it was not written in cluster mode (drop --cluster)",
            codec.name()
        ))),
        _ => Ok(()),
    }
}
