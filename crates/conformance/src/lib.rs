//! The conformance suite: scenario files of commands and the replies Redis
//! gives, run on every format and on a real `redis-server`.
//!
//! - [`scenario`] parses the files (grammar in `scenarios/README.md`);
//! - [`expect`] matches a reply against its expected text;
//! - [`target`] runs commands on an engine of any format or on real Redis;
//! - [`runner`] runs a corpus on a target and reports every difference;
//! - [`compat`] renders the commands × formats compatibility table;
//! - [`model`] is the in-memory reference model the property tests compare with;
//! - [`skip`] reports a test that cannot run here to the test command's summary.

pub mod compat;
pub mod dump_samples;
pub mod expect;
pub mod model;
pub mod runner;
pub mod scenario;
pub mod skip;
pub mod target;

/// The directory holding the scenario files.
pub fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// The directory holding scenarios of commands the server answers
/// (scripting), checked against redis-server and `redcodec serve` rather
/// than the engine.
pub fn server_corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("server-scenarios")
}
