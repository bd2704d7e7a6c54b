//! Per-command cost on every format and on a raw RocksDB baseline, with
//! 16-byte and 1-KiB values.
//!
//! Each group is one command; each benchmark id is `<target>/<value size>`.
//! The raw baseline is a plain `rocksdb::DB` with default options: writes
//! are compared with `raw-put` of a new key, point reads with `raw-get`,
//! range reads (LRANGE 0 99, ZRANGEBYSCORE of 100) with `raw-scan100`, an
//! iterator over 100 consecutive keys.
//!
//! Run with `cargo bench --bench formats` (a few minutes: sample sizes are small).

use std::io::Write;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion};
use redcodec::engine::{Engine, EngineOptions};
use redcodec::formats::{AnyCodec, Format, FormatOptions};
use rocksdb::{Options, DB};

mod support;

const SIZES: [usize; 2] = [16, 1024];
/// String keys written before the reads.
const KEYS: usize = 10_000;
/// Elements of the list, hash, set and sorted set read from.
const LIST_LEN: usize = 10_000;
const COLL_LEN: usize = 1_000;

/// A numbering that never repeats (fresh keys or members on every run).
const FRESH: usize = usize::MAX;

/// Each benchmarked command line (`$value`: the value of the run's size),
/// the index of the argument [`set_counter`] numbers before each iteration
/// (if any), and the modulus of that numbering.
const WORKLOAD: [(&str, Option<usize>, usize); 13] = [
    ("SET new:0000000000 $value", Some(1), FRESH),
    ("GET s:0000000000", Some(1), KEYS),
    ("HSET hash nf:0000000000 $value", Some(2), FRESH),
    ("HGET hash f:0000000000", Some(2), COLL_LEN),
    ("LPUSH pushed $value", None, 0),
    // The middle of the list (LIST_LEN / 2).
    ("LINDEX list 5000", None, 0),
    ("LRANGE list 0 99", None, 0),
    ("SADD set nm:0000000000", Some(2), FRESH),
    ("SISMEMBER set m:0000000000", Some(2), COLL_LEN),
    ("ZADD zset 1000000000 nm:0000000000", Some(3), FRESH),
    ("ZRANGEBYSCORE zset 400 499", None, 0),
    ("ZRANK zset m:0000000000", Some(2), COLL_LEN),
    ("EXPIRE s:0000000000 1000000", Some(1), KEYS),
];
const _: () = assert!(LIST_LEN / 2 == 5000);

