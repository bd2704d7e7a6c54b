use redcodec_codec::{Codec, DataType, ListBounds, SubId, SubKind, SubValue};

use crate::cmd::testkit::{TestEngine, WRONG};
use crate::keyspace::Ctx;
use crate::store::MemStore;

/// Where the codec starts a new list.
fn initial_head(t: &TestEngine<MemStore>) -> u64 {
    match t.engine.codec().new_meta(DataType::List, 1).list {
        ListBounds::Array { head, .. } => head,
        other => panic!("not an array list: {other:?}"),
    }
}

/// The stored shape of list `key`: head and tail, and every element record
/// of its version, as offsets from the initial index.
fn stored(t: &TestEngine<MemStore>, key: &str) -> (i64, i64, Vec<(i64, String)>) {
    let base = initial_head(t);
    let off = |i: u64| i.wrapping_sub(base) as i64;
    let ctx = Ctx::new(&t.engine);
    let meta = ctx
        .typed(key.as_bytes(), DataType::List)
        .unwrap()
        .expect("live list");
    let ListBounds::Array { head, tail } = meta.list else {
        panic!("not an array list: {:?}", meta.list);
    };
    assert_eq!(meta.size, tail - head, "size matches the bounds");
    let items = ctx
        .subs(SubKind::ListItem, key.as_bytes(), &meta, None, false)
        .map(|r| match r.unwrap() {
            (SubId::Index(i), SubValue::Bytes(v)) => (off(i), String::from_utf8(v).unwrap()),
            other => panic!("unexpected record {other:?}"),
        })
        .collect();
    (off(head), off(tail), items)
}

/// `(offset, value)` pairs for consecutive offsets from `first`.
fn run(first: i64, values: &str) -> Vec<(i64, String)> {
    values
        .split(' ')
        .enumerate()
        .map(|(i, v)| (first + i as i64, v.to_string()))
        .collect()
}

fn is_gone(t: &TestEngine<MemStore>, key: &str) -> bool {
    Ctx::new(&t.engine).live(key.as_bytes()).unwrap().is_none()
}

#[test]
fn pushes_write_at_both_ends() {
    let t = TestEngine::in_memory();
    assert_eq!(t.cli("RPUSH l a b c"), "(integer) 3");
    assert_eq!(stored(&t, "l"), (0, 3, run(0, "a b c")));
    assert_eq!(t.cli("LPUSH l x y"), "(integer) 5");
    assert_eq!(stored(&t, "l"), (-2, 3, run(-2, "y x a b c")));
    assert_eq!(
        t.cli("LRANGE l 0 -1"),
        "1) \"y\"\n2) \"x\"\n3) \"a\"\n4) \"b\"\n5) \"c\""
    );
    assert_eq!(t.cli("LPUSHX missing a"), "(integer) 0");
    assert!(is_gone(&t, "missing"));
    t.script(
        r#"
            > RPUSHX l z
            (integer) 6
            > LPUSHX l w
            (integer) 7
            > LLEN l
            (integer) 7
            > LLEN missing
            (integer) 0
        "#,
    );
}

#[test]
fn pops_with_and_without_count() {
    let t = TestEngine::in_memory();
    t.script(
        r#"
            > RPUSH l a b c d e
            > LPOP l
            "a"
            > RPOP l
            "e"
        "#,
    );
    assert_eq!(stored(&t, "l"), (1, 4, run(1, "b c d")));
    t.script(
        r#"
            > LPOP l 0
            (empty array)
            > RPOP l 2
            1) "d"
            2) "c"
            > LPOP l 10
            1) "b"
        "#,
    );
    assert!(is_gone(&t, "l"));
    assert_eq!(t.cli("LPOP l"), "(nil)");
    assert_eq!(t.cli("LPOP l 2"), "(nil)");
    assert_eq!(t.run("LPOP l 2"), crate::reply::Reply::NilArray);
    t.script(
        r#"
            > LPOP l 0
            (nil)
            > LPOP l -1
            (error) ERR value is out of range, must be positive
            > RPOP l foo
            (error) ERR value is out of range, must be positive
            > LPOP l 1 2
            (error) ERR wrong number of arguments for 'lpop' command
            > SET s v
            > LPOP s
            (error) WRONGTYPE Operation against a key holding the wrong kind of value
            > LPOP s 0
            (error) WRONGTYPE Operation against a key holding the wrong kind of value
            > LPOP s -1
            (error) ERR value is out of range, must be positive
        "#,
    );
}

