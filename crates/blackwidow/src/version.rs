//! Versions and the clock (`BaseMetaValue::UpdateVersion`,
//! `src/base_meta_value_format.h`; `Env::GetCurrentTime`).
//!
//! Blackwidow's clock is the unix time in **seconds, truncated to int32**,
//! and a version is an int32:
//!
//! ```text
//! UpdateVersion: if (version >= now) version++; else version = now;
//! ```
//!
//! A brand-new key starts from version 0, so it gets `now`.
//!
//! [`redcodec_codec::Meta::version`] holds the version's 32 bits
//! zero-extended (`v as u32 as u64`): versions 0..=i32::MAX read as
//! themselves, negative ones (only reachable by wrapping) as 2^31..2^32.

/// The clock in seconds at `now_us` (unix microseconds), as an int32.
///
/// Blackwidow casts the 64-bit seconds to int32 (wrapping in 2038). Here a
/// clock past `i32::MAX` seconds (2038-01-19T03:14:07Z) **saturates** at
/// `i32::MAX`; the engine refuses such clocks for this format, so this
/// only keeps the function total.
pub fn now_secs_from_us(now_us: u64) -> i32 {
    i32::try_from(now_us / 1_000_000).unwrap_or(i32::MAX)
}

/// The clock in seconds at `now_ms` (unix milliseconds), saturating like
/// [`now_secs_from_us`].
pub fn now_secs_from_ms(now_ms: u64) -> i32 {
    i32::try_from(now_ms / 1_000).unwrap_or(i32::MAX)
}

/// The int32 version a [`redcodec_codec::Meta::version`] stands for: its
/// low 32 bits (higher bits are never produced by this crate).
pub fn to_i32(version: u64) -> i32 {
    version as u32 as i32
}

/// The [`redcodec_codec::Meta::version`] of an int32 version.
pub fn widen(version: i32) -> u64 {
    u64::from(version as u32)
}

/// `UpdateVersion` applied to `previous` (0 for a key never seen) at the
/// int32 clock `now_s`.
///
/// At `previous == i32::MAX` with a clock not past it, `version++`
/// overflows; blackwidow (signed overflow, in practice wrapping) then
/// writes `i32::MIN`. This crate wraps the same way: the wrapped version is
/// one no live data uses, whereas saturating would reuse `i32::MAX` and
/// resurrect the deleted elements stamped with it.
pub fn update_version(previous: i32, now_s: i32) -> i32 {
    if previous >= now_s {
        previous.wrapping_add(1)
    } else {
        now_s
    }
}

/// The codec's `next_version`: `update_version(previous, now_s)` with
/// `now_s = now_us / 1e6` saturated to `i32::MAX` (see
/// [`now_secs_from_us`]), widened to u64.
pub fn next_version(now_us: u64, previous: Option<u64>) -> u64 {
    let previous = previous.map_or(0, to_i32);
    widen(update_version(previous, now_secs_from_us(now_us)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T_US: u64 = 1_700_000_000_000_000;
    const T: u64 = 1_700_000_000;

    #[test]
    fn reference_clock() {
        assert_eq!(next_version(T_US, None), T);
        assert_eq!(next_version(T_US + 999_999, None), T);
        assert_eq!(next_version(T_US, Some(5)), T);
        assert_eq!(next_version(T_US, Some(T - 1)), T);
        assert_eq!(next_version(T_US, Some(T)), T + 1);
        assert_eq!(next_version(T_US, Some(T + 7)), T + 8);
    }

    #[test]
    fn epoch_and_overflow() {
        // At the epoch a new key gets 0 >= 0, so version 1.
        assert_eq!(next_version(0, None), 1);
        // Clocks past 2038 saturate at i32::MAX.
        let far = (i32::MAX as u64 + 10) * 1_000_000;
        assert_eq!(now_secs_from_us(far), i32::MAX);
        assert_eq!(now_secs_from_ms(u64::MAX), i32::MAX);
        assert_eq!(next_version(far, None), i32::MAX as u64);
        // version++ at i32::MAX wraps to i32::MIN (bit pattern 0x8000_0000).
        assert_eq!(next_version(far, Some(i32::MAX as u64)), 0x8000_0000);
        assert_eq!(update_version(i32::MAX, 5), i32::MIN);
        // A negative previous version is below any clock.
        assert_eq!(next_version(T_US, Some(0x8000_0000)), T);
        assert_eq!(next_version(T_US, Some(0xFFFF_FFFF)), T);
    }

    #[test]
    fn widening_keeps_the_bits() {
        for v in [0, 1, -1, i32::MIN, i32::MAX, 0x6553_F100] {
            assert_eq!(to_i32(widen(v)), v);
        }
        assert_eq!(widen(-1), 0xFFFF_FFFF);
        assert_eq!(to_i32(0x1_0000_0005), 5);
    }
}
