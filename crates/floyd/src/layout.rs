//! `db-instance-num` RocksDB instances in the directories `0`, `1`, …
//! (`Storage::Open`, `src/storage.cc`), each with the seven column
//! families `Redis::Open` opens (`src/redis.cc`), in that order. Two
//! families use Pika's custom comparators ([`crate::comparator`]); RocksDB
//! records their names, so they must match.

use redcodec_codec::{CfSpec, GcRule, InstanceSpec, Layout, Place};

use crate::comparator;

/// The most instances a codec opens (Pika sets no limit; its default is 3).
pub const MAX_INSTANCES: usize = 16;

/// Instance directory names, `0` to `15`.
const DIRS: [&str; MAX_INSTANCES] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
];

/// `default` (`kMetaCF`): metadata of every type, and string values.
pub const META_CF: usize = 0;
/// `hash_data_cf` (`kHashesDataCF`): hash fields.
pub const HASH_DATA_CF: usize = 1;
/// `set_data_cf` (`kSetsDataCF`): set members.
pub const SET_DATA_CF: usize = 2;
/// `list_data_cf` (`kListsDataCF`): list items (custom comparator).
pub const LIST_DATA_CF: usize = 3;
/// `zset_data_cf` (`kZsetsDataCF`): member → score.
pub const ZSET_DATA_CF: usize = 4;
/// `zset_score_cf` (`kZsetsScoreCF`): the score index (custom comparator).
pub const ZSET_SCORE_CF: usize = 5;
/// `stream_data_cf` (`kStreamsDataCF`): stream entries (kept as they are).
pub const STREAM_DATA_CF: usize = 6;

/// The layout of `instances` instances (1 to [`MAX_INSTANCES`]).
pub fn layout(instances: usize) -> Layout {
    let cf = CfSpec::plain;
    let families = || {
        vec![
            cf("default", None, GcRule::Metadata),
            cf("hash_data_cf", None, GcRule::SubKeys),
            cf("set_data_cf", None, GcRule::SubKeys),
            cf(
                "list_data_cf",
                Some(comparator::LISTS_DATA_SPEC),
                GcRule::SubKeys,
            ),
            cf("zset_data_cf", None, GcRule::SubKeys),
            cf(
                "zset_score_cf",
                Some(comparator::ZSETS_SCORE_SPEC),
                GcRule::SubKeys,
            ),
            // redcodec has no stream model to judge stream entries by.
            cf("stream_data_cf", None, GcRule::KeepAll),
        ]
    };
    Layout {
        instances: DIRS[..instances.clamp(1, MAX_INSTANCES)]
            .iter()
            .map(|&dir| InstanceSpec::new(dir, families()))
            .collect(),
    }
}

/// The metadata place of instance `instance`.
pub fn meta_place(instance: usize) -> Place {
    Place::new(instance, META_CF)
}

/// Whether element records (data keys) live at `place`: every family but
/// `default` and `stream_data_cf`.
pub fn holds_data_keys(place: Place) -> bool {
    (HASH_DATA_CF..=ZSET_SCORE_CF).contains(&place.cf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_families_per_instance_in_pika_order() {
        let l = layout(3);
        assert_eq!(l.instances.len(), 3);
        for (i, inst) in l.instances.iter().enumerate() {
            assert_eq!(inst.dir, i.to_string());
            let names: Vec<&str> = inst.column_families.iter().map(|c| c.name).collect();
            assert_eq!(
                names,
                [
                    "default",
                    "hash_data_cf",
                    "set_data_cf",
                    "list_data_cf",
                    "zset_data_cf",
                    "zset_score_cf",
                    "stream_data_cf"
                ]
            );
        }
        for place in l.places() {
            let expected = match place.cf {
                LIST_DATA_CF => Some("floyd.ListsDataKeyComparator"),
                ZSET_SCORE_CF => Some("floyd.ZSetsScoreKeyComparator"),
                _ => None,
            };
            assert_eq!(l.cf(place).comparator.map(|c| c.name), expected);
            let gc = match place.cf {
                META_CF => GcRule::Metadata,
                STREAM_DATA_CF => GcRule::KeepAll,
                _ => GcRule::SubKeys,
            };
            assert_eq!(l.cf(place).gc, gc);
            assert_eq!(holds_data_keys(place), gc == GcRule::SubKeys);
        }
        assert_eq!(layout(0).instances.len(), 1);
        assert_eq!(layout(99).instances.len(), MAX_INSTANCES);
        assert_eq!(layout(16).instances[15].dir, "15");
    }
}
