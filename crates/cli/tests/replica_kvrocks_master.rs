//! A real Apache Kvrocks replica following `redcodec serve --format
//! kvrocks` with Kvrocks' own protocol: a full copy of the master's
//! checkpoint while writes of every type with TTLs go on, then the WAL
//! stream, key by key equal; its link killed mid-stream resumes by `PSYNC
//! <seq>` without a full copy; a sequence the master's WAL no longer holds
//! takes a full copy again.
//!
//! Needs a Kvrocks server binary named by `REDCODEC_KVROCKS_BIN`. Without
//! it the test is reported as skipped (`redcodec_conformance::skip`),
//! unless `REDCODEC_REQUIRE_KVROCKS=1`, where it fails.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod serve_support;
use serve_support::{connect, store_dir, Serve};

mod kvrocks_support;
use kvrocks_support::{kvrocks_bin, Kvrocks};

mod replica_compare;
use replica_compare::{field, info, q, wait_equal, wait_link_up, write_round, Writer, BOUND};

/// The master's options: a store Kvrocks 2.10 opens.
const MASTER: &[&str] = &["--compat", "kvrocks-2.10"];

/// Where the master keeps the checkpoint a full copy reads.
fn checkpoint_dir(store: &Path) -> PathBuf {
    store.join("kvrocks-master-checkpoint")
}

/// Removes the WAL files RocksDB archived (the master stopped): the WAL
/// then no longer holds what was written before.
fn purge_archived_wal(store: &Path) {
    let archive = store.join("db").join("archive");
    if archive.is_dir() {
        std::fs::remove_dir_all(&archive).unwrap();
    }
}

/// Polls the master's INFO replication until it lists the replica on
/// `port` as a Kvrocks replica (`slaveN:ip=…,port=…,offset=…,lag=…`).
fn wait_listed(m: &mut redis::Connection, port: u16, what: &str) -> String {
    let deadline = Instant::now() + BOUND;
    loop {
        let rep = info(m, "replication");
        if let Some(line) = rep
            .lines()
            .find(|l| l.starts_with("slave") && l.contains(&format!(",port={port},offset=")))
        {
            assert!(line.contains(",lag="), "{what}: {line}");
            return line.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the master never listed the replica: {rep}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The client id of the master's connection that streams to a Kvrocks
/// replica (its last command: PSYNC).
fn stream_client(m: &mut redis::Connection) -> Option<String> {
    let list: String = q(m, &["CLIENT", "LIST"]);
    list.lines()
        .find(|l| l.contains(" cmd=psync"))
        .and_then(|l| l.split(' ').find_map(|f| f.strip_prefix("id=")))
        .map(str::to_string)
}

#[test]
fn a_kvrocks_replica_follows_a_redcodec_master() {
    let test = "a real Kvrocks replica of redcodec serve --format kvrocks";
    let Some(bin) = kvrocks_bin(test) else {
        return;
    };
    let (_tmp, dir) = store_dir();
    // Data of every type with TTLs; then the master restarts without its
    // archived WAL, so a new replica cannot start from sequence 1.
    {
        let master = Serve::start("kvrocks", &dir, MASTER);
        let mut m = master.conn();
        for i in 0..400 {
            write_round(&mut m, i);
        }
        let _: () = q(&mut m, &["SET", "ttl:long", "x", "PX", "5000000"]);
        let _: () = q(&mut m, &["SET", "ttl:short", "x", "PX", "300"]);
        for i in 0..2000 {
            let _: i64 = q(&mut m, &["HSET", "big", &format!("f{i}"), &"x".repeat(100)]);
        }
        let _: () = redis::cmd("SHUTDOWN").query(&mut m).unwrap_or(());
        master.wait();
    }
    purge_archived_wal(&dir);
    let master = Serve::start("kvrocks", &dir, MASTER);
    let mut m = master.conn();
    let url = master.url("");

    // 1. A full copy while writes go on, then the stream.
    let writer = Writer::start(url.clone(), 400, write_round);
    let kv_data = tempfile::tempdir().unwrap();
    let slaveof = format!("slaveof 127.0.0.1 {}\n", master.port());
    let replica = Kvrocks::start_on(&bin, Some(kv_data.path()), &slaveof, None);
    let mut r = connect(&replica.url());
    wait_link_up(&mut r, "full copy");
    writer.more(300);
    let next = writer.stop();
    // The 300 ms keys are gone on both sides before comparing.
    std::thread::sleep(Duration::from_millis(1500));
    wait_equal(&mut m, &mut r, "after the full copy");
    assert!(
        checkpoint_dir(&dir).join("db").join("CURRENT").exists(),
        "the replica took a full copy of a checkpoint"
    );
    let line = wait_listed(&mut m, replica.port, "after the full copy");
    assert!(line.starts_with("slave0:ip=127.0.0.1,"), "{line}");
    let rep = info(&mut r, "replication");
    assert_eq!(field(&rep, "role").as_deref(), Some("slave"), "{rep}");

    // 2. The link killed mid-stream: PSYNC resumes, no full copy.
    std::fs::remove_dir_all(checkpoint_dir(&dir)).unwrap();
    let writer = Writer::start(url.clone(), next, write_round);
    writer.more(50);
    let id = stream_client(&mut m).expect("the stream's connection is listed");
    let _: i64 = q(&mut m, &["CLIENT", "KILL", "ID", &id]);
    writer.more(50);
    let deadline = Instant::now() + BOUND;
    while stream_client(&mut m).is_none_or(|again| again == id) {
        assert!(Instant::now() < deadline, "the replica never came back");
        std::thread::sleep(Duration::from_millis(100));
    }
    writer.more(100);
    let next = writer.stop();
    wait_equal(&mut m, &mut r, "after the link was killed");
    assert!(
        !checkpoint_dir(&dir).exists(),
        "the replica resumed by PSYNC, without a full copy"
    );

    // 3. The replica stops; the master's WAL loses what it had not read:
    // its PSYNC is refused and it copies in full again.
    drop(r);
    drop(replica);
    let _: i64 = q(&mut m, &["HSET", "while-away", "f", "v"]);
    let _: () = redis::cmd("SHUTDOWN").query(&mut m).unwrap_or(());
    drop(m);
    master.wait();
    purge_archived_wal(&dir);
    let master = Serve::start("kvrocks", &dir, MASTER);
    let mut m = master.conn();
    std::fs::remove_dir_all(checkpoint_dir(&dir)).ok();
    let writer = Writer::start(master.url(""), next, write_round);
    let slaveof = format!("slaveof 127.0.0.1 {}\n", master.port());
    let replica = Kvrocks::start_on(&bin, Some(kv_data.path()), &slaveof, None);
    let mut r = connect(&replica.url());
    wait_link_up(&mut r, "after the WAL was purged");
    writer.more(100);
    writer.stop();
    wait_equal(&mut m, &mut r, "after the WAL was purged");
    assert!(
        checkpoint_dir(&dir).join("db").join("CURRENT").exists(),
        "a sequence the WAL no longer holds takes a full copy"
    );
    let got: Option<String> = q(&mut r, &["HGET", "while-away", "f"]);
    assert_eq!(got.as_deref(), Some("v"));
}
