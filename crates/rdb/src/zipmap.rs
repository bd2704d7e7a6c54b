//! Zipmaps (`zipmap.c`, read only: hashes of RDB versions before 4): a
//! count byte (254 = unknown), then per pair key length ‖ key ‖ value
//! length ‖ free byte count ‖ value ‖ free bytes, and `0xff`. A length is
//! one byte below 254, else 254 and a u32 LE.

use redcodec_codec::Reader;

use crate::error::{bad, DumpResult};

const END: u8 = 0xff;

/// The length at `r`, or `None` at the terminator.
fn length(r: &mut Reader<'_>) -> DumpResult<Option<usize>> {
    Ok(match r.u8()? {
        END => None,
        254 => Some(r.u32_le()? as usize),
        n => Some(usize::from(n)),
    })
}

/// The field–value pairs of a zipmap.
pub(crate) fn decode(blob: &[u8]) -> DumpResult<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut r = Reader::new("zipmap", blob);
    let count = r.u8()?;
    let mut pairs = Vec::new();
    while let Some(klen) = length(&mut r)? {
        let field = r.take(klen)?.to_vec();
        let vlen = length(&mut r)?.ok_or_else(|| bad("zipmap field without a value"))?;
        let free = usize::from(r.u8()?);
        let value = r.take(vlen)?.to_vec();
        r.take(free)?;
        pairs.push((field, value));
    }
    if r.remaining() != 0 || (count < 254 && usize::from(count) != pairs.len()) {
        return Err(bad("zipmap count or end wrong"));
    }
    Ok(pairs)
}
