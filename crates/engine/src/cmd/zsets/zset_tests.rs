//! Sorted-set commands against a real store, with replies checked against
//! Redis 7.0.

use crate::cmd::testkit::{TestEngine, WRONG};
use crate::store::MemStore;

/// Runs each line and checks its redis-cli rendering.
fn check(t: &TestEngine<MemStore>, script: &[(&str, &str)]) {
    for (line, expected) in script {
        assert_eq!(t.cli(line), *expected, "{line}");
    }
}

/// Items as redis-cli prints an array of bulk strings.
pub(super) fn lines(items: &[&str]) -> String {
    let width = items.len().to_string().len();
    items
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{:>width$}) \"{s}\"", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn zadd_flags_follow_redis() {
    let t = TestEngine::in_memory();
    check(
        &t,
        &[
            ("ZADD z ch 2 a", "(integer) 1"),
            ("ZADD z ch 1 a 2 a", "(integer) 2"),
            ("ZADD z ch 1 a 1 a", "(integer) 1"),
            ("ZADD z nx 1 m 2 m", "(integer) 1"),
            ("ZSCORE z m", "\"1\""),
            ("ZADD z 1 a", "(integer) 0"),
            ("ZADD z xx ch 3 nope", "(integer) 0"),
            ("ZSCORE z nope", "(nil)"),
            ("ZADD z xx incr 1 nope", "(nil)"),
            ("ZADD z incr 0 a", "\"1\""),
            ("ZADD z lt incr 0 a", "(nil)"),
            ("ZADD z gt incr 0 a", "(nil)"),
            ("ZADD z ch incr 1 a", "\"2\""),
            ("ZADD z nx ch 5 a 5 k", "(integer) 1"),
            ("ZADD z inf a", "(integer) 0"),
            ("ZADD z ch gt 5 a 1 b 0 c", "(integer) 2"),
            ("ZADD z lt ch 4 a 4 b", "(integer) 1"),
            ("ZADD z 1 q 1 q 2 q", "(integer) 1"),
            ("ZSCORE z q", "\"2\""),
            ("ZCARD z", "(integer) 6"),
            ("ZADD x xx 1 a", "(integer) 0"),
            ("EXISTS x", "(integer) 0"),
        ],
    );
}

/// More members than `first_seen` scans (16), repeated before and after
/// its map takes over; replies from redis-server 7.0.15.
#[test]
fn zadd_and_zrem_of_many_members_with_repeats_follow_redis() {
    let t = TestEngine::in_memory();
    let pairs = |score: &dyn Fn(usize) -> usize| -> String {
        (0..20).map(|i| format!(" {} m{i}", score(i))).collect()
    };
    let zadd = format!("ZADD z{} 100 m0 200 m19", pairs(&|i| i));
    let zadd_ch = format!("ZADD z ch{} 7 m3", pairs(&|i| i % 2));
    let zrem: String = (1..18).map(|i| format!(" m{i}")).collect();
    let zrem = format!("ZREM z m0 m0{zrem} m1 nope");
    check(
        &t,
        &[
            (zadd.as_str(), "(integer) 20"),
            ("ZSCORE z m0", "\"100\""),
            ("ZSCORE z m19", "\"200\""),
            (zadd_ch.as_str(), "(integer) 20"),
            ("ZSCORE z m3", "\"7\""),
            (zrem.as_str(), "(integer) 18"),
            (
                "ZRANGE z 0 -1 WITHSCORES",
                &lines(&["m18", "0", "m19", "1"]),
            ),
        ],
    );
}

