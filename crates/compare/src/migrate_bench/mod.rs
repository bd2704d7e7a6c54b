//! `redcodec migrate-bench`: how fast a migration goes next to a raw
//! RocksDB write of the same data, and how much memory it needs.
//!
//! For each dataset size the source store is built first (in this
//! process); then two child processes — this same binary — run one
//! measurement each, so each peak resident set (`VmHWM` of
//! `/proc/self/status`) is that run's alone:
//!
//! - **raw**: a plain RocksDB (default options, as the engine opens its
//!   instances) written with one pair per element, in write batches of
//!   the migration's batch size;
//! - **migrate**: the same migration `redcodec migrate` runs (planning
//!   pass, checkpoint, progress observer), from the source store into an
//!   empty destination.
//!
//! Rates are elements per second of the timed part (opening stores is not
//! timed), the best of `--runs` runs; peak RSS the highest of them. The
//! goals: a migration at least half the raw write rate, and a peak
//! resident set under 256 MiB whatever the dataset's size.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use clap::{Args, ValueEnum};
use redcodec_engine::value::Value;
use redcodec_engine::{Engine, EngineOptions};
use redcodec_formats::{Format, FormatOptions};
use redcodec_migrate::{self as migrate, MigrateOptions, Quiet, CHECKPOINT_FILE};
use rocksdb::{Options, WriteBatch, DB};
use serde::{Deserialize, Serialize};

use crate::error::{fail, CompareError};
use crate::report::thousands;
use dataset::for_each_piece;

mod dataset;
mod raw_copy;

use raw_copy::{open_read_only, raw_copy};

/// Goal: migration rate over raw write rate.
const RATE_GOAL: f64 = 0.5;

/// Goal: peak resident set of a migration, in MiB.
const RSS_GOAL_MIB: f64 = 256.0;

/// The options of `redcodec migrate-bench`.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Elements of the largest dataset; a dataset of a quarter of it is
    /// measured too, to show memory does not grow with size.
    #[arg(long, default_value_t = 1_000_000)]
    pub elements: usize,
    /// Source format.
    #[arg(long, default_value = "kvrocks")]
    pub from: String,
    /// Destination format.
    #[arg(long, default_value = "blackwidow")]
    pub to: String,
    /// Runs of each measurement: the best rate and the highest peak RSS
    /// are reported (other work on the machine only slows a run down).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Instead of the benchmark: time a raw RocksDB write (default
    /// options, no write-ahead log) of every pair of the `--to` store in
    /// this directory, the floor of the migration that wrote it, at the
    /// store's own size. The copy is written beside the store and removed.
    #[arg(long, value_name = "DIR")]
    pub raw_copy_of: Option<PathBuf>,
    /// Internal: run one measurement in this process and print it as JSON.
    #[arg(long, hide = true)]
    pub child: Option<Child>,
    /// Internal: the store directory of the measurement.
    #[arg(long, hide = true)]
    pub src: Option<PathBuf>,
    /// Internal: the destination directory of the measurement.
    #[arg(long, hide = true)]
    pub dst: Option<PathBuf>,
}

/// The measurement a child process runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Child {
    /// Raw RocksDB writes.
    Raw,
    /// A migration.
    Migrate,
}

/// What a child measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Measured {
    /// Elements written.
    pub elements: u64,
    /// Seconds of the timed part.
    pub seconds: f64,
    /// Peak resident set, KiB.
    pub peak_rss_kib: u64,
}

impl Measured {
    fn rate(&self) -> f64 {
        self.elements as f64 / self.seconds.max(1e-9)
    }

    fn rss_mib(&self) -> f64 {
        self.peak_rss_kib as f64 / 1024.0
    }
}

