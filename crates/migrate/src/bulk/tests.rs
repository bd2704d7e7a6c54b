//! The bulk path against the write path, on Kvrocks stores: the same
//! bytes, through spills and several SST files per family; a migration
//! stopped after every one of its checkpoints resumes to the same bytes.

use std::path::Path;
use std::sync::Arc;

use redcodec_engine::clock::ManualClock;
use redcodec_engine::{Engine, EngineOptions};
use redcodec_kvrocks::KvrocksCodec;

use crate::analyze::families::field_sum;
use crate::options::{Bulk, MigrateOptions, RunCompression, CHECKPOINT_FILE};
use crate::report::{Flow, Observer, Outcome, Quiet};

const NOW: u64 = 1_700_000_000_000;

fn open(dir: &Path) -> Engine<KvrocksCodec> {
    let clock = Arc::new(ManualClock::at_ms(NOW));
    Engine::open(
        KvrocksCodec::default(),
        dir,
        EngineOptions::with_clock(clock),
    )
    .expect("open")
}

fn run(engine: &Engine<KvrocksCodec>, line: &str) {
    let args = redcodec_engine::cmdline::split_args(line).expect("command line");
    let reply = engine.execute(&args);
    assert!(
        !matches!(reply, redcodec_engine::Reply::Error(_)),
        "{line}: {reply:?}"
    );
}

/// Every type, expiries, and collections of 600 elements.
fn source(dir: &Path) -> Engine<KvrocksCodec> {
    let src = open(dir);
    for i in 0..40 {
        run(&src, &format!("SET s{i} \"v\\x00{i}\""));
    }
    run(&src, "SET ttl x PX 1500");
    run(&src, "SET gone x PX 1");
    let fields: Vec<String> = (0..600).map(|i| format!("f{i} v{i}")).collect();
    run(&src, &format!("HSET h {}", fields.join(" ")));
    run(&src, "PEXPIRE h 90000");
    let items: Vec<String> = (0..600).map(|i| format!("i{}", 599 - i)).collect();
    run(&src, &format!("RPUSH l {}", items.join(" ")));
    let members: Vec<String> = (0..600).map(|i| format!("{}.5 m{i}", 300 - i)).collect();
    run(&src, &format!("ZADD z {}", members.join(" ")));
    let set: Vec<String> = (0..600).map(|i| format!("e{i}")).collect();
    run(&src, &format!("SADD set {}", set.join(" ")));
    src
}

fn dump(engine: &Engine<KvrocksCodec>) -> String {
    let mut out = Vec::new();
    engine.store().dump(&mut out).expect("dump");
    String::from_utf8(out).expect("text")
}

fn options(dst: &Path, bulk: Bulk) -> MigrateOptions {
    MigrateOptions {
        batch_elements: 100,
        checkpoint: Some(dst.join(CHECKPOINT_FILE)),
        bulk,
        bulk_buffer_bytes: 8 << 10,
        bulk_file_bytes: 4 << 10,
        ..MigrateOptions::default()
    }
}

fn sampled(path: &Path, bulk: Bulk) -> MigrateOptions {
    MigrateOptions {
        bulk_buffer_bytes: 64 << 10,
        bulk_file_bytes: 16 << 10,
        ..options(path, bulk)
    }
}

/// Stops the migration after checkpoint `at`.
struct StopAt {
    at: u64,
}

