//! Engine test helpers: a store (Kvrocks', or any format's) in a temporary
//! directory on a manual clock, and a one-line way to run commands.

use std::sync::Arc;

use redcodec_codec::Codec;
use redcodec_kvrocks::KvrocksCodec;

use crate::clock::ManualClock;
use crate::engine::{Engine, EngineOptions};
use crate::reply::Reply;
use crate::store::{KvStore, MemStore, Store};

/// A test engine and what keeps it alive: over RocksDB in a temporary
/// directory ([`TestEngine::new`], [`TestEngine::of`]) or over memory
/// ([`TestEngine::in_memory`]).
pub struct TestEngine<S: KvStore = Store, C: Codec = KvrocksCodec> {
    /// The engine.
    pub engine: Engine<C, S>,
    /// Its clock.
    pub clock: Arc<ManualClock>,
    _dir: Option<tempfile::TempDir>,
}

impl TestEngine<MemStore> {
    /// A fresh in-memory Kvrocks engine at time 1_700_000_000_000 ms.
    pub fn in_memory() -> TestEngine<MemStore> {
        let clock = Arc::new(ManualClock::at_ms(1_700_000_000_000));
        let engine = Engine::in_memory(KvrocksCodec::default(), clock.clone()).expect("engine");
        TestEngine {
            engine,
            clock,
            _dir: None,
        }
    }
}

impl TestEngine {
    /// A fresh Kvrocks store at time 1_700_000_000_000 ms.
    pub fn new() -> TestEngine {
        TestEngine::of(KvrocksCodec::default())
    }
}

impl<C: Codec> TestEngine<Store, C> {
    /// A fresh store of `codec`'s format at time 1_700_000_000_000 ms.
    pub fn of(codec: C) -> TestEngine<Store, C> {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = Arc::new(ManualClock::at_ms(1_700_000_000_000));
        let engine = Engine::open(codec, dir.path(), EngineOptions::with_clock(clock.clone()))
            .expect("open");
        TestEngine {
            engine,
            clock,
            _dir: Some(dir),
        }
    }
}

impl<S: KvStore, C: Codec> TestEngine<S, C> {
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

/// redis-cli's rendering of the WRONGTYPE error.
pub const WRONG: &str = "(error) WRONGTYPE Operation against a key holding the wrong kind of value";

/// The items of an array reply, rendered as redis-cli does and sorted.
pub fn sorted(reply: Reply) -> Vec<String> {
    let Reply::Array(items) = reply else {
        panic!("not an array: {reply:?}")
    };
    let mut out: Vec<String> = items.into_iter().map(|r| r.to_cli_string()).collect();
    out.sort();
    out
}

/// Words as redis-cli renders bulk strings: in double quotes.
pub fn quoted(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| format!("\"{s}\"")).collect()
}
