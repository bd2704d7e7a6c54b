//! Argument helpers every command family shares.

use crate::error::{CmdError, CmdResult};
use crate::number::parse_i64;

/// Case-insensitive comparison of an argument with an option name.
pub(crate) fn is(arg: &[u8], name: &str) -> bool {
    arg.eq_ignore_ascii_case(name.as_bytes())
}

/// The `count [flag]` arguments of HRANDFIELD and ZRANDMEMBER (`a`, from
/// the count on): the count, and whether the `flag` (WITHVALUES,
/// WITHSCORES) is given. The flag doubles the reply's length, so Redis then
/// refuses counts whose doubled length would overflow.
pub(crate) fn random_count_with(a: &[&[u8]], flag: &str) -> CmdResult<(i64, bool)> {
    let count = crate::types::random::random_count_arg(a[0])?;
    let with = match a.len() {
        1 => false,
        2 if is(a[1], flag) => true,
        _ => return Err(CmdError::Syntax),
    };
    if with && !(-i64::MAX / 2..=i64::MAX / 2).contains(&count) {
        return Err(CmdError::other("ERR value is out of range"));
    }
    Ok((count, with))
}

/// Resolves Redis' `start`/`stop` range over `len` elements (negative
/// indexes count from the end) into `[start, stop]`, or `None` when empty.
pub(crate) fn resolve_range(start: i64, stop: i64, len: u64) -> Option<(u64, u64)> {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let stop = if stop < 0 {
        len + stop
    } else {
        stop.min(len - 1)
    };
    if start > stop || start >= len || stop < 0 {
        None
    } else {
        Some((start as u64, stop as u64))
    }
}

/// A count that must be at least 1, as Redis'
/// `getRangeLongFromObjectOrReply(…, 1, LONG_MAX, "<what> should be greater
/// than 0")`: a non-integer and anything below 1 both name `what`.
pub(crate) fn positive_arg(arg: &[u8], what: &str) -> CmdResult<u64> {
    parse_i64(arg)
        .and_then(|n| u64::try_from(n).ok())
        .filter(|&n| n >= 1)
        .ok_or_else(|| CmdError::other(format!("ERR {what} should be greater than 0")))
}

/// The optional `COUNT count` that closes LMPOP and ZMPOP, from `a[at]`:
/// 1 without it. The count is checked first; anything else, after it or
/// instead of it, is a syntax error.
pub(crate) fn mpop_count(a: &[&[u8]], at: usize) -> CmdResult<u64> {
    match &a[at..] {
        [] => Ok(1),
        [word, n, rest @ ..] if is(word, "count") => {
            let count = positive_arg(n, "count")?;
            if rest.is_empty() {
                Ok(count)
            } else {
                Err(CmdError::Syntax)
            }
        }
        _ => Err(CmdError::Syntax),
    }
}

/// The `numkeys key…` block that starts at `a[at]` (LMPOP, ZMPOP,
/// SINTERCARD…): the keys, and the index of the first argument after them;
/// a syntax error when fewer arguments follow than `numkeys` needs
/// (`what_after` says whether an argument must follow the keys).
pub(crate) fn numkeys_block<'a>(
    a: &[&'a [u8]],
    at: usize,
    what_after: bool,
) -> CmdResult<(Vec<&'a [u8]>, usize)> {
    let n = positive_arg(a[at], "numkeys")?;
    let first = at + 1;
    let needed = usize::try_from(n).unwrap_or(usize::MAX);
    let available = a.len() - first;
    if needed > available || (what_after && needed == available) {
        return Err(CmdError::Syntax);
    }
    Ok((a[first..first + needed].to_vec(), first + needed))
}

#[cfg(test)]
mod tests {
    use super::{mpop_count, resolve_range};
    use crate::error::CmdError;

    #[test]
    fn ranges_resolve_like_redis() {
        assert_eq!(resolve_range(0, -1, 3), Some((0, 2)));
        assert_eq!(resolve_range(-2, 10, 3), Some((1, 2)));
        assert_eq!(resolve_range(-10, 0, 3), Some((0, 0)));
        assert_eq!(resolve_range(2, 1, 3), None);
        assert_eq!(resolve_range(5, 10, 3), None);
        assert_eq!(resolve_range(0, -4, 3), None);
        assert_eq!(resolve_range(0, 0, 0), None);
    }

    #[test]
    fn mpop_count_is_one_count_or_none() {
        let count = |a: &[&[u8]]| mpop_count(a, 1).map_err(|e| e.to_string());
        assert_eq!(count(&[b"LEFT"]), Ok(1));
        assert_eq!(count(&[b"LEFT", b"count", b"5"]), Ok(5));
        assert!(matches!(
            mpop_count(&[b"LEFT", b"COUNT"], 1),
            Err(CmdError::Syntax)
        ));
        assert!(matches!(
            mpop_count(&[b"LEFT", b"COUNT", b"5", b"COUNT", b"6"], 1),
            Err(CmdError::Syntax)
        ));
        assert!(matches!(
            mpop_count(&[b"LEFT", b"LIMIT", b"5"], 1),
            Err(CmdError::Syntax)
        ));
        // The count is checked before what follows it.
        assert_eq!(
            count(&[b"LEFT", b"COUNT", b"0", b"extra"]),
            Err("ERR count should be greater than 0".to_string())
        );
    }
}
