//! The keyspace as an RDB file: every live key of the engine, with its
//! type, value and absolute expiry, written as redis-server 7.0 writes
//! `dump.rdb` (one database, 0).

use std::io::Write;

use redcodec_engine::keyspace::Ctx;
use redcodec_engine::value::{read_value, Value};
use redcodec_engine::walk::KeyWalk;
use redcodec_engine::{CmdError, EngineCore};
use redcodec_formats::AnyCodec;
use redcodec_rdb::file_writer::{FileInfo, RdbFileWriter};
use redcodec_rdb::EncodeOptions;

/// Why a snapshot could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Reading the store failed.
    #[error("reading the store: {0}")]
    Read(#[from] CmdError),
    /// Writing the file failed.
    #[error("writing the RDB file: {0}")]
    Write(#[from] std::io::Error),
}

/// An engine value as an RDB value.
pub fn rdb_value(value: Value) -> redcodec_rdb::Value {
    match value {
        Value::String(s) => redcodec_rdb::Value::String(s),
        Value::Hash(p) => redcodec_rdb::Value::Hash(p),
        Value::List(l) => redcodec_rdb::Value::List(l),
        Value::Set(m) => redcodec_rdb::Value::Set(m),
        Value::ZSet(m) => redcodec_rdb::Value::ZSet(m),
    }
}

/// Writes every live key of `core` as an RDB file with the header
/// `info` to `out`; returns the writer, the file's length and how many
/// keys it holds. Keys whose metadata cannot be decoded are left out
/// (they are reported by `redcodec check`). The caller makes the read
/// consistent (no write runs meanwhile).
pub fn write_rdb<W: Write>(
    core: &EngineCore<AnyCodec>,
    out: W,
    info: &FileInfo,
) -> Result<(W, u64, u64), SnapshotError> {
    let mut w = RdbFileWriter::new(out, info, EncodeOptions::default())?;
    let ctx = Ctx::new(core);
    let mut walk = KeyWalk::new(&ctx, None);
    let mut keys = 0u64;
    while let Some((key, meta)) = walk.next()? {
        let Some(meta) = meta else { continue };
        let value = read_value(&ctx, &key, &meta)?;
        if keys == 0 {
            w.select_db(0, 0, 0)?;
        }
        keys += 1;
        let expire = (meta.expire_ms != 0).then_some(meta.expire_ms);
        w.key(&key, &rdb_value(value), expire)?;
    }
    let (out, len) = w.finish()?;
    Ok((out, len, keys))
}
