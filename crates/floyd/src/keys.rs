//! Keys: the escaped user key (`EncodeUserKey`/`DecodeUserKey`,
//! `include/storage/storage_define.h`), metadata keys (`BaseKey`,
//! `src/base_key_format.h`), element keys (`BaseDataKey`, `ListsDataKey`,
//! `ZSetsScoreKey`) and the range bounds of each family's order.
//!
//! ```text
//! metadata key   Z(8) ‖ enc(key) ‖ Z(16)
//! element key    Z(8) ‖ enc(key) ‖ version u64 ‖ sub ‖ Z(16)
//! enc(key)       key with each 00 as 00 01, then 00 00
//! ```

use redcodec_codec::{prefix_successor, DecodeError, SubKind};

/// `kPrefixReserveLength`: the reserved bytes before the user key.
pub const PREFIX_RESERVE_LEN: usize = 8;
/// `kSuffixReserveLength`: the reserved bytes at the end of every key.
pub const SUFFIX_RESERVE_LEN: usize = 16;
/// `kVersionLength`.
pub const VERSION_LEN: usize = 8;

/// Appends `enc(key)`: every `00` as `00 01`, then the `00 00` terminator.
pub fn encode_user_key(key: &[u8], out: &mut Vec<u8>) {
    for &b in key {
        out.push(b);
        if b == 0 {
            out.push(1);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// Reads an escaped user key from the front of `raw`: the user key and
/// the bytes after its terminator. `00` must be followed by `01` (an
/// escaped zero) or `00` (the end).
pub fn decode_user_key<'a>(
    record: &'static str,
    raw: &'a [u8],
) -> Result<(Vec<u8>, &'a [u8]), DecodeError> {
    let mut key = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b != 0 {
            key.push(b);
            i += 1;
            continue;
        }
        match raw.get(i + 1) {
            Some(0) => return Ok((key, &raw[i + 2..])),
            Some(1) => {
                key.push(0);
                i += 2;
            }
            Some(other) => {
                return Err(DecodeError::Invalid {
                    record,
                    reason: format!("byte 00 followed by {other:02x} in the user key"),
                })
            }
            None => break,
        }
    }
    Err(DecodeError::Invalid {
        record,
        reason: "user key without its 00 00 terminator".into(),
    })
}

/// Where the user key's `00 00` terminator ends in `raw`, searching after
/// the reserved prefix as `SeekUserkeyDelim` does (the first two
/// consecutive `00` bytes); `None` when there is none.
pub fn delimiter_end(raw: &[u8]) -> Option<usize> {
    let body = raw.get(PREFIX_RESERVE_LEN..)?;
    body.windows(2)
        .position(|w| w == [0, 0])
        .map(|p| PREFIX_RESERVE_LEN + p + 2)
}

/// `Z(8) ‖ enc(key)`.
fn head(key: &[u8], extra: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(PREFIX_RESERVE_LEN + key.len() + 2 + extra);
    out.extend_from_slice(&[0; PREFIX_RESERVE_LEN]);
    encode_user_key(key, &mut out);
    out
}

/// The metadata key of `key` (`BaseKey::Encode`).
pub fn meta_key(key: &[u8]) -> Vec<u8> {
    let mut out = head(key, SUFFIX_RESERVE_LEN);
    out.extend_from_slice(&[0; SUFFIX_RESERVE_LEN]);
    out
}

/// The user key of a metadata key: `Z(8)`-sized prefix, the escaped key,
/// exactly the 16-byte suffix.
pub fn decode_meta_key(raw: &[u8]) -> Result<Vec<u8>, DecodeError> {
    const RECORD: &str = "floyd metadata key";
    let body = raw
        .get(PREFIX_RESERVE_LEN..)
        .ok_or(DecodeError::Truncated {
            record: RECORD,
            offset: 0,
            needed: PREFIX_RESERVE_LEN,
            available: raw.len(),
        })?;
    let (key, rest) = decode_user_key(RECORD, body)?;
    if rest.len() != SUFFIX_RESERVE_LEN {
        // Pika 4.0.1's `EncodeUserKey` copies the bytes after a key's last
        // 0x00 without moving past them, so the delimiter overwrites them:
        // the key is cut after that 0x00 and the record runs long.
        let cut = rest.len() > SUFFIX_RESERVE_LEN && key.last() == Some(&0);
        let hint = if cut {
            "; Pika 4.0.1 writes a key holding a 0x00 byte this way, losing the bytes after its last 0x00"
        } else {
            ""
        };
        return Err(DecodeError::Invalid {
            record: RECORD,
            reason: format!(
                "{} bytes after the user key, the reserved suffix is {SUFFIX_RESERVE_LEN}{hint}",
                rest.len()
            ),
        });
    }
    Ok(key)
}

/// The prefix every element key of one key version starts with:
/// `Z(8) ‖ enc(key) ‖ version`.
pub fn prefix(key: &[u8], version: u64) -> Vec<u8> {
    prefix_with_room(key, version, 8)
}

/// [`prefix`] with room for `room` more bytes and the reserved suffix: a
/// data key's own bytes are appended without the vector growing.
fn prefix_with_room(key: &[u8], version: u64, room: usize) -> Vec<u8> {
    let mut out = head(key, VERSION_LEN + room + SUFFIX_RESERVE_LEN);
    out.extend_from_slice(&version.to_le_bytes());
    out
}

/// A hash field, set member or zset member key:
/// `prefix ‖ data ‖ Z(16)` (`BaseDataKey::Encode`).
pub fn data_key(key: &[u8], version: u64, data: &[u8]) -> Vec<u8> {
    data_key_with(key, version, data.len(), |out| {
        out.extend_from_slice(data);
    })
}

/// [`data_key`] whose `room` bytes of data `put` appends, made in one
/// allocation.
pub fn data_key_with(
    key: &[u8],
    version: u64,
    room: usize,
    put: impl FnOnce(&mut Vec<u8>),
) -> Vec<u8> {
    let mut out = prefix_with_room(key, version, room);
    put(&mut out);
    out.extend_from_slice(&[0; SUFFIX_RESERVE_LEN]);
    out
}

/// A list item key: `prefix ‖ index ‖ Z(16)` (`ListsDataKey::Encode`).
pub fn list_key(key: &[u8], version: u64, index: u64) -> Vec<u8> {
    data_key(key, version, &index.to_le_bytes())
}

/// A score-index key: `prefix ‖ score bits ‖ member ‖ Z(16)`
/// (`ZSetsScoreKey::Encode`).
pub fn score_key(key: &[u8], version: u64, score: f64, member: &[u8]) -> Vec<u8> {
    let mut sub = Vec::with_capacity(8 + member.len());
    sub.extend_from_slice(&score.to_bits().to_le_bytes());
    sub.extend_from_slice(member);
    data_key(key, version, &sub)
}

/// The bytes between the prefix and the 16-byte suffix of an element key
/// of this key version, or an error when `raw` is not one.
pub fn sub_bytes<'a>(
    record: &'static str,
    prefix: &[u8],
    raw: &'a [u8],
) -> Result<&'a [u8], DecodeError> {
    let rest = raw
        .strip_prefix(prefix)
        .ok_or_else(|| DecodeError::Invalid {
            record,
            reason: "key does not belong to this key and version".into(),
        })?;
    rest.len()
        .checked_sub(SUFFIX_RESERVE_LEN)
        .map(|n| &rest[..n])
        .ok_or_else(|| DecodeError::Truncated {
            record,
            offset: raw.len(),
            needed: SUFFIX_RESERVE_LEN - rest.len(),
            available: 0,
        })
}

