//! Compaction filters (`src/strings_filter.h`, `src/base_filter.h`,
//! `src/lists_filter.h`, `src/zsets_filter.h`), as pure functions of the
//! record bytes and the clock. `now` is blackwidow's int32 clock in
//! seconds ([`crate::version::now_secs_from_ms`]).
//!
//! - **Strings** (`strings/default`): drop if `ts != 0 && ts < now`.
//! - **Meta** (`default` of hashes, sets, lists, zsets): drop if
//!   `(ts != 0 && ts < now && version < now) || (count == 0 && version < now)`.
//!   The `version < now` guard keeps a meta whose version was bumped to
//!   `now` or later: dropping it would let the next key reuse that version
//!   and see the old elements again.
//! - **Data** (every other family): the owner is the user key's meta in the
//!   instance's `default` family. Drop if the meta is missing, if its
//!   `ts != 0 && ts < now`, or if `meta.version > data.version` (signed);
//!   otherwise keep.
//!
//! Records this crate cannot parse are kept: values of the wrong length
//! (blackwidow never writes them), data keys shorter than their key size.

use redcodec_codec::{GcDecision, Place, Record, SubOwner};

use crate::keys::DataKey;
use crate::layout;
use crate::meta::{is_stale, record_name, BaseMetaValue, ListsMetaValue, StringsValue};
use crate::version;

fn decision(drop: bool) -> GcDecision {
    if drop {
        GcDecision::Drop
    } else {
        GcDecision::Keep
    }
}

/// The fields the filters read from a metadata value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct MetaFields {
    count_is_zero: bool,
    version: i32,
    timestamp: i32,
}

/// Parses the metadata value stored at `place` (hash/set/zset: 12 bytes;
/// list: 32 bytes). `None` if `place` is not a collection's meta family or
/// the value has the wrong length.
fn meta_fields(place: Place, value: &[u8]) -> Option<MetaFields> {
    let data_type = layout::type_of_meta_place(place)?;
    match place {
        layout::LISTS_META => {
            let m = ListsMetaValue::parse(value).ok()?;
            Some(MetaFields {
                count_is_zero: m.count == 0,
                version: m.version,
                timestamp: m.timestamp,
            })
        }
        layout::STRINGS => None,
        _ => {
            let m = BaseMetaValue::parse(record_name(data_type), value).ok()?;
            Some(MetaFields {
                count_is_zero: m.count == 0,
                version: m.version,
                timestamp: m.timestamp,
            })
        }
    }
}

/// `StringsFilter` for a stored string value.
pub fn strings_filter(value: &[u8], now_s: i32) -> GcDecision {
    match StringsValue::parse(value) {
        Ok(s) => decision(is_stale(s.timestamp, now_s)),
        // Blackwidow reads timestamp 0 from a value shorter than 4 bytes.
        Err(_) => GcDecision::Keep,
    }
}

/// `BaseMetaFilter` / `ListsMetaFilter` for the meta value stored at
/// `place`.
pub fn meta_filter(place: Place, value: &[u8], now_s: i32) -> GcDecision {
    let Some(m) = meta_fields(place, value) else {
        return GcDecision::Keep;
    };
    // Blackwidow: `(stale && version < now) || (count == 0 && version < now)`.
    decision((is_stale(m.timestamp, now_s) || m.count_is_zero) && m.version < now_s)
}

/// The filter of any metadata place: strings or meta; other places keep.
pub fn filter_meta_place(place: Place, value: &[u8], now_s: i32) -> GcDecision {
    if place == layout::STRINGS {
        strings_filter(value, now_s)
    } else {
        meta_filter(place, value, now_s)
    }
}

/// The owner of a data key found at `place`: the user key's meta record in
/// the same instance's `default` family, and the data key's version (its
/// 32 bits, as [`version::widen`] gives them). `None` for a family without
/// data keys or a key too short for its key size.
pub fn data_owner(place: Place, key: &[u8]) -> Option<SubOwner> {
    if !layout::holds_data_keys(place) {
        return None;
    }
    let k = DataKey::parse(key).ok()?;
    Some(SubOwner {
        meta: Record {
            place: Place::new(place.instance, 0),
            key: k.user_key.to_vec(),
        },
        version: version::widen(k.version),
    })
}

