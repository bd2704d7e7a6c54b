//! `redcodec serve --replicaof` pointed at a real Apache Kvrocks master:
//! the full copy of its checkpoint while it takes writes of every type
//! with TTLs, then its write-batch stream, key by key equal on the kvrocks
//! and floyd formats; INFO replication; REPLICAOF NO ONE.
//!
//! Needs a Kvrocks server binary named by `REDCODEC_KVROCKS_BIN`. Without
//! it the test is reported as skipped (`redcodec_conformance::skip`),
//! unless `REDCODEC_REQUIRE_KVROCKS=1`, where it fails.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod serve_support;
use serve_support::{connect, formats, store_dir, Serve};

mod kvrocks_support;
use kvrocks_support::{kvrocks_bin, Kvrocks};

mod replica_compare;
use replica_compare::{
    assert_read_only_replica, contents, field, follow_while_writing, info, q, same, wait_equal,
    write_round, BOUND, V,
};

/// A connection to a Kvrocks server.
fn kv_conn(k: &Kvrocks) -> redis::Connection {
    connect(&k.url())
}

#[test]
fn a_kvrocks_master_is_followed_on_every_format_tested() {
    let test = "redcodec serve as a replica of a real Kvrocks master";
    let Some(bin) = kvrocks_bin(test) else {
        return;
    };
    for format in formats() {
        let master = Kvrocks::start(&bin, "");
        let mut m = kv_conn(&master);
        for i in 0..400 {
            write_round(&mut m, i);
        }
        let _: () = q(&mut m, &["SET", "ttl:long", "x", "PX", "5000000"]);
        let _: () = q(&mut m, &["SET", "ttl:short", "x", "PX", "300"]);
        let _: i64 = q(&mut m, &["HSET", "big", "f", "v"]);
        for i in 0..2000 {
            let _: i64 = q(&mut m, &["HSET", "big", &format!("f{i}"), &"x".repeat(100)]);
        }
        // Keep writing while the replica copies and follows.
        let (_tmp, dir) = store_dir();
        let serve = follow_while_writing(master.url(), master.port, format, &dir, 400, write_round);
        let mut r = serve.conn();
        // The 300 ms keys are gone on both sides before comparing.
        std::thread::sleep(Duration::from_millis(1500));
        wait_equal(&mut m, &mut r, format);
        assert_read_only_replica(&mut r, master.port);
        // More writes after the copy, through the stream only.
        let _: () = q(&mut m, &["FLUSHDB"]);
        for i in 0..50 {
            write_round(&mut m, 1000 + i);
        }
        wait_equal(&mut m, &mut r, &format!("{format} after FLUSHDB"));
        let _: () = q(&mut r, &["REPLICAOF", "NO", "ONE"]);
        let rep = info(&mut r, "replication");
        assert_eq!(field(&rep, "role").as_deref(), Some("master"), "{rep}");
        let _: () = q(&mut r, &["SET", "w", "1"]);
        let _: () = q(&mut m, &["SET", "after", "1"]);
        std::thread::sleep(Duration::from_millis(500));
        let after: Option<String> = q(&mut r, &["GET", "after"]);
        assert_eq!(
            after, None,
            "{format}: still following after REPLICAOF NO ONE"
        );
    }
}

/// Kvrocks' records, encoded as `src/storage/redis_metadata.cc` does
/// (default namespace, standalone, 64-bit metadata).
mod enc {
    const NS: &[u8] = b"__namespace";

    pub fn ns_key(key: &[u8]) -> Vec<u8> {
        let mut out = vec![NS.len() as u8];
        out.extend_from_slice(NS);
        out.extend_from_slice(key);
        out
    }

    pub fn sub_key(key: &[u8], version: u64, sub: &[u8]) -> Vec<u8> {
        let mut out = vec![NS.len() as u8];
        out.extend_from_slice(NS);
        out.extend_from_slice(&(key.len() as u32).to_be_bytes());
        out.extend_from_slice(key);
        out.extend_from_slice(&version.to_be_bytes());
        out.extend_from_slice(sub);
        out
    }

    pub fn string(value: &[u8], expire_ms: u64) -> Vec<u8> {
        let mut out = vec![0x81];
        out.extend_from_slice(&expire_ms.to_be_bytes());
        out.extend_from_slice(value);
        out
    }

    pub fn collection(type_code: u8, expire_ms: u64, version: u64, size: u64) -> Vec<u8> {
        let mut out = vec![0x80 | type_code];
        out.extend_from_slice(&expire_ms.to_be_bytes());
        out.extend_from_slice(&version.to_be_bytes());
        out.extend_from_slice(&size.to_be_bytes());
        out
    }

