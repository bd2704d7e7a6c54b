//! `redcodec migrate` and `redcodec verify`: copy every live key of a store
//! into a store of another format, and compare two stores key by key.
//!
//! - [`progress`]: the progress bar (hidden when stderr is not a
//!   terminal) and the hidden pause hook the kill test uses;
//! - [`network`]: the same with a live server on one side
//!   (`--to redis://…`, `--to redis-cluster://…` or `--from redis://…`),
//!   done by [`redcodec_migrate::network`];
//! - [`pair`]: the two sides as the command line names them;
//! - [`verdict`]: a verification's verdict, printed, an error on any
//!   difference; the other summaries are [`redcodec_migrate::summary`]'s.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::{Compat, OpenMode};
use redcodec_migrate::{
    self as migrate, summary, Bulk, MigrateError, MigrateOptions, MigrateReport, OnUnrepresentable,
    Outcome, RunCompression, TypeConflict, VerifyOptions,
};

use crate::error::{fail, CliError};

mod follow;
mod namespaces;
mod network;
mod pair;
pub(crate) mod progress;
mod verdict;

pub use pair::PairArgs;
use verdict::print_verify;

/// The options of `redcodec migrate`.
#[derive(Args, Debug, Clone)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub pair: PairArgs,
    /// Afterwards, compare every key of source and destination (exit
    /// status 1 on any difference).
    #[arg(long)]
    pub verify: bool,
    /// Continue an interrupted migration (its checkpoint is in the
    /// destination directory, or --checkpoint with a server); starts from
    /// the beginning if there is none.
    #[arg(long)]
    pub resume: bool,
    /// Migrate into a destination that already holds keys (source keys
    /// replace destination keys of the same name).
    #[arg(long)]
    pub merge: bool,
    /// Leave out keys the destination format cannot hold and list them,
    /// instead of stopping.
    #[arg(long)]
    pub skip_unrepresentable: bool,
    /// Elements per write batch (and per chunk read from a big key).
    #[arg(long, default_value_t = MigrateOptions::default().batch_elements)]
    pub batch_elements: usize,
    /// Logical bytes per write batch.
    #[arg(long, default_value_t = MigrateOptions::default().batch_bytes)]
    pub batch_bytes: usize,
    /// Sync the destination and the checkpoint to disk before every
    /// commit, so --resume is exact even after a machine crash (slower);
    /// without it, after the process is interrupted or killed.
    #[arg(long)]
    pub sync: bool,
    /// What to do with a key the source holds in several types at once
    /// (Pika's blackwidow and nemo allow it): fail (stop before writing
    /// anything, naming every such key), skip (leave it out, listed), or
    /// first (migrate the type commands see: string, hash, list, zset, set
    /// in that order; listed). Nothing is merged.
    #[arg(long, value_name = "RULE", default_value = "fail")]
    pub type_conflict: TypeConflict,
    /// Write the destination so that this release of the real system opens
    /// it: kvrocks-2.10, kvrocks-2.5 (--to kvrocks), pika-3.5 (--to
    /// blackwidow) or pika-4.0 (--to floyd). Table format 5, CRC32c, the release's compression per
    /// level and column families; compacted when done.
    #[arg(long, value_name = "SYSTEM-VERSION")]
    pub compat: Option<Compat>,
    /// Bulk path: records sorted into SST files and ingested, into an
    /// empty destination only (one holding records is refused). The
    /// default into an empty destination: it measured about 1.2x the
    /// write path's speed at 1M and 10M records (docs/src/migrate.md).
    /// --no-bulk: every key through write batches (the default into a
    /// destination that holds records).
    #[arg(long, overrides_with = "no_bulk")]
    pub bulk: bool,
    /// See --bulk.
    #[arg(long, overrides_with = "bulk")]
    pub no_bulk: bool,
    /// Bulk path's sorted runs (scratch files): auto (raw while free space
    /// is 4x the source's size on disk, else LZ4), lz4 (scratch peaks at
    /// about 1.7x the destination) or none (about 2.9x, a tenth less CPU).
    #[arg(long, value_name = "MODE", default_value = "auto")]
    pub bulk_runs: RunCompression,
    /// Testing aid: the bulk path's sort buffer, in bytes.
    #[arg(long, hide = true)]
    pub bulk_buffer_bytes: Option<usize>,
    /// Testing aid: after this many commits, print a line on stderr and
    /// wait forever (to be killed).
    #[arg(long, hide = true)]
    pub pause_after_commits: Option<u64>,
    #[command(flatten)]
    pub network: network::NetworkArgs,
    #[command(flatten)]
    pub follow: follow::FollowArgs,
}

