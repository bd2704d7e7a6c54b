//! The version rule (`UpdateVersion`, `src/base_meta_value_format.h`):
//! unix milliseconds, or one more than the previous version when that is
//! not older.

/// The next version at `now_us` (unix µs) after `previous` (`None`: a new
/// key, as Pika's version 0): `now_ms`, or `previous + 1` (wrapping, as
/// Pika's `uint64_t`) when `previous >= now_ms`.
pub fn next_version(now_us: u64, previous: Option<u64>) -> u64 {
    let now_ms = now_us / 1000;
    match previous {
        Some(p) if p >= now_ms => p.wrapping_add(1),
        _ => now_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_or_one_more() {
        let t = 1_700_000_000_000;
        assert_eq!(next_version(t * 1000 + 999, None), t);
        assert_eq!(next_version(t * 1000, Some(t)), t + 1);
        assert_eq!(next_version(t * 1000, Some(t + 5)), t + 6);
        assert_eq!(next_version(t * 1000, Some(t - 1)), t);
        // Versions Pika 4.0.0 wrote in seconds move to milliseconds.
        assert_eq!(next_version(t * 1000, Some(1_700_000_000)), t);
        assert_eq!(next_version(0, Some(u64::MAX)), 0);
    }
}
