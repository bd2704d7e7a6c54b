//! `redcodec compare --scale N,…`: the main commands' point reads and
//! writes timed in stores of growing size, to see where each format's
//! layout starts to cost as the store outgrows the block cache, then the
//! page cache.
//!
//! For each size, smallest first, and each format, a fresh store in a
//! temporary directory under `--out` is filled by `generate` (its default
//! distribution, seed 1: half strings, a fifth hashes, a tenth each lists,
//! sets and sorted sets, about 19 elements per collection, a big key in
//! 100,000, a tenth of the keys with a TTL), closed and opened again (a
//! cold block cache, as after a restart), and left until RocksDB has no
//! compaction running or pending: a store at rest, whose reads do not
//! share the cores with the compactions its filling left. Then `--ops` commands of each
//! kind run on keys drawn at random over the whole dataset, one after the
//! other on one thread:
//!
//! - reads of elements the store holds: GET, HGET, LINDEX, SISMEMBER and
//!   ZSCORE. Every reply is checked: a read that finds nothing fails the
//!   run, so a figure never comes from a store that lost its data;
//! - then writes over existing strings and fields: SET and HSET.
//!
//! The same draws (the same keys, in the same order) go to every format
//! at one size. With `--direct-reads` the stores are read past the
//! operating system's page cache (RocksDB's `use_direct_reads`): a block
//! the block cache misses comes from the device, as in a store far larger
//! than memory. `--block-cache-mb` sets the block cache of the stores
//! timed (128 MiB, the default of every store).
//!
//! Output: a table per size on stdout, `scale.csv`, `scale.json` and two
//! charts (`scale_reads.svg`, `scale_writes.svg`: one row per format and
//! command, one bar per size).

use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::ProgressBar;
use redcodec_codec::DataType;
use redcodec_engine::reply::Reply;
use redcodec_engine::{Engine, EngineOptions};
use redcodec_formats::{AnyCodec, Format, FormatOptions};
use redcodec_migrate::generate::{self, GenerateOptions, Rng};
use redcodec_migrate::summary::{human_bytes, thousands};
use redcodec_migrate::Quiet;

use super::charts::{nth_color, Chart, Series, Unit};
use super::figure::Figure;
use super::report::{print_files, write_csv, Machine, Table};
use super::scale_chart::size_name;
use super::workload::{Kind, Timing};
use crate::error::{fail, CompareError};

/// One timed command: its name, whether it reads or writes, and the type
/// of the keys it is sent to.
#[derive(Clone, Copy, Debug)]
pub struct ScaleCommand {
    /// The command's name.
    pub name: &'static str,
    /// Read or write.
    pub kind: Kind,
    /// The type of the keys it is drawn over.
    pub data_type: DataType,
}

const fn command(name: &'static str, kind: Kind, data_type: DataType) -> ScaleCommand {
    ScaleCommand {
        name,
        kind,
        data_type,
    }
}

/// The commands timed at every size, reads first.
pub const COMMANDS: [ScaleCommand; 7] = [
    command("GET", Kind::Read, DataType::String),
    command("HGET", Kind::Read, DataType::Hash),
    command("LINDEX", Kind::Read, DataType::List),
    command("SISMEMBER", Kind::Read, DataType::Set),
    command("ZSCORE", Kind::Read, DataType::ZSet),
    command("SET", Kind::Write, DataType::String),
    command("HSET", Kind::Write, DataType::Hash),
];

/// The value every timed write stores (32 bytes, about the dataset's
/// median string).
const WRITTEN_VALUE: &[u8] = b"value-written-by-compare--scale!";

/// What to run.
#[derive(Clone, Debug)]
pub struct ScaleOptions {
    /// Formats, each at every size.
    pub formats: Vec<Format>,
    /// Records (top-level keys) of each store, in the order run.
    pub sizes: Vec<u64>,
    /// Commands timed of each kind per store.
    pub ops: usize,
    /// Read the stores past the page cache.
    pub direct_reads: bool,
    /// Bytes of the block cache of the stores timed.
    pub block_cache_bytes: usize,
    /// Where the stores are made (removed after each) and the files written.
    pub out: PathBuf,
}

