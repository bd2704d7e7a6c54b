//! Kvrocks' own commands (`kvrocks-scenarios/`) on every format: one reply
//! that differs from what Kvrocks 2.10.1 answers fails the run and names
//! file, line, format, expected and actual.

use redcodec_conformance::{runner, scenario, target::EngineTarget};
use redcodec_formats::Format;

#[test]
fn kvrocks_commands_answer_as_kvrocks_on_every_format() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kvrocks-scenarios");
    let scenarios = scenario::load_dir(&dir).expect("scenarios parse");
    let total: usize = scenarios.iter().map(|s| s.cases.len()).sum();
    assert!(total > 0, "no cases in {}", dir.display());
    let mut failures = Vec::new();
    for &format in Format::ALL {
        let mut target = EngineTarget::new(format).expect("store opens");
        let report = runner::run(&mut target, &scenarios).expect("run completes");
        println!("{format}: {report}");
        assert_eq!(report.cases, total, "{format}: no case may be skipped");
        failures.extend(report.mismatches.clone());
    }
    assert!(
        failures.is_empty(),
        "{} replies differ from Kvrocks':\n{}",
        failures.len(),
        failures
            .iter()
            .map(std::string::ToString::to_string)
            .collect::<String>()
    );
}
