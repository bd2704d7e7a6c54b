//! RocksDB write batches as a Kvrocks master streams them to its replicas
//! (`PSYNC <seq>`: one bulk string per batch, `WriteBatch::Data()`), read
//! record by record.
//!
//! The layout is RocksDB's (`db/write_batch.cc`):
//!
//! ```text
//! sequence: fixed64 LE | count: fixed32 LE | record*
//! record:   tag u8 [| column family: varint32, for the *ColumnFamily* tags]
//!           | key: varint32 length + bytes [| value: varint32 length + bytes]
//! ```
//!
//! `count` numbers the records that write (puts, deletes, merges, range
//! deletions, blob indexes, entities); `LogData` blobs and transaction
//! markers are not counted. A batch whose records do not match its count,
//! that ends inside a record or holds a tag RocksDB does not define is an
//! error ([`BatchError`]): nothing here panics on bad bytes.
//!
//! The `rocksdb` crate (0.25) iterates a batch's puts and deletes with
//! their column families (`WriteBatch::iterate_cf`) but not its `LogData`
//! records, which Kvrocks' replication needs (the command that wrote the
//! batch, see [`crate::changes`]); hence this reader.

use thiserror::Error;

/// Why bytes are not a write batch.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BatchError {
    /// Shorter than the 12-byte header.
    #[error("write batch of {0} bytes is shorter than its 12-byte header")]
    TooShort(usize),
    /// A record ends past the end of the batch.
    #[error("write batch truncated in record {index} at offset {offset}")]
    Truncated {
        /// The record's position (0-based, counting every record).
        index: usize,
        /// Where it starts.
        offset: usize,
    },
    /// A varint longer than 5 bytes or over 32 bits.
    #[error("write batch has a bad varint32 at offset {0}")]
    BadVarint(usize),
    /// A record tag RocksDB does not define.
    #[error("write batch has an unknown record tag {tag:#04x} at offset {offset}")]
    UnknownTag {
        /// The tag.
        tag: u8,
        /// Where it is.
        offset: usize,
    },
    /// The header's count does not match the records.
    #[error("write batch header counts {header} records, the batch holds {found}")]
    WrongCount {
        /// The header's count.
        header: u32,
        /// Counted records found.
        found: u32,
    },
}

/// One record of a write batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    /// `Put` (also a blob index or a wide-column entity: `value` is then
    /// the raw index or entity).
    Put {
        /// Column family id (0: `default`).
        cf: u32,
        /// The key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
    },
    /// `Delete` or `SingleDelete`.
    Delete {
        /// Column family id.
        cf: u32,
        /// The key.
        key: &'a [u8],
    },
    /// `DeleteRange`: keys in `[begin, end)`.
    DeleteRange {
        /// Column family id.
        cf: u32,
        /// First key deleted.
        begin: &'a [u8],
        /// First key kept.
        end: &'a [u8],
    },
    /// `Merge`.
    Merge {
        /// Column family id.
        cf: u32,
        /// The key.
        key: &'a [u8],
        /// The operand.
        value: &'a [u8],
    },
    /// `PutLogData`: a blob kept in the WAL only.
    LogData(&'a [u8]),
}

/// A decoded write batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteBatch<'a> {
    /// The sequence number of its first write.
    pub sequence: u64,
    /// How many sequence numbers it uses (its counted records).
    pub count: u32,
    /// Its records in order (transaction markers and no-ops left out).
    pub records: Vec<Record<'a>>,
}

impl WriteBatch<'_> {
    /// The sequence number that follows this batch.
    pub fn next_sequence(&self) -> u64 {
        self.sequence.saturating_add(u64::from(self.count))
    }
}

/// RocksDB's record tags (`ValueType`, `db/dbformat.h`).
mod tag {
    pub const DELETION: u8 = 0x0;
    pub const VALUE: u8 = 0x1;
    pub const MERGE: u8 = 0x2;
    pub const LOG_DATA: u8 = 0x3;
    pub const CF_DELETION: u8 = 0x4;
    pub const CF_VALUE: u8 = 0x5;
    pub const CF_MERGE: u8 = 0x6;
    pub const SINGLE_DELETION: u8 = 0x7;
    pub const CF_SINGLE_DELETION: u8 = 0x8;
    pub const BEGIN_PREPARE_XID: u8 = 0x9;
    pub const END_PREPARE_XID: u8 = 0xA;
    pub const COMMIT_XID: u8 = 0xB;
    pub const ROLLBACK_XID: u8 = 0xC;
    pub const NOOP: u8 = 0xD;
    pub const CF_RANGE_DELETION: u8 = 0xE;
    pub const RANGE_DELETION: u8 = 0xF;
    pub const CF_BLOB_INDEX: u8 = 0x10;
    pub const BLOB_INDEX: u8 = 0x11;
    pub const BEGIN_PERSISTED_PREPARE_XID: u8 = 0x12;
    pub const BEGIN_UNPREPARE_XID: u8 = 0x13;
    pub const DELETION_WITH_TIMESTAMP: u8 = 0x14;
    pub const COMMIT_XID_AND_TIMESTAMP: u8 = 0x15;
    pub const WIDE_COLUMN_ENTITY: u8 = 0x16;
    pub const CF_WIDE_COLUMN_ENTITY: u8 = 0x17;
}

