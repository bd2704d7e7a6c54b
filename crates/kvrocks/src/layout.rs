//! One RocksDB instance, `db`, with Kvrocks' column families in the order
//! `Storage::Open` opens them (`src/storage/storage.{h,cc}`). Every family
//! uses RocksDB's bytewise comparator.

use redcodec_codec::{CfSpec, GcRule, InstanceSpec, Layout, Place};

/// `default`: hash fields, set members, list items, zset member → score.
pub const DEFAULT: Place = Place::new(0, 0);
/// `metadata`: one record per user key (and string values).
pub const METADATA: Place = Place::new(0, 1);
/// `zset_score`: the sorted-set score index.
pub const ZSET_SCORE: Place = Place::new(0, 2);
/// `pubsub`: published messages, kept only for replication.
pub const PUBSUB: Place = Place::new(0, 3);
/// `propagate`: replication-only records and namespace tokens.
pub const PROPAGATE: Place = Place::new(0, 4);
/// The key, in [`PROPAGATE`], of the namespace tokens a server with
/// `repl-namespace-enabled yes` keeps in its store (and its replicas
/// receive with its write batches): a JSON object of token → namespace
/// (Kvrocks' `kNamespaceDBKey`, `src/server/namespace.h`).
pub const NAMESPACE_TOKENS_KEY: &[u8] = b"__namespace_keys__";
/// `stream`: stream entries (streams are not supported by redcodec).
pub const STREAM: Place = Place::new(0, 5);
/// `search`: search index data (not supported by redcodec).
pub const SEARCH: Place = Place::new(0, 6);

/// The directory of the instance, as Kvrocks' `db_dir` default names it.
pub const DIR: &str = "db";

/// Why a store with Kvrocks 1.x's slot families is refused.
const KVROCKS_1: &str = "a Kvrocks 1.x store (column families slot_metadata and slot, \
     dropped in Kvrocks 2.0); redcodec reads Kvrocks 2.0 to 2.10 stores";

/// The whole layout.
pub fn layout() -> Layout {
    let cf = |name, gc| CfSpec::plain(name, None, gc);
    Layout {
        instances: vec![InstanceSpec {
            dir: DIR,
            column_families: vec![
                cf("default", GcRule::SubKeys),
                cf("metadata", GcRule::Metadata),
                cf("zset_score", GcRule::SubKeys),
                cf("pubsub", GcRule::DropAll),
                // Kvrocks' PropagateFilter drops only the key "script"; keeping
                // everything is a safe approximation.
                cf("propagate", GcRule::KeepAll),
                cf("stream", GcRule::SubKeys),
                // Kvrocks' SearchFilter is a placeholder that keeps everything.
                cf("search", GcRule::KeepAll),
            ],
            refused: &[("slot_metadata", KVROCKS_1), ("slot", KVROCKS_1)],
            other_families: None,
        }],
    }
}

/// Whether subkeys (`InternalKey`s) live in the family at `place`.
pub fn holds_subkeys(place: Place) -> bool {
    place == DEFAULT || place == ZSET_SCORE || place == STREAM
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_in_kvrocks_order() {
        let l = layout();
        let names: Vec<_> = l.instances[0]
            .column_families
            .iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(
            names,
            [
                "default",
                "metadata",
                "zset_score",
                "pubsub",
                "propagate",
                "stream",
                "search"
            ]
        );
        assert_eq!(l.cf(METADATA).gc, GcRule::Metadata);
        assert_eq!(l.cf(PUBSUB).gc, GcRule::DropAll);
        assert_eq!(l.cf(SEARCH).gc, GcRule::KeepAll);
        assert!(l.instances[0]
            .column_families
            .iter()
            .all(|c| c.comparator.is_none()));
        assert_eq!(l.places().count(), 7);
    }
}
