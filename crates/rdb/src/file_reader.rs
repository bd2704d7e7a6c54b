//! Whole RDB files (what `SAVE` writes and a master sends a replica), read
//! as a stream: one key at a time, memory bounded by the largest object,
//! never by the file.
//!
//! The layout (`rdb.c`, `rdbLoadRioWithLoadingCtx`): `REDIS` and a 4-digit
//! version (1 to 10: 10 is what Redis 7.0 writes), then opcodes and keys:
//!
//! | byte | opcode | read as |
//! | --- | --- | --- |
//! | `0xFF` | EOF | then, from version 5 on, the CRC64 (Jones, as Redis' `crc64`) of every byte before it, little-endian; 0 means the file was saved with `rdbchecksum no` and is not checked |
//! | `0xFE` | SELECTDB | the database index of the keys that follow (a length) |
//! | `0xFD` | EXPIRETIME | the next key's expiry, unix seconds (i32 LE) |
//! | `0xFC` | EXPIRETIME_MS | the next key's expiry, unix ms (i64 LE) |
//! | `0xFB` | RESIZEDB | two lengths (a size hint): skipped |
//! | `0xFA` | AUX | two strings, kept in [`RdbFileReader::aux`] |
//! | `0xF9` | FREQ | one byte (LFU counter): skipped |
//! | `0xF8` | IDLE | a length (LRU idle time): skipped |
//! | `0xF7` | MODULE_AUX | module data: skipped through its typed opcodes (counted in [`RdbFileReader::skipped_module_aux`]) |
//! | `0xF6` | FUNCTION | the pre-release 7.0 form: refused |
//! | `0xF5` | FUNCTION2 | a library's code: skipped (there is no function engine), counted in [`RdbFileReader::skipped_functions`] |
//!
//! Any other byte is an object type: the key (an RDB string), then the
//! object, decoded by [`crate::decode_object`] (every Redis 7.0 encoding of
//! the five data types). Streams and module values are refused
//! ([`RdbFileError::Unsupported`]); an empty collection is skipped as Redis
//! skips it (counted in [`RdbFileReader::skipped_empty`]).
//!
//! Every fault — a short read, a bad length, an unknown opcode or type, a
//! bad object, a CRC that does not match — is an [`RdbFileError`] naming the
//! byte offset where it was found. Nothing panics.

use std::io::{self, Read};

use crc::{Crc, Digest, CRC_64_REDIS};
use redcodec_codec::Reader;
use thiserror::Error;

use crate::error::DumpError;
use crate::object::{decode_object, ObjectType};
use crate::payload::{seal, RDB_VERSION};
use crate::string::read_string;
use crate::Value;

static CRC64: Crc<u64> = Crc::<u64>::new(&CRC_64_REDIS);

/// The opcodes of the RDB file (`rdb.h`).
mod opcode {
    pub const FUNCTION2: u8 = 0xF5;
    pub const FUNCTION: u8 = 0xF6;
    pub const MODULE_AUX: u8 = 0xF7;
    pub const IDLE: u8 = 0xF8;
    pub const FREQ: u8 = 0xF9;
    pub const AUX: u8 = 0xFA;
    pub const RESIZEDB: u8 = 0xFB;
    pub const EXPIRETIME_MS: u8 = 0xFC;
    pub const EXPIRETIME: u8 = 0xFD;
    pub const SELECTDB: u8 = 0xFE;
    pub const EOF: u8 = 0xFF;
}

/// Object types that exist but cannot be loaded here.
fn unsupported_type(byte: u8) -> Option<&'static str> {
    match byte {
        6 | 7 => Some("a module value"),
        15 | 19 => Some("a stream"),
        _ => None,
    }
}

