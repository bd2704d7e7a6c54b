//! How stores are opened: read-only beside a running writer, refused when
//! they belong to another release, written for a real system's release
//! (`--compat`), and checked for faults (`check`).

use std::path::{Path, PathBuf};

use redcodec_codec::{Codec, DataType, Meta, SubId, SubKind, SubValue};
use redcodec_conformance::skip;
use redcodec_engine::store::sst::read_sst;
use redcodec_engine::store::Batch;
use redcodec_engine::{Engine, EngineOptions, OpenMode};
use redcodec_formats::{AnyCodec, Format, FormatOptions};

mod common;
use common::*;

fn codec(format: Format) -> AnyCodec {
    format.codec(&FormatOptions::default()).expect("codec")
}

/// `check` of the blackwidow store at `dir`, at the fixtures' read-time
/// clock; returns (success, stdout, stderr).
fn check_blackwidow(dir: &Path) -> (bool, String, String) {
    run(
        &Args::new("check")
            .store("blackwidow", dir)
            .fixed_clock(CLOCK),
        "",
    )
}

/// `exec --read-only` on the store at `dir` with `args` (options, then
/// `--` and a command); returns (success, stdout, stderr).
fn read_only(
    format: &str,
    dir: &(impl AsRef<Path> + ?Sized),
    args: &[&str],
) -> (bool, String, String) {
    run(
        &Args::new("exec")
            .with(&["--read-only"])
            .store(format, dir)
            .with(args),
        "",
    )
}

/// Creates the RocksDB database at `db` with `families`, as another
/// system would have.
fn create_db(db: &Path, families: &[&str]) -> rocksdb::DB {
    let mut opts = rocksdb::Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    rocksdb::DB::open_cf(&opts, db, families).unwrap()
}

/// Rewrites the metadata of the hash `key` through `change` (a planted
/// fault); returns the metadata written.
fn rewrite_hash_meta(
    engine: &Engine<AnyCodec>,
    key: &[u8],
    change: impl FnOnce(&mut Meta),
) -> Meta {
    let c = engine.codec();
    let record = c.meta_record(key, DataType::Hash).unwrap();
    let raw = engine
        .store()
        .get(record.place, &record.key)
        .unwrap()
        .unwrap();
    let mut meta = c.decode_meta(DataType::Hash, &raw).unwrap();
    change(&mut meta);
    let mut batch = Batch::default();
    batch.put(record.place, record.key, c.encode_meta(&meta).unwrap());
    engine.store().write(batch).unwrap();
    meta
}

/// The column families of a Kvrocks 2.5 store.
const KVROCKS_2_5_FAMILIES: [&str; 6] = [
    "default",
    "metadata",
    "zset_score",
    "pubsub",
    "propagate",
    "stream",
];

#[test]
fn a_store_is_read_while_its_writer_holds_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let engine =
        Engine::open(codec(Format::Kvrocks), dir.path(), EngineOptions::default()).unwrap();
    engine.execute(&["SET", "greeting", "hello"]);
    engine.execute(&["RPUSH", "queue", "a", "b"]);
    // The writer is still open: its LOCK is held, its writes sit in the WAL.
    let d = path(dir.path());
    let (ok, stdout, stderr) = run(
        &Args::new("exec").with(&["--read-only"]).store("kvrocks", d),
        "GET greeting\nLRANGE queue 0 -1\n",
    );
    assert!(ok, "{stderr}");
    assert_eq!(stdout, "\"hello\"\n1) \"a\"\n2) \"b\"\n");
    let (ok, _, stderr) = run(&Args::new("dump").store("kvrocks", d), "");
    assert!(ok, "{stderr}");
    // And the writer goes on.
    assert_eq!(engine.execute(&["INCR", "n"]).to_string(), "(integer) 1");
}

#[test]
fn a_read_only_open_of_a_missing_store_fails_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("none");
    let (ok, _, stderr) = run(&Args::new("dump").store("blackwidow", &d), "");
    assert!(!ok);
    assert_contains(&stderr, "holds no blackwidow store");
    assert!(!d.exists());
}

