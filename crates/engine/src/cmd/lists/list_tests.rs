use redcodec_codec::{Codec, DataType, ListBounds, SubId, SubKind, SubValue};

use crate::cmd::testkit::{TestEngine, WRONG};
use crate::keyspace::Ctx;
use crate::store::MemStore;
use crate::types::ValueMut;

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

/// Replays a redis-cli transcript (see [`TestEngine::script`]) whose
/// `@state key head tail values…` lines check the stored list (see [`stored`]:
/// its bounds, and its values at consecutive offsets from the head), and
/// `@state key gone` that the key is gone.
fn replay(t: &TestEngine<MemStore>, transcript: &str) {
    t.script_with(transcript, |line| {
        let words: Vec<&str> = line.split(' ').collect();
        if let [key, "gone"] = words[..] {
            assert!(is_gone(t, key), "{line}");
            return;
        }
        let [key, head, tail, ref values @ ..] = words[..] else {
            panic!("not a state line: {line:?}")
        };
        let head: i64 = head.parse().expect("head");
        let tail: i64 = tail.parse().expect("tail");
        let expected = (head, tail, run(head, &values.join(" ")));
        assert_eq!(stored(t, key), expected, "{line}");
    });
}

fn is_gone(t: &TestEngine<MemStore>, key: &str) -> bool {
    Ctx::new(&t.engine).live(key.as_bytes()).unwrap().is_none()
}

