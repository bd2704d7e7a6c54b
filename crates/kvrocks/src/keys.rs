//! Key encodings (`src/storage/redis_metadata.cc`). Integers are big-endian.
//!
//! ```text
//! ns_key  = [u8 ns_len][ns][u16 slot, cluster only][user_key]
//! subkey  = [u8 ns_len][ns][u16 slot, cluster only][u32 user_key_len][user_key][u64 version][sub bytes]
//! ```
//!
//! The user key of an `ns_key` has no length: it runs to the end.

use byteorder::{BigEndian, ByteOrder};
use redcodec_codec::{beyond_prefix, prefix_successor, DecodeError, Reader};

use crate::{slot, OptionsError};

/// A namespace and cluster mode: everything key encoding depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyScheme {
    /// `[u8 ns_len][ns]`.
    prefix: Vec<u8>,
    cluster: bool,
}

impl KeyScheme {
    /// A scheme for `namespace` (at most 255 bytes).
    pub fn new(namespace: &[u8], cluster: bool) -> Result<KeyScheme, OptionsError> {
        let len = u8::try_from(namespace.len()).map_err(|_| OptionsError::NamespaceTooLong {
            len: namespace.len(),
        })?;
        let mut prefix = Vec::with_capacity(1 + namespace.len());
        prefix.push(len);
        prefix.extend_from_slice(namespace);
        // Every range this crate hands out is bounded by the successor of a
        // key starting with this prefix; it exists unless the prefix is all 0xFF.
        if prefix_successor(&prefix).is_none() {
            return Err(OptionsError::NamespaceUnbounded);
        }
        Ok(KeyScheme { prefix, cluster })
    }

    /// Whether keys carry a cluster slot.
    pub fn cluster(&self) -> bool {
        self.cluster
    }

    /// `[u8 ns_len][ns]`: the prefix of every key of the namespace.
    pub fn namespace_prefix(&self) -> &[u8] {
        &self.prefix
    }

    /// The metadata key of `user_key`.
    pub fn ns_key(&self, user_key: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.prefix.len() + 2 + user_key.len());
        self.put_ns_and_slot(&mut out, user_key);
        out.extend_from_slice(user_key);
        out
    }

    /// The subkey of `user_key` at `version` with no sub bytes: the prefix of
    /// every subkey of that key version.
    pub fn sub_prefix(&self, user_key: &[u8], version: u64) -> Vec<u8> {
        self.sub_prefix_with_room(user_key, version, 0)
    }

    /// [`KeyScheme::sub_prefix`] with room for `room` more bytes: a
    /// subkey's own bytes are appended without the vector growing.
    fn sub_prefix_with_room(&self, user_key: &[u8], version: u64, room: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.prefix.len() + 14 + user_key.len() + room);
        self.put_ns_and_slot(&mut out, user_key);
        // Keys longer than u32::MAX bytes are refused before any subkey is built.
        put_u32(&mut out, user_key.len() as u32);
        out.extend_from_slice(user_key);
        put_u64(&mut out, version);
        out
    }

    /// The subkey of `user_key` at `version` with sub bytes `sub`.
    pub fn sub_key(&self, user_key: &[u8], version: u64, sub: &[u8]) -> Vec<u8> {
        self.sub_key_with(user_key, version, sub.len(), |out| {
            out.extend_from_slice(sub);
        })
    }

    /// [`KeyScheme::sub_key`] whose `room` sub bytes `put` appends, made
    /// in one allocation.
    pub fn sub_key_with(
        &self,
        user_key: &[u8],
        version: u64,
        room: usize,
        put: impl FnOnce(&mut Vec<u8>),
    ) -> Vec<u8> {
        let mut out = self.sub_prefix_with_room(user_key, version, room);
        put(&mut out);
        out
    }

    /// The half-open range `[lower, upper)` holding every subkey of
    /// `user_key` at `version`: from the prefix with `version` to the prefix
    /// with `version + 1` (or the prefix's successor at `u64::MAX`).
    pub fn sub_bounds(&self, user_key: &[u8], version: u64) -> (Vec<u8>, Vec<u8>) {
        let lower = self.sub_prefix(user_key, version);
        let upper = match version.checked_add(1) {
            Some(next) => self.sub_prefix(user_key, next),
            None => prefix_successor(&lower).unwrap_or_else(|| beyond_prefix(&lower)),
        };
        (lower, upper)
    }

    /// The sub bytes of `raw`, which must be a subkey of `user_key` at `version`.
    pub fn strip_sub_prefix<'a>(
        &self,
        user_key: &[u8],
        version: u64,
        raw: &'a [u8],
    ) -> Result<&'a [u8], DecodeError> {
        // Field by field, as `sub_prefix` lays them out, without building
        // the prefix: this runs once per element a range read returns.
        let rest = raw.strip_prefix(self.prefix.as_slice());
        let rest = if self.cluster {
            rest.and_then(|r| r.strip_prefix(&slot::slot(user_key).to_be_bytes()[..]))
        } else {
            rest
        };
        let key_len = u32::try_from(user_key.len()).ok();
        rest.zip(key_len)
            .and_then(|(r, len)| r.strip_prefix(&len.to_be_bytes()[..]))
            .and_then(|r| r.strip_prefix(user_key))
            .and_then(|r| r.strip_prefix(&version.to_be_bytes()[..]))
            .ok_or_else(|| DecodeError::Invalid {
                record: "kvrocks subkey",
                reason: "key does not belong to this key and version".into(),
            })
    }

    /// The user key of a metadata key, or `None` if `raw` belongs to another
    /// namespace. In cluster mode the slot must match the user key.
    pub fn user_key_of<'a>(&self, raw: &'a [u8]) -> Result<Option<&'a [u8]>, DecodeError> {
        let Some(rest) = raw.strip_prefix(self.prefix.as_slice()) else {
            return Ok(None);
        };
        let mut r = Reader::new("kvrocks metadata key", rest);
        let stored_slot = if self.cluster {
            Some(r.u16_be()?)
        } else {
            None
        };
        let user_key = r.rest();
        if let Some(stored) = stored_slot {
            let expected = slot::slot(user_key);
            if stored != expected {
                return Err(r.invalid(format!(
                    "slot {stored} does not match the key's slot {expected}"
                )));
            }
        }
        Ok(Some(user_key))
    }

    /// The namespace prefix of any metadata key of the store
    /// (`[u8 ns_len][ns]…`: the length byte and the name), and whether the
    /// two bytes after it are the cluster slot of the rest. `None` for a
    /// key shorter than its namespace prefix.
    pub fn shape_of(raw: &[u8]) -> Option<(&[u8], bool)> {
        let (&len, rest) = raw.split_first()?;
        let prefix = raw.get(..1 + usize::from(len))?;
        let after = &rest[usize::from(len)..];
        let slotted = after.len() >= 2 && BigEndian::read_u16(after) == slot::slot(&after[2..]);
        Some((prefix, slotted))
    }

    fn put_ns_and_slot(&self, out: &mut Vec<u8>, user_key: &[u8]) {
        out.extend_from_slice(&self.prefix);
        if self.cluster {
            put_u16(out, slot::slot(user_key));
        }
    }
}

