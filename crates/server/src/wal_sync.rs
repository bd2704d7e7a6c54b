//! `--sync always`: one sync of the write-ahead log for every connection
//! waiting for one at the time (a group commit of the syncs).
//!
//! A connection that wrote may not send its replies before its writes
//! are on disk. Each such connection used to sync the WAL itself, on its
//! async worker thread: a machine with two workers made at most two
//! syncs at a time, one per connection, and every connection served by a
//! worker waited for that worker's sync. Redis, whose event loop syncs
//! once per turn before it sends every reply of that turn, answered
//! several times as many writes a second.
//!
//! Here a connection asks [`WalSync::wait`] for a sync and waits for it as
//! a suspended task. One syncer ([`WalSync::syncs`], a task of the server)
//! makes the syncs one after the other, on a blocking thread: a sync
//! *round* covers every write that completed before the round began, so
//! a connection needs the first round that begins after it asks — the
//! round after the one running, if one is. Every connection that asks
//! while a round runs is answered by the next one, however many they are.
//!
//! If a round fails, every connection that needed it gets the error (and
//! closes, sending nothing), as each got its own sync's error before.

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{watch, Notify};

/// The rounds asked for and begun, and the last one done.
pub struct WalSync {
    rounds: Mutex<Rounds>,
    /// Wakes the syncer when a round is asked for.
    asked: Notify,
    /// The last round done, and how the last failed one failed.
    done: watch::Sender<Done>,
}

/// Rounds are numbered from 1, in the order they begin.
#[derive(Default)]
struct Rounds {
    /// The highest round a connection waits for.
    wanted: u64,
    /// The rounds begun so far.
    begun: u64,
}

/// What the syncer has done.
#[derive(Clone, Default)]
struct Done {
    /// The last round done.
    round: u64,
    /// The last round that failed, and its error.
    failed: Option<(u64, Arc<str>)>,
}

impl Default for WalSync {
    fn default() -> Self {
        WalSync {
            rounds: Mutex::new(Rounds::default()),
            asked: Notify::new(),
            done: watch::Sender::new(Done::default()),
        }
    }
}

impl WalSync {
    /// Waits until every write that completed before this call is on disk:
    /// the error of the sync otherwise. Needs [`WalSync::syncs`] running.
    pub async fn wait(&self) -> Result<(), Arc<str>> {
        let need = self.ask();
        self.round_done(need).await
    }

    /// Waits for round `need` (or a later one) to be done: its error if
    /// the last round seen failed.
    async fn round_done(&self, need: u64) -> Result<(), Arc<str>> {
        let done = self
            .done
            .subscribe()
            .wait_for(|done| done.round >= need)
            .await
            .map_err(|_| Arc::<str>::from("the WAL syncer stopped"))?
            .clone();
        match done.failed {
            // The round seen covers this call's writes; a later round
            // that succeeded would cover them too.
            Some((round, e)) if round == done.round => Err(e),
            _ => Ok(()),
        }
    }

    /// Asks for the first round that begins from now on, and returns its
    /// number.
    fn ask(&self) -> u64 {
        let (need, ask) = {
            let mut rounds = self.rounds.lock();
            let need = rounds.begun + 1;
            let ask = rounds.wanted < need;
            // Never lower: no round beyond the next is ever asked for.
            rounds.wanted = need;
            (need, ask)
        };
        if ask {
            self.asked.notify_one();
        }
        need
    }

    /// The syncer: makes each round asked for with `sync`, on a blocking
    /// thread, one round after the other, until the future is dropped (the
    /// server's task syncs its store's WAL, and stops once its connections
    /// are gone).
    pub async fn syncs<F>(&self, sync: F)
    where
        F: Fn() -> Result<(), String> + Clone + Send + 'static,
    {
        loop {
            let round = loop {
                {
                    let mut rounds = self.rounds.lock();
                    if rounds.wanted > rounds.begun {
                        rounds.begun += 1;
                        break rounds.begun;
                    }
                }
                self.asked.notified().await;
            };
            let result = tokio::task::spawn_blocking(sync.clone())
                .await
                .map_err(|e| e.to_string())
                .and_then(|synced| synced);
            self.done.send_modify(|done| {
                done.round = round;
                if let Err(e) = result {
                    done.failed = Some((round, e.into()));
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::mpsc;

    /// A syncer whose syncs report their start on `began` and each wait
    /// for one word on their own channel: `Ok` or the error to fail with.
    fn held_syncer(
        wal: &Arc<WalSync>,
        count: &Arc<AtomicU64>,
    ) -> (mpsc::Receiver<u64>, mpsc::Sender<Result<(), String>>) {
        let (began_tx, began) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<Result<(), String>>();
        let release_rx = Arc::new(std::sync::Mutex::new(release_rx));
        let count = count.clone();
        let syncer = wal.clone();
        tokio::spawn(async move {
            syncer
                .syncs(move || {
                    let round = count.fetch_add(1, Ordering::SeqCst) + 1;
                    began_tx.send(round).unwrap();
                    release_rx.lock().unwrap().recv().unwrap()
                })
                .await;
        });
        (began, release)
    }

    /// A connection's wait: asked for now, awaited on a task.
    fn wait(wal: &Arc<WalSync>) -> tokio::task::JoinHandle<Result<(), Arc<str>>> {
        let need = wal.ask();
        let wal = wal.clone();
        tokio::spawn(async move { wal.round_done(need).await })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_connection_asking_during_a_sync_shares_the_next_one() {
        let wal = Arc::new(WalSync::default());
        let count = Arc::new(AtomicU64::new(0));
        let (began, release) = held_syncer(&wal, &count);
        let first = wait(&wal);
        let began_first = tokio::task::spawn_blocking(move || (began.recv().unwrap(), began))
            .await
            .unwrap();
        let (round, began) = began_first;
        assert_eq!(round, 1);
        // Ten connections ask while round 1 runs: round 1 began before
        // their writes, so each needs round 2.
        let needs: Vec<u64> = (0..10).map(|_| wal.ask()).collect();
        assert_eq!(needs, vec![2; 10]);
        let waiting: Vec<_> = needs
            .iter()
            .map(|&need| {
                let wal = wal.clone();
                tokio::spawn(async move { wal.round_done(need).await })
            })
            .collect();
        release.send(Ok(())).unwrap();
        first.await.unwrap().unwrap();
        let round = tokio::task::spawn_blocking(move || began.recv().unwrap())
            .await
            .unwrap();
        assert_eq!(round, 2, "one more sync for the ten");
        release.send(Ok(())).unwrap();
        for waiter in waiting {
            waiter.await.unwrap().unwrap();
        }
        assert_eq!(count.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_sync_fails_every_connection_that_needed_it_and_no_later_one() {
        let wal = Arc::new(WalSync::default());
        let count = Arc::new(AtomicU64::new(0));
        let (began, release) = held_syncer(&wal, &count);
        let waiting: Vec<_> = (0..3).map(|_| wait(&wal)).collect();
        let (round, began) = tokio::task::spawn_blocking(move || (began.recv().unwrap(), began))
            .await
            .unwrap();
        assert_eq!(round, 1);
        release.send(Err("disk gone".into())).unwrap();
        for waiter in waiting {
            assert_eq!(&*waiter.await.unwrap().unwrap_err(), "disk gone");
        }
        let later = wait(&wal);
        let round = tokio::task::spawn_blocking(move || began.recv().unwrap())
            .await
            .unwrap();
        assert_eq!(round, 2);
        release.send(Ok(())).unwrap();
        later.await.unwrap().unwrap();
    }
}
