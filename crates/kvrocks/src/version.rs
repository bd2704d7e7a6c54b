//! The version stamped on every subkey of a key (`Metadata::generateVersion`,
//! `src/storage/redis_metadata.cc`): the clock in microseconds shifted left
//! by 11 bits, plus a running counter modulo 2048. Kvrocks seeds its counter
//! randomly at start-up; redcodec takes the counter from the engine.

/// Bits of the version taken by the counter.
pub const COUNTER_BITS: u32 = 11;

/// `(now_us << 11) + (counter % 2048)`, wrapping like Kvrocks' unsigned
/// arithmetic.
pub fn next_version(now_us: u64, counter: u64) -> u64 {
    (now_us << COUNTER_BITS).wrapping_add(counter % (1 << COUNTER_BITS))
}

/// The creation time, in unix microseconds, a version records.
pub fn created_us(version: u64) -> u64 {
    version >> COUNTER_BITS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_clock() {
        assert_eq!(
            next_version(1_700_000_000_000_000, 0),
            0x3051_20C0_F200_0000
        );
        assert_eq!(
            next_version(1_700_000_000_000_000, 2049),
            0x3051_20C0_F200_0001
        );
        assert_eq!(created_us(0x3051_20C0_F200_07FF), 1_700_000_000_000_000);
        // No overflow panic at the extremes.
        assert_eq!(next_version(u64::MAX, u64::MAX), u64::MAX);
    }
}