#[test]
fn pushes_write_at_both_ends() {
    let t = TestEngine::in_memory();
    replay(
        &t,
        r#"
            === pushes write at both ends
            > RPUSH l a b c
            (integer) 3
            @state l 0 3 a b c
            > LPUSH l x y
            (integer) 5
            @state l -2 3 y x a b c
            > LRANGE l 0 -1
            1) "y"
            2) "x"
            3) "a"
            4) "b"
            5) "c"
            > LPUSHX missing a
            (integer) 0
            @state missing gone
        "#,
    );
    t.script(
        r#"
            === pushes write at both ends
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
            # Pops move the bounds inwards.
            === pops with and without count
            > RPUSH l a b c d e
            (integer) 5
            > LPOP l
            "a"
            > RPOP l
            "e"
        "#,
    );
    assert_eq!(stored(&t, "l"), (1, 4, run(1, "b c d")));
    t.script(
        r#"
            === pops with and without count
            > LPOP l 0
            (empty array)
            > RPOP l 2
            1) "d"
            2) "c"
            > LPOP l 10
            1) "b"
        "#,
    );
    replay(
        &t,
        r#"
            === pops with and without count
            @state l gone
            > LPOP l
            (nil)
            > LPOP l 2
            (nil)
        "#,
    );
    assert_eq!(t.run("LPOP l 2"), crate::reply::Reply::NilArray);
    t.script(
        r#"
            === pops with and without count
            > LPOP l 0
            (nil)
            > LPOP l -1
            (error) ERR value is out of range, must be positive
            > RPOP l foo
            (error) ERR value is out of range, must be positive
            > LPOP l 1 2
            (error) ERR wrong number of arguments for 'lpop' command
            > SET s v
            OK
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
            === index range and set
            > RPUSH l a b c
            (integer) 3
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
            === index range and set
            > LSET l 3 x
            (error) ERR index out of range
            > LSET missing x y
            (error) ERR no such key
            > LSET l x y
            (error) ERR value is not an integer or out of range
            > SET s v
            OK
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
    replay(
        &t,
        r#"
            === linsert shifts the shorter side
            > RPUSH l a b c d e
            (integer) 5
            > LINSERT l BEFORE c X
            (integer) 6
            @state l -1 5 a b X c d e
            # Pivot nearer the tail: the tail side moves up.
            > RPUSH m a b c d e
            (integer) 5
            > LINSERT m after c X
            (integer) 6
            @state m 0 6 a b c X d e
            # A tie moves the head side, BEFORE and AFTER alike.
            > RPUSH n a b c d
            (integer) 4
            > LINSERT n BEFORE c X
            (integer) 5
            @state n -1 4 a b X c d
            > RPUSH o a b c d
            (integer) 4
            > LINSERT o AFTER b X
            (integer) 5
            @state o -1 4 a b X c d
        "#,
    );
    // At the ends.
    t.script(
        r#"
            === linsert shifts the shorter side
            > RPUSH p a b c
            (integer) 3
            > LINSERT p BEFORE a X
            (integer) 4
            > LINSERT p AFTER c Y
            (integer) 5
        "#,
    );
    replay(
        &t,
        r#"
            === linsert shifts the shorter side
            @state p -1 4 X a b c Y
            # The first match from the head is the pivot.
            > RPUSH q a b a b
            (integer) 4
            > LINSERT q AFTER b X
            (integer) 5
        "#,
    );
    assert_eq!(
        t.cli("LRANGE q 0 -1").replace('\n', " "),
        "1) \"a\" 2) \"b\" 3) \"X\" 4) \"a\" 5) \"b\""
    );

    replay(
        &t,
        r#"
            === linsert shifts the shorter side
            > LINSERT l BEFORE zz x
            (integer) -1
            > LINSERT missing BEFORE a x
            (integer) 0
            @state missing gone
        "#,
    );
    t.script(
        r#"
            === linsert shifts the shorter side
            > LINSERT l middle a x
            (error) ERR syntax error
            > LINSERT missing middle a x
            (error) ERR syntax error
            > SET s v
            OK
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
    replay(
        &t,
        r#"
            === lrem compacts the shorter side
            > RPUSH l a x b x c d e f
            (integer) 8
            > LREM l 0 x
            (integer) 2
            @state l 2 8 a b c d e f
            # Matches near the tail: survivors above the lowest match move down.
            > RPUSH m a b c d e x f x
            (integer) 8
            > LREM m 0 x
            (integer) 2
            @state m 0 6 a b c d e f
            # Counting from the tail; earlier matches survive and move.
            > RPUSH n x x a x b c d e f g
            (integer) 10
            > LREM n -1 x
            (integer) 1
            @state n 1 10 x x a b c d e f g
            # Counting from the head with a limit.
            > RPUSH o a b c d e x f x y x
            (integer) 10
            > LREM o 2 x
            (integer) 2
            @state o 0 8 a b c d e f y x
            # A tie compacts toward the tail (the head side moves).
            > RPUSH p a x b
            (integer) 3
            > LREM p 1 x
            (integer) 1
            @state p 1 3 a b
            # Nothing matches: nothing changes.
            > LREM p 0 zz
            (integer) 0
            @state p 1 3 a b
            # Every element matches: the key goes.
            > RPUSH q x x x
            (integer) 3
            > LREM q 0 x
            (integer) 3
            @state q gone
        "#,
    );
    t.script(
        r#"
            === lrem compacts the shorter side
            > RPUSH r x y x
            (integer) 3
            > LREM r -9223372036854775808 x
            (integer) 2
            > LRANGE r 0 -1
            1) "y"
        "#,
    );

    t.script(
        r#"
            === lrem compacts the shorter side
            > LREM missing 0 a
            (integer) 0
            > LREM missing x a
            (error) ERR value is not an integer or out of range
            > SET s v
            OK
            > LREM s 0 a
            (error) WRONGTYPE Operation against a key holding the wrong kind of value
        "#,
    );
}

#[test]
fn ltrim_deletes_outside_the_range() {
    let t = TestEngine::in_memory();
    replay(
        &t,
        r#"
            === ltrim deletes outside the range
            > RPUSH l a b c d e
            (integer) 5
            > LTRIM l 1 -2
            OK
            @state l 1 4 b c d
            > LTRIM l 0 -1
            OK
            @state l 1 4 b c d
            > LTRIM l -100 0
            OK
            @state l 1 2 b
            > LTRIM l 5 10
            OK
            @state l gone
            > RPUSH m a b
            (integer) 2
            > LTRIM m 1 0
            OK
            @state m gone
            > LTRIM missing 0 1
            OK
            @state missing gone
        "#,
    );
    t.script(
        r#"
            === ltrim deletes outside the range
            > LTRIM missing x 1
            (error) ERR value is not an integer or out of range
            > SET s v
            OK
            > LTRIM s 0 1
            (error) WRONGTYPE Operation against a key holding the wrong kind of value
        "#,
    );
}

