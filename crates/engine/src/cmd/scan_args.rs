//! What the SCAN family shares: the cursor and option parsing of SCAN,
//! HSCAN, SSCAN and ZSCAN, Redis' glob matching (`stringmatchlen`), the
//! paging of an element scan, and the two-item reply.
//!
//! Element scans (HSCAN, SSCAN, ZSCAN) use a simple cursor: the decimal
//! number of element records already visited, an offset into the order in
//! which [`Ctx::subs`](crate::keyspace::Ctx::subs) returns them. `0` starts a
//! scan and the reply cursor `0` ends it. The usual pattern is:
//!
//! ```text
//! let cursor = parse_cursor(a[2])?;            // before the key is read
//! let Some(meta) = ctx.typed(key, ty)? else { return Ok(empty_scan_reply()) };
//! let opts = ScanOptions::parse(&a[3..], false)?; // after the type check
//! let (next, page) = scan_page(ctx.subs(kind, key, &meta, None, false), cursor, opts.count)?;
//! // keep the records whose name `opts.matches(..)`, then `scan_reply(next, items)`
//! ```
//!
//! [`scan_start`] is its start, [`scan_records`] all of it for HSCAN and SSCAN.

use redcodec_codec::{Codec, Meta, SubId, SubKind, SubValue};

use crate::cmd::args::is;
use crate::error::{CmdError, CmdResult};
use crate::keyspace::Ctx;
use crate::number::int_arg;
use crate::reply::Reply;
use crate::store::KvStore;

/// Elements visited per call when COUNT is not given.
pub(crate) const DEFAULT_COUNT: u64 = 10;

