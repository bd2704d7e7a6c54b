//! Migration between every ordered pair of runnable formats: round trips,
//! interrupted-then-resumed runs, unrepresentable keys, destination checks
//! and verification. Every test loops over `Format::ALL`, so a format that
//! becomes runnable is covered without a change here.

use std::path::Path;
use std::sync::Arc;

use redcodec::codec::Codec;
use redcodec::engine::internals::keyspace::migrated_expiry;
use redcodec::engine::{Clock, Engine, EngineOptions, ManualClock, OpenMode, Reply};
use redcodec::formats::{AnyCodec, Format, FormatOptions};
use redcodec::migrate::{
    self, DifferenceKind, Flow, MigrateError, MigrateOptions, Observer, OnUnrepresentable, Outcome,
    Quiet, Unrepresentable, VerifyOptions, CHECKPOINT_FILE,
};

/// The time the tests start at: 2023-11-14T22:13:20Z.
const T0_MS: u64 = 1_700_000_000_000;

/// Small batches, so that big keys span several commits.
const BATCH: usize = 64;

fn open(format: Format, dir: &Path, clock: &Arc<ManualClock>) -> Engine<AnyCodec> {
    let codec = format.codec(&FormatOptions::default()).expect("codec");
    Engine::open(codec, dir, EngineOptions::with_clock(clock.clone())).expect("open")
}

/// A new store of `format` in a new directory (the engine first: it is
/// closed before the directory goes).
fn fresh(format: Format, clock: &Arc<ManualClock>) -> (tempfile::TempDir, Engine<AnyCodec>) {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(format, dir.path(), clock);
    (dir, engine)
}

/// A new store of `format` holding [`fill`]'s dataset.
fn filled(format: Format, clock: &Arc<ManualClock>) -> (tempfile::TempDir, Engine<AnyCodec>) {
    let (dir, engine) = fresh(format, clock);
    fill(&engine, clock);
    (dir, engine)
}

fn run(engine: &Engine<AnyCodec>, args: &[&[u8]]) -> Reply {
    let reply = engine.execute(args);
    assert!(
        !matches!(reply, Reply::Error(_)),
        "{:?}: {reply}",
        args.iter()
            .map(|a| String::from_utf8_lossy(a))
            .collect::<Vec<_>>()
    );
    reply
}

fn options(checkpoint: Option<&Path>) -> MigrateOptions {
    MigrateOptions {
        batch_elements: BATCH,
        batch_bytes: 1 << 20,
        checkpoint: checkpoint.map(|d| d.join(CHECKPOINT_FILE)),
        ..MigrateOptions::default()
    }
}

/// What every runnable format can hold: the tightest declared limits.
struct Common {
    max_expire_ms: u64,
    /// Smallest and largest score every format stores.
    scores: (f64, f64),
}

fn common() -> Common {
    let mut c = Common {
        max_expire_ms: u64::MAX,
        scores: (f64::NEG_INFINITY, f64::INFINITY),
    };
    for f in Format::ALL {
        let caps = f
            .codec(&FormatOptions::default())
            .unwrap()
            .capabilities()
            .clone();
        c.max_expire_ms = c.max_expire_ms.min(caps.max_expire_ms);
        if let Some((min, max)) = caps.score_limit {
            c.scores = (c.scores.0.max(min), c.scores.1.min(max));
        }
    }
    c
}

