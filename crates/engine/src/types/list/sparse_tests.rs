//! The sparse list model on an Ardb store: the indexes each command
//! writes, and that the replies stay Redis' whatever the indexes.

use redcodec_ardb::ArdbCodec;
use redcodec_codec::{DataType, SparseIndex, SubId, SubIdRef, SubKind, SubValue, SubValueRef};

use crate::cmd::testkit::TestEngine;
use crate::keyspace::Ctx;
use crate::store::Store;

use SparseIndex::Int as I;

/// An Ardb store in a temporary directory on a manual clock.
struct Ardb(TestEngine<Store, ArdbCodec>);

/// A list's stored bounds, sequential flag and element records.
type Stored = (SparseIndex, SparseIndex, bool, Vec<(SparseIndex, String)>);

impl Ardb {
    fn new() -> Ardb {
        Ardb(TestEngine::of(ArdbCodec::default()))
    }

    fn cli(&self, line: &str) -> String {
        self.0.cli(line)
    }

    /// Replays a redis-cli transcript (see [`TestEngine::script`]) whose
    /// `@state …` lines check what the store holds (see [`Ardb::check`]).
    fn script(&self, transcript: &str) {
        self.0.script_with(transcript, |line| self.check(line));
    }

    /// Checks one state line against the store:
    /// - `key values…`: [`Ardb::values`] of the list (nothing after the key
    ///   for a missing one);
    /// - `key min..max sequential|gapped index:value…`: the stored bounds,
    ///   the sequential flag and every element record in order (an index
    ///   with a `.` is a float); `…` in place of the records leaves them
    ///   unchecked.
    fn check(&self, line: &str) {
        let mut words = line.split(' ');
        let key = words.next().expect("a key");
        let rest: Vec<&str> = words.collect();
        let Some(bounds) = rest.first().and_then(|w| w.split_once("..")) else {
            assert_eq!(self.values(key), rest.join(" "), "{line}");
            return;
        };
        let sequential = match rest.get(1) {
            Some(&"sequential") => true,
            Some(&"gapped") => false,
            other => panic!("{line}: sequential or gapped, not {other:?}"),
        };
        let (min, max, seq, items) = self.stored(key);
        assert_eq!(
            (min, max, seq),
            (index(bounds.0), index(bounds.1), sequential),
            "{line}"
        );
        if rest[2..] != ["…"] {
            let expected: Vec<(SparseIndex, String)> = rest[2..]
                .iter()
                .map(|item| {
                    let (i, v) = item.split_once(':').expect("index:value");
                    (index(i), v.to_string())
                })
                .collect();
            assert_eq!(items, expected, "{line}");
        }
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
    fn stored(&self, key: &str) -> Stored {
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

/// A sparse index as a state line writes it: a float if it has a `.`.
fn index(word: &str) -> SparseIndex {
    if word.contains('.') {
        SparseIndex::Float(word.parse().expect("a float index"))
    } else {
        I(word.parse().expect("an integer index"))
    }
}

/// One `#[test]` a transcript, each replayed on a fresh Ardb store (see
/// [`Ardb::script`]).
macro_rules! transcripts {
    ($($name:ident: $transcript:expr;)*) => {
        $(
            #[test]
            fn $name() {
                Ardb::new().script($transcript);
            }
        )*
    };
}

transcripts! {
    pushes_count_out_from_zero: r#"
        === pushes count out from zero
        > RPUSH l a b c
        (integer) 3
        @state l 0..2 sequential 0:a 1:b 2:c
        > LPUSH l x y
        (integer) 5
        @state l -2..2 sequential …
        @state l y x a b c
        # The first element of a new list is at 0, whichever side.
        > LPUSH m a
        (integer) 1
        @state m 0..0 sequential 0:a
    "#;

    linsert_uses_midpoints_and_ends_then_pushes_truncate: r#"
        === linsert uses midpoints and ends then pushes truncate
        > RPUSH l a b c
        (integer) 3
        > LINSERT l BEFORE b X
        (integer) 4
        > LINSERT l BEFORE a Y
        (integer) 5
        > LINSERT l AFTER c W
        (integer) 6
        > LINSERT l AFTER X V
        (integer) 7
        @state l -1.0..3.0 gapped -1.0:Y 0:a 0.5:X 0.75:V 1:b 2:c 3.0:W
        # A float bound is truncated toward zero before the push.
        > LPUSH l Z
        (integer) 8
        > RPUSH l Q
        (integer) 9
        @state l -2..4 gapped …
        @state l Z Y a X V b c W Q
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
    "#;

    pops_move_the_bound_to_the_next_element: r#"
        === pops move the bound to the next element
        > RPUSH l a b c d
        (integer) 4
        > LINSERT l AFTER a X
        (integer) 5
        > LPOP l 2
        1) "a"
        2) "X"
        > RPOP l
        "d"
        @state l 1..2 gapped 1:b 2:c
        # Sequential lists move their integer bounds.
        > RPUSH s a b c
        (integer) 3
        > LPOP s
        "a"
        @state s 1..2 sequential 1:b 2:c
        > RPOP s 5
        1) "c"
        2) "b"
        > EXISTS s
        (integer) 0
    "#;

    lrem_clears_the_sequential_flag_even_when_nothing_matches: r#"
        === lrem clears the sequential flag even when nothing matches
        > RPUSH l x a x b x
        (integer) 5
        > LREM l 0 zz
        (integer) 0
        @state l 0..4 gapped …
        > LREM l -2 x
        (integer) 2
        @state l 0..3 gapped 0:x 1:a 3:b
        > LREM l 1 x
        (integer) 1
        @state l 1..3 gapped …
        > LINDEX l 1
        "b"
        > LREM l 0 a
        (integer) 1
        > LREM l 0 b
        (integer) 1
        > EXISTS l
        (integer) 0
    "#;

    ltrim_keeps_the_middle: r#"
        === ltrim keeps the middle
        > RPUSH l a b c d e
        (integer) 5
        > LTRIM l 1 -2
        OK
        @state l 1..3 sequential 1:b 2:c 3:d
        > LINSERT l BEFORE c X
        (integer) 4
        > LTRIM l 1 1
        OK
        @state l 1.5..1.5 gapped 1.5:X
        > LTRIM l 2 3
        OK
        > EXISTS l
        (integer) 0
    "#;
}

