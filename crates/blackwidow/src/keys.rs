//! Data keys: the keys of element records. Metadata keys are the raw user
//! key, with no prefix. Integers are **little-endian** (`EncodeFixed32/64`,
//! `src/coding.h`).
//!
//! ```text
//! prefix     = key_size u32 LE ‖ key ‖ version i32 LE
//! hash field = prefix ‖ field          (src/base_data_key_format.h)
//! set member = prefix ‖ member
//! zset member= prefix ‖ member
//! list item  = prefix ‖ index u64 LE   (src/lists_data_key_format.h)
//! zset score = prefix ‖ score f64 LE bits ‖ member (src/zsets_data_key_format.h)
//! ```
//!
//! The field or member runs to the end of the key, with no length.
//!
//! Range bounds (see `formats-spec/blackwidow.md` §2.3) are built here for
//! each of the three orders: bytewise, `ListsDataKeyComparator` and
//! `ZSetsScoreKeyComparator`. Because the version is little-endian, the
//! prefix of `version + 1` is *not* an upper bound in bytewise order (it is
//! smaller whenever the version's low byte is `0xFF`); bytewise bounds use
//! the successor of the whole prefix instead.

use byteorder::{ByteOrder, LittleEndian};
use redcodec_codec::{beyond_prefix, prefix_successor, DecodeError, Reader, SubKind};

/// Length of the key-size field.
pub const KEY_SIZE_LEN: usize = 4;
/// Length of the version field.
pub const VERSION_LEN: usize = 4;
/// Length of a list index or a score.
pub const WORD_LEN: usize = 8;

/// The common prefix of every data key of `user_key` at `version`.
///
/// Keys longer than `u32::MAX` bytes are refused by
/// [`crate::BlackwidowCodec`]'s `meta_record` before any data key is built;
/// the size field is truncated for them.
pub fn prefix(user_key: &[u8], version: i32) -> Vec<u8> {
    prefix_with_room(user_key, version, WORD_LEN)
}

/// [`prefix`] with room for `room` more bytes: a data key's own bytes
/// are appended without the vector growing.
fn prefix_with_room(user_key: &[u8], version: i32, room: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(KEY_SIZE_LEN + user_key.len() + VERSION_LEN + room);
    out.extend_from_slice(&(user_key.len() as u32).to_le_bytes());
    out.extend_from_slice(user_key);
    out.extend_from_slice(&version.to_le_bytes());
    out
}

/// A data key: the prefix followed by `sub`.
pub fn data_key(user_key: &[u8], version: i32, sub: &[u8]) -> Vec<u8> {
    data_key_with(user_key, version, sub.len(), |out| {
        out.extend_from_slice(sub);
    })
}

/// [`data_key`] whose `room` bytes after the prefix `put` appends, made
/// in one allocation.
pub fn data_key_with(
    user_key: &[u8],
    version: i32,
    room: usize,
    put: impl FnOnce(&mut Vec<u8>),
) -> Vec<u8> {
    let mut out = prefix_with_room(user_key, version, room);
    put(&mut out);
    out
}

/// A list item key.
pub fn list_key(user_key: &[u8], version: i32, index: u64) -> Vec<u8> {
    data_key(user_key, version, &index.to_le_bytes())
}

/// A score-index key. The score's raw IEEE-754 bits are written as they
/// are (no normalisation of `-0.0`).
pub fn score_key(user_key: &[u8], version: i32, score: f64, member: &[u8]) -> Vec<u8> {
    let mut out = prefix(user_key, version);
    out.extend_from_slice(&score.to_bits().to_le_bytes());
    out.extend_from_slice(member);
    out
}

/// A data key split at its prefix (`ParsedBaseDataKey`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataKey<'a> {
    /// The user key.
    pub user_key: &'a [u8],
    /// The version.
    pub version: i32,
    /// What follows the version (field, member, index, score ‖ member).
    pub rest: &'a [u8],
}

