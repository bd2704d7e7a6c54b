//! Group commit of a connection's pipeline: the consecutive keyed
//! commands already in the read buffer run as one group whose writes
//! reach the store as one write (one RocksDB write batch, one WAL
//! append, one sync under `--sync always`; one per instance where each
//! command wrote one instance of a format that keeps every key in one),
//! through [`redcodec_engine::Engine::atomically_on`].
//!
//! # Which commands join
//! A command joins when the engine runs it (not a command the server
//! answers itself), it names its keys by position (not keyless like
//! `DBSIZE`, not keyspace-wide like `FLUSHALL`), and its arity fits.
//! Everything else — MULTI/EXEC/WATCH, blocking pops, admin and
//! connection commands — closes the group and runs alone as before. No
//! group forms inside MULTI, on a replica, in cluster mode (whose slot
//! checks hold migration guards per command), or for a single command
//! (but a lone EVAL script, which forms a group of one to run in a lane).
//!
//! Consecutive scripts (`EVAL`, `EVALSHA`, `FCALL` and their `_RO`
//! forms) of a RESP2 connection form a group of their own. A group of
//! EVAL scripts first runs in a lane (`script_lane.rs`): holding
//! only the keys its scripts declared, as a group of keyed commands
//! holds its keys, in a Lua state of its own, beside other connections'
//! groups. A script may touch keys it did not declare: one that does (or
//! runs past 1 ms) gives up, the group is abandoned unwritten, and it
//! runs again as every group of scripts with FCALL does, holding the
//! engine as one script does ([`crate::scripting`]: exclusively, every
//! key lock), once for all of them. Either way each script runs alone on
//! its keys, with nothing else between its calls, and the group's writes
//! are one store write. Each script's writes reach the replication
//! stream between `MULTI` and `EXEC`, as when it runs alone. (RESP3
//! connections are left out: a script's RESP3 reply is encoded through
//! the session, one at a time.)
//!
//! # What a group keeps
//! - **Atomic, isolated commands in order.** The group holds the locks
//!   of every key its commands name (from their specs, in the engine's
//!   ascending lock order): other connections' commands on those keys
//!   wait, those on other keys run. Each command reads through the
//!   writes of the commands before it.
//! - **Replies after the commit.** The replies are returned to the
//!   client loop only after the group's store write succeeded; if it
//!   fails, every command of the group gets the error (none applied).
//! - **Checks and counters as before.** Each command passes the checks
//!   of the client loop (unknown command, arity, NOAUTH, BUSY, READONLY)
//!   in order, and is counted in INFO commandstats and errorstats.
//! - **WATCH.** Each write bumps its keys' counters as it runs, as inside
//!   EXEC (a group that then fails to commit has dirtied them: a watcher's
//!   EXEC aborts, which is safe).
//! - **Blocked clients.** Keys a write made ready are served after the
//!   commit; when a client is blocked anywhere, the group closes after a
//!   write that made keys ready, so the blocked clients are served before
//!   the pipeline's next command, as Redis serves them.
//! - **Replication.** What each write propagates is worked out as it
//!   runs (from the state it left) but held back, and appended to the
//!   stream after the commit, before the keys' locks are released: for
//!   each key the stream keeps the order the writes applied in; a group
//!   that fails to commit sends nothing.

use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};
use redcodec_engine::internals::dispatch::Flags;
use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use crate::command_table;
use crate::commands::registry::Spec;
use crate::commands::{run_spec, Access};
use crate::engines::EngineGuard;
use crate::frame::{frame, Limits};
pub use crate::held_feed::hold_feed;
use crate::held_feed::HeldFeed;
use crate::reply::{Protocol, Shape};
use crate::script_lane::{self, LaneGroup};
use crate::script_worker;
use crate::session::Session;
use crate::state::Shared;

/// The most commands in one group.
pub const MAX_GROUP: usize = 256;

/// The most argument bytes in one group.
const MAX_GROUP_BYTES: usize = 1024 * 1024;

