//! The custom comparators as total orders on arbitrary bytes.
//!
//! Input: one selector byte (which comparator), then three keys as
//! [`crate::chunks`] (`u16` LE length ‖ a ‖ `u16` LE length ‖ b ‖ c).

use std::cmp::Ordering;

use redcodec_ardb::comparator::{compare_keys, compare_parsed};
use redcodec_ardb::keys::ParsedKey;
use redcodec_ardb::primitives::{read_varuint32, Data};
use redcodec_blackwidow::comparator::{
    lists_data_key_compare, score_compare, zsets_score_key_compare,
};
use redcodec_codec::Reader;

/// Checks that `cmp` orders `keys` totally: every key equals itself, every
/// pair compares the same both ways round, and (with `transitive`) every
/// ordered chain `x ≤ y ≤ z` gives `x ≤ z`, strictly when either step is
/// strict (so equality is transitive too, and consistent: `x == y` makes
/// `x` and `y` compare alike with `z`). `equal_allowed(x, y)` says where
/// the comparator may call two distinct keys equal.
pub fn check_total_order<T: std::fmt::Debug + ?Sized>(
    name: &str,
    cmp: impl Fn(&T, &T) -> Ordering,
    keys: &[&T],
    transitive: bool,
    equal_allowed: impl Fn(&T, &T) -> bool,
) {
    for x in keys {
        assert_eq!(cmp(x, x), Ordering::Equal, "{name}: {x:02x?} vs itself");
    }
    for x in keys {
        for y in keys {
            let xy = cmp(x, y);
            assert_eq!(xy, cmp(y, x).reverse(), "{name}: {x:02x?} vs {y:02x?}");
            if xy == Ordering::Equal {
                assert!(
                    equal_allowed(x, y),
                    "{name}: {x:02x?} and {y:02x?} compare equal"
                );
            }
        }
    }
    if !transitive {
        return;
    }
    for x in keys {
        for y in keys {
            for z in keys {
                let (xy, yz, xz) = (cmp(x, y), cmp(y, z), cmp(x, z));
                if xy != Ordering::Greater && yz != Ordering::Greater {
                    let expect = if xy == Ordering::Equal && yz == Ordering::Equal {
                        Ordering::Equal
                    } else {
                        Ordering::Less
                    };
                    assert_eq!(
                        xz, expect,
                        "{name}: {x:02x?} {xy:?} {y:02x?} {yz:?} {z:02x?} but {xz:?}"
                    );
                }
            }
        }
    }
}

/// Blackwidow: `sel` even, `ListsDataKeyComparator` (equal only on equal
/// bytes); odd, `ZSetsScoreKeyComparator` (equal also where the scores are
/// `-0.0` and `+0.0`); and `score_compare` on the keys' first 8 bytes.
pub fn blackwidow(data: &[u8]) {
    let keys = lists_or_zsets(
        data,
        "",
        lists_data_key_compare,
        zsets_score_key_compare,
        zero_scores_apart,
    );
    let scores: Vec<f64> = keys
        .iter()
        .filter_map(|k| k.get(..8))
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let refs: Vec<&f64> = scores.iter().collect();
    check_total_order(
        "score_compare",
        |a: &f64, b: &f64| score_compare(*a, *b),
        &refs,
        true,
        |a, b| a.to_bits() == b.to_bits() || (*a == 0.0 && *b == 0.0),
    );
}

/// Whether two score keys are the same but for a score of `-0.0` in one
/// and `+0.0` in the other.
fn zero_scores_apart(a: &[u8], b: &[u8]) -> bool {
    if a == b {
        return true;
    }
    let score_at = |k: &[u8]| {
        let size = u32::from_le_bytes(k.get(..4)?.try_into().ok()?);
        let start = 4usize
            .checked_add(usize::try_from(size).ok()?)?
            .checked_add(4)?;
        let bytes: [u8; 8] = k.get(start..start.checked_add(8)?)?.try_into().ok()?;
        Some((start, f64::from_le_bytes(bytes)))
    };
    match (score_at(a), score_at(b)) {
        (Some((sa, x)), Some((sb, y))) => {
            sa == sb
                && a.len() == b.len()
                && x == 0.0
                && y == 0.0
                && a[..sa] == b[..sb]
                && a[sa + 8..] == b[sb + 8..]
        }
        _ => false,
    }
}

