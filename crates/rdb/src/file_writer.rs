//! Whole RDB files as redis-server 7.0 writes them (`rdbSaveRio`), streamed
//! to any [`Write`]: what `SAVE` leaves in `dump.rdb` and what a master
//! sends a replica on a full resynchronisation.
//!
//! Layout:
//!
//! ```text
//! "REDIS0010"
//! AUX redis-ver, redis-bits, ctime, used-mem,
//!     [repl-stream-db, repl-id, repl-offset], aof-base
//! per database: SELECTDB <db>  RESIZEDB <keys> <keys with expiry>
//!     per key: [EXPIRETIME_MS <u64 LE>] <type> <key> <object body>
//! EOF  <CRC64 u64 LE over every byte before it>
//! ```
//!
//! The objects are [`encode_object`]'s (the crate docs say where its bytes
//! may differ from Redis' own); the CRC is the Jones CRC64 of DUMP
//! payloads. Auxiliary integers are written as Redis' `rdbSaveAuxFieldStrInt`
//! writes them: as strings, integer-encoded when they fit 32 bits.

use std::io::{self, Write};

use crc::{Crc, Digest, CRC_64_REDIS};

use crate::object::encode_object;
use crate::string::{put_len, put_string, EncodeOptions};
use crate::Value;

static CRC64: Crc<u64> = Crc::<u64>::new(&CRC_64_REDIS);

/// `RDB_OPCODE_AUX`.
const OP_AUX: u8 = 250;
/// `RDB_OPCODE_RESIZEDB`.
const OP_RESIZEDB: u8 = 251;
/// `RDB_OPCODE_EXPIRETIME_MS`.
const OP_EXPIRETIME_MS: u8 = 252;
/// `RDB_OPCODE_SELECTDB`.
const OP_SELECTDB: u8 = 254;
/// `RDB_OPCODE_EOF`.
const OP_EOF: u8 = 255;

/// The replication fields a master writes into the file it sends a
/// replica (`rdbSaveInfo`): the replica resumes the stream from them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplInfo {
    /// The database the replication stream has selected (`repl-stream-db`).
    pub stream_db: u32,
    /// The master's replication id (`repl-id`).
    pub replid: String,
    /// The master's replication offset at the snapshot (`repl-offset`).
    pub offset: u64,
}

/// What the header's auxiliary fields say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileInfo {
    /// `redis-ver`: the version the file claims to come from.
    pub redis_ver: String,
    /// `ctime`: when the file was made, unix seconds.
    pub ctime: u64,
    /// `used-mem`: the memory the writer uses, in bytes.
    pub used_mem: u64,
    /// The replication fields, for a file sent to a replica.
    pub repl: Option<ReplInfo>,
    /// Further auxiliary fields, written after Redis' own (a reader that
    /// does not know one skips it, as Redis does).
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
}

impl FileInfo {
    /// The fields of a file made at `ctime`, claiming Redis 7.0.15 and no
    /// memory use, outside replication.
    pub fn new(ctime: u64) -> FileInfo {
        FileInfo {
            redis_ver: "7.0.15".into(),
            ctime,
            used_mem: 0,
            repl: None,
            aux: Vec::new(),
        }
    }
}

/// Streams an RDB file: [`RdbFileWriter::new`] writes the header, then
/// [`RdbFileWriter::select_db`] and [`RdbFileWriter::key`] for each
/// database and key, then [`RdbFileWriter::finish`] the trailer.
pub struct RdbFileWriter<W: Write> {
    out: W,
    crc: Digest<'static, u64>,
    opts: EncodeOptions,
    buf: Vec<u8>,
    written: u64,
}