/// The spec of a request named `name` with `len` arguments if it may
/// join a group (see the module docs and [`Spec::groups`]); `scripts`:
/// a group of scripts, which a script joins. A command that may join, run
/// alone, awaits its keys first ([`crate::admission`]).
fn joins(session: &Session, scripts: bool, name: &[u8], len: usize) -> Option<&'static Spec> {
    command_table::get(name).filter(|spec| admits(session, scripts, spec, len))
}

/// Whether a request of `spec` with `len` arguments may join a group
/// (`scripts`: a group of scripts).
fn admits(session: &Session, scripts: bool, spec: &Spec, len: usize) -> bool {
    if scripts {
        spec.has(Flags::SCRIPT) && len >= 3 && session.protocol == Protocol::Resp2
    } else {
        spec.groups(len)
    }
}

/// A request of a group, resolved once.
struct Request {
    spec: &'static Spec,
    args: Vec<Bytes>,
}

/// A gathered group: its requests, whether they are scripts, and how
/// many have run.
pub struct Gathered {
    requests: Vec<Request>,
    scripts: bool,
    done: usize,
}

impl Gathered {
    /// Whether every request of the group has run.
    pub fn is_done(&self) -> bool {
        self.done >= self.requests.len()
    }
}

/// Whether the connection may group its pipeline now, `first` leading
/// (not while a script is busy: `first` then gets `BUSY` alone).
fn groups_now(shared: &Shared, session: &Session) -> bool {
    session.authenticated
        && session.queued.is_none()
        && !session.subscribed_resp2()
        && !shared.cluster.enabled()
        && !shared.replica.is_replica()
        && !shared.replica.is_loading()
        && shared.scripts.control().busy_error().is_none()
        && !shared.client_pause.active()
}

/// The group `first` starts: `first` and the requests after it in `buf`
/// that join it (taken out of `buf`), or `Err(first)` when `first` runs
/// alone (it does not join, or nothing joins it). A request that does
/// not join, is incomplete or malformed stays in `buf`.
pub fn gather(
    shared: &Shared,
    session: &mut Session,
    first: Vec<Bytes>,
    buf: &mut BytesMut,
    limits: &Limits,
) -> Result<Gathered, Vec<Bytes>> {
    let (spec, scripts) = if let Some(spec) = joins(session, false, &first[0], first.len()) {
        (spec, false)
    } else if let Some(spec) = joins(session, true, &first[0], first.len()) {
        (spec, true)
    } else {
        return Err(first);
    };
    if !groups_now(shared, session) {
        return Err(first);
    }
    let mut bytes: usize = first.iter().map(Bytes::len).sum();
    let mut group = vec![Request { spec, args: first }];
    while group.len() < MAX_GROUP && bytes < MAX_GROUP_BYTES {
        match frame(buf, limits) {
            Ok(Some(next)) if next.is_empty() => buf.advance(next.used()),
            Ok(Some(next)) => {
                let name = next.name(buf).unwrap_or_default();
                let last = group.last().expect("the first request").spec;
                let Some(spec) = command_table::get_after(last, name)
                    .filter(|spec| admits(session, scripts, spec, next.len()))
                else {
                    break;
                };
                let request = next.take(buf);
                bytes += request.args.iter().map(Bytes::len).sum::<usize>();
                group.push(Request {
                    spec,
                    args: request.args,
                });
            }
            _ => break,
        }
    }
    // A lone EVAL script is a group of one: it may run in a lane.
    if group.len() == 1 && !(scripts && script_lane::runs_in_lane(spec)) {
        return Err(group.pop().expect("one request").args);
    }
    Ok(Gathered {
        requests: group,
        scripts,
        done: 0,
    })
}

