//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::sync::Arc;

use redcodec::engine::{Engine, EngineOptions, ManualClock, Reply};
use redcodec::formats::{AnyCodec, Format, FormatOptions};

/// The time every fixed-clock test starts at: 2023-11-14T22:13:20Z.
pub const T0_MS: u64 = 1_700_000_000_000;

/// An engine of `format` in a fresh temporary directory on a manual clock.
pub struct Fixture {
    pub engine: Engine<AnyCodec>,
    pub clock: Arc<ManualClock>,
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new(format: Format) -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = Arc::new(ManualClock::at_ms(T0_MS));
        let codec = format.codec(&FormatOptions::default()).expect("codec");
        let engine = Engine::open(codec, dir.path(), EngineOptions::with_clock(clock.clone()))
            .expect("open");
        Fixture { engine, clock, dir }
    }

    /// Runs a command given as space-separated words.
    pub fn run(&self, line: &str) -> Reply {
        let args = redcodec::engine::cmdline::split_args(line).expect("command line");
        self.engine.execute(&args)
    }

    /// The store's dump, as `redcodec dump` prints it.
    pub fn dump(&self) -> String {
        let mut out = Vec::new();
        self.engine.store().dump(&mut out).expect("dump");
        String::from_utf8(out).expect("dump is text")
    }

    /// Number of stored pairs in the column family named `cf`.
    pub fn count_in(&self, cf: &str) -> usize {
        self.dump()
            .lines()
            .filter(|l| l.split('\t').nth(1) == Some(cf))
            .count()
    }
}
