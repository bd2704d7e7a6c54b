//! The sparse list model on an Ardb store: the indexes each command
//! writes, and that the replies stay Redis' whatever the indexes.

use redcodec_ardb::ArdbCodec;
use redcodec_codec::{DataType, SparseIndex, SubId, SubKind, SubValue};

use crate::cmd::testkit::TestEngine;
use crate::keyspace::Ctx;
use crate::store::Store;

use SparseIndex::{Float as F, Int as I};

/// An Ardb store in a temporary directory on a manual clock.
struct Ardb(TestEngine<Store, ArdbCodec>);

impl Ardb {
    fn new() -> Ardb {
        Ardb(TestEngine::of(ArdbCodec::default()))
    }

    fn cli(&self, line: &str) -> String {
        self.0.cli(line)
    }

    fn script(&self, transcript: &str) {
        self.0.script(transcript);
    }

    /// `LRANGE key 0 -1` as one line of values.
    fn values(&self, key: &str) -> String {
        let ctx = Ctx::new(&self.0.engine);
        let Some(meta) = ctx.typed(key.as_bytes(), DataType::List).unwrap() else {
            return String::new();
        };
        let all = super::read_all(&ctx, key.as_bytes(), &meta).unwrap();
        all.iter()
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The stored bounds, the sequential flag and every element record.
    fn stored(&self, key: &str) -> (SparseIndex, SparseIndex, bool, Vec<(SparseIndex, String)>) {
        let ctx = Ctx::new(&self.0.engine);
        let meta = ctx
            .typed(key.as_bytes(), DataType::List)
            .unwrap()
            .expect("live list");
        let Some((min, max, sequential)) = meta.list.sparse() else {
            panic!("not a sparse list: {:?}", meta.list);
        };
        let items: Vec<_> = ctx
            .subs(SubKind::ListItem, key.as_bytes(), &meta, None, false)
            .map(|r| match r.unwrap() {
                (SubId::Sparse(i), SubValue::Bytes(v)) => (i, String::from_utf8(v).unwrap()),
                other => panic!("unexpected record {other:?}"),
            })
            .collect();
        assert_eq!(meta.size, items.len() as u64, "size counts the records");
        (min, max, sequential, items)
    }
}

fn items(pairs: &[(SparseIndex, &str)]) -> Vec<(SparseIndex, String)> {
    pairs.iter().map(|(i, v)| (*i, v.to_string())).collect()
}

#[test]
fn pushes_count_out_from_zero() {
    let t = Ardb::new();
    assert_eq!(t.cli("RPUSH l a b c"), "(integer) 3");
    assert_eq!(
        t.stored("l"),
        (
            I(0),
            I(2),
            true,
            items(&[(I(0), "a"), (I(1), "b"), (I(2), "c")])
        )
    );
    assert_eq!(t.cli("LPUSH l x y"), "(integer) 5");
    let (min, max, seq, _) = t.stored("l");
    assert_eq!((min, max, seq), (I(-2), I(2), true));
    assert_eq!(t.values("l"), "y x a b c");
    // The first element of a new list is at 0, whichever side.
    assert_eq!(t.cli("LPUSH m a"), "(integer) 1");
    assert_eq!(t.stored("m"), (I(0), I(0), true, items(&[(I(0), "a")])));
}

#[test]
fn linsert_uses_midpoints_and_ends_then_pushes_truncate() {
    let t = Ardb::new();
    t.cli("RPUSH l a b c");
    t.script(
        r#"
            > LINSERT l BEFORE b X
            (integer) 4
            > LINSERT l BEFORE a Y
            (integer) 5
            > LINSERT l AFTER c W
            (integer) 6
            > LINSERT l AFTER X V
            (integer) 7
        "#,
    );
    assert_eq!(
        t.stored("l"),
        (
            F(-1.0),
            F(3.0),
            false,
            items(&[
                (F(-1.0), "Y"),
                (I(0), "a"),
                (F(0.5), "X"),
                (F(0.75), "V"),
                (I(1), "b"),
                (I(2), "c"),
                (F(3.0), "W"),
            ])
        )
    );
    // A float bound is truncated toward zero before the push.
    t.cli("LPUSH l Z");
    t.cli("RPUSH l Q");
    let (min, max, seq, _) = t.stored("l");
    assert_eq!((min, max, seq), (I(-2), I(4), false));
    assert_eq!(t.values("l"), "Z Y a X V b c W Q");
    t.script(
        r#"
            > LINDEX l 4
            "V"
            > LINDEX l -2
            "W"
            > LSET l 3 x
            OK
            > LRANGE l 2 4
            1) "a"
            2) "x"
            3) "V"
            > LINSERT l BEFORE nope v
            (integer) -1
        "#,
    );
}

#[test]
fn pops_move_the_bound_to_the_next_element() {
    let t = Ardb::new();
    t.cli("RPUSH l a b c d");
    t.cli("LINSERT l AFTER a X");
    assert_eq!(t.cli("LPOP l 2"), "1) \"a\"\n2) \"X\"");
    assert_eq!(t.cli("RPOP l"), "\"d\"");
    assert_eq!(
        t.stored("l"),
        (I(1), I(2), false, items(&[(I(1), "b"), (I(2), "c")]))
    );
    // Sequential lists move their integer bounds.
    t.cli("RPUSH s a b c");
    assert_eq!(t.cli("LPOP s"), "\"a\"");
    assert_eq!(
        t.stored("s"),
        (I(1), I(2), true, items(&[(I(1), "b"), (I(2), "c")]))
    );
    assert_eq!(t.cli("RPOP s 5"), "1) \"c\"\n2) \"b\"");
    assert_eq!(t.cli("EXISTS s"), "(integer) 0");
}