/// Runs the benchmark, or one of its measurements with `--child`.
pub fn run(args: &BenchArgs) -> Result<(), CompareError> {
    let from: Format = args.from.parse()?;
    let to: Format = args.to.parse()?;
    if let Some(child) = args.child {
        let measured = match child {
            Child::Raw => raw_child(args)?,
            Child::Migrate => migrate_child(args, from, to)?,
        };
        println!(
            "{}",
            serde_json::to_string(&measured).map_err(|e| fail(e.to_string()))?
        );
        return Ok(());
    }
    if let Some(dir) = &args.raw_copy_of {
        let copy = raw_copy(to, dir)?;
        let megabytes = copy.bytes as f64 / 1e6;
        println!(
            "migrate-bench: raw copy of {} ({to}; plain RocksDB, default options, no WAL, batches of {}, memtables flushed): {} records, {megabytes:.1} MB in {:.1} s: {:.1} MB/s, {} records/s; peak RSS {:.0} MiB",
            dir.display(),
            thousands(MigrateOptions::default().batch_elements as u64),
            thousands(copy.records),
            copy.seconds,
            megabytes / copy.seconds.max(1e-9),
            thousands((copy.records as f64 / copy.seconds.max(1e-9)) as u64),
            peak_rss_kib() as f64 / 1024.0
        );
        return Ok(());
    }
    let sizes = [args.elements / 4, args.elements];
    println!(
        "migrate-bench: {from} → {to}, write batches of {} elements; raw = plain RocksDB writes of the same elements; best of {} runs",
        thousands(MigrateOptions::default().batch_elements as u64),
        args.runs.max(1)
    );
    println!();
    println!("| elements | raw write (elements/s) | migrate (elements/s) | ratio | raw peak RSS | migrate peak RSS |");
    println!("|---:|---:|---:|---:|---:|---:|");
    let mut rows = Vec::new();
    for size in sizes {
        let dir = tempfile::tempdir()?;
        let src = dir.path().join("src");
        build_source(from, &src, size)?;
        let mut raws = Vec::new();
        let mut migs = Vec::new();
        for _ in 0..args.runs.max(1) {
            let (raw_dir, dst) = (dir.path().join("raw"), dir.path().join("dst"));
            raws.push(spawn(args, Child::Raw, &raw_dir, None, size)?);
            migs.push(spawn(args, Child::Migrate, &src, Some(&dst), size)?);
            std::fs::remove_dir_all(&raw_dir)?;
            std::fs::remove_dir_all(&dst)?;
        }
        let (raw, mig) = (best(&raws), best(&migs));
        if mig.elements != size as u64 || raw.elements != size as u64 {
            return Err(fail(format!(
                "expected {size} elements, raw wrote {} and migrate {}",
                raw.elements, mig.elements
            )));
        }
        println!(
            "| {} | {} | {} | {:.2}× | {:.0} MiB | {:.0} MiB |",
            thousands(size as u64),
            thousands(raw.rate() as u64),
            thousands(mig.rate() as u64),
            mig.rate() / raw.rate(),
            raw.rss_mib(),
            mig.rss_mib()
        );
        rows.push((size, raw, mig));
    }
    println!();
    let Some((size, raw, mig)) = rows.last() else {
        return Ok(());
    };
    let ratio = mig.rate() / raw.rate();
    println!(
        "goal: migration ≥ {RATE_GOAL}× the raw write rate ({} elements): {ratio:.2}× — {}",
        thousands(*size as u64),
        met(ratio >= RATE_GOAL)
    );
    let peaks: Vec<String> = rows
        .iter()
        .map(|(_, _, m)| format!("{:.0}", m.rss_mib()))
        .collect();
    let worst = rows.iter().map(|(_, _, m)| m.rss_mib()).fold(0.0, f64::max);
    println!(
        "goal: migration peak RSS < {RSS_GOAL_MIB:.0} MiB at every size: {} MiB — {}",
        peaks.join(" / "),
        met(worst < RSS_GOAL_MIB)
    );
    Ok(())
}

/// The fastest of several runs, with the highest peak RSS of them all.
fn best(runs: &[Measured]) -> Measured {
    let mut best = runs[0].clone();
    for run in runs {
        if run.rate() > best.rate() {
            best.seconds = run.seconds;
            best.elements = run.elements;
        }
        best.peak_rss_kib = best.peak_rss_kib.max(run.peak_rss_kib);
    }
    best
}

fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "not met"
    }
}