    /// The order-preserving score encoding.
    pub fn score(s: f64) -> [u8; 8] {
        let bits = s.to_bits();
        let enc = if bits >> 63 == 1 {
            !bits
        } else {
            bits | (1 << 63)
        };
        enc.to_be_bytes()
    }
}

/// A RocksDB with Kvrocks' column families, standing in for a Kvrocks
/// master's storage.
struct FakeStore {
    _dir: tempfile::TempDir,
    db: rocksdb::DB,
}

impl FakeStore {
    fn open() -> FakeStore {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = rocksdb::Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let cfs = [
            "metadata",
            "zset_score",
            "pubsub",
            "propagate",
            "stream",
            "search",
        ]
        .into_iter()
        .map(|n| rocksdb::ColumnFamilyDescriptor::new(n, rocksdb::Options::default()));
        let db = rocksdb::DB::open_cf_descriptors(&opts, dir.path().join("db"), cfs).unwrap();
        FakeStore { _dir: dir, db }
    }

    /// A checkpoint as Kvrocks makes it (a log size for flush of its write
    /// buffer size): no flush, the WAL copied, replayed when it is opened.
    fn checkpoint(&self) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let checkpoint = dir.path().join("cp");
        rocksdb::checkpoint::Checkpoint::new(&self.db)
            .unwrap()
            .create_checkpoint_with_log_size(&checkpoint, 64 << 20)
            .unwrap();
        (dir, checkpoint)
    }

    fn meta(&self) -> &rocksdb::ColumnFamily {
        self.db.cf_handle("metadata").unwrap()
    }

    /// One batch as a Kvrocks command writes it: `LogData`, subkeys, then
    /// metadata.
    fn write(
        &self,
        log: &str,
        subs: &[(Vec<u8>, Vec<u8>)],
        dels: &[Vec<u8>],
        metas: &[(&[u8], Option<Vec<u8>>)],
    ) {
        let mut b = rocksdb::WriteBatch::default();
        b.put_log_data(log.as_bytes());
        for (k, v) in subs {
            b.put(k, v);
        }
        for k in dels {
            b.delete(k);
        }
        for (key, value) in metas {
            match value {
                Some(v) => b.put_cf(self.meta(), enc::ns_key(key), v),
                None => b.delete_cf(self.meta(), enc::ns_key(key)),
            }
        }
        self.db.write(b).unwrap();
    }
}

/// Reads one RESP command from a client.
fn read_command(r: &mut std::io::BufReader<std::net::TcpStream>) -> std::io::Result<Vec<String>> {
    use std::io::{BufRead, Read};
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Ok(Vec::new());
    }
    let n: usize = line.trim().trim_start_matches('*').parse().unwrap_or(0);
    let mut words = Vec::new();
    for _ in 0..n {
        line.clear();
        r.read_line(&mut line)?;
        let len: usize = line.trim().trim_start_matches('$').parse().unwrap_or(0);
        let mut buf = vec![0u8; len + 2];
        r.read_exact(&mut buf)?;
        buf.truncate(len);
        words.push(String::from_utf8_lossy(&buf).into_owned());
    }
    Ok(words)
}

