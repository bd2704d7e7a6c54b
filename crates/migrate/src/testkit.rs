//! Test helpers: a Kvrocks engine in a temporary directory on a manual
//! clock, and a one-line way to run commands.

use std::sync::Arc;

use redcodec_kvrocks::KvrocksCodec;

use redcodec_engine::clock::ManualClock;
use redcodec_engine::Reply;
use redcodec_engine::{Engine, EngineOptions};

/// A test engine and what keeps it alive.
pub struct TestEngine {
    /// The engine.
    pub engine: Engine<KvrocksCodec>,
    _dir: tempfile::TempDir,
}

impl TestEngine {
    /// A fresh Kvrocks store at time 1_700_000_000_000 ms.
    pub fn new() -> TestEngine {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = Arc::new(ManualClock::at_ms(1_700_000_000_000));
        let engine = Engine::open(
            KvrocksCodec::default(),
            dir.path(),
            EngineOptions::with_clock(clock.clone()),
        )
        .expect("open");
        TestEngine { engine, _dir: dir }
    }

    /// Runs a command written as space-separated words.
    pub fn run(&self, line: &str) -> Reply {
        let args = redcodec_engine::cmdline::split_args(line).expect("valid command line");
        self.engine.execute(&args)
    }
}
