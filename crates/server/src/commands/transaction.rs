//! MULTI's queue and EXEC: the commands a transaction queued, run with
//! the engine held exclusively.

use bytes::Bytes;
use std::time::Instant;

use redcodec_engine::Reply;

use super::registry::{self, Spec};
use super::run::{run_spec, run_sync};
use crate::access::Access;
use crate::reply::{Protocol, Shape};
use crate::session::{exists, Answer, Queued, Session};
use crate::state::Shared;

/// Queues a command inside MULTI (looked up in the registry).
pub fn queue(session: &mut Session, args: Vec<Bytes>) -> Reply {
    let spec = registry::get(&args[0]);
    queue_resolved(session, spec, args)
}

/// Queues a command inside MULTI, already resolved.
pub fn queue_resolved(
    session: &mut Session,
    spec: Option<&'static Spec>,
    args: Vec<Bytes>,
) -> Reply {
    if let Some(q) = session.queued.as_mut() {
        q.push(Queued {
            spec: spec.map(|spec| spec.id),
            args,
        });
        session.info.live.lock().multi = Some(q.len());
    }
    Reply::Status("QUEUED".into())
}

/// EXEC: every queued command with the engine held exclusively (each
/// counted in INFO commandstats as it runs), or a null reply when a
/// watched key changed.
pub fn exec(shared: &Shared, session: &mut Session) -> Answer {
    let Some(queued) = session.queued.take() else {
        return Answer::One(Reply::error("ERR EXEC without MULTI"));
    };
    session.info.live.lock().multi = None;
    if std::mem::take(&mut session.queue_failed) {
        session.unwatch(shared);
        return Answer::One(Reply::error(
            "EXECABORT Transaction discarded because of previous errors.",
        ));
    }
    let ns = session.namespace.clone();
    let guard = match shared.engines.exclusive(&ns) {
        Ok(g) => g,
        Err(e) => return Answer::One(e),
    };
    let Some(engine) = guard.engine() else {
        return Answer::One(Reply::error("ERR the server is shutting down"));
    };
    let access = Access::Held(engine, &ns);
    let changed = session.watched.iter().any(|(k, v, existed)| {
        shared.watch.version(k) != *v || (*existed && k.0 == ns && !exists(&access, &ns, &k.1))
    });
    session.unwatch(shared);
    if changed {
        return Answer::One(Reply::NilArray);
    }
    let mut replies = Vec::with_capacity(queued.len());
    session.ready_keys = Some(Vec::new());
    shared.repl.begin_transaction();
    // One store write for the whole transaction (crash-atomic).
    let wrote = session.wrote;
    let committed = engine.atomically(|_| {
        for Queued { spec, args } in &queued {
            // A client's commands were checked when queued; a
            // replica's stream queues what its master sent.
            let spec = spec.map(registry::by_id);
            let started = Instant::now();
            let reply = match spec {
                Some(spec) => run_spec(shared, session, &access, spec, args),
                None => run_sync(shared, session, &access, args),
            };
            let failed = reply.is_error();
            let took = started.elapsed();
            match spec {
                Some(spec) => spec.ran(shared, &session.info, args, took, failed),
                // An unknown command counts in the total only.
                None => shared.command_stats.ran("", args, took, failed),
            }
            let shape = match (session.protocol, spec) {
                (Protocol::Resp3, Some(spec)) => spec.shape(args),
                _ => Shape::Plain,
            };
            replies.push((reply, shape));
        }
    });
    if let Err(e) = committed {
        let text = redcodec_engine::CmdError::Engine(e).to_string();
        for reply in &mut replies {
            reply.0 = Reply::error(text.clone());
        }
        session.wrote = wrote;
        shared.repl.discard_transaction();
    }
    shared.repl.end_transaction();
    let ready = session.ready_keys.take().unwrap_or_default();
    let ready: Vec<&[u8]> = ready.iter().map(Vec::as_slice).collect();
    shared.waiters.serve(engine, &shared.watch, &ns, &ready);
    Answer::Exec(replies)
}
