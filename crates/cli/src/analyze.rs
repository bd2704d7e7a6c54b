//! `redcodec analyze`: the command line of [`redcodec_migrate::analyze`]
//! (big keys, bytes per type and prefix, TTLs, stale records, bytes per
//! column family and level), the store opened read-only.

use std::io::Write;

use clap::Args;
use redcodec_engine::OpenMode;
use redcodec_migrate::analyze::{analyze, raw_scan, Analysis, AnalyzeOptions};
use serde::Serialize;

use crate::error::{fail, CliError};
use crate::store_args::StoreArgs;

/// The options of `redcodec analyze`.
#[derive(Args, Debug, Clone)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Keys listed in each top list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// The character that separates the parts of a key.
    #[arg(long, default_value_t = ':')]
    prefix_delimiter: char,
    /// Parts of a key that make its prefix.
    #[arg(long, default_value_t = 1)]
    prefix_depth: usize,
    /// Print JSON (an array, one object per namespace) instead of tables.
    #[arg(long)]
    json: bool,
    /// Afterwards, time a raw RocksDB scan of every column family (the
    /// floor an analysis is measured against) and print it on stderr.
    #[arg(long)]
    raw_scan: bool,
}

/// One namespace's analysis, as JSON.
#[derive(Serialize)]
struct Namespaced<'a> {
    namespace: Option<&'a str>,
    #[serde(flatten)]
    analysis: &'a Analysis,
}

/// Analyzes every namespace of the store (or the one `--namespace` names).
pub fn run(args: &AnalyzeArgs) -> Result<(), CliError> {
    let delimiter = u8::try_from(args.prefix_delimiter)
        .map_err(|_| fail("--prefix-delimiter must be a single-byte character"))?;
    let options = AnalyzeOptions {
        top: args.top,
        delimiter,
        depth: args.prefix_depth,
    };
    let started = std::time::Instant::now();
    let mut done = Vec::new();
    for store in args.store.each_namespace()? {
        let engine = store.open(OpenMode::ReadOnly, None)?;
        let analysis = analyze(&engine, &options)?;
        done.push((store.namespace.clone(), analysis));
    }
    let seconds = started.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    if args.json {
        let all: Vec<Namespaced<'_>> = done
            .iter()
            .map(|(namespace, analysis)| Namespaced {
                namespace: namespace.as_deref(),
                analysis,
            })
            .collect();
        serde_json::to_writer_pretty(&mut out, &all).map_err(|e| fail(e.to_string()))?;
        writeln!(out)?;
    } else {
        for (namespace, analysis) in &done {
            if let Some(ns) = namespace {
                writeln!(out, "namespace {ns}")?;
            }
            analysis.write_table(&mut out)?;
            writeln!(out)?;
        }
    }
    if args.raw_scan {
        let engine = args.store.open(OpenMode::ReadOnly, None)?;
        let scan = raw_scan(engine.store())?;
        eprintln!(
            "analyze: {seconds:.2} s; raw RocksDB scan: {} records, {} bytes in {:.2} s; analyze/raw speed {:.2}",
            scan.records,
            scan.bytes,
            scan.seconds,
            scan.seconds / seconds.max(1e-9)
        );
    }
    Ok(())
}
