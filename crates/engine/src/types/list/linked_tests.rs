//! The linked list model on the nemo format: the stored chain after every
//! operation (links, ends, size, sequence numbers), random operations
//! against an in-memory list, and corrupt links.

use std::collections::{BTreeMap, VecDeque};

use redcodec_codec::{
    Codec, DataType, ListBounds, SubId, SubIdRef, SubKind, SubValue, SubValueRef,
};
use redcodec_nemo::NemoCodec;

use crate::cmd::testkit::TestEngine;
use crate::keyspace::Ctx;
use crate::reply::Reply;
use crate::store::Store;

/// A nemo store in a temporary directory on a manual clock.
type NemoEngine = TestEngine<Store, NemoCodec>;

fn nemo() -> NemoEngine {
    TestEngine::of(NemoCodec::new())
}

/// A stored node: `(prev, next, value)`.
type StoredNode = (i64, i64, Vec<u8>);

/// Checks the stored chain of list `key` and returns its values in order:
/// the ends, links and size agree, every current node of the key is on
/// the chain, and every sequence number is below `next_seq`.
fn chain(t: &NemoEngine, key: &str) -> Vec<String> {
    let ctx = Ctx::new(&t.engine);
    let Some(meta) = ctx.typed(key.as_bytes(), DataType::List).unwrap() else {
        return Vec::new();
    };
    let Some((left, right, next_seq)) = meta.list.linked() else {
        panic!("not a linked list: {:?}", meta.list);
    };
    let nodes: BTreeMap<i64, StoredNode> = ctx
        .subs(SubKind::ListItem, key.as_bytes(), &meta, None, false)
        .map(|r| match r.unwrap() {
            (SubId::Seq(seq), SubValue::Node { prev, next, value }) => (seq, (prev, next, value)),
            other => panic!("unexpected record {other:?}"),
        })
        .collect();
    assert_eq!(nodes.len() as u64, meta.size, "{key}: one node per element");
    assert!(nodes.keys().all(|&s| 0 < s && s < next_seq), "{key}: seqs");
    let mut out = Vec::new();
    let (mut prev, mut at) = (0, left);
    while at != 0 {
        let (p, n, v) = nodes
            .get(&at)
            .unwrap_or_else(|| panic!("{key}: no node {at}"));
        assert_eq!(*p, prev, "{key}: node {at} links back");
        out.push(String::from_utf8(v.clone()).unwrap());
        assert!(out.len() <= nodes.len(), "{key}: a cycle");
        prev = at;
        at = *n;
    }
    assert_eq!(prev, right, "{key}: the last node is the right end");
    assert_eq!(out.len(), nodes.len(), "{key}: every node is on the chain");
    out
}

/// Replays a redis-cli transcript (see [`TestEngine::script`]) whose
/// `@state key values…` lines check the stored chain (see [`chain`]).
fn replay(t: &NemoEngine, transcript: &str) {
    t.script_with(transcript, |line| {
        let (key, values) = line.split_once(' ').unwrap_or((line, ""));
        assert_eq!(chain(t, key), words(values), "{line}");
    });
}

fn words(s: &str) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    s.split(' ').map(String::from).collect()
}

#[test]
fn pushes_pops_and_rotations_keep_one_chain() {
    let t = nemo();
    replay(
        &t,
        r#"
            === pushes pops and rotations keep one chain
            > RPUSH l a b c
            (integer) 3
            @state l a b c
            > LPUSH l y z
            (integer) 5
            @state l z y a b c
            > RPOP l 2
            1) "c"
            2) "b"
            @state l z y a
            > LMOVE l l RIGHT LEFT
            "a"
            @state l a z y
            > RPOPLPUSH l l
            "y"
            @state l y a z
            > LMOVE l l LEFT LEFT
            "y"
            > LMOVE l other LEFT RIGHT
            "y"
            @state l a z
            @state other y
            > LMOVE l l LEFT RIGHT
            "a"
            @state l z a
            > LSET l 1 b
            OK
            > LSET l -2 c
            OK
            @state l c b
        "#,
    );
    t.script(
        r#"
            === pushes pops and rotations keep one chain
            > LPOP l 2
            1) "c"
            2) "b"
            > EXISTS l
            (integer) 0
            # An emptied list starts again at seq 1, as nemo's ListMeta() does.
            > RPUSH l n
            (integer) 1
        "#,
    );
    let ctx = Ctx::new(&t.engine);
    let meta = ctx.typed(b"l", DataType::List).unwrap().unwrap();
    assert_eq!(
        meta.list,
        ListBounds::Linked {
            left: 1,
            right: 1,
            next_seq: 2
        }
    );
}

