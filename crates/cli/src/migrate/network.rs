//! `redcodec migrate` and `verify` with a live server on one side
//! (`--to redis://HOST:PORT[/DB]`, `--to redis-cluster://HOST:PORT` or
//! `--from redis://…`, also together: a server into a cluster): the
//! options only they have, the checks of the
//! command line, and the printing; the work is
//! [`redcodec_migrate::network`]'s.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use redcodec_engine::{Compat, OpenMode};
use redcodec_migrate::network::{self, is_url, Endpoint, Rules, ServerReport};
use redcodec_migrate::{summary, MigrateOptions};

use super::pair::PairArgs;
use super::progress::Bar;
use super::verdict::print_verify;
use crate::error::{fail, CliError};

/// The options only a migration with a server has.
#[derive(Args, Debug, Clone, Default)]
pub struct NetworkArgs {
    /// With a server as --from or --to: the checkpoint file --resume
    /// continues from (default: redcodec-migrate-HOST-PORT-DB.checkpoint in
    /// the current directory; redcodec-migrate-cluster-HOST-PORT.checkpoint
    /// for a cluster).
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
}

/// A migration with a server, as the command line asks for it.
pub struct Request<'a> {
    /// Both sides.
    pub pair: &'a PairArgs,
    /// The library's options (the checkpoint: --checkpoint, if given).
    pub options: MigrateOptions,
    /// `--compat` (for a store destination).
    pub compat: Option<Compat>,
    /// `--verify`.
    pub verify: bool,
    /// The testing aid `--pause-after-commits`.
    pub pause_after_commits: Option<u64>,
}

/// Whether one side of `pair` is a server.
pub fn involved(pair: &PairArgs) -> bool {
    is_url(&pair.from) || is_url(&pair.to)
}

/// Runs `redcodec migrate` with a server on one side.
pub fn run(request: &Request<'_>) -> Result<(), CliError> {
    let pair = request.pair;
    one_namespace(pair)?;
    let options = &request.options;
    let mut bar = Bar::new(request.pause_after_commits);
    match (is_url(&pair.from), is_url(&pair.to)) {
        (false, true) => {
            reject(pair.dst.is_some(), "--dst", "--to")?;
            reject(pair.dst_cluster, "--dst-cluster", "--to")?;
            reject(pair.dst_namespace.is_some(), "--dst-namespace", "--to")?;
            reject(request.compat.is_some(), "--compat", "--to")?;
            let target = Endpoint::parse(&pair.to)?;
            let src = pair.open_source()?;
            let from = store_description(&pair.from, pair.src_dir()?);
            let result = network::migrate_to_server(&src, &from, &target, options, &mut bar);
            bar.finish();
            let report = result?;
            print(&report, "that cannot be migrated")?;
            if request.verify {
                let rules = Rules::of(options);
                let verified =
                    network::verify_store_to_server(&src, &target, &rules, report.merged)?;
                return print_verify(&verified);
            }
            Ok(())
        }
        (true, false) => {
            reject(pair.src.is_some(), "--src", "--from")?;
            reject(pair.src_namespace.is_some(), "--src-namespace", "--from")?;
            reject(pair.src_cluster, "--src-cluster", "--from")?;
            let source = Endpoint::parse(&pair.from)?;
            let dst_dir = pair.dst_dir()?;
            let dst = pair.open_destination(OpenMode::CreateIfMissing, request.compat)?;
            let to = store_description(&pair.to, dst_dir);
            let result = network::migrate_from_server(&source, &dst, &to, options, &mut bar);
            bar.finish();
            let report = result?;
            print(&report, &format!("the {} format cannot hold", pair.to))?;
            if request.verify {
                let verified = network::verify_server_to_store(&source, &dst, report.merged)?;
                return print_verify(&verified);
            }
            Ok(())
        }
        (true, true) => {
            let (source, target) = servers(pair)?;
            reject(request.compat.is_some(), "--compat", "--to")?;
            let result = network::migrate_between_servers(&source, &target, options, &mut bar);
            bar.finish();
            let report = result?;
            print(&report, "that cannot be migrated")?;
            if request.verify {
                let verified = network::verify_between_servers(&source, &target, report.merged)?;
                return print_verify(&verified);
            }
            Ok(())
        }
        (false, false) => Err(no_server()),
    }
}

/// A server as the source and a cluster as the destination; two plain
/// servers are refused.
fn servers(pair: &PairArgs) -> Result<(Endpoint, Endpoint), CliError> {
    let source = Endpoint::parse(&pair.from)?;
    let target = Endpoint::parse(&pair.to)?;
    if !target.cluster {
        return Err(both_servers());
    }
    for (given, option) in [
        (pair.src.is_some(), "--src"),
        (pair.src_namespace.is_some(), "--src-namespace"),
        (pair.src_cluster, "--src-cluster"),
    ] {
        reject(given, option, "--from")?;
    }
    for (given, option) in [
        (pair.dst.is_some(), "--dst"),
        (pair.dst_namespace.is_some(), "--dst-namespace"),
        (pair.dst_cluster, "--dst-cluster"),
    ] {
        reject(given, option, "--to")?;
    }
    Ok((source, target))
}

/// Runs `redcodec verify` with a server on one side.
pub fn run_verify(pair: &PairArgs, merge: bool) -> Result<(), CliError> {
    one_namespace(pair)?;
    let report = match (is_url(&pair.from), is_url(&pair.to)) {
        (false, true) => {
            let src = pair.open_source()?;
            let target = Endpoint::parse(&pair.to)?;
            network::verify_store_to_server(&src, &target, &Rules::STRICT, merge)?
        }
        (true, false) => {
            let source = Endpoint::parse(&pair.from)?;
            let dst = pair.open_destination(OpenMode::ReadOnly, None)?;
            network::verify_server_to_store(&source, &dst, merge)?
        }
        (true, true) => {
            let (source, target) = servers(pair)?;
            network::verify_between_servers(&source, &target, merge)?
        }
        (false, false) => return Err(no_server()),
    };
    print_verify(&report)
}

/// A job with a server covers one namespace of the store side.
fn one_namespace(pair: &PairArgs) -> Result<(), CliError> {
    if pair.all_namespaces {
        return Err(fail(
            "--all-namespaces is for two stores: with a server, name one namespace (--src-namespace / --dst-namespace)",
        ));
    }
    Ok(())
}

fn no_server() -> CliError {
    fail("neither --from nor --to names a server")
}

fn both_servers() -> CliError {
    fail("--from and --to are both servers: migrate into a cluster (--to redis-cluster://…) or through a store (or use the servers' own replication)")
}

/// Refuses an option that names a store where `side` is a server.
fn reject(given: bool, option: &str, side: &str) -> Result<(), CliError> {
    if given {
        return Err(fail(format!(
            "{option} is for a store, but {side} names a server"
        )));
    }
    Ok(())
}

/// A store for messages and checkpoints: `FORMAT (DIR)`.
fn store_description(format: &str, dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    format!("{format} ({})", dir.display())
}

/// Prints the summary; `skipped_why` completes "skipped N keys …".
fn print(report: &ServerReport, skipped_why: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    let (from, to, m) = (&report.from, &report.to, &report.migrated);
    summary::write_migrated(&mut out, "migrated", m, from, to, report.seconds)?;
    if let Some(resumed) = &report.resumed {
        writeln!(out, "{resumed}")?;
    }
    summary::write_left_out(
        &mut out,
        report.expired,
        &report.skipped,
        skipped_why,
        &report.first_of_several,
    )?;
    Ok(())
}
