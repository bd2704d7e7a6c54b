//! RocksDB write batches built as bytes (`WriteBatch::Data()`, RocksDB's
//! `db/write_batch.cc`), the payload of `APPLYBATCH`:
//!
//! ```text
//! sequence: fixed64 LE (0) | count: fixed32 LE | record*
//! Put      default: 0x01 | key | value      other: 0x05 | cf varint32 | key | value
//! Delete   default: 0x00 | key              other: 0x04 | cf varint32 | key
//! LogData           0x03 | blob (not counted)
//! ```
//!
//! Keys, values and blobs are a varint32 length and the bytes. A batch
//! written by Kvrocks' `BatchSender` reads the same, record for record
//! ([`redcodec_kvrocks::batch::parse`] reads these back).

/// The header's size: sequence (8) and count (4).
const HEADER_LEN: usize = 12;

/// RocksDB's record tags (`ValueType`, `db/dbformat.h`).
const DELETION: u8 = 0x0;
const VALUE: u8 = 0x1;
const LOG_DATA: u8 = 0x3;
const CF_DELETION: u8 = 0x4;
const CF_VALUE: u8 = 0x5;

/// A write batch being filled.
pub struct WriteBatch {
    rep: Vec<u8>,
    count: u32,
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch {
            rep: vec![0; HEADER_LEN],
            count: 0,
        }
    }
}

fn put_varint32(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A key, value or blob longer than a varint32 can say cannot be in a
/// batch (RocksDB's own limit); the caller checks with [`fits`].
fn put_slice(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint32(out, bytes.len() as u32);
    out.extend_from_slice(bytes);
}

/// Whether `bytes` can be a key, value or blob of a batch.
pub fn fits(bytes: &[u8]) -> bool {
    u32::try_from(bytes.len()).is_ok()
}

impl WriteBatch {
    /// `Put(cf, key, value)`.
    pub fn put(&mut self, cf: u32, key: &[u8], value: &[u8]) {
        self.tag(cf, VALUE, CF_VALUE);
        put_slice(&mut self.rep, key);
        put_slice(&mut self.rep, value);
        self.count += 1;
    }

    /// `Delete(cf, key)`.
    pub fn delete(&mut self, cf: u32, key: &[u8]) {
        self.tag(cf, DELETION, CF_DELETION);
        put_slice(&mut self.rep, key);
        self.count += 1;
    }

    /// `PutLogData(blob)`: kept in the WAL only, not counted.
    pub fn log_data(&mut self, blob: &[u8]) {
        self.rep.push(LOG_DATA);
        put_slice(&mut self.rep, blob);
    }

    fn tag(&mut self, cf: u32, default_tag: u8, cf_tag: u8) {
        if cf == 0 {
            self.rep.push(default_tag);
        } else {
            self.rep.push(cf_tag);
            put_varint32(&mut self.rep, cf);
        }
    }

    /// The batch's size in bytes, header included (`GetDataSize`).
    pub fn size(&self) -> usize {
        self.rep.len()
    }

    /// The batch's bytes, with its count in the header.
    pub fn data(&mut self) -> &[u8] {
        self.rep[8..HEADER_LEN].copy_from_slice(&self.count.to_le_bytes());
        &self.rep
    }

    /// Empties the batch (`Clear`).
    pub fn clear(&mut self) {
        self.rep.truncate(HEADER_LEN);
        self.rep[8..HEADER_LEN].fill(0);
        self.count = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_kvrocks::batch::{parse, Record};

    #[test]
    fn records_read_back_as_rocksdb_lays_them_out() {
        let mut b = WriteBatch::default();
        b.log_data(b"2");
        b.put(1, b"meta", b"value");
        b.put(0, b"sub", &[7u8; 200]);
        b.delete(5, b"gone");
        b.delete(0, b"gone too");
        let size = b.size();
        let data = b.data().to_vec();
        assert_eq!(data.len(), size);
        assert_eq!(&data[..12], &[0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0]);
        // A 200-byte value: a two-byte varint.
        assert!(data.windows(2).any(|w| w == [0xC8, 0x01]));
        let parsed = parse(&data).unwrap();
        assert_eq!(parsed.count, 4);
        assert_eq!(
            parsed.records,
            vec![
                Record::LogData(b"2"),
                Record::Put {
                    cf: 1,
                    key: b"meta",
                    value: b"value"
                },
                Record::Put {
                    cf: 0,
                    key: b"sub",
                    value: &[7u8; 200]
                },
                Record::Delete {
                    cf: 5,
                    key: b"gone"
                },
                Record::Delete {
                    cf: 0,
                    key: b"gone too"
                },
            ]
        );
        b.clear();
        assert_eq!(b.size(), 12);
        assert_eq!(b.data(), &[0u8; 12]);
    }
}