/// Runs the next part of a gathered group — its requests until one
/// closes the part (a blocked client to serve, or [`REPLY_BUDGET`] bytes
/// of replies) — and returns each command's reply with its RESP3 shape,
/// in order, once the part's writes are committed (see the module docs).
/// The client loop sends them, then runs the next part.
///
/// A part that writes locks the keys of every request not yet run
/// together; it awaits them first ([`crate::admission`]), so that
/// waiting for another connection's command on them, or for a script,
/// leaves the thread to the other connections. A part that only reads
/// awaits a share of the engine (no script running) the same way.
pub async fn run(
    shared: &Shared,
    session: &mut Session,
    group: &mut Gathered,
) -> Vec<(Reply, Shape)> {
    let mut replies = Vec::new();
    let start = group.done;
    let requests = &group.requests;
    group.done = if group.scripts {
        match run_scripts_in_lane(shared, session, requests, start, &mut replies).await {
            Some(next) => next,
            None => {
                let _admitted = shared.admission.exclusive().await;
                run_scripts(shared, session, requests, start, &mut replies)
            }
        }
    } else {
        let rest = &requests[start..];
        let locks = rest
            .iter()
            .any(|r| r.spec.has(Flags::WRITE))
            .then(|| keys_of(rest));
        let _admitted = match &locks {
            Some(keys) => shared.admission.admit(keys).await,
            None => shared.admission.share().await,
        };
        start + run_keyed(shared, session, rest, locks.as_deref(), &mut replies)
    };
    replies
}

/// The keys `requests` name, by their specs' key positions.
fn keys_of(requests: &[Request]) -> Vec<&[u8]> {
    Spec::keys_of_each(requests.iter().map(|r| (r.spec, r.args.as_slice())))
}

/// The reply bytes after which a part closes: replies wait in memory
/// until their part commits, so a pipeline of large reads is answered a
/// part at a time.
pub const REPLY_BUDGET: usize = crate::reply::OUT_CHUNK;

/// About how many bytes `reply` takes on the wire.
fn reply_size(reply: &Reply) -> usize {
    match reply {
        Reply::Status(s) | Reply::Error(s) => s.len() + 3,
        Reply::Bulk(b) => b.len() + 16,
        Reply::Array(items) => 16 + items.iter().map(reply_size).sum::<usize>(),
        Reply::Integer(_) | Reply::Nil | Reply::NilArray => 16,
    }
}

/// Whether the part must close after the command whose reply is the
/// last of `replies`; `size` sums the part's reply bytes so far.
fn closes_part(
    shared: &Shared,
    session: &Session,
    replies: &[(Reply, Shape)],
    size: &mut usize,
) -> bool {
    *size += replies.last().map_or(0, |(r, _)| reply_size(r));
    let made_ready = session.ready_keys.as_ref().is_some_and(|r| !r.is_empty());
    (made_ready && shared.waiters.any_blocked()) || *size >= REPLY_BUDGET
}

/// Runs keyed commands from the first of `rest` as one part; returns
/// how many of them ran.
fn run_keyed(
    shared: &Shared,
    session: &mut Session,
    rest: &[Request],
    locks: Option<&[&[u8]]>,
    replies: &mut Vec<(Reply, Shape)>,
) -> usize {
    let ns = session.namespace.clone();
    let engine = match shared.engines.shared(&ns) {
        Ok(engine) => engine,
        Err(e) => {
            refuse_all(shared, rest, e, replies);
            return rest.len();
        }
    };
    run_part(shared, session, &engine, &ns, rest, locks, replies)
}

/// Every request of `requests` refused with `e`.
fn refuse_all(shared: &Shared, requests: &[Request], e: Reply, replies: &mut Vec<(Reply, Shape)>) {
    for r in requests {
        shared.command_stats.rejected(r.spec.name, &r.args);
        replies.push((e.clone(), r.spec.shape(&r.args)));
    }
}

