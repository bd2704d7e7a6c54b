//! Whole RDB files: a store written out as the `dump.rdb` redis-server 7.0
//! writes ([`export`]), and an RDB file redis-server wrote read into a
//! store of any format ([`import`], [`load_batch`]).
//!
//! Both go one key at a time: memory holds one key's value (and, on
//! import, a batch of at most [`BATCH_KEYS`] keys or [`BATCH_BYTES`]
//! bytes), whatever the file's size.
//!
//! Keys are written the way `RESTORE … ABSTTL` writes them: each format's
//! own rules, its expiry range, a fresh version. A key whose expiry has
//! passed is not written (RESTORE creates nothing either); a key the
//! format cannot hold (an expiry past its range, a score it does not
//! store…) is named with the engine's reason and the rest goes on.

use std::io::{Read, Write};

use redcodec_codec::Codec;
use redcodec_engine::keyspace::{Ctx, ExpireAt};
use redcodec_engine::store::KvStore;
use redcodec_engine::value::{read_value, write_value, Value};
use redcodec_engine::walk::KeyWalk;
use redcodec_engine::{CmdError, EngineCore};
use redcodec_rdb::file_reader::{Entry, RdbFileError, RdbFileReader};
use redcodec_rdb::file_writer::{FileInfo, RdbFileWriter};
use redcodec_rdb::EncodeOptions;

/// Keys written per store write while loading.
pub const BATCH_KEYS: usize = 256;
/// Payload bytes that close a batch early.
pub const BATCH_BYTES: usize = 4 << 20;

/// Why an RDB file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum RdbError {
    /// Reading or writing the store failed.
    #[error("the store: {0}")]
    Store(#[from] CmdError),
    /// Writing the file failed.
    #[error("writing the RDB file: {0}")]
    Write(#[from] std::io::Error),
    /// The file is not a valid RDB (the error names the byte offset).
    #[error("{0}")]
    File(#[from] RdbFileError),
}

/// What an export wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exported {
    /// Keys written.
    pub keys: u64,
    /// Bytes of the file.
    pub bytes: u64,
    /// Keys left out because their metadata does not decode (`redcodec
    /// check` names them).
    pub unreadable: u64,
}

/// An RDB file being written: the header, then every live key of one
/// engine per database index ([`Exporter::database`]), then the end.
pub struct Exporter<W: Write> {
    writer: RdbFileWriter<W>,
    counts: Exported,
}

impl<W: Write> Exporter<W> {
    /// Starts the file with the header `info`.
    pub fn new(out: W, info: &FileInfo) -> Result<Exporter<W>, RdbError> {
        Ok(Exporter {
            writer: RdbFileWriter::new(out, info, EncodeOptions::default())?,
            counts: Exported::default(),
        })
    }

    /// Writes every live key of `core` as database `db`. The caller makes
    /// the read consistent (a point-in-time copy, a store nobody writes,
    /// or no write running meanwhile).
    pub fn database<C: Codec, S: KvStore>(
        &mut self,
        db: u32,
        core: &EngineCore<C, S>,
    ) -> Result<(), RdbError> {
        let ctx = Ctx::new(core);
        let mut walk = KeyWalk::new(&ctx, None);
        let mut selected = false;
        while let Some((key, meta)) = walk.next()? {
            let Some(meta) = meta else {
                self.counts.unreadable += 1;
                continue;
            };
            let value = read_value(&ctx, &key, &meta)?;
            if !selected {
                self.writer.select_db(db, 0, 0)?;
                selected = true;
            }
            self.counts.keys += 1;
            let expire = (meta.expire_ms != 0).then_some(meta.expire_ms);
            self.writer.key(&key, &value.into(), expire)?;
        }
        Ok(())
    }

    /// Ends the file (EOF and checksum); returns the writer and the counts.
    pub fn finish(self) -> Result<(W, Exported), RdbError> {
        let (out, bytes) = self.writer.finish()?;
        Ok((
            out,
            Exported {
                bytes,
                ..self.counts
            },
        ))
    }
}

/// A key the engine did not write, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The key.
    pub key: Vec<u8>,
    /// The engine's reason (a Redis error text).
    pub reason: String,
}