/// Writes the mixed dataset: every type, binary keys and values (empty,
/// 0x00, 0xff), expiries in ms and s, an expired key, and collections
/// several batches long. Leaves the clock 1.1 s past the start.
fn fill(e: &Engine<AnyCodec>, clock: &ManualClock) {
    let c = common();
    run(e, &[b"SET", b"s:plain", b"v"]);
    run(e, &[b"SET", b"s:empty", b""]);
    run(e, &[b"SET", b"", b"the empty key"]);
    run(e, &[b"SET", b"s:\xff\x00bin", b"\x00\xff\xfe\xff"]);
    run(e, &[b"SET", b"s:ttl-ms", b"x", b"PX", b"1500"]);
    run(e, &[b"SET", b"s:ttl-s", b"y", b"EX", b"100"]);
    run(e, &[b"SET", b"s:expired", b"gone", b"PX", b"50"]);
    let far = (c.max_expire_ms - 86_400_000).to_string();
    run(e, &[b"SET", b"s:far", b"z", b"PXAT", far.as_bytes()]);

    run(
        e,
        &[
            b"HSET",
            b"h:small",
            b"f",
            b"v",
            b"",
            b"",
            b"\xff",
            b"\x00",
            b"g",
            b"\xff\xff",
        ],
    );
    for part in 0..5 {
        let mut args: Vec<Vec<u8>> = vec![b"HSET".to_vec(), b"h:big".to_vec()];
        for i in part * 100..(part + 1) * 100 {
            args.push(format!("field-{i}").into_bytes());
            args.push(vec![0xff, (i % 256) as u8, 0x00]);
        }
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        run(e, &refs);
    }
    run(e, &[b"PEXPIRE", b"h:big", b"86400123"]);

    run(e, &[b"RPUSH", b"l:small", b"a", b"", b"\xff", b"a"]);
    for i in 0..150 {
        let v = format!("right-{i}");
        run(e, &[b"RPUSH", b"l:big", v.as_bytes()]);
        let v = format!("left-{i}");
        run(e, &[b"LPUSH", b"l:big", v.as_bytes()]);
    }
    run(e, &[b"LPOP", b"l:big", b"3"]);
    run(
        e,
        &[b"LINSERT", b"l:big", b"BEFORE", b"right-7", b"inserted"],
    );
    run(e, &[b"EXPIRE", b"l:big", b"3600"]);

    run(e, &[b"SADD", b"set:small", b"", b"\x00", b"\xff", b"m"]);
    for part in 0..3 {
        let mut args: Vec<Vec<u8>> = vec![b"SADD".to_vec(), b"set:big".to_vec()];
        for i in part * 100..(part + 1) * 100 {
            args.push(format!("member-{i}").into_bytes());
        }
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        run(e, &refs);
    }

    let mut small: Vec<(String, &[u8])> = vec![
        ("0".into(), b"zero"),
        ("-0".into(), b"minus-zero"),
        ("1.5".into(), b"\xff"),
        ("-2.25".into(), b""),
        ("3.141592653589793".into(), b"pi"),
        ("0.1".into(), b"tenth"),
        ("1e-300".into(), b"tiny"),
    ];
    if c.scores.1.is_infinite() {
        small.push(("inf".into(), b"inf"));
        small.push(("-inf".into(), b"-inf"));
    } else {
        small.push((format!("{}", c.scores.1), b"max"));
        small.push((format!("{}", c.scores.0), b"min"));
    }
    let mut args: Vec<&[u8]> = vec![b"ZADD", b"z:small"];
    for (s, m) in &small {
        args.push(s.as_bytes());
        args.push(m);
    }
    run(e, &args);
    for part in 0..3 {
        let mut args: Vec<Vec<u8>> = vec![b"ZADD".to_vec(), b"z:big".to_vec()];
        for i in part * 100..(part + 1) * 100 {
            args.push(format!("{}", (i as f64) * 0.37 - 50.0).into_bytes());
            args.push(format!("zm-{i}").into_bytes());
        }
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        run(e, &refs);
    }
    run(e, &[b"PEXPIRE", b"z:big", b"7200001"]);

    // Past the expired key's expiry in every resolution (a whole second).
    clock.advance_ms(1100);
    assert_eq!(e.execute(&[b"GET".as_slice(), b"s:expired"]), Reply::Nil);
}

/// Live keys and elements of the dataset after `fill`.
const LIVE_KEYS: u64 = 15;

/// Every (source, destination) pair of formats, each with a clock of its
/// own at [`T0_MS`].
fn pairs() -> impl Iterator<Item = (Format, Format, Arc<ManualClock>)> {
    Format::ALL.iter().flat_map(|&a| {
        Format::ALL
            .iter()
            .map(move |&b| (a, b, Arc::new(ManualClock::at_ms(T0_MS))))
    })
}

