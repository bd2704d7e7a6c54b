//! Matching a reply against the text a scenario expects (the rules of
//! `scenarios/README.md`, "Matching rules").

use redcodec_engine::Reply;

use crate::scenario::Mode;

/// Whether `actual` matches the `expected` lines of a command run with `args`.
pub fn matches(actual: &Reply, expected: &[String], mode: Mode, args: &[Vec<u8>]) -> bool {
    let rendered = actual.to_cli_string();
    let lines: Vec<&str> = rendered
        .lines()
        .map(|l| l.trim_end_matches([' ', '\t']))
        .collect();
    match mode {
        Mode::Exact => exact(&lines, expected),
        Mode::Shape => !actual.is_error() && lines.len() == expected.len(),
        Mode::Unordered => unordered(&lines, expected, args),
    }
}

fn exact(lines: &[&str], expected: &[String]) -> bool {
    if expected.len() == 1 {
        if let Some(ok) = integer_range(lines, &expected[0]) {
            return ok;
        }
    }
    lines.len() == expected.len() && lines.iter().zip(expected).all(|(a, e)| *a == e)
}

/// For an expectation `(integer) A..B`: whether the reply is an integer in
/// the range; `None` when the expectation is not a range.
fn integer_range(lines: &[&str], expected: &str) -> Option<bool> {
    let (lo, hi) = expected.strip_prefix("(integer) ")?.split_once("..")?;
    let (lo, hi) = (lo.parse::<i64>().ok()?, hi.parse::<i64>().ok()?);
    Some(match lines {
        [one] => one
            .strip_prefix("(integer) ")
            .and_then(|n| n.parse::<i64>().ok())
            .is_some_and(|n| (lo..=hi).contains(&n)),
        _ => false,
    })
}

fn unordered(lines: &[&str], expected: &[String], args: &[Vec<u8>]) -> bool {
    let name = args
        .first()
        .map(|n| n.to_ascii_lowercase())
        .unwrap_or_default();
    let is_scan = [&b"scan"[..], b"hscan", b"sscan", b"zscan"].contains(&name.as_slice());
    let pairs = name.ends_with(b"getall")
        || name == b"hscan"
        || name == b"zscan"
        || args
            .iter()
            .skip(1)
            .any(|a| a.eq_ignore_ascii_case(b"withvalues"));
    if is_scan {
        if lines.len() < 2 || expected.len() < 2 || lines[0] != expected[0] {
            return false;
        }
        if expected[1] == "2) (empty array)" || lines[1] == "2) (empty array)" {
            return exact(lines, expected);
        }
        let strip_outer = |first: &str| first.strip_prefix("2) ").map(str::to_string);
        let (Some(a1), Some(e1)) = (strip_outer(lines[1]), strip_outer(&expected[1])) else {
            return false;
        };
        let got: Vec<String> = std::iter::once(a1)
            .chain(lines[2..].iter().map(std::string::ToString::to_string))
            .collect();
        let want: Vec<String> = std::iter::once(e1)
            .chain(expected[2..].iter().cloned())
            .collect();
        return same_multiset(elements(&got), elements(&want), pairs);
    }
    let is_array = expected.first().is_some_and(|l| index_prefix(l).is_some());
    if !is_array {
        return exact(lines, expected);
    }
    let got: Vec<String> = lines.iter().map(std::string::ToString::to_string).collect();
    same_multiset(elements(&got), elements(expected), pairs)
}

/// The element texts of array lines, without their `N) ` prefixes.
fn elements(lines: &[String]) -> Option<Vec<String>> {
    lines
        .iter()
        .map(|l| index_prefix(l).map(std::string::ToString::to_string))
        .collect()
}

/// The text after an index prefix (`  12) `), if the line has one.
fn index_prefix(line: &str) -> Option<&str> {
    let trimmed = line.trim_start_matches(' ');
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    trimmed[digits..].strip_prefix(") ")
}

fn same_multiset(got: Option<Vec<String>>, want: Option<Vec<String>>, pairs: bool) -> bool {
    let (Some(mut got), Some(mut want)) = (got, want) else {
        return false;
    };
    if got.len() != want.len() || (pairs && got.len() % 2 != 0) {
        return false;
    }
    if pairs {
        got = got.chunks(2).map(|c| c.join("\u{0}")).collect();
        want = want.chunks(2).map(|c| c.join("\u{0}")).collect();
    }
    got.sort();
    want.sort();
    got == want
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(String::from).collect()
    }

    fn args(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn exact_replies_match_line_for_line() {
        let r = Reply::bulks(vec![b"a".to_vec(), b"b".to_vec()]);
        assert!(matches(&r, &lines("1) \"a\"\n2) \"b\""), Mode::Exact, &[]));
        assert!(!matches(&r, &lines("1) \"b\"\n2) \"a\""), Mode::Exact, &[]));
    }

    #[test]
    fn integer_ranges_match_inclusive() {
        let r = Reply::Integer(9995);
        assert!(matches(
            &r,
            &lines("(integer) 9990..10000"),
            Mode::Exact,
            &[]
        ));
        assert!(!matches(
            &r,
            &lines("(integer) 9996..10000"),
            Mode::Exact,
            &[]
        ));
        assert!(!matches(
            &Reply::Nil,
            &lines("(integer) 1..2"),
            Mode::Exact,
            &[]
        ));
    }

    #[test]
    fn unordered_arrays_and_pairs() {
        let r = Reply::bulks(vec![
            b"f1".to_vec(),
            b"v1".to_vec(),
            b"f2".to_vec(),
            b"v2".to_vec(),
        ]);
        let a = args(&["HGETALL", "h"]);
        let want = lines("1) \"f2\"\n2) \"v2\"\n3) \"f1\"\n4) \"v1\"");
        assert!(matches(&r, &want, Mode::Unordered, &a));
        let crossed = lines("1) \"f2\"\n2) \"v1\"\n3) \"f1\"\n4) \"v2\"");
        assert!(!matches(&r, &crossed, Mode::Unordered, &a));
        let empty = Reply::Array(vec![]);
        assert!(matches(
            &empty,
            &lines("(empty array)"),
            Mode::Unordered,
            &a
        ));
    }

    #[test]
    fn scan_replies_compare_cursor_exactly_and_elements_as_a_set() {
        let r = Reply::Array(vec![
            Reply::bulk("0"),
            Reply::bulks(vec![b"a".to_vec(), b"b".to_vec()]),
        ]);
        let a = args(&["SSCAN", "s", "0"]);
        assert!(matches(
            &r,
            &lines("1) \"0\"\n2) 1) \"b\"\n   2) \"a\""),
            Mode::Unordered,
            &a
        ));
        assert!(!matches(
            &r,
            &lines("1) \"5\"\n2) 1) \"b\"\n   2) \"a\""),
            Mode::Unordered,
            &a
        ));
        assert!(!matches(
            &r,
            &lines("1) \"0\"\n2) 1) \"b\"\n   2) \"c\""),
            Mode::Unordered,
            &a
        ));
    }

    #[test]
    fn shape_checks_only_lines_and_errors() {
        let r = Reply::bulk("x");
        assert!(matches(&r, &lines("\"y\""), Mode::Shape, &[]));
        assert!(!matches(
            &Reply::error("ERR x"),
            &lines("\"y\""),
            Mode::Shape,
            &[]
        ));
    }
}
