//! CLIENT PAUSE and CLIENT UNPAUSE, as Redis 7.0 pauses clients
//! (`pauseClients`, `processCommand`): an operator's way to stop writes
//! for a cut-over (pause, wait for the replicas' offsets to reach the
//! master's, switch the clients over), or to stop everything.
//!
//! While a pause lasts, a client's command that passed every check that
//! refuses at once (an unknown command, its arity, authentication, a
//! redirection) waits, counted in INFO's `blocked_clients`, until CLIENT
//! UNPAUSE or the pause's end, then runs. `WRITE` holds what may reach
//! the replicas: the writes (the blocking pops and the writing
//! subcommands included), PFCOUNT, PUBLISH and SPUBLISH, a script that
//! may write (EVAL and EVALSHA without a `no-writes` shebang, FCALL of a
//! function without `no-writes`; the `_RO` forms run) and an EXEC that
//! queued one of those; `ALL` (the default) holds every command. A
//! second pause keeps the stricter mode and the later end. A pause sent
//! inside MULTI starts once EXEC has run the rest. The connections of
//! this server's own replicas are never held.
//!
//! This module keeps the pause and the wait; [`crate::pause_gate`] says
//! which commands it holds, and [`crate::commands::client`] answers the
//! two subcommands. A replica's link to its master is held as a client
//! ([`crate::replica`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio::sync::watch;

use crate::clients::ClientInfo;

/// A pause: until when, and whether every command waits (`ALL`) or only
/// those that may reach the replicas (`WRITE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Paused {
    /// When it ends by itself.
    pub until: Instant,
    /// `ALL` rather than `WRITE`.
    pub all: bool,
}

/// The server's pause, if any.
pub struct ClientPause {
    /// Whether a pause was set and not yet lifted (one atomic load on
    /// every command's way).
    active: AtomicBool,
    state: watch::Sender<Option<Paused>>,
}

impl Default for ClientPause {
    fn default() -> ClientPause {
        ClientPause {
            active: AtomicBool::new(false),
            state: watch::Sender::new(None),
        }
    }
}

impl ClientPause {
    /// Pauses until `until`; a pause already set keeps the stricter mode
    /// and the later end (Redis' `pauseClients`).
    pub fn pause(&self, until: Instant, all: bool) {
        self.state.send_modify(|state| {
            *state = Some(match *state {
                Some(p) if p.until > Instant::now() => Paused {
                    until: p.until.max(until),
                    all: p.all || all,
                },
                _ => Paused { until, all },
            });
        });
        self.active.store(true, Ordering::SeqCst);
    }

    /// Lifts the pause: the waiting commands run.
    pub fn unpause(&self) {
        self.active.store(false, Ordering::SeqCst);
        self.state.send_replace(None);
    }

    /// The pause in force now, if any; one that ran out is forgotten
    /// (the commands after it pay one atomic load again).
    pub fn now(&self) -> Option<Paused> {
        if !self.active.load(Ordering::Relaxed) {
            return None;
        }
        let now = Instant::now();
        let current = (*self.state.borrow()).filter(|p| p.until > now);
        if current.is_none() {
            self.state.send_if_modified(|state| {
                let ended = state.is_some_and(|p| p.until <= now);
                if ended {
                    *state = None;
                    self.active.store(false, Ordering::SeqCst);
                }
                ended
            });
        }
        current
    }

    /// Whether a pause is in force: pipelined commands are then not
    /// gathered into groups, each is looked at alone.
    pub fn active(&self) -> bool {
        self.now().is_some()
    }

    /// Waits while the pause holds the command (`held` says whether a
    /// pause of that mode holds it), counted as a blocked client; `false`
    /// when the connection must close instead (killed, or the server
    /// shuts down).
    pub async fn wait(
        &self,
        info: &ClientInfo,
        shutdown: &mut watch::Receiver<bool>,
        held_by_write_pause: bool,
    ) -> bool {
        info.live.lock().paused = true;
        let mut changes = self.state.subscribe();
        let went_on = loop {
            let pause = (*changes.borrow_and_update()).filter(|p| p.until > Instant::now());
            let Some(pause) = pause.filter(|p| p.all || held_by_write_pause) else {
                break true;
            };
            if info.killed.load(Ordering::SeqCst) || *shutdown.borrow() {
                break false;
            }
            tokio::select! {
                () = tokio::time::sleep_until(pause.until.into()) => {}
                changed = changes.changed() => if changed.is_err() { break true },
                _ = shutdown.changed() => {}
                () = info.kill.notified() => break false,
            }
        };
        info.live.lock().paused = false;
        went_on
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_second_pause_keeps_the_stricter_mode_and_the_later_end() {
        let pause = ClientPause::default();
        assert_eq!(pause.now(), None);
        let soon = Instant::now() + Duration::from_secs(60);
        let later = soon + Duration::from_secs(60);
        pause.pause(later, false);
        pause.pause(soon, true);
        assert_eq!(
            pause.now(),
            Some(Paused {
                until: later,
                all: true
            })
        );
        pause.unpause();
        assert_eq!(pause.now(), None);
        assert!(!pause.active());
        // A pause that has ended holds nothing, is forgotten (pipelined
        // writes are grouped again), and a new one starts afresh.
        pause.pause(Instant::now(), true);
        assert_eq!(pause.now(), None);
        assert!(!pause.active());
        assert!(!pause.active.load(Ordering::SeqCst));
        pause.pause(soon, false);
        assert_eq!(pause.now().map(|p| p.all), Some(false));
    }
}
