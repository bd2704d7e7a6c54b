//! A group over a store reads as the store with the group's batches
//! written in turn, and commits to the same contents: random writes,
//! point reads and scans (forward, reverse, from a key, after a seek) on
//! a bytewise family and on one with a comparator of its own.

use std::cmp::Ordering;

use proptest::prelude::*;
use redcodec_codec::{CfSpec, ComparatorSpec, GcRule, InstanceSpec, KeyRange, Layout, Place};

use crate::{Batch, Group, KvIter, KvStore, MemStore};

/// Reversed bytewise order: a comparator that is not RocksDB's.
fn reversed(a: &[u8], b: &[u8]) -> Ordering {
    b.cmp(a)
}

fn layout() -> Layout {
    let cf = |name, comparator| CfSpec {
        name,
        comparator,
        gc: GcRule::KeepAll,
        merge: None,
        created_on_first_write: false,
    };
    Layout {
        instances: vec![
            InstanceSpec {
                dir: "db",
                column_families: vec![
                    cf("default", None),
                    cf(
                        "reversed",
                        Some(ComparatorSpec {
                            name: "test.reversed",
                            compare: reversed,
                        }),
                    ),
                ],
                refused: &[],
                other_families: None,
            },
            InstanceSpec {
                dir: "second",
                column_families: vec![cf("default", None)],
                refused: &[],
                other_families: None,
            },
        ],
    }
}

const PLACES: [Place; 3] = [Place::new(0, 0), Place::new(0, 1), Place::new(1, 0)];

#[derive(Clone, Debug)]
enum W {
    Put(usize, Vec<u8>, Vec<u8>),
    Delete(usize, Vec<u8>),
    DeleteRange(usize, Vec<u8>, Vec<u8>),
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(proptest::sample::select(b"abcd".to_vec()), 0..3)
}

fn write() -> impl Strategy<Value = W> {
    let place = 0..PLACES.len();
    prop_oneof![
        4 => (place.clone(), key(), key()).prop_map(|(p, k, v)| W::Put(p, k, v)),
        2 => (place.clone(), key()).prop_map(|(p, k)| W::Delete(p, k)),
        1 => (place, key(), key()).prop_map(|(p, a, b)| W::DeleteRange(p, a, b)),
    ]
}

fn batch(writes: &[W]) -> Batch {
    let mut b = Batch::default();
    for w in writes {
        match w.clone() {
            W::Put(p, k, v) => b.put(PLACES[p], k, v),
            W::Delete(p, k) => b.delete(PLACES[p], k),
            W::DeleteRange(p, lower, upper) => b.delete_range(&KeyRange {
                place: PLACES[p],
                lower,
                upper,
            }),
        }
    }
    b
}

fn drain(it: &mut impl KvIter) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some(pair) = it.next().unwrap() {
        out.push(pair);
    }
    out
}

/// A scan to compare: place, bounds, `from`, direction, and a seek made
/// after reading `seek_after` pairs.
#[derive(Clone, Debug)]
struct Scan {
    place: usize,
    lower: Vec<u8>,
    upper: Vec<u8>,
    from: Option<Vec<u8>>,
    reverse: bool,
    seek: Option<(usize, Vec<u8>)>,
}

fn scan() -> impl Strategy<Value = Scan> {
    (
        0..PLACES.len(),
        key(),
        key(),
        proptest::option::of(key()),
        any::<bool>(),
        proptest::option::of((0usize..3, key())),
    )
        .prop_map(|(place, lower, upper, from, reverse, seek)| Scan {
            place,
            lower,
            upper,
            from,
            reverse,
            seek,
        })
}

fn run_scan<I: KvIter>(mut it: I, s: &Scan) -> Vec<(Vec<u8>, Vec<u8>)> {
    let Some((after, to)) = &s.seek else {
        return drain(&mut it);
    };
    let mut out = Vec::new();
    for _ in 0..*after {
        match it.next().unwrap() {
            Some(pair) => out.push(pair),
            None => break,
        }
    }
    it.seek(to);
    out.push((b"<seek>".to_vec(), Vec::new()));
    out.extend(drain(&mut it));
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_group_reads_and_commits_as_its_batches_in_turn(
        base in proptest::collection::vec(write(), 0..12),
        batches in proptest::collection::vec(proptest::collection::vec(write(), 0..6), 0..6),
        scans in proptest::collection::vec(scan(), 1..6),
    ) {
        let layout = layout();
        let store = MemStore::new(&layout);
        store.write(batch(&base)).unwrap();
        let expected = MemStore::new(&layout);
        expected.write(batch(&base)).unwrap();
        let mut group = Group::new();
        for writes in &batches {
            group.add(batch(writes), &store);
            expected.write(batch(writes)).unwrap();
        }
        for place in PLACES {
            for k in [&b""[..], b"a", b"b", b"ab", b"dd", b"ca"] {
                let got = match group.get(place, k) {
                    Some(decided) => decided.map(<[u8]>::to_vec),
                    None => store.get(place, k).unwrap(),
                };
                prop_assert_eq!(got, expected.get(place, k).unwrap(), "{:?} {:?}", place, k);
            }
        }
        for s in &scans {
            let range = KeyRange {
                place: PLACES[s.place],
                lower: s.lower.clone(),
                upper: s.upper.clone(),
            };
            let from = s.from.as_deref();
            let merged = group.scan(store.scan(&range, from, s.reverse), &range, from, s.reverse);
            let want = run_scan(expected.scan(&range, from, s.reverse), s);
            prop_assert_eq!(run_scan(merged, s), want, "{:?}", s);
        }
        store.write(group.into_batch()).unwrap();
        prop_assert_eq!(store.pairs(), expected.pairs());
    }
}

#[test]
fn a_range_deleted_then_written_again_keeps_the_new_writes() {
    let store = MemStore::new(&layout());
    let p = PLACES[1];
    store
        .write(batch(&[
            W::Put(1, b"a".to_vec(), b"1".to_vec()),
            W::Put(1, b"c".to_vec(), b"3".to_vec()),
        ]))
        .unwrap();
    let mut group = Group::new();
    // In the reversed family, [d, a) holds c and b, not a.
    group.add(
        batch(&[
            W::Put(1, b"b".to_vec(), b"2".to_vec()),
            W::DeleteRange(1, b"d".to_vec(), b"a".to_vec()),
            W::Put(1, b"c".to_vec(), b"new".to_vec()),
        ]),
        &store,
    );
    assert_eq!(group.get(p, b"b"), Some(None));
    assert_eq!(group.get(p, b"c"), Some(Some(&b"new"[..])));
    assert_eq!(group.get(p, b"a"), None);
    let all = KeyRange {
        place: p,
        lower: b"z".to_vec(),
        upper: Vec::new(),
    };
    let merged = group.scan(store.scan(&all, None, false), &all, None, false);
    let keys: Vec<Vec<u8>> = run_scan(
        merged,
        &Scan {
            place: 1,
            lower: Vec::new(),
            upper: Vec::new(),
            from: None,
            reverse: false,
            seek: None,
        },
    )
    .into_iter()
    .map(|(k, _)| k)
    .collect();
    assert_eq!(keys, [b"c".to_vec(), b"a".to_vec()]);
    // Nothing reached the store before the commit.
    assert_eq!(store.get(p, b"c").unwrap(), Some(b"3".to_vec()));
    store.write(group.into_batch()).unwrap();
    assert_eq!(store.get(p, b"c").unwrap(), Some(b"new".to_vec()));
    assert_eq!(store.get(p, b"a").unwrap(), Some(b"1".to_vec()));
}
