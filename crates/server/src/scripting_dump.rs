//! FUNCTION DUMP and FUNCTION RESTORE payloads as Redis 7.0 writes them:
//! for each library `RDB_OPCODE_FUNCTION2` (245) and its code as an RDB
//! string, then the RDB version and CRC64 of every DUMP payload.
//! Written uncompressed; read with Redis' LZF-compressed and
//! integer-encoded strings too.

use redcodec_rdb::{seal, verify_footer};

/// `RDB_OPCODE_FUNCTION2`
const FUNCTION2: u8 = 245;

/// The payload for these libraries' codes.
pub fn dump(codes: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        out.push(FUNCTION2);
        put_len(&mut out, code.len() as u64);
        out.extend_from_slice(code);
    }
    seal(out)
}

/// The libraries' codes in a payload; `None` when its footer is wrong or
/// it holds anything but libraries.
pub fn restore(payload: &[u8]) -> Option<Vec<Vec<u8>>> {
    let body = verify_footer(payload).ok()?;
    let mut at = 0;
    let mut codes = Vec::new();
    while at < body.len() {
        if body[at] != FUNCTION2 {
            return None;
        }
        at += 1;
        codes.push(read_string(body, &mut at)?);
    }
    Some(codes)
}

fn put_len(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.push(0x40 | (n >> 8) as u8);
        out.push(n as u8);
    } else if n <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// A length, or an encoding (`Err(kind)`: the low six bits of `0b11……`).
fn read_len(b: &[u8], at: &mut usize) -> Option<Result<u64, u8>> {
    let first = *b.get(*at)?;
    *at += 1;
    Some(match first >> 6 {
        0 => Ok(u64::from(first & 0x3f)),
        1 => {
            let next = *b.get(*at)?;
            *at += 1;
            Ok((u64::from(first & 0x3f) << 8) | u64::from(next))
        }
        2 if first == 0x80 => {
            let v = b.get(*at..*at + 4)?;
            *at += 4;
            Ok(u64::from(u32::from_be_bytes(v.try_into().ok()?)))
        }
        2 if first == 0x81 => {
            let v = b.get(*at..*at + 8)?;
            *at += 8;
            Ok(u64::from_be_bytes(v.try_into().ok()?))
        }
        2 => return None,
        _ => Err(first & 0x3f),
    })
}

fn read_string(b: &[u8], at: &mut usize) -> Option<Vec<u8>> {
    match read_len(b, at)? {
        Ok(n) => {
            let n = usize::try_from(n).ok()?;
            let s = b.get(*at..*at + n)?.to_vec();
            *at += n;
            Some(s)
        }
        Err(kind @ 0..=2) => {
            let width = 1usize << kind;
            let v = b.get(*at..*at + width)?;
            *at += width;
            let n: i64 = match kind {
                0 => i64::from(v[0] as i8),
                1 => i64::from(i16::from_le_bytes(v.try_into().ok()?)),
                _ => i64::from(i32::from_le_bytes(v.try_into().ok()?)),
            };
            Some(n.to_string().into_bytes())
        }
        Err(3) => {
            let clen = usize::try_from(read_len(b, at)?.ok()?).ok()?;
            let len = usize::try_from(read_len(b, at)?.ok()?).ok()?;
            let compressed = b.get(*at..*at + clen)?;
            *at += clen;
            lzf_decompress(compressed, len)
        }
        Err(_) => None,
    }
}

/// LZF decompression (the format Redis compresses RDB strings with).
fn lzf_decompress(input: &[u8], len: usize) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(len);
    let mut i = 0;
    while i < input.len() {
        let ctrl = usize::from(input[i]);
        i += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            out.extend_from_slice(input.get(i..i + run)?);
            i += run;
        } else {
            let mut n = ctrl >> 5;
            if n == 7 {
                n += usize::from(*input.get(i)?);
                i += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + usize::from(*input.get(i)?) + 1;
            i += 1;
            let start = out.len().checked_sub(back)?;
            for k in 0..n + 2 {
                let byte = out[start + k];
                out.push(byte);
            }
        }
        if out.len() > len {
            return None;
        }
    }
    (out.len() == len).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::{dump, restore};

    #[test]
    fn a_dump_restores_its_libraries() {
        let codes = vec![b"#!lua name=a\n".to_vec(), vec![b'x'; 20_000]];
        assert_eq!(restore(&dump(&codes)), Some(codes));
        let mut bad = dump(&[b"x".to_vec()]);
        bad[2] ^= 1;
        assert_eq!(restore(&bad), None);
    }
}