impl Observer for StopAt {
    fn committed(&mut self, commit: u64) -> Flow {
        if commit == self.at {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

/// `(data blocks, index partitions)` of every family of `engine`'s store
/// that has tables, from RocksDB's aggregated table properties.
fn table_indexes(engine: &Engine<KvrocksCodec>) -> Vec<(u64, u64)> {
    let store = engine.store();
    store
        .layout()
        .places()
        .filter(|place| store.has_cf(*place))
        .filter_map(|place| {
            let text = store
                .property(place, "rocksdb.aggregated-table-properties")
                .unwrap()?;
            let blocks = field_sum(&text, &["# data blocks"]);
            (blocks > 0).then(|| (blocks, field_sum(&text, &["# index partitions"])))
        })
        .collect()
}

#[test]
fn the_bulk_path_writes_the_write_paths_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let src = source(&dir.path().join("src"));
    let written = open(&dir.path().join("written"));
    let loaded = open(&dir.path().join("loaded"));
    let path = dir.path().join("written");
    let report = crate::migrate(&src, &written, &options(&path, Bulk::Never), &mut Quiet).unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    // Runs compressed here, raw below: the same bytes.
    let path = dir.path().join("loaded");
    let lz4 = MigrateOptions {
        bulk_runs: RunCompression::Lz4,
        ..options(&path, Bulk::Always)
    };
    let bulk = crate::migrate(&src, &loaded, &lz4, &mut Quiet).unwrap();
    assert_eq!(bulk.outcome, Outcome::Completed);
    let raw_path = dir.path().join("raw");
    let raw = MigrateOptions {
        bulk_runs: RunCompression::None,
        ..options(&raw_path, Bulk::Always)
    };
    let raw_loaded = open(&raw_path);
    let raw_bulk = crate::migrate(&src, &raw_loaded, &raw, &mut Quiet).unwrap();
    assert_eq!(raw_bulk.outcome, Outcome::Completed);
    assert_eq!(raw_bulk.commits, bulk.commits);
    assert_eq!(dump(&raw_loaded), dump(&written));
    assert_eq!(bulk.migrated, report.migrated);
    assert_eq!(bulk.expired, report.expired);
    // Spilled many times, several SST files per family.
    assert!(bulk.commits > 10, "{} checkpoints", bulk.commits);
    assert_eq!(dump(&loaded), dump(&written));
    assert_eq!(loaded.version_counter(), written.version_counter());
    // The SST files have partitioned indexes (and filters), as the
    // store's own tables: a point read loads a partition, not a whole
    // block of the file.
    let tables = table_indexes(&loaded);
    assert!(!tables.is_empty());
    assert!(
        tables.iter().all(|(_, partitions)| *partitions > 0),
        "{tables:?}"
    );
    assert!(!path.join(CHECKPOINT_FILE).exists());
    assert!(!path.join("redcodec-migrate.checkpoint.bulk").exists());
    let verified = crate::verify(&src, &loaded, &crate::VerifyOptions::default()).unwrap();
    assert_eq!(verified.differences, 0, "{:?}", verified.listed);
    assert_eq!(verified.matching, verified.source_keys);
}

#[test]
fn a_bulk_migration_stopped_at_any_checkpoint_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let src = source(&dir.path().join("src"));
    let whole = open(&dir.path().join("whole"));
    let path = dir.path().join("whole");
    let total = crate::migrate(&src, &whole, &sampled(&path, Bulk::Always), &mut Quiet)
        .unwrap()
        .commits;
    let expected = dump(&whole);
    // Every run, SST file and ingested family counts once, whichever
    // thread wrote it and whenever: the count does not vary.
    let again = dir.path().join("again");
    let commits = crate::migrate(
        &src,
        &open(&again),
        &sampled(&again, Bulk::Always),
        &mut Quiet,
    )
    .unwrap()
    .commits;
    assert_eq!(commits, total);
    // Checkpoints of every phase: spills, SST files, ingestions.
    let mut stops = vec![1, 2, total / 3, total / 2, total * 2 / 3, total - 1, total];
    stops.retain(|&at| at >= 1);
    stops.sort_unstable();
    stops.dedup();
    // Runs raw before the stop and compressed after it, or the other way
    // round: a merge reads both.
    let encodings = [RunCompression::None, RunCompression::Lz4];
    for (n, at) in stops.into_iter().enumerate() {
        let path = dir.path().join(format!("stopped-{at}"));
        let dst = open(&path);
        let first = MigrateOptions {
            bulk_runs: encodings[n % 2],
            ..sampled(&path, Bulk::Auto)
        };
        let stopped = crate::migrate(&src, &dst, &first, &mut StopAt { at });
        assert_eq!(stopped.unwrap().outcome, Outcome::Stopped, "at {at}");
        assert!(path.join(CHECKPOINT_FILE).exists());
        // Without --resume the checkpoint is refused; --no-bulk too.
        assert!(crate::migrate(&src, &dst, &sampled(&path, Bulk::Auto), &mut Quiet).is_err());
        let mut resume = sampled(&path, Bulk::Never);
        resume.resume = true;
        assert!(crate::migrate(&src, &dst, &resume, &mut Quiet).is_err());
        resume.bulk = Bulk::Auto;
        resume.bulk_runs = encodings[(n + 1) % 2];
        let done = crate::migrate(&src, &dst, &resume, &mut Quiet).unwrap();
        assert_eq!(done.outcome, Outcome::Completed, "at {at}");
        assert_eq!(
            dump(&dst),
            expected,
            "stopped at checkpoint {at} of {total}"
        );
        assert!(!path.join(CHECKPOINT_FILE).exists());
    }
}

#[test]
fn a_destination_holding_records_refuses_the_bulk_path() {
    let dir = tempfile::tempdir().unwrap();
    let src = source(&dir.path().join("src"));
    let path = dir.path().join("dst");
    let dst = open(&path);
    run(&dst, "SET mine 1");
    let err = crate::migrate(&src, &dst, &options(&path, Bulk::Always), &mut Quiet).unwrap_err();
    assert!(
        err.to_string()
            .contains("the bulk path writes only into an empty destination"),
        "{err}"
    );
    // Merging takes the write path.
    let mut merge = options(&path, Bulk::Auto);
    merge.merge = true;
    let report = crate::migrate(&src, &dst, &merge, &mut Quiet).unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
}
