//! Admission: a keyed command waits for the commands before it on its
//! keys, and a script or EXEC for the scripts and transactions before
//! it, as a suspended task, not as a blocked thread.
//!
//! The engine serializes the commands on a key with per-key locks (the
//! stripes of `redcodec_engine::internals::lock_stripes`, each a
//! `std::sync::Mutex`). A command that meets a held stripe blocks its
//! thread, and with it every other connection that async worker serves,
//! until the holder's release wakes the thread through the kernel. With
//! every client on one key (a queue, a counter, one hash) the two
//! workers of a 2-core machine took turns that way on nearly every
//! command.
//!
//! So before such a command runs, its connection awaits the same stripes
//! here: one async lock per engine stripe. A command that has to wait
//! gives its worker back to the other connections (reading, parsing,
//! answering them), and the release hands the stripe to the next task
//! waiting for it. The engine's locks stay the guarantee: an admitted
//! command takes them as before (uncontended by other admitted
//! commands); admission only decides where the waiting happens.
//! Measured with `redis-benchmark -c 50 -P 1` on one key
//! (docs/src/performance.md): LPUSH, LPOP, SADD, HSET and ZADD 23–43 %
//! more requests/s.
//!
//! # Which commands
//! - The keyed commands the engine runs that a pipeline group may hold
//!   ([`crate::command_spec::Spec::groups`]), run alone, once the
//!   connection's checks passed (so that `BUSY`, `MOVED` and `READONLY`
//!   are answered without waiting).
//! - A pipeline group of them, before each of its parts that writes: the
//!   keys of its requests not yet run, which that part locks together
//!   ([`crate::group_commit::run`]).
//! - A pipeline group's part that only reads: a share of the engine
//!   ([`Admission::share`]), no stripe.
//! - Whoever takes the engine whole — a script, a pipeline group of
//!   scripts, EXEC — before it runs ([`Admission::exclusive`]). Every
//!   command above holds a share of that lock while it runs, so a script
//!   waits for the commands admitted before it, and the commands that
//!   come after it wait for it, all as suspended tasks. Before, a script
//!   that met another's hold of the engine blocked its worker thread
//!   (EXEC), or handed the worker's queue to a new thread and blocked
//!   there (a script, through `block_in_place`): about a quarter of the
//!   server's CPU in thread switches under 50 clients' pipelined
//!   EVALSHA. And a keyed command that met a running script blocked its
//!   worker the same way, with the connections it served: 25 clients'
//!   pipelined EVALSHA beside 25 clients' GET, 68k -> 84k EVALSHA/s and
//!   164k -> 198k GET/s.
//!
//! Blocking pops and keyspace-wide commands take the engine's locks
//! only, as before.
//!
//! # No deadlock
//! - A command (or a group's part) awaits its share of the engine, then
//!   its stripes in ascending order, holding no engine lock while it
//!   waits. Tokio's lock is fair: a share is not granted while a script
//!   waits for the engine whole, so scripts are not starved, and a
//!   command holding a share waits only for stripes, whose holders
//!   hold shares and run to their end.
//! - It takes engine locks only once admitted, and runs to its end
//!   without awaiting anything: the admission is dropped before its
//!   reply is written.
//! - Whoever takes engine locks without admission never waits for it.

use redcodec_engine::internals::lock_stripes::{stripe, STRIPES};
use tokio::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// One async lock per engine stripe, and one over the engine: shared by
/// the keyed commands, held whole by those who take the engine whole.
pub struct Admission {
    stripes: Vec<Mutex<()>>,
    engine: RwLock<()>,
}

impl Default for Admission {
    fn default() -> Self {
        Admission {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            engine: RwLock::new(()),
        }
    }
}

