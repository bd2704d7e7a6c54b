//! HyperLogLog strings, byte for byte as Redis 7.0 writes them
//! (`hyperloglog.c`): a string value holding a 16-byte header (`HYLL`,
//! the encoding, three zero bytes, the cached cardinality little-endian
//! with its top bit set while stale) and 16,384 six-bit registers, either
//! dense (packed, 12,288 bytes) or sparse (run-length opcodes, promoted to
//! dense past [`layout::SPARSE_MAX_BYTES`] or a register above 32). PFADD, PFCOUNT
//! and PFMERGE change these bytes exactly as Redis does, so a key copied
//! from Redis, or written by its replication stream, stays equal.

mod dense_registers;
mod estimate;
mod layout;
mod sparse_registers;

use dense_registers as dense;
use estimate::count_histogram;
pub(crate) use layout::{invalidate_cache, HllError, DENSE_SIZE, HDR, REGISTERS};
use layout::{DENSE, P, Q, SPARSE};
use sparse_registers as sparse;

/// Checks the header: the magic, a known encoding, a dense one's length.
pub(crate) fn check(value: &[u8]) -> Result<(), HllError> {
    if value.len() < HDR || &value[..4] != b"HYLL" || value[4] > SPARSE {
        return Err(HllError::NotHll);
    }
    if value[4] == DENSE && value.len() != DENSE_SIZE {
        return Err(HllError::NotHll);
    }
    Ok(())
}

/// A new, empty HLL: sparse, one XZERO opcode covering every register.
pub(crate) fn new_sparse() -> Vec<u8> {
    let mut value = vec![0u8; HDR];
    value[..4].copy_from_slice(b"HYLL");
    value[4] = SPARSE;
    let mut left = REGISTERS;
    while left > 0 {
        let run = left.min(sparse::XZERO_MAX_LEN);
        sparse::push_xzero(&mut value, run);
        left -= run;
    }
    value
}

/// Whether `value` (checked) is dense.
pub(crate) fn is_dense(value: &[u8]) -> bool {
    value[4] == DENSE
}

/// The cached cardinality, if valid.
pub(crate) fn cached(value: &[u8]) -> Option<u64> {
    (value[15] & 0x80 == 0).then(|| {
        let mut card = [0u8; 8];
        card.copy_from_slice(&value[8..16]);
        u64::from_le_bytes(card)
    })
}

/// Stores `card` as the cached cardinality.
pub(crate) fn set_cache(value: &mut [u8], card: u64) {
    value[8..16].copy_from_slice(&card.to_le_bytes());
}

/// Redis' MurmurHash64A (seed `0xadc83b19`), little-endian words.
fn murmur64a(key: &[u8]) -> u64 {
    const M: u64 = 0xc6a4a7935bd1e995;
    const R: u32 = 47;
    let mut h: u64 = 0xadc83b19u64 ^ (key.len() as u64).wrapping_mul(M);
    let mut chunks = key.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mut k = u64::from_le_bytes(word);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element goes to, and the length of its hash's run of
/// zeroes plus one (Redis' `hllPatLen`).
fn pattern(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// Adds `element`; whether a register grew. `value` was [`check`]ed.
pub(crate) fn add(value: &mut Vec<u8>, element: &[u8]) -> Result<bool, HllError> {
    let (index, count) = pattern(element);
    set_register(value, index, count)
}

/// Raises register `index` to `count`; whether it grew.
fn set_register(value: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, HllError> {
    if is_dense(value) {
        Ok(dense::set(&mut value[HDR..], index, count))
    } else {
        sparse::set(value, index, count)
    }
}

/// Raises each register of `max` to the value's (Redis' `hllMerge`).
pub(crate) fn merge_into(max: &mut [u8; REGISTERS], value: &[u8]) -> Result<(), HllError> {
    if is_dense(value) {
        for (i, m) in max.iter_mut().enumerate() {
            *m = (*m).max(dense::get(&value[HDR..], i));
        }
        Ok(())
    } else {
        sparse::merge_into(max, &value[HDR..])
    }
}

/// The cardinality the registers estimate (Redis' `hllCount`).
pub(crate) fn count(value: &[u8]) -> Result<u64, HllError> {
    let mut histogram = [0u32; 64];
    if is_dense(value) {
        dense::histogram(&value[HDR..], &mut histogram);
    } else {
        sparse::histogram(&value[HDR..], &mut histogram)?;
    }
    Ok(count_histogram(&histogram))
}

/// The cardinality of registers held one per byte (PFCOUNT of several
/// keys).
pub(crate) fn count_raw(max: &[u8; REGISTERS]) -> u64 {
    let mut histogram = [0u32; 64];
    for &r in max {
        histogram[usize::from(r)] += 1;
    }
    count_histogram(&histogram)
}

/// Writes `max`'s registers into `value` (PFMERGE's destination), dense
/// first when `to_dense`.
pub(crate) fn merge_from(
    value: &mut Vec<u8>,
    max: &[u8; REGISTERS],
    to_dense: bool,
) -> Result<(), HllError> {
    if to_dense && !is_dense(value) {
        *value = sparse::to_dense(value)?;
    }
    for (i, &m) in max.iter().enumerate() {
        if m != 0 {
            set_register(value, i, m)?;
        }
    }
    invalidate_cache(value);
    Ok(())
}

#[cfg(test)]
mod tests;
