//! Model-based property tests: random command sequences over a small
//! alphabet of keys, fields and values, run on every format and on the
//! in-memory reference model; every reply must be identical. A failure
//! shrinks to a minimal sequence.
//!
//! 200 sequences of 50 commands per format by default; set
//! `REDCODEC_PROPTEST_CASES` for more.

use std::cell::RefCell;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use redcodec_conformance::expect::matches;
use redcodec_conformance::model::Model;
use redcodec_conformance::scenario::Mode;
use redcodec_conformance::target::{EngineTarget, Target};
use redcodec_formats::Format;

/// One generated step: a command, or time passing.
#[derive(Clone, Debug)]
enum Step {
    Cmd(Vec<String>),
    Sleep(u64),
}

fn pick(words: &'static [&'static str]) -> impl Strategy<Value = String> {
    proptest::sample::select(words).prop_map(str::to_string)
}

fn step() -> impl Strategy<Value = Step> {
    let key = || pick(&["a", "b", "c"]);
    let elem = || pick(&["x", "y", "z"]);
    let val = || pick(&["1", "2", "v", ""]);
    let idx = || pick(&["0", "1", "-1", "2", "-2", "5"]);
    let score = || pick(&["-1", "0", "0.5", "1", "2", "1.5"]);
    let cmd = |parts: Vec<BoxedStrategy<String>>| parts.prop_map(Step::Cmd);
    let lit = |s: &'static str| Just(s.to_string()).boxed();
    prop_oneof![
        cmd(vec![lit("SET"), key().boxed(), val().boxed()]),
        cmd(vec![
            lit("SET"),
            key().boxed(),
            val().boxed(),
            lit("PX"),
            pick(&["5", "50", "500"]).boxed()
        ]),
        cmd(vec![lit("GET"), key().boxed()]),
        cmd(vec![lit("APPEND"), key().boxed(), val().boxed()]),
        cmd(vec![lit("STRLEN"), key().boxed()]),
        cmd(vec![lit("INCR"), key().boxed()]),
        cmd(vec![lit("DEL"), key().boxed()]),
        cmd(vec![lit("EXISTS"), key().boxed()]),
        cmd(vec![lit("TYPE"), key().boxed()]),
        cmd(vec![
            lit("PEXPIRE"),
            key().boxed(),
            pick(&["-1", "10", "100", "1000"]).boxed()
        ]),
        cmd(vec![lit("PTTL"), key().boxed()]),
        cmd(vec![lit("PERSIST"), key().boxed()]),
        cmd(vec![lit("RENAME"), key().boxed(), key().boxed()]),
        cmd(vec![
            lit("HSET"),
            key().boxed(),
            elem().boxed(),
            val().boxed()
        ]),
        cmd(vec![lit("HDEL"), key().boxed(), elem().boxed()]),
        cmd(vec![lit("HGET"), key().boxed(), elem().boxed()]),
        cmd(vec![lit("HLEN"), key().boxed()]),
        cmd(vec![lit("HGETALL"), key().boxed()]),
        cmd(vec![lit("LPUSH"), key().boxed(), elem().boxed()]),
        cmd(vec![lit("RPUSH"), key().boxed(), elem().boxed()]),
        cmd(vec![lit("LPOP"), key().boxed()]),
        cmd(vec![lit("RPOP"), key().boxed()]),
        cmd(vec![lit("LLEN"), key().boxed()]),
        cmd(vec![
            lit("LRANGE"),
            key().boxed(),
            idx().boxed(),
            idx().boxed()
        ]),
        cmd(vec![lit("LINDEX"), key().boxed(), idx().boxed()]),
        cmd(vec![
            lit("LSET"),
            key().boxed(),
            idx().boxed(),
            elem().boxed()
        ]),
        cmd(vec![
            lit("LREM"),
            key().boxed(),
            pick(&["0", "1", "-1", "2"]).boxed(),
            elem().boxed()
        ]),
        cmd(vec![
            lit("LINSERT"),
            key().boxed(),
            pick(&["BEFORE", "AFTER"]).boxed(),
            elem().boxed(),
            elem().boxed()
        ]),
        cmd(vec![
            lit("LTRIM"),
            key().boxed(),
            idx().boxed(),
            idx().boxed()
        ]),
        cmd(vec![lit("SADD"), key().boxed(), elem().boxed()]),
        cmd(vec![lit("SREM"), key().boxed(), elem().boxed()]),
        cmd(vec![lit("SCARD"), key().boxed()]),
        cmd(vec![lit("SISMEMBER"), key().boxed(), elem().boxed()]),
        cmd(vec![lit("SMEMBERS"), key().boxed()]),
        cmd(vec![
            lit("ZADD"),
            key().boxed(),
            score().boxed(),
            elem().boxed()
        ]),
        cmd(vec![
            lit("ZINCRBY"),
            key().boxed(),
            score().boxed(),
            elem().boxed()
        ]),
        cmd(vec![lit("ZREM"), key().boxed(), elem().boxed()]),
        cmd(vec![lit("ZCARD"), key().boxed()]),
        cmd(vec![lit("ZSCORE"), key().boxed(), elem().boxed()]),
        cmd(vec![lit("ZRANK"), key().boxed(), elem().boxed()]),
        cmd(vec![
            lit("ZRANGE"),
            key().boxed(),
            idx().boxed(),
            idx().boxed(),
            lit("WITHSCORES")
        ]),
        cmd(vec![
            lit("ZRANGEBYSCORE"),
            key().boxed(),
            score().boxed(),
            score().boxed()
        ]),
        pick(&["1", "20", "200"]).prop_map(|ms| Step::Sleep(ms.parse().unwrap_or(1))),
    ]
}

