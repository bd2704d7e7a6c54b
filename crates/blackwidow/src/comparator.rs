//! Blackwidow's two custom comparators (`src/custom_comparator.h`), as total
//! orders over any bytes.
//!
//! On the keys blackwidow writes (and the seek keys it builds) both
//! functions return what blackwidow's `Compare` returns. Blackwidow asserts
//! or reads out of bounds on other bytes; here every key that does not
//! parse (see each function) is **malformed**, and:
//!
//! - every malformed key sorts **after** every well-formed key;
//! - malformed keys compare **bytewise** among themselves.
//!
//! This is a total order (a lexicographic order on `(malformed?, …)`), and
//! it never panics. A consequence: the empty key is not the smallest key
//! of these families; [`crate::BlackwidowCodec`]'s flush ranges start at
//! the smallest well-formed key instead, and end at [`crate::TOP_KEY`],
//! which is malformed and so sorts after every well-formed key.

use std::cmp::Ordering;

use redcodec_codec::{malformed_last, ComparatorSpec};

use byteorder::{ByteOrder, LittleEndian};

use crate::keys::{KEY_SIZE_LEN, VERSION_LEN, WORD_LEN};

/// The name RocksDB records for the `lists/data_cf` comparator.
pub const LISTS_DATA_KEY_COMPARATOR: &str = "blackwidow.ListsDataKeyComparator";
/// The name RocksDB records for the `zsets/score_cf` comparator.
pub const ZSETS_SCORE_KEY_COMPARATOR: &str = "blackwidow.ZSetsScoreKeyComparator";

/// The user key of `raw` (`key_size u32 LE ‖ key`) and what follows it, if
/// the key size fits.
fn split_user_key(raw: &[u8]) -> Option<(&[u8], &[u8])> {
    let size = LittleEndian::read_u32(raw.get(..KEY_SIZE_LEN)?);
    let rest = &raw[KEY_SIZE_LEN..];
    let size = usize::try_from(size).ok()?;
    (size <= rest.len()).then(|| rest.split_at(size))
}

/// What follows the user key in a list data key: nothing, a version, or a
/// version and an index. `Option`'s order (`None` first) is blackwidow's
/// end-of-key rule.
type ListTail = Option<(i32, Option<u64>)>;

/// A well-formed list data key: `key_size ‖ key`, optionally followed by
/// `version i32 LE`, optionally followed by `index u64 LE`, and nothing else.
fn parse_list_key(raw: &[u8]) -> Option<(&[u8], ListTail)> {
    let (user_key, tail) = split_user_key(raw)?;
    let tail = match tail.len() {
        0 => None,
        VERSION_LEN => Some((LittleEndian::read_i32(tail), None)),
        12 => Some((
            LittleEndian::read_i32(&tail[..VERSION_LEN]),
            Some(LittleEndian::read_u64(&tail[VERSION_LEN..])),
        )),
        _ => return None,
    };
    Some((user_key, tail))
}

/// `blackwidow.ListsDataKeyComparator`.
///
/// Well-formed keys compare:
/// 1. by user key bytes (without the size field), shorter first on a tie
///    (`Slice::compare`);
/// 2. a key that ends there sorts first;
/// 3. by version as a **signed** 32-bit number;
/// 4. a key that ends there sorts first;
/// 5. by index as an unsigned 64-bit number.
///
/// Keys with bytes after the index, a truncated version or index, or a
/// key size beyond the key's end are malformed (module docs). Blackwidow
/// itself ignores bytes after the index (it returns 0); a key of that
/// shape is never written.
pub fn lists_data_key_compare(a: &[u8], b: &[u8]) -> Ordering {
    malformed_last(a, b, parse_list_key, |(ka, ta), (kb, tb)| {
        ka.cmp(kb).then(ta.cmp(&tb))
    })
}

/// [`lists_data_key_compare`] under its recorded name, as `lists/data_cf` declares it.
pub const LISTS_DATA_SPEC: ComparatorSpec = ComparatorSpec {
    name: LISTS_DATA_KEY_COMPARATOR,
    compare: lists_data_key_compare,
};

