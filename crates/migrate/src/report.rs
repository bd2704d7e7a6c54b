//! What a migration reports and whom it tells while it runs: counts,
//! keys left out, the planning pass's totals, and the [`Observer`] hooks.

use redcodec_codec::DataType;
use redcodec_engine::reply::quote_bytes;

use crate::represent::Unrepresentable;

/// Counts of migrated data.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Keys.
    pub keys: u64,
    /// Elements (a string counts as one).
    pub elements: u64,
    /// Logical bytes: keys, fields, values, members, 8 per score.
    pub bytes: u64,
}

/// What the planning pass found to migrate.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Already migrated by an interrupted run being resumed.
    pub done: Tally,
    /// Live keys left to migrate.
    pub keys: u64,
    /// Their elements (a string counts as one).
    pub elements: u64,
}

/// A key left out because the destination cannot represent it.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// The key.
    pub key: Vec<u8>,
    /// Its type (`None`: a type redcodec does not model).
    pub data_type: Option<DataType>,
    /// Why.
    pub reason: Unrepresentable,
}

impl Skipped {
    /// A key the source holds in several types, copied as `data_type`
    /// (its first type) and left out as the `shadowed` others; `None`
    /// when it holds one type.
    pub(crate) fn several_types(
        key: &[u8],
        data_type: DataType,
        shadowed: Vec<DataType>,
    ) -> Option<Skipped> {
        if shadowed.is_empty() {
            return None;
        }
        let mut types = vec![data_type];
        types.extend(shadowed);
        Some(Skipped {
            key: key.to_vec(),
            data_type: Some(data_type),
            reason: Unrepresentable::SeveralTypes { types },
        })
    }
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", quote_bytes(&self.key), self.reason)
    }
}

/// Whether the migration goes on (hooks of [`Observer`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on.
    Continue,
    /// Stop here, as an interruption would: the checkpoint stays.
    Stop,
}

/// Follows a migration: progress, skipped keys, commits. Every method has
/// a default that does nothing.
pub trait Observer {
    /// The planning pass is done (not called without one).
    fn planned(&mut self, _plan: &Plan) {}

    /// More data was queued; `done` counts everything so far (an
    /// interrupted run's part included).
    fn progressed(&mut self, _done: &Tally) {}

    /// A key was skipped as unrepresentable.
    fn skipped(&mut self, _skipped: &Skipped) {}

    /// The checkpoint for commit number `commit` (1-based, this run) is
    /// written and the commit is about to be applied.
    fn before_commit(&mut self, _commit: u64) -> Flow {
        Flow::Continue
    }

    /// Commit number `commit` is applied.
    fn committed(&mut self, _commit: u64) -> Flow {
        Flow::Continue
    }
}

/// An observer that ignores everything.
pub struct Quiet;

impl Observer for Quiet {}

/// How a migration ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every key was migrated (or skipped as reported).
    Completed,
    /// An observer stopped it; resume to finish.
    Stopped,
}

/// What a migration did.
#[derive(Clone, Debug, PartialEq)]
pub struct MigrateReport {
    /// How it ended.
    pub outcome: Outcome,
    /// Keys, elements and bytes written, an interrupted run's included.
    pub migrated: Tally,
    /// Keys skipped because they had expired.
    pub expired: u64,
    /// Keys skipped as unrepresentable (or held in several types, with
    /// [`TypeConflict::Skip`](crate::TypeConflict::Skip)).
    pub skipped: Vec<Skipped>,
    /// Keys held in several types whose first type was migrated
    /// ([`TypeConflict::First`](crate::TypeConflict::First)); the reason lists every type.
    pub first_of_several: Vec<Skipped>,
    /// The last key an interrupted run had surely written, when resuming
    /// (`Some(None)`: resumed before the first key).
    pub resumed_after: Option<Option<Vec<u8>>>,
    /// Commits applied by this run.
    pub commits: u64,
    /// Whether the destination was merged into (asked for by this run, or
    /// by the interrupted run it resumed).
    pub merged: bool,
}
