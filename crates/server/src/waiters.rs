//! Blocking pops (BLPOP BRPOP BLMOVE BRPOPLPUSH BZPOPMIN BZPOPMAX) over
//! the engine's non-blocking commands: a client that finds every key
//! empty waits in a FIFO queue per key; a write to a key serves the
//! waiters of that key, oldest first, each element to exactly one waiter.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;
use tokio::sync::Notify;

use crate::watch::{NsKey, WatchTable};

/// What a blocked client wants from a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockOp {
    /// BLPOP (left) or BRPOP: `[key, element]`.
    Pop {
        /// From the head.
        left: bool,
    },
    /// BLMOVE / BRPOPLPUSH: the element, pushed to `dst`.
    Move {
        /// Destination list.
        dst: Vec<u8>,
        /// `LEFT` or `RIGHT` of the source.
        from: &'static str,
        /// `LEFT` or `RIGHT` of the destination.
        to: &'static str,
    },
    /// BZPOPMIN (min) or BZPOPMAX: `[key, member, score]`.
    ZPop {
        /// Lowest score first.
        min: bool,
    },
    /// BLMPOP: `[key, [element, …]]`, up to `count` elements.
    MPop {
        /// From the head.
        left: bool,
        /// At most this many.
        count: i64,
    },
    /// BZMPOP: `[key, [[member, score], …]]`, up to `count` members.
    ZMPop {
        /// Lowest scores first.
        min: bool,
        /// At most this many.
        count: i64,
    },
}

impl BlockOp {
    /// The reply when the wait ends without an element.
    pub fn timeout_reply(&self) -> Reply {
        match self {
            BlockOp::Move { .. } => Reply::Nil,
            _ => Reply::NilArray,
        }
    }

    /// Runs the non-blocking form on `key`: `None` when the key holds
    /// nothing to take.
    pub fn try_once(&self, engine: &Engine<AnyCodec>, key: &[u8]) -> Option<Reply> {
        match self {
            BlockOp::Pop { left } => {
                let name: &[u8] = if *left { b"lpop" } else { b"rpop" };
                match engine.execute(&[name, key]) {
                    Reply::Bulk(v) => Some(Reply::Array(vec![Reply::bulk(key), Reply::Bulk(v)])),
                    Reply::Nil | Reply::NilArray => None,
                    other => Some(other),
                }
            }
            BlockOp::Move { dst, from, to } => {
                let args: [&[u8]; 5] = [b"lmove", key, dst, from.as_bytes(), to.as_bytes()];
                match engine.execute(&args) {
                    Reply::Nil | Reply::NilArray => None,
                    other => Some(other),
                }
            }
            BlockOp::ZPop { min } => {
                let name: &[u8] = if *min { b"zpopmin" } else { b"zpopmax" };
                match engine.execute(&[name, key]) {
                    Reply::Array(items) if items.is_empty() => None,
                    Reply::Array(mut items) => {
                        items.insert(0, Reply::bulk(key));
                        Some(Reply::Array(items))
                    }
                    Reply::Nil | Reply::NilArray => None,
                    other => Some(other),
                }
            }
            BlockOp::MPop { left, count } => {
                let name: &[u8] = if *left { b"lpop" } else { b"rpop" };
                pop_many(engine, name, key, *count, false)
            }
            BlockOp::ZMPop { min, count } => {
                let name: &[u8] = if *min { b"zpopmin" } else { b"zpopmax" };
                pop_many(engine, name, key, *count, true)
            }
        }
    }

    /// Whether an error the non-blocking form gives while serving goes to
    /// the waiter (BLMOVE into a key of another type) or leaves it
    /// waiting (the key it waits on now holds another type).
    fn delivers_errors(&self) -> bool {
        matches!(self, BlockOp::Move { .. })
    }

    /// The keys the non-blocking form writes besides the source.
    fn also_writes(&self) -> Option<&[u8]> {
        match self {
            BlockOp::Move { dst, .. } => Some(dst),
            _ => None,
        }
    }
}

/// Where a wait stands.
#[derive(Clone, Debug, PartialEq)]
pub enum WaitState {
    /// Still waiting.
    Waiting,
    /// Ended with this reply (served, or unblocked by CLIENT UNBLOCK).
    Done(Reply),
    /// Given up (timeout, disconnect).
    Abandoned,
}

/// One blocked client.
pub struct Waiter {
    /// Its namespace.
    pub namespace: String,
    /// The keys it waits on, in the order given.
    pub keys: Vec<Vec<u8>>,
    /// What it takes.
    pub op: BlockOp,
    /// Where the wait stands; the server and the client both change it
    /// under this lock, so an element is handed over exactly once.
    pub state: Mutex<WaitState>,
    /// Wakes the client.
    pub wake: Notify,
}

impl Waiter {
    /// Ends the wait with `reply` if it is still waiting; whether it was.
    pub fn finish(&self, reply: Reply) -> bool {
        let mut state = self.state.lock();
        if *state != WaitState::Waiting {
            return false;
        }
        *state = WaitState::Done(reply);
        drop(state);
        self.wake.notify_one();
        true
    }
}