#[test]
fn zadd_errors_follow_redis() {
    let t = TestEngine::in_memory();
    check(
        &t,
        &[
            (
                "ZADD z nx xx 1 a",
                "(error) ERR XX and NX options at the same time are not compatible",
            ),
            (
                "ZADD z gt lt 1 a",
                "(error) ERR GT, LT, and/or NX options at the same time are not compatible",
            ),
            (
                "ZADD z gt nx 1 a",
                "(error) ERR GT, LT, and/or NX options at the same time are not compatible",
            ),
            (
                "ZADD z incr 1 a 2 b",
                "(error) ERR INCR option supports a single increment-element pair",
            ),
            ("ZADD z nan a", "(error) ERR value is not a valid float"),
            ("ZADD z 1 a 2", "(error) ERR syntax error"),
            ("ZADD z 1 a x b", "(error) ERR value is not a valid float"),
            ("ZADD z nx xx", "(error) ERR syntax error"),
            ("ZADD z 1e400 a", "(error) ERR value is not a valid float"),
            (
                "ZADD z 1",
                "(error) ERR wrong number of arguments for 'zadd' command",
            ),
            ("EXISTS z", "(integer) 0"),
            ("ZADD z 0x10 hex", "(integer) 1"),
            ("ZSCORE z hex", "\"16\""),
            ("ZADD z incr 1e308 q", "\"1e+308\""),
            ("ZADD z incr 1e308 q", "\"inf\""),
            (
                "ZADD z incr -inf q",
                "(error) ERR resulting score is not a number (NaN)",
            ),
            (
                "ZINCRBY z -inf q",
                "(error) ERR resulting score is not a number (NaN)",
            ),
            ("ZSCORE z q", "\"inf\""),
            ("ZINCRBY z nan q", "(error) ERR value is not a valid float"),
            ("ZINCRBY z 0.1 new", "\"0.10000000000000001\""),
            ("SET s x", "OK"),
            ("ZADD s 1 a", WRONG),
            ("ZINCRBY s 1 a", WRONG),
        ],
    );
}

#[test]
fn negative_zero_is_stored_as_zero() {
    let t = TestEngine::in_memory();
    check(
        &t,
        &[
            ("ZADD z -0 m", "(integer) 1"),
            ("ZSCORE z m", "\"0\""),
            ("ZADD z 0 a -0 b", "(integer) 2"),
            (
                "ZRANGE z 0 -1 WITHSCORES",
                &lines(&["a", "0", "b", "0", "m", "0"]),
            ),
            ("ZRANGEBYSCORE z -0 0", &lines(&["a", "b", "m"])),
            ("ZADD z incr -0 n", "\"-0\""),
            ("ZSCORE z n", "\"0\""),
            ("ZADD z -0 a", "(integer) 0"),
        ],
    );
}

#[test]
fn point_reads_and_removal() {
    let t = TestEngine::in_memory();
    check(
        &t,
        &[
            ("ZMSCORE nokey a b", "1) (nil)\n2) (nil)"),
            ("ZADD z 1 a 2.5 b", "(integer) 2"),
            ("ZMSCORE z a x b", "1) \"1\"\n2) (nil)\n3) \"2.5\""),
            ("ZCARD z", "(integer) 2"),
            ("ZCARD nokey", "(integer) 0"),
            ("ZREM z a a x", "(integer) 1"),
            ("ZREM nokey a", "(integer) 0"),
            ("ZRANGE z 0 -1", "1) \"b\""),
            ("ZREM z b", "(integer) 1"),
            ("EXISTS z", "(integer) 0"),
            ("SET s x", "OK"),
            ("ZCARD s", WRONG),
            ("ZSCORE s a", WRONG),
            ("ZMSCORE s a", WRONG),
            ("ZREM s a", WRONG),
        ],
    );
}