/// Why an RDB file cannot be read.
#[derive(Debug, Error)]
pub enum RdbFileError {
    /// The input failed.
    #[error("RDB: read error at byte {offset}: {source}")]
    Io {
        /// Where.
        offset: u64,
        /// The I/O error.
        source: io::Error,
    },
    /// The input ended in the middle of something.
    #[error("RDB: unexpected end of file at byte {offset}")]
    Truncated {
        /// Where the input ended.
        offset: u64,
    },
    /// It does not start with `REDIS` and four digits.
    #[error("RDB: wrong signature (not an RDB file)")]
    BadSignature,
    /// A version this reader does not know.
    #[error("RDB: can't handle RDB format version {0} (1 to 10 are read)")]
    Version(u32),
    /// A byte that is neither an opcode nor an object type.
    #[error("RDB: unknown opcode or object type {byte} at byte {offset}")]
    UnknownType {
        /// The byte.
        byte: u8,
        /// Where it is.
        offset: u64,
    },
    /// A valid RDB item that cannot be loaded (streams, modules, the old
    /// function format).
    #[error("RDB: {what} at byte {offset} cannot be loaded: redcodec has no such type")]
    Unsupported {
        /// What it is (with its key, for a value).
        what: String,
        /// Where it starts.
        offset: u64,
    },
    /// A length, string or value that is not well formed.
    #[error("RDB: bad data at byte {offset}: {why}")]
    BadData {
        /// Where the item starts.
        offset: u64,
        /// What is wrong.
        why: String,
    },
    /// A key's object is not a valid object.
    #[error("RDB: bad value of key '{key}' at byte {offset}: {source}")]
    BadObject {
        /// The key (lossy text).
        key: String,
        /// Where the object starts.
        offset: u64,
        /// What the object decoder found.
        source: DumpError,
    },
    /// The CRC64 at the end does not match the file's bytes.
    #[error("RDB: wrong checksum at byte {offset}: the file says {stored:016x}, its bytes give {computed:016x}")]
    Checksum {
        /// Where the checksum is.
        offset: u64,
        /// The checksum the file carries.
        stored: u64,
        /// The checksum of its bytes.
        computed: u64,
    },
}

/// One key of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The database index (SELECTDB) it belongs to.
    pub db: u64,
    /// The key.
    pub key: Vec<u8>,
    /// Its value.
    pub value: Value,
    /// Its expiry, unix milliseconds (may be in the past).
    pub expire_ms: Option<i64>,
    /// The object's bytes as the file holds them (type byte and body).
    pub object: Vec<u8>,
}

impl Entry {
    /// The value as a DUMP payload (the object's own bytes and the
    /// footer), as `RESTORE` takes it.
    pub fn dump_payload(&self) -> Vec<u8> {
        seal(self.object.clone())
    }
}

/// The input, counting bytes and feeding the CRC.
struct Tracked<R> {
    inner: R,
    offset: u64,
    crc: Digest<'static, u64>,
}

impl<R: Read> Tracked<R> {
    fn io(&self, e: io::Error) -> RdbFileError {
        RdbFileError::Io {
            offset: self.offset,
            source: e,
        }
    }

