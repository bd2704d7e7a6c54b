//! `REPLICAOF host port` / `REPLICAOF NO ONE` (and its old name
//! `SLAVEOF`), and what a replica refuses its clients.

use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use redcodec_engine::Reply;

use super::master_link;
use super::replica_state::LinkPhase;
use crate::command_spec::{Run, Spec};
use crate::command_table;
use crate::session::Session;
use crate::state::Shared;
use redcodec_engine::internals::dispatch::Flags;

/// Kvrocks' refusal of `SLAVEOF`/`REPLICAOF` in cluster mode.
pub const REPLICAOF_REFUSED: &str = "ERR can't change to slave in cluster mode";

/// Redis' reply to a write on a replica.
pub const READONLY: &str = "READONLY You can't write against a read only replica.";

/// Redis' reply while a dataset loads.
pub const LOADING: &str = "LOADING Redis is loading the dataset in memory";

/// What a replica refuses a client before the command runs or is queued,
/// in Redis' order: a write (`-READONLY`), then anything but the commands
/// Redis runs while loading when a full copy is being loaded
/// (`-LOADING`; an EXEC whose queue holds another command too).
pub fn gate(shared: &Shared, session: &Session, spec: &Spec, args: &[Bytes]) -> Option<Reply> {
    let replica = &shared.replica;
    // The blocking pops are writes (Redis flags them `write`), and so are
    // FUNCTION's LOAD, DELETE, FLUSH and RESTORE.
    if replica.is_replica() && (spec.request_has(args, Flags::WRITE) || spec.has(Flags::BLOCKING)) {
        return Some(Reply::error(READONLY));
    }
    if replica.is_loading() {
        let queued_ok = || {
            session.queued.as_ref().is_none_or(|q| {
                q.iter().all(|q| {
                    q.spec
                        .map(command_table::by_id)
                        .is_some_and(|spec| spec.has(Flags::LOADING))
                })
            })
        };
        let exec = matches!(spec.run, Run::Exec);
        if !spec.has(Flags::LOADING) || (exec && !queued_ok()) {
            return Some(Reply::error(LOADING));
        }
    }
    None
}

/// `REPLICAOF host port | NO ONE` (arity checked before).
/// In cluster mode the topology decides, and both forms are refused
/// with Kvrocks' text once the arguments parse.
pub fn replicaof(shared: &Shared, args: &[Bytes]) -> Reply {
    let refused = || Reply::error(REPLICAOF_REFUSED);
    if args[1].eq_ignore_ascii_case(b"no") && args[2].eq_ignore_ascii_case(b"one") {
        if shared.cluster.enabled() {
            return refused();
        }
        stop(shared);
        return Reply::ok();
    }
    let Some(port) = std::str::from_utf8(&args[2])
        .ok()
        .and_then(|p| p.parse::<i64>().ok())
    else {
        return Reply::error("ERR value is not an integer or out of range");
    };
    let Ok(port) = u16::try_from(port) else {
        return Reply::error("ERR Invalid master port");
    };
    if shared.cluster.enabled() {
        return refused();
    }
    let host = String::from_utf8_lossy(&args[1]).into_owned();
    if follows(shared, &host, port) {
        eprintln!("redcodec serve: replication: REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.");
        return Reply::Status("OK Already connected to specified master".into());
    }
    let Some(shared) = shared.handle() else {
        return Reply::error("ERR the server is shutting down");
    };
    follow(&shared, host, port);
    Reply::ok()
}

/// Whether this server follows the master at `host:port` already.
pub fn follows(shared: &Shared, host: &str, port: u16) -> bool {
    matches!(&shared.replica.state.lock().master,
        Some((h, p)) if h.eq_ignore_ascii_case(host) && *p == port)
}

/// Starts following `host:port` (stopping any link to another master).
pub fn follow(shared: &Arc<Shared>, host: String, port: u16) {
    let replica = &shared.replica;
    let generation = {
        let _applying = replica.apply.lock();
        replica.next_generation()
    };
    // The master decides when its keys expire: no compaction or
    // active-expiry pass here drops one by this machine's clock.
    shared.engines.hold_expiry(true);
    {
        let mut st = replica.state.lock();
        // Redis' `master_link_down_since_seconds`: -1 until a link was
        // up (a master turned replica); a link up until now went down now.
        if st.master.is_none() {
            replica.offer_own_stream.store(true, Ordering::SeqCst);
            st.down_since = None;
        } else if st.phase == LinkPhase::Up {
            st.down_since = Some(Instant::now());
        }
        st.master = Some((host.clone(), port));
        st.phase = LinkPhase::Connecting;
        st.last_error = None;
    }
    eprintln!("redcodec serve: replication: following the master at {host}:{port}");
    let stop = replica.generation.subscribe();
    let task = tokio::spawn(master_link::run(
        shared.clone(),
        host,
        port,
        generation,
        stop,
    ));
    *replica.task.lock() = Some(task);
}

/// Redis' refusal of `SYNC`/`PSYNC` by a replica whose own link is not up
/// (`syncCommand`): it has no stream to serve. It is what ends a
/// replica told to follow itself, or two replicas told to follow each
/// other: each refuses the other and retries, the data untouched.
pub fn refuse_sync(shared: &Shared) -> Option<Reply> {
    let st = shared.replica.state.lock();
    (st.master.is_some() && st.phase != LinkPhase::Up)
        .then(|| Reply::error("NOMASTERLINK Can't SYNC while not connected with my master"))
}

/// `REPLICAOF NO ONE`: stops following; the data is kept and clients
/// may write again. The replication ID changes, as Redis'
/// `shiftReplicationId`: the old one (and the offset) become
/// `master_replid2` and `second_repl_offset`.
pub fn stop(shared: &Shared) {
    let replica = &shared.replica;
    // No command of the link is applied after this (see `Replica::apply`).
    let applying = replica.apply.lock();
    replica.next_generation();
    let mut st = replica.state.lock();
    if st.master.take().is_none() {
        return;
    }
    eprintln!("redcodec serve: replication: REPLICAOF NO ONE, now a master");
    // Clients may write from now on: the saved offset no longer holds.
    if let Err(e) = super::resume_file::invalidate(shared) {
        eprintln!("redcodec serve: replication: removing the replication state: {e}");
    }
    if replica.can_continue.swap(false, Ordering::SeqCst) {
        // A Redis master's stream (not a Kvrocks or Pika master's): this
        // server's own stream continues it, so that the master's other
        // replicas, and the master itself, may continue from here.
        let redis_stream = super::kvrocks::kvrocks_resume::current(shared).is_none()
            && super::pika::current(shared).is_none();
        if redis_stream {
            if let Ok(offset) = u64::try_from(st.offset) {
                shared.repl.continue_stream(&st.replid, offset);
            }
        }
        st.replid2 = std::mem::replace(&mut st.replid, shared.replid.clone());
        st.second_offset = st.offset + 1;
    }
    drop(applying);
    st.phase = LinkPhase::Down;
    st.last_error = None;
    drop(st);
    // Keys expire by this machine's clock again (see `follow`).
    shared.engines.hold_expiry(false);
}