#[test]
fn linsert_lrem_and_ltrim_relink_neighbours() {
    let t = nemo();
    t.script(
        r#"
            === linsert lrem and ltrim relink neighbours
            > RPUSH l a b c d e
            (integer) 5
            > LINSERT l BEFORE a x
            (integer) 6
            > LINSERT l AFTER e y
            (integer) 7
            > LINSERT l AFTER b x
            (integer) 8
        "#,
    );
    replay(
        &t,
        r#"
            === linsert lrem and ltrim relink neighbours
            @state l x a b x c d e y
            # Neighbouring matches, from the tail, with a limit.
            > RPUSH m a x x b x x c
            (integer) 7
            > LREM m -3 x
            (integer) 3
            @state m a x b c
            > LREM l 0 x
            (integer) 2
            @state l a b c d e y
            # The ends themselves.
            > LREM l 1 a
            (integer) 1
            > LREM l -1 y
            (integer) 1
            @state l b c d e
            > LTRIM l 1 -2
            OK
            @state l c d
            > LTRIM l 1 1
            OK
            @state l d
            > LREM l 0 d
            (integer) 1
            > EXISTS l
            (integer) 0
        "#,
    );
}

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn random_operations_agree_with_an_in_memory_list() {
    let t = nemo();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut model: VecDeque<String> = VecDeque::new();
    let values = ["a", "b", "c", "d"];
    for step in 0..1500 {
        let v = values[rng.below(4) as usize];
        let w = values[rng.below(4) as usize];
        let len = model.len() as i64;
        let i = rng.below(7) as i64 - 3;
        let line = match rng.below(10) {
            0 => {
                model.push_front(v.into());
                format!("LPUSH l {v}")
            }
            1 | 2 => {
                model.push_back(v.into());
                format!("RPUSH l {v}")
            }
            3 => {
                model.pop_front();
                "LPOP l".into()
            }
            4 => {
                model.pop_back();
                "RPOP l".into()
            }
            5 => {
                if let Some(p) = model.iter().position(|x| x == w) {
                    model.insert(p + usize::from(i % 2 == 0), v.into());
                }
                let side = if i % 2 == 0 { "AFTER" } else { "BEFORE" };
                format!("LINSERT l {side} {w} {v}")
            }
            6 => {
                let count = i;
                let mut left = count.unsigned_abs();
                let mut keep: Vec<String> = model.iter().cloned().collect();
                let idx: Vec<usize> = if count < 0 {
                    (0..keep.len()).rev().collect()
                } else {
                    (0..keep.len()).collect()
                };
                let mut gone = Vec::new();
                for k in idx {
                    if keep[k] == v && (count == 0 || left > 0) {
                        gone.push(k);
                        left = left.saturating_sub(1);
                    }
                }
                gone.sort_unstable();
                for k in gone.into_iter().rev() {
                    keep.remove(k);
                }
                model = keep.into();
                format!("LREM l {count} {v}")
            }
            7 if len > 0 => {
                let start = rng.below(len as u64) as usize;
                let stop = start + rng.below((len as u64) - start as u64) as usize;
                model = model
                    .iter()
                    .skip(start)
                    .take(stop - start + 1)
                    .cloned()
                    .collect();
                format!("LTRIM l {start} {stop}")
            }
            8 if len > 1 => {
                if let Some(x) = model.pop_front() {
                    model.push_back(x);
                }
                "LMOVE l l LEFT RIGHT".into()
            }
            _ if len > 0 => {
                let pos = rng.below(len as u64) as usize;
                model[pos] = v.into();
                format!("LSET l {pos} {v}")
            }
            _ => "LLEN l".into(),
        };
        let reply = t.run(&line);
        assert!(!reply.is_error(), "step {step} {line}: {reply}");
        let expected: Vec<String> = model.iter().cloned().collect();
        assert_eq!(chain(&t, "l"), expected, "step {step}: {line}");
        if !model.is_empty() {
            let pos = rng.below(model.len() as u64) as usize;
            assert_eq!(
                t.run(&format!("LINDEX l {pos}")),
                Reply::Bulk(model[pos].clone().into_bytes()),
                "step {step}"
            );
        }
    }
}

#[test]
fn a_long_list_is_read_from_the_nearer_end() {
    let t = nemo();
    let n = 5000;
    t.push_numbers("big", n);
    t.script(
        r#"
            === a long list is read from the nearer end
            > LRANGE big 2500 2502
            1) "2500"
            2) "2501"
            3) "2502"
            > LRANGE big -2 -1
            1) "4998"
            2) "4999"
            > LINDEX big -1
            "4999"
            > LINDEX big 4000
            "4000"
            > LPOS big 3777 RANK -1
            (integer) 3777
            > LINSERT big BEFORE 4990 x
            (integer) 5001
            > LINDEX big 4990
            "x"
            > LTRIM big 100 -101
            OK
            > LLEN big
            (integer) 4801
        "#,
    );
    assert_eq!(chain(&t, "big").len(), 4801);
}

#[test]
fn corrupt_links_are_an_error_not_a_loop() {
    let t = nemo();
    t.run("RPUSH l a b c");
    let codec = t.engine.codec();
    let ctx = Ctx::new(&t.engine);
    let meta = ctx.typed(b"l", DataType::List).unwrap().unwrap();
    let place = codec.sub_place(SubKind::ListItem, b"l");
    let put_node = |seq: i64, prev: i64, next: i64| {
        let key = codec.sub_key(SubKind::ListItem.of(b"l", &meta), SubIdRef::Seq(seq));
        let value = codec.encode_sub_value(
            SubKind::ListItem.of(b"l", &meta),
            SubValueRef::Node {
                prev,
                next,
                value: b"v",
            },
        );
        let mut batch = crate::store::Batch::default();
        batch.put(place, key, value);
        t.engine.store().write(batch).unwrap();
    };
    // Node 2 points back at itself: a cycle.
    put_node(2, 1, 2);
    let reply = t.cli("LRANGE l 0 -1");
    assert!(
        reply.starts_with("(error) ERR data under key \"l\" is unreadable"),
        "{reply}"
    );
    assert!(t.cli("LRANGE l 1 2").contains("links back to 2, not 3"));
    // A read that does not reach the broken link still works.
    assert_eq!(t.cli("LINDEX l -1"), "\"c\"");
    assert!(t.cli("LPOS l zz").starts_with("(error)"));
    // A missing node.
    put_node(2, 1, 9);
    assert!(t.cli("LRANGE l 0 -1").contains("list node 9 is missing"));
    assert!(t.cli("LREM l 0 zz").contains("unreadable"));
    // Other keys keep working.
    assert_eq!(t.cli("RPUSH m x"), "(integer) 1");
    assert_eq!(t.cli("LRANGE m 0 -1"), "1) \"x\"");
}
