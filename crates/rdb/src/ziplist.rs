//! Ziplists (`ziplist.c`, read only: Redis 7.0 loads them from older
//! payloads and converts them): a 10-byte header (total bytes u32 LE,
//! offset of the last entry u32 LE, count u16 LE, 65535 = unknown),
//! entries of previous-length ‖ encoding ‖ data, and `0xff`.

use redcodec_codec::Reader;

use crate::error::{bad, DumpResult};

const HEADER: usize = 10;

fn signed_le(b: &[u8]) -> i64 {
    let u = b.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x));
    let shift = 64 - 8 * b.len() as u32;
    ((u << shift) as i64) >> shift
}

/// Every entry of a ziplist, integers as their decimal text; header,
/// previous lengths, the tail offset and the terminator are checked.
pub(crate) fn decode(blob: &[u8]) -> DumpResult<Vec<Vec<u8>>> {
    if blob.len() < HEADER + 1 {
        return Err(bad("ziplist shorter than its header"));
    }
    let mut r = Reader::new("ziplist", blob);
    let total = r.u32_le()? as usize;
    let tail = r.u32_le()? as usize;
    let b = r.take(2)?;
    let count = u16::from_le_bytes([b[0], b[1]]);
    let end = blob.len() - 1;
    if total != blob.len() || blob[end] != 0xff {
        return Err(bad("ziplist size or terminator wrong"));
    }
    let mut items = Vec::with_capacity(usize::from(count).min(end / 2));
    let (mut prev_len, mut last) = (0usize, HEADER);
    while r.offset() < end {
        let start = r.offset();
        let stated_prev = match r.u8()? {
            0xfe => r.u32_le()? as usize,
            0xff => return Err(bad("ziplist previous length 0xff")),
            n => usize::from(n),
        };
        if stated_prev != prev_len {
            return Err(bad("ziplist previous length wrong"));
        }
        let enc = r.u8()?;
        let item = match enc >> 6 {
            0 => r.take(usize::from(enc & 0x3f))?.to_vec(),
            1 => {
                let n = usize::from(enc & 0x3f) << 8 | usize::from(r.u8()?);
                r.take(n)?.to_vec()
            }
            2 => {
                let n = r.u32_be()? as usize;
                r.take(n)?.to_vec()
            }
            _ => {
                let v = match enc {
                    0xc0 => signed_le(r.take(2)?),
                    0xd0 => signed_le(r.take(4)?),
                    0xe0 => signed_le(r.take(8)?),
                    0xf0 => signed_le(r.take(3)?),
                    0xfe => signed_le(r.take(1)?),
                    0xf1..=0xfd => i64::from(enc & 0x0f) - 1,
                    _ => return Err(bad(format!("ziplist encoding {enc:#04x}"))),
                };
                v.to_string().into_bytes()
            }
        };
        prev_len = r.offset() - start;
        last = start;
        items.push(item);
    }
    if r.offset() != end {
        return Err(bad("ziplist entry overruns its end"));
    }
    if tail != last {
        return Err(bad("ziplist tail offset wrong"));
    }
    if count != u16::MAX && usize::from(count) != items.len() {
        return Err(bad("ziplist count wrong"));
    }
    Ok(items)
}