/// A well-formed score key: `key_size ‖ key ‖ version` (the prefix), an
/// 8-byte score, then any member.
fn parse_score_key(raw: &[u8]) -> Option<(&[u8], f64, &[u8])> {
    let (user_key, _) = split_user_key(raw)?;
    let prefix_len = KEY_SIZE_LEN + user_key.len() + VERSION_LEN;
    let score = raw.get(prefix_len..prefix_len + WORD_LEN)?;
    Some((
        &raw[..prefix_len],
        LittleEndian::read_f64(score),
        &raw[prefix_len + WORD_LEN..],
    ))
}

/// Scores as blackwidow compares them (`a != b` then `a < b`), made total:
/// numbers by value, so `-0.0 == +0.0`; NaN (which blackwidow never writes
/// and compares inconsistently) after every number, NaNs by their bits.
pub fn score_compare(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => {
            if a < b {
                Ordering::Less
            } else if a > b {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        }
        (false, true) => Ordering::Less,
        (true, false) => Ordering::Greater,
        (true, true) => a.to_bits().cmp(&b.to_bits()),
    }
}

/// `blackwidow.ZSetsScoreKeyComparator`.
///
/// Well-formed keys (at least `4 + key_size + 4 + 8` bytes) compare:
/// 1. by the prefix `key_size ‖ key ‖ version` **bytewise** (the size and
///    version are little-endian, so this is not numeric order across keys
///    or versions);
/// 2. by score as a double ([`score_compare`]: `-0.0` equals `+0.0`);
/// 3. a key that ends after the score sorts first; otherwise by member
///    bytes, shorter first on a tie.
///
/// Keys whose score differs only by the sign of zero, with the same member,
/// compare **equal**, as in blackwidow: RocksDB treats them as one key.
/// Shorter keys are malformed (module docs); blackwidow asserts on them.
pub fn zsets_score_key_compare(a: &[u8], b: &[u8]) -> Ordering {
    malformed_last(a, b, parse_score_key, |(pa, sa, ma), (pb, sb, mb)| {
        pa.cmp(pb)
            .then_with(|| score_compare(sa, sb))
            .then_with(|| ma.cmp(mb))
    })
}