/// The options of `redcodec verify`.
#[derive(Args, Debug, Clone)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub pair: PairArgs,
    /// The destination held keys of its own before the migration: keys
    /// only it has are counted, not reported as differences.
    #[arg(long)]
    pub merge: bool,
}

/// Runs `redcodec migrate`.
pub fn run(args: &MigrateArgs) -> Result<(), CliError> {
    if args.follow.follow {
        return follow::run(
            &args.pair,
            args.compat,
            &args.follow,
            &[
                (args.verify, "--verify"),
                (args.resume, "--resume (a rerun continues by itself)"),
                (args.merge, "--merge"),
                (args.network.checkpoint.is_some(), "--checkpoint"),
            ],
        );
    }
    if network::involved(&args.pair) {
        return network::run(&network::Request {
            pair: &args.pair,
            options: options(args, args.network.checkpoint.clone()),
            compat: args.compat,
            verify: args.verify,
            pause_after_commits: args.pause_after_commits,
        });
    }
    if args.network.checkpoint.is_some() {
        return Err(fail(
            "--checkpoint is for a migration with a server (--from or --to redis://…)",
        ));
    }
    for part in namespaces::parts(&args.pair)? {
        let checkpoint = part.pair.dst_dir()?.join(part.checkpoint_name());
        if let Some(ns) = &part.namespace {
            if args.resume && !checkpoint.exists() && namespaces::destination_holds_keys(&part) {
                println!("namespace {}: migrated by an earlier run", quote(ns));
                continue;
            }
            println!("namespace {}:", quote(ns));
        }
        let args = MigrateArgs {
            pair: part.pair,
            ..args.clone()
        };
        run_one(&args, &checkpoint)?;
    }
    Ok(())
}

/// The namespace `ns` quoted as Redis quotes keys.
fn quote(ns: &str) -> String {
    quote_bytes(ns.as_bytes())
}

/// Migrates one source (namespace) into one destination.
fn run_one(args: &MigrateArgs, checkpoint: &Path) -> Result<(), CliError> {
    let src = args.pair.open_source()?;
    let dst = args
        .pair
        .open_destination(OpenMode::CreateIfMissing, args.compat)?;
    let checkpoint = checkpoint.to_path_buf();
    let options = options(args, Some(checkpoint.clone()));
    let mut bar = progress::Bar::new(args.pause_after_commits);
    let started = Instant::now();
    let result = migrate::migrate(&src, &dst, &options, &mut bar);
    bar.finish();
    let report = result.map_err(|e| explain(e, checkpoint.exists()))?;
    print_summary(args, &report, started.elapsed().as_secs_f64())?;
    if report.outcome == Outcome::Stopped {
        return Err(fail("migration stopped; rerun with --resume to finish it"));
    }
    if !args.merge {
        note_pika_dump_position(args)?;
    }
    if args.verify {
        let verified = migrate::verify(&src, &dst, &verify_options(report.merged))?;
        return print_verify(&verified);
    }
    Ok(())
}

/// A copy of a Pika dump (its directory holds the `info` file Pika's
/// BGSAVE writes): the destination records the dump's binlog position, so
/// that following the master that made it (`serve --replicaof`, `migrate
/// --follow`) continues from there instead of copying again.
fn note_pika_dump_position(args: &MigrateArgs) -> Result<(), CliError> {
    if !matches!(args.pair.from.as_str(), "blackwidow" | "floyd") {
        return Ok(());
    }
    let src = args.pair.src_dir()?;
    let Ok(info) = std::fs::read_to_string(src.join("info")) else {
        return Ok(());
    };
    let db = src
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| {
            n.strip_prefix("db")
                .is_some_and(|i| i.parse::<u32>().is_ok())
        })
        .unwrap_or("db0");
    let dst = args.pair.dst_dir()?;
    match redcodec_server::replica::resume::save_pika_dump_position(dst, db, &info) {
        Ok(((host, port), filenum, offset)) => println!(
            "the copy is at binlog {db} {filenum}:{offset} of the Pika master {host}:{port} (the dump's info file): \
             following it on this directory (serve --replicaof {host}:{port}, or migrate --follow --from redis://{host}:{port}) continues from there"
        ),
        Err(e) => eprintln!(
            "redcodec: {}: not a Pika dump's info file ({e}); following the master will copy in full",
            src.join("info").display()
        ),
    }
    Ok(())
}