    /// Reads exactly `n` bytes, appending them to `out`, which grows by
    /// at most [`Self::STEP`] bytes ahead of what arrived: a length that
    /// lies allocates no more than the input holds and one step.
    fn append(&mut self, n: u64, out: &mut Vec<u8>) -> Result<(), RdbFileError> {
        let start = out.len();
        let mut left = n;
        while left > 0 {
            let mut filled = out.len();
            let step = left.min(Self::STEP) as usize;
            out.resize(filled + step, 0);
            while filled < out.len() {
                match self.inner.read(&mut out[filled..]) {
                    Ok(0) => {
                        out.truncate(filled);
                        self.crc.update(&out[start..]);
                        self.offset += (filled - start) as u64;
                        return Err(RdbFileError::Truncated {
                            offset: self.offset,
                        });
                    }
                    Ok(got) => filled += got,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        out.truncate(filled);
                        return Err(self.io(e));
                    }
                }
            }
            left -= step as u64;
        }
        self.crc.update(&out[start..]);
        self.offset += n;
        Ok(())
    }

    /// The most bytes [`Self::append`] makes room for at once.
    const STEP: u64 = 64 * 1024;

    fn array<const N: usize>(&mut self) -> Result<[u8; N], RdbFileError> {
        let mut b = [0u8; N];
        match self.inner.read_exact(&mut b) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Err(RdbFileError::Truncated {
                    offset: self.offset,
                })
            }
            Err(e) => return Err(self.io(e)),
        }
        self.crc.update(&b);
        self.offset += N as u64;
        Ok(b)
    }

    fn u8(&mut self) -> Result<u8, RdbFileError> {
        Ok(self.array::<1>()?[0])
    }

    /// A length (or a special string encoding's tag byte, returned as
    /// `Err(tag)`), appending its raw bytes to `raw`.
    fn len_or_enc(&mut self, raw: &mut Vec<u8>) -> Result<Result<u64, u8>, RdbFileError> {
        let at = self.offset;
        let b = self.u8()?;
        raw.push(b);
        Ok(match b >> 6 {
            0 => Ok(u64::from(b & 0x3f)),
            1 => {
                let low = self.u8()?;
                raw.push(low);
                Ok(u64::from(b & 0x3f) << 8 | u64::from(low))
            }
            2 => match b {
                0x80 => {
                    let n = self.array::<4>()?;
                    raw.extend_from_slice(&n);
                    Ok(u64::from(u32::from_be_bytes(n)))
                }
                0x81 => {
                    let n = self.array::<8>()?;
                    raw.extend_from_slice(&n);
                    Ok(u64::from_be_bytes(n))
                }
                _ => {
                    return Err(RdbFileError::BadData {
                        offset: at,
                        why: format!("unknown length prefix {b:#04x}"),
                    })
                }
            },
            _ => Err(b & 0x3f),
        })
    }

    /// A plain length.
    fn len(&mut self, raw: &mut Vec<u8>) -> Result<u64, RdbFileError> {
        let at = self.offset;
        self.len_or_enc(raw)?.map_err(|_| RdbFileError::BadData {
            offset: at,
            why: "an encoded string where a length belongs".into(),
        })
    }

    /// An RDB string's raw bytes, whichever way it is written.
    fn raw_string(&mut self, raw: &mut Vec<u8>) -> Result<(), RdbFileError> {
        let at = self.offset;
        match self.len_or_enc(raw)? {
            Ok(n) => self.append(n, raw),
            Err(0) => self.append(1, raw),
            Err(1) => self.append(2, raw),
            Err(2) => self.append(4, raw),
            Err(3) => {
                let clen = self.len(raw)?;
                self.len(raw)?;
                self.append(clen, raw)
            }
            Err(e) => Err(RdbFileError::BadData {
                offset: at,
                why: format!("unknown string encoding {e}"),
            }),
        }
    }

    /// An RDB string, decoded (integers as text, LZF expanded).
    fn string(&mut self) -> Result<Vec<u8>, RdbFileError> {
        let at = self.offset;
        let mut raw = Vec::new();
        self.raw_string(&mut raw)?;
        read_string(&mut Reader::new("rdb string", &raw)).map_err(|e| RdbFileError::BadData {
            offset: at,
            why: e.to_string(),
        })
    }

    /// `n` repetitions of `item`, each appending to `raw`.
    fn repeat(
        &mut self,
        raw: &mut Vec<u8>,
        item: impl Fn(&mut Self, &mut Vec<u8>) -> Result<(), RdbFileError>,
    ) -> Result<(), RdbFileError> {
        let n = self.len(raw)?;
        for _ in 0..n {
            item(self, raw)?;
        }
        Ok(())
    }

    /// The raw bytes of an object of type `ty` (after its type byte),
    /// appended to `raw`.
    fn raw_object(&mut self, ty: ObjectType, raw: &mut Vec<u8>) -> Result<(), RdbFileError> {
        use ObjectType as T;
        match ty {
            T::String
            | T::HashZipmap
            | T::ListZiplist
            | T::SetIntset
            | T::ZSetZiplist
            | T::HashZiplist
            | T::HashListpack
            | T::ZSetListpack => self.raw_string(raw),
            T::List | T::Set | T::ListQuicklist => self.repeat(raw, Self::raw_string),
            T::Hash => self.repeat(raw, |r, raw| {
                r.raw_string(raw)?;
                r.raw_string(raw)
            }),
            T::ZSet => self.repeat(raw, |r, raw| {
                r.raw_string(raw)?;
                let n = r.u8()?;
                raw.push(n);
                if n < 253 {
                    r.append(u64::from(n), raw)?;
                }
                Ok(())
            }),
            T::ZSet2 => self.repeat(raw, |r, raw| {
                r.raw_string(raw)?;
                r.append(8, raw)
            }),
            T::ListQuicklist2 => self.repeat(raw, |r, raw| {
                r.len(raw)?;
                r.raw_string(raw)
            }),
        }
    }

    /// Skips a module's serialized data: typed items up to its EOF opcode
    /// (`rdbLoadCheckModuleValue`).
    fn skip_module_value(&mut self) -> Result<(), RdbFileError> {
        let mut sink = Vec::new();
        loop {
            let at = self.offset;
            sink.clear();
            match self.len(&mut sink)? {
                0 => return Ok(()),
                1 | 2 => {
                    self.len(&mut sink)?;
                }
                3 => self.append(4, &mut sink)?,
                4 => self.append(8, &mut sink)?,
                5 => self.raw_string(&mut sink)?,
                other => {
                    return Err(RdbFileError::BadData {
                        offset: at,
                        why: format!("unknown module opcode {other}"),
                    })
                }
            }
        }
    }
}