/// The bytewise successor of every key starting with `p`: drop trailing
/// `ff` bytes, add one to the last byte (`p` is never all `ff`: it starts
/// with the zero reserve).
pub fn successor(p: &[u8]) -> Vec<u8> {
    prefix_successor(p).unwrap_or_default()
}

/// The bounds of every element record of `kind` of `key` at `version`:
/// list items and score-index entries in their families' own order, the
/// other kinds bytewise.
pub fn sub_bounds(kind: SubKind, key: &[u8], version: u64) -> (Vec<u8>, Vec<u8>) {
    match kind {
        SubKind::ListItem => list_bounds(key, version),
        SubKind::ZSetScore => score_bounds(key, version),
        _ => bytewise_bounds(key, version),
    }
}

/// Bounds of one key version in a bytewise family.
pub fn bytewise_bounds(key: &[u8], version: u64) -> (Vec<u8>, Vec<u8>) {
    let p = prefix(key, version);
    let upper = successor(&p);
    (p, upper)
}

/// The key of the next version's range start under the two comparators:
/// `prefix(version + 1)`, or at `u64::MAX` the bare prefix of the next
/// user key (`key ‖ 00`), which sorts after every version of `key`.
fn next_version_head(key: &[u8], version: u64) -> Vec<u8> {
    match version.checked_add(1) {
        Some(next) => prefix(key, next),
        None => {
            let mut next_key = key.to_vec();
            next_key.push(0);
            head(&next_key, 0)
        }
    }
}