/// Every blocked client, queued per key.
#[derive(Default)]
pub struct Waiters {
    queues: Mutex<HashMap<NsKey, VecDeque<Arc<Waiter>>>>,
    /// Blocked clients: writes skip the queues while it is 0.
    count: AtomicUsize,
}

/// What [`Waiters::block`] found.
pub enum Blocked {
    /// A key had something: the reply.
    Now(Reply),
    /// Every key was empty: the client waits on this.
    Wait(Arc<Waiter>),
}

impl Waiters {
    /// Tries every key in order; when all are empty, queues the client on
    /// each of them. Both under the queues' lock, so a write that lands
    /// after the tries finds the client queued.
    pub fn block(
        &self,
        engine: &Engine<AnyCodec>,
        watch: &WatchTable,
        namespace: &str,
        keys: Vec<Vec<u8>>,
        op: BlockOp,
    ) -> Blocked {
        let mut queues = self.queues.lock();
        for key in &keys {
            if let Some(reply) = op.try_once(engine, key) {
                if !reply.is_error() {
                    let mut written: Vec<&[u8]> = vec![key];
                    written.extend(op.also_writes());
                    watch.touch(namespace, &written);
                    if let Some(dst) = op.also_writes() {
                        let dst = dst.to_vec();
                        drop(queues);
                        self.serve(engine, watch, namespace, &[&dst]);
                    }
                }
                return Blocked::Now(reply);
            }
        }
        let waiter = Arc::new(Waiter {
            namespace: namespace.to_string(),
            keys,
            op,
            state: Mutex::new(WaitState::Waiting),
            wake: Notify::new(),
        });
        for key in &waiter.keys {
            queues
                .entry((namespace.to_string(), key.clone()))
                .or_default()
                .push_back(waiter.clone());
        }
        self.count.fetch_add(1, Ordering::SeqCst);
        Blocked::Wait(waiter)
    }

    /// Takes a waiter out of every queue (after it was served, timed out
    /// or left).
    pub fn remove(&self, waiter: &Arc<Waiter>) {
        let mut queues = self.queues.lock();
        self.remove_locked(&mut queues, waiter);
    }

    fn remove_locked(
        &self,
        queues: &mut HashMap<NsKey, VecDeque<Arc<Waiter>>>,
        waiter: &Arc<Waiter>,
    ) {
        let mut found = false;
        for key in &waiter.keys {
            let k = (waiter.namespace.clone(), key.clone());
            if let Some(q) = queues.get_mut(&k) {
                let before = q.len();
                q.retain(|w| !Arc::ptr_eq(w, waiter));
                found |= q.len() != before;
                if q.is_empty() {
                    queues.remove(&k);
                }
            }
        }
        if found {
            self.count.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Whether any client is blocked (without taking the queues' lock).
    pub fn any_blocked(&self) -> bool {
        self.count.load(Ordering::SeqCst) > 0
    }

    /// After a write to `keys`: serves their waiters, oldest first, while
    /// the keys hold elements (a served BLMOVE's destination is served
    /// in turn).
    pub fn serve(
        &self,
        engine: &Engine<AnyCodec>,
        watch: &WatchTable,
        namespace: &str,
        keys: &[&[u8]],
    ) {
        if self.count.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut queues = self.queues.lock();
        let mut ready: VecDeque<Vec<u8>> = keys.iter().map(|k| k.to_vec()).collect();
        while let Some(key) = ready.pop_front() {
            let nskey = (namespace.to_string(), key.clone());
            while let Some(waiter) = queues.get(&nskey).and_then(|q| q.front()).cloned() {
                let mut state = waiter.state.lock();
                if *state != WaitState::Waiting {
                    drop(state);
                    self.remove_locked(&mut queues, &waiter);
                    continue;
                }
                let Some(reply) = waiter.op.try_once(engine, &key) else {
                    break;
                };
                if reply.is_error() && !waiter.op.delivers_errors() {
                    break;
                }
                let ok = !reply.is_error();
                *state = WaitState::Done(reply);
                drop(state);
                self.remove_locked(&mut queues, &waiter);
                waiter.wake.notify_one();
                if ok {
                    let mut written: Vec<&[u8]> = vec![&key];
                    written.extend(waiter.op.also_writes());
                    watch.touch(namespace, &written);
                    if let Some(dst) = waiter.op.also_writes() {
                        ready.push_back(dst.to_vec());
                    }
                }
            }
        }
    }
}

/// BLMPOP/BZMPOP's non-blocking form: `[key, [elements…]]` (for a sorted
/// set, `[key, [[member, score]…]]`), `None` when the key holds nothing.
fn pop_many(
    engine: &Engine<AnyCodec>,
    name: &[u8],
    key: &[u8],
    count: i64,
    scored: bool,
) -> Option<Reply> {
    let count = count.to_string();
    match engine.execute(&[name, key, count.as_bytes()]) {
        Reply::Array(items) if !items.is_empty() => {
            let items = if scored {
                items.chunks(2).map(|p| Reply::Array(p.to_vec())).collect()
            } else {
                items
            };
            Some(Reply::Array(vec![Reply::bulk(key), Reply::Array(items)]))
        }
        Reply::Array(_) | Reply::Nil | Reply::NilArray => None,
        other => Some(other),
    }
}
