//! Score ranges (`ZRANGEBYSCORE`, `ZCOUNT`, …) and lexicographic ranges
//! (`ZRANGEBYLEX`, `ZLEXCOUNT`, …) as Redis parses and tests them.

use std::cmp::Ordering;

use super::entry::Entry;
use super::float::bound_value;
use crate::error::{CmdError, CmdResult};

/// A range of sorted-set entries: the tests a walk needs.
pub(crate) trait Interval {
    /// Whether the range can hold nothing at all (min above max).
    fn is_empty(&self) -> bool;
    /// Whether `e` is at or above the range's minimum.
    fn reaches_min(&self, e: &Entry) -> bool;
    /// Whether `e` is at or below the range's maximum.
    fn within_max(&self, e: &Entry) -> bool;
}

/// One end of a range, as Redis parses it and tests entries against it.
pub(crate) trait Bound: Sized {
    /// Redis' error for a range whose ends do not both parse.
    const PARSE_ERROR: &'static str;

    /// Parses one end as Redis does.
    fn parse(arg: &[u8]) -> Option<Self>;

    /// How the entry `e` compares with this end (`None`: they do not
    /// compare, as a NaN score compares with nothing).
    fn compare_entry(&self, e: &Entry) -> Option<Ordering>;

    /// How this end compares with `other`.
    fn compare_bound(&self, other: &Self) -> Option<Ordering>;

    /// Whether the end excludes its own value.
    fn is_exclusive(&self) -> bool;

    /// Whether `e` lies on the `inside` side of this end (`Greater` for a
    /// lower end, `Less` for an upper one), or on the end when it is
    /// inclusive.
    fn admits(&self, e: &Entry, inside: Ordering) -> bool {
        match self.compare_entry(e) {
            Some(Ordering::Equal) => !self.is_exclusive(),
            Some(order) => order == inside,
            None => false,
        }
    }
}

/// A range `min..max` of sorted-set entries, by score or by member.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Range<B> {
    /// Lower end.
    pub(crate) min: B,
    /// Upper end.
    pub(crate) max: B,
}

/// A score range `min..max`.
pub(crate) type ScoreRange = Range<ScoreBound>;

/// A lexicographic range `min..max`.
pub(crate) type LexRange = Range<LexBound>;

impl<B: Bound> Range<B> {
    /// Parses the two ends, with Redis' error.
    pub(crate) fn parse(min: &[u8], max: &[u8]) -> CmdResult<Range<B>> {
        match (B::parse(min), B::parse(max)) {
            (Some(min), Some(max)) => Ok(Range { min, max }),
            _ => Err(CmdError::other(B::PARSE_ERROR)),
        }
    }
}

impl<B: Bound> Interval for Range<B> {
    fn is_empty(&self) -> bool {
        match self.min.compare_bound(&self.max) {
            Some(Ordering::Greater) => true,
            Some(Ordering::Equal) => self.min.is_exclusive() || self.max.is_exclusive(),
            _ => false,
        }
    }

    fn reaches_min(&self, e: &Entry) -> bool {
        self.min.admits(e, Ordering::Greater)
    }

    fn within_max(&self, e: &Entry) -> bool {
        self.max.admits(e, Ordering::Less)
    }
}

/// One end of a score range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ScoreBound {
    /// The score.
    pub(crate) value: f64,
    /// Whether the bound itself is excluded (`(` prefix).
    pub(crate) exclusive: bool,
}

impl Bound for ScoreBound {
    const PARSE_ERROR: &'static str = "ERR min or max is not a float";

    /// Parses `[(]number` as `zslParseRange` does.
    fn parse(arg: &[u8]) -> Option<ScoreBound> {
        let (exclusive, number) = match arg.split_first() {
            Some((b'(', rest)) => (true, rest),
            _ => (false, arg),
        };
        bound_value(number).map(|value| ScoreBound { value, exclusive })
    }

    /// As C compares doubles (`-0` equals `0`).
    fn compare_entry(&self, e: &Entry) -> Option<Ordering> {
        e.score.partial_cmp(&self.value)
    }

    fn compare_bound(&self, other: &ScoreBound) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }

    fn is_exclusive(&self) -> bool {
        self.exclusive
    }
}

/// One end of a lexicographic range.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum LexBound {
    /// `-`: below every member.
    Lowest,
    /// `+`: above every member.
    Highest,
    /// `[member`.
    Inclusive(Vec<u8>),
    /// `(member`.
    Exclusive(Vec<u8>),
}

