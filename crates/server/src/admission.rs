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
//!
//! - Whoever takes the engine whole — a script, a pipeline group of
//!   scripts, EXEC — before it runs: one lock of their own
//!   ([`Admission::exclusive`]). They run one at a time anyway; one that
//!   met another's hold of the engine used to block its worker thread
//!   (EXEC), or hand the worker's queue to a new thread and block there
//!   (a script, through `block_in_place`): about a quarter of the
//!   server's CPU in thread switches under 50 clients' pipelined
//!   EVALSHA. Waiting here, its connection is a suspended task, and the
//!   release wakes it on the releasing worker, which runs them one after
//!   the other.
//!
//! Blocking pops and keyspace-wide commands take the engine's locks
//! only, as before.
//!
//! # No deadlock
//! - A command (or a group's part) awaits its stripes in ascending
//!   order, holding no engine lock while it waits.
//! - It takes engine locks only once admitted, and runs to its end
//!   without awaiting anything: the admission is dropped before its
//!   reply is written.
//! - Whoever takes engine locks without admission never waits for it.

use redcodec_engine::internals::lock_stripes::{stripe, STRIPES};
use tokio::sync::{Mutex, MutexGuard};

/// One async lock per engine stripe, and one for those who take the
/// engine whole.
pub struct Admission {
    stripes: Vec<Mutex<()>>,
    exclusive: Mutex<()>,
}

impl Default for Admission {
    fn default() -> Self {
        Admission {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            exclusive: Mutex::new(()),
        }
    }
}

/// The stripes a command was admitted to; released on drop.
pub enum Admitted<'a> {
    /// The stripe of the command's one key.
    One(#[allow(dead_code)] MutexGuard<'a, ()>),
    /// The stripes of its keys.
    Keys(#[allow(dead_code)] Vec<MutexGuard<'a, ()>>),
    /// The lock of those who take the engine whole.
    Exclusive(#[allow(dead_code)] MutexGuard<'a, ()>),
}

impl Admission {
    /// Waits until no other admitted command holds a stripe of `keys`
    /// (those of one command), then holds them all.
    pub async fn admit(&self, keys: &[&[u8]]) -> Admitted<'_> {
        if let [key] = keys {
            return Admitted::One(self.stripes[stripe(key)].lock().await);
        }
        let mut order: Vec<usize> = keys.iter().map(|key| stripe(key)).collect();
        order.sort_unstable();
        order.dedup();
        let mut held = Vec::with_capacity(order.len());
        for i in order {
            held.push(self.stripes[i].lock().await);
        }
        Admitted::Keys(held)
    }

    /// Waits until no other admitted script, group of scripts or EXEC
    /// runs, then holds their lock. First come, first served.
    pub async fn exclusive(&self) -> Admitted<'_> {
        Admitted::Exclusive(self.exclusive.lock().await)
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

    #[tokio::test]
    async fn one_taking_the_engine_whole_waits_for_the_one_before_and_not_for_keyed_commands() {
        let admission = Arc::new(Admission::default());
        let running = admission.exclusive().await;
        // Keyed commands are admitted beside a script (the engine's own
        // locks order them).
        drop(admission.admit(&[b"queue".as_slice()]).await);
        let waiting = {
            let admission = admission.clone();
            tokio::spawn(async move {
                let _a = admission.exclusive().await;
            })
        };
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished(), "admitted beside a running script");
        drop(running);
        waiting.await.unwrap();
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