/// Runs one measurement in a child process and reads its JSON line.
fn spawn(
    args: &BenchArgs,
    child: Child,
    src: &Path,
    dst: Option<&Path>,
    size: usize,
) -> Result<Measured, CompareError> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args(["migrate-bench", "--from", &args.from, "--to", &args.to])
        .args(["--elements", &size.to_string()])
        .arg("--child")
        .arg(match child {
            Child::Raw => "raw",
            Child::Migrate => "migrate",
        })
        .arg("--src")
        .arg(src);
    if let Some(dst) = dst {
        cmd.arg("--dst").arg(dst);
    }
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(fail(format!(
            "the {child:?} measurement failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).map_err(|e| fail(format!("measurement output: {e}")))
}

/// Writes the dataset of `size` elements into a new store of `format`.
fn build_source(format: Format, dir: &Path, size: usize) -> Result<(), CompareError> {
    let codec = format.codec(&FormatOptions::default())?;
    let engine = Engine::open(codec, dir, EngineOptions::default())?;
    let mut failure = None;
    for_each_piece(size, |key, piece| {
        if failure.is_some() {
            return;
        }
        let mut owned: Vec<Vec<u8>> = Vec::new();
        let name: &[u8] = match &piece {
            Value::String(v) => {
                owned.push(v.clone());
                b"SET"
            }
            Value::Hash(pairs) => {
                for (f, v) in pairs {
                    owned.push(f.clone());
                    owned.push(v.clone());
                }
                b"HSET"
            }
            Value::List(items) => {
                owned.extend(items.iter().cloned());
                b"RPUSH"
            }
            Value::Set(members) => {
                owned.extend(members.iter().cloned());
                b"SADD"
            }
            Value::ZSet(members) => {
                for (m, s) in members {
                    owned.push(s.to_string().into_bytes());
                    owned.push(m.clone());
                }
                b"ZADD"
            }
        };
        let mut cmd: Vec<&[u8]> = vec![name, key];
        cmd.extend(owned.iter().map(Vec::as_slice));
        if let redcodec_engine::Reply::Error(e) = engine.execute(&cmd) {
            failure = Some(e);
        }
    });
    match failure {
        Some(e) => Err(fail(format!("building the dataset: {e}"))),
        None => Ok(engine.store().flush()?),
    }
}

/// The peak resident set of this process, KiB.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// The raw measurement: one RocksDB pair per element.
fn raw_child(args: &BenchArgs) -> Result<Measured, CompareError> {
    let dir = args
        .src
        .as_ref()
        .ok_or_else(|| fail("--src is required".into()))?;
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let db = DB::open(&opts, dir).map_err(|e| fail(e.to_string()))?;
    let batch_size = MigrateOptions::default().batch_elements;
    let mut batch = WriteBatch::default();
    let mut queued = 0usize;
    let mut elements = 0u64;
    let mut failure = None;
    let started = Instant::now();
    let mut index = 0u64;
    let mut last_key: Vec<u8> = Vec::new();
    for_each_piece(args.elements, |key, piece| {
        if key != last_key.as_slice() {
            last_key = key.to_vec();
            index = 0;
        }
        let sub = |part: &[u8]| {
            let mut k = key.to_vec();
            k.push(0);
            k.extend_from_slice(part);
            k
        };
        let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        match piece {
            Value::String(v) => pairs.push((key.to_vec(), v)),
            Value::Hash(fields) => pairs.extend(fields.into_iter().map(|(f, v)| (sub(&f), v))),
            Value::List(items) => {
                for v in items {
                    pairs.push((sub(&index.to_be_bytes()), v));
                    index += 1;
                }
            }
            Value::Set(members) => pairs.extend(members.into_iter().map(|m| (sub(&m), Vec::new()))),
            Value::ZSet(members) => pairs.extend(
                members
                    .into_iter()
                    .map(|(m, s)| (sub(&m), s.to_bits().to_be_bytes().to_vec())),
            ),
        }
        for (k, v) in pairs {
            batch.put(k, v);
            queued += 1;
            elements += 1;
            if queued >= batch_size {
                if let Err(e) = db.write(std::mem::take(&mut batch)) {
                    failure.get_or_insert(e);
                }
                queued = 0;
            }
        }
    });
    if queued > 0 {
        db.write(batch).map_err(|e| fail(e.to_string()))?;
    }
    let seconds = started.elapsed().as_secs_f64();
    if let Some(e) = failure {
        return Err(fail(e.to_string()));
    }
    drop(db);
    Ok(Measured {
        elements,
        seconds,
        peak_rss_kib: peak_rss_kib(),
    })
}

/// The migration measurement.
fn migrate_child(args: &BenchArgs, from: Format, to: Format) -> Result<Measured, CompareError> {
    let (Some(src_dir), Some(dst_dir)) = (&args.src, &args.dst) else {
        return Err(fail("--src and --dst are required".into()));
    };
    let src = open_read_only(from, src_dir)?;
    let dst = Engine::open(
        to.codec(&FormatOptions::default())?,
        dst_dir,
        EngineOptions::default(),
    )?;
    let options = MigrateOptions {
        checkpoint: Some(dst_dir.join(CHECKPOINT_FILE)),
        ..MigrateOptions::default()
    };
    let started = Instant::now();
    let report = migrate::migrate(&src, &dst, &options, &mut Quiet)?;
    let seconds = started.elapsed().as_secs_f64();
    drop((src, dst));
    Ok(Measured {
        elements: report.migrated.elements,
        seconds,
        peak_rss_kib: peak_rss_kib(),
    })
}
