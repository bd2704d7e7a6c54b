//! `ardb.merger` on arbitrary keys, base values and operands.
//!
//! Input: one flags byte (bit 0: there is a base value), then up to 8
//! [`crate::chunks`]: the key, the base, and the operands (oldest first).

use redcodec_ardb::merge::full_merge;

/// The largest merged value checked again: a value near Redis' 512 MiB
/// limit, merged again, would hold several copies at once under the
/// sanitizer, past the run's RSS limit (`scripts/fuzz`).
const RECHECKED: usize = 64 << 20;

/// Runs the full merge; no panic, and no allocation beyond what the
/// operands ask within Redis' limits (the fuzzer's memory limit catches the
/// rest). A merge that succeeds is stable: merging its result again as a
/// base with no operand gives it back (for results up to [`RECHECKED`]).
pub fn ardb(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let parts = crate::chunks(rest, 8);
    let (key, base) = (parts[0], parts[1]);
    let base = (flags & 1 == 1).then_some(base);
    let mut operands = parts[2..].iter().copied().filter(|p| !p.is_empty());
    if let Ok(merged) = full_merge(key, base, &mut operands) {
        if !merged.is_empty() && merged.len() <= RECHECKED {
            let again = full_merge(key, Some(&merged), &mut std::iter::empty());
            assert_eq!(again.as_deref(), Ok(&merged[..]), "{key:02x?}");
        }
    }
}
