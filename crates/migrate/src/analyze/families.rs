//! Bytes per column family and per level, from RocksDB's properties.

use redcodec_codec::Place;
use redcodec_engine::store::{Store, StoreError};
use serde::Serialize;

/// Levels reported (RocksDB's default `num_levels`).
const LEVELS: usize = 7;

/// What one column family holds on disk.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FamilyStats {
    /// `<instance>/<column family>`.
    pub family: String,
    /// Bytes of its live SST files (`rocksdb.live-sst-files-size`).
    pub sst_bytes: u64,
    /// Bytes in its memtables (what the WAL held when it was opened).
    pub memtable_bytes: u64,
    /// RocksDB's estimate of its number of keys.
    pub estimated_keys: u64,
    /// Per level 0 to 6: SST files and their bytes (data, index and
    /// filter blocks, from the aggregated table properties).
    pub levels: Vec<LevelStats>,
}

/// One level of a family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LevelStats {
    /// The level.
    pub level: usize,
    /// SST files in it.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Their entries.
    pub entries: u64,
}

fn int(store: &Store, place: Place, name: &str) -> Result<u64, StoreError> {
    Ok(store
        .property(place, name)?
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0))
}

/// `name=value` fields of an aggregated-table-properties text (`; `
/// separated), summed over the fields whose name starts with one of
/// `names`.
pub(crate) fn field_sum(text: &str, names: &[&str]) -> u64 {
    text.split(';')
        .filter_map(|part| part.split_once('='))
        .filter(|(name, _)| names.iter().any(|n| name.trim().starts_with(n)))
        .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
        .sum()
}

/// The statistics of every family of the layout that exists.
pub(crate) fn families(
    store: &Store,
    name: &dyn Fn(Place) -> String,
) -> Result<Vec<FamilyStats>, StoreError> {
    let mut out = Vec::new();
    for place in store.layout().places().collect::<Vec<_>>() {
        if !store.has_cf(place) {
            continue;
        }
        let mut levels = Vec::new();
        for level in 0..LEVELS {
            let files = int(store, place, &format!("rocksdb.num-files-at-level{level}"))?;
            if files == 0 {
                continue;
            }
            let props = store
                .property(
                    place,
                    &format!("rocksdb.aggregated-table-properties-at-level{level}"),
                )?
                .unwrap_or_default();
            levels.push(LevelStats {
                level,
                files,
                bytes: field_sum(
                    &props,
                    &["data block size", "index block size", "filter block size"],
                ),
                entries: field_sum(&props, &["# entries"]),
            });
        }
        out.push(FamilyStats {
            family: name(place),
            sst_bytes: int(store, place, "rocksdb.live-sst-files-size")?,
            memtable_bytes: int(store, place, "rocksdb.cur-size-all-mem-tables")?,
            estimated_keys: int(store, place, "rocksdb.estimate-num-keys")?,
            levels,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_properties_are_summed_by_name() {
        let text = "# data blocks=3; # entries=120; raw key size=10; data block size=4000; index block size (user-key? 1, delta-value? 1)=120; filter block size=30";
        assert_eq!(
            field_sum(
                text,
                &["data block size", "index block size", "filter block size"]
            ),
            4150
        );
        assert_eq!(field_sum(text, &["# entries"]), 120);
    }
}