/// A subkey split into its fields (Kvrocks' `InternalKey`), in any namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InternalKey<'a> {
    /// The namespace name.
    pub namespace: &'a [u8],
    /// The stored slot (cluster mode only).
    pub slot: Option<u16>,
    /// The user key.
    pub user_key: &'a [u8],
    /// The key version the subkey belongs to.
    pub version: u64,
    /// The type-specific sub bytes.
    pub sub: &'a [u8],
}

impl<'a> InternalKey<'a> {
    /// Splits a subkey; `cluster` says whether it carries a slot.
    pub fn parse(raw: &'a [u8], cluster: bool) -> Result<InternalKey<'a>, DecodeError> {
        let mut r = Reader::new("kvrocks subkey", raw);
        let ns_len = r.u8()?;
        let namespace = r.take(usize::from(ns_len))?;
        let slot = if cluster { Some(r.u16_be()?) } else { None };
        let key_len = r.u32_be()?;
        let user_key = r.take(usize::try_from(key_len).map_err(|_| r.invalid("key too long"))?)?;
        let version = r.u64_be()?;
        let sub = r.rest();
        Ok(InternalKey {
            namespace,
            slot,
            user_key,
            version,
            sub,
        })
    }

    /// The metadata key of the owner, as Kvrocks' `ComposeNamespaceKey`
    /// builds it (in cluster mode the slot is recomputed from the user key).
    pub fn owner_ns_key(&self, cluster: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 + self.namespace.len() + 2 + self.user_key.len());
        // The namespace came out of a one-byte length field.
        out.push(self.namespace.len() as u8);
        out.extend_from_slice(self.namespace);
        if cluster {
            put_u16(&mut out, slot::slot(self.user_key));
        }
        out.extend_from_slice(self.user_key);
        out
    }
}

fn put_u16(out: &mut Vec<u8>, v: u16) {
    let mut b = [0; 2];
    BigEndian::write_u16(&mut b, v);
    out.extend_from_slice(&b);
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    let mut b = [0; 4];
    BigEndian::write_u32(&mut b, v);
    out.extend_from_slice(&b);
}

