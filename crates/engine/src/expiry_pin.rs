//! [`TimePin`]: the time every command the thread runs sees, held still
//! while a script runs.
//!
//! Redis 7 evaluates expiry inside a script at the time the script
//! started (`scriptTimeSnapshot`): a key the script saw alive stays alive
//! to its end, however long it runs, and a replica or the AOF replaying
//! the script's commands sees the same keys. A command's own time
//! ([`crate::internals::keyspace::Ctx::now_ms`]) is the pinned time while
//! a pin is alive on its thread, else the engine's clock, read once per
//! command.

use std::cell::Cell;

thread_local! {
    static PINNED_MS: Cell<Option<u64>> = const { Cell::new(None) };
}

/// While alive, the commands this thread runs take `ms` (unix
/// milliseconds) as the current time. Pins nest; dropping one restores
/// the pin (or its absence) it replaced.
#[must_use = "the time is pinned only while the pin lives"]
pub struct TimePin {
    previous: Option<u64>,
}

impl TimePin {
    /// Pins the thread's time at `ms` unix milliseconds.
    pub fn at(ms: u64) -> TimePin {
        TimePin {
            previous: PINNED_MS.replace(Some(ms)),
        }
    }

    /// The time pinned on this thread, if any.
    pub fn current() -> Option<u64> {
        PINNED_MS.get()
    }
}

impl Drop for TimePin {
    fn drop(&mut self) {
        PINNED_MS.set(self.previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_holds_until_dropped_and_nests() {
        assert_eq!(TimePin::current(), None);
        let outer = TimePin::at(10);
        assert_eq!(TimePin::current(), Some(10));
        {
            let _inner = TimePin::at(20);
            assert_eq!(TimePin::current(), Some(20));
        }
        assert_eq!(TimePin::current(), Some(10));
        drop(outer);
        assert_eq!(TimePin::current(), None);
        // Another thread never sees this thread's pin.
        let _pin = TimePin::at(30);
        let other = std::thread::spawn(TimePin::current).join().unwrap();
        assert_eq!(other, None);
    }
}