#[test]
fn zrange_options_follow_redis() {
    let t = TestEngine::in_memory();
    t.run("ZADD z 1 a 2 b 3 c 4 d 16 hex inf i -inf ni");
    check(
        &t,
        &[
            ("ZRANGE z 0 1 WITHSCORES", &lines(&["ni", "-inf", "a", "1"])),
            ("ZRANGE z -2 -1 REV", &lines(&["a", "ni"])),
            ("ZREVRANGE z 0 0 WITHSCORES", &lines(&["i", "inf"])),
            ("ZRANGE z 5 1", "(empty array)"),
            ("ZRANGEBYSCORE z (1 3", &lines(&["b", "c"])),
            ("ZRANGEBYSCORE z \"\" 2", &lines(&["a", "b"])),
            ("ZRANGEBYSCORE z \" 1\" 2", &lines(&["a", "b"])),
            ("ZRANGEBYSCORE z ( 2", &lines(&["a", "b"])),
            ("ZRANGEBYSCORE z -1e400 1", &lines(&["ni", "a"])),
            (
                "ZRANGEBYSCORE z (-inf (+inf",
                &lines(&["a", "b", "c", "d", "hex"]),
            ),
            ("ZRANGEBYSCORE z -inf inf LIMIT -1 5", "(empty array)"),
            (
                "ZRANGEBYSCORE z -inf inf LIMIT 1 -5",
                &lines(&["a", "b", "c", "d", "hex", "i"]),
            ),
            ("ZRANGEBYSCORE z -inf inf LIMIT 1 0", "(empty array)"),
            (
                "ZRANGEBYSCORE z -inf inf WITHSCORES WITHSCORES LIMIT 0 1 LIMIT 1 1",
                &lines(&["a", "1"]),
            ),
            ("ZRANGE z 5 (1 BYSCORE REV", &lines(&["d", "c", "b"])),
            ("ZRANGE z (1 5 BYSCORE REV", "(empty array)"),
            (
                "ZREVRANGEBYSCORE z 3 1 WITHSCORES LIMIT 1 1",
                &lines(&["b", "2"]),
            ),
            ("ZRANGE z 1 0 BYSCORE REV", &lines(&["a"])),
            (
                "ZRANGE z 0 -1 LIMIT 0 -1",
                &lines(&["ni", "a", "b", "c", "d", "hex", "i"]),
            ),
            ("ZRANGE nokey 0 -1", "(empty array)"),
        ],
    );
    check(
        &t,
        &[
            ("ZRANGEBYSCORE z -inf inf LIMIT 1", "(error) ERR syntax error"),
            ("ZRANGEBYSCORE z -inf inf REV", "(error) ERR syntax error"),
            ("ZRANGE z 0 -1 LIMIT 0 1", "(error) ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"),
            ("ZRANGE z 0 -1 BYLEX WITHSCORES", "(error) ERR syntax error, WITHSCORES not supported in combination with BYLEX"),
            ("ZRANGEBYLEX z - + WITHSCORES", "(error) ERR syntax error, WITHSCORES not supported in combination with BYLEX"),
            ("ZRANGE z a b BYSCORE", "(error) ERR min or max is not a float"),
            ("ZRANGEBYSCORE z \"(1 \" 2", "(error) ERR min or max is not a float"),
            ("ZRANGEBYSCORE z nan 2", "(error) ERR min or max is not a float"),
            ("ZRANGE z a b BYLEX", "(error) ERR min or max not valid string range item"),
            ("ZRANGE z a b", "(error) ERR value is not an integer or out of range"),
            ("ZRANGE z [a [c BYLEX BYSCORE", "(error) ERR syntax error"),
            ("ZRANGE z 0 1 REV REV", "(error) ERR syntax error"),
            ("ZRANGE z 1 0 BYSCORE REV LIMIT 0 x", "(error) ERR value is not an integer or out of range"),
            ("ZRANGEBYSCORE z -inf +inf LIMIT 9223372036854775808 1", "(error) ERR value is not an integer or out of range"),
            ("SET s x", "OK"),
            ("ZRANGE s 0 -1", WRONG),
            ("ZRANGE s 0 -1 LIMIT 0 1", "(error) ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"),
            ("ZRANGEBYSCORE s a b", "(error) ERR min or max is not a float"),
        ],
    );
}