/// Answers one connection as a Kvrocks master does (`cmd_replication.cc`).
fn serve_kvrocks(
    stream: std::net::TcpStream,
    store: &FakeStore,
    checkpoint: &std::path::Path,
    checkpoint_seq: u64,
    psyncs: &AtomicU64,
    fetches: &AtomicU64,
) -> std::io::Result<()> {
    use std::io::Write;
    let mut w = stream.try_clone()?;
    let mut r = std::io::BufReader::new(stream);
    loop {
        let words = read_command(&mut r)?;
        let Some(name) = words.first() else {
            return Ok(());
        };
        match name.to_ascii_lowercase().as_str() {
            "_db_name" => w.write_all(b"fake.kvrocks.db\r\n")?,
            "info" => {
                let body = "# Server\r\nkvrocks_version:2.10.0\r\nkvrocks_mode:standalone\r\n";
                w.write_all(format!("${}\r\n{body}\r\n", body.len()).as_bytes())?;
            }
            "replconf" | "auth" => w.write_all(b"+OK\r\n")?,
            "_fetch_meta" => {
                fetches.fetch_add(1, Ordering::SeqCst);
                let mut files: Vec<String> = std::fs::read_dir(checkpoint)?
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect();
                files.sort();
                w.write_all(format!("{}\r\n", files.join(",")).as_bytes())?;
                return Ok(());
            }
            "_fetch_file" => {
                for f in words[1].split(',') {
                    let data = std::fs::read(checkpoint.join(f))?;
                    w.write_all(format!("{}\r\n", data.len()).as_bytes())?;
                    w.write_all(&data)?;
                }
                return Ok(());
            }
            "psync" => {
                let seq: u64 = words.last().unwrap().parse().unwrap();
                // What Kvrocks' checkWALBoundary accepts: a sequence the
                // WAL holds since the checkpoint, or the next one.
                if seq <= checkpoint_seq || seq > store.db.latest_sequence_number() + 1 {
                    w.write_all(b"-ERR sequence out of range, please use fullsync\r\n")?;
                    continue;
                }
                // The first link of each replica is cut after its first
                // burst of batches: the replica must continue with PSYNC.
                let cut = psyncs.fetch_add(1, Ordering::SeqCst).is_multiple_of(2);
                w.write_all(b"+OK\r\n")?;
                let mut next = seq;
                loop {
                    // The crate's WAL iterator yields batches after the
                    // sequence asked for: ask for the one before.
                    for batch in store.db.get_updates_since(next - 1).unwrap() {
                        let (at, batch) = batch.unwrap();
                        assert_eq!(at, next, "the WAL is contiguous");
                        w.write_all(format!("${}\r\n", batch.data().len()).as_bytes())?;
                        w.write_all(batch.data())?;
                        w.write_all(b"\r\n")?;
                        next = at + batch.len() as u64;
                    }
                    if cut {
                        return Ok(());
                    }
                    // Keep the link alive, as the master's feed thread does.
                    std::thread::sleep(Duration::from_millis(100));
                    w.write_all(b"$4\r\nping\r\n")?;
                }
            }
            _ => w.write_all(b"-ERR unknown command\r\n")?,
        }
    }
}

/// Listens on a loopback port and answers every connection as a Kvrocks
/// master of `store` does ([`serve_kvrocks`]); its address, and the counts
/// of PSYNCs and full copies it answered.
fn fake_master(
    store: &Arc<FakeStore>,
    checkpoint: std::path::PathBuf,
    checkpoint_seq: u64,
) -> (String, Arc<AtomicU64>, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let psyncs = Arc::new(AtomicU64::new(0));
    let fetches = Arc::new(AtomicU64::new(0));
    let (store, counts) = (store.clone(), (psyncs.clone(), fetches.clone()));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (store, checkpoint) = (store.clone(), checkpoint.clone());
            let (psyncs, fetches) = counts.clone();
            std::thread::spawn(move || {
                let _ = serve_kvrocks(
                    stream,
                    &store,
                    &checkpoint,
                    checkpoint_seq,
                    &psyncs,
                    &fetches,
                );
            });
        }
    });
    (addr, psyncs, fetches)
}