/// Reads an RDB file from `R`, one key at a time ([`RdbFileReader::next_entry`]).
pub struct RdbFileReader<R> {
    input: Tracked<R>,
    version: u32,
    db: u64,
    done: bool,
    aux: Vec<(Vec<u8>, Vec<u8>)>,
    skipped_empty: u64,
    skipped_functions: u64,
    skipped_module_aux: u64,
    checksum_checked: bool,
}

impl<R: Read> RdbFileReader<R> {
    /// Reads the signature and version.
    pub fn new(input: R) -> Result<RdbFileReader<R>, RdbFileError> {
        let mut input = Tracked {
            inner: input,
            offset: 0,
            crc: CRC64.digest(),
        };
        let head = match input.array::<9>() {
            Ok(h) => h,
            Err(RdbFileError::Truncated { .. }) => return Err(RdbFileError::BadSignature),
            Err(e) => return Err(e),
        };
        if &head[..5] != b"REDIS" || !head[5..].iter().all(u8::is_ascii_digit) {
            return Err(RdbFileError::BadSignature);
        }
        let version: u32 = head[5..]
            .iter()
            .fold(0, |v, d| v * 10 + u32::from(d - b'0'));
        if version < 1 || version > u32::from(RDB_VERSION) {
            return Err(RdbFileError::Version(version));
        }
        Ok(RdbFileReader {
            input,
            version,
            db: 0,
            done: false,
            aux: Vec::new(),
            skipped_empty: 0,
            skipped_functions: 0,
            skipped_module_aux: 0,
            checksum_checked: false,
        })
    }

    /// The file's RDB version.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The AUX fields read so far (`redis-ver`, `repl-id`, `repl-offset`…).
    pub fn aux(&self) -> &[(Vec<u8>, Vec<u8>)] {
        &self.aux
    }

