//! Migration between formats: every live key of one engine — type, expiry,
//! every element — copied into an engine of another format, through the
//! logical model only (never bytes of one format handed to another).
//!
//! # How a migration runs
//!
//! - **Source.** Live keys are walked in the source's key order; expired
//!   keys are skipped. A key's elements are read in chunks
//!   ([`MigrateOptions::batch_elements`] / [`MigrateOptions::batch_bytes`]):
//!   memory does not grow with a collection's size nor with the store's.
//!   Lists are read head first, so order is kept; sorted-set scores are
//!   copied as exact `f64`s.
//! - **Destination.** Records go into write batches of about the same
//!   limits: many small keys per batch, or a big key over several. Each
//!   key is written the way the destination's own commands write it
//!   (fresh version, the format's list model, score index…), in the
//!   batch its elements end in, metadata after elements. A big key is
//!   therefore **not** one atomic write: each batch that cuts it carries
//!   the metadata of the elements written so far, so until its last batch
//!   the key exists in a temporary, partial state — a smaller but
//!   consistent collection. (Elements without their metadata would be
//!   orphans that the formats' compaction filters collect, so the
//!   metadata cannot wait for the last batch.) While a migration is
//!   unfinished its checkpoint sits in the destination directory; a
//!   resumed migration removes the partial key and writes it again (see
//!   below), so the temporary state never outlives the job.
//! - **Expiry** is copied as an absolute time. A destination of
//!   [`TtlResolution::Seconds`](redcodec_codec::TtlResolution) stores it
//!   rounded **up** to the whole second (`ceil(ms / 1000) * 1000`), as every
//!   command of the engine does: the key never expires earlier than in the
//!   source, at most 999 ms later. [`verify`] compares expiries after the
//!   same rounding. A key whose rounded expiry has already passed is
//!   skipped as expired.
//! - **Unrepresentable keys.** A key the destination's declared
//!   [`Capabilities`](redcodec_codec::Capabilities) cannot hold (a
//!   collection key over `collection_key_limit`, an expiry past
//!   `max_expire_ms`, a score outside `score_limit`) is reported by name
//!   with the reason. By default ([`OnUnrepresentable::Stop`]) the
//!   migration stops before writing anything for it — and, when the
//!   planning pass runs ([`MigrateOptions::plan`]), before writing anything
//!   at all, listing every such key. With [`OnUnrepresentable::Skip`] it
//!   goes on and the report lists the skipped keys.
//! - **Instances the layout does not name** (Pika 3.5's `streams/` beside
//!   blackwidow's five): their keys are unrepresentable — named, and the
//!   migration stops before writing unless they are skipped.
//! - **Checkpoint and resume.** With [`MigrateOptions::checkpoint`] set, a
//!   small file records, before every commit, the last key surely written,
//!   the last key the commit in flight touches, the metadata of a key cut
//!   between commits, and the destination's version counter. The file is
//!   replaced atomically (written aside, then renamed), after the
//!   destination's previous commits were handed to the operating system, so
//!   it never claims more than a killed process left behind; with
//!   [`MigrateOptions::sync`] the write-ahead logs and the file are synced
//!   to disk first, which extends this to a crash of the machine. After an
//!   interruption (Ctrl-C, kill) a run with [`MigrateOptions::resume`] removes every trace of the keys
//!   the interrupted commit may have touched, restores the version counter
//!   and continues after the last key surely written: the result is the
//!   same as an uninterrupted run's — with a fixed clock and a destination
//!   that started empty, byte for byte. The file is deleted when the
//!   migration completes.
//! - **Destination check.** A destination holding live keys is refused
//!   unless [`MigrateOptions::merge`] is set (then source keys replace
//!   destination keys of the same name; others stay). Into a destination
//!   without any metadata record, keys are written without looking up what
//!   the destination holds under them (there is nothing); otherwise each
//!   key is looked up first, as a command would.
//!
//! - **Bulk path.** Into an empty destination (unless
//!   [`MigrateOptions::bulk`] is [`Bulk::Never`]), no write batch is
//!   applied: the same destination code makes the records, which are
//!   sorted outside memory and ingested as SST files, with checkpoints
//!   per run, file and family (module `bulk`). The bytes are the write
//!   path's.
//!
//! Both engines are locked for the whole run: commands on them wait.
//!
//! With a live server on one side instead of a store, or a cluster of
//! them, see [`network`]: the same rules, the keys travel through the
//! protocol.
//!
//! # Beside the migration
//!
//! - [`store_spec`]: a store named by format, directory, namespace, cluster
//!   mode and clock, opened once or once per namespace; [`namespaces`]: a
//!   job over every namespace of a source;
//! - [`analyze`]: what a store holds and where its bytes go;
//!   [`check_report`]: the lines of `redcodec check`;
//! - [`generate`]: a realistic dataset written into an empty store;
//! - [`rdb_file`]: RDB files read and written; [`rdb_store`]: a store
//!   exported to one, and one imported into a store;
//! - [`summary`]: what a migration, a verification or a generated dataset
//!   comes to, as the lines the command line prints.

