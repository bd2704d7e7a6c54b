//! The HLL string's layout: its sizes, encodings and the reply texts of
//! what is wrong with one (the leaf the other parts of [`super`] share).

/// Register index bits: 2^14 registers.
pub(super) const P: u32 = 14;
/// Hash bits left for the run of zeroes.
pub(super) const Q: u32 = 64 - P;
/// Registers.
pub(crate) const REGISTERS: usize = 1 << P;
/// Bits per dense register.
pub(super) const BITS: usize = 6;
/// The largest register value.
pub(super) const REGISTER_MAX: u8 = (1 << BITS) - 1;
/// Header bytes.
pub(crate) const HDR: usize = 16;
/// A dense HLL's whole length.
pub(crate) const DENSE_SIZE: usize = HDR + (REGISTERS * BITS).div_ceil(8);
/// Redis' `hll-sparse-max-bytes` default: a sparse HLL that would grow
/// past it becomes dense.
pub(super) const SPARSE_MAX_BYTES: usize = 3000;
/// The header's fifth byte of a dense HLL.
pub(super) const DENSE: u8 = 0;
/// The header's fifth byte of a sparse HLL.
pub(super) const SPARSE: u8 = 1;

/// Why bytes are not an HLL to work on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HllError {
    /// Not an HLL string (Redis' `isHLLObjectOrReply`).
    NotHll,
    /// Its registers do not add up (Redis' `INVALIDOBJ`).
    Corrupted,
}

/// The reply texts of [`HllError`], as Redis sends them.
impl HllError {
    pub(crate) fn text(self) -> &'static str {
        match self {
            HllError::NotHll => "WRONGTYPE Key is not a valid HyperLogLog string value.",
            HllError::Corrupted => "INVALIDOBJ Corrupted HLL object detected",
        }
    }
}

/// Marks the cached cardinality stale.
pub(crate) fn invalidate_cache(value: &mut [u8]) {
    value[15] |= 0x80;
}
