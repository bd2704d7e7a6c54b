//! Every scenario of the corpus, on every format: one reply that differs
//! from Redis fails the run and names file, line, format, expected, actual.

use redcodec_conformance::{corpus_dir, runner, scenario, target::EngineTarget};
use redcodec_formats::Format;

#[test]
fn corpus_passes_on_every_format() {
    let scenarios = scenario::load_dir(&corpus_dir()).expect("corpus parses");
    assert!(
        !scenarios.is_empty(),
        "no scenario files in {:?}",
        corpus_dir()
    );
    let mut failures = Vec::new();
    for &format in Format::ALL {
        let mut target = EngineTarget::new(format).expect("store opens");
        let report = runner::run(&mut target, &scenarios).expect("run completes");
        println!(
            "{format}: {} cases, {} commands, {} mismatches",
            report.cases,
            report.commands,
            report.mismatches.len()
        );
        failures.extend(report.mismatches);
    }
    if !failures.is_empty() {
        let shown: String = failures.iter().take(40).map(|m| m.to_string()).collect();
        panic!("{} replies differ from Redis:\n{shown}", failures.len());
    }
}