fn dump(e: &Engine<AnyCodec>) -> String {
    let mut out = Vec::new();
    e.store().dump(&mut out).expect("dump");
    String::from_utf8(out).expect("text")
}

/// The dump of a freshly opened, empty store of `format` (the records a
/// format writes on every open, if any).
fn empty_dump(format: Format, clock: &Arc<ManualClock>) -> String {
    let dir = tempfile::tempdir().unwrap();
    dump(&open(format, dir.path(), clock))
}

#[test]
fn every_pair_round_trips_a_mixed_dataset() {
    for (a, b, clock) in pairs() {
        let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let src = open(a, dirs[0].path(), &clock);
        fill(&src, &clock);
        let mid = open(b, dirs[1].path(), &clock);
        let there = migrate::migrate(&src, &mid, &options(None), &mut Quiet).unwrap();
        assert_eq!(there.outcome, Outcome::Completed, "{a} -> {b}");
        assert_eq!(there.migrated.keys, LIVE_KEYS, "{a} -> {b}");
        assert!(there.commits > 10, "{a} -> {b}: {} commits", there.commits);
        let check = migrate::verify(&src, &mid, &VerifyOptions::default()).unwrap();
        assert!(check.is_equal(), "{a} -> {b}: {:?}", check.listed);
        assert_eq!(check.matching, LIVE_KEYS);

        let back = open(a, dirs[2].path(), &clock);
        migrate::migrate(&mid, &back, &options(None), &mut Quiet).unwrap();
        // Expiries compared as the middle format keeps them: a round trip
        // changes nothing it can represent.
        let rule = mid.capabilities();
        let before = migrate::store_digest(&src, rule).unwrap();
        let after = migrate::store_digest(&back, rule).unwrap();
        assert_eq!(before, after, "{a} -> {b} -> {a}");
        assert_eq!(before.keys, LIVE_KEYS);
        assert_eq!(before.elements, 7 + 4 + 500 + 4 + 298 + 4 + 300 + 9 + 300);

        // Spot checks of the logical content, through the commands.
        let lrange =
            |e: &Engine<AnyCodec>| e.execute(&[b"LRANGE".as_slice(), b"l:big", b"0", b"-1"]);
        assert_eq!(lrange(&src), lrange(&mid), "{a} -> {b}: list order");
        let zrange = |e: &Engine<AnyCodec>| {
            e.execute(&[b"ZRANGE".as_slice(), b"z:small", b"0", b"-1", b"WITHSCORES"])
        };
        assert_eq!(zrange(&src), zrange(&mid), "{a} -> {b}: scores");
        let pttl = |e: &Engine<AnyCodec>| e.execute(&[b"PTTL".as_slice(), b"s:ttl-ms"]);
        // The source's expiry (T0 + 1500 ms, as the source keeps it), as the
        // destination keeps it: itself, the next whole second (T0 + 2000),
        // or the second lived through (T0 + 1999).
        let now = clock.now_ms() as i64;
        let Reply::Integer(src_ttl) = pttl(&src) else {
            panic!("{a}: PTTL");
        };
        let kept = migrated_expiry(mid.capabilities(), (now + src_ttl) as u64) as i64;
        assert_eq!(pttl(&mid), Reply::Integer(kept - now), "{a} -> {b}");
        assert_eq!(
            mid.execute(&[b"EXISTS".as_slice(), b"s:expired"]),
            Reply::Integer(0)
        );
    }
}

/// Stops a migration at a given commit, before or after it is applied.
struct StopAt {
    commit: u64,
    before: bool,
}

