//! The master side of Kvrocks' replication protocol, spoken by this test
//! as a Kvrocks 2.10 replica speaks it (`src/cluster/replication.cc`),
//! byte for byte: `_db_name`, `replconf`, `PSYNC <seq>` and the stream of
//! write batches, `_fetch_meta` and `_fetch_file` — whose files, served as
//! a store of their own, hold the master's keys. Bad input: a non-number
//! or a sequence the WAL does not hold, a file outside the checkpoint.
//! Needs no Kvrocks binary (`replica_kvrocks_master.rs` runs a real one).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

mod serve_support;
use serve_support::{assert_same_keys, store_dir, Serve};

/// A command as Kvrocks' replica sends it (an array of bulk strings).
fn command(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    out
}

struct Conn {
    rd: BufReader<TcpStream>,
    wr: TcpStream,
}

impl Conn {
    fn open(server: &Serve) -> Conn {
        let s = server.raw();
        Conn {
            rd: BufReader::new(s.try_clone().unwrap()),
            wr: s,
        }
    }

    fn send(&mut self, args: &[&str]) {
        self.wr.write_all(&command(args)).unwrap();
    }

    /// One line with its `\r\n`.
    fn line(&mut self) -> String {
        let mut line = String::new();
        self.rd.read_line(&mut line).unwrap();
        line
    }

    fn ask(&mut self, args: &[&str]) -> String {
        self.send(args);
        self.line()
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = vec![0u8; n];
        self.rd.read_exact(&mut out).unwrap();
        out
    }

    /// One bulk string of the stream.
    fn bulk(&mut self) -> Vec<u8> {
        let head = self.line();
        let len: usize = head
            .strip_prefix('$')
            .and_then(|l| l.trim_end().parse().ok())
            .unwrap_or_else(|| panic!("a bulk string, not {head:?}"));
        let body = self.bytes(len + 2);
        assert_eq!(&body[len..], b"\r\n");
        body[..len].to_vec()
    }

    /// Reads until the server closes the connection.
    fn rest(&mut self) -> Vec<u8> {
        let mut all = Vec::new();
        self.rd.read_to_end(&mut all).unwrap();
        all
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn a_kvrocks_replica_session_against_redcodec() {
    let (_tmp, dir) = store_dir();
    let master = Serve::start("kvrocks", &dir, &["--db-name", "orders.db"]);
    let mut m = master.conn();
    let _: () = redis::cmd("SET")
        .arg("s")
        .arg("first-value")
        .query(&mut m)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("ttl")
        .arg("x")
        .arg("EX")
        .arg(1000)
        .query(&mut m)
        .unwrap();
    let _: i64 = redis::cmd("HSET")
        .arg("h")
        .arg("f")
        .arg("1")
        .arg("g")
        .arg("2")
        .query(&mut m)
        .unwrap();
    let _: i64 = redis::cmd("RPUSH")
        .arg("l")
        .arg("a")
        .arg("b")
        .query(&mut m)
        .unwrap();
    let _: i64 = redis::cmd("SADD")
        .arg("set")
        .arg("m")
        .query(&mut m)
        .unwrap();
    let _: i64 = redis::cmd("ZADD")
        .arg("z")
        .arg(1.5)
        .arg("m")
        .query(&mut m)
        .unwrap();

    // The handshake: the name on a bare line, replconf, then PSYNC.
    let mut c = Conn::open(&master);
    assert_eq!(c.ask(&["_db_name"]), "orders.db\r\n");
    assert_eq!(c.ask(&["replconf", "listening-port", "4242"]), "+OK\r\n");
    assert_eq!(
        c.ask(&["PSYNC", "12x"]),
        "-ERR value is not an unsigned long long or out of range\r\n"
    );
    assert_eq!(
        c.ask(&["PSYNC", "99999999"]),
        "-ERR sequence out of range, please use fullsync\r\n"
    );
    // A fresh store's WAL holds every batch from sequence 1.
    assert_eq!(c.ask(&["PSYNC", "1"]), "+OK\r\n");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !contains(&c.bulk(), b"first-value") {
        assert!(Instant::now() < deadline, "the first write never came");
    }
    // A write now arrives as a batch of its own.
    let _: () = redis::cmd("SET")
        .arg("streamed-key")
        .arg("streamed-value")
        .query(&mut m)
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let b = c.bulk();
        if contains(&b, b"streamed-key") && contains(&b, b"streamed-value") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the write never came down the stream"
        );
    }
    // INFO replication lists it as Kvrocks shapes its replicas.
    let rep: String = redis::cmd("INFO").arg("replication").query(&mut m).unwrap();
    assert!(rep.contains("connected_slaves:1\r\n"), "{rep}");
    assert!(
        rep.contains("slave0:ip=127.0.0.1,port=4242,offset="),
        "{rep}"
    );
    // Also inside MULTI (EXEC holds the engine: INFO must not wait for it).
    let (rep,): (String,) = redis::pipe()
        .atomic()
        .cmd("INFO")
        .arg("replication")
        .query(&mut m)
        .unwrap();
    assert!(
        rep.contains("slave0:ip=127.0.0.1,port=4242,offset="),
        "{rep}"
    );
    // Idle, the stream says `ping` (after two seconds).
    while c.bulk() != b"ping" {
        assert!(Instant::now() < deadline, "no ping came");
    }
    drop(c);