#[test]
fn index_range_and_set() {
    let t = TestEngine::in_memory();
    t.script(
        r#"
            > RPUSH l a b c
            > LINDEX l 0
            "a"
            > LINDEX l -1
            "c"
            > LINDEX l 3
            (nil)
            > LINDEX l -4
            (nil)
            > LINDEX l -9223372036854775808
            (nil)
            > LINDEX l x
            (error) ERR value is not an integer or out of range
            > LINDEX missing x
            (nil)
            > LRANGE l 1 1
            1) "b"
            > LRANGE l -100 100
            1) "a"
            2) "b"
            3) "c"
            > LRANGE l 2 1
            (empty array)
            > LRANGE l -9223372036854775808 9223372036854775807
            1) "a"
            2) "b"
            3) "c"
            > LRANGE missing x 1
            (error) ERR value is not an integer or out of range
            > LRANGE missing 0 -1
            (empty array)
            > LSET l -1 Z
            OK
            > LSET l 1 Y
            OK
        "#,
    );
    assert_eq!(stored(&t, "l"), (0, 3, run(0, "a Y Z")));
    t.script(
        r#"
            > LSET l 3 x
            (error) ERR index out of range
            > LSET missing x y
            (error) ERR no such key
            > LSET l x y
            (error) ERR value is not an integer or out of range
            > SET s v
        "#,
    );
    for cmd in ["LINDEX s x", "LSET s x y", "LRANGE s 0 1", "LLEN s"] {
        assert_eq!(t.cli(cmd), WRONG, "{cmd}");
    }
}

#[test]
fn linsert_shifts_the_shorter_side() {
    let t = TestEngine::in_memory();
    // Pivot nearer the head: the head side moves down.
    t.run("RPUSH l a b c d e");
    assert_eq!(t.cli("LINSERT l BEFORE c X"), "(integer) 6");
    assert_eq!(stored(&t, "l"), (-1, 5, run(-1, "a b X c d e")));
    // Pivot nearer the tail: the tail side moves up.
    t.run("RPUSH m a b c d e");
    assert_eq!(t.cli("LINSERT m after c X"), "(integer) 6");
    assert_eq!(stored(&t, "m"), (0, 6, run(0, "a b c X d e")));
    // A tie moves the head side, BEFORE and AFTER alike.
    t.run("RPUSH n a b c d");
    assert_eq!(t.cli("LINSERT n BEFORE c X"), "(integer) 5");
    assert_eq!(stored(&t, "n"), (-1, 4, run(-1, "a b X c d")));
    t.run("RPUSH o a b c d");
    assert_eq!(t.cli("LINSERT o AFTER b X"), "(integer) 5");
    assert_eq!(stored(&t, "o"), (-1, 4, run(-1, "a b X c d")));
    // At the ends.
    t.script(
        r#"
            > RPUSH p a b c
            > LINSERT p BEFORE a X
            (integer) 4
            > LINSERT p AFTER c Y
            (integer) 5
        "#,
    );
    assert_eq!(stored(&t, "p"), (-1, 4, run(-1, "X a b c Y")));
    // The first match from the head is the pivot.
    t.run("RPUSH q a b a b");
    assert_eq!(t.cli("LINSERT q AFTER b X"), "(integer) 5");
    assert_eq!(
        t.cli("LRANGE q 0 -1").replace('\n', " "),
        "1) \"a\" 2) \"b\" 3) \"X\" 4) \"a\" 5) \"b\""
    );

    assert_eq!(t.cli("LINSERT l BEFORE zz x"), "(integer) -1");
    assert_eq!(t.cli("LINSERT missing BEFORE a x"), "(integer) 0");
    assert!(is_gone(&t, "missing"));
    t.script(
        r#"
            > LINSERT l middle a x
            (error) ERR syntax error
            > LINSERT missing middle a x
            (error) ERR syntax error
            > SET s v
            > LINSERT s BEFORE a x
            (error) WRONGTYPE Operation against a key holding the wrong kind of value
            > LINSERT s middle a x
            (error) ERR syntax error
        "#,
    );
}

