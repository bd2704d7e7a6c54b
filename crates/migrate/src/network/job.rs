//! One migration with a server, whichever the direction: its two ends as
//! messages and the checkpoint name them, the checkpoint it continues,
//! the rules; the planning pass's count; and what it reports.

use std::path::PathBuf;
use std::time::Instant;

use redcodec_engine::reply::quote_bytes;

use super::endpoint::Endpoint;
use super::judge::{Rules, Verdict};
use super::server::Server;
use crate::checkpoint::{remove_checkpoint, ServerCheckpoint};
use crate::error::{fail, MigrateError};
use crate::options::MigrateOptions;
use crate::report::{Observer, Plan, Skipped, Tally};
use crate::represent::Unrepresentable;

/// Keys that stop a migration named in its refusal (all are counted).
const STOPS_LISTED: usize = 20;

/// What a planning pass found from the resume point on.
#[derive(Default)]
pub struct Planned {
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
    pub fn count(&mut self, verdict: Verdict, elements: u64) {
        match verdict {
            Verdict::Copy | Verdict::CopyFirst(_) => {
                self.keys += 1;
                self.elements += elements;
            }
            Verdict::Skip(_) => {}
            Verdict::Stop(s) if self.stops.len() < STOPS_LISTED => self.stops.push(s),
            Verdict::Stop(_) => self.more += 1,
        }
    }

    /// Refuses the plan if keys stop the migration to `job`'s destination;
    /// else tells `observer` the plan from the `done` of a resumed run on.
    pub fn start(
        &self,
        observer: &mut dyn Observer,
        job: &Job,
        done: Tally,
    ) -> Result<(), MigrateError> {
        refuse_stops(&self.stops, self.more, &job.to)?;
        observer.planned(&Plan {
            done,
            keys: self.keys,
            elements: self.elements,
        });
        Ok(())
    }
}

/// The refusal when keys stop the migration (before anything is written).
fn refuse_stops(stops: &[Skipped], more: u64, destination: &str) -> Result<(), MigrateError> {
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
pub struct Job {
    /// The source, as described in messages and the checkpoint.
    pub from: String,
    /// The destination, likewise.
    pub to: String,
    /// The checkpoint file.
    pub checkpoint: PathBuf,
    /// The interrupted run being resumed.
    pub resumed: Option<ServerCheckpoint>,
    /// Merging into a destination that held keys (asked for now, or by
    /// the interrupted run).
    pub merge: bool,
    /// Sync the checkpoint (and a store destination) before going on.
    pub sync: bool,
    /// Which keys can be migrated.
    pub rules: Rules,
    /// Elements and logical bytes per pipeline or write.
    pub batch: (usize, usize),
}

impl Job {
    /// The job `options` describe, with its checkpoint (the one options
    /// name, else `server`'s default): refused if one is there and resume
    /// was not asked for, or if it records another migration.
    pub fn new(
        options: &MigrateOptions,
        from: String,
        to: String,
        server: &Endpoint,
    ) -> Result<Job, MigrateError> {
        let checkpoint = options
            .checkpoint
            .clone()
            .unwrap_or_else(|| server.default_checkpoint());
        let found = ServerCheckpoint::load(&checkpoint)?;
        if let Some(c) = &found {
            if !options.resume {
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
            merge: options.merge || found.as_ref().is_some_and(|c| c.merge),
            from,
            to,
            checkpoint,
            resumed: found,
            sync: options.sync,
            rules: Rules::of(options),
            batch: (options.batch_elements.max(1), options.batch_bytes.max(1)),
        })
    }

    /// Refuses a destination server holding keys, unless merging or
    /// resuming.
    pub fn refuse_unless_empty(&self, server: &mut Server) -> Result<(), MigrateError> {
        if self.resumed.is_some() || self.merge {
            return Ok(());
        }
        match server.any_key()? {
            None => Ok(()),
            Some((n, key)) => Err(fail(format!(
                "{} already holds {n} keys (for example {}); refusing to migrate into it \
                 without --merge (with it, source keys replace server keys of the same name)",
                self.to,
                quote_bytes(&key)
            ))),
        }
    }

    /// The report of this job done: `migrated` in all, this run since
    /// `started`, `resumed` (how it continued) if it resumed an
    /// interrupted run. The checkpoint is deleted.
    pub fn finish(
        &self,
        mut report: ServerReport,
        migrated: Tally,
        started: Instant,
        resumed: String,
    ) -> Result<ServerReport, MigrateError> {
        report.migrated = migrated;
        report.seconds = started.elapsed().as_secs_f64();
        remove_checkpoint(&self.checkpoint)?;
        report.resumed = self.resumed.as_ref().map(|_| resumed);
        Ok(report)
    }

    /// The error for a checkpoint of the other direction.
    pub fn wrong_direction(&self) -> MigrateError {
        fail(format!(
            "checkpoint {} does not record a migration from {} to {}",
            self.checkpoint.display(),
            self.from,
            self.to
        ))
    }

    /// The checkpoint of this job at `position`, `done` written.
    pub fn checkpoint_at(
        &self,
        position: crate::checkpoint::Position,
        done: Tally,
    ) -> ServerCheckpoint {
        ServerCheckpoint {
            from: self.from.clone(),
            to: self.to.clone(),
            merge: self.merge,
            done,
            position,
        }
    }

    /// An empty report of this job.
    pub fn report(&self) -> ServerReport {
        ServerReport {
            from: self.from.clone(),
            to: self.to.clone(),
            merged: self.merge,
            ..ServerReport::default()
        }
    }
}

/// Refuses a cluster as the source of a migration.
pub fn not_from_a_cluster(source: &Endpoint) -> Result<(), MigrateError> {
    if source.cluster {
        return Err(fail(format!(
            "{}: migrating from a cluster is not supported; migrate from each master (redis://HOST:PORT)",
            source.name()
        )));
    }
    Ok(())
}

/// What a migration with a server did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerReport {
    /// The source, as messages name it.
    pub from: String,
    /// The destination, likewise.
    pub to: String,
    /// Keys, elements and bytes written, an interrupted run's included.
    pub migrated: Tally,
    /// How long this run took.
    pub seconds: f64,
    /// How the run continued an interrupted one, for people.
    pub resumed: Option<String>,
    /// Keys skipped because they had expired.
    pub expired: u64,
    /// Keys left out (listed).
    pub skipped: Vec<Skipped>,
    /// Keys held in several types whose first type was migrated.
    pub first_of_several: Vec<Skipped>,
    /// Whether the destination was merged into (asked for now, or by the
    /// interrupted run resumed).
    pub merged: bool,
}