/// Ardb: `ardb.comparator` on the three keys, and `compare_parsed` equal
/// to it on keys that parse.
///
/// Transitivity is checked unless an int element of the three keys lies
/// beyond ±2^53: Ardb compares ints by wrapping subtraction and ints with
/// floats as doubles, which are not transitive there (the comparator keeps
/// that quirk: it is the order of the real system's files). Distinct keys
/// may compare equal (`META` ignores what follows its type byte; `1` and
/// `1.0` are equal elements).
pub fn ardb(data: &[u8]) {
    let keys = crate::chunks(data, 3);
    let tame = keys.iter().all(|k| ints_within_2_53(k));
    check_total_order("ardb.comparator", compare_keys, &keys, tame, |_, _| true);
    for a in &keys {
        for b in &keys {
            if let (Ok(pa), Ok(pb)) = (ParsedKey::parse(a), ParsedKey::parse(b)) {
                assert_eq!(
                    compare_parsed(&pa, &pb),
                    compare_keys(a, b),
                    "{a:02x?} vs {b:02x?}"
                );
            }
        }
    }
}

/// Whether every int element the comparator may decode from `key` lies
/// within ±2^53 (read as the comparator reads: user key, type, count, then
/// elements while they decode).
fn ints_within_2_53(key: &[u8]) -> bool {
    let mut r = Reader::new("key", key);
    let Ok(len) = read_varuint32(&mut r) else {
        return true;
    };
    if r.take(len as usize).is_err() || r.u8().is_err() {
        return true;
    }
    let Ok(count) = r.u8() else {
        return true;
    };
    for _ in 0..count {
        match Data::decode(&mut r) {
            Ok(Data::Int(i)) if i.unsigned_abs() > 1 << 53 => return false,
            Ok(_) => {}
            Err(_) => return true,
        }
    }
    true
}

/// Floyd: `sel` even, `floyd.ListsDataKeyComparator` (equal only on equal
/// bytes); odd, `floyd.ZSetsScoreKeyComparator` (equal also where two keys
/// differ only in an 8-byte score of `-0.0` against `+0.0`).
pub fn floyd(data: &[u8]) {
    use redcodec_floyd::comparator as floyd;
    lists_or_zsets(
        data,
        "floyd ",
        floyd::lists_data_key_compare,
        floyd::zsets_score_key_compare,
        only_a_zero_score_apart,
    );
}

/// A system's two Pika comparators on the keys after the selector byte:
/// `sel` even, its `ListsDataKeyComparator` (`lists`: equal only on equal
/// bytes); odd, its `ZSetsScoreKeyComparator` (`zsets`: equal also where
/// `zero_apart` says). Returns the keys (none without a selector).
fn lists_or_zsets<'a>(
    data: &'a [u8],
    system: &str,
    lists: fn(&[u8], &[u8]) -> Ordering,
    zsets: fn(&[u8], &[u8]) -> Ordering,
    zero_apart: fn(&[u8], &[u8]) -> bool,
) -> Vec<&'a [u8]> {
    let Some((&sel, rest)) = data.split_first() else {
        return Vec::new();
    };
    let keys = crate::chunks(rest, 3);
    if sel % 2 == 0 {
        let name = format!("{system}lists_data_key_compare");
        check_total_order(&name, lists, &keys, true, |a, b| a == b);
    } else {
        let name = format!("{system}zsets_score_key_compare");
        check_total_order(&name, zsets, &keys, true, zero_apart);
    }
    keys
}

/// Whether `a` and `b` are equal but for one 8-byte little-endian double
/// that is `-0.0` in one and `+0.0` in the other.
fn only_a_zero_score_apart(a: &[u8], b: &[u8]) -> bool {
    if a == b {
        return true;
    }
    if a.len() != b.len() {
        return false;
    }
    let differ: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    let (first, last) = (differ[0], differ[differ.len() - 1]);
    let zero = |k: &[u8], at: usize| {
        k.get(at..at + 8)
            .is_some_and(|w| f64::from_le_bytes(w.try_into().unwrap()) == 0.0)
    };
    (last.saturating_sub(7)..=first).any(|at| zero(a, at) && zero(b, at))
}
