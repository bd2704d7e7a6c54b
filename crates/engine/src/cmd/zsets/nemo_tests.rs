//! Sorted sets on the nemo format, whose score index keeps 5 decimals:
//! members whose scores differ by less than 1e-5 share one rounded index
//! score, and every reply still follows Redis' order with exact scores.

use redcodec_codec::{Codec, DataType, SubId, SubKind};
use redcodec_nemo::NemoCodec;

use super::zset_tests::lines;
use crate::cmd::testkit::TestEngine;
use crate::keyspace::Ctx;

#[test]
fn scores_closer_than_the_index_keeps_come_back_exact_and_in_order() {
    let t = TestEngine::of(NemoCodec::new());
    let engine = &t.engine;
    let cli = |line: &str| t.cli(line);
    // "a" sorts first by name, but has the higher score; both round to 1.0
    // in the index.
    assert_eq!(cli("ZADD z 1.000002 a 1.000001 b"), "(integer) 2");
    {
        let ctx = Ctx::new(engine);
        let meta = ctx.typed(b"z", DataType::ZSet).unwrap().unwrap();
        let indexed: Vec<SubId> = ctx
            .subs(SubKind::ZSetScore, b"z", &meta, None, false)
            .map(|r| r.unwrap().0)
            .collect();
        let rounded = |member: &[u8]| SubId::Scored {
            score: 1.0,
            member: member.to_vec(),
        };
        // Index order is by rounded score, then member: a before b.
        assert_eq!(indexed, vec![rounded(b"a"), rounded(b"b")]);
        assert_eq!(
            engine.codec().capabilities().score_limit,
            Some((-1e13, 1e13))
        );
    }
    let exact_b = "1.0000009999999999";
    let exact_a = "1.0000020000000001";
    for (line, expected) in [
        (
            "ZRANGE z 0 -1 WITHSCORES",
            lines(&["b", exact_b, "a", exact_a]),
        ),
        ("ZRANGE z 0 -1 REV", lines(&["a", "b"])),
        ("ZRANK z a", "(integer) 1".into()),
        ("ZRANK z b", "(integer) 0".into()),
        ("ZREVRANK z a", "(integer) 0".into()),
        ("ZRANGEBYSCORE z 1.0000015 +inf", lines(&["a"])),
        ("ZRANGEBYSCORE z -inf 1.0000015", lines(&["b"])),
        (
            "ZRANGEBYSCORE z (1.000001 1.000002 WITHSCORES",
            lines(&["a", exact_a]),
        ),
        ("ZREVRANGEBYSCORE z 1.0000015 -inf", lines(&["b"])),
        ("ZCOUNT z 1.0000015 1.0000025", "(integer) 1".into()),
        ("ZCOUNT z 1.000001 1.000002", "(integer) 2".into()),
        ("ZCOUNT z (1.000001 (1.000002", "(integer) 0".into()),
        ("ZSCORE z a", format!("\"{exact_a}\"")),
        ("ZPOPMIN z", lines(&["b", exact_b])),
        ("ZPOPMIN z", lines(&["a", exact_a])),
        ("EXISTS z", "(integer) 0".into()),
    ] {
        assert_eq!(cli(line), expected, "{line}");
    }
}