/// Runs `rest` as one group until one closes it ([`closes_part`]),
/// pushing their replies; returns how many of them ran. `locks`: the
/// keys of those requests, locked together when one of them writes;
/// `None` when they only read (each then runs under its own locks).
fn run_part(
    shared: &Shared,
    session: &mut Session,
    engine: &Engine<AnyCodec>,
    ns: &str,
    rest: &[Request],
    locks: Option<&[&[u8]]>,
    replies: &mut Vec<(Reply, Shape)>,
) -> usize {
    let first_reply = replies.len();
    let mut size = 0;
    let access = Access::Held(engine, ns);
    let Some(keys) = locks else {
        // Reads only: nothing to commit; each runs under its own locks.
        for (i, r) in rest.iter().enumerate() {
            let reply = run_one(shared, session, &access, r);
            replies.push(reply);
            if closes_part(shared, session, replies, &mut size) {
                return i + 1;
            }
        }
        return rest.len();
    };
    let wrote = session.wrote;
    session.ready_keys = Some(Vec::new());
    let held = HeldFeed::start();
    let mut ran = rest.len();
    let committed = engine.atomically_on(
        keys,
        |_| {
            for (i, r) in rest.iter().enumerate() {
                let reply = run_one(shared, session, &access, r);
                replies.push(reply);
                if closes_part(shared, session, replies, &mut size) {
                    ran = i + 1;
                    break;
                }
            }
        },
        || shared.repl.core().feed_held(HeldFeed::take()),
    );
    drop(held);
    settle(
        shared,
        session,
        engine,
        ns,
        committed,
        &mut replies[first_reply..],
        wrote,
    );
    ran
}

/// After a group's commit: on success the clients blocked on the keys
/// the group made ready are served; on failure every reply of the group
/// (`replies`) becomes the store's error and `session.wrote` goes back to
/// `wrote`.
fn settle(
    shared: &Shared,
    session: &mut Session,
    engine: &Engine<AnyCodec>,
    ns: &str,
    committed: Result<(), redcodec_engine::EngineError>,
    replies: &mut [(Reply, Shape)],
    wrote: bool,
) {
    let ready = session.ready_keys.take().unwrap_or_default();
    match committed {
        Ok(()) => {
            let ready: Vec<&[u8]> = ready.iter().map(Vec::as_slice).collect();
            shared.waiters.serve(engine, &shared.watch, ns, &ready);
        }
        Err(e) => {
            let text = redcodec_engine::CmdError::Engine(e).to_string();
            for reply in replies {
                reply.0 = Reply::error(text.clone());
            }
            session.wrote = wrote;
        }
    }
}

/// Runs EVAL scripts from `requests[start]` as one part in a lane
/// ([`crate::script_lane`]), holding the keys they declare; returns
/// where the next part starts. `None`: the part did not run (not every
/// request is an EVAL script, no lane is free, or a script gave up its
/// lane and the part was abandoned) and must run holding the engine
/// whole.
async fn run_scripts_in_lane(
    shared: &Shared,
    session: &mut Session,
    requests: &[Request],
    start: usize,
    replies: &mut Vec<(Reply, Shape)>,
) -> Option<usize> {
    let rest = &requests[start..];
    let in_lane = |r: &Request| {
        script_lane::runs_in_lane(r.spec)
            && !script_lane::known_stray(&shared.scripts, r.spec, &r.args)
    };
    if !rest.iter().all(in_lane) {
        return None;
    }
    let keys = keys_of(rest);
    let _admitted = shared.admission.admit(&keys).await;
    let ns = session.namespace.clone();
    let engine = shared.engines.shared(&ns).ok()?;
    let lane = LaneGroup::install(&shared.scripts, &keys)?;
    let first_reply = replies.len();
    let mut size = 0;
    let access = Access::Held(&engine, &ns);
    let wrote = session.wrote;
    session.ready_keys = Some(Vec::new());
    let held = HeldFeed::start();
    let lines = crate::monitor::HeldLines::start();
    let mut next = requests.len();
    let committed = engine.atomically_on_or_abandon(
        &keys,
        |_| {
            for (i, r) in rest.iter().enumerate() {
                let mark = HeldFeed::len();
                replies.push(run_one(shared, session, &access, r));
                if script_lane::gave_up() {
                    return Err(());
                }
                HeldFeed::wrap_since(mark);
                if closes_part(shared, session, replies, &mut size) {
                    next = start + i + 1;
                    break;
                }
            }
            Ok(())
        },
        || shared.repl.core().feed_held(HeldFeed::take()),
    );
    drop(held);
    drop(lane);
    let committed = match committed {
        Ok(Ok(())) => Ok(()),
        Ok(Err(())) => {
            // Abandoned: nothing of it was written or sent (nor shown
            // to monitors: `lines` drops them).
            replies.truncate(first_reply);
            session.ready_keys = None;
            session.wrote = wrote;
            return None;
        }
        Err(e) => Err(e),
    };
    // Its commands ran (a failed commit included): shown as they ran.
    lines.release(shared);
    settle(
        shared,
        session,
        &engine,
        &ns,
        committed,
        &mut replies[first_reply..],
        wrote,
    );
    Some(next)
}

