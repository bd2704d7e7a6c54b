//! The raw RocksDB baseline: a plain `rocksdb::DB` with default options (as
//! the engine opens its instances, without comparators or compaction
//! filters), written and read with the keys and values of the SET and GET
//! steps.

use std::path::Path;
use std::time::Instant;

use rocksdb::{BottommostLevelCompaction, CompactOptions, Options, DB};

use super::measure::{rocksdb_version, sst_bytes_written, Space, WriteAmp};
use super::workload::{shuffled, string_key, Kind, Sizes, Timing};
use crate::error::CompareError;

/// What the baseline measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RawResult {
    /// `put` of `keys` new keys.
    pub put: Timing,
    /// `get` of every key.
    pub get: Timing,
    /// A new iterator, a seek and 100 steps over consecutive keys, reading
    /// every value: the floor of a range read of 100 elements (LRANGE 0 99,
    /// ZRANGEBYSCORE over 100 members), `keys / 10` times.
    pub scan: Timing,
    /// Space after a full compaction.
    pub space: Space,
    /// Write amplification.
    pub write_amp: WriteAmp,
    /// The RocksDB version, as its `LOG` gives it.
    pub rocksdb_version: Option<String>,
}

impl RawResult {
    /// The baseline over several rounds: put and get are the medians of
    /// the rounds; space and write amplification come from the first.
    /// `rounds` must not be empty.
    pub fn of_rounds(rounds: Vec<RawResult>) -> RawResult {
        let put = Timing::of_rounds(&rounds.iter().map(|r| r.put.clone()).collect::<Vec<_>>());
        let get = Timing::of_rounds(&rounds.iter().map(|r| r.get.clone()).collect::<Vec<_>>());
        let scan = Timing::of_rounds(&rounds.iter().map(|r| r.scan.clone()).collect::<Vec<_>>());
        let first = rounds.into_iter().next().expect("at least one round");
        RawResult {
            put,
            get,
            scan,
            ..first
        }
    }
}

/// Times [`RawResult::scan`]: `keys / 10` scans of 100 keys from spread
/// starting points, each with its own iterator (as each engine command).
fn scan_100(db: &DB, keys: &[Vec<u8>]) -> Result<Timing, CompareError> {
    let scans = (keys.len() / 10).max(1);
    let span = keys.len().saturating_sub(99).max(1);
    let mut seen = 0usize;
    let started = Instant::now();
    for (j, _) in shuffled(scans).enumerate() {
        let mut it = db.raw_iterator();
        it.seek(&keys[(j * 37) % span]);
        for _ in 0..100 {
            let Some(value) = it.value() else { break };
            seen += value.len().min(1);
            it.next();
        }
        it.status().map_err(db_err)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    if seen < scans.min(keys.len()) {
        return Err(crate::error::fail(
            "raw rocksdb: a scan found nothing".into(),
        ));
    }
    Ok(Timing::new("scan 100", Kind::Read, scans as u64, seconds))
}

/// A RocksDB error of the baseline.
pub(super) fn db_err(e: rocksdb::Error) -> CompareError {
    crate::error::fail(format!("raw rocksdb: {e}"))
}

/// A plain `rocksdb::DB` with default options in `dir`, created if missing:
/// the baseline every raw figure is measured on.
pub(super) fn open(dir: &Path) -> Result<DB, CompareError> {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    DB::open(&opts, dir).map_err(db_err)
}

/// Runs the baseline in `dir` (empty).
pub fn run(dir: &Path, sizes: &Sizes) -> Result<RawResult, CompareError> {
    let db = open(dir)?;
    let value = sizes.value();
    let keys: Vec<Vec<u8>> = (0..sizes.keys).map(string_key).collect();
    let started = Instant::now();
    for key in &keys {
        db.put(key, &value).map_err(db_err)?;
    }
    let put = Timing::new(
        "put",
        Kind::Write,
        keys.len() as u64,
        started.elapsed().as_secs_f64(),
    );
    let order: Vec<usize> = shuffled(keys.len()).collect();
    let started = Instant::now();
    for &i in &order {
        let found = db.get(&keys[i]).map_err(db_err)?;
        if found.is_none() {
            return Err(crate::error::fail(
                "raw rocksdb: a written key is missing".into(),
            ));
        }
    }
    let get = Timing::new(
        "get",
        Kind::Read,
        keys.len() as u64,
        started.elapsed().as_secs_f64(),
    );
    let scan = scan_100(&db, &keys)?;
    db.flush().map_err(db_err)?;
    let mut copts = CompactOptions::default();
    copts.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &copts);
    let sst_bytes = db
        .property_int_value("rocksdb.total-sst-files-size")
        .map_err(db_err)?
        .unwrap_or(0);
    let mut records = 0u64;
    let mut it = db.raw_iterator();
    it.seek_to_first();
    while it.valid() {
        records += 1;
        it.next();
    }
    it.status().map_err(db_err)?;
    drop(it);
    drop(db);
    let logical_bytes = keys.iter().map(|k| (k.len() + value.len()) as u64).sum();
    Ok(RawResult {
        put,
        get,
        scan,
        space: Space::new(keys.len() as u64, sst_bytes, records),
        write_amp: WriteAmp::new(logical_bytes, sst_bytes_written(dir)?),
        rocksdb_version: rocksdb_version(dir)?,
    })
}
