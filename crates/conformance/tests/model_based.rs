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
use redcodec_testkit::command_lines::{cases, line, word, Alphabets};

/// One generated step: a command, or time passing.
#[derive(Clone, Debug)]
enum Step {
    Cmd(Vec<String>),
    Sleep(u64),
}

/// The commands generated, one a line: each word is a literal, one of the
/// small alphabets (`key`, `elem`, `val`, `idx`, `score`), or `a|b|c`: one
/// of those words.
const COMMANDS: &[&str] = &[
    "SET key val",
    "SET key val PX 5|50|500",
    "GET key",
    "APPEND key val",
    "STRLEN key",
    "INCR key",
    "DEL key",
    "EXISTS key",
    "TYPE key",
    "PEXPIRE key -1|10|100|1000",
    "PTTL key",
    "PERSIST key",
    "RENAME key key",
    "HSET key elem val",
    "HDEL key elem",
    "HGET key elem",
    "HLEN key",
    "HGETALL key",
    "LPUSH key elem",
    "RPUSH key elem",
    "LPOP key",
    "RPOP key",
    "LLEN key",
    "LRANGE key idx idx",
    "LINDEX key idx",
    "LSET key idx elem",
    "LREM key 0|1|-1|2 elem",
    "LINSERT key BEFORE|AFTER elem elem",
    "LTRIM key idx idx",
    "SADD key elem",
    "SREM key elem",
    "SCARD key",
    "SISMEMBER key elem",
    "SMEMBERS key",
    "ZADD key score elem",
    "ZINCRBY key score elem",
    "ZREM key elem",
    "ZCARD key",
    "ZSCORE key elem",
    "ZRANK key elem",
    "ZRANGE key idx idx WITHSCORES",
    "ZRANGEBYSCORE key score score",
];

/// The alphabets of the [`COMMANDS`] words.
const ALPHABETS: Alphabets = &[
    ("key", &["a", "b", "c"]),
    ("elem", &["x", "y", "z"]),
    ("val", &["1", "2", "v", ""]),
    ("idx", &["0", "1", "-1", "2", "-2", "5"]),
    ("score", &["-1", "0", "0.5", "1", "2", "1.5"]),
];

fn step() -> impl Strategy<Value = Step> {
    let commands = COMMANDS
        .iter()
        .map(|template| line(template, ALPHABETS).prop_map(Step::Cmd).boxed());
    let sleep = word("1|20|200", ALPHABETS)
        .prop_map(|ms| Step::Sleep(ms.parse().unwrap_or(1)))
        .boxed();
    proptest::strategy::Union::new(commands.chain([sleep]))
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
    let cases = cases(200);
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
