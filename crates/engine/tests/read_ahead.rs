//! `Store::read_ahead`: a family read on a thread of its own hands over
//! the pairs a plain scan reads, in the same order, over many chunks;
//! `skip_to` lands where a seek lands (in the family's own order, a
//! comparator of its own included); a range read ahead is the range
//! scanned; and a walk that stops early ends its reader.

use std::cmp::Ordering;

use redcodec_codec::{Codec, KeyRange, Place};
use redcodec_engine::store::{Pair, ReadAhead, Store, StoreIter};
use redcodec_engine::{Engine, EngineOptions, OpenMode};
use redcodec_formats::{AnyCodec, Format, FormatOptions};

/// A store of `format` holding a few hundred thousand bytes in every
/// kind of record, several chunks' worth in its biggest families.
fn filled(format: Format) -> (tempfile::TempDir, Engine<AnyCodec>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let codec = format.codec(&FormatOptions::default()).expect("codec");
    let options = EngineOptions {
        mode: OpenMode::CreateIfMissing,
        ..EngineOptions::default()
    };
    let engine = Engine::open(codec, dir.path(), options).expect("engine");
    let value = "v".repeat(100);
    for round in 0..40 {
        let mut hset = vec!["HSET".to_string(), format!("hash{}", round % 3)];
        let mut zadd = vec!["ZADD".to_string(), "zset".to_string()];
        let mut rpush = vec!["RPUSH".to_string(), "list".to_string()];
        for i in 0..250 {
            let n = round * 250 + i;
            hset.extend([format!("field{n:06}"), value.clone()]);
            zadd.extend([format!("{}", n % 977), format!("member{n:06}")]);
            rpush.push(format!("{n}"));
        }
        for words in [&hset, &zadd, &rpush] {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            assert!(!engine.execute(&words).is_error(), "{}", words[0]);
        }
        let key = format!("string{round}");
        assert!(!engine.execute(&["SET", &key, &value]).is_error());
    }
    (dir, engine)
}

fn drain_scan(mut it: StoreIter<'_>) -> Vec<Pair> {
    let mut pairs = Vec::new();
    while let Some(pair) = it.next().expect("scan") {
        pairs.push(pair);
    }
    pairs
}

fn drain(ahead: &mut ReadAhead) -> Vec<Pair> {
    let mut pairs = Vec::new();
    while let Some((key, value)) = ahead.next_ref().expect("read ahead") {
        pairs.push((key.to_vec(), value.to_vec()));
    }
    pairs
}

fn places(store: &Store) -> Vec<Place> {
    store.layout().places().collect()
}

#[test]
fn every_family_read_ahead_is_the_family_scanned() {
    // Blackwidow: five instances; floyd and ardb: families ordered by a
    // comparator of their own.
    for format in [
        Format::Kvrocks,
        Format::Blackwidow,
        Format::Floyd,
        Format::Ardb,
    ] {
        let (_dir, engine) = filled(format);
        let store = engine.store();
        let mut biggest = 0;
        for place in places(store) {
            let scanned = drain_scan(store.scan_family(place));
            let ahead = std::thread::scope(|scope| drain(&mut store.read_ahead(scope, place)));
            assert_eq!(ahead, scanned, "{format:?} {place:?}");
            biggest = biggest.max(scanned.iter().map(|(k, v)| k.len() + v.len()).sum());
        }
        // More than two chunks (256 KiB each) in one family: chunks
        // follow chunks.
        assert!(biggest > 2 * 256 * 1024, "{format:?}: {biggest} bytes");
    }
}

#[test]
fn skip_to_lands_where_a_seek_lands() {
    for format in [Format::Kvrocks, Format::Floyd, Format::Ardb] {
        let (_dir, engine) = filled(format);
        let store = engine.store();
        for place in places(store) {
            let scanned = drain_scan(store.scan_family(place));
            let order = store.order(place);
            // Targets: every 997th key, a key between two, and one past
            // the end.
            let mut targets: Vec<Vec<u8>> =
                scanned.iter().step_by(997).map(|p| p.0.clone()).collect();
            if let Some((key, _)) = scanned.get(1) {
                let mut between = key.clone();
                between.push(0);
                targets.push(between);
            }
            targets.push(vec![0xFF; 300]);
            targets.sort_by(|a, b| order(a, b));
            std::thread::scope(|scope| {
                let mut ahead = store.read_ahead(scope, place);
                for target in &targets {
                    ahead.skip_to(target, order).expect("skip");
                    let mut seek = store.scan_family(place);
                    seek.seek(target);
                    let expected = seek.next().expect("seek");
                    let got = ahead
                        .next_ref()
                        .expect("next")
                        .map(|(k, v)| (k.to_vec(), v.to_vec()));
                    assert_eq!(got, expected, "{format:?} {place:?}");
                    if let Some((key, _)) = &got {
                        assert_ne!(order(key, target), Ordering::Less);
                    }
                }
            });
        }
    }
}

#[test]
fn a_range_read_ahead_is_the_range_scanned() {
    let (_dir, engine) = filled(Format::Kvrocks);
    let store = engine.store();
    for (range, _) in engine.codec().meta_ranges() {
        let scanned = drain_scan(store.scan(&range, None, false));
        assert!(!scanned.is_empty());
        let ahead = std::thread::scope(|scope| drain(&mut store.read_ahead_range(scope, &range)));
        assert_eq!(ahead, scanned);
    }
    // A range cut in the middle of a family.
    let place = places(store)
        .into_iter()
        .max_by_key(|p| drain_scan(store.scan_family(*p)).len())
        .expect("a family");
    let all = drain_scan(store.scan_family(place));
    let range = KeyRange {
        place,
        lower: all[all.len() / 3].0.clone(),
        upper: all[2 * all.len() / 3].0.clone(),
    };
    let ahead = std::thread::scope(|scope| drain(&mut store.read_ahead_range(scope, &range)));
    assert_eq!(ahead, all[all.len() / 3..2 * all.len() / 3]);
}

#[test]
fn a_walk_that_stops_early_ends_its_reader() {
    let (_dir, engine) = filled(Format::Kvrocks);
    let store = engine.store();
    // The scope waits for the readers: it returns only if each stops
    // once its walk drops it, with chunks still unread.
    let firsts = std::thread::scope(|scope| {
        places(store)
            .into_iter()
            .map(|place| {
                let mut ahead = store.read_ahead(scope, place);
                ahead.next_ref().expect("first").map(|(k, _)| k.to_vec())
            })
            .collect::<Vec<_>>()
    });
    let expected: Vec<Option<Vec<u8>>> = places(store)
        .into_iter()
        .map(|place| store.scan_family(place).next().expect("first").map(|p| p.0))
        .collect();
    assert_eq!(firsts, expected);
}