    /// The AUX field named `name`, if read.
    pub fn aux_field(&self, name: &str) -> Option<&[u8]> {
        self.aux
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v.as_slice())
    }

    /// Empty collections skipped (Redis skips them too).
    pub fn skipped_empty(&self) -> u64 {
        self.skipped_empty
    }

    /// Function libraries skipped (FUNCTION2).
    pub fn skipped_functions(&self) -> u64 {
        self.skipped_functions
    }

    /// Module AUX blocks skipped.
    pub fn skipped_module_aux(&self) -> u64 {
        self.skipped_module_aux
    }

    /// Bytes read so far.
    pub fn offset(&self) -> u64 {
        self.input.offset
    }

    /// Whether the end was reached and its checksum verified (false at
    /// the end of a file saved without one, or before version 5).
    pub fn checksum_checked(&self) -> bool {
        self.checksum_checked
    }

    /// The next key, or `None` after the EOF opcode and a right checksum.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, RdbFileError> {
        if self.done {
            return Ok(None);
        }
        let mut expire_ms = None;
        loop {
            let at = self.input.offset;
            let byte = self.input.u8()?;
            let mut sink = Vec::new();
            match byte {
                opcode::EOF => {
                    self.finish()?;
                    return Ok(None);
                }
                opcode::SELECTDB => self.db = self.input.len(&mut sink)?,
                opcode::EXPIRETIME => {
                    let secs = i32::from_le_bytes(self.input.array::<4>()?);
                    expire_ms = Some(i64::from(secs) * 1000);
                }
                opcode::EXPIRETIME_MS => {
                    expire_ms = Some(i64::from_le_bytes(self.input.array::<8>()?));
                }
                opcode::RESIZEDB => {
                    self.input.len(&mut sink)?;
                    self.input.len(&mut sink)?;
                }
                opcode::AUX => {
                    let key = self.input.string()?;
                    let value = self.input.string()?;
                    self.aux.push((key, value));
                }
                opcode::FREQ => {
                    self.input.u8()?;
                }
                opcode::IDLE => {
                    self.input.len(&mut sink)?;
                }
                opcode::MODULE_AUX => {
                    self.input.len(&mut sink)?;
                    let when_opcode = self.input.len(&mut sink)?;
                    self.input.len(&mut sink)?;
                    if when_opcode != 2 {
                        return Err(RdbFileError::BadData {
                            offset: at,
                            why: "bad when_opcode in module AUX data".into(),
                        });
                    }
                    self.input.skip_module_value()?;
                    self.skipped_module_aux += 1;
                }
                opcode::FUNCTION2 => {
                    self.input.raw_string(&mut sink)?;
                    self.skipped_functions += 1;
                }
                opcode::FUNCTION => {
                    return Err(RdbFileError::Unsupported {
                        what: "a function library in the pre-release 7.0 format".into(),
                        offset: at,
                    })
                }
                _ => match self.entry(byte, at, expire_ms)? {
                    Some(entry) => return Ok(Some(entry)),
                    None => expire_ms = None,
                },
            }
        }
    }

    /// A key and its object of type `byte` (at `at`); `None` for an empty
    /// collection, skipped.
    fn entry(
        &mut self,
        byte: u8,
        at: u64,
        expire_ms: Option<i64>,
    ) -> Result<Option<Entry>, RdbFileError> {
        let Some(ty) = ObjectType::from_byte(byte) else {
            return Err(match unsupported_type(byte) {
                Some(what) => {
                    let key = self.input.string().unwrap_or_default();
                    RdbFileError::Unsupported {
                        what: format!("{what} (key '{}')", String::from_utf8_lossy(&key)),
                        offset: at,
                    }
                }
                None => RdbFileError::UnknownType { byte, offset: at },
            });
        };
        let key = self.input.string()?;
        let object_at = self.input.offset;
        let mut object = vec![byte];
        self.input.raw_object(ty, &mut object)?;
        let value = match decode_object(&object) {
            Ok(v) => v,
            Err(DumpError::BadData(why)) if why == "empty collection" => {
                self.skipped_empty += 1;
                return Ok(None);
            }
            Err(source) => {
                return Err(RdbFileError::BadObject {
                    key: String::from_utf8_lossy(&key).into_owned(),
                    offset: object_at,
                    source,
                })
            }
        };
        Ok(Some(Entry {
            db: self.db,
            key,
            value,
            expire_ms,
            object,
        }))
    }

    /// After the EOF opcode: the checksum (version 5 on).
    fn finish(&mut self) -> Result<(), RdbFileError> {
        self.done = true;
        if self.version < 5 {
            return Ok(());
        }
        let computed = self.input.crc.clone().finalize();
        let offset = self.input.offset;
        let stored = u64::from_le_bytes(self.input.array::<8>()?);
        if stored == 0 {
            return Ok(());
        }
        if stored != computed {
            return Err(RdbFileError::Checksum {
                offset,
                stored,
                computed,
            });
        }
        self.checksum_checked = true;
        Ok(())
    }
}

