//! [`ExpiryPin`]: the time the commands a thread runs judge keys expired
//! at, held still while a script runs or a master's stream is applied.
//!
//! - Redis 7 judges expiry inside a script at the time the script started
//!   (`scriptTimeSnapshot`): a key the script saw alive stays alive to its
//!   end, however long it runs.
//! - A Redis replica never judges a key expired for its master's commands
//!   (`expireIfNeeded` returns 0 for the master's client): the master
//!   sends a `DEL` when its own key expires, and any write it made before
//!   that applies here, however late the replica applies it.
//!
//! Only the judgement moves: a command still measures TTLs and computes
//! new expiries with its own time ([`crate::internals::keyspace::Ctx::now_ms`]),
//! as Redis 7.0 does with `mstime()`.

use std::cell::Cell;

thread_local! {
    static PINNED_MS: Cell<Option<u64>> = const { Cell::new(None) };
}

/// While alive, the commands this thread runs judge keys expired at a
/// time of its own. Pins nest; dropping one restores the pin (or its
/// absence) it replaced.
#[must_use = "expiry is pinned only while the pin lives"]
pub struct ExpiryPin {
    previous: Option<u64>,
}

impl ExpiryPin {
    /// Keys are judged expired at `ms` unix milliseconds.
    pub fn at(ms: u64) -> ExpiryPin {
        ExpiryPin {
            previous: PINNED_MS.replace(Some(ms)),
        }
    }

    /// No key is judged expired (a replica applying its master's stream).
    pub fn never() -> ExpiryPin {
        // Every stored expiry is a positive time, later than the epoch.
        ExpiryPin::at(0)
    }

    /// The time pinned on this thread, if any.
    pub fn current() -> Option<u64> {
        PINNED_MS.get()
    }
}

impl Drop for ExpiryPin {
    fn drop(&mut self) {
        PINNED_MS.set(self.previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_holds_until_dropped_and_nests() {
        assert_eq!(ExpiryPin::current(), None);
        let outer = ExpiryPin::at(10);
        assert_eq!(ExpiryPin::current(), Some(10));
        {
            let _inner = ExpiryPin::never();
            assert_eq!(ExpiryPin::current(), Some(0));
        }
        assert_eq!(ExpiryPin::current(), Some(10));
        drop(outer);
        assert_eq!(ExpiryPin::current(), None);
        // Another thread never sees this thread's pin.
        let _pin = ExpiryPin::at(30);
        let other = std::thread::spawn(ExpiryPin::current).join().unwrap();
        assert_eq!(other, None);
    }
}
