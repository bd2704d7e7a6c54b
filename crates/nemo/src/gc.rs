//! `NemoCompactionFilter::ShouldDrop` (`src/db_nemo_impl.h` of
//! nemo-rocksdb), one filter per instance, judging every record of it in
//! this order (`now` in whole seconds):
//!
//! 1. a value shorter than the 8-byte suffix: **drop**
//!    (`ExtractVersionAndTS` fails);
//! 2. `kv` instance: **drop** if `ts > 0 && ts < now`, else keep;
//! 3. metadata key (`key[0]` is the instance's meta prefix):
//!    keep if the value is shorter than 16 bytes; **drop** if
//!    `ts != 0 && ts < now`; keep if the leading `i64` length is > 0;
//!    **drop** if `version < now`; else keep. The last rule keeps an empty
//!    metadata record whose version is `now` or later, so that the next
//!    write cannot reuse a version older elements still carry;
//! 4. a key of one byte or less (the separators): keep;
//! 5. element key: read the owner's metadata `prefix ‖ key[2 .. 2+key[1]]`;
//!    **drop** if it is missing, if `data.version < meta.version`, or if
//!    the metadata is stale (`ts > 0 && ts < now`); else keep.
//!
//! [`judge`] runs steps 1–4 and names the owner for step 5; [`element`]
//! runs step 5 once the owner's metadata is read. The collection instances
//! use `GcRule::MetaAndSubKeys`: the engine asks `gc_sub_owner` (the owner
//! [`judge`] names, with the element's version read from its value), then
//! `gc_sub` ([`element`]) for elements and `gc_meta` (steps 1–4) for
//! everything else; see `codec`.

use redcodec_codec::{GcDecision, Place, Record, SubOwner};

use crate::keys;
use crate::layout;
use crate::suffix::{Suffix, SUFFIX_LEN};

/// Size of a metadata value below which the filter keeps it unread:
/// an `i64` length plus the suffix.
pub const MIN_META_LEN: usize = 8 + SUFFIX_LEN;

/// The outcome of the record-local steps of the filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Decided without reading another record.
    Decided(GcDecision),
    /// An element record: decide with [`element`] after reading the owner's
    /// metadata. [`SubOwner::version`] is the element's version.
    Element(SubOwner),
}

fn decision(drop: bool) -> GcDecision {
    if drop {
        GcDecision::Drop
    } else {
        GcDecision::Keep
    }
}

/// `IsStale`: a positive timestamp before `now_s`.
fn is_stale(timestamp: i32, now_s: i64) -> bool {
    timestamp > 0 && i64::from(timestamp) < now_s
}

/// Steps 1–4 for the record `key`/`value` of the instance at `place`, at
/// `now_ms`. Records of places outside the layout are kept.
pub fn judge(place: Place, key: &[u8], value: &[u8], now_ms: u64) -> Verdict {
    let now_s = i64::try_from(now_ms / 1000).unwrap_or(i64::MAX);
    let Some(data_type) = layout::type_of(place) else {
        return Verdict::Decided(GcDecision::Keep);
    };
    let Some(suffix) = Suffix::peek(value) else {
        return Verdict::Decided(GcDecision::Drop);
    };
    let Some(prefix) = keys::meta_tag(data_type) else {
        return Verdict::Decided(decision(is_stale(suffix.timestamp, now_s)));
    };
    match key.first() {
        // nemo never writes an empty key in a collection instance.
        None => Verdict::Decided(GcDecision::Keep),
        Some(&first) if first == prefix => Verdict::Decided(meta(value, suffix, now_s)),
        Some(_) if key.len() <= 1 => Verdict::Decided(GcDecision::Keep),
        Some(_) => match owner(place, prefix, key, suffix.version) {
            Some(owner) => Verdict::Element(owner),
            // Too short to hold its user key: nemo would read past the end.
            None => Verdict::Decided(GcDecision::Keep),
        },
    }
}

