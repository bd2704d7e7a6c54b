//! Whole RDB files that redis-server 7.0 SAVEd, read back key by key and
//! compared with what the same server answers for each key (its DUMP
//! payload, decoded, and PEXPIRETIME); then the same file cut short, with a
//! byte flipped, with its checksum wrong: always an error naming an offset,
//! never a panic.
//!
//! Needs `redis-server` on PATH. Without it the test is reported as
//! skipped, unless `REDCODEC_REQUIRE_REDIS=1` (set by CI), where it fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redcodec_rdb::file_reader::{validate, Entry, RdbFileError, RdbFileReader};
use redcodec_rdb::{decode_payload, Value};

/// A RESP reply, as much of it as these tests read.
#[derive(Debug, PartialEq)]
enum Resp {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Resp>),
}

fn read_reply(r: &mut BufReader<TcpStream>) -> Resp {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line).unwrap();
    let text = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
    match line[0] {
        b'+' => Resp::Status(text),
        b'-' => Resp::Error(text),
        b':' => Resp::Int(text.parse().unwrap()),
        b'$' => {
            let n: i64 = text.parse().unwrap();
            if n < 0 {
                return Resp::Bulk(None);
            }
            let mut buf = vec![0u8; n as usize + 2];
            r.read_exact(&mut buf).unwrap();
            buf.truncate(n as usize);
            Resp::Bulk(Some(buf))
        }
        b'*' => {
            let n: i64 = text.parse().unwrap();
            Resp::Array((0..n.max(0)).map(|_| read_reply(r)).collect())
        }
        other => panic!("unexpected reply type {other}"),
    }
}

/// A redis-server with its data directory, stopped on drop.
struct Redis {
    child: Child,
    conn: BufReader<TcpStream>,
}

impl Redis {
    fn start(dir: &Path) -> Option<Redis> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--dbfilename",
                "dump.rdb",
            ])
            .arg("--dir")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(e) => {
                unavailable(&format!("redis-server does not start: {e}"));
                return None;
            }
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
                s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
                let mut r = Redis {
                    child,
                    conn: BufReader::new(s),
                };
                assert_eq!(r.cmd(&[b"PING"]), Resp::Status("PONG".into()));
                return Some(r);
            }
            assert!(Instant::now() < deadline, "redis-server never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn cmd(&mut self, args: &[&[u8]]) -> Resp {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.conn.get_mut().write_all(&out).unwrap();
        read_reply(&mut self.conn)
    }

    fn ok(&mut self, args: &[&[u8]]) {
        let reply = self.cmd(args);
        assert!(
            !matches!(reply, Resp::Error(_)),
            "{:?}: {reply:?}",
            String::from_utf8_lossy(&args.concat())
        );
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Fails under `REDCODEC_REQUIRE_REDIS=1`, else reports the skip (stderr
/// and the skip log `scripts/test` reads).
fn unavailable(reason: &str) {
    let test = "RDB files saved by redis-server";
    if std::env::var("REDCODEC_REQUIRE_REDIS").is_ok_and(|v| v == "1") {
        panic!("{test} cannot run (REDCODEC_REQUIRE_REDIS=1): {reason}");
    }
    eprintln!("SKIPPED: {test}: {reason}");
    if let Ok(path) = std::env::var("REDCODEC_SKIP_LOG") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{test}: {reason}");
        }
    }
}

/// Fills redis-server with every encoding Redis 7.0 saves for the five
/// types, in two databases, some keys with an expiry, and a function
/// library (FUNCTION2, which the reader skips).
fn fill(redis: &mut Redis) {
    let long_text = "redcodec ".repeat(40);
    let numbers: Vec<String> = (0..600).map(|i| (i * 7 - 300).to_string()).collect();
    let words: Vec<String> = (0..300).map(|i| format!("word-{i}")).collect();
    // Strings: raw, 8/16/32-bit integers, a 64-bit integer (raw), LZF.
    redis.ok(&[b"SET", b"s:raw", b"hello world"]);
    redis.ok(&[b"SET", b"s:int8", b"-12"]);
    redis.ok(&[b"SET", b"s:int16", b"3000"]);
    redis.ok(&[b"SET", b"s:int32", b"-2000000000"]);
    redis.ok(&[b"SET", b"s:int64", b"9000000000000000000"]);
    redis.ok(&[b"SET", b"s:lzf", long_text.as_bytes()]);
    redis.ok(&[b"SET", b"s:empty", b""]);
    redis.ok(&[b"SET", b"s:ttl", b"v", b"PX", b"3600000"]);
    // Lists: one listpack node; many nodes; a compressible element.
    redis.ok(&[b"RPUSH", b"l:small", b"a", b"1", b"", b"-5"]);
    for chunk in words.chunks(100) {
        let mut args: Vec<&[u8]> = vec![b"RPUSH", b"l:big"];
        args.extend(chunk.iter().map(String::as_bytes));
        args.push(long_text.as_bytes());
        redis.ok(&args);
    }
    redis.ok(&[b"EXPIRE", b"l:big", b"7200"]);
    // Sets: intset (narrow and wide), hashtable by strings, by size.
    redis.ok(&[b"SADD", b"set:int16", b"1", b"2", b"-300"]);
    redis.ok(&[b"SADD", b"set:int64", b"1", b"5000000000"]);
    redis.ok(&[b"SADD", b"set:strings", b"x", b"y", b"z"]);
    let mut args: Vec<&[u8]> = vec![b"SADD", b"set:big"];
    args.extend(numbers.iter().map(String::as_bytes));
    redis.ok(&args);
    // Sorted sets: listpack (integer and fractional scores), skiplist.
    redis.ok(&[b"ZADD", b"z:small", b"1", b"a", b"2.5", b"b", b"-inf", b"c"]);
    let mut zargs: Vec<Vec<u8>> = vec![b"ZADD".to_vec(), b"z:big".to_vec()];
    for (i, w) in words.iter().enumerate() {
        zargs.push(format!("{}", i as f64 / 3.0).into_bytes());
        zargs.push(w.clone().into_bytes());
    }
    redis.ok(&zargs.iter().map(Vec::as_slice).collect::<Vec<_>>());
    redis.ok(&[b"ZADD", b"z:long", b"1", long_text.as_bytes()]);
    // Hashes: listpack, hashtable by size and by value length.
    redis.ok(&[b"HSET", b"h:small", b"f", b"v", b"n", b"12"]);
    let mut hargs: Vec<Vec<u8>> = vec![b"HSET".to_vec(), b"h:big".to_vec()];
    for w in &words {
        hargs.push(w.clone().into_bytes());
        hargs.push(format!("value of {w}").into_bytes());
    }
    redis.ok(&hargs.iter().map(Vec::as_slice).collect::<Vec<_>>());
    redis.ok(&[b"HSET", b"h:long", b"f", long_text.as_bytes()]);
    redis.ok(&[b"PEXPIREAT", b"h:long", b"4102444800000"]);
    // Another database.
    redis.ok(&[b"SELECT", b"3"]);
    redis.ok(&[b"SET", b"s:raw", b"in db 3"]);
    redis.ok(&[b"RPUSH", b"l:db3", b"x"]);
    redis.ok(&[b"SELECT", b"0"]);
    redis.ok(&[
        b"FUNCTION",
        b"LOAD",
        b"#!lua name=replib\nredis.register_function('one', function() return 1 end)",
    ]);
}