/// What a command was admitted to; released on drop.
#[allow(dead_code)] // The guards are held, never read.
pub enum Admitted<'a> {
    /// A share of the engine and the stripe of the command's one key.
    One(RwLockReadGuard<'a, ()>, MutexGuard<'a, ()>),
    /// A share of the engine and the stripes of its keys.
    Keys(RwLockReadGuard<'a, ()>, Vec<MutexGuard<'a, ()>>),
    /// A share of the engine only: reads, which take no stripe.
    Shared(RwLockReadGuard<'a, ()>),
    /// The engine whole.
    Exclusive(RwLockWriteGuard<'a, ()>),
}

impl Admission {
    /// Waits until nobody holds the engine whole and no other admitted
    /// command holds a stripe of `keys` (those of one command), then
    /// holds a share of the engine and those stripes.
    pub async fn admit(&self, keys: &[&[u8]]) -> Admitted<'_> {
        let engine = self.engine.read().await;
        if let [key] = keys {
            return Admitted::One(engine, self.stripes[stripe(key)].lock().await);
        }
        let mut order: Vec<usize> = keys.iter().map(|key| stripe(key)).collect();
        order.sort_unstable();
        order.dedup();
        let mut held = Vec::with_capacity(order.len());
        for i in order {
            held.push(self.stripes[i].lock().await);
        }
        Admitted::Keys(engine, held)
    }

    /// Waits until nobody holds the engine whole, then holds a share of
    /// it: a group of reads.
    pub async fn share(&self) -> Admitted<'_> {
        Admitted::Shared(self.engine.read().await)
    }

    /// Waits until every admitted command before it is done, then holds
    /// the engine whole: a script, a group of scripts, EXEC. First come,
    /// first served: commands that come after it wait for it.
    pub async fn exclusive(&self) -> Admitted<'_> {
        Admitted::Exclusive(self.engine.write().await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_command_waits_for_one_on_a_shared_key_and_not_for_others() {
        let admission = Arc::new(Admission::default());
        let held = admission.admit(&[b"queue".as_slice()]).await;
        // Another key on another stripe is admitted at once.
        let other = (0..)
            .map(|i| format!("other{i}"))
            .find(|k| stripe(k.as_bytes()) != stripe(b"queue"))
            .unwrap();
        drop(admission.admit(&[other.as_bytes()]).await);
        // A command naming the held key (among others) waits for it.
        let waiting = {
            let admission = admission.clone();
            tokio::spawn(async move {
                let _a = admission.admit(&[b"a".as_slice(), b"queue", b"z"]).await;
            })
        };
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished(), "admitted while the key was held");
        drop(held);
        waiting.await.unwrap();
    }

    /// Spawns `admit` and lets it run until it can go no further.
    async fn spawned<F: std::future::Future<Output = ()> + Send + 'static>(
        admit: F,
    ) -> tokio::task::JoinHandle<()> {
        let task = tokio::spawn(admit);
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        task
    }

    #[tokio::test]
    async fn commands_wait_for_one_taking_the_engine_whole_and_it_for_them() {
        let admission = Arc::new(Admission::default());
        let running = admission.exclusive().await;
        let (a, b, c) = (admission.clone(), admission.clone(), admission.clone());
        let script = spawned(async move { drop(a.exclusive().await) }).await;
        let keyed = spawned(async move { drop(b.admit(&[b"queue".as_slice()]).await) }).await;
        let reads = spawned(async move { drop(c.share().await) }).await;
        for (task, what) in [
            (&script, "a script"),
            (&keyed, "a command"),
            (&reads, "reads"),
        ] {
            assert!(
                !task.is_finished(),
                "{what} admitted beside a running script"
            );
        }
        drop(running);
        for task in [script, keyed, reads] {
            task.await.unwrap();
        }

        // A script waits for the commands admitted before it, and those
        // that come after it wait for it.
        let reading = admission.share().await;
        let writing = admission.admit(&[b"queue".as_slice()]).await;
        let a = admission.clone();
        let script = spawned(async move { drop(a.exclusive().await) }).await;
        assert!(!script.is_finished(), "a script admitted beside commands");
        let b = admission.clone();
        let later = spawned(async move { drop(b.share().await) }).await;
        assert!(!later.is_finished(), "reads went ahead of a waiting script");
        drop((reading, writing));
        script.await.unwrap();
        later.await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn commands_naming_the_same_keys_in_any_order_do_not_deadlock() {
        let admission = Arc::new(Admission::default());
        let keys: Vec<Vec<u8>> = (0..8).map(|i| format!("k{i}").into_bytes()).collect();
        let mut tasks = Vec::new();
        for t in 0..8 {
            let admission = admission.clone();
            let mut mine = keys.clone();
            mine.rotate_left(t);
            tasks.push(tokio::spawn(async move {
                for _ in 0..200 {
                    let names: Vec<&[u8]> = mine.iter().map(Vec::as_slice).collect();
                    let _a = admission.admit(&names).await;
                    tokio::task::yield_now().await;
                }
            }));
        }
        let all = async {
            for task in tasks {
                task.await.unwrap();
            }
        };
        // A deadlock never ends: fail instead of hanging.
        tokio::time::timeout(std::time::Duration::from_secs(120), all)
            .await
            .expect("the commands deadlocked");
    }
}
