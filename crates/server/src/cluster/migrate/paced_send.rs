//! Sending keys to the destination as typed commands, a pipeline at a
//! time, paced by `migrate-speed`; the engine a migration reads.

use std::time::{Duration, Instant};

use super::destination::Link;
use super::dump;
use crate::state::Shared;

/// How commands leave for the destination: `migrate-pipeline-size`
/// commands a pipeline, paced by `migrate-speed` (Kvrocks'
/// `applyMigrationSpeedLimit`).
pub(crate) struct Pace {
    pipeline: usize,
    /// The least time between two pipelines; zero without a limit.
    pub(crate) gap: Duration,
    last: Option<Instant>,
}

impl Pace {
    /// The pace the settings give now.
    pub(crate) fn of(shared: &Shared) -> Pace {
        let settings = shared.settings.lock();
        let pipeline = settings.integer("migrate-pipeline-size", 16).max(1) as u64;
        let speed = settings.integer("migrate-speed", 4096).max(0) as u64;
        let gap = match speed {
            0 => Duration::ZERO,
            speed => Duration::from_micros((1_000_000 * pipeline / speed).max(1)),
        };
        Pace {
            pipeline: pipeline as usize,
            gap,
            last: None,
        }
    }

    /// Waits until the next pipeline may leave.
    pub(crate) fn wait(&mut self) {
        if let Some(last) = self.last {
            let next = last + self.gap;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            }
        }
        self.last = Some(Instant::now());
    }
}

pub(crate) fn engine(
    shared: &Shared,
) -> Result<
    parking_lot::MappedRwLockReadGuard<'_, redcodec_engine::Engine<redcodec_formats::AnyCodec>>,
    String,
> {
    shared
        .engines
        .shared(&shared.config.default_namespace)
        .map_err(|e| format!("{e:?}"))
}

/// Sends `keys` as commands, a pipeline at a time, at `pace`.
pub(crate) fn send(
    shared: &Shared,
    l: &mut Link,
    pace: &mut Pace,
    keys: &[Vec<u8>],
    replace: bool,
) -> Result<(), String> {
    for key in keys {
        let commands = {
            let engine = engine(shared)?;
            dump::commands(&engine, key, replace)
        };
        for c in commands {
            l.queue(&c);
            if l.pending() >= pace.pipeline {
                pace.wait();
                l.flush()
                    .map_err(|e| format!("failed to send commands to restore a key: {e}"))?;
            }
        }
    }
    if l.pending() > 0 {
        pace.wait();
    }
    l.flush()
        .map_err(|e| format!("failed to send commands to restore a key: {e}"))
}
