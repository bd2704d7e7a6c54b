//! The corpus against a real redis-server: the expected replies must be
//! what Redis itself gives, so the corpus cannot drift from Redis.
//!
//! Needs `redis-server` on PATH. Without it the test is skipped, unless
//! `REDCODEC_REQUIRE_REDIS=1` (set by `.ci/run`), where it fails.

use redcodec_conformance::scenario::Requirement;
use redcodec_conformance::{corpus_dir, runner, scenario, target::RedisServer};

#[test]
fn corpus_matches_real_redis() {
    let Some(mut server) = RedisServer::start_or_skip("conformance real-Redis oracle") else {
        return;
    };
    let scenarios = scenario::load_dir(&corpus_dir()).expect("corpus parses");
    let report = runner::run(&mut server, &scenarios).expect("run completes");
    println!("redis: {report}");
    // Only cases for formats that store coarser or shorter expiries, fewer
    // scores or shorter keys than Redis may be skipped here (see
    // scenarios/README.md, `@requires`).
    for (file, case, req) in &report.skipped {
        println!("  skipped {file} '{case}' (@requires {})", req.name());
        assert!(
            matches!(
                req,
                Requirement::TtlSeconds
                    | Requirement::TtlSecondsMinusOne
                    | Requirement::I32SecondsExpiry
                    | Requirement::Score1e13
                    | Requirement::Keys254
            ),
            "{file} '{case}': real Redis must meet @requires {}",
            req.name()
        );
    }
    if !report.mismatches.is_empty() {
        let shown: String = report
            .mismatches
            .iter()
            .take(40)
            .map(std::string::ToString::to_string)
            .collect();
        panic!(
            "{} expected replies differ from real Redis:\n{shown}",
            report.mismatches.len()
        );
    }
}
