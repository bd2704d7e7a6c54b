//! The value suffix of nemo-rocksdb (`AppendVersionAndTS`,
//! `AppendVersionAndExpiredTime`, `src/db_nemo_impl.cc`): every value put
//! in any instance, metadata or element, ends with
//!
//! ```text
//! version: u32 LE ‖ timestamp: i32 LE
//! ```
//!
//! The timestamp is an absolute expiry in unix seconds; 0 means none. A
//! record is stale when `timestamp != 0 && timestamp < now` (seconds), so a
//! key is still live during the second its timestamp names.
//!
//! In redcodec's model the timestamp is `floor(`[`Meta::expire_ms`]` / 1000)`
//! and decodes to `timestamp * 1000 + 999`: the last millisecond of the
//! second it names, so that the engine's rule (a key is live up to and
//! including its expiry millisecond) is exactly nemo's (live while
//! `now_s <= timestamp`). This is what
//! [`redcodec_codec::RelativeExpiry::SecondsMinusOne`] declares.

use redcodec_codec::{DecodeError, EncodeError, Meta, Reader};

use crate::FORMAT;

/// Bytes of the suffix: `kVersionLength + kTSLength`.
pub const SUFFIX_LEN: usize = 8;

/// The latest absolute expiry redcodec accepts, in unix milliseconds: the
/// start of second `i32::MAX` (2038-01-19T03:14:07Z). It is stored as that
/// second, which keeps the key live through its last millisecond.
pub const MAX_EXPIRE_MS: u64 = i32::MAX as u64 * 1000;

/// The version and timestamp ending a value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Suffix {
    /// The key's version (0 for strings and separators).
    pub version: u32,
    /// Absolute expiry in unix seconds; 0 means none.
    pub timestamp: i32,
}

impl Suffix {
    /// Version 0, no expiry: strings without TTL and the separator keys.
    pub const ZERO: Suffix = Suffix {
        version: 0,
        timestamp: 0,
    };

    /// The suffix of `meta`'s metadata record; an expiry or version the
    /// format cannot hold is an error.
    pub fn of_meta(meta: &Meta) -> Result<Suffix, EncodeError> {
        let version = u32::try_from(meta.version).map_err(|_| {
            EncodeError::out_of_range(
                FORMAT,
                "version",
                meta.version,
                &format!("0..={}", u32::MAX),
            )
        })?;
        Ok(Suffix {
            version,
            timestamp: timestamp_of(meta.expire_ms)?,
        })
    }

    /// The suffix stamped on element records written under `meta`: its
    /// version and timestamp (as `WriteWithOldKeyTTL` stamps every put of a
    /// batch). Out-of-range values saturate: [`Suffix::of_meta`] has
    /// already refused them for the metadata written in the same batch.
    pub fn of_elements(meta: &Meta) -> Suffix {
        Suffix {
            version: u32::try_from(meta.version).unwrap_or(u32::MAX),
            timestamp: timestamp_of(meta.expire_ms).unwrap_or(i32::MAX),
        }
    }

    /// Appends the 8 suffix bytes to `out`.
    pub fn append_to(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&self.timestamp.to_le_bytes());
    }

    /// Splits a stored value into its payload and suffix.
    pub fn split<'a>(
        record: &'static str,
        raw: &'a [u8],
    ) -> Result<(&'a [u8], Suffix), DecodeError> {
        let mut r = Reader::new(record, raw);
        let payload = r.all_but(SUFFIX_LEN)?;
        let version = r.u32_le()?;
        let timestamp = r.i32_le()?;
        r.finish()?;
        Ok((payload, Suffix { version, timestamp }))
    }

    /// The suffix of a stored value, or `None` if it is shorter than 8 bytes
    /// (`ExtractVersionAndTS` fails).
    pub fn peek(raw: &[u8]) -> Option<Suffix> {
        Suffix::split("nemo value", raw).ok().map(|(_, s)| s)
    }

    /// [`Meta::expire_ms`] of this timestamp (see [`expire_ms_of`]).
    pub fn expire_ms(self) -> u64 {
        expire_ms_of(self.timestamp)
    }
}

