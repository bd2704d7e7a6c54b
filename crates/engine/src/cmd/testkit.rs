//! Engine test helpers: a store (Kvrocks', or any format's) in a temporary
//! directory on a manual clock, and a one-line way to run commands.

use std::sync::Arc;

use redcodec_codec::Codec;
use redcodec_kvrocks::KvrocksCodec;

use crate::clock::ManualClock;
use crate::engine::{Engine, EngineOptions};
use redcodec_conformance::scenario::{parse, Mode, Step};

use crate::reply::Reply;
use crate::store::{KvStore, MemStore, Store};

/// A test engine and what keeps it alive: over RocksDB in a temporary
/// directory ([`TestEngine::new`], [`TestEngine::of`]) or over memory
/// ([`TestEngine::in_memory`]).
pub struct TestEngine<S: KvStore = Store, C: Codec = KvrocksCodec> {
    /// The engine.
    pub engine: Engine<C, S>,
    /// Its clock.
    pub clock: Arc<ManualClock>,
    _dir: Option<tempfile::TempDir>,
}

impl TestEngine<MemStore> {
    /// A fresh in-memory Kvrocks engine at time 1_700_000_000_000 ms.
    pub fn in_memory() -> TestEngine<MemStore> {
        let clock = Arc::new(ManualClock::at_ms(1_700_000_000_000));
        let engine = Engine::in_memory(KvrocksCodec::default(), clock.clone()).expect("engine");
        TestEngine {
            engine,
            clock,
            _dir: None,
        }
    }
}

impl TestEngine {
    /// A fresh Kvrocks store at time 1_700_000_000_000 ms.
    pub fn new() -> TestEngine {
        TestEngine::of(KvrocksCodec::default())
    }
}

impl<C: Codec> TestEngine<Store, C> {
    /// A fresh store of `codec`'s format at time 1_700_000_000_000 ms.
    pub fn of(codec: C) -> TestEngine<Store, C> {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = Arc::new(ManualClock::at_ms(1_700_000_000_000));
        let engine = Engine::open(codec, dir.path(), EngineOptions::with_clock(clock.clone()))
            .expect("open");
        TestEngine {
            engine,
            clock,
            _dir: Some(dir),
        }
    }
}

impl<S: KvStore, C: Codec> TestEngine<S, C> {
    /// Runs a command written as space-separated words.
    pub fn run(&self, line: &str) -> Reply {
        let args = crate::cmdline::split_args(line).expect("valid command line");
        self.engine.execute(&args)
    }

    /// Runs a command and renders its reply as redis-cli does.
    pub fn cli(&self, line: &str) -> String {
        self.run(line).to_cli_string()
    }

    /// `RPUSH key 0 1 … n-1`, checking that the list then holds `n` items.
    pub fn push_numbers(&self, key: &str, n: usize) {
        let values: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        assert_eq!(
            self.cli(&format!("RPUSH {key} {}", values.join(" "))),
            format!("(integer) {n}")
        );
    }

    /// Replays a transcript without `@state` lines; see
    /// [`TestEngine::script_with`].
    pub fn script(&self, transcript: &str) {
        self.script_with(transcript, |line| {
            panic!("no check for state lines: {line:?}");
        });
    }

    /// Replays a transcript written in the conformance corpus' grammar and
    /// read by its parser (`crates/conformance/scenarios/README.md`):
    /// `=== case` headers; each `> command` is run and its reply, as
    /// redis-cli prints it, compared with the lines under it; `@sleep MS`
    /// advances the clock; and each `@state …` line is handed to `state`,
    /// which checks what the store holds at that point in the test's own
    /// terms. The cases run in order on this engine, without a flush
    /// between them. The indentation of the first line is taken off every
    /// line, so a transcript can be indented as the code around it.
    pub fn script_with(&self, transcript: &str, mut state: impl FnMut(&str)) {
        let scenario = parse("transcript", &dedent(transcript)).unwrap_or_else(|e| panic!("{e}"));
        for case in &scenario.cases {
            for step in &case.steps {
                match step {
                    Step::State { text, .. } => state(text),
                    Step::Sleep(ms) => self.clock.advance_ms(*ms),
                    Step::Command {
                        text,
                        args,
                        expected,
                        mode,
                        ..
                    } => {
                        assert_eq!(*mode, Mode::Exact, "{}: {text}: only `> ` here", case.name);
                        let reply = self.engine.execute(args).to_cli_string();
                        let lines: Vec<&str> = reply
                            .lines()
                            .map(|l| l.trim_end_matches([' ', '\t']))
                            .collect();
                        assert_eq!(
                            lines.join("\n"),
                            expected.join("\n"),
                            "{}: {text}",
                            case.name
                        );
                    }
                }
            }
        }
    }
}

