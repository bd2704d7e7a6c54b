//! Scenario files: cases of commands with the replies Redis gives.

use std::path::Path;

use redcodec_codec::{RelativeExpiry, TtlResolution};
use redcodec_engine::cmdline::split_args;
use thiserror::Error;

/// The latest expiry a format with 32-bit second timestamps stores:
/// `i32::MAX` seconds (2038-01-19T03:14:07Z), in ms.
pub const I32_SECONDS_MAX_MS: u64 = i32::MAX as u64 * 1000;

/// The farthest absolute time the corpus uses: 10^11 s (year 5138), in ms.
pub const FAR_FUTURE_MS: u64 = 100_000_000_000_000;

/// The score limit of formats that refuse scores beyond ±10^13 (nemo).
pub const SCORE_LIMIT_1E13: (f64, f64) = (-1e13, 1e13);

/// What a target declares about expiry and about the limits of what it
/// stores, for `@requires` (see `scenarios/README.md`).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ExpiryCaps {
    /// Precision of stored expiries.
    pub ttl: TtlResolution,
    /// Latest storable absolute expiry, in unix ms.
    pub max_expire_ms: u64,
    /// How expiries given relative to now are stored.
    pub relative_expiry: RelativeExpiry,
    /// Smallest and largest storable score, if limited.
    pub score_limit: Option<(f64, f64)>,
    /// Longest hash, list, set and sorted-set key, if limited.
    pub collection_key_limit: Option<usize>,
}

impl ExpiryCaps {
    /// Real Redis: milliseconds, 64-bit expiries, any score, any key.
    pub const REDIS: ExpiryCaps = ExpiryCaps {
        ttl: TtlResolution::Millis,
        max_expire_ms: i64::MAX as u64,
        relative_expiry: RelativeExpiry::Exact,
        score_limit: None,
        collection_key_limit: None,
    };
}

/// A capability a case depends on: `@requires NAME=VALUE`. A target
/// lacking it skips the case (and counts it as skipped).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Requirement {
    /// `ttl=ms`: expiries are stored to the millisecond.
    TtlMillis,
    /// `ttl=s`: expiries are stored in whole seconds (the engine rounds the
    /// absolute expiry up to a whole second).
    TtlSeconds,
    /// `ttl=s-1`: expiries are stored in whole seconds that keep the key
    /// live through their last millisecond, relative TTLs as
    /// `now_s + ttl_s - 1` ([`RelativeExpiry::SecondsMinusOne`], nemo).
    TtlSecondsMinusOne,
    /// `expire=far`: absolute expiries up to 10^11 s (year 5138) are storable.
    FarExpiry,
    /// `expire=i32s`: the latest storable expiry is `i32::MAX` seconds
    /// (2038-01-19T03:14:07Z); later ones are refused with an error.
    I32SecondsExpiry,
    /// `score=any`: every double is a storable score, ±inf included.
    AnyScore,
    /// `score=1e13`: scores beyond ±10^13 are refused with an error.
    Score1e13,
    /// `keys=any`: collection keys of any length, the empty key included.
    AnyKeys,
    /// `keys=254`: hash, list, set and sorted-set keys hold 1 to 254 bytes;
    /// others are refused with an error.
    Keys254,
}

impl Requirement {
    /// Every requirement, as written after `@requires`.
    pub const ALL: [(&'static str, Requirement); 9] = [
        ("ttl=ms", Requirement::TtlMillis),
        ("ttl=s", Requirement::TtlSeconds),
        ("ttl=s-1", Requirement::TtlSecondsMinusOne),
        ("expire=far", Requirement::FarExpiry),
        ("expire=i32s", Requirement::I32SecondsExpiry),
        ("score=any", Requirement::AnyScore),
        ("score=1e13", Requirement::Score1e13),
        ("keys=any", Requirement::AnyKeys),
        ("keys=254", Requirement::Keys254),
    ];

    /// Parses the word after `@requires`.
    pub fn parse(word: &str) -> Option<Requirement> {
        Requirement::ALL
            .iter()
            .find(|(name, _)| *name == word)
            .map(|&(_, r)| r)
    }

    /// The word as written.
    pub fn name(self) -> &'static str {
        Requirement::ALL
            .iter()
            .find(|(_, r)| *r == self)
            .map_or("?", |(name, _)| name)
    }