    // The full copy: the checkpoint's names, then its files.
    let mut meta = Conn::open(&master);
    meta.send(&["_fetch_meta"]);
    let names = meta.rest();
    let names = String::from_utf8(names).unwrap();
    let names = names.strip_suffix("\r\n").expect("one line").to_string();
    let files: Vec<&str> = names.split(',').collect();
    assert!(files.contains(&"CURRENT"), "{names}");
    assert!(files.iter().any(|f| f.starts_with("MANIFEST-")), "{names}");
    let (_copy_tmp, copy) = store_dir();
    std::fs::create_dir_all(copy.join("db")).unwrap();
    let mut fetch = Conn::open(&master);
    fetch.send(&["_fetch_file", &names]);
    for name in &files {
        let size: usize = fetch.line().trim_end().parse().unwrap();
        let bytes = fetch.bytes(size);
        std::fs::write(copy.join("db").join(name), bytes).unwrap();
    }
    assert!(
        fetch.rest().is_empty(),
        "the connection closes after the files"
    );
    // The copy, served, holds the master's keys.
    let copied = Serve::start("kvrocks", &copy, &[]);
    let mut r = copied.conn();
    assert_same_keys(&mut m, &mut r, "the checkpoint");

    // A name outside the checkpoint is refused, and nothing is sent.
    for bad in ["../CURRENT", "../../etc/passwd", "/etc/passwd", "LOCK", ""] {
        let mut f = Conn::open(&master);
        f.send(&["_fetch_file", bad]);
        let answer = String::from_utf8(f.rest()).unwrap();
        assert!(
            answer.starts_with("-ERR _fetch_file: ")
                && answer.ends_with("is not a file of the checkpoint\r\n"),
            "{bad:?}: {answer:?}"
        );
    }
    // The same once the first name was good: the good file, then the error.
    let mut f = Conn::open(&master);
    f.send(&["_fetch_file", "CURRENT,../CURRENT"]);
    let size: usize = f.line().trim_end().parse().unwrap();
    let _ = f.bytes(size);
    assert!(f
        .line()
        .starts_with("-ERR _fetch_file: '../CURRENT' is not a file"));

    // Redis' PSYNC (three arguments) still goes the Redis way.
    let mut redis_psync = Conn::open(&master);
    assert!(redis_psync
        .ask(&["PSYNC", "?", "-1"])
        .starts_with("+FULLRESYNC "));
}

#[test]
fn other_formats_refuse_kvrocks_replication_commands() {
    let (_tmp, dir) = store_dir();
    let server = Serve::start("floyd", &dir, &[]);
    let mut c = Conn::open(&server);
    for args in [
        &["_db_name"][..],
        &["_fetch_meta"],
        &["_fetch_file", "CURRENT"],
        &["PSYNC", "1"],
    ] {
        let answer = c.ask(args);
        assert!(
            answer.starts_with(&format!("-ERR {}: Kvrocks' replication protocol serves a store of the kvrocks format; this one is of the floyd format", args[0].to_ascii_lowercase())),
            "{args:?}: {answer:?}"
        );
    }
}

#[test]
fn max_replication_mb_limits_the_full_copy_as_kvrocks_does() {
    let (_tmp, dir) = store_dir();
    let master = Serve::start("kvrocks", &dir, &[]);
    let mut m = master.conn();
    // About 2 MiB that do not compress (a xorshift stream).
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..256 {
        let value: Vec<u8> = (0..8192)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let _: () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(value)
            .query(&mut m)
            .unwrap();
    }
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("max-replication-mb")
        .arg(1)
        .query(&mut m)
        .unwrap();
    let mut meta = Conn::open(&master);
    meta.send(&["_fetch_meta"]);
    let names = String::from_utf8(meta.rest()).unwrap();
    let names = names.trim_end().to_string();
    let started = Instant::now();
    let mut fetch = Conn::open(&master);
    fetch.send(&["_fetch_file", &names]);
    let mut total = 0usize;
    for _ in names.split(',') {
        let size: usize = fetch.line().trim_end().parse().unwrap();
        fetch.bytes(size);
        total += size;
    }
    assert!(fetch.rest().is_empty());
    // At most 1 MiB a second: the files take at least total / 1 MiB
    // seconds (a lower bound only, whatever the machine's load).
    let elapsed = started.elapsed();
    assert!(total > 2_000_000, "{total} bytes in the checkpoint");
    let least = Duration::from_secs_f64(total as f64 / f64::from(1u32 << 20));
    assert!(
        elapsed >= least.mul_f64(0.99),
        "{total} bytes in {elapsed:?}"
    );
}
