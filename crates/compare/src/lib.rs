//! The format benchmark behind `redcodec compare`: one standard workload on every chosen format and on
//! a raw RocksDB baseline, in temporary stores, single-threaded; tables on
//! stdout, CSV, JSON, SVG charts and one HTML report in `--out`.
//!
//! - `workload`: the timed commands and their arguments;
//! - `format_run`: a format through the workload, space, write
//!   amplification and the DEL of a big hash;
//! - `raw`: the raw RocksDB baseline;
//! - `measure`: space, records, and SST bytes written (from RocksDB's LOG);
//! - `report`: tables, goals, CSV and JSON; `figure`: a figure and its
//!   spread over rounds or samples;
//! - `charts`: horizontal bar charts as SVG; `page`: `report.html`, the
//!   settings, goals, every chart beside its table, and notes, in one file;
//! - [`growth`]: `compare --scale N,…`, point reads and writes timed in
//!   generated stores of growing size;
//! - [`migrate_bench`]: `redcodec migrate-bench`, a migration against a raw
//!   RocksDB write of the same data, with peak memory.

use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use redcodec_formats::Format;

mod charts;
mod error;
mod figure;
mod format_run;
pub mod growth;
pub mod instructions;
mod measure;
pub mod migrate_bench;
mod page;
mod raw;
mod report;
pub mod scale_chart;
mod scaling;
mod workload;

use error::fail;
pub use error::CompareError;
use workload::{Sizes, STEPS};

/// The options of `redcodec compare`.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// Formats to compare, comma-separated (default: every format).
    #[arg(long, value_delimiter = ',')]
    pub formats: Vec<String>,
    /// String keys written, and elements written by each collection command.
    #[arg(long, default_value_t = 100_000)]
    pub keys: usize,
    /// Elements per collection (hash, list, set, sorted set).
    #[arg(long, default_value_t = 1_000)]
    pub elements: usize,
    /// Bytes of every value (strings, hash values, list elements).
    #[arg(long, default_value_t = 16)]
    pub value_size: usize,
    /// Fields of the big hash whose DEL is timed.
    #[arg(long, default_value_t = 100_000)]
    pub big_hash: usize,
    /// Rounds: raw RocksDB and every format run once per round, interleaved
    /// (the order rotates), and each figure is the median of its rounds with
    /// the slowest and fastest beside it.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Also count the instructions of SET, GET, HSET and ZADD per format (and
    /// of raw put and get) under valgrind's callgrind: figures a busy
    /// machine does not move. Needs valgrind on the PATH.
    #[arg(long)]
    pub instructions: bool,
    /// Directory for the CSV, JSON, SVG and HTML files.
    #[arg(long, default_value = "compare-out")]
    pub out: PathBuf,
    /// Instead of the standard workload: time point reads and writes in
    /// stores of these many records, `generate`'s dataset, each size in
    /// turn (for example `100000,1000000,10000000`). The stores are made
    /// in `--out`, one at a time.
    #[arg(long, value_delimiter = ',')]
    pub scale: Vec<u64>,
    /// With `--scale`: commands timed of each kind in each store.
    #[arg(long, default_value_t = 100_000, requires = "scale")]
    pub ops: usize,
    /// With `--scale`: read the stores past the page cache (RocksDB's direct
    /// reads), as if they were far larger than memory.
    #[arg(long, requires = "scale")]
    pub direct_reads: bool,
    /// With `--scale`: the block cache of the stores timed, in MiB.
    #[arg(long, value_name = "MIB", requires = "scale", default_value_t = redcodec_engine::store::DEFAULT_BLOCK_CACHE_BYTES >> 20)]
    pub block_cache_mb: usize,
}

