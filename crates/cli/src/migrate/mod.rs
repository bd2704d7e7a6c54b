//! `redcodec migrate` and `redcodec verify`: copy every live key of a store
//! into a store of another format, and compare two stores key by key.
//!
//! - [`progress`]: the progress bar (hidden when stderr is not a
//!   terminal) and the hidden pause hook the kill test uses;
//! - [`network`]: the same with a live server on one side
//!   (`--to redis://…` or `--from redis://…`);
//! - [`bench`]: `redcodec migrate-bench`, migration against a raw RocksDB
//!   write of the same data, with peak memory.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use redcodec_engine::{Compat, Engine, OpenMode};
use redcodec_formats::AnyCodec;
use redcodec_migrate::{
    self as migrate, MigrateError, MigrateOptions, MigrateReport, OnUnrepresentable, Outcome,
    Skipped, TypeConflict, VerifyOptions, VerifyReport,
};

use crate::error::CliError;
use crate::store_args::StoreArgs;

pub mod bench;
mod dataset;
mod follow;
mod namespaces;
mod network;
mod progress;

/// The two stores of a migration or a verification.
#[derive(Args, Debug, Clone)]
pub struct PairArgs {
    /// Format of the source store, or a server: redis://HOST:PORT[/DB].
    #[arg(long, value_name = "FMT|URL")]
    pub from: String,
    /// Source store directory (must hold a store of --from); not with a
    /// server.
    #[arg(long, value_name = "DIR")]
    pub src: Option<PathBuf>,
    /// Format of the destination store, or a server: redis://HOST:PORT[/DB].
    #[arg(long, value_name = "FMT|URL")]
    pub to: String,
    /// Destination store directory; not with a server.
    #[arg(long, value_name = "DIR")]
    pub dst: Option<PathBuf>,
    /// Namespace of the source, for formats that have them.
    #[arg(long, value_name = "NS")]
    pub src_namespace: Option<String>,
    /// Namespace of the destination, for formats that have them.
    #[arg(long, value_name = "NS")]
    pub dst_namespace: Option<String>,
    /// Every namespace of the source (Kvrocks, Ardb), each into the
    /// destination namespace of the same name.
    #[arg(long, conflicts_with_all = ["src_namespace", "dst_namespace"])]
    pub all_namespaces: bool,
    /// The source is a Kvrocks store in cluster mode (a slot in every key).
    #[arg(long)]
    pub src_cluster: bool,
    /// Write the destination in Kvrocks' cluster mode.
    #[arg(long)]
    pub dst_cluster: bool,
    /// Freeze time at this unix time in milliseconds (expiry decisions and
    /// the destination's versions are then reproducible).
    #[arg(long, value_name = "MS")]
    pub fixed_clock: Option<u64>,
}

impl PairArgs {
    /// The source store's directory (required for a store).
    fn src_dir(&self) -> Result<&Path, CliError> {
        self.src
            .as_deref()
            .ok_or_else(|| fail("--src DIR is required: the source store's directory"))
    }

    /// The destination store's directory (required for a store).
    fn dst_dir(&self) -> Result<&Path, CliError> {
        self.dst
            .as_deref()
            .ok_or_else(|| fail("--dst DIR is required: the destination store's directory"))
    }

    fn store(
        &self,
        format: &str,
        dir: &Path,
        namespace: Option<&String>,
        cluster: bool,
    ) -> StoreArgs {
        StoreArgs {
            format: format.to_string(),
            dir: dir.to_path_buf(),
            fixed_clock: self.fixed_clock,
            namespace: namespace.cloned(),
            cluster,
        }
    }

    /// Opens the source read-only: it must exist in the named format, and
    /// none of its files changes.
    fn open_source(&self) -> Result<Engine<AnyCodec>, CliError> {
        self.store(
            &self.from,
            self.src_dir()?,
            self.src_namespace.as_ref(),
            self.src_cluster,
        )
        .open(OpenMode::ReadOnly, None)
    }

    /// Opens the destination.
    fn open_destination(
        &self,
        mode: OpenMode,
        compat: Option<Compat>,
    ) -> Result<Engine<AnyCodec>, CliError> {
        self.store(
            &self.to,
            self.dst_dir()?,
            self.dst_namespace.as_ref(),
            self.dst_cluster,
        )
        .open(mode, compat)
    }
}

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
    /// it: kvrocks-2.10, kvrocks-2.5 (--to kvrocks) or pika-3.5 (--to
    /// blackwidow). Table format 5, CRC32c, the release's compression per
    /// level and column families; compacted when done.
    #[arg(long, value_name = "SYSTEM-VERSION")]
    pub compat: Option<Compat>,
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
        return follow::run(args);
    }
    if network::involved(&args.pair) {
        return network::run(args);
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
    redcodec_engine::reply::quote_bytes(ns.as_bytes())
}

