//! A bounds-checked cursor over record bytes: every read returns a
//! [`DecodeError`] instead of panicking.

use byteorder::{BigEndian, ByteOrder, LittleEndian};

use crate::DecodeError;

/// The fixed-width reads of [`Reader`]: each `name: type = read;` becomes
/// a method that takes `size_of::<type>()` bytes and decodes them with
/// `read` (a `byteorder` function).
macro_rules! fixed_width_reads {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $read:path;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(&mut self) -> Result<$ty, DecodeError> {
                Ok($read(self.take(std::mem::size_of::<$ty>())?))
            }
        )*
    };
}

/// Reads fields from a record, front to back.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    record: &'static str,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`; `record` names the record in errors.
    #[inline]
    pub fn new(record: &'static str, buf: &'a [u8]) -> Reader<'a> {
        Reader {
            buf,
            pos: 0,
            record,
        }
    }

    /// Bytes not read yet.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Current offset.
    #[inline]
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Takes the next `n` bytes.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(DecodeError::Truncated {
                record: self.record,
                offset: self.pos,
                needed: n,
                available: self.remaining(),
            });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// Takes everything left.
    #[inline]
    pub fn rest(&mut self) -> &'a [u8] {
        let out = &self.buf[self.pos..];
        self.pos = self.buf.len();
        out
    }

    /// Takes everything left but the last `n` bytes, which stay unread.
    pub fn all_but(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let len = self
            .remaining()
            .checked_sub(n)
            .ok_or(DecodeError::Truncated {
                record: self.record,
                offset: self.pos,
                needed: n,
                available: self.remaining(),
            })?;
        self.take(len)
    }

    /// One byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fixed_width_reads! {
        /// Big-endian u16.
        u16_be: u16 = BigEndian::read_u16;
        /// Big-endian u32.
        u32_be: u32 = BigEndian::read_u32;
        /// Big-endian u64.
        u64_be: u64 = BigEndian::read_u64;
        /// Little-endian u32.
        u32_le: u32 = LittleEndian::read_u32;
        /// Little-endian i32.
        i32_le: i32 = LittleEndian::read_i32;
        /// Little-endian u64.
        u64_le: u64 = LittleEndian::read_u64;
        /// Little-endian i64.
        i64_le: i64 = LittleEndian::read_i64;
        /// Little-endian IEEE-754 double.
        f64_le: f64 = LittleEndian::read_f64;
    }

    /// Fails unless every byte was read.
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.remaining() == 0 {
            Ok(())
        } else {
            Err(self.invalid(format!("{} trailing bytes", self.remaining())))
        }
    }

    /// An [`DecodeError::Invalid`] for this record.
    pub fn invalid(&self, reason: impl Into<String>) -> DecodeError {
        DecodeError::Invalid {
            record: self.record,
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_in_order_and_reports_truncation() {
        let bytes = [0x01, 0x00, 0x02, 0xff];
        let mut r = Reader::new("test record", &bytes);
        assert_eq!(r.u8().unwrap(), 1);
        assert_eq!(r.u16_be().unwrap(), 2);
        let err = r.u32_le().unwrap_err();
        assert_eq!(
            err.to_string(),
            "corrupt test record: needs 4 more bytes at offset 3, has 1"
        );
        assert_eq!(r.rest(), &[0xff]);
        r.finish().unwrap();
    }

    #[test]
    fn all_but_keeps_a_suffix() {
        let mut r = Reader::new("v", b"abcdef");
        assert_eq!(r.all_but(2).unwrap(), b"abcd");
        assert_eq!(r.rest(), b"ef");
        assert!(Reader::new("v", b"a").all_but(2).is_err());
    }
}
