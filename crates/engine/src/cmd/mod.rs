//! Command implementations, one module per family. Each module registers
//! its commands in the table and implements each command once, through
//! [`Ctx`](crate::keyspace::Ctx) and the codec's declared capabilities.

use redcodec_codec::Codec;

use crate::dispatch::Table;

pub(crate) mod hashes;
mod keys;
pub(crate) mod lists;
mod scan;
mod scan_args;
mod server;
pub(crate) mod sets;
mod strings;
pub(crate) mod zsets;

/// Registers every family.
pub fn register<C: Codec>(t: &mut Table<C>) {
    strings::register(t);
    hashes::register(t);
    lists::register(t);
    sets::register(t);
    zsets::register(t);
    keys::register(t);
    scan::register(t);
    server::register(t);
}

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

#[cfg(test)]
pub(crate) mod testkit;

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