/// Migrates one source (namespace) into one destination.
fn run_one(args: &MigrateArgs, checkpoint: &Path) -> Result<(), CliError> {
    let src = args.pair.open_source()?;
    let dst = args
        .pair
        .open_destination(OpenMode::CreateIfMissing, args.compat)?;
    let checkpoint = checkpoint.to_path_buf();
    let options = MigrateOptions {
        batch_elements: args.batch_elements,
        batch_bytes: args.batch_bytes,
        merge: args.merge,
        on_unrepresentable: if args.skip_unrepresentable {
            OnUnrepresentable::Skip
        } else {
            OnUnrepresentable::Stop
        },
        checkpoint: Some(checkpoint.clone()),
        resume: args.resume,
        sync: args.sync,
        type_conflict: args.type_conflict,
        ..MigrateOptions::default()
    };
    let mut bar = progress::Bar::new(args.pause_after_commits);
    let started = Instant::now();
    let result = migrate::migrate(&src, &dst, &options, &mut bar);
    bar.finish();
    let report = result.map_err(|e| explain(e, checkpoint.exists()))?;
    print_summary(args, &report, started.elapsed().as_secs_f64());
    if report.outcome == Outcome::Stopped {
        return Err(fail("migration stopped; rerun with --resume to finish it"));
    }
    if args.verify {
        let verified = migrate::verify(&src, &dst, &verify_options(report.merged))?;
        return print_verify(&verified);
    }
    Ok(())
}

/// Runs `redcodec verify`.
pub fn run_verify(args: &VerifyArgs) -> Result<(), CliError> {
    if network::involved(&args.pair) {
        return network::run_verify(args);
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

fn fail(message: impl Into<String>) -> CliError {
    CliError::Io(std::io::Error::other(message.into()))
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
        _ => "",
    };
    fail(format!("{e}{hint}"))
}

fn print_summary(args: &MigrateArgs, report: &MigrateReport, seconds: f64) {
    let m = report.migrated;
    let verb = match report.outcome {
        Outcome::Completed => "migrated",
        Outcome::Stopped => "stopped after migrating",
    };
    println!(
        "{verb} {} keys, {} elements, {} from {} ({}) to {} ({}) in {seconds:.2} s ({} elements/s)",
        thousands(m.keys),
        thousands(m.elements),
        human_bytes(m.bytes),
        args.pair.from,
        args.pair.src.as_deref().unwrap_or(Path::new("")).display(),
        args.pair.to,
        args.pair.dst.as_deref().unwrap_or(Path::new("")).display(),
        thousands((m.elements as f64 / seconds.max(1e-9)) as u64),
    );
    if let Some(after) = &report.resumed_after {
        match after {
            Some(key) => println!(
                "resumed after key {}",
                redcodec_engine::reply::quote_bytes(key)
            ),
            None => println!("resumed from the first key"),
        }
    }
    let skipped_why = format!("the {} format cannot hold", args.pair.to);
    print_left_out(
        report.expired,
        &report.skipped,
        &skipped_why,
        &report.first_of_several,
    );
}

/// Prints the keys a migration did not copy as they were, after its
/// summary: how many expired meanwhile, the keys skipped (`skipped_why`
/// completes "skipped N keys …"), and the keys held in several types of
/// which the first type was migrated.
fn print_left_out(expired: u64, skipped: &[Skipped], skipped_why: &str, first: &[Skipped]) {
    if expired > 0 {
        println!("{expired} keys expired during the migration and were not copied");
    }
    if !skipped.is_empty() {
        println!("skipped {} keys {skipped_why}:", skipped.len());
        for s in skipped {
            println!("  {s}");
        }
    }
    if !first.is_empty() {
        println!(
            "migrated the first type of {} keys the source holds in several types (--type-conflict first):",
            first.len()
        );
        for s in first {
            println!("  {s}");
        }
    }
}

fn print_verify(report: &VerifyReport) -> Result<(), CliError> {
    let mut extra = Vec::new();
    if report.unrepresentable > 0 {
        extra.push(format!(
            "{} unrepresentable in the destination",
            report.unrepresentable
        ));
    }
    if report.destination_only > 0 {
        extra.push(format!(
            "{} only in the destination (merged)",
            report.destination_only
        ));
    }
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!("; {}", extra.join(", "))
    };
    if report.is_equal() {
        println!(
            "verify: {} keys compared, all equal{extra}",
            thousands(report.source_keys)
        );
        return Ok(());
    }
    println!(
        "verify: {} keys compared, {} differ{extra}:",
        thousands(report.source_keys),
        thousands(report.differences)
    );
    for d in &report.listed {
        println!("  {d}");
    }
    if report.differences > report.listed.len() as u64 {
        println!(
            "  … and {} more",
            report.differences - report.listed.len() as u64
        );
    }
    Err(fail(format!(
        "verify found {} differences",
        report.differences
    )))
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes in B, KiB, MiB or GiB.
pub(crate) fn human_bytes(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_for_people() {
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(thousands(n), text);
        }
        for (n, text) in [(12, "12 B"), (1536, "1.5 KiB"), (3 << 20, "3.0 MiB")] {
            assert_eq!(human_bytes(n), text);
        }
    }
}