#[test]
fn a_kvrocks_1_store_is_refused_naming_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let families = [
        "default",
        "metadata",
        "zset_score",
        "pubsub",
        "slot_metadata",
        "slot",
    ];
    drop(create_db(&dir.path().join("db"), &families));
    let (ok, _, stderr) = run(&Args::new("dump").store("kvrocks", dir.path()), "");
    assert!(!ok);
    assert_contains(&stderr, "Kvrocks 1.x");
}

/// Every SST file of `db` with its level, read through a read-only open
/// with the comparators `format`'s layout gives the families.
fn tables(db: &Path, format: Format) -> Vec<(PathBuf, i32)> {
    let layout = codec(format).layout().clone();
    let families = rocksdb::DB::list_cf(&rocksdb::Options::default(), db).unwrap();
    let descriptors = families.iter().map(|name| {
        let mut opts = rocksdb::Options::default();
        let instance = db.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let spec = layout
            .instances
            .iter()
            .filter(|i| i.dir == instance)
            .flat_map(|i| &i.column_families)
            .find(|cf| cf.name == name.as_str());
        if let Some(cmp) = spec.and_then(|cf| cf.comparator) {
            opts.set_comparator(cmp.name, Box::new(cmp.compare));
        }
        rocksdb::ColumnFamilyDescriptor::new(name, opts)
    });
    let opened = rocksdb::DB::open_cf_descriptors_read_only(
        &rocksdb::Options::default(),
        db,
        descriptors,
        false,
    )
    .unwrap();
    opened
        .live_files()
        .unwrap()
        .into_iter()
        .map(|f| (db.join(f.name.trim_start_matches('/')), f.level))
        .collect()
}

/// Checks what a `--compat` store holds: its families, and per table the
/// format version, checksum and the compression of its level: none on L0
/// and L1, snappy from L2 — counted from the base level where levels are
/// dynamic (`dynamic`: Kvrocks 2.6+), where a store this small keeps its
/// tables in L0 and the last level, all uncompressed.
fn assert_compat_store(db: &Path, format: Format, families: &[&str], dynamic: bool) {
    let mut found = rocksdb::DB::list_cf(&rocksdb::Options::default(), db).unwrap();
    found.sort();
    let mut expected: Vec<String> = families
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    expected.sort();
    assert_eq!(found, expected, "{}", db.display());
    let tables = tables(db, format);
    assert!(!tables.is_empty(), "{}: no table written", db.display());
    let base = tables
        .iter()
        .map(|t| t.1)
        .filter(|&l| l > 0)
        .min()
        .unwrap_or(1);
    for (file, level) in tables {
        let facts = read_sst(&file).unwrap();
        assert_eq!(facts.format_version, 5, "{}", file.display());
        assert_eq!(facts.checksum_name(), "kCRC32c", "{}", file.display());
        let index = match (level, dynamic) {
            (0, _) => 0,
            (l, true) => l - base + 1,
            (l, false) => l,
        };
        let compression = if index < 2 { "NoCompression" } else { "Snappy" };
        assert_eq!(
            facts.compression,
            compression,
            "{} at L{level}",
            file.display()
        );
    }
}

/// The fixtures' read-time clock (their PROVENANCE.md).
const CLOCK: &str = "1700000100000";

const SCRIPT: &str =
    "SET foo bar\nHSET h a 1 b 2 c 3\nZADD z 1.5 m 2 n\nRPUSH l a b c\nSADD s x y\n";