#[test]
fn kvrocks_replication_protocol_against_a_fake_master() {
    let store = Arc::new(FakeStore::open());
    let version = 1_700_000_000_000_000u64 << 11;
    // Before the checkpoint: a string with a TTL, a hash, a sorted set.
    store.write(
        "1",
        &[],
        &[],
        &[(b"s", Some(enc::string(b"hello", 2_000_000_000_000)))],
    );
    store.write(
        "2",
        &[
            (enc::sub_key(b"h", version, b"f1"), b"v1".to_vec()),
            (enc::sub_key(b"h", version, b"f2"), b"v2".to_vec()),
        ],
        &[],
        &[(b"h", Some(enc::collection(2, 0, version, 2)))],
    );
    store.write(
        "5",
        &[(
            enc::sub_key(b"z", version + 1, b"m"),
            enc::score(2.5).to_vec(),
        )],
        &[],
        &[(b"z", Some(enc::collection(5, 0, version + 1, 1)))],
    );
    let (_checkpoint_dir, checkpoint) = store.checkpoint();
    assert!(
        std::fs::read_dir(&checkpoint).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".log")),
        "the checkpoint holds the WAL"
    );
    let checkpoint_seq = store.db.latest_sequence_number();
    // After it: a field added and one removed, a list pushed, a delete.
    store.write(
        "2",
        &[(enc::sub_key(b"h", version, b"f3"), b"v 3".to_vec())],
        &[enc::sub_key(b"h", version, b"f1")],
        &[(b"h", Some(enc::collection(2, 0, version, 2)))],
    );
    let mid = u64::MAX / 2;
    let mut list = enc::collection(3, 0, version + 2, 2);
    list.extend_from_slice(&(mid - 1).to_be_bytes());
    list.extend_from_slice(&(mid + 1).to_be_bytes());
    store.write(
        "3 6",
        &[
            (
                enc::sub_key(b"l", version + 2, &mid.to_be_bytes()),
                b"b".to_vec(),
            ),
            (
                enc::sub_key(b"l", version + 2, &(mid - 1).to_be_bytes()),
                b"a".to_vec(),
            ),
        ],
        &[],
        &[(b"l", Some(list))],
    );
    store.write("0", &[], &[], &[(b"z", None)]);

    let (addr, psyncs, fetches) = fake_master(&store, checkpoint, checkpoint_seq);
    let mut want = BTreeMap::new();
    want.insert(
        b"s".to_vec(),
        (V::S(b"hello".to_vec()), Some(2_000_000_000_000)),
    );
    let h: BTreeMap<Vec<u8>, Vec<u8>> = [
        (b"f2".to_vec(), b"v2".to_vec()),
        (b"f3".to_vec(), b"v 3".to_vec()),
    ]
    .into();
    want.insert(b"h".to_vec(), (V::H(h), None));
    want.insert(
        b"l".to_vec(),
        (V::L(vec![b"a".to_vec(), b"b".to_vec()]), None),
    );
    let caught_up = |r: &mut redis::Connection, format: &str| {
        let deadline = Instant::now() + BOUND;
        loop {
            let latest = store.db.latest_sequence_number();
            let rep = info(r, "replication");
            if field(&rep, "master_link_status").as_deref() == Some("up")
                && field(&rep, "slave_repl_offset") == Some(latest.to_string())
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{format}: never caught up to {latest}: {rep}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let all: Vec<&str> = serve_support::formats().collect();
    for &format in &all {
        let (_tmp, dir) = store_dir();
        let serve = Serve::start(format, &dir, &["--replicaof", &addr]);
        let mut r = serve.conn();
        caught_up(&mut r, format);
        let got = contents(&mut r);
        assert!(same(&got, &want), "{format}: {got:?} against {want:?}");
        // The first link was cut after its burst; a write now reaches the
        // replica through the link it continued with PSYNC.
        let key = format!("t:{format}");
        store.write(
            "1",
            &[],
            &[],
            &[(key.as_bytes(), Some(enc::string(b"later", 0)))],
        );
        want.insert(key.into_bytes(), (V::S(b"later".to_vec()), None));
        caught_up(&mut r, format);
        let got = contents(&mut r);
        assert!(same(&got, &want), "{format}: {got:?} against {want:?}");
        let rep = info(&mut r, "replication");
        assert_eq!(
            field(&rep, "master_host").as_deref(),
            Some("127.0.0.1"),
            "{rep}"
        );
        let _: () = q(&mut r, &["REPLICAOF", "NO", "ONE"]);
        let _: () = q(&mut r, &["SET", "mine", "1"]);
        if format == "kvrocks" {
            // Written to as a master, it copies again when it follows
            // again: its own write is gone.
            let (host, port) = addr.rsplit_once(':').unwrap();
            let _: () = q(&mut r, &["REPLICAOF", host, port]);
            caught_up(&mut r, format);
            let got = contents(&mut r);
            assert!(
                same(&got, &want),
                "{format} following again: {got:?} against {want:?}"
            );
            let _: () = q(&mut r, &["REPLICAOF", "NO", "ONE"]);
        }
    }
    assert_eq!(
        fetches.load(Ordering::SeqCst),
        all.len() as u64 + 1,
        "one full copy per replica, one more after REPLICAOF NO ONE"
    );
    assert_eq!(
        psyncs.load(Ordering::SeqCst),
        2 * (all.len() as u64 + 1),
        "per copy: PSYNC after it, PSYNC after the cut"
    );
}

/// Runs `redcodec` with `args`; its status and stderr.
fn redcodec(args: &[&str]) -> (std::process::ExitStatus, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_redcodec"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("redcodec runs");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn migrate_follow_from_a_kvrocks_master_continues_after_a_rerun() {
    let test = "migrate --follow from a real Kvrocks master, run twice";
    let Some(bin) = kvrocks_bin(test) else {
        return;
    };
    for format in formats() {
        let master = Kvrocks::start(&bin, "");
        let mut m = kv_conn(&master);
        for i in 0..200 {
            write_round(&mut m, i);
        }
        let (_tmp, dir) = store_dir();
        let dir = dir.to_str().unwrap().to_string();
        let url = master.url();
        let follow = [
            "migrate",
            "--from",
            url.as_str(),
            "--to",
            format,
            "--dst",
            dir.as_str(),
            "--follow",
            "--until-caught-up",
            "1",
        ];
        let (status, err) = redcodec(&follow);
        assert!(status.success(), "{format}: first run failed: {err}");
        assert!(
            err.contains("keys copied from its checkpoint"),
            "{format}: the first run made no full copy: {err}"
        );
        // Writes (and deletes) while no replica is connected: the next
        // run must get them from the master's WAL.
        let _: i64 = q(&mut m, &["DEL", "s:3", "h:4", "z:5"]);
        for i in 200..260 {
            write_round(&mut m, i);
        }
        // The 300 ms keys are gone on both sides before comparing.
        std::thread::sleep(Duration::from_millis(1500));
        let (status, err) = redcodec(&follow);
        assert!(status.success(), "{format}: second run failed: {err}");
        assert!(
            err.contains("continues from sequence") && !err.contains("copied from its checkpoint"),
            "{format}: the second run copied again instead of continuing: {err}"
        );
        let (status, err) = redcodec(&["verify", "--from", &url, "--to", format, "--dst", &dir]);
        assert!(
            status.success(),
            "{format}: not equal after the rerun: {err}"
        );
    }
}

/// A Kvrocks master's namespace tokens (`repl-namespace-enabled yes`: the
/// JSON Kvrocks' `Namespace::Rewrite` puts in its propagate family) reach
/// a replica that replicates them, from the checkpoint of its full copy
/// and then from a write batch of the stream; a replica without the
/// setting leaves them alone.
#[test]
fn a_kvrocks_masters_namespace_tokens_reach_a_replica_that_replicates_them() {
    let store = Arc::new(FakeStore::open());
    let propagate = |json: &str| {
        let mut b = rocksdb::WriteBatch::default();
        b.put_cf(
            store.db.cf_handle("propagate").unwrap(),
            b"__namespace_keys__",
            json.as_bytes(),
        );
        store.db.write(b).unwrap();
    };
    store.write("1", &[], &[], &[(b"s", Some(enc::string(b"v", 0)))]);
    propagate(r#"{"t1":"n1"}"#);
    let (_checkpoint_dir, checkpoint) = store.checkpoint();
    let checkpoint_seq = store.db.latest_sequence_number();
    let (addr, _, _) = fake_master(&store, checkpoint, checkpoint_seq);
    // An error (`-LOADING` while the full copy loads) is no answer yet.
    let tokens = |c: &mut redis::Connection| -> Vec<String> {
        redis::cmd("NAMESPACE")
            .arg("GET")
            .arg("*")
            .query(c)
            .unwrap_or_default()
    };
    let wait_tokens = |c: &mut redis::Connection, want: &[&str]| {
        let deadline = Instant::now() + BOUND;
        while tokens(c) != want {
            assert!(
                Instant::now() < deadline,
                "tokens {:?}, never {want:?}",
                tokens(c)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let (_tmp, dir) = store_dir();
    let replicating = [
        "--requirepass",
        "pwd",
        "--config-set",
        "repl-namespace-enabled=yes",
        "--replicaof",
        &addr,
    ];
    let replica = Serve::start("kvrocks", &dir, &replicating);
    let mut r = connect(&format!("redis://:pwd@{}/", replica.addr));
    wait_tokens(&mut r, &["n1", "t1", "__namespace", "pwd"]);
    propagate(r#"{"t1":"n1","t2":"n2"}"#);
    wait_tokens(&mut r, &["n1", "t1", "n2", "t2", "__namespace", "pwd"]);
    let mut t2 = connect(&format!("redis://:t2@{}/", replica.addr));
    let _: () = redis::cmd("PING").query(&mut t2).unwrap();

    let (_tmp2, dir2) = store_dir();
    let other = Serve::start(
        "kvrocks",
        &dir2,
        &["--requirepass", "pwd", "--replicaof", &addr],
    );
    let mut o = connect(&format!("redis://:pwd@{}/", other.addr));
    let deadline = Instant::now() + BOUND;
    // `-LOADING` while the copy loads: not there yet.
    while redis::cmd("GET")
        .arg("s")
        .query::<Option<String>>(&mut o)
        .ok()
        .flatten()
        .is_none()
    {
        assert!(Instant::now() < deadline, "the copy never arrived");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(tokens(&mut o), ["__namespace", "pwd"]);
}
