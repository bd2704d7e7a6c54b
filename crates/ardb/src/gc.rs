//! §7 of `formats-spec/ardb.md`: the compaction filter
//! (`RocksDBCompactionFilter`, `src/db/rocksdb/rocksdb_engine.cpp`).
//!
//! - Every record whose value is **empty** is dropped (type 0 encodes to an
//!   empty value; Ardb writes empty values to have them collected).
//! - A `META` record whose ttl has passed is **kept**: Ardb only adds its
//!   key to an in-memory set (`AddExpiredKey`), and a cron task
//!   (`ScanExpiredKeys`, every second) re-reads each such key and deletes it
//!   if it is still expired. [`expired_meta_key`] gives that key; running the
//!   deletion is the engine's job (`Capabilities::active_expiry`).
//! - Element records are never judged by their owner: nothing is dropped
//!   for belonging to a deleted or expired key (Ardb deletes elements with
//!   the key).

use redcodec_codec::GcDecision;

use crate::keys::{key_type, ParsedKey};
use crate::meta::Header;

/// The filter's decision for any record of a namespace family.
pub fn compaction_filter(value: &[u8]) -> GcDecision {
    if value.is_empty() {
        GcDecision::Drop
    } else {
        GcDecision::Keep
    }
}

/// The user key Ardb's filter hands to `AddExpiredKey`: `key` is a `META`
/// record whose value has a ttl before `now_ms`. `None` for anything else.
pub fn expired_meta_key<'a>(key: &'a [u8], value: &[u8], now_ms: u64) -> Option<&'a [u8]> {
    let parsed = ParsedKey::parse(key).ok()?;
    if parsed.ty != Some(key_type::META) {
        return None;
    }
    let header = Header::decode(value).ok()?;
    header.expired_at(now_ms).then_some(parsed.user_key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{encode, meta_key};
    use crate::primitives::Data;

    const NOW: u64 = 1_700_000_000_000;

    #[test]
    fn drops_only_empty_values() {
        assert_eq!(compaction_filter(b""), GcDecision::Drop);
        assert_eq!(compaction_filter(&[0x08, 0x00]), GcDecision::Keep);
        // An expired meta is kept.
        let expired = [0x03, 0x00, 0x02, 0x02, 0x00]; // ttl 1 ms
        assert_eq!(compaction_filter(&expired), GcDecision::Keep);
    }

    #[test]
    fn collects_expired_meta_keys() {
        let key = meta_key(b"h");
        let expired = [0x03, 0x00, 0x02, 0x02, 0x00];
        assert_eq!(expired_meta_key(&key, &expired, NOW), Some(&b"h"[..]));
        assert_eq!(expired_meta_key(&key, &expired, 1), None);
        let forever = [0x03, 0x00, 0x00, 0x02, 0x00];
        assert_eq!(expired_meta_key(&key, &forever, NOW), None);
        let field = encode(b"h", key_type::HASH_FIELD, &[Data::Str(b"f")]);
        assert_eq!(expired_meta_key(&field, &expired, NOW), None);
        assert_eq!(expired_meta_key(b"", &expired, NOW), None);
        assert_eq!(expired_meta_key(&key, b"", NOW), None);
    }
}
