//! Five RocksDB instances, `kv`, `hash`, `list`, `zset` and `set`, opened in
//! that order by the `Nemo` constructor (`src/nemo.cc`). Each has only the
//! `default` column family, the bytewise comparator and no merge operator.
//! Each is opened by `DBNemo::Open` with a *meta prefix* (`kMetaPrefix*`,
//! `include/db_nemo.h` of nemo-rocksdb) that tells its compaction filter
//! which keys are metadata.
//!
//! On every open nemo writes one-byte "meta/data separator" keys with an
//! empty value (plus the suffix: version 0, timestamp 0): `h` in `hash`,
//! `l` in `list`, `y` and `z` in `zset`, `s` in `set` ([`SEPARATORS`]).

use redcodec_codec::{CfSpec, DataType, GcRule, InstanceSpec, Layout, Place};

use crate::suffix::{Suffix, SUFFIX_LEN};

/// The `kv` instance: strings.
pub const KV: Place = Place::new(0, 0);
/// The `hash` instance: hash metadata and fields.
pub const HASH: Place = Place::new(1, 0);
/// The `list` instance: list metadata and nodes.
pub const LIST: Place = Place::new(2, 0);
/// The `zset` instance: sorted-set metadata, members and the score index.
pub const ZSET: Place = Place::new(3, 0);
/// The `set` instance: set metadata and members.
pub const SET: Place = Place::new(4, 0);

/// The instance directories, in opening order.
pub const DIRS: [&str; 5] = ["kv", "hash", "list", "zset", "set"];

/// The meta prefix the `kv` instance is opened with (`kMetaPrefixKv`): it
/// only selects the string rules of the compaction filter; string keys
/// carry no prefix.
pub const KV_META_PREFIX: u8 = 0;

/// The separator keys nemo writes on every open: `(instance, key)`.
pub const SEPARATORS: [(Place, u8); 5] = [
    (HASH, b'h'),
    (LIST, b'l'),
    (ZSET, b'y'),
    (ZSET, b'z'),
    (SET, b's'),
];

/// The whole layout.
///
/// The `kv` family holds only strings and uses the metadata rule. Each
/// collection family holds metadata *and* element records, and uses
/// [`GcRule::MetaAndSubKeys`]: nemo's whole filter (see `gc`).
pub fn layout() -> Layout {
    let instance = |dir, gc| InstanceSpec::new(dir, vec![CfSpec::plain("default", None, gc)]);
    Layout {
        instances: vec![
            instance(DIRS[0], GcRule::Metadata),
            instance(DIRS[1], GcRule::MetaAndSubKeys),
            instance(DIRS[2], GcRule::MetaAndSubKeys),
            instance(DIRS[3], GcRule::MetaAndSubKeys),
            instance(DIRS[4], GcRule::MetaAndSubKeys),
        ],
    }
}

/// The instance holding keys of `data_type`.
pub fn place_of(data_type: DataType) -> Place {
    match data_type {
        DataType::String => KV,
        DataType::Hash => HASH,
        DataType::List => LIST,
        DataType::ZSet => ZSET,
        DataType::Set => SET,
    }
}

/// The type whose keys the instance at `place` holds, if `place` is one of
/// the layout's.
pub fn type_of(place: Place) -> Option<DataType> {
    match place {
        KV => Some(DataType::String),
        HASH => Some(DataType::Hash),
        LIST => Some(DataType::List),
        ZSET => Some(DataType::ZSet),
        SET => Some(DataType::Set),
        _ => None,
    }
}

/// The separator records nemo writes on every open: `(place, key, value)`,
/// the value being an empty payload plus a zero suffix.
pub fn bootstrap_records() -> Vec<(Place, Vec<u8>, Vec<u8>)> {
    SEPARATORS
        .iter()
        .map(|&(place, key)| {
            let mut value = Vec::with_capacity(SUFFIX_LEN);
            Suffix::ZERO.append_to(&mut value);
            (place, vec![key], value)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_instances_in_nemo_order() {
        let l = layout();
        let dirs: Vec<_> = l.instances.iter().map(|i| i.dir).collect();
        assert_eq!(dirs, ["kv", "hash", "list", "zset", "set"]);
        for inst in &l.instances {
            assert_eq!(inst.column_families.len(), 1);
            assert_eq!(inst.column_families[0].name, "default");
            assert!(inst.column_families[0].comparator.is_none());
        }
        assert_eq!(l.cf(KV).gc, GcRule::Metadata);
        assert_eq!(l.cf(ZSET).gc, GcRule::MetaAndSubKeys);
        assert_eq!(l.places().count(), 5);
        for t in DataType::ALL {
            assert_eq!(type_of(place_of(t)), Some(t));
        }
        assert_eq!(type_of(Place::new(0, 1)), None);
    }

    #[test]
    fn separators() {
        let recs = bootstrap_records();
        assert_eq!(recs.len(), 5);
        assert_eq!(recs[2], (ZSET, b"y".to_vec(), vec![0; 8]));
        assert_eq!(recs[3], (ZSET, b"z".to_vec(), vec![0; 8]));
        assert!(recs.iter().all(|(_, k, v)| k.len() == 1 && v == &[0; 8]));
    }
}