/// The library's options for `args`, the checkpoint at `checkpoint`.
fn options(args: &MigrateArgs, checkpoint: Option<PathBuf>) -> MigrateOptions {
    MigrateOptions {
        batch_elements: args.batch_elements,
        batch_bytes: args.batch_bytes,
        merge: args.merge,
        on_unrepresentable: if args.skip_unrepresentable {
            OnUnrepresentable::Skip
        } else {
            OnUnrepresentable::Stop
        },
        checkpoint,
        resume: args.resume,
        sync: args.sync,
        type_conflict: args.type_conflict,
        // Without a flag: the bulk path into an empty destination, the
        // write path into one that holds records, and for a resumed
        // migration the path its checkpoint records.
        bulk: match (args.bulk, args.no_bulk) {
            (true, _) => Bulk::Always,
            (_, true) => Bulk::Never,
            _ => Bulk::Auto,
        },
        bulk_buffer_bytes: args
            .bulk_buffer_bytes
            .unwrap_or(MigrateOptions::default().bulk_buffer_bytes),
        bulk_runs: args.bulk_runs,
        ..MigrateOptions::default()
    }
}

/// Runs `redcodec verify`.
pub fn run_verify(args: &VerifyArgs) -> Result<(), CliError> {
    if network::involved(&args.pair) {
        return network::run_verify(&args.pair, args.merge);
    }
    let mut failed = None;
    for part in namespaces::parts(&args.pair)? {
        if let Some(ns) = &part.namespace {
            println!("namespace {}:", quote(ns));
        }
        let src = part.pair.open_source()?;
        let dst = part.pair.open_destination(OpenMode::ReadOnly, None)?;
        let report = migrate::verify(&src, &dst, &verify_options(args.merge))?;
        if let Err(e) = print_verify(&report) {
            failed = Some(e);
        }
    }
    failed.map_or(Ok(()), Err)
}

fn verify_options(merge: bool) -> VerifyOptions {
    VerifyOptions {
        merge,
        ..VerifyOptions::default()
    }
}

/// The library's error with what to do next on the command line.
fn explain(e: MigrateError, checkpoint_kept: bool) -> CliError {
    let hint = match &e {
        MigrateError::Unrepresentable { .. } if checkpoint_kept => {
            "\nrerun with --resume --skip-unrepresentable to go on without them (they are listed at the end)"
        }
        MigrateError::Unrepresentable { .. } => {
            "\nrerun with --skip-unrepresentable to migrate the other keys (these are listed at the end)"
        }
        MigrateError::CheckpointPresent { .. } => " (--resume)",
        MigrateError::DestinationNotEmpty { .. } => " (--merge)",
        MigrateError::BulkNotEmpty { .. } => " (--no-bulk --merge)",
        _ => "",
    };
    fail(format!("{e}{hint}"))
}

fn print_summary(args: &MigrateArgs, report: &MigrateReport, seconds: f64) -> Result<(), CliError> {
    let side = |format: &str, dir: &Option<PathBuf>| {
        let dir = dir.as_deref().unwrap_or(Path::new(""));
        format!("{format} ({})", dir.display())
    };
    let verb = match report.outcome {
        Outcome::Completed => "migrated",
        Outcome::Stopped => "stopped after migrating",
    };
    let mut out = std::io::stdout().lock();
    let (from, to) = (&args.pair.from, &args.pair.to);
    let (src, dst) = (side(from, &args.pair.src), side(to, &args.pair.dst));
    summary::write_migrated(&mut out, verb, &report.migrated, &src, &dst, seconds)?;
    match &report.resumed_after {
        Some(Some(key)) => writeln!(out, "resumed after key {}", quote_bytes(key))?,
        Some(None) => writeln!(out, "resumed from the first key")?,
        None => {}
    }
    let skipped_why = format!("the {to} format cannot hold");
    summary::write_left_out(
        &mut out,
        report.expired,
        &report.skipped,
        &skipped_why,
        &report.first_of_several,
    )?;
    Ok(())
}
