//! `redcodec migrate` and `verify` with a live Redis-compatible server on
//! one side (`--to redis://HOST:PORT[/DB]` or `--from redis://…`), for
//! systems that cannot open a store redcodec writes (Pika 2.x–3.4 and
//! Ardb run RocksDB 5.x): keys travel through the protocol instead.
//!
//! - [`endpoint`]: the URL, parsed by the `redis` crate;
//! - [`server`]: the connection, pipelines, replies checked;
//! - [`remote`]: keys probed and values read from the server, in chunks;
//! - [`outbox`]: a key written to the server as `DEL`, chunks, `PEXPIREAT`;
//! - [`judge`]: which keys can be migrated (the store-to-store rules);
//! - [`checkpoint`]: the file `--resume` continues from;
//! - [`push`]: store → server; [`pull`]: server → store;
//! - [`verify`] with [`digest`]: every key compared through the protocol.

mod checkpoint;
mod digest;
mod endpoint;
mod judge;
mod outbox;
mod pull;
mod push;
mod remote;
mod server;
mod verify;

use std::path::{Path, PathBuf};

use clap::Args;
use redcodec_engine::CmdError;
use redcodec_migrate::{MigrateError, Observer, Plan, Skipped, Tally, Unrepresentable};

use self::checkpoint::Checkpoint;
use self::endpoint::{is_url, Endpoint};
use self::judge::{Rules, Verdict};
use super::progress::Bar;
use super::{
    fail, human_bytes, print_left_out, print_verify, thousands, MigrateArgs, PairArgs, VerifyArgs,
};
use crate::error::CliError;

/// Elements per write command and per read of a big value.
const CHUNK: usize = 1000;

/// Keys per page: of a store's walk, and `SCAN`'s `COUNT`.
const PAGE: usize = 1000;

/// The options only a migration with a server has.
#[derive(Args, Debug, Clone, Default)]
pub struct NetworkArgs {
    /// With a server as --from or --to: the checkpoint file --resume
    /// continues from (default: redcodec-migrate-HOST-PORT-DB.checkpoint in
    /// the current directory).
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
}

/// Whether one side of `pair` is a server.
pub fn involved(pair: &PairArgs) -> bool {
    is_url(&pair.from) || is_url(&pair.to)
}

/// Runs `redcodec migrate` with a server on one side.
pub fn run(args: &MigrateArgs) -> Result<(), CliError> {
    let pair = &args.pair;
    one_namespace(pair)?;
    match (is_url(&pair.from), is_url(&pair.to)) {
        (false, true) => {
            reject(pair.dst.is_some(), "--dst", "--to")?;
            reject(pair.dst_cluster, "--dst-cluster", "--to")?;
            reject(pair.dst_namespace.is_some(), "--dst-namespace", "--to")?;
            reject(args.compat.is_some(), "--compat", "--to")?;
            push::run(args, &Endpoint::parse(&pair.to)?)
        }
        (true, false) => {
            reject(pair.src.is_some(), "--src", "--from")?;
            reject(pair.src_namespace.is_some(), "--src-namespace", "--from")?;
            reject(pair.src_cluster, "--src-cluster", "--from")?;
            pull::run(args, &Endpoint::parse(&pair.from)?)
        }
        _ => Err(both_servers()),
    }
}

