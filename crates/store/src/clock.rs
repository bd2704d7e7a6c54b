//! Injectable time: every timestamp and version the engine writes comes from
//! a [`Clock`], so the bytes of a run can be reproduced exactly.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// Unix time in microseconds.
    fn now_us(&self) -> u64;

    /// Unix time in milliseconds.
    fn now_ms(&self) -> u64 {
        self.now_us() / 1000
    }
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_us(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64)
    }
}

/// A clock that moves only when told to: frozen time for reproducible bytes
/// and sleep-free expiry tests.
#[derive(Debug)]
pub struct ManualClock {
    now_us: AtomicU64,
}

impl ManualClock {
    /// A clock frozen at `ms` unix milliseconds.
    pub fn at_ms(ms: u64) -> ManualClock {
        ManualClock {
            now_us: AtomicU64::new(ms.saturating_mul(1000)),
        }
    }

    /// Moves time forward by `ms` milliseconds.
    pub fn advance_ms(&self, ms: u64) {
        self.now_us
            .fetch_add(ms.saturating_mul(1000), Ordering::SeqCst);
    }

    /// Sets the time to `ms` unix milliseconds.
    pub fn set_ms(&self, ms: u64) {
        self.now_us.store(ms.saturating_mul(1000), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_us(&self) -> u64 {
        self.now_us.load(Ordering::SeqCst)
    }
}

impl<C: Clock> Clock for std::sync::Arc<C> {
    fn now_us(&self) -> u64 {
        (**self).now_us()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::at_ms(1_700_000_000_000);
        assert_eq!(c.now_us(), 1_700_000_000_000_000);
        assert_eq!(c.now_ms(), 1_700_000_000_000);
        c.advance_ms(1500);
        assert_eq!(c.now_ms(), 1_700_000_001_500);
        c.set_ms(5);
        assert_eq!(c.now_ms(), 5);
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_ms() > 1_577_836_800_000);
    }
}