#[test]
fn lex_ranges_follow_redis() {
    let t = TestEngine::in_memory();
    t.run("ZADD lx 0 a 0 b 0 c 0 d 0 e");
    check(
        &t,
        &[
            (
                "ZRANGEBYLEX lx [b + LIMIT 0 -1",
                &lines(&["b", "c", "d", "e"]),
            ),
            ("ZRANGEBYLEX lx (b [d", &lines(&["c", "d"])),
            ("ZRANGEBYLEX lx - + LIMIT -1 2", "(empty array)"),
            ("ZRANGEBYLEX lx - + LIMIT 1 2", &lines(&["b", "c"])),
            ("ZLEXCOUNT lx (a [c", "(integer) 2"),
            ("ZRANGEBYLEX lx (a (a", "(empty array)"),
            ("ZREVRANGEBYLEX lx + - LIMIT 1 2", &lines(&["d", "c"])),
            ("ZREVRANGEBYLEX lx [c (a", &lines(&["c", "b"])),
            ("ZREVRANGEBYLEX lx (c -", &lines(&["b", "a"])),
            ("ZRANGE lx [d + BYLEX", &lines(&["d", "e"])),
            ("ZRANGE lx + [d BYLEX REV", &lines(&["e", "d"])),
            ("ZRANGEBYLEX lx [z +", "(empty array)"),
            (
                "ZLEXCOUNT lx a b",
                "(error) ERR min or max not valid string range item",
            ),
            (
                "ZRANGEBYLEX lx +a +",
                "(error) ERR min or max not valid string range item",
            ),
            ("ZREMRANGEBYLEX lx (a [c", "(integer) 2"),
            ("ZRANGE lx 0 -1", &lines(&["a", "d", "e"])),
        ],
    );
    // With mixed scores Redis (compact encoding) checks the first and last
    // entries, then walks from the first entry at or past the minimum.
    t.run("ZADD mixed 1 a 2 b 3 c 4 d -inf ni");
    check(
        &t,
        &[
            ("ZRANGEBYLEX mixed [a (c LIMIT 0 1", "(empty array)"),
            ("ZRANGEBYLEX mixed - +", &lines(&["ni", "a", "b", "c", "d"])),
            ("ZRANGEBYLEX mixed [o +", "(empty array)"),
            (
                "ZRANGEBYLEX mixed [b +",
                &lines(&["ni", "a", "b", "c", "d"]),
            ),
            ("ZREVRANGEBYLEX mixed (c -", "(empty array)"),
            ("ZLEXCOUNT mixed [b +", "(integer) 5"),
        ],
    );
}

#[test]
fn counts_ranks_and_range_removal() {
    let t = TestEngine::in_memory();
    t.run("ZADD z 1 a 2 b 3 c");
    check(
        &t,
        &[
            ("ZCOUNT z ( 3", "(integer) 3"),
            ("ZCOUNT z (1 3", "(integer) 2"),
            ("ZCOUNT z 3 1", "(integer) 0"),
            ("ZCOUNT nokey -inf inf", "(integer) 0"),
            ("ZCOUNT z a b", "(error) ERR min or max is not a float"),
            ("ZRANK z c", "(integer) 2"),
            ("ZRANK z nope", "(nil)"),
            ("ZREVRANK z c", "(integer) 0"),
            ("ZRANK nokey a", "(nil)"),
            (
                "ZRANK z c withscore",
                "(error) ERR wrong number of arguments for 'zrank' command",
            ),
            ("ZREMRANGEBYRANK z 5 10", "(integer) 0"),
            (
                "ZREMRANGEBYRANK z a 1",
                "(error) ERR value is not an integer or out of range",
            ),
            ("ZREMRANGEBYSCORE z (1 2", "(integer) 1"),
            ("ZREMRANGEBYRANK z -1 -1", "(integer) 1"),
            ("ZRANGE z 0 -1", "1) \"a\""),
            ("ZREMRANGEBYLEX z - +", "(integer) 1"),
            ("EXISTS z", "(integer) 0"),
            ("ZREMRANGEBYSCORE nokey -inf inf", "(integer) 0"),
        ],
    );
}