#[test]
fn a_sequential_list_pops_at_its_bounds() {
    let t = Ardb::new();
    t.script("=== pops\n> RPUSH s a b c d\n(integer) 4\n> LPOP s\n\"a\"\n> RPOP s\n\"d\"");
    // Records outside the bounds, which no command leaves, show where a pop
    // looks: at `min` and `max` (as Ardb reads them), not at the ends of the
    // key's range, where the tombstones of earlier pops lie.
    let mut ctx = Ctx::new(&t.0.engine);
    let meta = ctx.typed(b"s", DataType::List).unwrap().expect("live list");
    for (index, value) in [(I(-7), "below"), (I(9), "above")] {
        ctx.sub_put(
            SubKind::ListItem,
            b"s",
            &meta,
            SubIdRef::Sparse(index),
            SubValueRef::Bytes(value.as_bytes()),
        );
    }
    ctx.commit().unwrap();
    t.script(
        r#"
            === a sequential list pops at its bounds
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
    t.script(
        r#"
            # LMOVE rotates a list in place, RPOPLPUSH moves to another.
            === lmove and a big list
            > RPUSH l a b c
            (integer) 3
            > LMOVE l l LEFT RIGHT
            "a"
            @state l b c a
            @state l 1..3 sequential …
            > RPOPLPUSH l m
            "a"
            @state m a
        "#,
    );
    let n = 2_000;
    let values: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    t.cli(&format!("RPUSH big {}", values.join(" ")));
    t.script(
        r#"
            === lmove and a big list
            > LINSERT big AFTER 1000 x
            (integer) 2001
            > LINDEX big 1001
            "x"
            > LINDEX big 1999
            "1998"
            > LRANGE big 1500 1501
            1) "1499"
            2) "1500"
            > LPOS big 1500
            (integer) 1501
            > LLEN big
            (integer) 2001
        "#,
    );
}
