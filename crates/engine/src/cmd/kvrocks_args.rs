//! Arguments of Kvrocks' own commands (CAS, CAD, HRANGEBYLEX), read as
//! Kvrocks 2.10 reads them, with its reply texts: its `CommandParser`
//! (`src/commands/command_parser.h`), `ParseInt` (`src/common/parse_util.h`,
//! `strtoll` with base 0), the expiry options of `ttl_util.h` and
//! `ParseRangeLexSpec` (`src/common/range_spec.cc`). Commands Redis has
//! keep Redis' parsing; only commands Redis does not have read these.

use crate::error::{CmdError, CmdResult};
use crate::keyspace::ExpireAt;
use crate::number::c_number_start;
use crate::types::zset::bounds::{Bound, LexBound};

use super::args::is;

/// `CommandParser`'s error when an option's value is missing.
fn no_more_items() -> CmdError {
    CmdError::other("ERR no more item to parse")
}

/// An integer as Kvrocks' `ParseInt<int64_t>(arg, 10 or 0)` reads it: C's
/// `strtoll` with base 0 (leading blanks, a sign, `0x` for hexadecimal, a
/// leading `0` for octal), the whole argument consumed.
pub(crate) fn integer(arg: &[u8]) -> CmdResult<i64> {
    let not_started = || CmdError::other("ERR not started as an integer");
    let (mut i, negative) = c_number_start(arg);
    let hex_digits = arg.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
    let radix: u32 = match (arg.get(i), arg.get(i + 1)) {
        (Some(b'0'), Some(b'x' | b'X')) if hex_digits => {
            i += 2;
            16
        }
        (Some(b'0'), _) => 8,
        _ => 10,
    };
    let digits = arg[i..]
        .iter()
        .take_while(|b| char::from(**b).is_digit(radix))
        .count();
    if digits == 0 {
        return Err(not_started());
    }
    // strtoll's magnitude, saturated past i64's range (ERANGE).
    let mut magnitude: i128 = 0;
    for &b in &arg[i..i + digits] {
        let digit = char::from(b).to_digit(radix).unwrap_or_default();
        magnitude = (magnitude * i128::from(radix) + i128::from(digit)).min(1 << 64);
    }
    let value = if negative { -magnitude } else { magnitude };
    let value =
        i64::try_from(value).map_err(|_| CmdError::other("ERR Numerical result out of range"))?;
    if i + digits != arg.len() {
        return Err(CmdError::other("ERR encounter non-integer characters"));
    }
    Ok(value)
}

/// `CommandParser::TakeInt` of the argument at `at`, if there is one.
pub(crate) fn take_integer(a: &[&[u8]], at: usize) -> CmdResult<i64> {
    a.get(at)
        .map_or_else(|| Err(no_more_items()), |arg| integer(arg))
}

/// The expiry options of CAS (`ParseExpireFlags`): `EX s`, `PX ms`,
/// `EXAT s` or `PXAT ms`, each at least 1, one kind only (it may repeat:
/// the last one counts); anything else is a syntax error. The absolute
/// time in ms, 0 for none (CAS then leaves the key without one); `EX` and
/// `PX` give it as relative, as SET's do.
pub(crate) fn expiry(options: &[&[u8]], now_ms: u64) -> CmdResult<ExpireAt> {
    const KINDS: [&str; 4] = ["ex", "exat", "px", "pxat"];
    let mut kind: Option<&str> = None;
    let mut at = ExpireAt::absolute(0);
    let mut i = 0;
    while let Some(word) = options.get(i) {
        let this = KINDS
            .into_iter()
            .find(|k| is(word, k) && kind.is_none_or(|given| given == *k))
            .ok_or(CmdError::Syntax)?;
        kind = Some(this);
        let n = take_integer(options, i + 1)?;
        if n < 1 {
            return Err(CmdError::other("ERR out of numeric range"));
        }
        let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
        let ms = match this {
            "ex" => n.saturating_mul(1000).saturating_add(now),
            "exat" => n.saturating_mul(1000),
            "px" => n.saturating_add(now),
            _ => n,
        };
        let ms = u64::try_from(ms).unwrap_or_default();
        at = if matches!(this, "ex" | "px") {
            ExpireAt::relative(ms)
        } else {
            ExpireAt::absolute(ms)
        };
        i += 2;
    }
    Ok(at)
}