/// The header's size: sequence (8) and count (4).
pub const HEADER_LEN: usize = 12;

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    index: usize,
    start: usize,
}

impl<'a> Cursor<'a> {
    fn truncated(&self) -> BatchError {
        BatchError::Truncated {
            index: self.index,
            offset: self.start,
        }
    }

    fn u8(&mut self) -> Result<u8, BatchError> {
        let b = *self.data.get(self.pos).ok_or_else(|| self.truncated())?;
        self.pos += 1;
        Ok(b)
    }

    fn varint32(&mut self) -> Result<u32, BatchError> {
        let at = self.pos;
        let mut value: u64 = 0;
        for shift in 0..5 {
            let b = self.u8()?;
            value |= u64::from(b & 0x7F) << (7 * shift);
            if b & 0x80 == 0 {
                return u32::try_from(value).map_err(|_| BatchError::BadVarint(at));
            }
        }
        Err(BatchError::BadVarint(at))
    }

    fn slice(&mut self) -> Result<&'a [u8], BatchError> {
        let len = self.varint32()? as usize;
        let end = self.pos.checked_add(len).ok_or_else(|| self.truncated())?;
        let out = self
            .data
            .get(self.pos..end)
            .ok_or_else(|| self.truncated())?;
        self.pos = end;
        Ok(out)
    }
}