#[test]
fn lrem_compacts_the_shorter_side() {
    let t = TestEngine::in_memory();
    // Matches near the head: survivors below the highest match move up.
    t.run("RPUSH l a x b x c d e f");
    assert_eq!(t.cli("LREM l 0 x"), "(integer) 2");
    assert_eq!(stored(&t, "l"), (2, 8, run(2, "a b c d e f")));
    // Matches near the tail: survivors above the lowest match move down.
    t.run("RPUSH m a b c d e x f x");
    assert_eq!(t.cli("LREM m 0 x"), "(integer) 2");
    assert_eq!(stored(&t, "m"), (0, 6, run(0, "a b c d e f")));
    // Counting from the tail; earlier matches survive and move.
    t.run("RPUSH n x x a x b c d e f g");
    assert_eq!(t.cli("LREM n -1 x"), "(integer) 1");
    assert_eq!(stored(&t, "n"), (1, 10, run(1, "x x a b c d e f g")));
    // Counting from the head with a limit.
    t.run("RPUSH o a b c d e x f x y x");
    assert_eq!(t.cli("LREM o 2 x"), "(integer) 2");
    assert_eq!(stored(&t, "o"), (0, 8, run(0, "a b c d e f y x")));
    // A tie compacts toward the tail (the head side moves).
    t.run("RPUSH p a x b");
    assert_eq!(t.cli("LREM p 1 x"), "(integer) 1");
    assert_eq!(stored(&t, "p"), (1, 3, run(1, "a b")));
    // Nothing matches: nothing changes.
    assert_eq!(t.cli("LREM p 0 zz"), "(integer) 0");
    assert_eq!(stored(&t, "p"), (1, 3, run(1, "a b")));
    // Every element matches: the key goes.
    t.run("RPUSH q x x x");
    assert_eq!(t.cli("LREM q 0 x"), "(integer) 3");
    assert!(is_gone(&t, "q"));
    t.script(
        r#"
            > RPUSH r x y x
            > LREM r -9223372036854775808 x
            (integer) 2
            > LRANGE r 0 -1
            1) "y"
        "#,
    );

    t.script(
        r#"
            > LREM missing 0 a
            (integer) 0
            > LREM missing x a
            (error) ERR value is not an integer or out of range
            > SET s v
            > LREM s 0 a
            (error) WRONGTYPE Operation against a key holding the wrong kind of value
        "#,
    );
}

#[test]
fn ltrim_deletes_outside_the_range() {
    let t = TestEngine::in_memory();
    t.run("RPUSH l a b c d e");
    assert_eq!(t.cli("LTRIM l 1 -2"), "OK");
    assert_eq!(stored(&t, "l"), (1, 4, run(1, "b c d")));
    assert_eq!(t.cli("LTRIM l 0 -1"), "OK");
    assert_eq!(stored(&t, "l"), (1, 4, run(1, "b c d")));
    assert_eq!(t.cli("LTRIM l -100 0"), "OK");
    assert_eq!(stored(&t, "l"), (1, 2, run(1, "b")));
    assert_eq!(t.cli("LTRIM l 5 10"), "OK");
    assert!(is_gone(&t, "l"));
    t.run("RPUSH m a b");
    assert_eq!(t.cli("LTRIM m 1 0"), "OK");
    assert!(is_gone(&t, "m"));
    assert_eq!(t.cli("LTRIM missing 0 1"), "OK");
    assert!(is_gone(&t, "missing"));
    t.script(
        r#"
            > LTRIM missing x 1
            (error) ERR value is not an integer or out of range
            > SET s v
            > LTRIM s 0 1
            (error) WRONGTYPE Operation against a key holding the wrong kind of value
        "#,
    );
}