impl LexBound {
    /// The member a bound names, if it names one.
    pub(crate) fn member(&self) -> Option<&[u8]> {
        match self {
            LexBound::Inclusive(m) | LexBound::Exclusive(m) => Some(m),
            LexBound::Lowest | LexBound::Highest => None,
        }
    }
}

impl Bound for LexBound {
    const PARSE_ERROR: &'static str = "ERR min or max not valid string range item";

    /// Parses an item as `zslParseLexRangeItem` does.
    fn parse(arg: &[u8]) -> Option<LexBound> {
        match arg {
            b"-" => Some(LexBound::Lowest),
            b"+" => Some(LexBound::Highest),
            [b'[', rest @ ..] => Some(LexBound::Inclusive(rest.to_vec())),
            [b'(', rest @ ..] => Some(LexBound::Exclusive(rest.to_vec())),
            _ => None,
        }
    }

    /// `sdscmplex(member, bound)`.
    fn compare_entry(&self, e: &Entry) -> Option<Ordering> {
        Some(match self {
            LexBound::Lowest => Ordering::Greater,
            LexBound::Highest => Ordering::Less,
            LexBound::Inclusive(m) | LexBound::Exclusive(m) => e.member.as_slice().cmp(m),
        })
    }

    fn compare_bound(&self, other: &LexBound) -> Option<Ordering> {
        Some(match (self, other) {
            (LexBound::Lowest, LexBound::Lowest) | (LexBound::Highest, LexBound::Highest) => {
                Ordering::Equal
            }
            (LexBound::Lowest, _) | (_, LexBound::Highest) => Ordering::Less,
            (LexBound::Highest, _) | (_, LexBound::Lowest) => Ordering::Greater,
            (min, max) => min.member().cmp(&max.member()),
        })
    }

    /// `-` and `+` count as exclusive, as in Redis.
    fn is_exclusive(&self) -> bool {
        !matches!(self, LexBound::Inclusive(_))
    }
}

#[cfg(test)]
mod tests {
    use super::super::entry::entry;
    use super::*;

    /// Asserts that `r` leaves out `below`, takes `low` and `high` (as far
    /// as its minimum and its maximum go) and leaves out `above`.
    fn assert_ends(r: &impl Interval, [below, low, high, above]: [Entry; 4]) {
        assert!(!r.reaches_min(&below));
        assert!(r.reaches_min(&low));
        assert!(r.within_max(&high));
        assert!(!r.within_max(&above));
    }

    #[test]
    fn score_ranges_test_their_ends() {
        let r = ScoreRange::parse(b"(1", b"2").expect("valid");
        let ends = [1.0, 1.5, 2.0, 2.5].map(|score| entry("a", score));
        assert_ends(&r, ends);
        assert!(!r.is_empty());
        assert!(ScoreRange::parse(b"(1", b"1").expect("valid").is_empty());
        assert!(ScoreRange::parse(b"2", b"1").expect("valid").is_empty());
        assert!(!ScoreRange::parse(b"-inf", b"+inf")
            .expect("valid")
            .is_empty());
        let error = ScoreRange::parse(b"[1", b"2")
            .expect_err("invalid")
            .to_string();
        assert_eq!(error, "ERR min or max is not a float");
    }

    #[test]
    fn lex_ranges_test_their_ends() {
        let r = LexRange::parse(b"(b", b"[d").expect("valid");
        let ends = ["b", "ba", "d", "da"].map(|member| entry(member, 0.0));
        assert_ends(&r, ends);
        let all = LexRange::parse(b"-", b"+").expect("valid");
        assert!(all.reaches_min(&entry("", 0.0)) && all.within_max(&entry("\u{ff}", 0.0)));
        assert!(!all.is_empty());
        for (min, max) in [
            ("+", "-"),
            ("+", "+"),
            ("-", "-"),
            ("(a", "[a"),
            ("[b", "[a"),
        ] {
            let r = LexRange::parse(min.as_bytes(), max.as_bytes()).expect("valid");
            assert!(r.is_empty(), "{min} {max}");
        }
        assert!(!LexRange::parse(b"[a", b"[a").expect("valid").is_empty());
        for bad in [&b"a"[..], b"", b"+a", b"-a"] {
            let error = LexRange::parse(bad, b"+").expect_err("invalid").to_string();
            assert_eq!(error, "ERR min or max not valid string range item");
        }
    }
}
