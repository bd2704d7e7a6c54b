//! Runs scenarios on a target and collects every difference.

use std::fmt;

use redcodec_engine::Reply;

use crate::expect::matches;
use crate::scenario::{Requirement, Scenario, Step};
use crate::target::{Target, TargetError};

/// A reply that differs from the scenario.
#[derive(Debug, Clone)]
pub struct Mismatch {
    /// Target name (format or `redis`).
    pub target: String,
    /// Scenario file.
    pub file: String,
    /// Line of the command.
    pub line: usize,
    /// Case name.
    pub case: String,
    /// The command as written.
    pub command: String,
    /// Expected reply text.
    pub expected: String,
    /// Actual reply text.
    pub actual: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{} [{}] case '{}': > {}",
            self.file, self.line, self.target, self.case, self.command
        )?;
        writeln!(f, "  expected:")?;
        for l in self.expected.lines() {
            writeln!(f, "    {l}")?;
        }
        writeln!(f, "  actual:")?;
        for l in self.actual.lines() {
            writeln!(f, "    {l}")?;
        }
        Ok(())
    }
}

/// What a run of a corpus on one target found.
#[derive(Debug, Default)]
pub struct Report {
    /// Commands compared.
    pub commands: usize,
    /// Cases run.
    pub cases: usize,
    /// Cases skipped because the target lacks a capability they
    /// `@requires`: (file, case, the first missing requirement).
    pub skipped: Vec<(String, String, Requirement)>,
    /// Every difference.
    pub mismatches: Vec<Mismatch>,
}

impl std::fmt::Display for Report {
    /// `N cases, N commands, N mismatches, N skipped`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} cases, {} commands, {} mismatches, {} skipped",
            self.cases,
            self.commands,
            self.mismatches.len(),
            self.skipped.len()
        )
    }
}

/// Runs every case of `scenarios` on `target`, flushing before each case
/// and skipping (and counting) the cases that `@requires` a capability the
/// target lacks.
pub fn run(target: &mut dyn Target, scenarios: &[Scenario]) -> Result<Report, TargetError> {
    let mut report = Report::default();
    let flush = vec![b"FLUSHALL".to_vec()];
    let caps = target.expiry_caps();
    for scenario in scenarios {
        for case in &scenario.cases {
            if let Some(&missing) = case.requires.iter().find(|r| !r.met_by(&caps)) {
                report
                    .skipped
                    .push((scenario.file.clone(), case.name.clone(), missing));
                continue;
            }
            report.cases += 1;
            let reply = target.execute(&flush)?;
            if reply != Reply::ok() {
                return Err(TargetError::Protocol(format!("FLUSHALL replied {reply}")));
            }
            target.begin_case();
            for step in &case.steps {
                match step {
                    Step::Sleep(ms) => target.advance_ms(*ms),
                    // Refused when the corpus is loaded (`load_dir`).
                    Step::State { .. } => {}
                    Step::Command {
                        line,
                        text,
                        args,
                        expected,
                        mode,
                    } => {
                        report.commands += 1;
                        let actual = target.execute(args)?;
                        if !matches(&actual, expected, *mode, args) {
                            report.mismatches.push(Mismatch {
                                target: target.name(),
                                file: scenario.file.clone(),
                                line: *line,
                                case: case.name.clone(),
                                command: text.clone(),
                                expected: expected.join("\n"),
                                actual: actual.to_cli_string(),
                            });
                        }
                    }
                }
            }
        }
    }
    Ok(report)
}
