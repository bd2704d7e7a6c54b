//! `redcodec analyze`: what a store holds and where its bytes go, read
//! without writing anything (open the engine read-only), in one pass over
//! the live keys and one over every element record, in bounded memory:
//!
//! - the top-N keys by bytes (their metadata record and every element
//!   record, keys and values as stored) and by element count;
//! - keys, elements and bytes per type and per key prefix (the key cut at
//!   its first `depth` delimiters; at most [`MAX_PREFIXES`] prefixes are
//!   kept, later ones are counted under `(other)`);
//! - a histogram of the time left to live;
//! - stale records per column family: metadata of expired or deleted
//!   keys, and element records of deleted, expired or old versions, that
//!   compaction has not removed yet. An element record is judged by the
//!   format's own compaction rule ([`Codec::gc_sub_owner`],
//!   [`Codec::gc_sub`]), as `redcodec check` judges it: dropped by the
//!   rule, owned by metadata no read sees (an expired or deleted key the
//!   rule keeps until its metadata goes), or of a version its key's
//!   metadata does not have (check's orphans), it is stale;
//! - bytes per column family and per level, from RocksDB's properties.

mod analysis;
mod elements;
pub(crate) mod families;
mod keys;
mod render;
mod tally;

use redcodec_codec::Codec;
use redcodec_engine::internals::keyspace::Ctx;
use redcodec_engine::{CmdError, EngineCore};
use serde::Serialize;

pub use analysis::{Analysis, AnalyzeOptions, KeyStats, Stale, Totals, TtlBucket, MAX_PREFIXES};
pub use families::FamilyStats;

use tally::{family_name, StaleCounts, Top};

/// Analyzes the store behind `engine` (open it read-only): one pass over
/// the metadata records (`keys`), then one over each family of element
/// records (`elements`), each record read once.
pub fn analyze<C: Codec>(
    engine: &EngineCore<C>,
    options: &AnalyzeOptions,
) -> Result<Analysis, CmdError> {
    let ctx = Ctx::new(engine);
    let mut analysis = Analysis {
        format: engine.codec().name(),
        ..Analysis::default()
    };
    let mut by_bytes = Top::new(options.top);
    let mut by_elements = Top::new(options.top);
    let mut stale = StaleCounts::default();
    let seen = keys::meta_pass(
        &ctx,
        options,
        &mut analysis,
        &mut by_bytes,
        &mut by_elements,
        &mut stale,
    )?;
    elements::ElementPass::new(
        &ctx,
        options,
        &seen.ambiguous,
        &mut analysis,
        &mut by_bytes,
        &mut by_elements,
        &mut stale,
    )
    .run(seen.live_collections)?;
    analysis.top_by_bytes = by_bytes.into_sorted();
    analysis.top_by_elements = by_elements.into_sorted();
    analysis.stale = stale.into_stale(&ctx);
    analysis.families = families::families(engine.store(), &|p| family_name(&ctx, p))?;
    Ok(analysis)
}

/// What a raw scan of a store read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RawScan {
    /// Records (pairs) read.
    pub records: u64,
    /// Their bytes (keys and values).
    pub bytes: u64,
    /// Seconds it took.
    pub seconds: f64,
}

/// Reads every pair of every column family of the layout with a plain
/// RocksDB iterator, touching nothing else: the floor an analysis (or a
/// `dump`, a `check`, a migration's read side) of the same store is
/// measured against.
pub fn raw_scan(store: &redcodec_engine::store::Store) -> Result<RawScan, CmdError> {
    let started = std::time::Instant::now();
    let mut scan = RawScan::default();
    store
        .for_each_pair(|_, key, value| {
            scan.records += 1;
            scan.bytes += (key.len() + value.len()) as u64;
            Ok(())
        })
        .map_err(|e| CmdError::Engine(e.into()))?;
    scan.seconds = started.elapsed().as_secs_f64();
    Ok(scan)
}
