//! RDB lengths, strings (plain, integer-encoded, LZF-compressed) and
//! doubles, as `rdbSaveLen`, `rdbSaveRawString` and
//! `rdbSaveBinaryDoubleValue` write them and the loader reads them.

use redcodec_codec::number::{parse_f64, parse_i64};
use redcodec_codec::Reader;

use crate::error::{bad, DumpResult};

/// How far one LZF byte can expand: a 3-byte back reference copies up to
/// 264 bytes. A stated length beyond `88 ×` the compressed bytes is a lie,
/// refused before anything is allocated.
const LZF_MAX_RATIO: u64 = 88;

/// Strings of at most this many bytes are never compressed (Redis: "under
/// 20 bytes it's unable to compress even aaaaaaaaaaaaaaaaaa").
const LZF_MIN_LEN: usize = 21;

/// How strings are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodeOptions {
    /// LZF-compress strings longer than 20 bytes when that saves at least
    /// 4 bytes (Redis' `rdbcompression yes`, the default).
    pub compression: bool,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions { compression: true }
    }
}

/// A length or, with the two top bits set, a special string encoding.
enum LenOrEnc {
    Len(u64),
    Enc(u8),
}

fn read_len_or_enc(r: &mut Reader<'_>) -> DumpResult<LenOrEnc> {
    let b = r.u8()?;
    Ok(match b >> 6 {
        0 => LenOrEnc::Len(u64::from(b & 0x3f)),
        1 => LenOrEnc::Len(u64::from(b & 0x3f) << 8 | u64::from(r.u8()?)),
        2 => match b {
            0x80 => LenOrEnc::Len(u64::from(r.u32_be()?)),
            0x81 => LenOrEnc::Len(r.u64_be()?),
            _ => return Err(bad(format!("unknown length prefix {b:#04x}"))),
        },
        _ => LenOrEnc::Enc(b & 0x3f),
    })
}

/// A plain RDB length.
pub(crate) fn read_len(r: &mut Reader<'_>) -> DumpResult<u64> {
    match read_len_or_enc(r)? {
        LenOrEnc::Len(n) => Ok(n),
        LenOrEnc::Enc(_) => Err(bad("an encoded string where a length belongs")),
    }
}

/// A count of items that take at least `min_bytes` bytes each: refused when
/// the rest of the input cannot hold them, so callers may reserve it.
pub(crate) fn read_count(r: &mut Reader<'_>, min_bytes: usize) -> DumpResult<usize> {
    let n = read_len(r)?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n.saturating_mul(min_bytes) <= r.remaining())
        .ok_or_else(|| bad(format!("{n} items cannot fit in {} bytes", r.remaining())))
}

fn take_len<'a>(r: &mut Reader<'a>, n: u64) -> DumpResult<&'a [u8]> {
    let n = usize::try_from(n).map_err(|_| bad("string longer than the address space"))?;
    Ok(r.take(n)?)
}

/// An RDB string, whichever way it was written.
pub(crate) fn read_string(r: &mut Reader<'_>) -> DumpResult<Vec<u8>> {
    match read_len_or_enc(r)? {
        LenOrEnc::Len(n) => Ok(take_len(r, n)?.to_vec()),
        LenOrEnc::Enc(0) => Ok(i8::from_le_bytes([r.u8()?]).to_string().into_bytes()),
        LenOrEnc::Enc(1) => {
            let b = r.take(2)?;
            Ok(i16::from_le_bytes([b[0], b[1]]).to_string().into_bytes())
        }
        LenOrEnc::Enc(2) => Ok(r.i32_le()?.to_string().into_bytes()),
        LenOrEnc::Enc(3) => {
            let clen = read_len(r)?;
            let len = read_len(r)?;
            let compressed = take_len(r, clen)?;
            if len == 0 || len > clen.saturating_mul(LZF_MAX_RATIO) {
                return Err(bad(format!(
                    "LZF string of {clen} bytes cannot expand to {len}"
                )));
            }
            let len = usize::try_from(len).map_err(|_| bad("LZF length"))?;
            match lzf::decompress(compressed, len) {
                Ok(out) if out.len() == len => Ok(out),
                _ => Err(bad("invalid LZF compressed string")),
            }
        }
        LenOrEnc::Enc(e) => Err(bad(format!("unknown string encoding {e}"))),
    }
}

/// A double written as text after a one-byte length (the old `ZSET`
/// type): 253 is NaN, 254 +inf, 255 -inf.
pub(crate) fn read_text_double(r: &mut Reader<'_>) -> DumpResult<f64> {
    match r.u8()? {
        253 => Ok(f64::NAN),
        254 => Ok(f64::INFINITY),
        255 => Ok(f64::NEG_INFINITY),
        n => parse_f64(r.take(usize::from(n))?).ok_or_else(|| bad("unreadable double")),
    }
}

/// Appends an RDB length in its shortest form.
pub(crate) fn put_len(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else if let Ok(n) = u32::try_from(n) {
        put_tagged(out, 0x80, &n.to_be_bytes());
    } else {
        put_tagged(out, 0x81, &n.to_be_bytes());
    }
}

/// Appends the one-byte `tag` and then `bytes`.
fn put_tagged(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    out.extend_from_slice(bytes);
}

/// The integer `s` spells, if Redis would store it integer-encoded: it
/// reads back as exactly `s` (`string2ll`) and fits 32 bits.
fn as_small_int(s: &[u8]) -> Option<i32> {
    if s.len() > 11 {
        return None;
    }
    parse_i64(s).and_then(|v| i32::try_from(v).ok())
}

/// `s` LZF-compressed, when it compresses at all. The `lzf` crate's
/// compressor indexes past its output buffer on some input that does not
/// compress (a run of 32 literals ending at the buffer's end, then a back
/// reference: `crates/rdb/tests/payloads.rs` holds one); that input is
/// written plain, as redis-server writes it, instead of the panic.
fn lzf_compress(s: &[u8]) -> Option<Vec<u8>> {
    std::panic::catch_unwind(|| lzf::compress(s)).ok()?.ok()
}

/// Appends a string as `rdbSaveRawString` does: integer-encoded when it
/// is a 32-bit integer's canonical text, LZF-compressed when longer than
/// 20 bytes and compression saves at least 4 bytes, else plain.
pub(crate) fn put_string(out: &mut Vec<u8>, s: &[u8], opts: EncodeOptions) {
    if let Some(v) = as_small_int(s) {
        if let Ok(v) = i8::try_from(v) {
            put_tagged(out, 0xc0, &v.to_le_bytes());
        } else if let Ok(v) = i16::try_from(v) {
            put_tagged(out, 0xc1, &v.to_le_bytes());
        } else {
            put_tagged(out, 0xc2, &v.to_le_bytes());
        }
        return;
    }
    if opts.compression && s.len() >= LZF_MIN_LEN {
        if let Some(compressed) = lzf_compress(s) {
            if compressed.len() <= s.len() - 4 {
                out.push(0xc3);
                put_len(out, compressed.len() as u64);
                put_len(out, s.len() as u64);
                out.extend_from_slice(&compressed);
                return;
            }
        }
    }
    put_len(out, s.len() as u64);
    out.extend_from_slice(s);
}