/// One store's figures.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Point {
    /// The format.
    pub format: String,
    /// Records (top-level keys) in the store.
    pub records: u64,
    /// Elements written by `generate`.
    pub elements: u64,
    /// Bytes of the store's tables once filled.
    pub store_bytes: u64,
    /// Seconds `generate` took to fill it.
    pub fill_seconds: f64,
    /// Seconds RocksDB compacted after that, before the commands were
    /// timed.
    pub settle_seconds: f64,
    /// One timing per command of [`COMMANDS`] that had keys to go to (a
    /// small store may hold no key of a type).
    pub timings: Vec<Timing>,
}

/// What `scale.json` holds.
#[derive(serde::Serialize)]
struct Document<'a> {
    machine: Machine,
    ops: usize,
    direct_reads: bool,
    block_cache_bytes: usize,
    points: &'a [Point],
}

/// The arguments of `ops` commands `command` over the dataset of
/// `records` keys, drawn with `seed`: a key of the command's type at
/// random, and an element of it at random. Fewer (none) when the draws
/// keep missing the type, in a store too small to hold keys of it.
pub fn draws(records: u64, command: &ScaleCommand, ops: usize, seed: u64) -> Vec<Vec<Vec<u8>>> {
    let distribution = generate::Distribution::default();
    let mut rng = Rng::new(seed ^ command.name.bytes().fold(0, |h, b| h * 31 + u64::from(b)));
    let mut out = Vec::with_capacity(ops);
    let mut tries = ops as u64 * 100 + 1_000;
    while out.len() < ops && tries > 0 && records > 0 {
        tries -= 1;
        let shape = distribution.shape(rng.below(records));
        if shape.data_type != command.data_type {
            continue;
        }
        let n = rng.below(shape.elements.max(1));
        let key = shape.key;
        let args: Vec<Vec<u8>> = match command.name {
            "GET" => vec![b"GET".to_vec(), key],
            "HGET" => vec![b"HGET".to_vec(), key, format!("f:{n}").into_bytes()],
            "LINDEX" => vec![b"LINDEX".to_vec(), key, n.to_string().into_bytes()],
            "SISMEMBER" => vec![b"SISMEMBER".to_vec(), key, format!("m:{n}").into_bytes()],
            "ZSCORE" => vec![b"ZSCORE".to_vec(), key, format!("m:{n}").into_bytes()],
            "SET" => vec![b"SET".to_vec(), key, WRITTEN_VALUE.to_vec()],
            "HSET" => vec![
                b"HSET".to_vec(),
                key,
                format!("f:{n}").into_bytes(),
                WRITTEN_VALUE.to_vec(),
            ],
            other => unreachable!("{other} is not a command of COMMANDS"),
        };
        out.push(args);
    }
    out
}