impl<R: Read> Iterator for RdbFileReader<R> {
    type Item = Result<Entry, RdbFileError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_entry() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => None,
            Err(e) => {
                // One error ends the stream.
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Reads a whole RDB file and checks it (every object decoded, the
/// checksum verified) without keeping anything: the number of keys.
pub fn validate(input: impl Read) -> Result<u64, RdbFileError> {
    let mut reader = RdbFileReader::new(input)?;
    let mut keys = 0;
    while reader.next_entry()?.is_some() {
        keys += 1;
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{encode_object, EncodeOptions};

    /// A version-10 file of `body` (opcodes and keys), EOF and its CRC.
    fn file(body: &[u8]) -> Vec<u8> {
        let mut f = b"REDIS0010".to_vec();
        f.extend_from_slice(body);
        f.push(opcode::EOF);
        let crc = CRC64.checksum(&f);
        f.extend_from_slice(&crc.to_le_bytes());
        f
    }

    fn key_value(key: &[u8], value: &Value) -> Vec<u8> {
        let object = encode_object(value, EncodeOptions::default());
        let mut out = vec![object[0], key.len() as u8];
        out.extend_from_slice(key);
        out.extend_from_slice(&object[1..]);
        out
    }

    fn read(bytes: &[u8]) -> Result<Vec<Entry>, RdbFileError> {
        RdbFileReader::new(bytes)?.collect()
    }

    #[test]
    fn opcodes_set_db_and_expiry_of_the_next_key_only() {
        let mut body = vec![opcode::SELECTDB, 2, opcode::RESIZEDB, 2, 1];
        body.extend_from_slice(&[opcode::EXPIRETIME_MS]);
        body.extend_from_slice(&1_700_000_000_123i64.to_le_bytes());
        body.extend_from_slice(&[opcode::FREQ, 5, opcode::IDLE, 9]);
        body.extend(key_value(b"a", &Value::String(b"1".to_vec())));
        body.push(opcode::EXPIRETIME);
        body.extend_from_slice(&1_700_000_000i32.to_le_bytes());
        body.extend(key_value(b"b", &Value::List(vec![b"x".to_vec()])));
        body.extend(key_value(b"c", &Value::Set(vec![b"m".to_vec()])));
        let got = read(&file(&body)).unwrap();
        let summary: Vec<_> = got
            .iter()
            .map(|e| (e.db, e.key.clone(), e.expire_ms))
            .collect();
        assert_eq!(
            summary,
            [
                (2, b"a".to_vec(), Some(1_700_000_000_123)),
                (2, b"b".to_vec(), Some(1_700_000_000_000)),
                (2, b"c".to_vec(), None),
            ]
        );
    }

    #[test]
    fn module_aux_is_skipped_and_empty_collections_too() {
        // MODULE_AUX: id, when_opcode UINT, when, then UINT 7, STRING "ab", EOF.
        let mut body = vec![opcode::MODULE_AUX, 5, 2, 1, 2, 7, 5, 2, b'a', b'b', 0];
        // An empty list (quicklist 2 with no nodes) is skipped, as Redis does.
        body.extend_from_slice(&[18, 1, b'e', 0]);
        body.extend(key_value(b"k", &Value::String(b"v".to_vec())));
        let bytes = file(&body);
        let mut reader = RdbFileReader::new(bytes.as_slice()).unwrap();
        let e = reader.next_entry().unwrap().unwrap();
        assert_eq!(e.key, b"k");
        assert!(reader.next_entry().unwrap().is_none());
        assert_eq!(reader.skipped_module_aux(), 1);
        assert_eq!(reader.skipped_empty(), 1);
    }

    #[test]
    fn faults_name_their_offset() {
        let err = |body: &[u8]| read(&file(body)).unwrap_err().to_string();
        assert_eq!(
            err(&[opcode::SELECTDB, 0, 0x08]),
            "RDB: unknown opcode or object type 8 at byte 11"
        );
        assert!(err(&[15, 1, b's']).contains("a stream (key 's') at byte 9 cannot be loaded"));
        assert!(err(&[opcode::FUNCTION]).contains("pre-release"));
        // A set whose members repeat.
        let e = err(&[2, 1, b'k', 2, 1, b'x', 1, b'x']);
        assert!(e.starts_with("RDB: bad value of key 'k' at byte 12"), "{e}");
        assert!(matches!(
            read(b"REDIS0011\xff"),
            Err(RdbFileError::Version(11))
        ));
        assert!(matches!(read(b"RDB"), Err(RdbFileError::BadSignature)));
        assert!(matches!(
            read(b"REDIS0010\x00\x01k"),
            Err(RdbFileError::Truncated { offset: 12 })
        ));
    }
}