#[test]
fn lpos_options() {
    let t = TestEngine::in_memory();
    t.script(
        r#"
            === lpos options
            > RPUSH l a b c 1 2 3 c c
            (integer) 8
            > LPOS l c
            (integer) 2
            > LPOS l c RANK -1
            (integer) 7
            > LPOS l c RANK 2
            (integer) 6
            > LPOS l c COUNT 0
            1) (integer) 2
            2) (integer) 6
            3) (integer) 7
            > LPOS l c COUNT 2 RANK -1
            1) (integer) 7
            2) (integer) 6
            > LPOS l c MAXLEN 3
            (integer) 2
            > LPOS l c MAXLEN 2
            (nil)
            > LPOS l c MAXLEN 3 COUNT 0
            1) (integer) 2
            > LPOS l c RANK 4
            (nil)
            > LPOS l z
            (nil)
            > LPOS l z COUNT 0
            (empty array)
            > LPOS missing z COUNT 0
            (empty array)
            > LPOS missing z
            (nil)
            > LPOS l c RANK -9223372036854775808
            (integer) 7
            > LPOS l c RANK -9223372036854775808 COUNT 1
            1) (integer) 7
            2) (integer) 6
            3) (integer) 2
            > LPOS l c RANK 9223372036854775807
            (nil)
            > LPOS l c COUNT 1 COUNT 2
            1) (integer) 2
            2) (integer) 6
        "#,
    );
    let rank_zero = "(error) ERR RANK can't be zero: use 1 to start from the first match, \
                     2 from the second ... or use negative to start from the end of the list";
    assert_eq!(t.cli("LPOS l c RANK 0"), rank_zero);
    assert_eq!(t.cli("LPOS missing c RANK 0"), rank_zero);
    t.script(
        r#"
            === lpos options
            > LPOS l c COUNT -1
            (error) ERR COUNT can't be negative
            > LPOS l c COUNT x
            (error) ERR COUNT can't be negative
            > LPOS l c MAXLEN -1
            (error) ERR MAXLEN can't be negative
            > LPOS l c RANK x
            (error) ERR value is not an integer or out of range
            > LPOS l c foo
            (error) ERR syntax error
            > LPOS l c RANK
            (error) ERR syntax error
            > SET s v
            OK
            > LPOS s c
            (error) WRONGTYPE Operation against a key holding the wrong kind of value
        "#,
    );
    assert_eq!(t.cli("LPOS s c RANK 0"), rank_zero);
}

#[test]
fn lmove_between_lists() {
    let t = TestEngine::in_memory();
    t.script(
        r#"
            === lmove between lists
            > RPUSH src a b c
            (integer) 3
            > LMOVE src dst LEFT RIGHT
            "a"
            > RPOPLPUSH src dst
            "c"
        "#,
    );
    replay(
        &t,
        r#"
            === lmove between lists
            @state src 1 2 b
            @state dst -1 1 c a
            > LMOVE src dst right left
            "b"
            @state src gone
        "#,
    );
    t.script(
        r#"
            === lmove between lists
            > LRANGE dst 0 -1
            1) "b"
            2) "c"
            3) "a"
            # A missing source: nil, whatever the destination holds.
            > SET s v
            OK
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
    replay(
        &t,
        r#"
            === lmove rotates a list onto itself
            > RPUSH l a b c
            (integer) 3
            > LMOVE l l LEFT RIGHT
            "a"
            @state l 1 4 b c a
            > RPOPLPUSH l l
            "a"
            @state l 0 3 a b c
            > LMOVE l l RIGHT RIGHT
            "c"
            > LMOVE l l LEFT LEFT
            "a"
            @state l 0 3 a b c
            > RPUSH one x
            (integer) 1
            > LMOVE one one LEFT RIGHT
            "x"
            @state one 0 1 x
        "#,
    );
}

#[test]
fn a_big_list_is_read_by_windows() {
    let t = TestEngine::in_memory();
    let n = 10_000;
    t.push_numbers("big", n);
    t.script(
        r#"
            === a big list is read by windows
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
            === a big list is read by windows
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
        crate::types::list::read_all(&ctx, b"l", &meta).unwrap()
    };
    assert_eq!(
        values,
        vec![b"z".to_vec(), b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]
    );
    let mut ctx = Ctx::new(&t.engine);
    let mut meta = ctx.typed_or_create(b"copy", DataType::List).unwrap();
    crate::types::list::write_all(ValueMut::new(&mut ctx, b"copy", &mut meta), &values).unwrap();
    assert_eq!(meta.size, 4);
    ctx.save(b"copy", &meta).unwrap();
    ctx.commit().unwrap();
    assert_eq!(stored(&t, "copy"), (0, 4, run(0, "z a b c")));
}