pub mod analyze;
mod batches;
mod bulk;
pub mod check_report;
mod checkpoint;
mod digest;
mod error;
pub mod generate;
pub mod namespaces;
pub mod network;
mod options;
mod plan;
mod purge;
pub mod rdb_file;
pub mod rdb_store;
mod reader;
mod report;
mod represent;
mod run;
mod sink;
mod source;
pub mod store_spec;
mod stores;
pub mod summary;
#[cfg(test)]
mod testkit;

use redcodec_codec::Codec;

use redcodec_engine::Engine;

pub use digest::{
    key_digest, store_digest, verify, ContentDigest, Difference, DifferenceKind, KeyDigest,
    StoreDigest, VerifyOptions, VerifyReport,
};
pub use error::MigrateError;
pub use options::{
    Bulk, MigrateOptions, OnUnrepresentable, RunCompression, TypeConflict, CHECKPOINT_FILE,
    RAW_RUNS_HEADROOM,
};
pub use report::{Flow, MigrateReport, Observer, Outcome, Plan, Quiet, Skipped, Tally};
pub use represent::Unrepresentable;

/// Migrates every live key of `src` into `dst` (see the module docs).
pub fn migrate<A: Codec, B: Codec + Clone>(
    src: &Engine<A>,
    dst: &Engine<B>,
    options: &MigrateOptions,
    observer: &mut dyn Observer,
) -> Result<MigrateReport, MigrateError> {
    stores::check_distinct(src, dst)?;
    let foreign = foreign_keys(src)?;
    if !foreign.is_empty() && options.on_unrepresentable == OnUnrepresentable::Stop {
        let more = foreign.len().saturating_sub(FOREIGN_LISTED) as u64;
        return Err(MigrateError::Unrepresentable {
            format: dst.codec().name().to_string(),
            keys: foreign.into_iter().take(FOREIGN_LISTED).collect(),
            more,
        });
    }
    let _src_held = src.lock_all();
    let _dst_held = dst.lock_all();
    let mut report = if bulk::chosen(dst, options)? {
        bulk::migrate(src, dst, options, observer)?
    } else {
        run::Run::new(src, dst, options, observer).execute()?
    };
    for skipped in foreign {
        observer.skipped(&skipped);
        report.skipped.push(skipped);
    }
    Ok(report)
}

/// Foreign-instance keys named in a refusal (all are counted).
const FOREIGN_LISTED: usize = 20;

/// The keys of the RocksDB instances beside the source's layout that it
/// does not name (Pika 3.5's `streams/`): never migrated, always named.
fn foreign_keys<A: Codec>(src: &Engine<A>) -> Result<Vec<Skipped>, MigrateError> {
    let store = src.store();
    let mut out = Vec::new();
    for instance in redcodec_engine::store::foreign::foreign_instances(store) {
        for key in redcodec_engine::store::foreign::foreign_keys(store, &instance)? {
            out.push(Skipped {
                key,
                data_type: None,
                reason: Unrepresentable::Unmodelled {
                    type_name: format!("record of {instance}/, an instance"),
                },
            });
        }
    }
    Ok(out)
}
