//! The two custom comparators (`src/custom_comparator.h`).
//!
//! On the keys Pika writes, and the seek keys it builds, both return what
//! Pika's `Compare` returns. Pika asserts or reads out of bounds on other
//! bytes; here a key that does not parse is **malformed**, every malformed
//! key sorts after every well-formed one, and malformed keys compare
//! bytewise among themselves. The order is total and never panics.

use std::cmp::Ordering;

use redcodec_codec::{malformed_last, ComparatorSpec};

use crate::keys::{delimiter_end, PREFIX_RESERVE_LEN, VERSION_LEN};

/// The name `ListsDataKeyComparatorImpl::Name` gives (kept "floyd" in
/// Pika 4 for compatibility).
pub const LISTS_DATA_KEY_COMPARATOR: &str = "floyd.ListsDataKeyComparator";
/// The name `ZSetsScoreKeyComparatorImpl::Name` gives.
pub const ZSETS_SCORE_KEY_COMPARATOR: &str = "floyd.ZSetsScoreKeyComparator";

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// A list data key split as the comparator reads it.
struct ListParts<'a> {
    /// Reserve and escaped user key, up to and including `00 00`.
    head: &'a [u8],
    version: Option<u64>,
    index: Option<u64>,
    rest: &'a [u8],
}

fn list_parts(k: &[u8]) -> Option<ListParts<'_>> {
    let end = delimiter_end(k)?;
    let after = k.len() - end;
    let (version, index, rest) = match after {
        0 => (None, None, &k[end..]),
        VERSION_LEN => (Some(u64_at(k, end)), None, &k[end + 8..]),
        n if n >= 2 * VERSION_LEN => (
            Some(u64_at(k, end)),
            Some(u64_at(k, end + 8)),
            &k[end + 16..],
        ),
        _ => return None,
    };
    Some(ListParts {
        head: &k[..end],
        version,
        index,
        rest,
    })
}

/// `floyd.ListsDataKeyComparator`: reserve and user key bytewise, then a
/// key ending there first, versions as u64, a key ending after the
/// version first, indexes as u64 (Pika stops there; the rest, always
/// `Z(16)` in Pika's keys, breaks ties bytewise).
pub fn lists_data_key_compare(a: &[u8], b: &[u8]) -> Ordering {
    malformed_last(a, b, list_parts, |x, y| {
        x.head
            .cmp(y.head)
            .then(x.version.cmp(&y.version))
            .then(x.index.cmp(&y.index))
            .then(x.rest.cmp(y.rest))
    })
}

/// [`lists_data_key_compare`] under its recorded name, as `list_data_cf` declares it.
pub const LISTS_DATA_SPEC: ComparatorSpec = ComparatorSpec {
    name: LISTS_DATA_KEY_COMPARATOR,
    compare: lists_data_key_compare,
};

/// A score key split as the comparator reads it.
struct ScoreParts<'a> {
    reserve: &'a [u8],
    user: &'a [u8],
    version: u64,
    score: f64,
    rest: &'a [u8],
}

fn score_parts(k: &[u8]) -> Option<ScoreParts<'_>> {
    let end = delimiter_end(k)?;
    if k.len() - end < 2 * VERSION_LEN {
        return None;
    }
    Some(ScoreParts {
        reserve: &k[..PREFIX_RESERVE_LEN],
        user: &k[PREFIX_RESERVE_LEN..end],
        version: u64_at(k, end),
        score: f64::from_bits(u64_at(k, end + 8)),
        rest: &k[end + 16..],
    })
}

/// Doubles as Pika compares them (`-0.0 == +0.0`), with NaN after every
/// number and NaNs by their bits (Pika never stores NaN).
fn compare_scores(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        (false, true) => Ordering::Less,
        (true, false) => Ordering::Greater,
        (true, true) => a.to_bits().cmp(&b.to_bits()),
    }
}

/// `floyd.ZSetsScoreKeyComparator`: the escaped user key (not the
/// reserve) bytewise, versions as u64, scores as doubles, then member and
/// suffix bytewise; the reserve, which Pika never reads, breaks ties.
pub fn zsets_score_key_compare(a: &[u8], b: &[u8]) -> Ordering {
    malformed_last(a, b, score_parts, |x, y| {
        x.user
            .cmp(y.user)
            .then(x.version.cmp(&y.version))
            .then(compare_scores(x.score, y.score))
            .then(x.rest.cmp(y.rest))
            .then(x.reserve.cmp(y.reserve))
    })
}

/// [`zsets_score_key_compare`] under its recorded name, as `zset_score_cf` declares it.
pub const ZSETS_SCORE_SPEC: ComparatorSpec = ComparatorSpec {
    name: ZSETS_SCORE_KEY_COMPARATOR,
    compare: zsets_score_key_compare,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{list_key, prefix, score_key};
    use Ordering::{Equal, Greater, Less};

    #[test]
    fn list_versions_and_indexes_are_numbers() {
        let k = |v, i| list_key(b"l", v, i);
        assert_eq!(lists_data_key_compare(&k(255, 0), &k(256, 0)), Less);
        assert_eq!(lists_data_key_compare(&k(1, 255), &k(1, 256)), Less);
        assert_eq!(lists_data_key_compare(&k(1, u64::MAX), &k(2, 0)), Less);
        assert_eq!(lists_data_key_compare(&prefix(b"l", 1), &k(1, 0)), Less);
        assert_eq!(lists_data_key_compare(&k(1, 0), &prefix(b"l", 2)), Less);
        // Other user keys by their escaped bytes.
        assert_eq!(
            lists_data_key_compare(&k(9, 9), &list_key(b"l\x00", 0, 0)),
            Less
        );
        assert_eq!(lists_data_key_compare(&k(9, 9), &k(9, 9)), Equal);
        // Malformed keys last.
        assert_eq!(lists_data_key_compare(&k(9, 9), b""), Less);
        assert_eq!(lists_data_key_compare(&[0xFF; 3], &k(0, 0)), Greater);
    }

    #[test]
    fn scores_as_doubles_members_bytewise() {
        let k = |s: f64, m: &[u8]| score_key(b"z", 7, s, m);
        let mut other_reserve = k(1.0, b"m");
        other_reserve[0] = 1;
        for (a, b, order) in [
            (k(-1.0, b"b"), k(0.5, b"a"), Less),
            (k(1.5, b"a"), k(1.5, b"b"), Less),
            (k(1.5, b"a"), k(1.5, b"a\x00"), Less),
            (k(-0.0, b"m"), k(0.0, b"m"), Equal),
            (k(f64::NAN, b""), k(f64::INFINITY, b""), Greater),
            (k(2.0, b""), k(2.0, b""), Equal),
            // The empty-member seek key sorts before every member at its score.
            (k(2.0, b""), k(2.0, b"\x00"), Less),
            // Versions as numbers, the reserve ignored until last.
            (
                score_key(b"z", 255, 9.0, b""),
                score_key(b"z", 256, 0.0, b""),
                Less,
            ),
            (k(1.0, b"n"), other_reserve, Greater),
            (k(1.0, b"m"), vec![0xFF; 16], Less),
        ] {
            assert_eq!(zsets_score_key_compare(&a, &b), order, "{a:?} {b:?}");
        }
    }
}