/// Runs `all` on `engine` and times them. A read that finds nothing, or
/// any error, fails: the store does not hold what was generated.
pub fn time(
    engine: &Engine<AnyCodec>,
    command: &ScaleCommand,
    all: &[Vec<Vec<u8>>],
) -> Result<Timing, CompareError> {
    let started = Instant::now();
    for args in all {
        match engine.execute(args) {
            Reply::Error(e) => return Err(fail(format!("{} failed: {e}", command.name))),
            Reply::Nil | Reply::Integer(0) if command.kind == Kind::Read => {
                return Err(fail(format!(
                    "{} {} found nothing: the store does not hold the dataset generated",
                    command.name,
                    String::from_utf8_lossy(&args[1])
                )));
            }
            _ => {}
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(Timing::new(
        command.name,
        command.kind,
        all.len() as u64,
        seconds,
    ))
}

/// `format`'s store in `dir`; `timed`: with the series' block cache and
/// reads, else with the defaults (to fill it).
fn open(
    format: Format,
    dir: &Path,
    timed: Option<&ScaleOptions>,
) -> Result<Engine<AnyCodec>, CompareError> {
    let codec = format.codec(&FormatOptions::default())?;
    let mut options = EngineOptions::default();
    if let Some(series) = timed {
        options.direct_reads = series.direct_reads;
        options.block_cache_bytes = series.block_cache_bytes;
    }
    Ok(Engine::open(codec, dir, options)?)
}

/// Fills a store of `format` with `records` keys, opens it again and
/// times every command's draws on it.
fn point(
    format: Format,
    records: u64,
    draws: &[(ScaleCommand, Vec<Vec<Vec<u8>>>)],
    options: &ScaleOptions,
    bar: &ProgressBar,
) -> Result<Point, CompareError> {
    let dir = tempfile::Builder::new()
        .prefix("scale-store-")
        .tempdir_in(&options.out)?;
    bar.set_message(format!(
        "{} records: {format}: generate",
        thousands(records)
    ));
    let generate_options = GenerateOptions {
        records,
        ..GenerateOptions::default()
    };
    let started = Instant::now();
    let generated = {
        let engine = open(format, dir.path(), None)?;
        generate::generate(&engine, &generate_options, &mut Quiet)
            .map_err(|e| fail(format!("generate: {e}")))?
    };
    let fill_seconds = started.elapsed().as_secs_f64();
    let engine = open(format, dir.path(), Some(options))?;
    bar.set_message(format!(
        "{} records: {format}: compactions",
        thousands(records)
    ));
    let settle_seconds = settle(&engine)?;
    bar.inc(1);
    let mut timings = Vec::new();
    for (command, all) in draws {
        bar.set_message(format!(
            "{} records: {format}: {}",
            thousands(records),
            command.name
        ));
        if !all.is_empty() {
            timings.push(time(&engine, command, all)?);
        }
        bar.inc(1);
    }
    let store_bytes = engine
        .store()
        .property_sum("rocksdb.total-sst-files-size")?;
    Ok(Point {
        format: format.name().to_string(),
        records,
        elements: generated.tally.elements,
        store_bytes,
        fill_seconds,
        settle_seconds,
        timings,
    })
}

/// Waits until no compaction of `engine`'s store runs or is pending, and
/// says how long that took.
fn settle(engine: &Engine<AnyCodec>) -> Result<f64, CompareError> {
    let started = Instant::now();
    let store = engine.store();
    while store.property_sum("rocksdb.num-running-compactions")? > 0
        || store.property_sum("rocksdb.compaction-pending")? > 0
        || store.property_sum("rocksdb.num-running-flushes")? > 0
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Ok(started.elapsed().as_secs_f64())
}

/// Runs the series, prints its tables and writes its files.
pub fn run(options: &ScaleOptions) -> Result<(), CompareError> {
    if options.sizes.contains(&0) || options.ops == 0 {
        return Err(fail("--scale sizes and --ops must be at least 1".into()));
    }
    std::fs::create_dir_all(&options.out)?;
    let bar = ProgressBar::new(
        (options.sizes.len() * options.formats.len() * (COMMANDS.len() + 1)) as u64,
    );
    let mut points = Vec::new();
    for &records in &options.sizes {
        let draws: Vec<(ScaleCommand, Vec<Vec<Vec<u8>>>)> = COMMANDS
            .iter()
            .map(|c| (*c, draws(records, c, options.ops, 1)))
            .collect();
        for &format in &options.formats {
            points.push(point(format, records, &draws, options, &bar)?);
        }
    }
    bar.finish_and_clear();
    print!("{}", table(&points).markdown());
    let files = write_files(&points, options)?;
    print_files(&files);
    Ok(())
}

/// One row per store: its size, format, bytes and the rate of every command.
fn table(points: &[Point]) -> Table {
    let mut header: Vec<String> = ["records", "format", "store", "fill", "compactions after"]
        .map(String::from)
        .to_vec();
    header.extend(COMMANDS.iter().map(|c| format!("{} ops/s", c.name)));
    let rows = points
        .iter()
        .map(|p| {
            let mut row = vec![
                thousands(p.records),
                p.format.clone(),
                human_bytes(p.store_bytes),
                format!("{:.1} s", p.fill_seconds),
                format!("{:.1} s", p.settle_seconds),
            ];
            row.extend(COMMANDS.iter().map(|c| {
                p.timings
                    .iter()
                    .find(|t| t.command == c.name)
                    .map_or("–".into(), |t| thousands(t.ops_per_sec().round() as u64))
            }));
            row
        })
        .collect();
    Table {
        title: "Point reads and writes as the store grows (one thread)".into(),
        header,
        rows,
        right_from: 2,
    }
}

fn write_files(points: &[Point], options: &ScaleOptions) -> Result<Vec<PathBuf>, CompareError> {
    let mut files = Vec::new();
    let csv = options.out.join("scale.csv");
    let rows: Vec<Vec<String>> = points
        .iter()
        .flat_map(|p| {
            p.timings.iter().map(move |t| {
                vec![
                    p.format.clone(),
                    p.records.to_string(),
                    p.elements.to_string(),
                    p.store_bytes.to_string(),
                    format!("{:.3}", p.fill_seconds),
                    format!("{:.3}", p.settle_seconds),
                    t.command.clone(),
                    format!("{:?}", t.kind).to_lowercase(),
                    t.ops.to_string(),
                    format!("{:.6}", t.seconds),
                    format!("{:.1}", t.ops_per_sec()),
                ]
            })
        })
        .collect();
    write_csv(
        &csv,
        &[
            "format",
            "records",
            "elements",
            "store_bytes",
            "fill_seconds",
            "settle_seconds",
            "command",
            "kind",
            "ops",
            "seconds",
            "ops_per_sec",
        ],
        &rows,
    )?;
    files.push(csv);
    let json = options.out.join("scale.json");
    let document = Document {
        machine: Machine::here(),
        ops: options.ops,
        direct_reads: options.direct_reads,
        block_cache_bytes: options.block_cache_bytes,
        points,
    };
    let text = serde_json::to_string_pretty(&document).map_err(|e| fail(format!("JSON: {e}")))?;
    std::fs::write(&json, text + "\n")?;
    files.push(json);
    for chart in charts(points) {
        let path = options.out.join(format!("{}.svg", chart.id));
        std::fs::write(&path, chart.svg()?)?;
        files.push(path);
    }
    Ok(files)
}

/// The reads' and the writes' charts: one row per format and command, one
/// bar per size.
fn charts(points: &[Point]) -> Vec<Chart> {
    let mut formats: Vec<&str> = Vec::new();
    let mut sizes: Vec<u64> = Vec::new();
    for p in points {
        if !formats.contains(&p.format.as_str()) {
            formats.push(&p.format);
        }
        if !sizes.contains(&p.records) {
            sizes.push(p.records);
        }
    }
    let chart = |id: &'static str, kind: Kind, title: &str| {
        let rows: Vec<(&str, &str)> = formats
            .iter()
            .flat_map(|f| {
                COMMANDS
                    .iter()
                    .filter(|c| c.kind == kind)
                    .map(move |c| (*f, c.name))
            })
            .collect();
        let series = sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| Series {
                name: size_name(size),
                color: nth_color(i),
                values: rows
                    .iter()
                    .map(|(format, command)| {
                        points
                            .iter()
                            .filter(|p| p.format == *format && p.records == size)
                            .flat_map(|p| &p.timings)
                            .find(|t| t.command == *command)
                            .map(|t| Figure::one(t.ops_per_sec()))
                    })
                    .collect(),
            })
            .collect();
        Chart {
            id,
            title: title.into(),
            axis: "operations per second, one thread".into(),
            unit: Unit::Rate,
            rows: rows.iter().map(|(f, c)| format!("{f}: {c}")).collect(),
            series,
            reference: None,
            goals: None,
        }
    };
    vec![
        chart(
            "scale_reads",
            Kind::Read,
            "Point reads of random elements as the store grows",
        ),
        chart(
            "scale_writes",
            Kind::Write,
            "Overwrites of random strings and fields as the store grows",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_go_to_keys_of_their_type_and_repeat_with_the_seed() {
        let distribution = generate::Distribution::default();
        for command in &COMMANDS {
            let all = draws(5_000, command, 300, 1);
            assert_eq!(all.len(), 300, "{}", command.name);
            assert_eq!(all, draws(5_000, command, 300, 1));
            assert_ne!(all, draws(5_000, command, 300, 2));
            for args in &all {
                assert_eq!(args[0], command.name.as_bytes());
                let index: u64 = std::str::from_utf8(&args[1]).unwrap()[args[1].len() - 10..]
                    .parse()
                    .unwrap();
                let shape = distribution.shape(index);
                assert_eq!(shape.key, args[1]);
                assert_eq!(shape.data_type, command.data_type);
            }
        }
    }

    #[test]
    fn a_store_too_small_for_a_type_gets_no_draws_of_it() {
        // Key 0 of seed 1 is one type; the four others have no key.
        let kinds: Vec<usize> = COMMANDS.iter().map(|c| draws(1, c, 10, 1).len()).collect();
        assert!(kinds.contains(&10), "{kinds:?}");
        assert!(kinds.iter().filter(|n| **n == 0).count() >= 4, "{kinds:?}");
    }
}
