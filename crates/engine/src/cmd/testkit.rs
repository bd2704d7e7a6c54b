//! Engine test helpers: a Kvrocks store in a temporary directory on a
//! manual clock, and a one-line way to run commands.

use std::sync::Arc;

use redcodec_kvrocks::KvrocksCodec;

use crate::clock::ManualClock;
use crate::engine::{Engine, EngineOptions};
use crate::reply::Reply;

/// A test engine and what keeps it alive.
pub struct TestEngine {
    /// The engine.
    pub engine: Engine<KvrocksCodec>,
    /// Its clock.
    pub clock: Arc<ManualClock>,
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
        TestEngine {
            engine,
            clock,
            _dir: dir,
        }
    }

    /// Runs a command written as space-separated words.
    pub fn run(&self, line: &str) -> Reply {
        let args = crate::cmdline::split_args(line).expect("valid command line");
        self.engine.execute(&args)
    }

    /// Runs a command and renders its reply as redis-cli does.
    pub fn cli(&self, line: &str) -> String {
        self.run(line).to_cli_string()
    }
}