/// Runs scripts from `requests[start]` as one part, the engine held as
/// one script holds it (see the module docs); returns where the next
/// part starts.
fn run_scripts(
    shared: &Shared,
    session: &mut Session,
    requests: &[Request],
    start: usize,
    replies: &mut Vec<(Reply, Shape)>,
) -> usize {
    let ns = session.namespace.clone();
    let run = |guard: Result<EngineGuard<'_>, Reply>| {
        let guard = match guard {
            Ok(guard) => guard,
            Err(e) => {
                refuse_all(shared, &requests[start..], e, replies);
                return requests.len();
            }
        };
        let Some(engine) = guard.engine() else {
            let e = Reply::error("ERR the server is shutting down");
            refuse_all(shared, &requests[start..], e, replies);
            return requests.len();
        };
        run_script_part(shared, session, engine, &ns, requests, start, replies)
    };
    // As a script alone runs.
    script_worker::exclusively(&shared.engines, &ns, run)
}

/// Runs the scripts `requests[start..]` as one group, the engine held,
/// until one closes it; returns where the next group starts.
fn run_script_part(
    shared: &Shared,
    session: &mut Session,
    engine: &Engine<AnyCodec>,
    ns: &str,
    requests: &[Request],
    start: usize,
    replies: &mut Vec<(Reply, Shape)>,
) -> usize {
    let first_reply = replies.len();
    let mut size = 0;
    let access = Access::Held(engine, ns);
    let wrote = session.wrote;
    session.ready_keys = Some(Vec::new());
    let held = HeldFeed::start();
    let mut next = requests.len();
    let committed = engine.atomically(|_| {
        for (i, r) in requests[start..].iter().enumerate() {
            let mark = HeldFeed::len();
            replies.push(run_one(shared, session, &access, r));
            HeldFeed::wrap_since(mark);
            if closes_part(shared, session, replies, &mut size) {
                next = start + i + 1;
                break;
            }
        }
    });
    // Nothing else runs while the engine is held: the stream gets the
    // group's writes in the order they applied.
    let feed = HeldFeed::take();
    drop(held);
    if committed.is_ok() {
        shared.repl.core().feed_held(feed);
    }
    settle(
        shared,
        session,
        engine,
        ns,
        committed,
        &mut replies[first_reply..],
        wrote,
    );
    next
}

/// One command of a group: the client loop's checks, then the command,
/// counted in INFO commandstats.
fn run_one(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    request: &Request,
) -> (Reply, Shape) {
    let Request { spec, args } = request;
    // One reading of the clock: the client's last activity and the
    // command's start.
    let started = Instant::now();
    {
        let mut live = session.info.live.lock();
        live.last_cmd.clear();
        live.last_cmd.push_str(spec.name);
        live.last_seen = started;
    }
    let shape = spec.shape(args);
    // Known, and of the right arity: checked when it joined.
    let refused = crate::scripting::busy_gate(shared, session, spec, args)
        .or_else(|| crate::replica::gate(shared, session, spec, args));
    if let Some(e) = refused {
        shared.command_stats.rejected(spec.name, args);
        return (e, shape);
    }
    let reply = run_spec(shared, session, access, spec, args);
    if script_lane::gave_up() {
        // Abandoned, to run again: counted then.
        return (reply, shape);
    }
    let failed = reply.is_error();
    let took = started.elapsed();
    spec.ran(shared, &session.info, args, took, failed);
    (reply, shape)
}