pub(crate) fn put_u64(out: &mut Vec<u8>, v: u64) {
    let mut b = [0; 8];
    BigEndian::write_u64(&mut b, v);
    out.extend_from_slice(&b);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn std_scheme() -> KeyScheme {
        KeyScheme::new(b"__namespace", false).unwrap()
    }

    #[test]
    fn namespace_limits() {
        assert!(KeyScheme::new(&[b'a'; 255], false).is_ok());
        assert_eq!(
            KeyScheme::new(&[b'a'; 256], false),
            Err(OptionsError::NamespaceTooLong { len: 256 })
        );
        assert_eq!(
            KeyScheme::new(&[0xFF; 255], false),
            Err(OptionsError::NamespaceUnbounded)
        );
        assert!(KeyScheme::new(&[0xFF; 254], false).is_ok());
        assert!(KeyScheme::new(b"", false).is_ok());
    }

    #[test]
    fn ns_key_standalone_and_cluster() {
        assert_eq!(std_scheme().ns_key(b"foo"), b"\x0b__namespacefoo");
        let c = KeyScheme::new(b"__namespace", true).unwrap();
        assert_eq!(c.ns_key(b"foo"), b"\x0b__namespace\x2f\x96foo");
        assert_eq!(
            c.user_key_of(b"\x0b__namespace\x2f\x96foo"),
            Ok(Some(&b"foo"[..]))
        );
        assert!(c.user_key_of(b"\x0b__namespace\x2f\x97foo").is_err());
        assert!(c.user_key_of(b"\x0b__namespace\x2f").is_err());
        assert_eq!(std_scheme().user_key_of(b"\x02nsfoo"), Ok(None));
        assert_eq!(
            std_scheme().user_key_of(b"\x0b__namespace"),
            Ok(Some(&b""[..]))
        );
    }

    #[test]
    fn strip_sub_prefix_accepts_its_own_key_and_version_only() {
        for cluster in [false, true] {
            let s = KeyScheme::new(b"ns", cluster).unwrap();
            let raw = s.sub_key(b"key", 7, b"field");
            assert_eq!(s.strip_sub_prefix(b"key", 7, &raw), Ok(&b"field"[..]));
            assert!(s.strip_sub_prefix(b"key", 8, &raw).is_err());
            assert!(s.strip_sub_prefix(b"kez", 7, &raw).is_err());
            assert!(s.strip_sub_prefix(b"ke", 7, &raw).is_err());
            let other_ns = KeyScheme::new(b"nt", cluster).unwrap();
            assert!(other_ns.strip_sub_prefix(b"key", 7, &raw).is_err());
            assert!(s
                .strip_sub_prefix(b"key", 7, &raw[..raw.len() - 6])
                .is_err());
        }
        // In cluster mode the slot is part of the prefix.
        let c = KeyScheme::new(b"ns", true).unwrap();
        let mut raw = c.sub_key(b"key", 7, b"f");
        raw[3] ^= 1;
        assert!(c.strip_sub_prefix(b"key", 7, &raw).is_err());
    }

    #[test]
    fn subkey_round_trip() {
        for cluster in [false, true] {
            let s = KeyScheme::new(b"ns", cluster).unwrap();
            let raw = s.sub_key(b"key", 7, b"field");
            let ik = InternalKey::parse(&raw, cluster).unwrap();
            assert_eq!(ik.namespace, b"ns");
            assert_eq!(ik.slot, cluster.then(|| slot::slot(b"key")));
            assert_eq!(ik.user_key, b"key");
            assert_eq!(ik.version, 7);
            assert_eq!(ik.sub, b"field");
            assert_eq!(ik.owner_ns_key(cluster), s.ns_key(b"key"));
            assert_eq!(s.strip_sub_prefix(b"key", 7, &raw), Ok(&b"field"[..]));
            assert!(s.strip_sub_prefix(b"key", 8, &raw).is_err());
            assert!(s.strip_sub_prefix(b"ke", 7, &raw).is_err());
        }
    }

    #[test]
    fn sub_bounds_cover_only_one_version() {
        let s = std_scheme();
        let (lo, hi) = s.sub_bounds(b"k", 5);
        assert_eq!(lo, s.sub_prefix(b"k", 5));
        assert_eq!(hi, s.sub_prefix(b"k", 6));
        let inside = s.sub_key(b"k", 5, &[0xFF; 40]);
        assert!(lo <= inside && inside < hi);
        let (lo, hi) = s.sub_bounds(b"k", u64::MAX);
        let inside = s.sub_key(b"k", u64::MAX, &[0xFF; 40]);
        assert!(lo <= inside && inside < hi);
        assert_eq!(hi, prefix_successor(&s.sub_prefix(b"k", u64::MAX)).unwrap());
        // The next user key ("k\0") is not inside.
        assert!(s.sub_key(b"k\0", 0, b"") >= hi || s.sub_key(b"k\0", 0, b"") < lo);
    }
}