#[test]
fn pops_follow_redis() {
    let t = TestEngine::in_memory();
    t.run("ZADD z 1 a 2 b 3 c");
    t.run("SET s x");
    check(
        &t,
        &[
            (
                "ZPOPMIN z -1",
                "(error) ERR value is out of range, must be positive",
            ),
            (
                "ZPOPMIN z x",
                "(error) ERR value is out of range, must be positive",
            ),
            ("ZPOPMIN z 1 2", "(error) ERR syntax error"),
            ("ZPOPMIN z 0", "(empty array)"),
            ("ZPOPMIN s 0", WRONG),
            ("ZPOPMIN nokey 2", "(empty array)"),
            ("ZPOPMAX z 2", &lines(&["c", "3", "b", "2"])),
            ("ZPOPMIN z 9223372036854775807", &lines(&["a", "1"])),
            ("EXISTS z", "(integer) 0"),
            ("ZPOPMIN z", "(empty array)"),
        ],
    );
}

#[test]
fn union_and_intersection_store_follow_redis() {
    let t = TestEngine::in_memory();
    t.run("ZADD a 1 x 2 y");
    t.run("SADD st x q");
    t.run("SET s str");
    check(
        &t,
        &[
            (
                "ZUNIONSTORE d 0 a",
                "(error) ERR at least 1 input key is needed for 'zunionstore' command",
            ),
            (
                "ZINTERSTORE d -1 a",
                "(error) ERR at least 1 input key is needed for 'zinterstore' command",
            ),
            (
                "ZUNIONSTORE d x a",
                "(error) ERR value is not an integer or out of range",
            ),
            ("ZUNIONSTORE d 3 a", "(error) ERR syntax error"),
            ("ZUNIONSTORE d 1 s WEIGHTS x", WRONG),
            ("ZUNIONSTORE d 2 a st WEIGHTS 2", "(error) ERR syntax error"),
            (
                "ZUNIONSTORE d 2 a st WEIGHTS 2 x",
                "(error) ERR weight value is not a float",
            ),
            (
                "ZUNIONSTORE d 2 a st WEIGHTS nan 1",
                "(error) ERR weight value is not a float",
            ),
            (
                "ZUNIONSTORE d 2 a st AGGREGATE foo",
                "(error) ERR syntax error",
            ),
            ("ZUNIONSTORE d 2 a st AGGREGATE", "(error) ERR syntax error"),
            (
                "ZUNIONSTORE d 2 a st WITHSCORES",
                "(error) ERR syntax error",
            ),
            ("EXISTS d", "(integer) 0"),
            ("ZUNIONSTORE d 2 a st", "(integer) 3"),
            (
                "ZRANGE d 0 -1 WITHSCORES",
                &lines(&["q", "1", "x", "2", "y", "2"]),
            ),
            ("ZINTERSTORE d 2 a st", "(integer) 1"),
            ("ZRANGE d 0 -1 WITHSCORES", &lines(&["x", "2"])),
            (
                "ZUNIONSTORE d 2 a st WEIGHTS 2 3 AGGREGATE max",
                "(integer) 3",
            ),
            (
                "ZRANGE d 0 -1 WITHSCORES",
                &lines(&["q", "3", "x", "3", "y", "4"]),
            ),
            ("ZUNIONSTORE d 2 a st WEIGHTS inf 0", "(integer) 3"),
            (
                "ZRANGE d 0 -1 WITHSCORES",
                &lines(&["q", "0", "x", "inf", "y", "inf"]),
            ),
            ("ZUNIONSTORE a 2 a a", "(integer) 2"),
            ("ZRANGE a 0 -1 WITHSCORES", &lines(&["x", "2", "y", "4"])),
            ("ZINTERSTORE d 2 a nokey", "(integer) 0"),
            ("EXISTS d", "(integer) 0"),
            ("ZUNIONSTORE s 1 a", "(integer) 2"),
            ("TYPE s", "zset"),
            ("ZUNIONSTORE s 1 nokey", "(integer) 0"),
            ("EXISTS s", "(integer) 0"),
        ],
    );
}

