//! Every scenario of the corpus, on every format: one reply that differs
//! from Redis fails the run and names file, line, format, expected, actual.
//! Cases that `@requires` a capability a format does not declare are
//! skipped on it and counted; every case runs on at least one format.

use redcodec_conformance::{compat, corpus_dir, runner, scenario, target::EngineTarget};
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
    let total: usize = scenarios.iter().map(|s| s.cases.len()).sum();
    let mut ran_somewhere = std::collections::HashSet::new();
    let mut runs = Vec::new();
    for &format in Format::ALL {
        let mut target = EngineTarget::new(format).expect("store opens");
        let report = runner::run(&mut target, &scenarios).expect("run completes");
        println!("{format}: {report}");
        assert_eq!(report.cases + report.skipped.len(), total);
        let skipped: std::collections::HashSet<_> = report
            .skipped
            .iter()
            .map(|(file, case, _)| (file.clone(), case.clone()))
            .collect();
        for (file, case, req) in &report.skipped {
            println!(
                "  {format}: skipped {file} '{case}' (@requires {})",
                req.name()
            );
        }
        for s in &scenarios {
            for c in &s.cases {
                if !skipped.contains(&(s.file.clone(), c.name.clone())) {
                    ran_somewhere.insert((s.file.clone(), c.name.clone()));
                }
            }
        }
        failures.extend(report.mismatches.clone());
        runs.push((format.to_string(), report));
    }
    check_compat_table(&scenarios, &runs);
    assert_eq!(
        ran_somewhere.len(),
        total,
        "some cases run on no format (a @requires no format meets)"
    );
    if !failures.is_empty() {
        let shown: String = failures
            .iter()
            .take(40)
            .map(std::string::ToString::to_string)
            .collect();
        panic!("{} replies differ from Redis:\n{shown}", failures.len());
    }
}

/// The table in formats-spec/README.md must be the one this run generates;
/// `REDCODEC_UPDATE_COMPAT=1` rewrites it.
fn check_compat_table(scenarios: &[scenario::Scenario], runs: &[(String, runner::Report)]) {
    let path = corpus_dir().join("../../../formats-spec/README.md");
    let doc = std::fs::read_to_string(&path).expect("formats-spec/README.md");
    let table = compat::table(scenarios, runs);
    let updated = compat::splice(&doc, &table).expect("compat markers in formats-spec/README.md");
    if std::env::var("REDCODEC_UPDATE_COMPAT").is_ok_and(|v| v == "1") {
        std::fs::write(&path, updated).expect("write formats-spec/README.md");
        return;
    }
    assert!(
        updated == doc,
        "formats-spec/README.md's compatibility table is stale: run \
         REDCODEC_UPDATE_COMPAT=1 cargo test --release --workspace --test corpus"
    );
}
