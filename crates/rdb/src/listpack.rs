//! Listpacks (`listpack.c`): a 6-byte header (total bytes u32 LE, count
//! u16 LE, 65535 = unknown), entries of encoding ‖ data ‖ back-length,
//! and a terminating `0xff`.

use redcodec_codec::number::parse_i64;
use redcodec_codec::Reader;

use crate::error::{bad, DumpResult};

const HEADER: usize = 6;
const EOF: u8 = 0xff;
const COUNT_UNKNOWN: u16 = u16::MAX;

/// The bytes of the back-length of an entry of `len` bytes: 7 bits a byte,
/// the most significant first, every byte but the first flagged 0x80.
fn backlen(len: usize, out: &mut Vec<u8>) {
    let len = len as u64;
    let n = match len {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    };
    for i in (0..n).rev() {
        let b = ((len >> (7 * i)) & 127) as u8;
        out.push(if i == n - 1 { b } else { b | 128 });
    }
}

/// Builds a listpack as `lpAppend` does, entry by entry.
pub(crate) struct ListpackWriter {
    buf: Vec<u8>,
    count: usize,
}

impl ListpackWriter {
    /// An empty listpack.
    pub(crate) fn new() -> ListpackWriter {
        ListpackWriter {
            buf: vec![0; HEADER],
            count: 0,
        }
    }

    /// Its size in bytes once finished (`lpBytes`).
    pub(crate) fn bytes(&self) -> usize {
        self.buf.len() + 1
    }

    /// Appends a string; one that spells an integer (`lpStringToInt64`) is
    /// stored as that integer.
    pub(crate) fn push(&mut self, s: &[u8]) {
        if let Some(v) = parse_i64(s) {
            return self.push_int(v);
        }
        let start = self.buf.len();
        let n = s.len();
        if n < 64 {
            self.buf.push(0x80 | n as u8);
        } else if n < 4096 {
            self.buf
                .extend_from_slice(&[0xe0 | (n >> 8) as u8, n as u8]);
        } else {
            self.buf.push(0xf0);
            self.buf.extend_from_slice(&(n as u32).to_le_bytes());
        }
        self.buf.extend_from_slice(s);
        self.end_entry(start);
    }

    /// Appends an integer in the smallest of the listpack's integer
    /// encodings.
    pub(crate) fn push_int(&mut self, v: i64) {
        let start = self.buf.len();
        let le = v.to_le_bytes();
        match v {
            0..=127 => self.buf.push(v as u8),
            -4096..=4095 => {
                let u = (v as u16) & 0x1fff;
                self.buf
                    .extend_from_slice(&[0xc0 | (u >> 8) as u8, u as u8]);
            }
            -32_768..=32_767 => {
                self.buf.push(0xf1);
                self.buf.extend_from_slice(&le[..2]);
            }
            -8_388_608..=8_388_607 => {
                self.buf.push(0xf2);
                self.buf.extend_from_slice(&le[..3]);
            }
            -2_147_483_648..=2_147_483_647 => {
                self.buf.push(0xf3);
                self.buf.extend_from_slice(&le[..4]);
            }
            _ => {
                self.buf.push(0xf4);
                self.buf.extend_from_slice(&le);
            }
        }
        self.end_entry(start);
    }

    fn end_entry(&mut self, start: usize) {
        let len = self.buf.len() - start;
        backlen(len, &mut self.buf);
        self.count += 1;
    }

    /// The finished listpack.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.buf.push(EOF);
        let total = self.buf.len() as u32;
        let count = u16::try_from(self.count).unwrap_or(COUNT_UNKNOWN);
        self.buf[..4].copy_from_slice(&total.to_le_bytes());
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

/// Sign-extends the low `bits` bits of `u`.
fn signed(u: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((u << shift) as i64) >> shift
}

fn le_uint(b: &[u8]) -> u64 {
    b.iter().rev().fold(0, |v, &x| v << 8 | u64::from(x))
}

/// Every entry of a listpack, integers as their decimal text; the header,
/// every back-length and the terminator are checked.
pub(crate) fn decode(blob: &[u8]) -> DumpResult<Vec<Vec<u8>>> {
    if blob.len() < HEADER + 1 {
        return Err(bad("listpack shorter than its header"));
    }
    let mut r = Reader::new("listpack", blob);
    let total = r.u32_le()?;
    let count = le_uint(r.take(2)?) as u16;
    if total as usize != blob.len() || blob[blob.len() - 1] != EOF {
        return Err(bad("listpack size or terminator wrong"));
    }
    let end = blob.len() - 1;
    let mut items = Vec::with_capacity(usize::from(count).min(end / 2));
    let mut back = Vec::with_capacity(5);
    while r.offset() < end {
        let start = r.offset();
        let b = r.u8()?;
        let item = match b {
            0x00..=0x7f => u64::from(b).to_string().into_bytes(),
            0x80..=0xbf => r.take(usize::from(b & 0x3f))?.to_vec(),
            0xc0..=0xdf => {
                let u = u64::from(b & 0x1f) << 8 | u64::from(r.u8()?);
                signed(u, 13).to_string().into_bytes()
            }
            0xe0..=0xef => {
                let n = usize::from(b & 0x0f) << 8 | usize::from(r.u8()?);
                r.take(n)?.to_vec()
            }
            0xf0 => {
                let n = r.u32_le()? as usize;
                r.take(n)?.to_vec()
            }
            0xf1..=0xf4 => {
                let width = [2, 3, 4, 8][usize::from(b - 0xf1)];
                let u = le_uint(r.take(width)?);
                signed(u, 8 * width as u32).to_string().into_bytes()
            }
            _ => return Err(bad(format!("listpack encoding {b:#04x}"))),
        };
        back.clear();
        backlen(r.offset() - start, &mut back);
        if r.take(back.len())? != back.as_slice() {
            return Err(bad("listpack back-length wrong"));
        }
        items.push(item);
    }
    if r.offset() != end {
        return Err(bad("listpack entry overruns its end"));
    }
    if count != COUNT_UNKNOWN && usize::from(count) != items.len() {
        return Err(bad("listpack count wrong"));
    }
    Ok(items)
}
