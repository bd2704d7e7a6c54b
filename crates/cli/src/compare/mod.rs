//! `redcodec compare`: one standard workload on every chosen format and on
//! a raw RocksDB baseline, in temporary stores, single-threaded; tables on
//! stdout, CSV, JSON, SVG charts and one HTML report in `--out`.
//!
//! - [`workload`]: the timed commands and their arguments;
//! - [`format_run`]: a format through the workload, space, write
//!   amplification and the DEL of a big hash;
//! - [`raw`]: the raw RocksDB baseline;
//! - [`measure`]: space, records, and SST bytes written (from RocksDB's LOG);
//! - [`report`]: tables, goals, CSV and JSON; [`figure`]: a figure and its
//!   spread over rounds or samples;
//! - [`charts`]: horizontal bar charts as SVG; [`page`]: `report.html`, the
//!   settings, goals, every chart beside its table, and notes, in one file.

use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use redcodec_formats::Format;

use crate::error::CliError;

mod charts;
mod figure;
mod format_run;
mod measure;
mod page;
mod raw;
mod report;
mod workload;

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
    /// Directory for the CSV, JSON, SVG and HTML files.
    #[arg(long, default_value = "compare-out")]
    pub out: PathBuf,
}

/// An error of the comparison.
pub(crate) fn fail(message: String) -> CliError {
    CliError::Io(std::io::Error::other(message))
}

/// Runs the comparison.
pub fn run(args: &CompareArgs) -> Result<(), CliError> {
    let formats: Vec<Format> = if args.formats.is_empty() {
        Format::ALL.to_vec()
    } else {
        args.formats
            .iter()
            .map(|f| f.trim().parse())
            .collect::<Result<_, _>>()?
    };
    if args.keys == 0 || args.elements == 0 || args.big_hash == 0 {
        return Err(fail(
            "--keys, --elements and --big-hash must be at least 1".into(),
        ));
    }
    let sizes = Sizes {
        keys: args.keys,
        elements: args.elements,
        value_size: args.value_size,
        big_hash: args.big_hash,
    };
    std::fs::create_dir_all(&args.out)?;

    // Per format: the steps, compaction, two DELs; then the baseline.
    let total = formats.len() * (STEPS.len() + 3) + 1;
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    // The baseline first, on a machine not yet warmed by the formats' runs.
    bar.set_message("raw rocksdb");
    let raw_dir = tempfile::tempdir()?;
    let raw = raw::run(raw_dir.path(), &sizes)?;
    drop(raw_dir);
    bar.inc(1);
    let mut results = Vec::new();
    for &format in &formats {
        let mut first = true;
        let result = format_run::run(format, &sizes, |step| {
            if !first {
                bar.inc(1);
            }
            first = false;
            bar.set_message(format!("{format}: {step}"));
        })?;
        bar.inc(1);
        results.push(result);
    }
    bar.finish_and_clear();

    let report = report::Report::new(sizes, raw, results, report::Machine::here());
    print!("{}", report::tables(&report));
    let mut files = report::write_files(&report, &args.out)?;
    let (drawn, svgs) = charts::draw(&report, &args.out)?;
    files.extend(svgs);
    let page = args.out.join("report.html");
    std::fs::write(&page, page::html(&report, &drawn).into_string())?;
    files.push(page);
    println!(
        "Files: {}",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}