/// Reads a write batch (`WriteBatch::Data()`).
pub fn parse(data: &[u8]) -> Result<WriteBatch<'_>, BatchError> {
    if data.len() < HEADER_LEN {
        return Err(BatchError::TooShort(data.len()));
    }
    let mut seq = [0u8; 8];
    seq.copy_from_slice(&data[..8]);
    let mut cnt = [0u8; 4];
    cnt.copy_from_slice(&data[8..12]);
    let sequence = u64::from_le_bytes(seq);
    let count = u32::from_le_bytes(cnt);
    let mut c = Cursor {
        data,
        pos: HEADER_LEN,
        index: 0,
        start: HEADER_LEN,
    };
    let mut records = Vec::new();
    let mut found: u32 = 0;
    while c.pos < data.len() {
        c.start = c.pos;
        let t = c.u8()?;
        let cf = match t {
            tag::CF_DELETION
            | tag::CF_VALUE
            | tag::CF_MERGE
            | tag::CF_SINGLE_DELETION
            | tag::CF_RANGE_DELETION
            | tag::CF_BLOB_INDEX
            | tag::CF_WIDE_COLUMN_ENTITY => c.varint32()?,
            _ => 0,
        };
        let record = match t {
            tag::VALUE
            | tag::CF_VALUE
            | tag::BLOB_INDEX
            | tag::CF_BLOB_INDEX
            | tag::WIDE_COLUMN_ENTITY
            | tag::CF_WIDE_COLUMN_ENTITY => {
                let key = c.slice()?;
                let value = c.slice()?;
                Some(Record::Put { cf, key, value })
            }
            tag::DELETION
            | tag::CF_DELETION
            | tag::SINGLE_DELETION
            | tag::CF_SINGLE_DELETION
            | tag::DELETION_WITH_TIMESTAMP => Some(Record::Delete {
                cf,
                key: c.slice()?,
            }),
            tag::RANGE_DELETION | tag::CF_RANGE_DELETION => {
                let begin = c.slice()?;
                let end = c.slice()?;
                Some(Record::DeleteRange { cf, begin, end })
            }
            tag::MERGE | tag::CF_MERGE => {
                let key = c.slice()?;
                let value = c.slice()?;
                Some(Record::Merge { cf, key, value })
            }
            tag::LOG_DATA => {
                records.push(Record::LogData(c.slice()?));
                None
            }
            tag::BEGIN_PREPARE_XID
            | tag::BEGIN_PERSISTED_PREPARE_XID
            | tag::BEGIN_UNPREPARE_XID
            | tag::NOOP => None,
            tag::END_PREPARE_XID | tag::COMMIT_XID | tag::ROLLBACK_XID => {
                c.slice()?;
                None
            }
            tag::COMMIT_XID_AND_TIMESTAMP => {
                c.slice()?;
                c.slice()?;
                None
            }
            other => {
                return Err(BatchError::UnknownTag {
                    tag: other,
                    offset: c.start,
                })
            }
        };
        if let Some(record) = record {
            found = found.saturating_add(1);
            records.push(record);
        }
        c.index += 1;
    }
    if found != count {
        return Err(BatchError::WrongCount {
            header: count,
            found,
        });
    }
    Ok(WriteBatch {
        sequence,
        count,
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocksdb::{ColumnFamilyDescriptor, Options, DB};

    /// A real RocksDB with Kvrocks' seven column families, for the
    /// handles `put_cf` needs.
    fn db() -> (tempfile::TempDir, DB) {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let descs = [
            "metadata",
            "zset_score",
            "pubsub",
            "propagate",
            "stream",
            "search",
        ]
        .into_iter()
        .map(|n| ColumnFamilyDescriptor::new(n, Options::default()));
        let db = DB::open_cf_descriptors(&opts, dir.path(), descs).unwrap();
        (dir, db)
    }

    #[test]
    fn reads_what_rocksdb_writes() {
        let (_dir, db) = db();
        let meta = db.cf_handle("metadata").unwrap();
        let score = db.cf_handle("zset_score").unwrap();
        let mut b = rocksdb::WriteBatch::default();
        b.put_log_data(b"2");
        b.put(b"sub", b"v");
        b.put_cf(&meta, b"mk", b"mv");
        b.delete_cf(&score, b"gone");
        b.delete(b"d0");
        b.delete_range_cf(&meta, b"a", b"z");
        db.write(b).unwrap();
        // A batch written to the DB gets its sequence; read it back from
        // the WAL as a master's replication does.
        let mut it = db.get_updates_since(0).unwrap();
        let (seq, written) = it.next().unwrap().unwrap();
        let parsed = parse(written.data()).unwrap();
        assert_eq!(parsed.sequence, seq);
        assert_eq!(parsed.count, 5);
        assert_eq!(parsed.next_sequence(), seq + 5);
        assert_eq!(
            parsed.records,
            vec![
                Record::LogData(b"2"),
                Record::Put {
                    cf: 0,
                    key: b"sub",
                    value: b"v"
                },
                Record::Put {
                    cf: 1,
                    key: b"mk",
                    value: b"mv"
                },
                Record::Delete {
                    cf: 2,
                    key: b"gone"
                },
                Record::Delete { cf: 0, key: b"d0" },
                Record::DeleteRange {
                    cf: 1,
                    begin: b"a",
                    end: b"z"
                },
            ]
        );
    }

    #[test]
    fn merges_are_read_too() {
        let (_dir, db) = db();
        let meta = db.cf_handle("metadata").unwrap();
        let mut b = rocksdb::WriteBatch::default();
        b.merge_cf(&meta, b"m", b"op");
        b.merge(b"n", b"op2");
        let parsed = parse(b.data()).unwrap();
        assert_eq!(
            parsed.records,
            vec![
                Record::Merge {
                    cf: 1,
                    key: b"m",
                    value: b"op"
                },
                Record::Merge {
                    cf: 0,
                    key: b"n",
                    value: b"op2"
                },
            ]
        );
    }

    #[test]
    fn large_values_use_multi_byte_lengths() {
        let (_dir, db) = db();
        let meta = db.cf_handle("metadata").unwrap();
        let big = vec![7u8; 300_000];
        let mut b = rocksdb::WriteBatch::default();
        b.put_cf(&meta, vec![1u8; 200], &big);
        let parsed = parse(b.data()).unwrap();
        assert_eq!(
            parsed.records,
            vec![Record::Put {
                cf: 1,
                key: &[1u8; 200],
                value: &big
            }]
        );
    }

    #[test]
    fn every_truncation_is_an_error() {
        let (_dir, db) = db();
        let meta = db.cf_handle("metadata").unwrap();
        let mut b = rocksdb::WriteBatch::default();
        b.put_log_data(b"3 6");
        b.put_cf(&meta, b"key", b"value");
        b.delete(b"sub");
        let data = b.data().to_vec();
        assert!(parse(&data).is_ok());
        for len in 0..data.len() {
            assert!(parse(&data[..len]).is_err(), "{len} bytes parsed");
        }
    }

    #[test]
    fn garbage_is_an_error_never_a_panic() {
        assert_eq!(parse(b"short"), Err(BatchError::TooShort(5)));
        let mut header = vec![0u8; 12];
        header[8] = 1;
        assert_eq!(
            parse(&header),
            Err(BatchError::WrongCount {
                header: 1,
                found: 0
            })
        );
        let mut unknown = vec![0u8; 12];
        unknown.push(0x42);
        assert_eq!(
            parse(&unknown),
            Err(BatchError::UnknownTag {
                tag: 0x42,
                offset: 12
            })
        );
        let mut varint = vec![0u8; 12];
        varint.extend_from_slice(&[0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]);
        assert_eq!(parse(&varint), Err(BatchError::BadVarint(13)));
        // A deterministic stream of pseudo-random inputs.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for n in 0..20_000usize {
            let len = 12 + n % 64;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 24) as u8
                })
                .collect();
            let _ = parse(&bytes);
        }
    }
}