#[test]
fn compat_stores_are_what_each_release_reads() {
    // Kvrocks 2.10 adds the search family.
    let kvrocks_2_10_families = [&KVROCKS_2_5_FAMILIES[..], &["search"]].concat();
    let cases: [(&str, &str, &[&str], bool); 2] = [
        ("kvrocks-2.10", "kvrocks", &kvrocks_2_10_families, true),
        ("kvrocks-2.5", "kvrocks", &KVROCKS_2_5_FAMILIES, false),
    ];
    for (compat, format, families, dynamic) in cases {
        let dir = tempfile::tempdir().unwrap();
        let d = path(dir.path());
        let (ok, _, stderr) = run(
            &Args::new("exec")
                .store(format, d)
                .with(&["--compat", compat]),
            SCRIPT,
        );
        assert!(ok, "{compat}: {stderr}");
        assert_compat_store(&dir.path().join("db"), Format::Kvrocks, families, dynamic);
        let (ok, stdout, _) = read_only(format, d, &["--", "HGETALL", "h"]);
        assert!(ok);
        assert_eq!(stdout.lines().count(), 6, "{stdout}");
    }
    // Pika 3.5: blackwidow's five instances, each with its own families.
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, stderr) = run(
        &Args::new("exec")
            .store("blackwidow", dir.path())
            .with(&["--compat", "pika-3.5"]),
        SCRIPT,
    );
    assert!(ok, "{stderr}");
    for (instance, families) in [
        ("strings", &["default"][..]),
        ("hashes", &["default", "data_cf"]),
        ("sets", &["default", "member_cf"]),
        ("lists", &["default", "data_cf"]),
        ("zsets", &["default", "data_cf", "score_cf"]),
    ] {
        assert_compat_store(
            &dir.path().join(instance),
            Format::Blackwidow,
            families,
            true,
        );
    }
    // A release of another system's format is refused before anything is written.
    let other = tempfile::tempdir().unwrap();
    let target = other.path().join("x");
    for (format, compat, refusal) in [
        ("nemo", "kvrocks-2.10", "writes the kvrocks format"),
        ("ardb", "ardb-0.10", "RocksDB 5.x"),
    ] {
        let (ok, _, stderr) = run(
            &Args::new("exec")
                .store(format, &target)
                .with(&["--compat", compat, "--", "PING"]),
            "",
        );
        assert!(!ok, "{format} --compat {compat}");
        assert_contains(&stderr, refusal);
    }
}

#[test]
fn migrate_writes_a_compat_destination() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("bw");
    let dst = dir.path().join("kv");
    let (ok, _, stderr) = run(&Args::new("exec").store("blackwidow", &src), SCRIPT);
    assert!(ok, "{stderr}");
    let (ok, stdout, stderr) = run(
        &Args::new("migrate")
            .src("blackwidow", &src)
            .dst("kvrocks", &dst)
            .with(&["--compat", "kvrocks-2.5", "--verify"]),
        "",
    );
    assert!(ok, "{stdout}{stderr}");
    assert_compat_store(
        &dst.join("db"),
        Format::Kvrocks,
        &KVROCKS_2_5_FAMILIES,
        false,
    );
}

/// A copy of the real blackwidow fixture with one fault of each kind.
fn corrupted_copy(work: &Path) -> PathBuf {
    let dir = work.join("store");
    copy_dir(&fixture("blackwidow", "snappy-default"), &dir);
    // At the fixture's read-time clock, as `check` runs below: the
    // compactions this read-write open may start collect nothing live.
    let engine = Engine::open(
        codec(Format::Blackwidow),
        &dir,
        EngineOptions {
            mode: OpenMode::MustExist,
            clock: std::sync::Arc::new(redcodec_engine::ManualClock::at_ms(1_700_000_100_000)),
            ..EngineOptions::default()
        },
    )
    .unwrap();
    // A wrong count: the hash says one more field than it holds.
    let meta = rewrite_hash_meta(&engine, b"hash:at", |meta| meta.size += 1);
    let c = engine.codec();
    let mut batch = Batch::default();
    // An orphan: a field of the hash at a version newer than its
    // metadata's, which no read sees and blackwidow's compaction keeps.
    let mut newer = meta.clone();
    newer.version += 1;
    let id = SubId::Name(b"f".to_vec());
    let value = SubValue::Bytes(b"v".to_vec());
    batch.put(
        c.sub_place(SubKind::HashField, b"hash:at"),
        c.sub_key(SubKind::HashField.of(b"hash:at", &newer), id.view()),
        c.encode_sub_value(SubKind::HashField.of(b"hash:at", &newer), value.view()),
    );
    // A key in two types: the string "str:app" gains a one-field hash.
    let mut twin = c.new_meta(DataType::Hash, 1_600_000_000);
    twin.size = 1;
    let record = c.meta_record(b"str:app", DataType::Hash).unwrap();
    batch.put(record.place, record.key, c.encode_meta(&twin).unwrap());
    batch.put(
        c.sub_place(SubKind::HashField, b"str:app"),
        c.sub_key(SubKind::HashField.of(b"str:app", &twin), id.view()),
        c.encode_sub_value(SubKind::HashField.of(b"str:app", &twin), value.view()),
    );
    // An undecodable record: a string value shorter than its timestamp.
    let record = c.meta_record(b"str:at-far", DataType::String).unwrap();
    batch.put(record.place, record.key, vec![0x01]);
    engine.store().write(batch).unwrap();
    dir
}