/// Runs `redcodec verify` with a server on one side.
pub fn run_verify(args: &VerifyArgs) -> Result<(), CliError> {
    let pair = &args.pair;
    one_namespace(pair)?;
    let rules = Rules {
        skip_unrepresentable: false,
        type_conflict: redcodec_migrate::TypeConflict::Fail,
    };
    let report = match (is_url(&pair.from), is_url(&pair.to)) {
        (false, true) => {
            let src = pair.open_source()?;
            let mut server = server::Server::connect(&Endpoint::parse(&pair.to)?)?;
            verify::store_to_server(&src, &mut server, &rules, args.merge)?
        }
        (true, false) => {
            let mut server = server::Server::connect(&Endpoint::parse(&pair.from)?)?;
            let dst = pair.open_destination(redcodec_engine::OpenMode::ReadOnly, None)?;
            verify::server_to_store(&mut server, &dst, args.merge)?
        }
        _ => return Err(both_servers()),
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

fn both_servers() -> CliError {
    fail("--from and --to are both servers: migrate through a store (or use the servers' own replication)")
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

/// The command line's error for an engine's.
fn engine_error(e: CmdError) -> CliError {
    MigrateError::from(e).into()
}

/// The error of a sink handed to [`redcodec_engine::Engine::read_chunks`]:
/// the command line's, which the engine's converts into.
struct SinkError(CliError);

impl From<CmdError> for SinkError {
    fn from(e: CmdError) -> SinkError {
        SinkError(engine_error(e))
    }
}

impl From<CliError> for SinkError {
    fn from(e: CliError) -> SinkError {
        SinkError(e)
    }
}

/// A store for messages and checkpoints: `FORMAT (DIR)`.
fn store_description(format: &str, dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    format!("{format} ({})", dir.display())
}

/// What a planning pass found from the resume point on.
#[derive(Default)]
struct Planned {
    /// Keys to migrate.
    keys: u64,
    /// Their elements.
    elements: u64,
    /// The first keys that stop the migration.
    stops: Vec<Skipped>,
    /// How many more there are.
    more: u64,
}

impl Planned {
    /// Counts a key of `elements` elements, judged `verdict`.
    fn count(&mut self, verdict: Verdict, elements: u64) {
        match verdict {
            Verdict::Copy | Verdict::CopyFirst(_) => {
                self.keys += 1;
                self.elements += elements;
            }
            Verdict::Skip(_) => {}
            Verdict::Stop(s) if self.stops.len() < 20 => self.stops.push(s),
            Verdict::Stop(_) => self.more += 1,
        }
    }

    /// Refuses the plan if keys stop the migration to `job`'s destination;
    /// else the progress bar of the migration, showing the plan from the
    /// `done` of a resumed run on.
    fn start(&self, args: &MigrateArgs, job: &Job, done: Tally) -> Result<Bar, CliError> {
        refuse_stops(&self.stops, self.more, &job.to)?;
        let mut bar = Bar::new(args.pause_after_commits);
        bar.planned(&Plan {
            done,
            keys: self.keys,
            elements: self.elements,
        });
        Ok(bar)
    }
}

/// Calls `visit` with each page of a store's keys after `after`, as
/// `read` pages them (`summaries_after`, `keys_after`), up to the last key.
fn for_each_page<T>(
    mut after: Option<Vec<u8>>,
    mut read: impl FnMut(Option<&[u8]>) -> Result<Vec<(Vec<u8>, T)>, CmdError>,
    mut visit: impl FnMut(Vec<(Vec<u8>, T)>) -> Result<(), CliError>,
) -> Result<(), CliError> {
    loop {
        let page = read(after.as_deref()).map_err(engine_error)?;
        let Some((last, _)) = page.last() else {
            return Ok(());
        };
        after = Some(last.clone());
        visit(page)?;
    }
}

/// The refusal when keys stop the migration (before anything is written).
fn refuse_stops(stops: &[Skipped], more: u64, destination: &str) -> Result<(), CliError> {
    if stops.is_empty() {
        return Ok(());
    }
    let n = stops.len() as u64 + more;
    let mut text = format!(
        "{n} key{} cannot be migrated to {destination}; nothing was written:",
        if n == 1 { "" } else { "s" }
    );
    for s in stops {
        text.push_str(&format!("\n  {s}"));
    }
    if more > 0 {
        text.push_str(&format!("\n  … and {more} more"));
    }
    let conflict_only = stops
        .iter()
        .all(|s| matches!(s.reason, Unrepresentable::SeveralTypes { .. }));
    if !conflict_only {
        text.push_str(
            "\nrerun with --skip-unrepresentable to migrate the other keys (these are listed at the end)",
        );
    }
    Err(fail(text))
}

/// One migration with a server: both ends, the checkpoint and the rules.
struct Job {
    /// The source, as described in messages and the checkpoint.
    from: String,
    /// The destination, likewise.
    to: String,
    /// The checkpoint file.
    checkpoint: PathBuf,
    /// The interrupted run being resumed.
    resumed: Option<Checkpoint>,
    /// Merging into a destination that held keys (asked for now, or by
    /// the interrupted run).
    merge: bool,
    /// Sync the checkpoint (and a store destination) before going on.
    sync: bool,
    /// Which keys can be migrated.
    rules: Rules,
}

impl Job {
    /// The job `args` describe, with its checkpoint: refused if one is
    /// there and --resume was not given, or if it records another
    /// migration.
    fn new(
        args: &MigrateArgs,
        from: String,
        to: String,
        server: &Endpoint,
    ) -> Result<Job, CliError> {
        let checkpoint = args
            .network
            .checkpoint
            .clone()
            .unwrap_or_else(|| server.default_checkpoint());
        let found = Checkpoint::load(&checkpoint)?;
        if let Some(c) = &found {
            if !args.resume {
                return Err(fail(format!(
                    "an interrupted migration is recorded in {}: resume it (--resume), or delete that file to start over",
                    checkpoint.display()
                )));
            }
            if c.from != from || c.to != to {
                return Err(fail(format!(
                    "checkpoint {} records a migration from {} to {}, not from {from} to {to}",
                    checkpoint.display(),
                    c.from,
                    c.to
                )));
            }
        }
        Ok(Job {
            merge: args.merge || found.as_ref().is_some_and(|c| c.merge),
            from,
            to,
            checkpoint,
            resumed: found,
            sync: args.sync,
            rules: Rules {
                skip_unrepresentable: args.skip_unrepresentable,
                type_conflict: args.type_conflict,
            },
        })
    }

    /// The error for a checkpoint of the other direction.
    fn wrong_direction(&self) -> CliError {
        fail(format!(
            "checkpoint {} does not record a migration from {} to {}",
            self.checkpoint.display(),
            self.from,
            self.to
        ))
    }
}

/// What a migration with a server did.
#[derive(Default)]
struct Report {
    migrated: Tally,
    seconds: f64,
    /// How the run continued an interrupted one.
    resumed: Option<String>,
    expired: u64,
    skipped: Vec<Skipped>,
    first_of_several: Vec<Skipped>,
}

impl Report {
    /// Prints the summary; `skipped_why` completes "skipped N keys …".
    fn print(&self, job: &Job, skipped_why: &str) {
        let m = self.migrated;
        println!(
            "migrated {} keys, {} elements, {} from {} to {} in {:.2} s ({} elements/s)",
            thousands(m.keys),
            thousands(m.elements),
            human_bytes(m.bytes),
            job.from,
            job.to,
            self.seconds,
            thousands((m.elements as f64 / self.seconds.max(1e-9)) as u64),
        );
        if let Some(resumed) = &self.resumed {
            println!("{resumed}");
        }
        print_left_out(
            self.expired,
            &self.skipped,
            skipped_why,
            &self.first_of_several,
        );
    }
}