#[test]
fn a_sequential_list_pops_at_its_bounds() {
    let t = Ardb::new();
    t.cli("RPUSH s a b c d");
    t.cli("LPOP s");
    t.cli("RPOP s");
    // Records outside the bounds, which no command leaves, show where a pop
    // looks: at `min` and `max` (as Ardb reads them), not at the ends of the
    // key's range, where the tombstones of earlier pops lie.
    let mut ctx = Ctx::new(&t.0.engine);
    let meta = ctx.typed(b"s", DataType::List).unwrap().expect("live list");
    for (index, value) in [(I(-7), "below"), (I(9), "above")] {
        let value = SubValue::Bytes(value.as_bytes().to_vec());
        ctx.sub_put(
            SubKind::ListItem,
            b"s",
            &meta,
            &SubId::Sparse(index),
            &value,
        );
    }
    ctx.commit().unwrap();
    t.script(
        r#"
            > LPOP s
            "b"
            > RPOP s
            "c"
            > EXISTS s
            (integer) 0
        "#,
    );
}

#[test]
fn lrem_clears_the_sequential_flag_even_when_nothing_matches() {
    let t = Ardb::new();
    t.cli("RPUSH l x a x b x");
    assert_eq!(t.cli("LREM l 0 zz"), "(integer) 0");
    let (min, max, seq, _) = t.stored("l");
    assert_eq!((min, max, seq), (I(0), I(4), false));
    assert_eq!(t.cli("LREM l -2 x"), "(integer) 2");
    assert_eq!(
        t.stored("l"),
        (
            I(0),
            I(3),
            false,
            items(&[(I(0), "x"), (I(1), "a"), (I(3), "b")])
        )
    );
    assert_eq!(t.cli("LREM l 1 x"), "(integer) 1");
    assert_eq!(t.stored("l").0, I(1));
    t.script(
        r#"
            > LINDEX l 1
            "b"
            > LREM l 0 a
            (integer) 1
            > LREM l 0 b
            (integer) 1
            > EXISTS l
            (integer) 0
        "#,
    );
}

#[test]
fn ltrim_keeps_the_middle() {
    let t = Ardb::new();
    t.cli("RPUSH l a b c d e");
    assert_eq!(t.cli("LTRIM l 1 -2"), "OK");
    assert_eq!(
        t.stored("l"),
        (
            I(1),
            I(3),
            true,
            items(&[(I(1), "b"), (I(2), "c"), (I(3), "d")])
        )
    );
    t.cli("LINSERT l BEFORE c X");
    assert_eq!(t.cli("LTRIM l 1 1"), "OK");
    assert_eq!(
        t.stored("l"),
        (F(1.5), F(1.5), false, items(&[(F(1.5), "X")]))
    );
    assert_eq!(t.cli("LTRIM l 2 3"), "OK");
    assert_eq!(t.cli("EXISTS l"), "(integer) 0");
}

#[test]
fn a_gap_without_room_renumbers_the_list() {
    let t = Ardb::new();
    t.cli("RPUSH l a b");
    // Each insert halves the gap below `b`; doubles run out after ~50.
    for i in 0..80 {
        assert_eq!(
            t.cli(&format!("LINSERT l BEFORE b v{i}")),
            format!("(integer) {}", i + 3)
        );
    }
    let expected: Vec<String> = std::iter::once("a".to_string())
        .chain((0..80).map(|i| format!("v{i}")))
        .chain(std::iter::once("b".to_string()))
        .collect();
    assert_eq!(t.values("l"), expected.join(" "));
    let (_, _, _, stored) = t.stored("l");
    assert_eq!(stored.len(), 82);
    assert!(stored
        .windows(2)
        .all(|w| super::sparse::compare(w[0].0, w[1].0).is_lt()));
}

#[test]
fn lmove_and_a_big_list() {
    let t = Ardb::new();
    t.cli("RPUSH l a b c");
    assert_eq!(t.cli("LMOVE l l LEFT RIGHT"), "\"a\"");
    assert_eq!(t.values("l"), "b c a");
    assert_eq!(t.stored("l").0, I(1));
    assert_eq!(t.cli("RPOPLPUSH l m"), "\"a\"");
    assert_eq!(t.values("m"), "a");

    let n = 2_000;
    let values: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    t.cli(&format!("RPUSH big {}", values.join(" ")));
    t.cli("LINSERT big AFTER 1000 x");
    t.script(
        r#"
            > LINDEX big 1001
            "x"
            > LINDEX big 1999
            "1998"
            > LRANGE big 1500 1501
            1) "1499"
            2) "1500"
            > LPOS big 1500
            (integer) 1501
        "#,
    );
    assert_eq!(t.cli("LLEN big"), format!("(integer) {}", n + 1));
}
