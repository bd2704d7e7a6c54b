//! The version of a key (`src/db_nemo_impl.cc` of nemo-rocksdb): a `u32`
//! that nemo-rocksdb stamps in the suffix of every value of the key. It is
//! chosen by the write API a command uses:
//!
//! | API (used by) | previous metadata | new version |
//! |---|---|---|
//! | `WriteWithKeyVersion` via `PutWithKeyVersion` (`DEL`, `EXPIRE` ≤ 0) | any, or missing (0) | `now` if `now > old`, else `old + 1` |
//! | `WriteWithOldKeyTTL` (`HSET`, `SADD`, `ZADD`, `LPUSH`, …) | missing | `now` |
//! | `WriteWithOldKeyTTL` | expired (`ts != 0 && ts < now`) | `old + 1`, timestamp reset to 0 |
//! | `WriteWithOldKeyTTL` | present, not expired (also size 0) | `old`, timestamp kept |
//! | `Put` / `Write` (`HDEL`, `LSET`, `EXPIRE`) | any | the metadata's version |
//!
//! `now` is the clock in whole seconds. [`next_version`] is the first row
//! (and, with `previous = None`, the second): the rule the engine applies
//! whenever it needs a new version. Where nemo takes another row, the bytes
//! differ but no reader can tell: every rule gives a version above the old
//! one, so older elements stay hidden. See `formats-spec/nemo.md` §5.

/// The version for a key whose previous version was `previous`, at
/// `now_us` (unix microseconds): `now_s` when there was none or when
/// `now_s > previous`, else `previous + 1` (wrapping as `uint32_t` does).
pub fn next_version(now_us: u64, previous: Option<u64>) -> u64 {
    let now_s = u32::try_from(now_us / 1_000_000).unwrap_or(u32::MAX);
    let version = match previous {
        None => now_s,
        Some(old) => {
            let old = u32::try_from(old).unwrap_or(u32::MAX);
            if now_s <= old {
                old.wrapping_add(1)
            } else {
                now_s
            }
        }
    };
    u64::from(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u64 = 1_700_000_000;
    const NOW_US: u64 = T * 1_000_000 + 999_999;

    #[test]
    fn rule() {
        // Missing metadata: now (WriteWithOldKeyTTL, meta not found).
        assert_eq!(next_version(NOW_US, None), T);
        // Older version: now (PutWithKeyVersion).
        assert_eq!(next_version(NOW_US, Some(T - 100)), T);
        // Same second or a version from the future: old + 1.
        assert_eq!(next_version(NOW_US, Some(T)), T + 1);
        assert_eq!(next_version(NOW_US, Some(T + 7)), T + 8);
        // uint32 wrap-around.
        assert_eq!(next_version(NOW_US, Some(u64::from(u32::MAX))), 0);
        // No panic at the extremes.
        assert_eq!(next_version(u64::MAX, None), u64::from(u32::MAX));
        assert_eq!(next_version(0, Some(u64::MAX)), 0);
    }
}
