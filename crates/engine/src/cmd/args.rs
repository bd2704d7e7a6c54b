//! Argument helpers every command family shares.

use std::collections::HashSet;

/// Case-insensitive comparison of an argument with an option name.
pub(crate) fn is(arg: &[u8], name: &str) -> bool {
    arg.eq_ignore_ascii_case(name.as_bytes())
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

/// The items in first-seen order, each once.
pub(crate) fn distinct<'a>(items: impl IntoIterator<Item = &'a [u8]>) -> Vec<&'a [u8]> {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .filter(|item| seen.insert(*item))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::resolve_range;

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
}
