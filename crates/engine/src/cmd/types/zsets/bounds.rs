//! Score ranges (`ZRANGEBYSCORE`, `ZCOUNT`, …) and lexicographic ranges
//! (`ZRANGEBYLEX`, `ZLEXCOUNT`, …) as Redis parses and tests them.

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

/// One end of a score range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ScoreBound {
    /// The score.
    pub(crate) value: f64,
    /// Whether the bound itself is excluded (`(` prefix).
    pub(crate) exclusive: bool,
}

impl ScoreBound {
    /// Parses `[(]number` as `zslParseRange` does.
    fn parse(arg: &[u8]) -> Option<ScoreBound> {
        let (exclusive, number) = match arg.split_first() {
            Some((b'(', rest)) => (true, rest),
            _ => (false, arg),
        };
        bound_value(number).map(|value| ScoreBound { value, exclusive })
    }
}

/// A score range `min..max`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ScoreRange {
    /// Lower end.
    pub(crate) min: ScoreBound,
    /// Upper end.
    pub(crate) max: ScoreBound,
}

impl ScoreRange {
    /// Parses the two bounds, with Redis' error.
    pub(crate) fn parse(min: &[u8], max: &[u8]) -> CmdResult<ScoreRange> {
        match (ScoreBound::parse(min), ScoreBound::parse(max)) {
            (Some(min), Some(max)) => Ok(ScoreRange { min, max }),
            _ => Err(CmdError::other("ERR min or max is not a float")),
        }
    }
}

impl Interval for ScoreRange {
    fn is_empty(&self) -> bool {
        self.min.value > self.max.value
            || (self.min.value == self.max.value && (self.min.exclusive || self.max.exclusive))
    }

    fn reaches_min(&self, e: &Entry) -> bool {
        if self.min.exclusive {
            e.score > self.min.value
        } else {
            e.score >= self.min.value
        }
    }

    fn within_max(&self, e: &Entry) -> bool {
        if self.max.exclusive {
            e.score < self.max.value
        } else {
            e.score <= self.max.value
        }
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

    /// The member a bound names, if it names one.
    pub(crate) fn member(&self) -> Option<&[u8]> {
        match self {
            LexBound::Inclusive(m) | LexBound::Exclusive(m) => Some(m),
            LexBound::Lowest | LexBound::Highest => None,
        }
    }

    /// Whether the bound excludes its own value (`-` and `+` count as
    /// exclusive, as in Redis).
    fn exclusive(&self) -> bool {
        !matches!(self, LexBound::Inclusive(_))
    }

    /// `sdscmplex(member, bound)`: how a member compares with the bound.
    fn compare_member(&self, member: &[u8]) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        match self {
            LexBound::Lowest => Ordering::Greater,
            LexBound::Highest => Ordering::Less,
            LexBound::Inclusive(m) | LexBound::Exclusive(m) => member.cmp(m),
        }
    }
}

/// A lexicographic range `min..max`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LexRange {
    /// Lower end.
    pub(crate) min: LexBound,
    /// Upper end.
    pub(crate) max: LexBound,
}

impl LexRange {
    /// Parses the two items, with Redis' error.
    pub(crate) fn parse(min: &[u8], max: &[u8]) -> CmdResult<LexRange> {
        match (LexBound::parse(min), LexBound::parse(max)) {
            (Some(min), Some(max)) => Ok(LexRange { min, max }),
            _ => Err(CmdError::other(
                "ERR min or max not valid string range item",
            )),
        }
    }
}

impl Interval for LexRange {
    fn is_empty(&self) -> bool {
        use std::cmp::Ordering;
        let order = match (&self.min, &self.max) {
            (LexBound::Lowest, LexBound::Lowest) | (LexBound::Highest, LexBound::Highest) => {
                Ordering::Equal
            }
            (LexBound::Lowest, _) | (_, LexBound::Highest) => Ordering::Less,
            (LexBound::Highest, _) | (_, LexBound::Lowest) => Ordering::Greater,
            (min, max) => min.member().cmp(&max.member()),
        };
        order == Ordering::Greater
            || (order == Ordering::Equal && (self.min.exclusive() || self.max.exclusive()))
    }

    fn reaches_min(&self, e: &Entry) -> bool {
        let order = self.min.compare_member(&e.member);
        order.is_gt() || (order.is_eq() && !self.min.exclusive())
    }

    fn within_max(&self, e: &Entry) -> bool {
        let order = self.max.compare_member(&e.member);
        order.is_lt() || (order.is_eq() && !self.max.exclusive())
    }
}

#[cfg(test)]
mod tests {
    use super::super::entry::entry;
    use super::*;

    #[test]
    fn score_ranges_test_their_ends() {
        let r = ScoreRange::parse(b"(1", b"2").expect("valid");
        assert!(!r.reaches_min(&entry("a", 1.0)));
        assert!(r.reaches_min(&entry("a", 1.5)));
        assert!(r.within_max(&entry("a", 2.0)));
        assert!(!r.within_max(&entry("a", 2.5)));
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
        assert!(!r.reaches_min(&entry("b", 0.0)));
        assert!(r.reaches_min(&entry("ba", 0.0)));
        assert!(r.within_max(&entry("d", 0.0)));
        assert!(!r.within_max(&entry("da", 0.0)));
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