fn ok(engine: &Engine<AnyCodec>, args: &[Vec<u8>]) {
    let reply = engine.execute(args);
    assert!(!reply.is_error(), "{reply}");
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// A store with the data every read benchmark needs.
fn filled(format: Format, value: &[u8]) -> (tempfile::TempDir, Engine<AnyCodec>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let codec = format.codec(&FormatOptions::default()).expect("codec");
    let engine = Engine::open(codec, dir.path(), EngineOptions::default()).expect("open");
    for i in 0..KEYS {
        ok(
            &engine,
            &[b("SET"), format!("s:{i:010}").into_bytes(), value.to_vec()],
        );
    }
    for chunk in (0..LIST_LEN).collect::<Vec<_>>().chunks(1000) {
        let mut args = vec![b("RPUSH"), b("list")];
        args.extend(chunk.iter().map(|_| value.to_vec()));
        ok(&engine, &args);
    }
    let mut hset = vec![b("HSET"), b("hash")];
    let mut sadd = vec![b("SADD"), b("set")];
    let mut zadd = vec![b("ZADD"), b("zset")];
    for i in 0..COLL_LEN {
        hset.push(format!("f:{i:010}").into_bytes());
        hset.push(value.to_vec());
        sadd.push(format!("m:{i:010}").into_bytes());
        zadd.push(i.to_string().into_bytes());
        zadd.push(format!("m:{i:010}").into_bytes());
    }
    ok(&engine, &hset);
    ok(&engine, &sadd);
    ok(&engine, &zadd);
    (dir, engine)
}

/// Rewrites the 10 digits at the end of `buf` with `n`.
fn set_counter(buf: &mut [u8], n: usize) {
    let at = buf.len() - 10;
    write!(&mut buf[at..], "{:010}", n % 10_000_000_000).expect("10 digits");
}

/// The arguments of a [`WORKLOAD`] line.
fn args_of(line: &str, value: &[u8]) -> Vec<Vec<u8>> {
    line.split(' ')
        .map(|word| {
            if word == "$value" {
                value.to_vec()
            } else {
                b(word)
            }
        })
        .collect()
}

fn bench_format(
    group: &mut BenchmarkGroup<'_, WallTime>,
    (line, numbered, modulus): (&str, Option<usize>, usize),
    engine: &Engine<AnyCodec>,
    name: &str,
    size: usize,
    value: &[u8],
) {
    let mut args = args_of(line, value);
    let mut n = 0usize;
    group.bench_function(BenchmarkId::new(name, size), |bench| {
        bench.iter(|| {
            if let Some(at) = numbered {
                set_counter(&mut args[at], n % modulus);
                n += 1;
            }
            let reply = engine.execute(&args);
            debug_assert!(!reply.is_error());
            reply
        });
    });
}

fn bench_raw(
    group: &mut BenchmarkGroup<'_, WallTime>,
    command: &str,
    db: &DB,
    size: usize,
    value: &[u8],
) {
    let write = matches!(
        command,
        "SET" | "HSET" | "LPUSH" | "SADD" | "ZADD" | "EXPIRE"
    );
    let range = matches!(command, "LRANGE" | "ZRANGEBYSCORE");
    let mut key = b("new:0000000000");
    let mut read_key = b("s:0000000000");
    let mut n = 0usize;
    if write {
        group.bench_function(BenchmarkId::new("raw-put", size), |bench| {
            bench.iter(|| {
                set_counter(&mut key, n);
                n += 1;
                db.put(&key, value).expect("put");
            });
        });
    } else if range {
        group.bench_function(BenchmarkId::new("raw-scan100", size), |bench| {
            bench.iter(|| {
                set_counter(&mut read_key, (n * 7919) % (KEYS - 100));
                n += 1;
                let mut it = db.raw_iterator();
                it.seek(&read_key);
                let mut bytes = 0usize;
                for _ in 0..100 {
                    bytes += it.value().map_or(0, <[u8]>::len);
                    it.next();
                }
                bytes
            });
        });
    } else {
        group.bench_function(BenchmarkId::new("raw-get", size), |bench| {
            bench.iter(|| {
                set_counter(&mut read_key, (n * 7919) % KEYS);
                n += 1;
                db.get(&read_key).expect("get").expect("present")
            });
        });
    }
}

fn formats(c: &mut Criterion) {
    for size in SIZES {
        let value: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
        let stores: Vec<(Format, tempfile::TempDir, Engine<AnyCodec>)> = Format::ALL
            .iter()
            .map(|&f| {
                let (dir, engine) = filled(f, &value);
                (f, dir, engine)
            })
            .collect();
        let raw_dir = tempfile::tempdir().expect("tempdir");
        let mut opts = Options::default();
        opts.create_if_missing(true);
        let db = DB::open(&opts, raw_dir.path()).expect("raw open");
        for i in 0..KEYS {
            db.put(format!("s:{i:010}"), &value).expect("put");
        }
        for step in WORKLOAD {
            let command = step.0.split(' ').next().expect("a command");
            let mut group = c.benchmark_group(command);
            for (format, _, engine) in &stores {
                bench_format(&mut group, step, engine, format.name(), size, &value);
            }
            bench_raw(&mut group, command, &db, size, &value);
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = support::quick(Duration::from_millis(400));
    targets = formats
}
criterion_main!(benches);
