//! The dense registers: 16,384 six-bit values packed little-endian, the
//! first register in the low bits of the first byte.

use super::layout::{BITS, REGISTERS, REGISTER_MAX};

/// Register `index` of `registers`.
pub(super) fn get(registers: &[u8], index: usize) -> u8 {
    let byte = index * BITS / 8;
    let shift = (index * BITS) & 7;
    let b0 = u16::from(registers[byte]);
    // The last register reads one byte past the registers in Redis (its
    // string's terminator, 0); its bits there are masked out anyway.
    let b1 = u16::from(registers.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> shift) | (b1 << (8 - shift))) & u16::from(REGISTER_MAX)) as u8
}

/// Raises register `index` to `count`; whether it grew.
pub(super) fn set(registers: &mut [u8], index: usize, count: u8) -> bool {
    if count <= get(registers, index) {
        return false;
    }
    let byte = index * BITS / 8;
    let shift = (index * BITS) & 7;
    let value = u16::from(count);
    let max = u16::from(REGISTER_MAX);
    registers[byte] &= !((max << shift) as u8);
    registers[byte] |= (value << shift) as u8;
    if let Some(next) = registers.get_mut(byte + 1) {
        *next &= !((max >> (8 - shift)) as u8);
        *next |= (value >> (8 - shift)) as u8;
    }
    true
}

/// Counts each register value into `histogram`.
pub(super) fn histogram(registers: &[u8], histogram: &mut [u32; 64]) {
    for index in 0..REGISTERS {
        histogram[usize::from(get(registers, index))] += 1;
    }
}