/// Every key of database `db` as redis-server holds it: the value (its
/// DUMP, decoded) and PEXPIRETIME.
fn redis_keys(redis: &mut Redis, db: u64) -> Vec<(Vec<u8>, Value, Option<i64>)> {
    redis.ok(&[b"SELECT", db.to_string().as_bytes()]);
    let Resp::Array(keys) = redis.cmd(&[b"KEYS", b"*"]) else {
        panic!("KEYS")
    };
    let mut out = Vec::new();
    for k in keys {
        let Resp::Bulk(Some(key)) = k else { panic!() };
        let Resp::Bulk(Some(payload)) = redis.cmd(&[b"DUMP", &key]) else {
            panic!("DUMP")
        };
        let value = decode_payload(&payload).unwrap().canonical();
        let Resp::Int(at) = redis.cmd(&[b"PEXPIRETIME", &key]) else {
            panic!("PEXPIRETIME")
        };
        out.push((key, value, (at >= 0).then_some(at)));
    }
    redis.ok(&[b"SELECT", b"0"]);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn read_all(bytes: &[u8]) -> Result<Vec<Entry>, RdbFileError> {
    RdbFileReader::new(bytes)?.collect()
}

#[test]
fn redis_server_save_files_read_back_equal_and_faults_are_errors() {
    let tmp = std::env::temp_dir().join(format!("redcodec-rdbfile-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let Some(mut redis) = Redis::start(&tmp) else {
        return;
    };
    fill(&mut redis);
    redis.ok(&[b"SAVE"]);
    let file = std::fs::read(tmp.join("dump.rdb")).unwrap();
    let want: Vec<_> = [0, 3]
        .into_iter()
        .flat_map(|db| {
            redis_keys(&mut redis, db)
                .into_iter()
                .map(move |(k, v, e)| (db, k, v, e))
        })
        .collect();
    drop(redis);
    let _ = std::fs::remove_dir_all(&tmp);

    let mut reader = RdbFileReader::new(file.as_slice()).unwrap();
    assert_eq!(reader.version(), 10);
    let mut got: Vec<_> = reader
        .by_ref()
        .map(|e| {
            let e = e.unwrap();
            // The payload RESTORE would take decodes to the same value.
            assert_eq!(decode_payload(&e.dump_payload()).unwrap(), e.value);
            (e.db, e.key, e.value.canonical(), e.expire_ms)
        })
        .collect();
    got.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    assert!(reader.checksum_checked(), "the CRC64 was verified");
    assert_eq!(reader.skipped_functions(), 1, "the function library");
    assert_eq!(
        reader.aux_field("redis-ver"),
        Some(b"7.0.15".as_slice()),
        "AUX fields"
    );
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "key {:?}", String::from_utf8_lossy(&w.1));
    }
    assert!(
        got.iter().any(|g| g.3.is_some()),
        "some keys carry an expiry"
    );
    assert_eq!(validate(file.as_slice()).unwrap(), want.len() as u64);

    // Every truncation is an error (never a panic, never a clean end).
    for cut in 0..file.len() {
        let r = read_all(&file[..cut]);
        assert!(r.is_err(), "cut at {cut} read as complete");
    }
    // A flipped byte anywhere past the signature is an error: the CRC, if
    // nothing else, catches it.
    for at in (9..file.len() - 8).step_by(7) {
        let mut bad = file.clone();
        bad[at] ^= 0x5a;
        assert!(read_all(&bad).is_err(), "byte {at} flipped read as valid");
    }
    // The checksum itself.
    let mut bad = file.clone();
    let n = bad.len();
    bad[n - 1] ^= 1;
    match read_all(&bad) {
        Err(RdbFileError::Checksum { offset, .. }) => assert_eq!(offset, n as u64 - 8),
        other => panic!("wrong checksum: {other:?}"),
    }
    // Saved with `rdbchecksum no`: a zero checksum is not checked.
    let mut unchecked = file.clone();
    unchecked[n - 8..].fill(0);
    assert_eq!(read_all(&unchecked).unwrap().len(), want.len());
}
