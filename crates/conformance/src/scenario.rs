//! Scenario files: cases of commands with the replies Redis gives.

use std::path::Path;

use redcodec_engine::cmdline::split_args;
use thiserror::Error;

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
                    expected.push(line.trim_end_matches([' ', '\t']).to_string())
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
            parse(&name, &text)
        })
        .collect()
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
    }

    #[test]
    fn rejects_malformed_files() {
        assert!(parse("t", "> GET a\n(nil)\n").is_err());
        assert!(parse("t", "=== x\n> GET a\n").is_err());
        assert!(parse("t", "=== x\n@wait 3\n").is_err());
        assert!(parse("t", "=== x\n> GET \"a\n(nil)\n").is_err());
    }
}