/// Bounds of one key version in `list_data_cf`: the prefix (which sorts
/// before every index of the version) and the next version's prefix.
pub fn list_bounds(key: &[u8], version: u64) -> (Vec<u8>, Vec<u8>) {
    (prefix(key, version), next_version_head(key, version))
}

/// Bounds of one key version in `zset_score_cf`: both carry score −inf
/// and no member (the comparator needs the version and the score).
pub fn score_bounds(key: &[u8], version: u64) -> (Vec<u8>, Vec<u8>) {
    let neg_inf = f64::NEG_INFINITY.to_bits().to_le_bytes();
    let mut lower = prefix(key, version);
    lower.extend_from_slice(&neg_inf);
    let mut upper = next_version_head(key, version);
    if version == u64::MAX {
        upper.extend_from_slice(&0u64.to_le_bytes());
    }
    upper.extend_from_slice(&neg_inf);
    (lower, upper)
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_testkit::unhex;

    #[test]
    fn pika_4_0_1_cuts_a_key_after_its_last_zero() {
        // The metadata key real Pika 4.0.1 (23d9bf6f, 2026-11-28) stored
        // for `SET "bin\x00\xff" …`: the 0xff is lost under the delimiter
        // and the record runs one byte long.
        let raw = unhex("0000000000000000 62696e 0001 0000 00000000000000000000000000000000 00");
        let err = decode_meta_key(&raw).unwrap_err().to_string();
        assert!(err.contains("17 bytes after the user key"), "{err}");
        assert!(err.contains("Pika 4.0.1"), "{err}");
        // The same key as Pika means it to be, and as redcodec writes it.
        let right = meta_key(b"bin\x00\xff");
        assert_eq!(decode_meta_key(&right).unwrap(), b"bin\x00\xff");
        // A plain long record gets no such hint.
        let long = unhex("0000000000000000 61 0000 00000000000000000000000000000000 00");
        let err = decode_meta_key(&long).unwrap_err().to_string();
        assert!(!err.contains("Pika 4.0.1"), "{err}");
    }

    #[test]
    fn escaping_as_pikas_test() {
        // tests/kv_format_test.cc:22-34.
        let key = b"\x00\x01abc\x00";
        let mut enc = Vec::new();
        encode_user_key(key, &mut enc);
        assert_eq!(enc, unhex("00 01 01 61 62 63 00 01 00 00"));
        let mk = meta_key(key);
        assert_eq!(mk.len(), 8 + 10 + 16);
        assert_eq!(decode_meta_key(&mk).unwrap(), key);
        // An inner zero followed by other bytes: the encoding Pika meant.
        let mut enc = Vec::new();
        encode_user_key(b"a\x00b", &mut enc);
        assert_eq!(enc, unhex("61 00 01 62 00 00"));
        assert_eq!(
            decode_user_key("t", &enc).unwrap(),
            (b"a\x00b".to_vec(), &[][..])
        );
    }

    #[test]
    fn decoding_is_strict() {
        assert!(decode_user_key("t", b"a\x00\x02").is_err());
        assert!(decode_user_key("t", b"abc").is_err());
        assert!(decode_user_key("t", b"a\x00").is_err());
        assert!(decode_meta_key(&[0; 7]).is_err());
        let mut mk = meta_key(b"k");
        mk.push(0);
        assert!(decode_meta_key(&mk).is_err());
    }

    #[test]
    fn escaping_keeps_bytewise_order() {
        let keys: [&[u8]; 7] = [
            b"",
            b"\x00",
            b"\x00\x00",
            b"\x00\x01",
            b"a",
            b"a\x00",
            b"ab",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(meta_key(a).cmp(&meta_key(b)), a.cmp(b), "{a:?} {b:?}");
                assert_eq!(prefix(a, 7).cmp(&prefix(b, 7)), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn delimiter_after_the_reserve() {
        assert_eq!(delimiter_end(&meta_key(b"k")), Some(11));
        assert_eq!(delimiter_end(&meta_key(b"\x00")), Some(12));
        assert_eq!(delimiter_end(&[0; 9]), None);
        assert_eq!(delimiter_end(&[0; 3]), None);
    }

    #[test]
    fn successor_bounds_the_prefix() {
        assert_eq!(successor(&[0, 0xFF, 0xFF]), vec![1]);
        let (lo, hi) = bytewise_bounds(b"h", u64::MAX);
        let inside = data_key(b"h", u64::MAX, &[0xFF; 40]);
        assert!(lo <= inside && inside < hi);
        let other = data_key(b"h\x00", 0, b"");
        assert!(!(lo <= other && other < hi));
    }
}