/// A lexicographic range of Kvrocks' `RangeLexSpec`: its ends read as
/// ZRANGEBYLEX's ([`LexBound`]: `-` and `+` the open ends, `[x` and `(x`
/// inclusive and exclusive), with Kvrocks' checks and texts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LexRange {
    /// The lower end (never `+`).
    pub min: LexBound,
    /// The upper end (never `-`).
    pub max: LexBound,
}

impl LexRange {
    /// `ParseRangeLexSpec(min, max)`.
    pub(crate) fn parse(min: &[u8], max: &[u8]) -> CmdResult<LexRange> {
        if min == b"+" || max == b"-" {
            return Err(CmdError::other("ERR min > max"));
        }
        let end = |arg: &[u8], which: &str| {
            LexBound::parse(arg)
                .ok_or_else(|| CmdError::other(format!("ERR the {which} is illegal")))
        };
        Ok(LexRange {
            min: end(min, "min")?,
            max: end(max, "max")?,
        })
    }

    /// Whether `name` is below the range.
    pub(crate) fn below(&self, name: &[u8]) -> bool {
        match &self.min {
            LexBound::Inclusive(min) => name < min.as_slice(),
            LexBound::Exclusive(min) => name <= min.as_slice(),
            LexBound::Lowest | LexBound::Highest => false,
        }
    }

    /// Whether `name` is above the range.
    pub(crate) fn above(&self, name: &[u8]) -> bool {
        match &self.max {
            LexBound::Inclusive(max) => name > max.as_slice(),
            LexBound::Exclusive(max) => name >= max.as_slice(),
            LexBound::Lowest | LexBound::Highest => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: CmdResult<impl std::fmt::Debug>) -> String {
        match r {
            Ok(v) => format!("{v:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn integers_read_as_strtoll_with_base_zero() {
        for (arg, want) in [
            ("10", "10"),
            ("  -7", "-7"),
            ("+3", "3"),
            ("0x1f", "31"),
            ("010", "8"),
            ("0", "0"),
            ("9223372036854775807", "9223372036854775807"),
            ("-9223372036854775808", "-9223372036854775808"),
            ("9223372036854775808", "ERR Numerical result out of range"),
            ("", "ERR not started as an integer"),
            ("abc", "ERR not started as an integer"),
            ("12a", "ERR encounter non-integer characters"),
            ("0x", "ERR encounter non-integer characters"),
            ("09", "ERR encounter non-integer characters"),
            ("1 ", "ERR encounter non-integer characters"),
        ] {
            assert_eq!(text(integer(arg.as_bytes())), want, "{arg:?}");
        }
    }

    #[test]
    fn expiry_options_take_one_kind() {
        let now = 1_000_000;
        let run = |words: &str| {
            let words: Vec<&[u8]> = words.split_whitespace().map(str::as_bytes).collect();
            text(expiry(&words, now).map(|at| (at.ms, at.relative)))
        };
        assert_eq!(run(""), "(0, false)");
        assert_eq!(run("EX 10"), "(1010000, true)");
        assert_eq!(run("px 10 PX 20"), "(1000020, true)");
        assert_eq!(run("exat 5"), "(5000, false)");
        assert_eq!(run("pxat 5"), "(5, false)");
        assert_eq!(run("ex 10 px 20"), "ERR syntax error");
        assert_eq!(run("keepttl"), "ERR syntax error");
        assert_eq!(run("ex"), "ERR no more item to parse");
        assert_eq!(run("ex 0"), "ERR out of numeric range");
        assert_eq!(run("ex x"), "ERR not started as an integer");
    }

    #[test]
    fn lex_ranges_read_as_kvrocks_reads_them() {
        let r = LexRange::parse(b"(b", b"[d").expect("valid");
        assert!(r.below(b"a") && r.below(b"b") && !r.below(b"ba"));
        assert!(!r.above(b"d") && r.above(b"da"));
        let all = LexRange::parse(b"-", b"+").expect("valid");
        assert!(!all.below(b"") && !all.above(b"\xff\xff"));
        assert_eq!(text(LexRange::parse(b"+", b"[a")), "ERR min > max");
        assert_eq!(text(LexRange::parse(b"[a", b"-")), "ERR min > max");
        assert_eq!(text(LexRange::parse(b"a", b"[b")), "ERR the min is illegal");
        assert_eq!(text(LexRange::parse(b"[a", b"")), "ERR the max is illegal");
    }
}
