//! The sparse registers: a run-length sequence of opcodes after the
//! header, as Redis writes them.
//!
//! - `00xxxxxx` ZERO: 1–64 registers at 0;
//! - `01xxxxxx yyyyyyyy` XZERO: 1–16,384 registers at 0;
//! - `1vvvvvxx` VAL: 1–4 registers at the value 1–32.

use super::dense_registers as dense;
use super::layout::{
    invalidate_cache, HllError, DENSE, DENSE_SIZE, HDR, REGISTERS, SPARSE_MAX_BYTES,
};

/// The longest run of one XZERO opcode.
pub(super) const XZERO_MAX_LEN: usize = 16384;
/// The longest run of one ZERO opcode.
const ZERO_MAX_LEN: usize = 64;
/// The largest value a VAL opcode holds.
const VAL_MAX_VALUE: u8 = 32;
/// The longest run of one VAL opcode.
const VAL_MAX_LEN: usize = 4;

fn is_xzero(b: u8) -> bool {
    b & 0xc0 == 0x40
}

fn is_zero(b: u8) -> bool {
    b & 0xc0 == 0
}

fn is_val(b: u8) -> bool {
    b & 0x80 != 0
}

fn val_value(b: u8) -> u8 {
    ((b >> 2) & 0x1f) + 1
}

fn val_len(b: u8) -> usize {
    usize::from(b & 0x3) + 1
}

/// The VAL opcode for `len` registers at `value`.
fn val(value: u8, len: usize) -> u8 {
    (((value - 1) << 2) | (len - 1) as u8) | 0x80
}

/// Appends the opcode(s) of a run of `len` zero registers to `seq`: ZERO
/// up to 64, XZERO above.
fn push_zeros(seq: &mut Vec<u8>, len: usize) {
    if len > ZERO_MAX_LEN {
        push_xzero(seq, len);
    } else {
        seq.push((len - 1) as u8);
    }
}

/// Appends the XZERO opcode for `len` zero registers.
pub(super) fn push_xzero(seq: &mut Vec<u8>, len: usize) {
    let l = len - 1;
    seq.push((l >> 8) as u8 | 0x40);
    seq.push((l & 0xff) as u8);
}

/// One opcode at `p` of `bytes`: the registers it covers, their value,
/// and its length in bytes. An XZERO cut at the end reads its second
/// byte as 0 (Redis reads the string's terminator).
fn opcode(bytes: &[u8], p: usize) -> (usize, u8, usize) {
    let b = bytes[p];
    if is_zero(b) {
        (usize::from(b & 0x3f) + 1, 0, 1)
    } else if is_xzero(b) {
        let low = usize::from(bytes.get(p + 1).copied().unwrap_or(0));
        (((usize::from(b & 0x3f) << 8) | low) + 1, 0, 2)
    } else {
        (val_len(b), val_value(b), 1)
    }
}

/// Calls `each(first_register, run, value)` for every opcode of the
/// registers `bytes`; corrupted when they cover other than 16,384.
fn walk(bytes: &[u8], mut each: impl FnMut(usize, usize, u8)) -> Result<(), HllError> {
    let mut p = 0;
    let mut index = 0;
    while p < bytes.len() {
        let (run, value, len) = opcode(bytes, p);
        if index + run > REGISTERS {
            return Err(HllError::Corrupted);
        }
        each(index, run, value);
        index += run;
        p += len;
    }
    if index == REGISTERS {
        Ok(())
    } else {
        Err(HllError::Corrupted)
    }
}

/// Counts each register value into `histogram`.
pub(super) fn histogram(bytes: &[u8], histogram: &mut [u32; 64]) -> Result<(), HllError> {
    walk(bytes, |_, run, value| {
        histogram[usize::from(value)] += run as u32;
    })
}

/// Raises each register of `max` to this HLL's.
pub(super) fn merge_into(max: &mut [u8; REGISTERS], bytes: &[u8]) -> Result<(), HllError> {
    walk(bytes, |first, run, value| {
        for m in &mut max[first..first + run] {
            *m = (*m).max(value);
        }
    })
}