/// What a load wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Loaded {
    /// Keys written.
    pub keys: u64,
    /// Keys not written because their expiry had passed.
    pub expired: u64,
    /// Keys of databases that have no engine here (`import`'s `dbs`).
    pub skipped: u64,
    /// The first refused keys (at most [`Loaded::REFUSED_KEPT`]).
    pub refused: Vec<Refused>,
    /// How many keys were refused in all.
    pub refused_count: u64,
}

impl Loaded {
    /// How many refused keys are kept by name.
    pub const REFUSED_KEPT: usize = 10;

    fn refuse(&mut self, key: &[u8], reason: String) {
        if self.refused.len() < Self::REFUSED_KEPT {
            self.refused.push(Refused {
                key: key.to_vec(),
                reason,
            });
        }
        self.refused_count += 1;
    }
}

/// The absolute expiry RESTORE … ABSTTL would give `entry` (0: none; a
/// key that expired at the epoch is as expired as any past one).
fn expiry_of(entry: &Entry) -> u64 {
    entry
        .expire_ms
        .map_or(0, |ms| u64::try_from(ms).unwrap_or(0).max(1))
}

/// Writes `entry` into `ctx`'s batch, unless it has expired (then `false`).
fn stage<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, entry: &Entry) -> Result<bool, CmdError> {
    let at = expiry_of(entry);
    if at != 0 && at <= ctx.now_ms() {
        return Ok(false);
    }
    let view = ctx.view(&entry.key)?;
    let value = Value::from(entry.value.clone());
    write_value(ctx, &entry.key, &view, &value, ExpireAt::absolute(at))?;
    Ok(true)
}

/// Writes `entries` into `core` in one store write; if the engine refuses
/// any of them, writes them again one key at a time, so that only the
/// refused keys are left out (and named in `loaded`).
pub fn load_batch<C: Codec, S: KvStore>(
    core: &EngineCore<C, S>,
    entries: &[Entry],
    loaded: &mut Loaded,
) {
    if entries.is_empty() {
        return;
    }
    let mut ctx = Ctx::new(core);
    let mut written = (0, 0);
    let together = entries.iter().try_for_each(|e| {
        if stage(&mut ctx, e)? {
            written.0 += 1;
        } else {
            written.1 += 1;
        }
        Ok::<(), CmdError>(())
    });
    if together.is_ok() && ctx.commit().is_ok() {
        loaded.keys += written.0;
        loaded.expired += written.1;
        return;
    }
    for entry in entries {
        let mut ctx = Ctx::new(core);
        match stage(&mut ctx, entry).and_then(|w| ctx.commit().map(|()| w)) {
            Ok(true) => loaded.keys += 1,
            Ok(false) => loaded.expired += 1,
            Err(e) => loaded.refuse(&entry.key, e.to_string()),
        }
    }
}

/// Reads the RDB file `input` in batches of keys of one database (at most
/// [`BATCH_KEYS`] keys or [`BATCH_BYTES`] bytes) and hands each to
/// `write` with its database index — which loads it with [`load_batch`]
/// into the engine of that database, or counts it as skipped. The file is
/// not checked whole first: a caller that must not be left with part of a
/// bad file checks it with [`redcodec_rdb::file_reader::validate`] before.
pub fn import<R: Read>(
    input: R,
    mut write: impl FnMut(u64, &[Entry], &mut Loaded),
) -> Result<Loaded, RdbError> {
    let mut reader = RdbFileReader::new(input)?;
    let mut loaded = Loaded::default();
    let mut batch: Vec<Entry> = Vec::new();
    let mut batch_db = 0;
    let mut bytes = 0;
    while let Some(entry) = reader.next_entry()? {
        if entry.db != batch_db || batch.len() >= BATCH_KEYS || bytes >= BATCH_BYTES {
            write(batch_db, &batch, &mut loaded);
            batch.clear();
            bytes = 0;
            batch_db = entry.db;
        }
        bytes += entry.object.len() + entry.key.len();
        batch.push(entry);
    }
    write(batch_db, &batch, &mut loaded);
    Ok(loaded)
}
