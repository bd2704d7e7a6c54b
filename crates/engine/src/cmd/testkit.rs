//! Engine test helpers: a store (Kvrocks', or any format's) in a temporary
//! directory on a manual clock, and a one-line way to run commands.

use std::sync::Arc;

use redcodec_codec::Codec;
use redcodec_kvrocks::KvrocksCodec;

use crate::clock::ManualClock;
use crate::engine::{Engine, EngineOptions};
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

    /// Replays a redis-cli session; see [`script`].
    pub fn script(&self, transcript: &str) {
        self.script_with(transcript, |line| {
            panic!("no check for state lines: {line:?}");
        });
    }

    /// Replays a redis-cli session whose `= …` lines `state` checks; see
    /// [`script`].
    pub fn script_with(&self, transcript: &str, state: impl FnMut(&str)) {
        script(transcript, |line| self.run(line), state);
    }
}

/// One step of a [`script`].
enum Step<'a> {
    /// A command and the lines of its expected reply.
    Command(&'a str, Vec<&'a str>),
    /// A line about the stored state, after `= `.
    State(&'a str),
}

/// Replays a redis-cli session written as text: each `> command` line is
/// run, and the lines after it, up to the next command, are its expected
/// reply as redis-cli renders it. A command without reply lines sets
/// something up: any reply but an error will do. A `= …` line is handed
/// to `state`, which checks what the store holds at that point in the
/// test's own terms. Lines starting with `#` are comments; blank lines are
/// skipped. The indentation of the first line is taken off every line
/// (array items keep their own alignment).
pub fn script(transcript: &str, mut run: impl FnMut(&str) -> Reply, mut state: impl FnMut(&str)) {
    let mut lines = transcript.lines().filter(|l| !l.trim().is_empty());
    let Some(first) = lines.next() else {
        return;
    };
    let indent = &first[..first.len() - first.trim_start().len()];
    let mut steps: Vec<Step<'_>> = Vec::new();
    for line in std::iter::once(first).chain(lines) {
        let line = line.strip_prefix(indent).unwrap_or_else(|| {
            panic!("line indented less than the first: {line:?}");
        });
        if line.starts_with('#') {
            continue;
        }
        if let Some(command) = line.strip_prefix("> ") {
            steps.push(Step::Command(command, Vec::new()));
        } else if let Some(check) = line.strip_prefix("= ") {
            steps.push(Step::State(check));
        } else if let Some(Step::Command(_, reply)) = steps.last_mut() {
            reply.push(line);
        } else {
            panic!("a reply line not after a command: {line:?}");
        }
    }
    for step in steps {
        match step {
            Step::State(check) => state(check),
            Step::Command(command, expected) => {
                let reply = run(command);
                if expected.is_empty() {
                    assert!(!matches!(reply, Reply::Error(_)), "{command}: {reply:?}");
                } else {
                    assert_eq!(reply.to_cli_string(), expected.join("\n"), "{command}");
                }
            }
        }
    }
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

    #[test]
    fn a_script_checks_every_reply_in_order() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
            # A comment, then a setup step.
            > RPUSH l a b
            > LRANGE l 0 -1
            1) "a"
            2) "b"
            > LPOP l
            "a"
            "#,
        );
        assert_eq!(t.cli("LLEN l"), "(integer) 1");
    }

    #[test]
    #[should_panic(expected = "LLEN l")]
    fn a_script_fails_on_a_wrong_reply() {
        TestEngine::in_memory().script("> LLEN l\n(integer) 1");
    }

    #[test]
    fn a_script_hands_state_lines_over_in_order() {
        let t = TestEngine::in_memory();
        let mut seen = Vec::new();
        t.script_with(
            "> RPUSH l a\n= first\n> RPUSH l b\n(integer) 2\n= second",
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
    #[should_panic(expected = "GET h")]
    fn a_script_fails_on_an_error_in_a_setup_step() {
        TestEngine::in_memory().script("> HSET h f v\n> GET h");
    }
}