    /// Whether a target with `caps` has this capability.
    pub fn met_by(self, caps: &ExpiryCaps) -> bool {
        match self {
            Requirement::TtlMillis => caps.ttl == TtlResolution::Millis,
            Requirement::TtlSeconds => {
                caps.ttl == TtlResolution::Seconds && caps.relative_expiry == RelativeExpiry::Exact
            }
            Requirement::TtlSecondsMinusOne => {
                caps.ttl == TtlResolution::Seconds
                    && caps.relative_expiry == RelativeExpiry::SecondsMinusOne
            }
            Requirement::FarExpiry => caps.max_expire_ms >= FAR_FUTURE_MS,
            Requirement::I32SecondsExpiry => caps.max_expire_ms == I32_SECONDS_MAX_MS,
            Requirement::AnyScore => caps.score_limit.is_none(),
            Requirement::Score1e13 => caps.score_limit == Some(SCORE_LIMIT_1E13),
            Requirement::AnyKeys => caps.collection_key_limit.is_none(),
            Requirement::Keys254 => caps.collection_key_limit == Some(254),
        }
    }
}

/// A parsed scenario file.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// File name, for messages.
    pub file: String,
    /// Independent cases, each run on an empty store.
    pub cases: Vec<Case>,
}

/// One case.
#[derive(Debug, Clone)]
pub struct Case {
    /// Its name.
    pub name: String,
    /// Line of its `===` header.
    pub line: usize,
    /// Capabilities the case depends on (`@requires`); a target lacking
    /// one skips the case.
    pub requires: Vec<Requirement>,
    /// Its steps in order.
    pub steps: Vec<Step>,
}

/// One step of a case.
#[derive(Debug, Clone)]
pub enum Step {
    /// Run a command and compare its reply.
    Command {
        /// Line of the command.
        line: usize,
        /// The command line as written.
        text: String,
        /// Its arguments.
        args: Vec<Vec<u8>>,
        /// Expected reply lines, as redis-cli prints them.
        expected: Vec<String>,
        /// How the reply is compared.
        mode: Mode,
    },
    /// Advance time by this many milliseconds.
    Sleep(u64),
    /// `@state TEXT`: a check of what the store holds at this point, in
    /// the terms of the engine's own unit tests (a list's bounds, a nemo
    /// chain), which embed transcripts in this grammar. The corpus has
    /// none ([`load_dir`] refuses them): they are not Redis behaviour.
    State {
        /// Line of the directive.
        line: usize,
        /// What follows `@state `.
        text: String,
    },
}

/// How a reply is compared with its expectation (see `scenarios/README.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `>`: line for line.
    Exact,
    /// `>~`: array elements (or pairs) as a multiset.
    Unordered,
    /// `>?`: not an error, and as many lines as the sample.
    Shape,
}