/// The stored timestamp of an absolute expiry in unix milliseconds: the
/// second that holds it, `expire_ms / 1000`, except that a nonzero expiry
/// below one second stays nonzero (second 1). Beyond `i32::MAX` seconds is
/// an error.
pub fn timestamp_of(expire_ms: u64) -> Result<i32, EncodeError> {
    let secs = match expire_ms {
        0 => 0,
        1..=999 => 1,
        ms => ms / 1000,
    };
    i32::try_from(secs).map_err(|_| {
        let range = format!("0..={}", i32::MAX);
        EncodeError::out_of_range(FORMAT, "expire time (unix seconds)", secs, &range)
    })
}

/// [`Meta::expire_ms`] of a stored timestamp: 0 stays 0; a positive
/// timestamp `ts` is the last millisecond of second `ts`,
/// `ts * 1000 + 999`, since nemo keeps a key live through the second its
/// timestamp names (stale once `ts < now_s`). nemo never writes a negative
/// timestamp; its `Get` treats one as stale, so it decodes to the end of
/// second 1 (long expired).
pub fn expire_ms_of(timestamp: i32) -> u64 {
    match timestamp {
        0 => 0,
        t if t < 0 => LAST_MS_OF_SECOND_ONE,
        t => t as u64 * 1000 + 999,
    }
}

/// The decoded expiry of a negative timestamp: second 1, lived through.
const LAST_MS_OF_SECOND_ONE: u64 = 1999;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_of_the_suffix() {
        let mut out = b"v".to_vec();
        Suffix {
            version: 0x6553_F100,
            timestamp: 0x6553_F163,
        }
        .append_to(&mut out);
        assert_eq!(out, b"v\x00\xf1\x53\x65\x63\xf1\x53\x65");
        let (payload, s) = Suffix::split("t", &out).unwrap();
        assert_eq!(payload, b"v");
        assert_eq!(s.version, 0x6553_F100);
        assert_eq!(s.expire_ms(), 0x6553_F163 * 1000 + 999);
        assert!(Suffix::split("t", &out[..7]).is_err());
        assert_eq!(Suffix::peek(&[0; 8]), Some(Suffix::ZERO));
        assert_eq!(Suffix::peek(&[0; 7]), None);
    }

    #[test]
    fn timestamps() {
        assert_eq!(timestamp_of(0), Ok(0));
        assert_eq!(timestamp_of(1), Ok(1));
        assert_eq!(timestamp_of(1_700_000_099_000), Ok(1_700_000_099));
        assert_eq!(timestamp_of(1_700_000_099_999), Ok(1_700_000_099));
        assert_eq!(timestamp_of(MAX_EXPIRE_MS), Ok(i32::MAX));
        assert!(timestamp_of(MAX_EXPIRE_MS + 1000).is_err());
        assert_eq!(expire_ms_of(0), 0);
        assert_eq!(expire_ms_of(-5), 1999);
        assert_eq!(expire_ms_of(1_700_000_099), 1_700_000_099_999);
        assert_eq!(expire_ms_of(i32::MAX), MAX_EXPIRE_MS + 999);
        // Decoding then encoding gives the same second back.
        for ts in [1, 1_700_000_099, i32::MAX] {
            assert_eq!(timestamp_of(expire_ms_of(ts)), Ok(ts));
        }
    }

    #[test]
    fn element_suffix_saturates() {
        let mut m = Meta::string(Vec::new(), u64::MAX);
        m.version = u64::MAX;
        assert!(Suffix::of_meta(&m).is_err());
        assert_eq!(
            Suffix::of_elements(&m),
            Suffix {
                version: u32::MAX,
                timestamp: i32::MAX
            }
        );
    }
}