#[test]
fn check_passes_on_real_stores_and_finds_every_planted_fault() {
    for name in ["snappy-default", "zlib"] {
        let (ok, stdout, stderr) = check_blackwidow(&fixture("blackwidow", name));
        assert!(ok, "{name}: {stdout}{stderr}");
        assert_contains(&stdout, "no findings");
        assert!(!stdout.contains(" 0 element records"), "{stdout}");
        // blackwidow wrote them with RocksDB 7.8.3's defaults: format 5, XXH3.
        let compression = if name == "zlib" { "Zlib" } else { "Snappy" };
        assert_contains(&stdout, &format!(
                "tables\tzsets\t6 × format_version 5, kXXH3, {compression} (readable by RocksDB 6.27 and later)"
            ));
    }
    let (ok, stdout, _) = check_blackwidow(&fixture("blackwidow", "crosstype"));
    assert!(!ok);
    assert_contains(
        &stdout,
        "several-types\t\"multi\"\tstring, hash, list, zset, set",
    );
    assert_contains(&stdout, "several-types\t\"sh\"\tstring, hash, set");

    let work = tempfile::tempdir().unwrap();
    let (ok, stdout, _) = check_blackwidow(&corrupted_copy(work.path()));
    assert!(!ok, "{stdout}");
    for kind in [
        "count\t\"hash:at\"",
        "orphan\thashes/data_cf",
        "several-types\t\"str:app\"",
        "undecodable\tstrings/default",
    ] {
        assert!(stdout.contains(kind), "no '{kind}' in:\n{stdout}");
    }
    assert_contains(&stdout, "4 findings");
}

#[test]
fn keys_of_unmodelled_types_are_listed_never_dropped() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("kv");
    {
        let engine = Engine::open(codec(Format::Kvrocks), &dir, EngineOptions::default()).unwrap();
        engine.execute(&["SET", "plain", "v"]);
        engine.execute(&["HSET", "bits", "f", "v"]);
        // Kvrocks' type code sits in the low nibble of the flags byte:
        // turn the hash into a bitmap (6), a type redcodec does not model.
        let c = engine.codec();
        let record = c.meta_record(b"bits", DataType::Hash).unwrap();
        let mut raw = engine
            .store()
            .get(record.place, &record.key)
            .unwrap()
            .unwrap();
        raw[0] = (raw[0] & 0xf0) | 6;
        let mut batch = Batch::default();
        batch.put(record.place, record.key, raw);
        engine.store().write(batch).unwrap();
    }
    let d = path(&dir);
    let (ok, stdout, _) = run(&Args::new("check").store("kvrocks", d), "");
    assert!(!ok);
    assert_contains(&stdout, "unmodelled\t\"bits\"\tbitmap");
    let (ok, stdout, _) = run(
        &Args::new("exec").with(&["--read-only"]).store("kvrocks", d),
        "KEYS *\nGET bits\n",
    );
    assert!(ok);
    assert_eq!(
        stdout,
        "1) \"bits\"\n2) \"plain\"\n(error) ERR key \"bits\" holds a bitmap, a type redcodec does not model\n"
    );
    let dst = work.path().join("bw");
    let migrate = |extra: &[&str]| {
        let args = Args::new("migrate")
            .src("kvrocks", d)
            .dst("blackwidow", &dst)
            .with(extra);
        run(&args, "")
    };
    let (ok, _, stderr) = migrate(&[]);
    assert!(!ok);
    assert_contains(&stderr, "\"bits\": it holds a bitmap");
    let (ok, stdout, stderr) = migrate(&["--skip-unrepresentable", "--verify"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stdout.contains("skipped 1 keys") && stdout.contains("\"bits\""),
        "{stdout}"
    );
}

