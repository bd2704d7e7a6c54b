//! Compaction rules (`src/storage/compact_filter.cc`).
//!
//! - `MetadataFilter` (metadata CF): drop a record whose common fields say
//!   it is expired now (which includes a size-0 collection); keep a record
//!   that does not decode.
//! - `SubKeyFilter` (default, zset_score, stream CFs): find the owner's
//!   metadata through the subkey's namespace and user key, and drop the
//!   subkey when that metadata is missing, is a single-value type (the key was
//!   overwritten by a string), is expired five minutes ago, or carries another
//!   version; keep it when the metadata does not decode.
//!
//! Both rules read only the common fields ([`Header`]), so they apply to
//! every Kvrocks type, supported by redcodec or not.

use redcodec_codec::{GcDecision, Record, SubOwner};

use crate::keys::InternalKey;
use crate::layout;
use crate::meta::Header;

/// The grace period of `SubKeyFilter`: subkeys of a key expired less than
/// this long ago are kept (Kvrocks issue #1298).
pub const SUBKEY_GRACE_MS: u64 = 300_000;

fn decision(drop: bool) -> GcDecision {
    if drop {
        GcDecision::Drop
    } else {
        GcDecision::Keep
    }
}

/// `MetadataFilter` for the metadata value `value` at `now_ms`.
pub fn metadata_filter(value: &[u8], now_ms: u64) -> GcDecision {
    match Header::decode(value) {
        Ok(header) => decision(header.expired_at(now_ms)),
        Err(_) => GcDecision::Keep,
    }
}

/// The owner of a subkey found at `place`: its metadata record (rebuilt as
/// Kvrocks' `ComposeNamespaceKey` does) and the subkey's version. `None` for
/// a family without subkeys or a key too short to be a subkey.
pub fn subkey_owner(place: redcodec_codec::Place, key: &[u8], cluster: bool) -> Option<SubOwner> {
    if !layout::holds_subkeys(place) {
        return None;
    }
    let ikey = InternalKey::parse(key, cluster).ok()?;
    Some(SubOwner {
        meta: Record {
            place: layout::METADATA,
            key: ikey.owner_ns_key(cluster),
        },
        version: ikey.version,
    })
}

/// `SubKeyFilter` for a subkey of version `version` whose owner's metadata
/// bytes are `meta` (`None`: not found), at `now_ms`.
pub fn subkey_filter(version: u64, meta: Option<&[u8]>, now_ms: u64) -> GcDecision {
    // Kvrocks treats an empty metadata value like a missing one.
    let Some(raw) = meta.filter(|m| !m.is_empty()) else {
        return GcDecision::Drop;
    };
    let Ok(header) = Header::decode(raw) else {
        return GcDecision::Keep;
    };
    let lazy_now = now_ms.saturating_sub(SUBKEY_GRACE_MS);
    decision(header.is_single_value() || header.expired_at(lazy_now) || header.version != version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeyScheme;

    const NOW: u64 = 1_700_000_000_000;

    fn hash_meta(expire: u64, version: u64, size: u64) -> Vec<u8> {
        let mut v = vec![0x82];
        v.extend_from_slice(&expire.to_be_bytes());
        v.extend_from_slice(&version.to_be_bytes());
        v.extend_from_slice(&size.to_be_bytes());
        v
    }

    #[test]
    fn metadata_rules() {
        assert_eq!(metadata_filter(&hash_meta(0, 1, 1), NOW), GcDecision::Keep);
        assert_eq!(metadata_filter(&hash_meta(0, 1, 0), NOW), GcDecision::Drop);
        assert_eq!(
            metadata_filter(&hash_meta(NOW, 1, 1), NOW),
            GcDecision::Keep
        );
        assert_eq!(
            metadata_filter(&hash_meta(NOW - 1, 1, 1), NOW),
            GcDecision::Drop
        );
        assert_eq!(
            metadata_filter(b"\x81\0\0\0\0\0\0\0\0", NOW),
            GcDecision::Keep
        );
        assert_eq!(metadata_filter(b"\x82\0", NOW), GcDecision::Keep);
        assert_eq!(metadata_filter(b"", NOW), GcDecision::Keep);
    }

    #[test]
    fn subkey_rules() {
        let live = hash_meta(0, 7, 1);
        assert_eq!(subkey_filter(7, Some(&live), NOW), GcDecision::Keep);
        assert_eq!(subkey_filter(6, Some(&live), NOW), GcDecision::Drop);
        assert_eq!(subkey_filter(7, None, NOW), GcDecision::Drop);
        assert_eq!(subkey_filter(7, Some(b""), NOW), GcDecision::Drop);
        assert_eq!(subkey_filter(7, Some(b"\x82\0"), NOW), GcDecision::Keep);
        assert_eq!(
            subkey_filter(0, Some(b"\x81\0\0\0\0\0\0\0\0v"), NOW),
            GcDecision::Drop
        );
        // Five minutes of grace after expiry.
        let expired = hash_meta(NOW - 1000, 7, 1);
        assert_eq!(subkey_filter(7, Some(&expired), NOW), GcDecision::Keep);
        assert_eq!(
            subkey_filter(7, Some(&expired), NOW + 299_000),
            GcDecision::Keep
        );
        assert_eq!(
            subkey_filter(7, Some(&expired), NOW + 299_001),
            GcDecision::Drop
        );
        assert_eq!(
            subkey_filter(7, Some(&hash_meta(1, 7, 1)), 0),
            GcDecision::Keep
        );
        // Size 0 is expired whatever the clock.
        assert_eq!(
            subkey_filter(7, Some(&hash_meta(0, 7, 0)), 0),
            GcDecision::Drop
        );
    }

    #[test]
    fn owners() {
        for cluster in [false, true] {
            let s = KeyScheme::new(b"other-ns", cluster).unwrap();
            let sub = s.sub_key(b"h", 9, b"f");
            for place in [layout::DEFAULT, layout::ZSET_SCORE, layout::STREAM] {
                let owner = subkey_owner(place, &sub, cluster).unwrap();
                assert_eq!(owner.meta.place, layout::METADATA);
                assert_eq!(owner.meta.key, s.ns_key(b"h"));
                assert_eq!(owner.version, 9);
            }
            for place in [
                layout::METADATA,
                layout::PUBSUB,
                layout::PROPAGATE,
                layout::SEARCH,
            ] {
                assert_eq!(subkey_owner(place, &sub, cluster), None);
            }
            assert_eq!(
                subkey_owner(layout::DEFAULT, &sub[..sub.len() - 2], cluster),
                None
            );
        }
    }
}