/// [`zsets_score_key_compare`] under its recorded name, as `zsets/score_cf` declares it.
pub const ZSETS_SCORE_SPEC: ComparatorSpec = ComparatorSpec {
    name: ZSETS_SCORE_KEY_COMPARATOR,
    compare: zsets_score_key_compare,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{list_key, prefix, score_key};
    use std::cmp::Ordering::{Equal, Greater, Less};

    fn sorted_by(mut keys: Vec<Vec<u8>>, cmp: fn(&[u8], &[u8]) -> Ordering) -> Vec<Vec<u8>> {
        keys.sort_by(|a, b| cmp(a, b));
        keys
    }

    #[test]
    fn names() {
        assert_eq!(
            LISTS_DATA_KEY_COMPARATOR,
            "blackwidow.ListsDataKeyComparator"
        );
        assert_eq!(
            ZSETS_SCORE_KEY_COMPARATOR,
            "blackwidow.ZSetsScoreKeyComparator"
        );
    }

    #[test]
    fn list_indexes_compare_as_u64() {
        // Bytewise, LE index 256 (00 01 ..) would sort before 1 (01 00 ..).
        let order = [0u64, 1, 255, 256, 1 << 32, (1 << 63) - 1, 1 << 63, u64::MAX];
        let keys: Vec<_> = order.iter().map(|&i| list_key(b"l", 5, i)).collect();
        let mut shuffled = keys.clone();
        shuffled.reverse();
        shuffled.swap(1, 5);
        assert_eq!(sorted_by(shuffled, lists_data_key_compare), keys);
        assert!(
            list_key(b"l", 5, 256) < list_key(b"l", 5, 1),
            "bytewise differs"
        );
    }

    #[test]
    fn list_versions_compare_as_signed_i32() {
        let order = [i32::MIN, -2, -1, 0, 1, 255, 256, 0x6553_F100, i32::MAX];
        let keys: Vec<_> = order.iter().map(|&v| list_key(b"l", v, 0)).collect();
        let mut rev = keys.clone();
        rev.reverse();
        assert_eq!(sorted_by(rev, lists_data_key_compare), keys);
        // The version decides before the index.
        assert_eq!(
            lists_data_key_compare(&list_key(b"l", -1, u64::MAX), &list_key(b"l", 0, 0)),
            Less
        );
    }

    #[test]
    fn list_user_keys_compare_without_the_size() {
        // "b" < "aa" by size bytes, but "aa" < "b" by key bytes.
        assert_eq!(
            lists_data_key_compare(&list_key(b"aa", 1, 0), &list_key(b"b", 1, 0)),
            Less
        );
        assert_eq!(
            lists_data_key_compare(
                &list_key(b"a", i32::MAX, u64::MAX),
                &list_key(b"a\0", i32::MIN, 0)
            ),
            Less
        );
        assert_eq!(
            lists_data_key_compare(&list_key(b"", 0, 0), &list_key(b"\0", 0, 0)),
            Less
        );
    }

    #[test]
    fn list_end_of_key_rules_and_seek_keys() {
        let key_only = [1, 0, 0, 0, b'l'];
        let with_version = prefix(b"l", 7);
        let item = list_key(b"l", 7, 0);
        assert_eq!(lists_data_key_compare(&key_only, &with_version), Less);
        assert_eq!(lists_data_key_compare(&with_version, &key_only), Greater);
        assert_eq!(lists_data_key_compare(&with_version, &item), Less);
        assert_eq!(
            lists_data_key_compare(&key_only, &list_key(b"l", i32::MIN, 0)),
            Less
        );
        assert_eq!(
            lists_data_key_compare(&with_version, &with_version.clone()),
            Equal
        );
        // A version-only key sorts after every index of a lower version.
        assert_eq!(
            lists_data_key_compare(&list_key(b"l", 6, u64::MAX), &with_version),
            Less
        );
    }

    #[test]
    fn scores_compare_as_doubles() {
        let order = [
            f64::NEG_INFINITY,
            f64::MIN,
            -1.5,
            -1.0,
            -5e-324,
            0.0,
            5e-324,
            1.0,
            1.5,
            2.0,
            f64::MAX,
            f64::INFINITY,
        ];
        let keys: Vec<_> = order.iter().map(|&s| score_key(b"z", 9, s, b"m")).collect();
        let mut rev = keys.clone();
        rev.reverse();
        assert_eq!(sorted_by(rev, zsets_score_key_compare), keys);
        // Bytewise, -1.5 (.. f8 bf) sorts after 1.5 (.. f8 3f).
        assert!(score_key(b"z", 9, -1.5, b"") > score_key(b"z", 9, 1.5, b""));
        assert_eq!(
            zsets_score_key_compare(
                &score_key(b"z", 9, -1.5, b""),
                &score_key(b"z", 9, 1.5, b"")
            ),
            Less
        );
    }

    #[test]
    fn zero_signs_are_the_same_score() {
        let neg = score_key(b"z", 9, -0.0, b"m");
        let pos = score_key(b"z", 9, 0.0, b"m");
        assert_ne!(neg, pos);
        assert_eq!(zsets_score_key_compare(&neg, &pos), Equal);
        assert_eq!(
            zsets_score_key_compare(&score_key(b"z", 9, -0.0, b"a"), &pos),
            Less
        );
    }

    #[test]
    fn nan_scores_are_totally_ordered() {
        let nan1 = f64::from_bits(0x7FF8_0000_0000_0001);
        assert_eq!(score_compare(f64::NAN, f64::INFINITY), Greater);
        assert_eq!(score_compare(f64::INFINITY, f64::NAN), Less);
        assert_eq!(score_compare(f64::NAN, f64::NAN), Equal);
        assert_eq!(score_compare(f64::NAN, nan1), Less);
        assert_eq!(score_compare(-f64::NAN, f64::NAN), Greater);
    }

    #[test]
    fn score_prefix_is_bytewise_then_member() {
        // Same score: no member first, then members bytewise, shorter first.
        let keys: Vec<_> = [&b""[..], b"\0", b"a", b"ab", b"b"]
            .iter()
            .map(|m| score_key(b"z", 1, 2.0, m))
            .collect();
        let mut rev = keys.clone();
        rev.reverse();
        assert_eq!(sorted_by(rev, zsets_score_key_compare), keys);
        // A seek key (score, no member) sorts before every member of that
        // score and after every member of lower scores.
        let seek = score_key(b"z", 1, 2.0, b"");
        for (a, b) in [
            // Versions compare by their LE bytes: 256 (00 01 00 00) < 1 (01 00 00 00).
            (
                score_key(b"z", 256, 5.0, b""),
                score_key(b"z", 1, -5.0, b""),
            ),
            // Key sizes too: "b" (size 1) < "aa" (size 2).
            (score_key(b"b", 1, 0.0, b""), score_key(b"aa", 1, 0.0, b"")),
            (seek.clone(), score_key(b"z", 1, 2.0, b"\0")),
            (score_key(b"z", 1, 1.999, &[0xFF; 9]), seek),
        ] {
            assert_eq!(zsets_score_key_compare(&a, &b), Less, "{a:?} {b:?}");
        }
    }

    #[test]
    fn malformed_keys_sort_last_and_bytewise() {
        let good_list = list_key(b"\xff\xff", i32::MAX, u64::MAX);
        for bad in [
            &b""[..],
            b"\x00",
            b"\x05\x00\x00\x00ab",
            &list_key(b"l", 1, 2)[..15],
            &[list_key(b"l", 1, 2), vec![0]].concat(),
            &crate::TOP_KEY,
        ] {
            assert_eq!(lists_data_key_compare(&good_list, bad), Less, "{bad:?}");
            assert_eq!(lists_data_key_compare(bad, &good_list), Greater);
        }
        assert_eq!(lists_data_key_compare(b"\x00", b"\x01"), Less);
        assert_eq!(lists_data_key_compare(b"", b""), Equal);

        let good_score = score_key(&[0xFF; 4], -1, f64::NAN, &[0xFF; 4]);
        for bad in [
            &b""[..],
            &prefix(b"z", 1)[..],
            &score_key(b"z", 1, 1.0, b"")[..16],
            &crate::TOP_KEY,
        ] {
            assert_eq!(zsets_score_key_compare(&good_score, bad), Less);
            assert_eq!(zsets_score_key_compare(bad, &good_score), Greater);
        }
        assert_eq!(zsets_score_key_compare(b"a", b"b"), Less);
    }

    /// Antisymmetry, transitivity and reflexivity over a mix of
    /// well-formed, seek and malformed keys.
    #[test]
    fn total_orders() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let pick = |n: u64, xs: &[&[u8]]| xs[(n % xs.len() as u64) as usize].to_vec();
        let keys_src: [&[u8]; 5] = [b"", b"a", b"ab", b"\xff", b"b"];
        let mut lists = Vec::new();
        let mut scores = Vec::new();
        for _ in 0..60 {
            let r = next();
            let key = pick(r, &keys_src);
            let version = [i32::MIN, -1, 0, 1, 255, 256][(r >> 8) as usize % 6];
            let index = [0u64, 1, 256, u64::MAX][(r >> 16) as usize % 4];
            let score = [f64::NEG_INFINITY, -1.5, -0.0, 0.0, 1.5, f64::NAN][(r >> 24) as usize % 6];
            let member = pick(r >> 32, &keys_src);
            let full = list_key(&key, version, index);
            let cut = (r >> 40) as usize % (full.len() + 2);
            lists.push(full[..cut.min(full.len())].to_vec());
            lists.push(full);
            let full = score_key(&key, version, score, &member);
            let cut = (r >> 48) as usize % (full.len() + 2);
            scores.push(full[..cut.min(full.len())].to_vec());
            scores.push(full);
        }
        for (keys, cmp) in [
            (
                lists,
                lists_data_key_compare as fn(&[u8], &[u8]) -> Ordering,
            ),
            (scores, zsets_score_key_compare),
        ] {
            for a in &keys {
                assert_eq!(cmp(a, a), Equal);
                for b in &keys {
                    assert_eq!(cmp(a, b), cmp(b, a).reverse());
                    for c in keys.iter().step_by(4) {
                        let (ab, bc, ac) = (cmp(a, b), cmp(b, c), cmp(a, c));
                        if ab != Greater && bc != Greater {
                            assert_ne!(ac, Greater, "{a:?} {b:?} {c:?}");
                        }
                        if ab == Equal && bc == Equal {
                            assert_eq!(ac, Equal);
                        }
                    }
                }
            }
        }
    }
}