#[test]
fn a_pika_db_path_names_the_stores_below_it() {
    // Pika 3.1+ keeps a blackwidow store per database below its db-path.
    let work = tempfile::tempdir().unwrap();
    let db_path = work.path().join("db");
    copy_dir(&fixture("blackwidow", "zlib"), &db_path.join("db0"));
    let (ok, _, stderr) = run(&Args::new("dump").store("blackwidow", &db_path), "");
    assert!(!ok);
    let db0 = db_path.join("db0");
    assert_contains(
        &stderr,
        &format!("it holds {} below it: pass one as --dir", db0.display()),
    );
    let (ok, _, stderr) = run(&Args::new("dump").store("blackwidow", &db0), "");
    assert!(ok, "{stderr}");
}

/// A Kvrocks store at `work/kv` with a string in namespace `a`, `b_script`
/// run in namespace `b`, and a string in the namespace named `__namespace`.
fn kvrocks_with_namespaces(work: &Path, b_script: &str) -> PathBuf {
    let dir = work.join("kv");
    for (ns, script) in [
        ("a", "SET k1 v\n"),
        ("b", b_script),
        ("__namespace", "SET k v\n"),
    ] {
        let (ok, _, stderr) = run(
            &Args::new("exec")
                .store("kvrocks", &dir)
                .with(&["--namespace", ns]),
            script,
        );
        assert!(ok, "{stderr}");
    }
    dir
}

#[test]
fn check_covers_every_namespace_of_a_store() {
    let work = tempfile::tempdir().unwrap();
    let dir = kvrocks_with_namespaces(work.path(), "HSET h f v g w\n");
    let d = path(&dir);
    let (ok, stdout, _) = run(&Args::new("check").store("kvrocks", d), "");
    assert!(ok, "{stdout}");
    for ns in [
        "\"a\": 1 live keys",
        "\"b\": 1 live keys",
        "\"__namespace\": 1 live keys",
    ] {
        assert_contains(&stdout, &format!("namespace {ns}"));
    }
    // A fault in one namespace is found without naming it.
    {
        let c = Format::Kvrocks
            .codec(&FormatOptions {
                namespace: Some(b"b".to_vec()),
                ..FormatOptions::default()
            })
            .unwrap();
        let engine = Engine::open(c, &dir, EngineOptions::default()).unwrap();
        rewrite_hash_meta(&engine, b"h", |meta| meta.size = 5);
    }
    let (ok, stdout, _) = run(&Args::new("check").store("kvrocks", d), "");
    assert!(!ok);
    assert_contains(
        &stdout,
        "count\t\"h\"\thash: metadata says 5 elements, 2 found",
    );
    let (ok, stdout, _) = run(
        &Args::new("check")
            .store("kvrocks", d)
            .with(&["--namespace", "a"]),
        "",
    );
    assert!(ok, "{stdout}");
    // The store's tables, then namespace a alone (its one string: no
    // element records, those of b are b's).
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[0].starts_with("tables\tdb\t"), "{stdout}");
    assert_eq!(
        lines[1],
        format!("kvrocks store {d}, namespace \"a\": 1 live keys, 1 metadata records, 0 element records (0 for compaction to collect); no findings")
    );
}

/// Runs `script` on the Kvrocks store at `dir` in cluster mode.
fn exec_in_cluster_mode(dir: &Path, script: &str) {
    let (ok, _, stderr) = run(
        &Args::new("exec").store("kvrocks", dir).with(&["--cluster"]),
        script,
    );
    assert!(ok, "{stderr}");
}