#[test]
fn zscan_pages_in_order() {
    let t = TestEngine::in_memory();
    check(
        &t,
        &[("ZSCAN nokey 0 COUNT 0", "1) \"0\"\n2) (empty array)")],
    );
    t.run("ZADD z 3 c 1 a 2 b 0.5 ab");
    check(
        &t,
        &[
            ("ZSCAN z 0", "1) \"0\"\n2) 1) \"ab\"\n   2) \"0.5\"\n   3) \"a\"\n   4) \"1\"\n   5) \"b\"\n   6) \"2\"\n   7) \"c\"\n   8) \"3\""),
            ("ZSCAN z 0 COUNT 2 MATCH a*", "1) \"2\"\n2) 1) \"ab\"\n   2) \"0.5\"\n   3) \"a\"\n   4) \"1\""),
            ("ZSCAN z 2 COUNT 2", "1) \"0\"\n2) 1) \"b\"\n   2) \"2\"\n   3) \"c\"\n   4) \"3\""),
            ("ZSCAN z x", "(error) ERR invalid cursor"),
            ("ZSCAN z 0 COUNT 0", "(error) ERR syntax error"),
        ],
    );
}

#[test]
fn big_sets_stay_ordered() {
    let t = TestEngine::in_memory();
    let n = 2000;
    let mut line = String::from("ZADD big");
    // Scores go down while names go up, so neither order is the other.
    for i in 0..n {
        line.push_str(&format!(" {} m{i:05}", (n - i) / 2));
    }
    assert_eq!(t.cli(&line), format!("(integer) {n}"));
    assert_eq!(t.cli("ZCARD big"), format!("(integer) {n}"));
    // Score k in 1..=999 is shared by m(1999-2k) and m(2000-2k); m01999
    // has 0 and m00000 has 1000.
    check(
        &t,
        &[
            (
                "ZRANGE big 0 2 WITHSCORES",
                &lines(&["m01999", "0", "m01997", "1", "m01998", "1"]),
            ),
            ("ZRANGE big -2 -1", &lines(&["m00002", "m00000"])),
            ("ZRANGE big 0 1 REV", &lines(&["m00000", "m00002"])),
            ("ZRANK big m00000", &format!("(integer) {}", n - 1)),
            ("ZREVRANK big m01999", &format!("(integer) {}", n - 1)),
            ("ZCOUNT big 10 (20", "(integer) 20"),
            ("ZRANGEBYSCORE big 500 500", &lines(&["m00999", "m01000"])),
            (
                "ZREVRANGEBYSCORE big 500 500",
                &lines(&["m01000", "m00999"]),
            ),
            ("ZRANGEBYSCORE big (999 +inf", &lines(&["m00000"])),
            (
                "ZREVRANGEBYSCORE big +inf -inf LIMIT 1 1",
                &lines(&["m00002"]),
            ),
            (
                "ZREMRANGEBYSCORE big 1 999",
                &format!("(integer) {}", n - 2),
            ),
            (
                "ZRANGE big 0 -1 WITHSCORES",
                &lines(&["m01999", "0", "m00000", "1000"]),
            ),
            ("ZPOPMAX big", &lines(&["m00000", "1000"])),
            ("ZPOPMAX big", &lines(&["m01999", "0"])),
            ("EXISTS big", "(integer) 0"),
        ],
    );
}

/// A format whose score index keeps 5 decimals and whose scores are
/// limited: Kvrocks records, with index scores rounded on the way in. It
/// runs the engine's lossy-index paths end to end.
mod lossy {
    use std::sync::Arc;

