//! The compaction filters (`src/base_filter.h`, `src/lists_filter.h`,
//! `src/zsets_filter.h`), at `now_ms` unix milliseconds.
//!
//! Metadata (`BaseMetaFilter`), by the type byte:
//! - string (HyperLogLogs too): drop if `etime != 0 && etime < now`;
//! - stream: keep;
//! - list, and every other byte read as hash/set/zset metadata: drop if
//!   `(etime != 0 && etime < now && version < now) || (count == 0 && version < now)`.
//!
//! Element records (`BaseDataFilter`, `ListsDataFilter`,
//! `ZSetsScoreFilter`): drop if the owner is missing, is not a collection,
//! has expired, or has a newer version.

use redcodec_codec::{GcDecision, Place, Record, SubOwner};

use crate::keys::{delimiter_end, SUFFIX_RESERVE_LEN, VERSION_LEN};
use crate::layout;
use crate::meta::{
    decode_time, BASE_META_LEN, LIST_META_LEN, STRING_MIN_LEN, TYPE_HASH, TYPE_LIST, TYPE_SET,
    TYPE_STREAM, TYPE_STRING, TYPE_ZSET,
};

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// The expiry (ms) stored at the end of a value of at least 16 bytes.
fn etime(value: &[u8]) -> u64 {
    decode_time(u64_at(value, value.len() - 8))
}

fn stale(etime: u64, now_ms: u64) -> bool {
    etime != 0 && etime < now_ms
}

/// Count, version and expiry of a collection's metadata, when `value` has
/// the length Pika writes for its type byte; `None` otherwise.
fn collection_fields(value: &[u8]) -> Option<(u64, u64, u64)> {
    match value.first() {
        Some(&TYPE_LIST) if value.len() == LIST_META_LEN => {
            Some((u64_at(value, 1), u64_at(value, 9), etime(value)))
        }
        Some(_) if value.len() == BASE_META_LEN => {
            let mut c = [0u8; 4];
            c.copy_from_slice(&value[1..5]);
            let count = u64::from(u32::from_le_bytes(c));
            Some((count, u64_at(value, 5), etime(value)))
        }
        _ => None,
    }
}

/// `BaseMetaFilter::Filter` on a record of `default`.
pub fn filter_meta(value: &[u8], now_ms: u64) -> GcDecision {
    let drop = match value.first() {
        None | Some(&TYPE_STREAM) => false,
        Some(&TYPE_STRING) => value.len() >= STRING_MIN_LEN && stale(etime(value), now_ms),
        Some(_) => match collection_fields(value) {
            Some((count, version, etime)) => {
                // Pika's `(stale && version < now) || (count == 0 && version < now)`.
                version < now_ms && (stale(etime, now_ms) || count == 0)
            }
            None => false,
        },
    };
    if drop {
        GcDecision::Drop
    } else {
        GcDecision::Keep
    }
}

/// The owner of an element record at `place`: `key[..end of 00 00] ‖ Z(16)`
/// in `default` of the same instance, and the version after `00 00`.
/// `None` (kept) outside the element families or for a key without a
/// terminator and a version.
pub fn data_owner(place: Place, key: &[u8]) -> Option<SubOwner> {
    if !layout::holds_data_keys(place) {
        return None;
    }
    let end = delimiter_end(key)?;
    if key.len() < end + VERSION_LEN {
        return None;
    }
    let mut meta_key = key[..end].to_vec();
    meta_key.extend_from_slice(&[0; SUFFIX_RESERVE_LEN]);
    Some(SubOwner {
        meta: Record {
            place: layout::meta_place(place.instance),
            key: meta_key,
        },
        version: u64_at(key, end),
    })
}

