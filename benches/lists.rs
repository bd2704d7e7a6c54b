//! LINDEX and LRANGE on long lists, on every format: array-model formats
//! (kvrocks, blackwidow) address an element by its index, the linked model
//! (nemo) walks the links from the nearer end. Each group is one read; each
//! benchmark id is `<format>/<list length>`.
//!
//! - `LINDEX head` (index 0), `LINDEX middle` (len / 2), `LINDEX tail` (-1);
//! - `LRANGE head 100` (0..99), `LRANGE middle 100` (len / 2 ..+99);
//! - `LRANGE all` (0..-1) for the lengths up to 10,000.
//!
//! Run with `cargo bench --bench lists` (a few minutes: sample sizes are
//! small, and building the 100,000-element lists takes a while).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use redcodec::engine::{Engine, EngineOptions, Reply};
use redcodec::formats::{AnyCodec, Format, FormatOptions};

mod support;

/// List lengths.
const LENGTHS: [usize; 3] = [1_000, 10_000, 100_000];
/// The longest list `LRANGE all` reads.
const ALL_UP_TO: usize = 10_000;

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// A store of `format` holding one list per length in [`LENGTHS`], named
/// `l<len>`, whose elements are their own indexes.
fn filled(format: Format) -> (tempfile::TempDir, Engine<AnyCodec>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let codec = format.codec(&FormatOptions::default()).expect("codec");
    let engine = Engine::open(codec, dir.path(), EngineOptions::default()).expect("open");
    for len in LENGTHS {
        let key = format!("l{len}").into_bytes();
        for chunk in (0..len).collect::<Vec<_>>().chunks(1000) {
            let mut args = vec![b("RPUSH"), key.clone()];
            args.extend(chunk.iter().map(|i| i.to_string().into_bytes()));
            let reply = engine.execute(&args);
            assert!(!reply.is_error(), "{reply}");
        }
    }
    (dir, engine)
}

/// The reads: (group name, arguments after the key for a list of `len`,
/// the first element expected).
fn reads(len: usize) -> Vec<(&'static str, Vec<String>, usize)> {
    let mid = len / 2;
    let mut out = vec![
        ("LINDEX head", vec!["LINDEX".into(), "0".into()], 0),
        ("LINDEX middle", vec!["LINDEX".into(), mid.to_string()], mid),
        ("LINDEX tail", vec!["LINDEX".into(), "-1".into()], len - 1),
        (
            "LRANGE head 100",
            vec!["LRANGE".into(), "0".into(), "99".into()],
            0,
        ),
        (
            "LRANGE middle 100",
            vec!["LRANGE".into(), mid.to_string(), (mid + 99).to_string()],
            mid,
        ),
    ];
    if len <= ALL_UP_TO {
        out.push((
            "LRANGE all",
            vec!["LRANGE".into(), "0".into(), "-1".into()],
            0,
        ));
    }
    out
}

/// The first element of a reply: a bulk, or an array's first bulk.
fn first(reply: &Reply) -> Option<&[u8]> {
    match reply {
        Reply::Bulk(v) => Some(v),
        Reply::Array(items) => match items.first() {
            Some(Reply::Bulk(v)) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

fn lists(c: &mut Criterion) {
    let stores: Vec<(Format, tempfile::TempDir, Engine<AnyCodec>)> = Format::ALL
        .iter()
        .map(|&f| {
            let (dir, engine) = filled(f);
            (f, dir, engine)
        })
        .collect();
    let groups: Vec<&str> = reads(ALL_UP_TO).into_iter().map(|r| r.0).collect();
    for group_name in groups {
        let mut group = c.benchmark_group(group_name);
        for (format, _, engine) in &stores {
            for len in LENGTHS {
                let Some((_, words, expected)) = reads(len).into_iter().find(|r| r.0 == group_name)
                else {
                    continue;
                };
                let mut args = vec![
                    words[0].clone().into_bytes(),
                    format!("l{len}").into_bytes(),
                ];
                args.extend(words[1..].iter().map(|w| w.clone().into_bytes()));
                // The read returns what the list holds, on every format.
                let reply = engine.execute(&args);
                assert_eq!(
                    first(&reply),
                    Some(expected.to_string().as_bytes()),
                    "{format} {group_name} {len}"
                );
                group.bench_function(BenchmarkId::new(format.name(), len), |bench| {
                    bench.iter(|| engine.execute(&args));
                });
            }
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = support::quick(Duration::from_millis(500));
    targets = lists
}
criterion_main!(benches);
