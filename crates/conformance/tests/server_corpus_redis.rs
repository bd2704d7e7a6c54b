//! The server scenarios (`server-scenarios/`: scripting) against a real
//! redis-server: what they expect is what Redis answers. `redcodec
//! serve` replays the same files (crates/cli/tests/serve_scripting.rs).
//!
//! Needs `redis-server` on PATH. Without it the test is skipped, unless
//! `REDCODEC_REQUIRE_REDIS=1`, where it fails.

use redcodec_conformance::{runner, scenario, server_corpus_dir, target::RedisServer};

#[test]
fn server_corpus_matches_real_redis() {
    let Some(mut server) = RedisServer::start_or_skip("server scenarios against real Redis") else {
        return;
    };
    let scenarios = scenario::load_dir(&server_corpus_dir()).expect("server corpus parses");
    let report = runner::run(&mut server, &scenarios).expect("run completes");
    println!("redis: {report}");
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert!(report.commands > 100, "{report}");
    let shown: String = report
        .mismatches
        .iter()
        .take(40)
        .map(std::string::ToString::to_string)
        .collect();
    assert!(
        report.mismatches.is_empty(),
        "{} expected replies differ from real Redis:\n{shown}",
        report.mismatches.len()
    );
}