/// `transcript` without the indentation of its first non-blank line.
fn dedent(transcript: &str) -> String {
    let first = transcript
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let indent = &first[..first.len() - first.trim_start().len()];
    transcript
        .lines()
        .map(|line| match line.strip_prefix(indent) {
            Some(rest) => rest,
            None if line.trim().is_empty() => "",
            None => panic!("line indented less than the first: {line:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// redis-cli's rendering of the WRONGTYPE error.
pub const WRONG: &str = "(error) WRONGTYPE Operation against a key holding the wrong kind of value";

/// The items of an array reply, rendered as redis-cli does and sorted.
pub fn sorted(reply: Reply) -> Vec<String> {
    let Reply::Array(items) = reply else {
        panic!("not an array: {reply:?}")
    };
    let mut out: Vec<String> = items.into_iter().map(|r| r.to_cli_string()).collect();
    out.sort();
    out
}

/// Checks a parser of arguments: each `(input, value)` of `good` parses to
/// `value`, and every input of `bad` is refused.
pub fn check_parser<T: PartialEq + std::fmt::Debug>(
    parse: impl Fn(&[u8]) -> Option<T>,
    good: &[(&str, T)],
    bad: &[&str],
) {
    for (input, value) in good {
        assert_eq!(parse(input.as_bytes()).as_ref(), Some(value), "{input:?}");
    }
    for input in bad {
        assert_eq!(parse(input.as_bytes()), None, "{input:?}");
    }
}

/// Words as redis-cli renders bulk strings: in double quotes.
pub fn quoted(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| format!("\"{s}\"")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;

    #[test]
    fn a_script_checks_every_reply_in_order() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
            === replies in order
            # A comment.
            > RPUSH l a b
            (integer) 2
            > LRANGE l 0 -1
            1) "a"
            2) "b"
            > LPOP l
            "a"
            === the next case on the same store
            > LLEN l
            (integer) 1
            @sleep 1000
            "#,
        );
        assert_eq!(t.cli("LLEN l"), "(integer) 1");
        assert_eq!(
            t.clock.now_ms(),
            1_700_000_001_000,
            "@sleep advanced the clock"
        );
    }

    #[test]
    #[should_panic(expected = "LLEN l")]
    fn a_script_fails_on_a_wrong_reply() {
        TestEngine::in_memory().script("=== x\n> LLEN l\n(integer) 1");
    }

    #[test]
    fn a_script_hands_state_lines_over_in_order() {
        let t = TestEngine::in_memory();
        let mut seen = Vec::new();
        t.script_with(
            "=== x\n> RPUSH l a\n(integer) 1\n@state first\n> RPUSH l b\n(integer) 2\n@state second",
            |line| seen.push((line.to_string(), t.cli("LLEN l"))),
        );
        assert_eq!(
            seen,
            [
                ("first".to_string(), "(integer) 1".to_string()),
                ("second".to_string(), "(integer) 2".to_string())
            ]
        );
    }

    #[test]
    #[should_panic(expected = "command without an expected reply")]
    fn a_script_refuses_a_command_without_its_reply() {
        TestEngine::in_memory().script("=== x\n> HSET h f v\n> GET h\n(error) WRONGTYPE");
    }

    #[test]
    #[should_panic(expected = "indented less than the first")]
    fn a_script_refuses_a_line_indented_less_than_the_first() {
        TestEngine::in_memory().script("    === x\n  > GET h\n  (nil)");
    }
}