#[test]
fn a_cluster_store_is_not_read_as_a_standalone_one() {
    let work = tempfile::tempdir().unwrap();
    let cluster = work.path().join("cluster");
    let plain = work.path().join("plain");
    exec_in_cluster_mode(&cluster, "SET a 1\nSET b 2\n");
    let (ok, _, _) = run(&Args::new("exec").store("kvrocks", &plain), "SET a 1\n");
    assert!(ok);
    let (ok, _, stderr) = read_only("kvrocks", &cluster, &["--", "GET", "a"]);
    assert!(!ok);
    assert_contains(&stderr, "carries a cluster slot (cluster mode)");
    let (ok, _, stderr) = read_only("kvrocks", &plain, &["--cluster", "--", "GET", "a"]);
    assert!(!ok);
    assert_contains(&stderr, "not written in cluster mode");
    let (ok, stdout, _) = read_only("kvrocks", &cluster, &["--cluster", "--", "GET", "b"]);
    assert!(ok);
    assert_eq!(stdout, "\"2\"\n");
}

#[test]
fn keys_of_an_instance_the_layout_lacks_are_named() {
    // Pika 3.5 keeps streams in a sixth instance beside blackwidow's five.
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("db0");
    copy_dir(&fixture("blackwidow", "snappy-default"), &dir);
    {
        let db = create_db(&dir.join("streams"), &["default", "data_cf"]);
        db.put(b"events", b"stream meta").unwrap();
    }
    let d = path(&dir);
    let (ok, stdout, _) = check_blackwidow(&dir);
    assert!(!ok);
    assert_contains(&stdout, "unmodelled\t\"events\"\tstreams/");
    let dst = work.path().join("kv");
    let args = Args::new("migrate")
        .src("blackwidow", d)
        .dst("kvrocks", &dst);
    let (ok, _, stderr) = run(&args, "");
    assert!(!ok);
    assert_contains(&stderr, "\"events\": it holds a record of streams/");
    let (_, stdout, _) = read_only("kvrocks", &dst, &["--", "DBSIZE"]);
    assert_eq!(
        stdout, "(integer) 0\n",
        "nothing is written before the refusal"
    );
    let (ok, stdout, stderr) = run(&[&args[..], &["--skip-unrepresentable"]].concat(), "");
    assert!(ok, "{stderr}");
    assert_contains(&stdout, "\"events\": it holds a record of streams/");
}

#[test]
fn every_namespace_migrates_into_its_namesake() {
    let work = tempfile::tempdir().unwrap();
    let src = kvrocks_with_namespaces(work.path(), "RPUSH l x y\n");
    let s = path(&src);
    let dst = work.path().join("ardb");
    let d = path(&dst);
    let (ok, stdout, stderr) = run(
        &Args::new("migrate")
            .src("kvrocks", s)
            .dst("ardb", d)
            .with(&["--all-namespaces", "--verify"]),
        "",
    );
    assert!(ok, "{stdout}{stderr}");
    for ns in ["\"a\"", "\"b\"", "\"__namespace\""] {
        assert_contains(&stdout, &format!("namespace {ns}:"));
    }
    assert_eq!(stdout.matches("all equal").count(), 3, "{stdout}");
    let (_, stdout, _) = read_only(
        "ardb",
        d,
        &["--namespace", "b", "--", "LRANGE", "l", "0", "-1"],
    );
    assert_eq!(stdout, "1) \"x\"\n2) \"y\"\n");
    let (ok, stdout, _) = run(
        &Args::new("verify")
            .src("kvrocks", s)
            .dst("ardb", d)
            .with(&["--all-namespaces"]),
        "",
    );
    assert!(ok, "{stdout}");
    // A format without namespaces takes one at a time.
    let bw = work.path().join("bw");
    let (ok, _, stderr) = run(
        &Args::new("migrate")
            .src("kvrocks", s)
            .dst("blackwidow", &bw)
            .with(&["--all-namespaces"]),
        "",
    );
    assert!(!ok);
    assert_contains(
        &stderr,
        "has no namespaces, and the source holds a, b, __namespace",
    );
}