#[test]
fn lpos_options() {
    let t = TestEngine::in_memory();
    t.run("RPUSH l a b c 1 2 3 c c");
    let flat = |cmd: &str| t.cli(cmd).replace('\n', " ");
    assert_eq!(flat("LPOS l c"), "(integer) 2");
    assert_eq!(flat("LPOS l c RANK -1"), "(integer) 7");
    assert_eq!(flat("LPOS l c RANK 2"), "(integer) 6");
    assert_eq!(
        flat("LPOS l c COUNT 0"),
        "1) (integer) 2 2) (integer) 6 3) (integer) 7"
    );
    assert_eq!(
        flat("LPOS l c COUNT 2 RANK -1"),
        "1) (integer) 7 2) (integer) 6"
    );
    assert_eq!(flat("LPOS l c MAXLEN 3"), "(integer) 2");
    assert_eq!(flat("LPOS l c MAXLEN 2"), "(nil)");
    assert_eq!(flat("LPOS l c MAXLEN 3 COUNT 0"), "1) (integer) 2");
    assert_eq!(flat("LPOS l c RANK 4"), "(nil)");
    assert_eq!(flat("LPOS l z"), "(nil)");
    assert_eq!(flat("LPOS l z COUNT 0"), "(empty array)");
    assert_eq!(flat("LPOS missing z COUNT 0"), "(empty array)");
    assert_eq!(flat("LPOS missing z"), "(nil)");
    assert_eq!(flat("LPOS l c RANK -9223372036854775808"), "(integer) 7");
    assert_eq!(
        flat("LPOS l c RANK -9223372036854775808 COUNT 1"),
        "1) (integer) 7 2) (integer) 6 3) (integer) 2"
    );
    assert_eq!(flat("LPOS l c RANK 9223372036854775807"), "(nil)");
    assert_eq!(
        flat("LPOS l c COUNT 1 COUNT 2"),
        "1) (integer) 2 2) (integer) 6"
    );
    let rank_zero = "(error) ERR RANK can't be zero: use 1 to start from the first match, \
                     2 from the second ... or use negative to start from the end of the list";
    assert_eq!(flat("LPOS l c RANK 0"), rank_zero);
    assert_eq!(flat("LPOS missing c RANK 0"), rank_zero);
    assert_eq!(
        flat("LPOS l c COUNT -1"),
        "(error) ERR COUNT can't be negative"
    );
    assert_eq!(
        flat("LPOS l c COUNT x"),
        "(error) ERR COUNT can't be negative"
    );
    assert_eq!(
        flat("LPOS l c MAXLEN -1"),
        "(error) ERR MAXLEN can't be negative"
    );
    assert_eq!(
        flat("LPOS l c RANK x"),
        "(error) ERR value is not an integer or out of range"
    );
    assert_eq!(flat("LPOS l c foo"), "(error) ERR syntax error");
    assert_eq!(flat("LPOS l c RANK"), "(error) ERR syntax error");
    t.run("SET s v");
    assert_eq!(flat("LPOS s c"), WRONG);
    assert_eq!(flat("LPOS s c RANK 0"), rank_zero);
}