/// Runs the comparison.
pub fn run(args: &CompareArgs) -> Result<(), CompareError> {
    let formats: Vec<Format> = if args.formats.is_empty() {
        Format::ALL.to_vec()
    } else {
        args.formats
            .iter()
            .map(|f| f.trim().parse())
            .collect::<Result<_, _>>()?
    };
    if !args.scale.is_empty() {
        return growth::run(&growth::ScaleOptions {
            formats,
            sizes: args.scale.clone(),
            ops: args.ops,
            direct_reads: args.direct_reads,
            block_cache_bytes: args.block_cache_mb << 20,
            out: args.out.clone(),
        });
    }
    if args.keys == 0 || args.elements == 0 || args.big_hash == 0 || args.rounds == 0 {
        return Err(fail(
            "--keys, --elements, --big-hash and --rounds must be at least 1".into(),
        ));
    }
    let sizes = Sizes {
        keys: args.keys,
        elements: args.elements,
        value_size: args.value_size,
        big_hash: args.big_hash,
        rounds: args.rounds,
    };
    if args.instructions && !instructions::valgrind_available() {
        return Err(fail(
            "--instructions needs valgrind (Debian: apt-get install valgrind)".into(),
        ));
    }
    std::fs::create_dir_all(&args.out)?;

    // Per round: the baseline and every format's steps, in an order that
    // rotates; in the first round also compaction and two DELs per format.
    let total = args.rounds * (formats.len() * (STEPS.len() + 1) + 1) + formats.len() * 3;
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut raw_rounds = Vec::with_capacity(args.rounds);
    // Per store (the formats, then raw RocksDB): its scaling in every round.
    let mut scalings: Vec<Vec<scaling::Scaling>> = vec![Vec::new(); formats.len() + 1];
    let mut results: Vec<Option<format_run::FormatResult>> = vec![None; formats.len()];
    let mut timings: Vec<Vec<Vec<workload::Timing>>> = vec![Vec::new(); formats.len()];
    for round in 0..args.rounds {
        // Slot `formats.len()` is the baseline; the first round starts with
        // it, on a machine not yet warmed by the formats' runs.
        let slots = formats.len() + 1;
        for slot in (0..slots).map(|i| (i + slots - round % slots) % slots) {
            let label = format!("round {}/{}", round + 1, args.rounds);
            let Some(&format) = formats.get(slot) else {
                bar.set_message(format!("{label}: raw rocksdb"));
                let raw_dir = tempfile::tempdir()?;
                raw_rounds.push(raw::run(raw_dir.path(), &sizes)?);
                scalings[slot].push(scaling::raw(raw_dir.path(), &sizes)?);
                bar.inc(1);
                continue;
            };
            let mut progress = |step: &str| {
                bar.inc(1);
                bar.set_message(format!("{label}: {format}: {step}"));
            };
            if round == 0 {
                let result = format_run::run(format, &sizes, &mut progress)?;
                timings[slot].push(result.timings.clone());
                results[slot] = Some(result);
            } else {
                timings[slot].push(format_run::timings(format, &sizes, &mut progress)?);
            }
            progress(&format!("{} writer threads", scaling::THREADS));
            let dir = tempfile::tempdir()?;
            scalings[slot].push(scaling::format(format, dir.path(), &sizes)?);
        }
    }
    let counts = if args.instructions {
        bar.inc_length(2 + 4 * formats.len() as u64);
        instructions::count(&formats, args.elements, args.value_size, |what| {
            bar.inc(1);
            bar.set_message(what.to_string());
        })?
    } else {
        Vec::new()
    };
    bar.finish_and_clear();
    let raw = raw::RawResult::of_rounds(raw_rounds);
    let results: Vec<format_run::FormatResult> = results
        .into_iter()
        .zip(timings)
        .map(|(result, rounds)| {
            let mut result = result.expect("every format ran in the first round");
            result.timings = workload::merge_rounds(&rounds);
            result
        })
        .collect();

    let scaling = scalings
        .iter()
        .map(|rounds| scaling::Scaling::of_rounds(rounds))
        .collect();
    let report = report::Report::new(
        sizes,
        raw,
        results,
        scaling,
        counts,
        report::Machine::here(),
    );
    print!("{}", report::tables(&report));
    let mut files = report::write_files(&report, &args.out)?;
    let (drawn, svgs) = charts::draw(&report, &args.out)?;
    files.extend(svgs);
    let page = args.out.join("report.html");
    std::fs::write(&page, page::html(&report, &drawn).into_string())?;
    files.push(page);
    report::print_files(&files);
    Ok(())
}