impl StopAt {
    /// Stops at `commit`, `before` it is applied or after.
    fn flow(&self, commit: u64, before: bool) -> Flow {
        if self.before == before && commit == self.commit {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

impl Observer for StopAt {
    fn before_commit(&mut self, commit: u64) -> Flow {
        self.flow(commit, true)
    }

    fn committed(&mut self, commit: u64) -> Flow {
        self.flow(commit, false)
    }
}

#[test]
fn an_interrupted_then_resumed_migration_equals_an_uninterrupted_one() {
    for (a, b, clock) in pairs() {
        let (_src_dir, src) = filled(a, &clock);

        let (whole_dir, whole) = fresh(b, &clock);
        let opts = options(Some(whole_dir.path()));
        let reference = migrate::migrate(&src, &whole, &opts, &mut Quiet).unwrap();
        assert!(!whole_dir.path().join(CHECKPOINT_FILE).exists());
        let expected = dump(&whole);
        let total = reference.commits;
        assert!(total > 10, "{a} -> {b}: {total} commits");

        let step = (total / 4).max(1);
        let points = (1..=total).step_by(step as usize).chain([total]);
        for commit in points {
            for before in [false, true] {
                let dir = tempfile::tempdir().unwrap();
                let opts = options(Some(dir.path()));
                {
                    let dst = open(b, dir.path(), &clock);
                    let mut stop = StopAt { commit, before };
                    let first = migrate::migrate(&src, &dst, &opts, &mut stop).unwrap();
                    assert_eq!(first.outcome, Outcome::Stopped);
                    assert_eq!(first.commits, if before { commit - 1 } else { commit });
                }
                assert!(dir.path().join(CHECKPOINT_FILE).exists());
                let refused = {
                    let dst = open(b, dir.path(), &clock);
                    migrate::migrate(&src, &dst, &opts, &mut Quiet).unwrap_err()
                };
                assert!(
                    matches!(refused, MigrateError::CheckpointPresent { .. }),
                    "{refused}"
                );
                // A new process: a freshly opened engine, its version
                // counter back at zero.
                let dst = open(b, dir.path(), &clock);
                let resume = MigrateOptions {
                    resume: true,
                    ..opts.clone()
                };
                let second = migrate::migrate(&src, &dst, &resume, &mut Quiet).unwrap();
                assert_eq!(second.outcome, Outcome::Completed);
                assert!(second.resumed_after.is_some());
                assert_eq!(
                    second.migrated, reference.migrated,
                    "{a} -> {b} at {commit}"
                );
                assert!(!dir.path().join(CHECKPOINT_FILE).exists());
                assert!(
                    dump(&dst) == expected,
                    "{a} -> {b}: stopped at commit {commit} (before: {before}), resumed: \
                     the bytes differ from an uninterrupted run"
                );
                let check = migrate::verify(&src, &dst, &VerifyOptions::default()).unwrap();
                assert!(check.is_equal(), "{:?}", check.listed);
            }
        }
    }
}

#[test]
fn a_migration_interrupted_twice_still_completes_alike() {
    let (a, b) = (Format::ALL[0], Format::ALL[Format::ALL.len() - 1]);
    let clock = Arc::new(ManualClock::at_ms(T0_MS));
    let (_src_dir, src) = filled(a, &clock);
    let (_whole_dir, whole) = fresh(b, &clock);
    migrate::migrate(&src, &whole, &options(None), &mut Quiet).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let opts = MigrateOptions {
        resume: true,
        // Memtables flushed after every commit: the bytes are the same.
        memtable_budget: Some(0),
        ..options(Some(dir.path()))
    };
    for (commit, before) in [(2, false), (1, true), (1, false)] {
        let dst = open(b, dir.path(), &clock);
        let mut stop = StopAt { commit, before };
        let r = migrate::migrate(&src, &dst, &opts, &mut stop).unwrap();
        assert_eq!(r.outcome, Outcome::Stopped);
    }
    let dst = open(b, dir.path(), &clock);
    let r = migrate::migrate(&src, &dst, &opts, &mut Quiet).unwrap();
    assert_eq!(r.outcome, Outcome::Completed);
    assert_eq!(dump(&dst), dump(&whole));
}

/// Runs a full compaction (the formats' garbage collection) of the
/// destination after some commits: in the middle of big keys.
struct CompactAfter<'a> {
    dst: &'a Engine<AnyCodec>,
    every: u64,
}

impl Observer for CompactAfter<'_> {
    fn committed(&mut self, commit: u64) -> Flow {
        if commit.is_multiple_of(self.every) {
            self.dst.compact().expect("compaction");
        }
        Flow::Continue
    }
}

#[test]
fn compaction_in_the_middle_of_a_big_key_loses_nothing() {
    for (a, b, clock) in pairs() {
        let (_src_dir, src) = filled(a, &clock);
        let (_dir, dst) = fresh(b, &clock);
        let mut compact = CompactAfter {
            dst: &dst,
            every: 3,
        };
        migrate::migrate(&src, &dst, &options(None), &mut compact).unwrap();
        dst.compact().unwrap();
        let check = migrate::verify(&src, &dst, &VerifyOptions::default()).unwrap();
        assert!(check.is_equal(), "{a} -> {b}: {:?}", check.listed);
        assert_eq!(check.matching, LIVE_KEYS);
    }
}

/// Keys a source of `a` holds that `b` cannot, built from their declared
/// capabilities; `(key, reason kind)`.
fn unrepresentable_keys(src: &Engine<AnyCodec>, b: Format) -> Vec<Vec<u8>> {
    let dst_caps = b
        .codec(&FormatOptions::default())
        .unwrap()
        .capabilities()
        .clone();
    let src_caps = src.capabilities().clone();
    let mut keys = Vec::new();
    if dst_caps.max_expire_ms < src_caps.max_expire_ms {
        // A whole second past the destination's latest expiry.
        let at = (dst_caps.max_expire_ms + 1000).to_string();
        run(src, &[b"SET", b"bad:expiry", b"v", b"PXAT", at.as_bytes()]);
        keys.push(b"bad:expiry".to_vec());
    }
    if let Some(limit) = dst_caps.collection_key_limit {
        if src_caps.collection_key_limit.is_none_or(|l| l > limit) {
            let key = vec![b'k'; limit + 1];
            run(src, &[b"HSET", &key, b"f", b"v"]);
            keys.push(key);
        }
    }
    if let Some((_, max)) = dst_caps.score_limit {
        let fits = src_caps.score_limit.is_none_or(|(_, m)| m > max);
        if fits && max.is_finite() {
            let score = format!("{}", max * 2.0);
            run(src, &[b"ZADD", b"bad:score", score.as_bytes(), b"m"]);
            keys.push(b"bad:score".to_vec());
        }
    }
    keys
}

#[test]
fn unrepresentable_keys_stop_the_migration_or_are_skipped_and_listed() {
    let mut exercised = 0;
    for (a, b, clock) in pairs() {
        let (_src_dir, src) = fresh(a, &clock);
        run(&src, &[b"SET", b"a:first", b"1"]);
        run(&src, &[b"SET", b"zz:last", b"2"]);
        let bad = unrepresentable_keys(&src, b);
        if bad.is_empty() {
            continue;
        }
        exercised += 1;

        // Default: refused before anything is written, every key named.
        let (dir, dst) = fresh(b, &clock);
        let err = migrate::migrate(&src, &dst, &options(Some(dir.path())), &mut Quiet).unwrap_err();
        let MigrateError::Unrepresentable { keys, more, .. } = &err else {
            panic!("{a} -> {b}: {err}");
        };
        assert_eq!(*more, 0);
        let named: Vec<_> = keys.iter().map(|s| s.key.clone()).collect();
        assert_eq!(named.len(), bad.len(), "{a} -> {b}: {err}");
        for key in &bad {
            assert!(named.contains(key), "{a} -> {b}: {err}");
        }
        assert!(err.to_string().contains("cannot be stored"), "{err}");
        assert_eq!(
            dump(&dst),
            empty_dump(b, &clock),
            "{a} -> {b}: nothing written"
        );
        assert!(!dir.path().join(CHECKPOINT_FILE).exists());

        // Without the planning pass: stops at the first one, after
        // writing the keys before it; none of its records is written.
        let no_plan = MigrateOptions {
            plan: false,
            ..options(Some(dir.path()))
        };
        let err = migrate::migrate(&src, &dst, &no_plan, &mut Quiet).unwrap_err();
        assert!(
            matches!(&err, MigrateError::Unrepresentable { keys, .. } if keys.len() == 1),
            "{err}"
        );
        assert_eq!(
            dst.execute(&[b"GET".as_slice(), b"a:first"]),
            Reply::Bulk(b"1".to_vec())
        );
        for key in &bad {
            assert_eq!(dst.execute(&[b"EXISTS".as_slice(), key]), Reply::Integer(0));
        }

        // Resumed with skipping: completes, lists every skipped key.
        let skip = MigrateOptions {
            resume: true,
            on_unrepresentable: OnUnrepresentable::Skip,
            ..no_plan
        };
        let report = migrate::migrate(&src, &dst, &skip, &mut Quiet).unwrap();
        assert_eq!(report.outcome, Outcome::Completed);
        let skipped: Vec<_> = report.skipped.iter().map(|s| s.key.clone()).collect();
        assert_eq!(skipped.len(), bad.len(), "{a} -> {b}: {:?}", report.skipped);
        for key in &bad {
            assert!(skipped.contains(key));
        }
        assert_eq!(report.migrated.keys, 2);
        assert_eq!(
            dst.execute(&[b"GET".as_slice(), b"zz:last"]),
            Reply::Bulk(b"2".to_vec())
        );
        // Verification counts them apart: not a difference.
        let check = migrate::verify(&src, &dst, &VerifyOptions::default()).unwrap();
        assert!(check.is_equal(), "{:?}", check.listed);
        assert_eq!(check.unrepresentable, bad.len() as u64);
        for s in &report.skipped {
            assert!(!s.to_string().is_empty());
            if s.key == b"bad:expiry" {
                assert!(matches!(s.reason, Unrepresentable::ExpireTooLate { .. }));
            }
        }
    }
    assert!(exercised > 0, "no pair of formats has a limit to test");
}

#[test]
fn a_destination_holding_data_is_refused_unless_merging() {
    for (a, b, clock) in pairs() {
        let (_src_dir, src) = fresh(a, &clock);
        run(&src, &[b"HSET", b"shared", b"f", b"from-source"]);
        run(&src, &[b"RPUSH", b"only-source", b"x"]);
        let (dir, dst) = fresh(b, &clock);
        run(&dst, &[b"SADD", b"shared", b"old"]);
        run(&dst, &[b"SET", b"only-destination", b"kept"]);

        let err = migrate::migrate(&src, &dst, &options(Some(dir.path())), &mut Quiet).unwrap_err();
        assert!(
            matches!(err, MigrateError::DestinationNotEmpty { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("already holds data"));
        assert_eq!(
            dst.execute(&[b"TYPE".as_slice(), b"shared"]).to_string(),
            "set"
        );

        let merge = MigrateOptions {
            merge: true,
            ..options(Some(dir.path()))
        };
        migrate::migrate(&src, &dst, &merge, &mut Quiet).unwrap();
        assert_eq!(
            dst.execute(&[b"HGET".as_slice(), b"shared", b"f"]),
            Reply::Bulk(b"from-source".to_vec())
        );
        assert_eq!(
            dst.execute(&[b"GET".as_slice(), b"only-destination"]),
            Reply::Bulk(b"kept".to_vec())
        );
        let merged = VerifyOptions {
            merge: true,
            ..VerifyOptions::default()
        };
        let check = migrate::verify(&src, &dst, &merged).unwrap();
        assert!(check.is_equal(), "{:?}", check.listed);
        assert_eq!((check.matching, check.destination_only), (2, 1));
        let strict = migrate::verify(&src, &dst, &VerifyOptions::default()).unwrap();
        assert!(!strict.is_equal());
        assert_eq!(strict.listed[0].kind, DifferenceKind::Extra);
    }
}

#[test]
fn expired_leftovers_in_the_destination_do_not_leak_into_migrated_keys() {
    for (a, b, clock) in pairs() {
        let (_src_dir, src) = fresh(a, &clock);
        let (_dir, dst) = fresh(b, &clock);
        // The destination holds only expired keys: not "data", but records.
        run(&dst, &[b"HSET", b"h", b"old", b"1", b"gone", b"2"]);
        run(&dst, &[b"RPUSH", b"l", b"old"]);
        run(&dst, &[b"PEXPIRE", b"h", b"10"]);
        run(&dst, &[b"PEXPIRE", b"l", b"10"]);
        clock.advance_ms(2000);
        run(&src, &[b"HSET", b"h", b"new", b"3"]);
        run(&src, &[b"SADD", b"l", b"m"]);
        migrate::migrate(&src, &dst, &options(None), &mut Quiet).unwrap();
        let check = migrate::verify(&src, &dst, &VerifyOptions::default()).unwrap();
        assert!(check.is_equal(), "{a} -> {b}: {:?}", check.listed);
        assert_eq!(
            dst.execute(&[b"HGETALL".as_slice(), b"h"]).to_string(),
            "1) \"new\"\n2) \"3\"",
            "{a} -> {b}"
        );
        assert_eq!(dst.execute(&[b"TYPE".as_slice(), b"l"]).to_string(), "set");
    }
}

#[test]
fn verify_reports_every_kind_of_difference() {
    for (a, b, clock) in pairs() {
        let (_src_dir, src) = filled(a, &clock);
        let (_dir, dst) = fresh(b, &clock);
        migrate::migrate(&src, &dst, &options(None), &mut Quiet).unwrap();
        run(&dst, &[b"HSET", b"h:big", b"field-3", b"changed"]);
        run(&dst, &[b"DEL", b"set:small"]);
        run(&dst, &[b"PERSIST", b"l:big"]);
        run(&dst, &[b"SET", b"new", b"1"]);
        let report = migrate::verify(&src, &dst, &VerifyOptions::default()).unwrap();
        assert_eq!(report.differences, 4, "{a} -> {b}: {:?}", report.listed);
        assert_eq!(report.matching, LIVE_KEYS - 3);
        let text: Vec<String> = report.listed.iter().map(ToString::to_string).collect();
        let find = |needle: &str| text.iter().any(|t| t.contains(needle));
        assert!(find("\"h:big\": content differs"), "{text:?}");
        assert!(
            find("\"set:small\": missing from the destination"),
            "{text:?}"
        );
        assert!(find("\"l:big\": expiry"), "{text:?}");
        assert!(find("\"new\": only in the destination"), "{text:?}");
    }
}

#[test]
fn a_checkpoint_of_another_migration_is_not_resumed() {
    let formats = Format::ALL;
    let clock = Arc::new(ManualClock::at_ms(T0_MS));
    let (src_dir, src) = filled(formats[0], &clock);
    let (_other_dir, other) = fresh(formats[0], &clock);
    run(&other, &[b"SET", b"k", b"v"]);

    let dir = tempfile::tempdir().unwrap();
    let opts = MigrateOptions {
        resume: true,
        ..options(Some(dir.path()))
    };
    {
        let dst = open(formats[0], dir.path(), &clock);
        let mut stop = StopAt {
            commit: 2,
            before: false,
        };
        migrate::migrate(&src, &dst, &opts, &mut stop).unwrap();
    }
    let dst = open(formats[0], dir.path(), &clock);
    let err = migrate::migrate(&other, &dst, &opts, &mut Quiet).unwrap_err();
    assert!(
        err.to_string().contains("records a migration with source"),
        "{err}"
    );
    // The store refuses a directory of another format before any of this.
    drop(dst);
    if let Some(&another) = formats.get(1) {
        let codec = another.codec(&FormatOptions::default()).unwrap();
        let options = EngineOptions {
            clock: clock.clone(),
            mode: OpenMode::MustExist,
            ..EngineOptions::default()
        };
        let err = Engine::open(codec, src_dir.path(), options).err().unwrap();
        assert!(err.to_string().contains("holds no"), "{err}");
    }
    assert!(matches!(
        migrate::migrate(&src, &src, &opts, &mut Quiet),
        Err(MigrateError::SameStore)
    ));
}