impl<'a> DataKey<'a> {
    /// Splits a data key; fails if it is too short for its key size.
    pub fn parse(raw: &'a [u8]) -> Result<DataKey<'a>, DecodeError> {
        let mut r = Reader::new("blackwidow data key", raw);
        let size = r.u32_le()?;
        let size = usize::try_from(size).map_err(|_| r.invalid("key size too large"))?;
        let user_key = r.take(size)?;
        let version = r.i32_le()?;
        Ok(DataKey {
            user_key,
            version,
            rest: r.rest(),
        })
    }
}

/// The bounds of every element record of `kind` of `user_key` at `version`:
/// list items and score-index entries in their families' own order, the
/// other kinds bytewise.
pub fn sub_bounds(kind: SubKind, user_key: &[u8], version: i32) -> (Vec<u8>, Vec<u8>) {
    match kind {
        SubKind::ListItem => list_bounds(user_key, version),
        SubKind::ZSetScore => score_bounds(user_key, version),
        _ => bytewise_bounds(user_key, version),
    }
}

/// `[lower, upper)` of the data keys of `user_key` at `version` in a
/// **bytewise** family: the prefix, and the prefix's successor.
///
/// The successor is exact: two different prefixes never start with one
/// another (the key size fixes the length), so every other data key
/// greater than the prefix is at least its successor.
pub fn bytewise_bounds(user_key: &[u8], version: i32) -> (Vec<u8>, Vec<u8>) {
    let lower = prefix(user_key, version);
    let upper = prefix_successor(&lower).unwrap_or_else(|| beyond_prefix(&lower));
    (lower, upper)
}

/// `[lower, upper)` of the list items of `user_key` at `version` under
/// `ListsDataKeyComparator`.
///
/// Both bounds are keys that end after the version, which the comparator
/// sorts before every index of that version: the lower bound is the prefix
/// at `version`, the upper one the prefix at `version + 1` (versions compare
/// as signed numbers). At `i32::MAX` the upper bound is the next user key,
/// `key ‖ 0x00`, with nothing after it.
pub fn list_bounds(user_key: &[u8], version: i32) -> (Vec<u8>, Vec<u8>) {
    let lower = prefix(user_key, version);
    let upper = match version.checked_add(1) {
        Some(next) => prefix(user_key, next),
        None => match u32::try_from(user_key.len() + 1) {
            Ok(size) => {
                let mut out = size.to_le_bytes().to_vec();
                out.extend_from_slice(user_key);
                out.push(0);
                out
            }
            // A 4 GiB key: the top sentinel, after every well-formed key.
            Err(_) => crate::TOP_KEY.to_vec(),
        },
    };
    (lower, upper)
}

/// `[lower, upper)` of the score-index keys of `user_key` at `version`
/// under `ZSetsScoreKeyComparator`.
///
/// That comparator orders first by the prefix bytes, bytewise, and insists
/// that every key (seek keys too) holds a score. The lower bound is the
/// prefix with score `-inf` and no member, the smallest key of the prefix.
/// The upper bound is the same for the next prefix in bytewise order among
/// prefixes of the same length: the prefix read as a big-endian number
/// plus one. Only when the key and version bytes are all `0xFF` (version
/// −1, never generated) does the carry reach the key-size field; the next
/// prefix then has the new size and a key of zero bytes.
pub fn score_bounds(user_key: &[u8], version: i32) -> (Vec<u8>, Vec<u8>) {
    let p = prefix(user_key, version);
    let neg_inf = f64::NEG_INFINITY.to_bits().to_le_bytes();
    let mut lower = p.clone();
    lower.extend_from_slice(&neg_inf);
    let upper = match next_score_prefix(&p) {
        Some(mut next) => {
            next.extend_from_slice(&neg_inf);
            next
        }
        None => beyond_prefix(&lower),
    };
    (lower, upper)
}

/// The smallest well-formed prefix greater than `p` (see [`score_bounds`]).
fn next_score_prefix(p: &[u8]) -> Option<Vec<u8>> {
    let j = p.iter().rposition(|&b| b != 0xFF)?;
    if j >= KEY_SIZE_LEN {
        let mut out = p.to_vec();
        out[j] += 1;
        out[j + 1..].fill(0);
        return Some(out);
    }
    let mut size = [0u8; KEY_SIZE_LEN];
    size.copy_from_slice(p.get(..KEY_SIZE_LEN)?);
    size[j] += 1;
    size[j + 1..].fill(0);
    let len = usize::try_from(LittleEndian::read_u32(&size)).ok()?;
    let mut out = size.to_vec();
    out.resize(KEY_SIZE_LEN + len + VERSION_LEN, 0);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::{lists_data_key_compare, zsets_score_key_compare};
    use std::cmp::Ordering::{Greater, Less};

    #[test]
    fn encodings() {
        assert_eq!(
            prefix(b"h", 0x6553_F100),
            [1, 0, 0, 0, b'h', 0x00, 0xF1, 0x53, 0x65]
        );
        assert_eq!(
            data_key(b"h", 1, b"f"),
            [1, 0, 0, 0, b'h', 1, 0, 0, 0, b'f']
        );
        assert_eq!(
            list_key(b"", -1, 1 << 63),
            [0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0x80]
        );
        assert_eq!(
            score_key(b"z", 2, 1.5, b"m"),
            [1, 0, 0, 0, b'z', 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, b'm']
        );
    }

    #[test]
    fn parse_round_trip() {
        let raw = data_key(b"key\0", -7, b"rest");
        assert_eq!(
            DataKey::parse(&raw).unwrap(),
            DataKey {
                user_key: b"key\0",
                version: -7,
                rest: b"rest"
            }
        );
        for end in 0..raw.len() - 4 {
            assert!(DataKey::parse(&raw[..end]).is_err(), "{end}");
        }
    }

    /// The caveat of the reference: `prefix(version + 1)` is below the
    /// prefix when the version's low byte is 0xFF.
    #[test]
    fn bytewise_bounds_survive_low_byte_ff() {
        for version in [
            0x6553_F1FF,
            0x0000_00FF,
            -1,
            i32::MAX,
            i32::MIN,
            0,
            0x00FF_FFFF,
        ] {
            let (lo, hi) = bytewise_bounds(b"h", version);
            assert!(lo < hi);
            for sub in [&b""[..], b"\x00", b"f", &[0xFF; 40]] {
                let k = data_key(b"h", version, sub);
                assert!(lo <= k && k < hi, "{version:#x} {sub:?}");
            }
            for other in [version.wrapping_add(1), version.wrapping_sub(1)] {
                let k = data_key(b"h", other, b"f");
                assert!(k < lo || k >= hi, "{version:#x} vs {other:#x}");
            }
            for other_key in [&b"g"[..], b"i", b"h\0", b"", b"hh"] {
                for sub in [&b""[..], &[0xFF; 8]] {
                    let k = data_key(other_key, version, sub);
                    assert!(k < lo || k >= hi);
                }
            }
        }
        let naive = prefix(b"h", 0x6553_F200);
        assert!(naive < prefix(b"h", 0x6553_F1FF), "the pitfall is real");
    }

    #[test]
    fn list_bounds_under_the_comparator() {
        let inside = |lo: &[u8], hi: &[u8], k: &[u8]| {
            lists_data_key_compare(lo, k) != Greater && lists_data_key_compare(k, hi) == Less
        };
        for version in [0x6553_F1FF, -1, 0, i32::MIN, i32::MAX] {
            let (lo, hi) = list_bounds(b"l", version);
            for index in [0, 1, 1 << 63, u64::MAX] {
                assert!(inside(&lo, &hi, &list_key(b"l", version, index)));
            }
            for other in [version.wrapping_add(1), version.wrapping_sub(1)] {
                for index in [0, u64::MAX] {
                    assert!(!inside(&lo, &hi, &list_key(b"l", other, index)));
                }
            }
            for other in [&b"k"[..], b"m", b"l\0", b"", b"ll"] {
                for v in [i32::MIN, version, i32::MAX] {
                    assert!(!inside(&lo, &hi, &list_key(other, v, 0)));
                    assert!(!inside(&lo, &hi, &list_key(other, v, u64::MAX)));
                }
            }
        }
        let (_, hi) = list_bounds(b"l", i32::MAX);
        assert_eq!(hi, [2, 0, 0, 0, b'l', 0]);
    }

    #[test]
    fn score_bounds_under_the_comparator() {
        let inside = |lo: &[u8], hi: &[u8], k: &[u8]| {
            zsets_score_key_compare(lo, k) != Greater && zsets_score_key_compare(k, hi) == Less
        };
        for version in [0x6553_F1FF, 0x6553_F100, -1, 0, i32::MIN, i32::MAX] {
            for key in [&b"z"[..], b"", &[0xFF; 3]] {
                let (lo, hi) = score_bounds(key, version);
                for score in [
                    f64::NEG_INFINITY,
                    -1.5,
                    -0.0,
                    0.0,
                    1.5,
                    f64::MAX,
                    f64::INFINITY,
                ] {
                    for member in [&b""[..], b"m", &[0xFF; 20]] {
                        let k = score_key(key, version, score, member);
                        assert!(inside(&lo, &hi, &k), "{key:?} {version:#x} {score}");
                    }
                }
                for other in [version.wrapping_add(1), version.wrapping_sub(1)] {
                    for score in [f64::NEG_INFINITY, f64::INFINITY] {
                        let k = score_key(key, other, score, b"m");
                        assert!(!inside(&lo, &hi, &k));
                    }
                }
                for other_key in [&b"y"[..], b"z\0", b"\xff\xff\xff\xff", b"zz"] {
                    if other_key == key {
                        continue;
                    }
                    for score in [f64::NEG_INFINITY, f64::INFINITY] {
                        let k = score_key(other_key, version, score, b"");
                        assert!(!inside(&lo, &hi, &k));
                    }
                }
            }
        }
    }

    #[test]
    fn score_prefix_carry_into_the_size_field() {
        // Key of three 0xFF bytes, version -1: the next prefix has size
        // 0x01000003 (LE 03 00 00 01) and a zero key.
        let p = prefix(&[0xFF; 3], -1);
        let next = next_score_prefix(&p).unwrap();
        assert_eq!(next[..4], [3, 0, 0, 1]);
        assert_eq!(next.len(), 4 + 0x0100_0003 + 4);
        assert!(next[4..].iter().all(|&b| b == 0));
        assert!(p < next);
        // Size 0x00FFFFFF-style carries shrink the size instead.
        let p = [0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF];
        assert_eq!(
            next_score_prefix(&p).unwrap()[..4],
            [0xFF, 0xFF, 0x01, 0x00]
        );
        assert_eq!(next_score_prefix(&[0xFF; 8]), None);
    }
}