/// Step 3, for a metadata value of at least 8 bytes.
fn meta(value: &[u8], suffix: Suffix, now_s: i64) -> GcDecision {
    if value.len() < MIN_META_LEN {
        return GcDecision::Keep;
    }
    if suffix.timestamp != 0 && i64::from(suffix.timestamp) < now_s {
        return GcDecision::Drop;
    }
    let mut len = [0; 8];
    len.copy_from_slice(&value[..8]);
    if i64::from_le_bytes(len) > 0 {
        return GcDecision::Keep;
    }
    decision(i64::from(suffix.version) < now_s)
}

/// The owner of an element key at `place` (whose meta prefix is `prefix`)
/// stamped with `version`.
fn owner(place: Place, prefix: u8, key: &[u8], version: u32) -> Option<SubOwner> {
    let user_key = keys::user_key_of_element(key)?;
    let mut meta_key = Vec::with_capacity(1 + user_key.len());
    meta_key.push(prefix);
    meta_key.extend_from_slice(user_key);
    Some(SubOwner {
        meta: Record {
            place,
            key: meta_key,
        },
        version: u64::from(version),
    })
}

/// Step 5: an element of version `version` (a `u32`; a larger value is
/// never found older than the metadata) whose owner's metadata value is
/// `meta` (`None`: missing), at `now_ms`.
pub fn element(version: u64, meta: Option<&[u8]>, now_ms: u64) -> GcDecision {
    let now_s = i64::try_from(now_ms / 1000).unwrap_or(i64::MAX);
    let Some(raw) = meta else {
        return GcDecision::Drop;
    };
    // nemo would read before the value's start; keep what it cannot judge.
    let Some(suffix) = Suffix::peek(raw) else {
        return GcDecision::Keep;
    };
    let older = u32::try_from(version).is_ok_and(|v| v < suffix.version);
    decision(older || is_stale(suffix.timestamp, now_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_700_000_000;
    const NOW: u64 = T as u64 * 1000 + 500;

    fn value(payload: &[u8], version: i64, ts: i64) -> Vec<u8> {
        let mut v = payload.to_vec();
        Suffix {
            version: version as u32,
            timestamp: ts as i32,
        }
        .append_to(&mut v);
        v
    }

    fn meta_value(len: i64, version: i64, ts: i64) -> Vec<u8> {
        value(&len.to_le_bytes(), version, ts)
    }

    fn decided(place: Place, key: &[u8], v: &[u8]) -> GcDecision {
        match judge(place, key, v, NOW) {
            Verdict::Decided(d) => d,
            Verdict::Element(o) => panic!("unexpected element {o:?}"),
        }
    }

    use GcDecision::{Drop, Keep};

    #[test]
    fn kv_rule() {
        let kv = layout::KV;
        assert_eq!(decided(kv, b"k", &value(b"v", 0, 0)), Keep);
        assert_eq!(decided(kv, b"k", &value(b"v", 0, T)), Keep);
        assert_eq!(decided(kv, b"k", &value(b"v", 0, T - 1)), Drop);
        // IsStale: a negative timestamp is fresh.
        assert_eq!(decided(kv, b"k", &value(b"v", 0, -1)), Keep);
        assert_eq!(decided(kv, b"k", b"short"), Drop);
        assert_eq!(decided(kv, b"", &[0; 8]), Keep);
    }

    #[test]
    fn meta_rule() {
        let h = layout::HASH;
        assert_eq!(decided(h, b"Hk", &meta_value(1, T - 9, 0)), Keep);
        assert_eq!(decided(h, b"Hk", &meta_value(1, T - 9, T)), Keep);
        assert_eq!(decided(h, b"Hk", &meta_value(1, T - 9, T - 1)), Drop);
        // ts != 0 here: a negative timestamp is stale.
        assert_eq!(decided(h, b"Hk", &meta_value(1, T - 9, -1)), Drop);
        // Empty: dropped once its version is in the past.
        assert_eq!(decided(h, b"Hk", &meta_value(0, T - 1, 0)), Drop);
        assert_eq!(decided(h, b"Hk", &meta_value(0, T, 0)), Keep);
        assert_eq!(decided(h, b"Hk", &meta_value(-3, T + 1, 0)), Keep);
        assert_eq!(decided(h, b"Hk", &meta_value(-3, T - 1, 0)), Drop);
        // Short values: under 8 bytes dropped, under 16 kept.
        assert_eq!(decided(h, b"Hk", &[0; 7]), Drop);
        assert_eq!(decided(h, b"Hk", &[0; 15]), Keep);
        // A list meta is judged by its leading length too.
        let mut list = 0i64.to_le_bytes().to_vec();
        list.extend_from_slice(&[0; 24]);
        assert_eq!(decided(layout::LIST, b"Ll", &value(&list, T - 1, 0)), Drop);
    }

    #[test]
    fn separators_and_odd_keys() {
        assert_eq!(decided(layout::HASH, b"h", &[0; 8]), Keep);
        assert_eq!(decided(layout::ZSET, b"y", &[0; 8]), Keep);
        assert_eq!(decided(layout::ZSET, b"z", &[0; 8]), Keep);
        assert_eq!(decided(layout::HASH, b"h", &[0; 7]), Drop);
        assert_eq!(decided(layout::HASH, b"", &[0; 8]), Keep);
        assert_eq!(decided(layout::SET, b"s\x05ab", &[0; 8]), Keep);
        assert_eq!(decided(Place::new(9, 0), b"s", b""), Keep);
    }

    #[test]
    fn element_rule() {
        let Verdict::Element(owner) = judge(layout::HASH, b"h\x01k=f", &value(b"v", T, 0), NOW)
        else {
            panic!("element expected");
        };
        assert_eq!(owner.meta.place, layout::HASH);
        assert_eq!(owner.meta.key, b"Hk");
        assert_eq!(owner.version, T as u64);
        let v = owner.version;
        assert_eq!(element(v, Some(&meta_value(1, T, 0)), NOW), Keep);
        assert_eq!(element(v, Some(&meta_value(1, T - 5, 0)), NOW), Keep);
        assert_eq!(element(v, Some(&meta_value(1, T + 1, 0)), NOW), Drop);
        assert_eq!(element(v, Some(&meta_value(1, T, T - 1)), NOW), Drop);
        assert_eq!(element(v, Some(&meta_value(1, T, T)), NOW), Keep);
        // IsStale: a negative meta timestamp is fresh for elements.
        assert_eq!(element(v, Some(&meta_value(1, T, -1)), NOW), Keep);
        // A size-0 metadata record does not drop elements by itself.
        assert_eq!(element(v, Some(&meta_value(0, T, 0)), NOW), Keep);
        assert_eq!(element(v, None, NOW), Drop);
        assert_eq!(element(v, Some(&[0; 7]), NOW), Keep);
        // A version beyond u32 is never older: only missing or stale owners drop.
        assert_eq!(element(u64::MAX, Some(&meta_value(1, T + 1, 0)), NOW), Keep);
        assert_eq!(element(u64::MAX, Some(&meta_value(1, T, T - 1)), NOW), Drop);
    }

    #[test]
    fn owners_from_keys() {
        let owner_of = |place, key: &[u8]| match judge(place, key, &value(b"", T, 0), NOW) {
            Verdict::Element(o) => Some(o),
            Verdict::Decided(_) => None,
        };
        let o = owner_of(layout::ZSET, b"y\x02zz\0\0\0\0\0\0\0\0m").unwrap();
        assert_eq!(o.meta.key, b"Zzz");
        assert_eq!(o.version, T as u64);
        let o = owner_of(layout::LIST, b"l\x01l\x01\0\0\0\0\0\0\0").unwrap();
        assert_eq!(o.meta.key, b"Ll");
        assert_eq!(owner_of(layout::ZSET, b"Zz"), None);
        assert_eq!(owner_of(layout::ZSET, b"z"), None);
        assert_eq!(owner_of(layout::ZSET, b"z\x09a"), None);
        assert_eq!(owner_of(layout::KV, b"s\x01ab"), None);
        assert_eq!(owner_of(Place::new(1, 1), b"h\x01k=f"), None);
    }
}