    use redcodec_codec::{
        Codec, DataType, Declaration, DecodeError, Elements, EncodeError, GcDecision, KeyRange,
        Meta, Place, Record, ScoreIndex, SubId, SubIdRef, SubKind, SubOwner, SubValue, SubValueRef,
    };
    use redcodec_kvrocks::KvrocksCodec;

    use crate::clock::ManualClock;
    use crate::engine::{Engine, EngineOptions};

    pub(super) struct Lossy {
        inner: KvrocksCodec,
        declared: Declaration,
    }

    /// Rounds to 5 decimals, as a lossy index would.
    fn rounded(score: f64) -> f64 {
        let r = (score * 1e5).round() / 1e5;
        if r.is_finite() {
            r
        } else {
            score
        }
    }

    fn index_id(kind: SubKind, id: SubIdRef<'_>) -> SubIdRef<'_> {
        match (kind, id) {
            (SubKind::ZSetScore, SubIdRef::Scored { score, member }) => SubIdRef::Scored {
                score: rounded(score),
                member,
            },
            _ => id,
        }
    }

    impl Codec for Lossy {
        fn declaration(&self) -> &Declaration {
            &self.declared
        }
        fn next_version(&self, now_us: u64, counter: u64, previous: Option<u64>) -> u64 {
            self.inner.next_version(now_us, counter, previous)
        }
        fn new_meta(&self, data_type: DataType, version: u64) -> Meta {
            self.inner.new_meta(data_type, version)
        }
        fn meta_record(&self, key: &[u8], data_type: DataType) -> Result<Record, EncodeError> {
            self.inner.meta_record(key, data_type)
        }
        fn encode_meta_with(&self, meta: &Meta, string: &[u8]) -> Result<Vec<u8>, EncodeError> {
            self.inner.encode_meta_with(meta, string)
        }
        fn decode_meta(&self, data_type: DataType, raw: &[u8]) -> Result<Meta, DecodeError> {
            self.inner.decode_meta(data_type, raw)
        }
        fn meta_ranges(&self) -> Vec<(KeyRange, Option<DataType>)> {
            self.inner.meta_ranges()
        }
        fn decode_meta_key(
            &self,
            place: Place,
            raw: &[u8],
        ) -> Result<Option<Vec<u8>>, DecodeError> {
            self.inner.decode_meta_key(place, raw)
        }
        fn flush_ranges(&self) -> Vec<KeyRange> {
            self.inner.flush_ranges()
        }
        fn sub_place(&self, kind: SubKind, key: &[u8]) -> Place {
            self.inner.sub_place(kind, key)
        }
        fn sub_key(&self, of: Elements<'_>, id: SubIdRef<'_>) -> Vec<u8> {
            self.inner.sub_key(of, index_id(of.kind, id))
        }
        fn sub_range(&self, of: Elements<'_>) -> KeyRange {
            self.inner.sub_range(of)
        }
        fn decode_sub_key(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubId, DecodeError> {
            self.inner.decode_sub_key(of, raw)
        }
        fn encode_sub_value(&self, of: Elements<'_>, value: SubValueRef<'_>) -> Vec<u8> {
            self.inner.encode_sub_value(of, value)
        }
        fn decode_sub_value(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubValue, DecodeError> {
            self.inner.decode_sub_value(of, raw)
        }
        fn gc_meta(&self, place: Place, key: &[u8], value: &[u8], now_ms: u64) -> GcDecision {
            self.inner.gc_meta(place, key, value, now_ms)
        }
        fn gc_sub_owner(&self, place: Place, key: &[u8], value: &[u8]) -> Option<SubOwner> {
            self.inner.gc_sub_owner(place, key, value)
        }
        fn gc_sub(&self, owner: &SubOwner, meta: Option<&[u8]>, now_ms: u64) -> GcDecision {
            self.inner.gc_sub(owner, meta, now_ms)
        }
    }

    /// An engine on the lossy format, and what keeps it alive.
    pub(super) struct LossyEngine {
        engine: Engine<Lossy>,
        _dir: tempfile::TempDir,
    }

    impl LossyEngine {
        pub(super) fn new() -> LossyEngine {
            let inner = KvrocksCodec::default();
            let mut caps = inner.capabilities().clone();
            caps.score_index = ScoreIndex::Rounded { decimals: 5 };
            caps.score_limit = Some((-1e13, 1e13));
            let dir = tempfile::tempdir().expect("tempdir");
            let clock = Arc::new(ManualClock::at_ms(1_700_000_000_000));
            let declared = Declaration {
                name: "lossy",
                layout: inner.layout().clone(),
                capabilities: caps,
            };
            let engine = Engine::open(
                Lossy { inner, declared },
                dir.path(),
                EngineOptions::with_clock(clock),
            )
            .expect("open");
            LossyEngine { engine, _dir: dir }
        }

        pub(super) fn cli(&self, line: &str) -> String {
            let args = crate::cmdline::split_args(line).expect("valid command line");
            self.engine.execute(&args).to_cli_string()
        }
    }
}

#[test]
fn lossy_score_indexes_read_in_exact_order() {
    let t = lossy::LossyEngine::new();
    let script: &[(&str, &str)] = &[
        ("ZADD z 1.000002 a 1.000001 b 0.000004 c -0.000004 d 2 e", "(integer) 5"),
        (
            "ZRANGE z 0 -1 WITHSCORES",
            &lines(&[
                "d", "-3.9999999999999998e-06", "c", "3.9999999999999998e-06", "b", "1.0000009999999999",
                "a", "1.0000020000000001", "e", "2",
            ]),
        ),
        ("ZRANGE z 0 -1 REV", &lines(&["e", "a", "b", "c", "d"])),
        ("ZRANK z a", "(integer) 3"),
        ("ZREVRANK z b", "(integer) 2"),
        ("ZRANGEBYSCORE z (1.000001 +inf", &lines(&["a", "e"])),
        ("ZRANGEBYSCORE z 1.000001 1.000001", &lines(&["b"])),
        ("ZREVRANGEBYSCORE z (1.000002 -inf", &lines(&["b", "c", "d"])),
        ("ZRANGEBYSCORE z (-0.000004 0.000004", &lines(&["c"])),
        ("ZCOUNT z 0 1.0000015", "(integer) 2"),
        ("ZRANGE z -2 -1", &lines(&["a", "e"])),
        ("ZADD z 1.000003 b", "(integer) 0"),
        ("ZRANGE z 2 3", &lines(&["a", "b"])),
        ("ZINCRBY z -0.000002 b", "\"1.0000009999999999\""),
        ("ZRANGE z 2 3", &lines(&["b", "a"])),
        ("ZPOPMIN z", &lines(&["d", "-3.9999999999999998e-06"])),
        ("ZREMRANGEBYSCORE z (1.000001 1.000002", "(integer) 1"),
        ("ZRANGE z 0 -1", &lines(&["c", "b", "e"])),
        ("ZADD z 1e14 big", "(error) ERR score 100000000000000 is out of range for the lossy format (from -10000000000000 to 10000000000000)"),
        ("ZINCRBY z 1e14 e", "(error) ERR score 100000000000002 is out of range for the lossy format (from -10000000000000 to 10000000000000)"),
        ("ZSCORE z e", "\"2\""),
        ("ZADD lx 0 c 0 a 0.000001 b 0 d", "(integer) 4"),
        ("ZRANGEBYLEX lx [b +", &lines(&["c", "d", "b"])),
        ("ZUNIONSTORE u 2 z lx WEIGHTS 1 2", "(integer) 5"),
        ("ZRANGE u 0 -1", &lines(&["a", "d", "c", "b", "e"])),
        ("ZSCORE u b", "\"1.000003\""),
    ];
    for (line, expected) in script {
        assert_eq!(t.cli(line), *expected, "{line}");
    }
}