#[test]
fn a_cluster_store_migrates_with_src_cluster() {
    let work = tempfile::tempdir().unwrap();
    let src = work.path().join("kv");
    exec_in_cluster_mode(&src, "SET a 1\nHSET h f v\n");
    let dst = work.path().join("bw");
    let args = Args::new("migrate")
        .src("kvrocks", &src)
        .dst("blackwidow", &dst)
        .with(&["--verify"]);
    let (ok, _, stderr) = run(&args, "");
    assert!(!ok);
    assert_contains(&stderr, "cluster mode");
    let (ok, stdout, stderr) = run(&[&args[..], &["--src-cluster"]].concat(), "");
    assert!(ok, "{stdout}{stderr}");
    assert_contains(&stdout, "2 keys compared, all equal");
}

/// `ldb scan` of one family, as `redcodec dump` lines.
fn ldb_pairs(ldb: &str, db: &Path, family: &str) -> Vec<String> {
    let out = succeeded(
        std::process::Command::new(ldb)
            .arg(format!("--db={}", db.display()))
            .args(["--ignore_unknown_options", "--hex"])
            .arg(format!("--column_family={family}"))
            .arg("scan"),
        &format!("ldb scan {family}"),
    );
    let listing = text(&out.stdout);
    let instance = db.file_name().unwrap().to_str().unwrap();
    listing
        .lines()
        .filter_map(|l| l.split_once(" : "))
        .map(|(k, v)| {
            let hex = |s: &str| s.trim_start_matches("0x").to_ascii_lowercase();
            format!("{instance}\t{family}\t{}\t{}", hex(k), hex(v))
        })
        .collect()
}

#[test]
fn compat_stores_open_in_an_older_rocksdb() {
    // RocksDB 7.8.3 is older than every release --compat serves (Kvrocks
    // 2.5: 8.3.2, 2.10: 9.3.1; Pika 3.5: 8.1–8.7): reading there means
    // table format, checksums, compression and MANIFEST are old enough.
    // (ldb does read the OPTIONS file, which names RocksDB 11's newer
    // options; the real systems do not read it at open.)
    // Debian's `ldb` (package rocksdb-tools, RocksDB 7.8.3): skipped
    // without it, unless `REDCODEC_REQUIRE_LDB=1` (as CI sets).
    let Some(ldb) = skip::LDB.find("compat stores in RocksDB 7.8.3") else {
        return;
    };
    for compat in ["kvrocks-2.10", "kvrocks-2.5"] {
        let dir = tempfile::tempdir().unwrap();
        let d = path(dir.path());
        let (ok, _, stderr) = run(
            &Args::new("exec")
                .store("kvrocks", d)
                .with(&["--compat", compat]),
            SCRIPT,
        );
        assert!(ok, "{stderr}");
        let (_, dump, _) = run(&Args::new("dump").store("kvrocks", d), "");
        let db = dir.path().join("db");
        let listed = std::process::Command::new(ldb)
            .arg(format!("--db={}", db.display()))
            .arg("list_column_families")
            .output()
            .unwrap();
        assert!(listed.status.success(), "{}", text(&listed.stderr));
        let families: Vec<String> =
            rocksdb::DB::list_cf(&rocksdb::Options::default(), &db).unwrap();
        let mut read = Vec::new();
        for family in &families {
            assert!(
                text(&listed.stdout).contains(family.as_str()),
                "{compat}: {family}"
            );
            read.extend(ldb_pairs(ldb, &db, family));
        }
        let mut written: Vec<String> = dump.lines().map(str::to_string).collect();
        read.sort();
        written.sort();
        assert!(!written.is_empty());
        assert_eq!(
            read, written,
            "{compat}: RocksDB 7.8.3 reads every pair redcodec wrote"
        );
    }
}

