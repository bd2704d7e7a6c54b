//! One format through the workload, the space and write-amplification
//! measurements, and the DEL of a big hash.

use std::time::{Duration, Instant};

use redcodec_codec::{Codec, DataType, DeleteModel, VersionWidth};
use redcodec_engine::store::Batch;
use redcodec_engine::{Engine, EngineOptions, Reply};
use redcodec_formats::{AnyCodec, Format, FormatOptions};

use super::figure::{Figure, Spread};
use super::measure::{sst_bytes_written, Space, WriteAmp};
use super::workload::{fill_hash, run_engine, Sizes, Timing};
use crate::error::CompareError;

/// Everything measured on one format.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FormatResult {
    /// Format name.
    pub format: String,
    /// Whether element records carry versions (DEL may then be constant-time).
    pub version_based: bool,
    /// One timing per workload step.
    pub timings: Vec<Timing>,
    /// Space after a full compaction.
    pub space: Space,
    /// Write amplification.
    pub write_amp: WriteAmp,
    /// DEL of a small and of a big hash.
    pub del: Vec<DelResult>,
}

/// DEL of one hash.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DelResult {
    /// Fields of the hash.
    pub fields: u64,
    /// Median time of one DEL, in seconds.
    pub seconds: f64,
    /// Fastest and slowest of the timed DELs, in seconds (`None` for one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds_spread: Option<Spread>,
    /// DELs timed (the hash's metadata is put back between them on formats
    /// that delete by dropping or resetting metadata; otherwise 1).
    pub samples: u64,
    /// Records in the store before the DEL.
    pub records_before: u64,
    /// Records left after the DEL and a full compaction.
    pub records_left: u64,
    /// Of those, whether the hash's metadata record is one (formats whose
    /// DEL rewrites metadata as empty keep it).
    pub meta_left: bool,
    /// SST bytes after the DEL and a full compaction.
    pub sst_bytes_left: u64,
}

impl DelResult {
    /// Element records of the deleted hash still stored after compaction.
    pub fn elements_left(&self) -> u64 {
        self.records_left - u64::from(self.meta_left)
    }

    /// The time of one DEL, in seconds, with its spread.
    pub fn time(&self) -> Figure {
        Figure {
            value: self.seconds,
            spread: self.seconds_spread,
        }
    }
}

/// A fresh engine of `format` in `dir`, with default options.
pub(super) fn open(
    format: Format,
    dir: &std::path::Path,
) -> Result<Engine<AnyCodec>, CompareError> {
    let codec = format.codec(&FormatOptions::default())?;
    Ok(Engine::open(codec, dir, EngineOptions::default())?)
}

/// Stored records, not counting the ones the format writes on every open
/// (nemo's separators), which hold no data.
fn count_records(engine: &Engine<AnyCodec>) -> Result<u64, CompareError> {
    let bootstrap: Vec<_> = engine
        .codec()
        .bootstrap_records()
        .into_iter()
        .map(|(record, _)| record)
        .collect();
    let mut n = 0u64;
    engine.store().for_each_pair(|place, key, _| {
        if !bootstrap.iter().any(|r| r.place == place && r.key == key) {
            n += 1;
        }
        Ok(())
    })?;
    Ok(n)
}

/// The timings of one more pass of the workload on `format`, in a fresh store.
pub fn timings(
    format: Format,
    sizes: &Sizes,
    progress: impl FnMut(&str),
) -> Result<Vec<super::workload::Timing>, CompareError> {
    let dir = tempfile::tempdir()?;
    let engine = open(format, dir.path())?;
    Ok(run_engine(&engine, sizes, progress)?.0)
}

/// Runs the workload on `format`; `progress(step)` names each step as it starts.
pub fn run(
    format: Format,
    sizes: &Sizes,
    mut progress: impl FnMut(&str),
) -> Result<FormatResult, CompareError> {
    let dir = tempfile::tempdir()?;
    let engine = open(format, dir.path())?;
    let version_based = engine.capabilities().version_width != VersionWidth::None;
    let (timings, written) = run_engine(&engine, sizes, &mut progress)?;
    progress("compaction");
    engine.store().flush()?;
    engine.compact()?;
    let space = Space::new(
        written.elements,
        engine
            .store()
            .property_sum("rocksdb.total-sst-files-size")?,
        count_records(&engine)?,
    );
    drop(engine);
    let write_amp = WriteAmp::new(written.logical_bytes, sst_bytes_written(dir.path())?);
    let mut del = Vec::new();
    let mut del_sizes = vec![sizes.big_hash.min(1000), sizes.big_hash];
    del_sizes.dedup();
    for fields in del_sizes {
        progress(&format!("DEL of a {fields}-field hash"));
        del.push(del_hash(format, fields, sizes)?);
    }
    Ok(FormatResult {
        format: format.name().to_string(),
        version_based,
        timings,
        space,
        write_amp,
        del,
    })
}

fn del_hash(format: Format, fields: usize, sizes: &Sizes) -> Result<DelResult, CompareError> {
    let dir = tempfile::tempdir()?;
    let engine = open(format, dir.path())?;
    let key = b"big".to_vec();
    fill_hash(&engine, &key, fields, &sizes.value())?;
    engine.store().flush()?;
    let records_before = count_records(&engine)?;
    let record = engine
        .codec()
        .meta_record(&key, DataType::Hash)
        .map_err(|e| crate::error::fail(format!("metadata record of the big hash: {e}")))?;
    let saved = engine
        .store()
        .get(record.place, &record.key)?
        .ok_or_else(|| crate::error::fail("the big hash has no metadata record".into()))?;
    let restorable = !matches!(
        engine.capabilities().delete,
        DeleteModel::RemoveElements { .. }
    );
    let samples = if restorable { 7 } else { 1 };
    let mut times = Vec::with_capacity(samples);
    for n in 0..samples {
        let started = Instant::now();
        let reply = engine.execute(&[b"DEL".to_vec(), key.clone()]);
        times.push(started.elapsed());
        if reply != Reply::Integer(1) {
            return Err(crate::error::fail(format!(
                "DEL of the big hash replied {reply}"
            )));
        }
        if n + 1 < samples {
            let mut restore = Batch::default();
            restore.put(record.place, record.key.clone(), saved.clone());
            engine.store().write(restore)?;
        }
    }
    let time = Figure::of_samples(&times.iter().map(Duration::as_secs_f64).collect::<Vec<_>>());
    engine.compact()?;
    let records_left = count_records(&engine)?;
    let meta_left = engine.store().get(record.place, &record.key)?.is_some();
    let sst_bytes_left = engine
        .store()
        .property_sum("rocksdb.total-sst-files-size")?;
    Ok(DelResult {
        fields: fields as u64,
        seconds: time.value,
        seconds_spread: time.spread,
        samples: samples as u64,
        records_before,
        records_left,
        meta_left,
        sst_bytes_left,
    })
}