/// Parses a scan cursor as Redis' `parseScanCursorOrReply` does with
/// `strtoul`: an optional `+` or `-` (a negative number wraps around
/// modulo 2^64), decimal digits, nothing else; the empty string is cursor 0;
/// parsing stops at a NUL byte as C does. A leading space, any other byte,
/// or a number beyond 2^64 - 1 is `ERR invalid cursor`.
pub(crate) fn parse_cursor(arg: &[u8]) -> CmdResult<u64> {
    let invalid = || CmdError::other("ERR invalid cursor");
    let text = arg.split(|&b| b == 0).next().unwrap_or_default();
    if text.is_empty() {
        return Ok(0);
    }
    let (negative, digits) = match text[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(invalid());
    }
    let mut value: u64 = 0;
    for &d in digits {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
            .ok_or_else(invalid)?;
    }
    Ok(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// The options after the cursor of a SCAN-family command.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ScanOptions<'a> {
    /// The MATCH pattern; `None` when absent or `*` (everything matches).
    pub(crate) pattern: Option<&'a [u8]>,
    /// The COUNT hint (at least 1; [`DEFAULT_COUNT`] when absent).
    pub(crate) count: u64,
    /// The TYPE argument as given (keyspace SCAN only), not yet checked
    /// against the type names.
    pub(crate) type_name: Option<&'a [u8]>,
}

impl<'a> ScanOptions<'a> {
    /// Parses `[MATCH pattern] [COUNT count] [TYPE type]` in any order, a
    /// later option replacing an earlier one, as Redis' `scanGenericCommand`
    /// does. `TYPE` is accepted only when `allow_type` (keyspace SCAN).
    /// Errors: an unknown option or one without its value is
    /// `ERR syntax error`; a COUNT that is not an integer is `ERR value is
    /// not an integer or out of range`, and one below 1 `ERR syntax error`.
    pub(crate) fn parse(args: &[&'a [u8]], allow_type: bool) -> CmdResult<ScanOptions<'a>> {
        let mut opts = ScanOptions {
            pattern: None,
            count: DEFAULT_COUNT,
            type_name: None,
        };
        let mut rest = args;
        while let [opt, value, tail @ ..] = rest {
            if is(opt, "count") {
                let count = int_arg(value)?;
                if count < 1 {
                    return Err(CmdError::Syntax);
                }
                opts.count = count as u64;
            } else if is(opt, "match") {
                opts.pattern = Some(*value).filter(|p| *p != b"*");
            } else if is(opt, "type") && allow_type {
                opts.type_name = Some(*value);
            } else {
                return Err(CmdError::Syntax);
            }
            rest = tail;
        }
        if rest.is_empty() {
            Ok(opts)
        } else {
            Err(CmdError::Syntax)
        }
    }

    /// Whether `name` passes the MATCH filter.
    pub(crate) fn matches(&self, name: &[u8]) -> bool {
        self.pattern.is_none_or(|p| glob_match(p, name))
    }
}

/// One page of an element scan: skips the `cursor` records already visited,
/// takes up to `count` more, and returns them with the cursor of the next
/// call — `0` when nothing is left after them.
pub(crate) fn scan_page<T>(
    records: impl Iterator<Item = CmdResult<T>>,
    cursor: u64,
    count: u64,
) -> CmdResult<(u64, Vec<T>)> {
    let mut records = records.skip(usize::try_from(cursor).unwrap_or(usize::MAX));
    let mut page = Vec::new();
    while (page.len() as u64) < count {
        match records.next() {
            Some(record) => page.push(record?),
            None => return Ok((0, page)),
        }
    }
    if records.next().transpose()?.is_none() {
        return Ok((0, page));
    }
    Ok((cursor.saturating_add(count), page))
}

/// The start of an element scan (HSCAN, SSCAN, ZSCAN) of the collection
/// at `a[1]`, whose meta `read` finds, in Redis' order: the cursor before
/// the key is read, the options after. `None`: no such key.
pub(crate) fn scan_start<'a, C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    a: &[&'a [u8]],
    read: impl FnOnce(&Ctx<'_, C, S>, &[u8]) -> CmdResult<Option<Meta>>,
) -> CmdResult<Option<(u64, Meta, ScanOptions<'a>)>> {
    let cursor = parse_cursor(a[2])?;
    let Some(meta) = read(ctx, a[1])? else {
        return Ok(None);
    };
    Ok(Some((cursor, meta, ScanOptions::parse(&a[3..], false)?)))
}

/// HSCAN and SSCAN: one page of the `kind` records of the collection at
/// `a[1]` (see [`scan_start`]). `item` turns a record into its name and,
/// for pairs, its value; the names MATCH keeps are replied, each followed
/// by its value.
pub(crate) fn scan_records<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    a: &[&[u8]],
    kind: SubKind,
    read: impl FnOnce(&Ctx<'_, C, S>, &[u8]) -> CmdResult<Option<Meta>>,
    item: impl Fn(&[u8], SubId, SubValue) -> CmdResult<(Vec<u8>, Option<Vec<u8>>)>,
) -> CmdResult<Reply> {
    let key = a[1];
    let Some((cursor, meta, opts)) = scan_start(ctx, a, read)? else {
        return Ok(empty_scan_reply());
    };
    let (next, page) = scan_page(ctx.subs(kind, key, &meta, None, false), cursor, opts.count)?;
    let mut items = Vec::new();
    for (id, value) in page {
        let (name, value) = item(key, id, value)?;
        if opts.matches(&name) {
            items.push(Reply::Bulk(name));
            items.extend(value.map(Reply::Bulk));
        }
    }
    Ok(scan_reply(next, items))
}

/// The reply of a SCAN-family command: the next cursor and the items.
pub(crate) fn scan_reply(cursor: u64, items: Vec<Reply>) -> Reply {
    Reply::Array(vec![Reply::bulk(cursor.to_string()), Reply::Array(items)])
}

/// The reply for a scan of a missing key (`0` and no items).
pub(crate) fn empty_scan_reply() -> Reply {
    scan_reply(0, Vec::new())
}

/// Redis' glob matching, case-sensitive
/// ([`redcodec_protocol::glob::matches`]).
///
/// A pattern of exactly `*` matches everything, including the empty
/// string: both Redis callers (KEYS, SCAN MATCH) short-cut it that way,
/// whereas `stringmatchlen("*", "")` alone is false.
pub(crate) fn glob_match(pattern: &[u8], s: &[u8]) -> bool {
    pattern == b"*" || redcodec_protocol::glob::matches(pattern, s, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::testkit::check_parser;

    #[test]
    fn a_lone_star_matches_even_the_empty_key() {
        assert!(glob_match(b"*", b""));
        assert!(glob_match(b"*", b"anything"));
        assert!(!glob_match(b"**", b""));
        assert!(glob_match(b"k[0-9]", b"k7"));
    }

    #[test]
    fn cursors_parse_like_strtoul() {
        let parse = |arg: &[u8]| match parse_cursor(arg) {
            Ok(cursor) => Some(cursor),
            Err(err) => {
                assert_eq!(err.to_string(), "ERR invalid cursor");
                None
            }
        };
        check_parser(
            parse,
            &[
                ("0", 0),
                ("", 0),
                ("+7", 7),
                ("007", 7),
                ("-1", u64::MAX),
                ("18446744073709551615", u64::MAX),
                ("12\0junk", 12),
            ],
            &["x", " 1", "1 ", "-", "+", "18446744073709551616", "1.0"],
        );
    }

    #[test]
    fn options_parse_like_scan_generic_command() {
        let args: Vec<&[u8]> = vec![b"MATCH", b"a*", b"count", b"5", b"match", b"b*"];
        let opts = ScanOptions::parse(&args, false).expect("valid");
        assert_eq!(opts.pattern, Some(&b"b*"[..]));
        assert_eq!(opts.count, 5);
        let star = ScanOptions::parse(&[&b"match"[..], b"*"], false).expect("valid");
        assert_eq!(star.pattern, None);
        assert!(star.matches(b""));
        let typed = ScanOptions::parse(&[&b"TYPE"[..], b"hash"], true).expect("valid");
        assert_eq!(typed.type_name, Some(&b"hash"[..]));
        let error = |args: &[&[u8]]| {
            ScanOptions::parse(args, false)
                .expect_err("bad")
                .to_string()
        };
        assert_eq!(error(&[b"type", b"set"]), "ERR syntax error");
        assert_eq!(error(&[b"count", b"0"]), "ERR syntax error");
        assert_eq!(error(&[b"count", b"-1"]), "ERR syntax error");
        assert_eq!(
            error(&[b"count", b"x"]),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(error(&[b"match"]), "ERR syntax error");
        assert_eq!(error(&[b"novalues"]), "ERR syntax error");
    }

    #[test]
    fn pages_report_the_next_offset_or_zero() {
        let items = |n: u32| (0..n).map(Ok::<u32, CmdError>);
        let (next, page) = scan_page(items(25), 0, 10).expect("page");
        assert_eq!((next, page.len()), (10, 10));
        let (next, page) = scan_page(items(25), 20, 10).expect("page");
        assert_eq!((next, page), (0, vec![20, 21, 22, 23, 24]));
        let (next, page) = scan_page(items(20), 10, 10).expect("page");
        assert_eq!((next, page.len()), (0, 10));
        let (next, page) = scan_page(items(5), u64::MAX, 10).expect("page");
        assert_eq!((next, page.len()), (0, 0));
    }
}