/// `BaseDataFilter` / `ListsDataFilter` / `ZSetsScoreFilter` for a data key
/// whose owner is `owner` and whose owner's meta bytes are `meta`.
pub fn data_filter(owner: &SubOwner, meta: Option<&[u8]>, now_s: i32) -> GcDecision {
    let Some(raw) = meta else {
        return GcDecision::Drop;
    };
    let Some(m) = meta_fields(owner.meta.place, raw) else {
        return GcDecision::Keep;
    };
    decision(is_stale(m.timestamp, now_s) || m.version > version::to_i32(owner.version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{data_key, list_key};

    const NOW: i32 = 1_700_000_000;

    fn base(count: i32, version: i32, ts: i32) -> Vec<u8> {
        BaseMetaValue {
            count,
            version,
            timestamp: ts,
        }
        .to_bytes()
    }

    fn list(count: u64, version: i32, ts: i32) -> Vec<u8> {
        ListsMetaValue {
            count,
            version,
            timestamp: ts,
            left: 5,
            right: 6 + count,
        }
        .to_bytes()
    }

    #[test]
    fn strings_rule() {
        let v = |ts: i32| [b"v".to_vec(), ts.to_le_bytes().to_vec()].concat();
        assert_eq!(strings_filter(&v(0), NOW), GcDecision::Keep);
        assert_eq!(strings_filter(&v(NOW), NOW), GcDecision::Keep);
        assert_eq!(strings_filter(&v(NOW - 1), NOW), GcDecision::Drop);
        assert_eq!(strings_filter(&v(-1), NOW), GcDecision::Drop);
        assert_eq!(strings_filter(b"abc", NOW), GcDecision::Keep);
        assert_eq!(
            filter_meta_place(layout::STRINGS, &v(NOW - 1), NOW),
            GcDecision::Drop
        );
    }

    #[test]
    fn meta_rule_with_the_version_guard() {
        for place in [layout::HASHES_META, layout::SETS_META, layout::ZSETS_META] {
            let f = |v: &[u8]| meta_filter(place, v, NOW);
            assert_eq!(f(&base(1, NOW - 10, 0)), GcDecision::Keep);
            assert_eq!(f(&base(1, NOW - 10, NOW - 1)), GcDecision::Drop);
            assert_eq!(f(&base(1, NOW - 10, NOW)), GcDecision::Keep);
            // Expired, but the version was bumped to now or later: kept.
            assert_eq!(f(&base(1, NOW, NOW - 1)), GcDecision::Keep);
            assert_eq!(f(&base(1, NOW + 3, NOW - 1)), GcDecision::Keep);
            // Empty (count 0) with an old version: dropped; a fresh one: kept.
            assert_eq!(f(&base(0, NOW - 1, 0)), GcDecision::Drop);
            assert_eq!(f(&base(0, NOW, 0)), GcDecision::Keep);
            // Wrong lengths are kept.
            assert_eq!(f(&base(0, 0, 0)[..11]), GcDecision::Keep);
            assert_eq!(f(&[base(0, 0, 0), vec![0]].concat()), GcDecision::Keep);
            // A list-shaped value is not a hash meta.
            assert_eq!(f(&list(0, 0, 0)), GcDecision::Keep);
        }
        let f = |v: &[u8]| meta_filter(layout::LISTS_META, v, NOW);
        assert_eq!(f(&list(1, NOW - 10, 0)), GcDecision::Keep);
        assert_eq!(f(&list(1, NOW - 10, NOW - 1)), GcDecision::Drop);
        assert_eq!(f(&list(1, NOW, NOW - 1)), GcDecision::Keep);
        assert_eq!(f(&list(0, NOW - 1, 0)), GcDecision::Drop);
        assert_eq!(f(&list(0, NOW, 0)), GcDecision::Keep);
        assert_eq!(f(&base(0, 0, 0)), GcDecision::Keep);
        // Not a meta family.
        assert_eq!(
            meta_filter(layout::HASHES_DATA, &base(0, 0, 0), NOW),
            GcDecision::Keep
        );
    }

    #[test]
    fn data_rule() {
        let key = data_key(b"h", NOW - 5, b"f");
        let owner = data_owner(layout::HASHES_DATA, &key).unwrap();
        assert_eq!(owner.meta.place, layout::HASHES_META);
        assert_eq!(owner.meta.key, b"h");
        assert_eq!(owner.version, (NOW - 5) as u64);
        let f = |m: Option<&[u8]>| data_filter(&owner, m, NOW);
        assert_eq!(f(None), GcDecision::Drop);
        assert_eq!(f(Some(&base(1, NOW - 5, 0))), GcDecision::Keep);
        assert_eq!(f(Some(&base(1, NOW - 4, 0))), GcDecision::Drop);
        // An older meta version keeps the data (only newer metas drop it).
        assert_eq!(f(Some(&base(1, NOW - 6, 0))), GcDecision::Keep);
        assert_eq!(f(Some(&base(1, NOW - 5, NOW - 1))), GcDecision::Drop);
        assert_eq!(f(Some(&base(1, NOW - 5, NOW))), GcDecision::Keep);
        // Count 0 alone does not drop data of the same version.
        assert_eq!(f(Some(&base(0, NOW - 5, 0))), GcDecision::Keep);
        assert_eq!(f(Some(b"junk")), GcDecision::Keep);

        // Versions compare as signed int32.
        let neg = data_key(b"h", -1, b"f");
        let owner = data_owner(layout::SETS_MEMBER, &neg).unwrap();
        assert_eq!(owner.meta.place, layout::SETS_META);
        let f = |m: &[u8]| data_filter(&owner, Some(m), NOW);
        assert_eq!(f(&base(1, 0, 0)), GcDecision::Drop);
        assert_eq!(f(&base(1, i32::MIN, 0)), GcDecision::Keep);

        // Lists read the 32-byte meta.
        let item = list_key(b"l", 7, 1 << 63);
        let owner = data_owner(layout::LISTS_DATA, &item).unwrap();
        assert_eq!(owner.meta.place, layout::LISTS_META);
        let f = |m: &[u8]| data_filter(&owner, Some(m), NOW);
        assert_eq!(f(&list(1, 7, 0)), GcDecision::Keep);
        assert_eq!(f(&list(1, 8, 0)), GcDecision::Drop);
        assert_eq!(f(&base(1, 8, 0)), GcDecision::Keep);
    }

    #[test]
    fn owners() {
        let key = data_key(b"z", 3, b"anything");
        for place in [
            layout::HASHES_DATA,
            layout::SETS_MEMBER,
            layout::LISTS_DATA,
            layout::ZSETS_DATA,
            layout::ZSETS_SCORE,
        ] {
            let owner = data_owner(place, &key).unwrap();
            assert_eq!(owner.meta.place, Place::new(place.instance, 0));
            assert_eq!(owner.version, 3);
        }
        for place in [
            layout::STRINGS,
            layout::HASHES_META,
            layout::ZSETS_META,
            Place::new(7, 1),
        ] {
            assert_eq!(data_owner(place, &key), None);
        }
        assert_eq!(data_owner(layout::HASHES_DATA, &key[..5]), None);
        assert_eq!(data_owner(layout::HASHES_DATA, b"\xff\xff\xff\xff"), None);
    }
}