/// The dense HLL of the sparse `value`, its header kept (Redis'
/// `hllSparseToDense`).
pub(super) fn to_dense(value: &[u8]) -> Result<Vec<u8>, HllError> {
    let mut out = vec![0u8; DENSE_SIZE];
    out[..HDR].copy_from_slice(&value[..HDR]);
    out[4] = DENSE;
    let registers = &mut out[HDR..];
    walk(&value[HDR..], |first, run, v| {
        if v > 0 {
            for index in first..first + run {
                dense::set(registers, index, v);
            }
        }
    })?;
    Ok(out)
}

/// Raises register `index` of the sparse `value` to `count`; whether it
/// grew. Promotes `value` to dense when the count does not fit a VAL
/// opcode or the sequence would grow past [`SPARSE_MAX_BYTES`] (Redis'
/// `hllSparseSet`, step by step).
pub(super) fn set(value: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, HllError> {
    if count > VAL_MAX_VALUE {
        return promote(value, index, count);
    }
    // Step 1: the opcode covering `index`, and the one before it.
    let mut p = HDR;
    let mut first = 0;
    let mut prev = None;
    let mut span = 0;
    let mut oplen = 1;
    while p < value.len() {
        (span, _, oplen) = opcode(value, p);
        if index < first + span {
            break;
        }
        prev = Some(p);
        p += oplen;
        first += span;
    }
    if span == 0 || p >= value.len() {
        return Err(HllError::Corrupted);
    }
    let op = value[p];
    // Step 2: a VAL at least as high changes nothing; a run of one is
    // changed in place.
    if is_val(op) {
        if val_value(op) >= count {
            return Ok(false);
        }
        if span == 1 {
            value[p] = val(count, 1);
            merge_adjacent(value, prev);
            return Ok(true);
        }
    } else if is_zero(op) && span == 1 {
        value[p] = val(count, 1);
        merge_adjacent(value, prev);
        return Ok(true);
    }
    // The general case: the run split in up to three opcodes.
    let last = first + span - 1;
    let mut seq = Vec::with_capacity(5);
    if is_val(op) {
        let current = val_value(op);
        if index != first {
            seq.push(val(current, index - first));
        }
        seq.push(val(count, 1));
        if index != last {
            seq.push(val(current, last - index));
        }
    } else {
        if index != first {
            push_zeros(&mut seq, index - first);
        }
        seq.push(val(count, 1));
        if index != last {
            push_zeros(&mut seq, last - index);
        }
    }
    // Step 3: the sequence replaces the opcode, unless it grows too long.
    if seq.len() > oplen && value.len() + seq.len() - oplen > SPARSE_MAX_BYTES {
        return promote(value, index, count);
    }
    // An XZERO cut at the end (a corrupted value) loses a byte here, as
    // in Redis, which counts the opcode's two bytes in the new length.
    let new_len = value.len() + seq.len() - oplen;
    let tail = (p + oplen).min(value.len());
    value.splice(p..tail, seq);
    value.truncate(new_len);
    merge_adjacent(value, prev);
    Ok(true)
}

/// Step 4 of Redis' `hllSparseSet`: from the opcode before the change,
/// up to five opcodes on, two adjacent VALs of one value whose runs fit
/// one opcode become one; then the cached cardinality is stale.
fn merge_adjacent(value: &mut Vec<u8>, prev: Option<usize>) {
    let mut p = prev.unwrap_or(HDR);
    let mut scan = 5;
    while p < value.len() && scan > 0 {
        scan -= 1;
        let b = value[p];
        if is_xzero(b) {
            p += 2;
            continue;
        }
        if is_zero(b) {
            p += 1;
            continue;
        }
        if let Some(&next) = value.get(p + 1) {
            if is_val(next) && val_value(b) == val_value(next) {
                let len = val_len(b) + val_len(next);
                if len <= VAL_MAX_LEN {
                    value[p + 1] = val(val_value(b), len);
                    value.remove(p);
                    continue;
                }
            }
        }
        p += 1;
    }
    invalidate_cache(value);
}

/// Makes `value` dense and raises register `index` to `count` there.
fn promote(value: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, HllError> {
    *value = to_dense(value)?;
    Ok(dense::set(&mut value[HDR..], index, count))
}