/// Commands whose reply order Redis does not define.
fn unordered(name: &str) -> bool {
    matches!(name, "HGETALL" | "SMEMBERS")
}

/// Runs `steps` on `target` (after FLUSHALL) and on a fresh model; the first
/// differing reply is an error naming the step.
fn agree(target: &mut EngineTarget, steps: &[Step]) -> Result<(), TestCaseError> {
    let flushed = target.execute(&[b"FLUSHALL".to_vec()]);
    prop_assert!(flushed.is_ok(), "FLUSHALL failed");
    // The model stores expiries at the resolution the format declares.
    let caps = target.engine().capabilities();
    let mut model =
        Model::with_expiry_rules(target.engine().now_ms(), caps.ttl, caps.relative_expiry);
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Sleep(ms) => {
                target.advance_ms(*ms);
                model.advance_ms(*ms);
            }
            Step::Cmd(words) => {
                let args: Vec<Vec<u8>> = words.iter().map(|w| w.clone().into_bytes()).collect();
                let expected = model.execute(&args);
                let actual = target
                    .execute(&args)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let mode = if unordered(&words[0]) {
                    Mode::Unordered
                } else {
                    Mode::Exact
                };
                let want: Vec<String> =
                    expected.to_cli_string().lines().map(String::from).collect();
                prop_assert!(
                    matches(&actual, &want, mode, &args),
                    "[{}] step {i}: {}\n  model:  {}\n  engine: {}",
                    target.name(),
                    words.join(" "),
                    expected.to_cli_string().replace('\n', " | "),
                    actual.to_cli_string().replace('\n', " | "),
                );
            }
        }
    }
    Ok(())
}

#[test]
fn every_format_agrees_with_the_model() {
    let cases = std::env::var("REDCODEC_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    for &format in Format::ALL {
        let target = RefCell::new(EngineTarget::new(format).expect("store opens"));
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&proptest::collection::vec(step(), 50), |steps| {
            agree(&mut target.borrow_mut(), &steps)
        });
        if let Err(e) = result {
            panic!("{format}: {e}");
        }
    }
}
