//! DEL of a hash is constant-time on version-based formats: the time to
//! delete a hash of 1,000 fields and of 1,000,000 fields should be flat.
//!
//! Each size is filled once; after every timed DEL the hash's metadata
//! record is put back (untimed), which restores the hash on formats that
//! delete by dropping or resetting metadata. Ardb, which removes the
//! elements themselves (one range delete from 100 fields), is not timed
//! here: restoring its metadata would not restore its fields.
//! `tests/ardb_store.rs` checks that its DEL is one range delete.
//!
//! Run with `cargo bench --bench del_big_hash`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use redcodec::codec::{Codec, DataType, DeleteModel};
use redcodec::engine::store::Batch;
use redcodec::engine::{Engine, EngineOptions, ManualClock};
use redcodec::formats::{AnyCodec, Format, FormatOptions};

/// Writes a hash of `n` fields in commands of 1,000 fields.
fn fill(engine: &Engine<AnyCodec>, key: &[u8], n: usize) {
    for start in (0..n).step_by(1000) {
        let fields = (start..(start + 1000).min(n)).flat_map(|i| {
            [
                format!("field:{i:08}").into_bytes(),
                b"0123456789abcdef".to_vec(),
            ]
        });
        let args: Vec<Vec<u8>> = [b"HSET".to_vec(), key.to_vec()]
            .into_iter()
            .chain(fields)
            .collect();
        let reply = engine.execute(&args);
        assert!(!reply.is_error(), "{reply}");
    }
}

fn del_big_hash(c: &mut Criterion) {
    let mut group = c.benchmark_group("del_hash");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(100));
    for &format in Format::ALL {
        let codec = format.codec(&FormatOptions::default()).expect("codec");
        // Each iteration restores the metadata record DEL removed. That
        // re-creates the hash only where elements outlive their metadata
        // (versioned formats); a format that deletes the elements
        // themselves (Ardb's range delete) would be timed on an empty
        // hash piling up range tombstones, so it is left out here.
        if matches!(
            codec.capabilities().delete,
            DeleteModel::RemoveElements { .. }
        ) {
            continue;
        }
        for &fields in &[1_000usize, 10_000, 100_000, 1_000_000] {
            let dir = tempfile::tempdir().expect("tempdir");
            let clock = Arc::new(ManualClock::at_ms(1_700_000_000_000));
            let codec = codec.clone();
            let engine = Engine::open(codec, dir.path(), EngineOptions::with_clock(clock.clone()))
                .expect("open");
            let key = b"big".to_vec();
            fill(&engine, &key, fields);
            let record = engine
                .codec()
                .meta_record(&key, DataType::Hash)
                .expect("key");
            let saved = engine
                .store()
                .get(record.place, &record.key)
                .expect("read")
                .expect("hash exists");
            group.bench_with_input(BenchmarkId::new(format.name(), fields), &fields, |b, _| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let started = Instant::now();
                        let reply = engine.execute(&[b"DEL".to_vec(), key.clone()]);
                        total += started.elapsed();
                        assert_eq!(reply, redcodec::Reply::Integer(1));
                        let mut restore = Batch::default();
                        restore.put(record.place, record.key.clone(), saved.clone());
                        engine.store().write(restore).expect("restore");
                    }
                    total
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, del_big_hash);
criterion_main!(benches);