#[test]
fn lmove_between_lists() {
    let t = TestEngine::in_memory();
    t.script(
        r#"
            > RPUSH src a b c
            > LMOVE src dst LEFT RIGHT
            "a"
            > RPOPLPUSH src dst
            "c"
        "#,
    );
    assert_eq!(stored(&t, "src"), (1, 2, run(1, "b")));
    assert_eq!(stored(&t, "dst"), (-1, 1, run(-1, "c a")));
    assert_eq!(t.cli("LMOVE src dst right left"), "\"b\"");
    assert!(is_gone(&t, "src"));
    t.script(
        r#"
            > LRANGE dst 0 -1
            1) "b"
            2) "c"
            3) "a"
            # A missing source: nil, whatever the destination holds.
            > SET s v
            > RPOPLPUSH missing s
            (nil)
            > LMOVE missing s LEFT LEFT
            (nil)
            # A destination of another type: nothing changes.
            > RPOPLPUSH dst s
            (error) WRONGTYPE Operation against a key holding the wrong kind of value
            > LMOVE dst s LEFT LEFT
            (error) WRONGTYPE Operation against a key holding the wrong kind of value
            > LLEN dst
            (integer) 3
            > RPOPLPUSH s dst
            (error) WRONGTYPE Operation against a key holding the wrong kind of value
            > LMOVE dst dst foo RIGHT
            (error) ERR syntax error
            > LMOVE missing dst LEFT foo
            (error) ERR syntax error
        "#,
    );
}

#[test]
fn lmove_rotates_a_list_onto_itself() {
    let t = TestEngine::in_memory();
    t.run("RPUSH l a b c");
    assert_eq!(t.cli("LMOVE l l LEFT RIGHT"), "\"a\"");
    assert_eq!(stored(&t, "l"), (1, 4, run(1, "b c a")));
    assert_eq!(t.cli("RPOPLPUSH l l"), "\"a\"");
    assert_eq!(stored(&t, "l"), (0, 3, run(0, "a b c")));
    assert_eq!(t.cli("LMOVE l l RIGHT RIGHT"), "\"c\"");
    assert_eq!(t.cli("LMOVE l l LEFT LEFT"), "\"a\"");
    assert_eq!(stored(&t, "l"), (0, 3, run(0, "a b c")));
    t.run("RPUSH one x");
    assert_eq!(t.cli("LMOVE one one LEFT RIGHT"), "\"x\"");
    assert_eq!(stored(&t, "one"), (0, 1, run(0, "x")));
}

#[test]
fn a_big_list_is_read_by_windows() {
    let t = TestEngine::in_memory();
    let n = 10_000;
    t.push_numbers("big", n);
    t.script(
        r#"
            > LRANGE big 5000 5002
            1) "5000"
            2) "5001"
            3) "5002"
            > LRANGE big -2 -1
            1) "9998"
            2) "9999"
            > LINDEX big -1
            "9999"
            > LPOS big 7777
            (integer) 7777
            > LPOS big 7777 RANK -1
            (integer) 7777
        "#,
    );
    assert_eq!(
        t.cli("LINSERT big BEFORE 9990 x"),
        format!("(integer) {}", n + 1)
    );
    t.script(
        r#"
            > LINDEX big 9990
            "x"
            > LREM big 0 10
            (integer) 1
            > LINDEX big 10
            "11"
            > LTRIM big 100 -101
            OK
        "#,
    );
    assert_eq!(t.cli("LLEN big"), format!("(integer) {}", n - 200));
    assert_eq!(t.cli("LINDEX big 0"), "\"101\"");
    let (head, tail, items) = stored(&t, "big");
    assert_eq!(tail - head, items.len() as i64);
    assert!(items.windows(2).all(|w| w[1].0 == w[0].0 + 1));
}

#[test]
fn read_all_and_write_all_round_trip() {
    let t = TestEngine::in_memory();
    t.run("RPUSH l a b c");
    t.run("LPUSH l z");
    let values = {
        let ctx = Ctx::new(&t.engine);
        let meta = ctx.typed(b"l", DataType::List).unwrap().unwrap();
        crate::cmd::types::lists::read_all(&ctx, b"l", &meta).unwrap()
    };
    assert_eq!(
        values,
        vec![b"z".to_vec(), b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]
    );
    let mut ctx = Ctx::new(&t.engine);
    let mut meta = ctx.typed_or_create(b"copy", DataType::List).unwrap();
    crate::cmd::types::lists::write_all(&mut ctx, b"copy", &mut meta, &values).unwrap();
    assert_eq!(meta.size, 4);
    ctx.save(b"copy", &meta).unwrap();
    ctx.commit().unwrap();
    assert_eq!(stored(&t, "copy"), (0, 4, run(0, "z a b c")));
}