impl<W: Write> RdbFileWriter<W> {
    /// Writes the magic and the auxiliary fields to `out`.
    pub fn new(out: W, info: &FileInfo, opts: EncodeOptions) -> io::Result<RdbFileWriter<W>> {
        let mut w = RdbFileWriter {
            out,
            crc: CRC64.digest(),
            opts,
            buf: Vec::with_capacity(64 * 1024),
            written: 0,
        };
        w.buf
            .extend_from_slice(format!("REDIS{:04}", crate::RDB_VERSION).as_bytes());
        w.aux(b"redis-ver", info.redis_ver.as_bytes());
        w.aux(b"redis-bits", b"64");
        w.aux(b"ctime", info.ctime.to_string().as_bytes());
        w.aux(b"used-mem", info.used_mem.to_string().as_bytes());
        if let Some(repl) = &info.repl {
            w.aux(b"repl-stream-db", repl.stream_db.to_string().as_bytes());
            w.aux(b"repl-id", repl.replid.as_bytes());
            w.aux(b"repl-offset", repl.offset.to_string().as_bytes());
        }
        w.aux(b"aof-base", b"0");
        for (key, value) in &info.aux {
            w.aux(key, value);
        }
        w.flush_buf()?;
        Ok(w)
    }

    fn aux(&mut self, key: &[u8], value: &[u8]) {
        self.buf.push(OP_AUX);
        put_string(&mut self.buf, key, self.opts);
        put_string(&mut self.buf, value, self.opts);
    }

    /// Starts database `db`, which holds `keys` keys of which `expiring`
    /// have an expiry (the sizes only size the loader's tables: a
    /// streamed snapshot may give estimates).
    pub fn select_db(&mut self, db: u32, keys: u64, expiring: u64) -> io::Result<()> {
        self.buf.push(OP_SELECTDB);
        put_len(&mut self.buf, u64::from(db));
        self.buf.push(OP_RESIZEDB);
        put_len(&mut self.buf, keys);
        put_len(&mut self.buf, expiring);
        self.maybe_flush()
    }

    /// Writes one key: its expiry (absolute unix milliseconds) if any,
    /// then its type, name and value.
    pub fn key(&mut self, key: &[u8], value: &Value, expire_ms: Option<u64>) -> io::Result<()> {
        if let Some(ms) = expire_ms {
            self.buf.push(OP_EXPIRETIME_MS);
            self.buf.extend_from_slice(&ms.to_le_bytes());
        }
        let object = encode_object(value, self.opts);
        let (ty, body) = object.split_at(1);
        self.buf.extend_from_slice(ty);
        put_string(&mut self.buf, key, self.opts);
        self.buf.extend_from_slice(body);
        self.maybe_flush()
    }

    /// Writes the EOF opcode and the CRC64; returns the writer and the
    /// file's length in bytes.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        self.buf.push(OP_EOF);
        self.flush_buf()?;
        let crc = self.crc.finalize();
        self.out.write_all(&crc.to_le_bytes())?;
        self.out.flush()?;
        Ok((self.out, self.written + 8))
    }

    fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= 64 * 1024 {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        self.crc.update(&self.buf);
        self.out.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_is_header_and_trailer_with_a_right_crc() {
        let w =
            RdbFileWriter::new(Vec::new(), &FileInfo::new(0), EncodeOptions::default()).unwrap();
        let (bytes, len) = w.finish().unwrap();
        assert_eq!(len, bytes.len() as u64);
        assert!(bytes.starts_with(b"REDIS0010\xfa\x09redis-ver"));
        let (body, crc) = bytes.split_at(bytes.len() - 8);
        assert_eq!(body.last(), Some(&OP_EOF));
        assert_eq!(CRC64.checksum(body).to_le_bytes(), crc);
    }

    #[test]
    fn a_key_is_type_name_body_after_its_expiry() {
        let mut w =
            RdbFileWriter::new(Vec::new(), &FileInfo::new(0), EncodeOptions::default()).unwrap();
        let start = w.written as usize + w.buf.len();
        w.select_db(0, 1, 1).unwrap();
        w.key(b"k", &Value::String(b"v".to_vec()), Some(5)).unwrap();
        let (bytes, _) = w.finish().unwrap();
        let mut want = vec![OP_SELECTDB, 0, OP_RESIZEDB, 1, 1, OP_EXPIRETIME_MS];
        want.extend_from_slice(&5u64.to_le_bytes());
        want.extend_from_slice(&[0, 1, b'k', 1, b'v', OP_EOF]);
        assert_eq!(&bytes[start..bytes.len() - 8], want.as_slice());
    }
}