/// The element rule, given the owner's metadata bytes (`None`: missing).
///
/// Pika also drops an element whose owner is a collection of another
/// type; the owner here does not say which family the element is in, so
/// such an element is judged by expiry and version (formats-spec/floyd.md
/// §8).
pub fn data_filter(owner: &SubOwner, meta: Option<&[u8]>, now_ms: u64) -> GcDecision {
    let Some(meta) = meta else {
        return GcDecision::Drop;
    };
    let decision = match meta.first() {
        Some(&(TYPE_HASH | TYPE_SET | TYPE_LIST | TYPE_ZSET)) => match collection_fields(meta) {
            Some((_, version, etime)) => stale(etime, now_ms) || version > owner.version,
            None => false,
        },
        // An empty value reads as type 0 in Pika: a string. Strings,
        // streams and unknown types own no hash, set, list or zset element.
        _ => true,
    };
    if decision {
        GcDecision::Drop
    } else {
        GcDecision::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{data_key, meta_key};
    use crate::meta::{encode, new_meta};
    use redcodec_codec::{DataType, Meta};

    const NOW: u64 = 1_700_000_000_000;

    fn coll(t: DataType, count: u64, version: u64, expire: u64) -> Vec<u8> {
        let mut m = new_meta(t, version);
        m.size = count;
        m.expire_ms = expire;
        encode(&m).unwrap()
    }

    #[test]
    fn metadata_rules() {
        use GcDecision::{Drop, Keep};
        let s = |e| encode(&Meta::string(b"v".to_vec(), e)).unwrap();
        assert_eq!(filter_meta(&s(0), NOW), Keep);
        assert_eq!(filter_meta(&s(NOW), NOW), Keep);
        assert_eq!(filter_meta(&s(NOW - 1), NOW), Drop);
        for t in [
            DataType::Hash,
            DataType::List,
            DataType::ZSet,
            DataType::Set,
        ] {
            assert_eq!(filter_meta(&coll(t, 1, NOW - 5, NOW - 1), NOW), Drop);
            assert_eq!(filter_meta(&coll(t, 1, NOW, NOW - 1), NOW), Keep);
            assert_eq!(filter_meta(&coll(t, 0, NOW - 5, 0), NOW), Drop);
            assert_eq!(filter_meta(&coll(t, 0, NOW, 0), NOW), Keep);
            assert_eq!(filter_meta(&coll(t, 2, 1, 0), NOW), Keep);
        }
        assert_eq!(filter_meta(&[TYPE_STREAM; 3], NOW), Keep);
        assert_eq!(filter_meta(&[1; 7], NOW), Keep);
        assert_eq!(filter_meta(&[], NOW), Keep);
    }

    #[test]
    fn element_rules() {
        use GcDecision::{Drop, Keep};
        let place = Place::new(2, layout::HASH_DATA_CF);
        let key = data_key(b"h", NOW, b"f");
        let owner = data_owner(place, &key).unwrap();
        assert_eq!(owner.meta.place, Place::new(2, 0));
        assert_eq!(owner.meta.key, meta_key(b"h"));
        assert_eq!(owner.version, NOW);
        assert_eq!(data_filter(&owner, None, NOW), Drop);
        assert_eq!(
            data_filter(&owner, Some(&coll(DataType::Hash, 1, NOW, 0)), NOW),
            Keep
        );
        assert_eq!(
            data_filter(&owner, Some(&coll(DataType::Hash, 0, NOW, 0)), NOW),
            Keep
        );
        assert_eq!(
            data_filter(&owner, Some(&coll(DataType::Hash, 1, NOW + 1, 0)), NOW),
            Drop
        );
        assert_eq!(
            data_filter(&owner, Some(&coll(DataType::Hash, 1, NOW, NOW - 1)), NOW),
            Drop
        );
        let string = encode(&Meta::string(b"v".to_vec(), 0)).unwrap();
        assert_eq!(data_filter(&owner, Some(&string), NOW), Drop);
        assert_eq!(data_filter(&owner, Some(&[]), NOW), Drop);
        assert_eq!(data_owner(Place::new(2, 0), &key), None);
        assert_eq!(
            data_owner(Place::new(2, layout::STREAM_DATA_CF), &key),
            None
        );
        assert_eq!(data_owner(place, &key[..12]), None);
    }
}