/// A scenario file that does not follow the grammar.
#[derive(Debug, Error)]
#[error("{file}:{line}: {message}")]
pub struct ParseError {
    /// File name.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses the text of one scenario file.
pub fn parse(file: &str, text: &str) -> Result<Scenario, ParseError> {
    let err = |line: usize, message: String| ParseError {
        file: file.to_string(),
        line,
        message,
    };
    let mut cases: Vec<Case> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim_end_matches('\r');
        if let Some(name) = line.strip_prefix("===") {
            cases.push(Case {
                name: name.trim().to_string(),
                line: line_no,
                requires: Vec::new(),
                steps: Vec::new(),
            });
            continue;
        }
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(case) = cases.last_mut() else {
            return Err(err(line_no, "content before the first '=== case'".into()));
        };
        if let Some(ms) = line.strip_prefix("@sleep") {
            let ms = ms
                .trim()
                .parse()
                .map_err(|_| err(line_no, format!("bad @sleep: {line}")))?;
            case.steps.push(Step::Sleep(ms));
        } else if let Some(word) = line.strip_prefix("@requires ") {
            if !case.steps.is_empty() {
                return Err(err(
                    line_no,
                    "@requires must come before the case's first command".into(),
                ));
            }
            let req = Requirement::parse(word.trim()).ok_or_else(|| {
                let known: Vec<&str> = Requirement::ALL.iter().map(|(n, _)| *n).collect();
                err(
                    line_no,
                    format!("unknown requirement: {line} (known: {})", known.join(", ")),
                )
            })?;
            case.requires.push(req);
        } else if let Some(text) = line.strip_prefix("@state ") {
            case.steps.push(Step::State {
                line: line_no,
                text: text.to_string(),
            });
        } else if line.starts_with('@') {
            return Err(err(line_no, format!("unknown directive: {line}")));
        } else if let Some((cmd, mode)) = line
            .strip_prefix(">~ ")
            .map(|c| (c, Mode::Unordered))
            .or_else(|| line.strip_prefix(">? ").map(|c| (c, Mode::Shape)))
            .or_else(|| line.strip_prefix("> ").map(|c| (c, Mode::Exact)))
        {
            let args = split_args(cmd).map_err(|e| err(line_no, e.to_string()))?;
            if args.is_empty() {
                return Err(err(line_no, "empty command".into()));
            }
            case.steps.push(Step::Command {
                line: line_no,
                text: cmd.to_string(),
                args,
                expected: Vec::new(),
                mode,
            });
        } else {
            match case.steps.last_mut() {
                Some(Step::Command { expected, .. }) => {
                    expected.push(line.trim_end_matches([' ', '\t']).to_string());
                }
                _ => return Err(err(line_no, format!("reply without a command: {line}"))),
            }
        }
    }
    for case in &cases {
        for step in &case.steps {
            if let Step::Command { line, expected, .. } = step {
                if expected.is_empty() {
                    return Err(err(*line, "command without an expected reply".into()));
                }
            }
        }
    }
    Ok(Scenario {
        file: file.to_string(),
        cases,
    })
}

/// Loads every `*.txt` scenario file of `dir`, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>, ParseError> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| ParseError {
            file: dir.display().to_string(),
            line: 0,
            message: e.to_string(),
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(p).map_err(|e| ParseError {
                file: name.clone(),
                line: 0,
                message: e.to_string(),
            })?;
            let scenario = parse(&name, &text)?;
            no_state_lines(&scenario)?;
            Ok(scenario)
        })
        .collect()
}

