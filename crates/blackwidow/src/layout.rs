//! Five RocksDB instances, one per type, in the order `BlackWidow::Open`
//! opens them (`src/blackwidow.cc`). Each collection instance keeps its
//! metadata in `default` and its element records in one or two more
//! families. Two families use blackwidow's custom comparators
//! ([`crate::comparator`]); RocksDB records their names, so they must match.

use redcodec_codec::{CfSpec, DataType, GcRule, InstanceSpec, Layout, Place};

use crate::comparator;

/// Instance index of `strings`.
pub const STRINGS_INSTANCE: usize = 0;
/// Instance index of `hashes`.
pub const HASHES_INSTANCE: usize = 1;
/// Instance index of `sets`.
pub const SETS_INSTANCE: usize = 2;
/// Instance index of `lists`.
pub const LISTS_INSTANCE: usize = 3;
/// Instance index of `zsets`.
pub const ZSETS_INSTANCE: usize = 4;

/// `strings/default`: key → value ‖ timestamp.
pub const STRINGS: Place = Place::new(STRINGS_INSTANCE, 0);
/// `hashes/default`: hash metadata.
pub const HASHES_META: Place = Place::new(HASHES_INSTANCE, 0);
/// `hashes/data_cf`: hash fields.
pub const HASHES_DATA: Place = Place::new(HASHES_INSTANCE, 1);
/// `sets/default`: set metadata.
pub const SETS_META: Place = Place::new(SETS_INSTANCE, 0);
/// `sets/member_cf`: set members.
pub const SETS_MEMBER: Place = Place::new(SETS_INSTANCE, 1);
/// `lists/default`: list metadata.
pub const LISTS_META: Place = Place::new(LISTS_INSTANCE, 0);
/// `lists/data_cf`: list items (custom comparator).
pub const LISTS_DATA: Place = Place::new(LISTS_INSTANCE, 1);
/// `zsets/default`: sorted-set metadata.
pub const ZSETS_META: Place = Place::new(ZSETS_INSTANCE, 0);
/// `zsets/data_cf`: member → score.
pub const ZSETS_DATA: Place = Place::new(ZSETS_INSTANCE, 1);
/// `zsets/score_cf`: the score index (custom comparator).
pub const ZSETS_SCORE: Place = Place::new(ZSETS_INSTANCE, 2);

/// The whole layout.
pub fn layout() -> Layout {
    let cf = CfSpec::plain;
    let meta = || cf("default", None, GcRule::Metadata);
    let inst = InstanceSpec::new;
    Layout {
        instances: vec![
            inst("strings", vec![meta()]),
            inst("hashes", vec![meta(), cf("data_cf", None, GcRule::SubKeys)]),
            inst("sets", vec![meta(), cf("member_cf", None, GcRule::SubKeys)]),
            inst(
                "lists",
                vec![
                    meta(),
                    cf(
                        "data_cf",
                        Some(comparator::LISTS_DATA_SPEC),
                        GcRule::SubKeys,
                    ),
                ],
            ),
            inst(
                "zsets",
                vec![
                    meta(),
                    cf("data_cf", None, GcRule::SubKeys),
                    cf(
                        "score_cf",
                        Some(comparator::ZSETS_SCORE_SPEC),
                        GcRule::SubKeys,
                    ),
                ],
            ),
        ],
    }
}

/// The metadata place of `data_type` (for strings: the value itself).
pub fn meta_place(data_type: DataType) -> Place {
    match data_type {
        DataType::String => STRINGS,
        DataType::Hash => HASHES_META,
        DataType::Set => SETS_META,
        DataType::List => LISTS_META,
        DataType::ZSet => ZSETS_META,
    }
}

/// The type whose metadata lives at `place`, if it is a metadata place.
pub fn type_of_meta_place(place: Place) -> Option<DataType> {
    DataType::ALL.into_iter().find(|&t| meta_place(t) == place)
}

/// Whether element records (data keys) live at `place`.
pub fn holds_data_keys(place: Place) -> bool {
    matches!(
        place,
        HASHES_DATA | SETS_MEMBER | LISTS_DATA | ZSETS_DATA | ZSETS_SCORE
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_and_families_in_blackwidow_order() {
        let l = layout();
        let names: Vec<(&str, Vec<&str>)> = l
            .instances
            .iter()
            .map(|i| (i.dir, i.column_families.iter().map(|c| c.name).collect()))
            .collect();
        assert_eq!(
            names,
            [
                ("strings", vec!["default"]),
                ("hashes", vec!["default", "data_cf"]),
                ("sets", vec!["default", "member_cf"]),
                ("lists", vec!["default", "data_cf"]),
                ("zsets", vec!["default", "data_cf", "score_cf"]),
            ]
        );
        assert_eq!(l.places().count(), 10);
        for place in l.places() {
            let cf = l.cf(place);
            let expected = match place {
                LISTS_DATA => Some("blackwidow.ListsDataKeyComparator"),
                ZSETS_SCORE => Some("blackwidow.ZSetsScoreKeyComparator"),
                _ => None,
            };
            assert_eq!(cf.comparator.map(|c| c.name), expected);
            let gc = if place.cf == 0 {
                GcRule::Metadata
            } else {
                GcRule::SubKeys
            };
            assert_eq!(cf.gc, gc);
            assert_eq!(holds_data_keys(place), place.cf != 0);
            assert_eq!(type_of_meta_place(place).is_some(), place.cf == 0);
        }
        for t in DataType::ALL {
            assert_eq!(type_of_meta_place(meta_place(t)), Some(t));
        }
    }
}
