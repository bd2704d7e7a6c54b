//! Intsets (`intset.c`): encoding (2, 4 or 8: bytes per integer) u32 LE,
//! count u32 LE, then the integers in ascending order, little-endian.

use redcodec_codec::Reader;

use crate::error::{bad, DumpResult};

/// The members of an intset, as decimal text; they must ascend strictly.
pub(crate) fn decode(blob: &[u8]) -> DumpResult<Vec<Vec<u8>>> {
    let mut r = Reader::new("intset", blob);
    let width = r.u32_le()? as usize;
    let count = r.u32_le()? as usize;
    if !matches!(width, 2 | 4 | 8) || Some(r.remaining()) != count.checked_mul(width) {
        return Err(bad("intset header does not match its size"));
    }
    let mut members = Vec::with_capacity(count);
    let mut prev: Option<i64> = None;
    for _ in 0..count {
        let b = r.take(width)?;
        let v = match width {
            2 => i64::from(i16::from_le_bytes([b[0], b[1]])),
            4 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        };
        if prev.is_some_and(|p| p >= v) {
            return Err(bad("intset not in ascending order"));
        }
        prev = Some(v);
        members.push(v.to_string().into_bytes());
    }
    Ok(members)
}

/// An intset of `values` (sorted here), in the narrowest encoding that
/// holds them all.
pub(crate) fn encode(values: &mut [i64]) -> Vec<u8> {
    values.sort_unstable();
    let fits = |lo: i64, hi: i64| values.iter().all(|v| (lo..=hi).contains(v));
    let width: usize = if fits(i16::MIN.into(), i16::MAX.into()) {
        2
    } else if fits(i32::MIN.into(), i32::MAX.into()) {
        4
    } else {
        8
    };
    let mut out = Vec::with_capacity(8 + width * values.len());
    out.extend_from_slice(&(width as u32).to_le_bytes());
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    for v in values.iter() {
        out.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    out
}