/// The block cache's size follows the options, read-write and read-only
/// alike, and is RocksDB's capacity for every family of the store.
#[test]
fn block_cache_size_follows_the_options() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("bw");
    let capacity = |engine: &Engine<AnyCodec>| -> Vec<u64> {
        engine
            .store()
            .layout()
            .places()
            .map(|place| {
                let value = engine
                    .store()
                    .property(place, "rocksdb.block-cache-capacity")
                    .unwrap()
                    .expect("the property");
                value.parse().unwrap()
            })
            .collect()
    };
    {
        let engine =
            Engine::open(codec(Format::Blackwidow), &dir, EngineOptions::default()).unwrap();
        engine.execute(&["SET", "k", "v"]);
        let default = redcodec_engine::store::DEFAULT_BLOCK_CACHE_BYTES as u64;
        assert_eq!(capacity(&engine), vec![default; capacity(&engine).len()]);
        assert!(
            capacity(&engine).len() > 1,
            "blackwidow has several families"
        );
    }
    let read_only = EngineOptions {
        block_cache_bytes: 32 << 20,
        ..EngineOptions::read_only()
    };
    let engine = Engine::open(codec(Format::Blackwidow), &dir, read_only).unwrap();
    let sizes = capacity(&engine);
    assert!(sizes.iter().all(|&s| s == 32 << 20), "{sizes:?}");
}

/// The largest table of the store at `db`, with one byte of its data
/// blocks flipped (a quarter of the way in: data blocks come first, the
/// index and filter last).
fn flip_a_data_byte(db: &Path) -> PathBuf {
    let mut tables: Vec<(u64, PathBuf)> = std::fs::read_dir(db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .map(|p| (std::fs::metadata(&p).unwrap().len(), p))
        .collect();
    tables.sort();
    let (len, table) = tables.pop().expect("a table");
    let mut bytes = std::fs::read(&table).unwrap();
    let at = len / 4;
    bytes[at as usize] ^= 0xff;
    std::fs::write(&table, bytes).unwrap();
    table
}

#[test]
fn a_damaged_table_fails_reads_clearly_and_a_migration_resumes_once_repaired() {
    let work = tempfile::tempdir().unwrap();
    let store = work.path().join("store");
    ok(&Args::new("generate")
        .store("kvrocks", &store)
        .fixed_clock(CLOCK)
        .with(&["--records", "5000"]));
    let healthy = work.path().join("healthy");
    copy_dir(&store, &healthy);
    let table = flip_a_data_byte(&store.join("db"));
    let name = table.file_name().unwrap().to_str().unwrap().to_string();
    let before = file_hashes(&store);
    let rdb = work.path().join("out.rdb");
    let bulk = work.path().join("bulk");
    let batches = work.path().join("batches");
    let commands = [
        Args::new("analyze").store("kvrocks", &store),
        Args::new("check").store("kvrocks", &store),
        Args::new("dump").store("kvrocks", &store),
        Args::new("export")
            .store("kvrocks", &store)
            .with(&["--rdb", path(&rdb)]),
        Args::new("migrate")
            .src("kvrocks", &store)
            .dst("blackwidow", &bulk),
        Args::new("migrate")
            .src("kvrocks", &store)
            .dst("blackwidow", &batches)
            .with(&["--no-bulk"]),
    ];
    for args in commands {
        let (ok, stdout, stderr) = run(&args, "");
        let what = args.join(" ");
        assert!(!ok, "{what}: {stdout}");
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        // Every command words it alike, with no Redis reply's `ERR`.
        assert!(stderr.starts_with("redcodec: "), "{what}: {stderr}");
        assert!(!stderr.contains("ERR "), "{what}: {stderr}");
        assert_contains(
            &stderr,
            "storage error: Corruption: block checksum mismatch",
        );
        assert_contains(&stderr, &name);
    }
    assert_eq!(file_hashes(&store), before, "a file of the store changed");
    // The bulk path had written nothing when it met the damage: its
    // destination is left empty, with no checkpoint to resume.
    assert_eq!(ok(&Args::new("dump").store("blackwidow", &bulk)), "");
    assert!(!bulk.join("redcodec-migrate.checkpoint").exists());
    // The write path keeps what it committed, with its checkpoint: once
    // the table is repaired, it resumes to a copy that verifies equal.
    assert!(batches.join("redcodec-migrate.checkpoint").exists());
    std::fs::copy(healthy.join("db").join(&name), &table).unwrap();
    let resumed = ok(&Args::new("migrate")
        .src("kvrocks", &store)
        .dst("blackwidow", &batches)
        .with(&["--no-bulk", "--resume", "--verify"]));
    assert_contains(&resumed, "all equal");
}