/// Refuses a corpus file with `@state` lines: they check the engine's
/// records, which no other target has.
fn no_state_lines(scenario: &Scenario) -> Result<(), ParseError> {
    let state = scenario
        .cases
        .iter()
        .flat_map(|c| &c.steps)
        .find_map(|step| match step {
            Step::State { line, .. } => Some(*line),
            _ => None,
        });
    match state {
        Some(line) => Err(ParseError {
            file: scenario.file.clone(),
            line,
            message: "@state lines are for the engine's unit tests, not the corpus".into(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cases_commands_replies_and_sleeps() {
        let text = "# c\n=== one\n> SET a \"b c\"\nOK\n>~ SMEMBERS s\n1) \"x\"\n2) \"y\"\n@sleep 150\n=== two\n> GET a\n(nil)\n";
        let s = parse("t.txt", text).unwrap();
        assert_eq!(s.cases.len(), 2);
        assert_eq!(s.cases[0].steps.len(), 3);
        match &s.cases[0].steps[0] {
            Step::Command {
                args,
                expected,
                mode,
                line,
                ..
            } => {
                assert_eq!(args, &vec![b"SET".to_vec(), b"a".to_vec(), b"b c".to_vec()]);
                assert_eq!(expected, &vec!["OK".to_string()]);
                assert_eq!(*mode, Mode::Exact);
                assert_eq!(*line, 3);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            s.cases[0].steps[1],
            Step::Command {
                mode: Mode::Unordered,
                ..
            }
        ));
        assert!(matches!(s.cases[0].steps[2], Step::Sleep(150)));
        assert!(s.cases[0].requires.is_empty());
    }

    #[test]
    fn parses_requirements() {
        let text = "=== one\n@requires ttl=s\n@requires expire=i32s\n> GET a\n(nil)\n";
        let s = parse("t.txt", text).unwrap();
        assert_eq!(
            s.cases[0].requires,
            vec![Requirement::TtlSeconds, Requirement::I32SecondsExpiry]
        );
        assert!(parse("t", "=== x\n@requires ttl=us\n> GET a\n(nil)\n").is_err());
        assert!(parse("t", "=== x\n> GET a\n(nil)\n@requires ttl=ms\n").is_err());
        let redis = ExpiryCaps::REDIS;
        assert!(Requirement::TtlMillis.met_by(&redis));
        assert!(Requirement::FarExpiry.met_by(&redis));
        assert!(!Requirement::TtlSeconds.met_by(&redis));
        assert!(!Requirement::I32SecondsExpiry.met_by(&redis));
        assert!(Requirement::AnyScore.met_by(&redis));
        assert!(Requirement::AnyKeys.met_by(&redis));
        assert!(!Requirement::Score1e13.met_by(&redis));
        assert!(!Requirement::Keys254.met_by(&redis));
        assert!(!Requirement::TtlSecondsMinusOne.met_by(&redis));
        let seconds = ExpiryCaps {
            ttl: TtlResolution::Seconds,
            max_expire_ms: I32_SECONDS_MAX_MS,
            ..ExpiryCaps::REDIS
        };
        assert!(Requirement::TtlSeconds.met_by(&seconds));
        assert!(!Requirement::TtlSecondsMinusOne.met_by(&seconds));
        assert!(Requirement::I32SecondsExpiry.met_by(&seconds));
        assert!(!Requirement::FarExpiry.met_by(&seconds));
        let nemo = ExpiryCaps {
            relative_expiry: RelativeExpiry::SecondsMinusOne,
            score_limit: Some(SCORE_LIMIT_1E13),
            collection_key_limit: Some(254),
            ..seconds
        };
        assert!(!Requirement::TtlSeconds.met_by(&nemo));
        assert!(Requirement::TtlSecondsMinusOne.met_by(&nemo));
        assert!(Requirement::Score1e13.met_by(&nemo));
        assert!(Requirement::Keys254.met_by(&nemo));
        assert!(!Requirement::AnyScore.met_by(&nemo));
        assert!(!Requirement::AnyKeys.met_by(&nemo));
        assert_eq!(
            Requirement::parse("ttl=s-1"),
            Some(Requirement::TtlSecondsMinusOne)
        );
    }

    #[test]
    fn parses_state_lines_in_order_and_keeps_them_out_of_the_corpus() {
        let text = "=== one\n> RPUSH l a\n(integer) 1\n@state l 0 1 a\n@sleep 5\n";
        let s = parse("t.txt", text).unwrap();
        assert!(matches!(
            &s.cases[0].steps[1],
            Step::State { line: 4, text } if text == "l 0 1 a"
        ));
        assert!(matches!(s.cases[0].steps[2], Step::Sleep(5)));
        let err = no_state_lines(&s).unwrap_err();
        assert_eq!(err.line, 4);
    }

    #[test]
    fn rejects_malformed_files() {
        assert!(parse("t", "> GET a\n(nil)\n").is_err());
        assert!(parse("t", "=== x\n> GET a\n").is_err());
        assert!(parse("t", "=== x\n@wait 3\n").is_err());
        assert!(parse("t", "=== x\n> GET \"a\n(nil)\n").is_err());
    }
}
