//! Running a command: the server's own at once, every other on the
//! engine, WATCH counters bumped and blocked clients served after a
//! write, shown to the monitors.

use bytes::Bytes;
use std::sync::atomic::Ordering;

use redcodec_engine::internals::dispatch::Keys;
use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use super::blocking;
use crate::access::Access;
use crate::command_spec::{Run, Spec};
use crate::command_table;
use crate::session::Session;
use crate::state::Shared;

/// Runs a command on the engine; after a write, bumps the WATCH counters
/// of its keys and serves clients blocked on them.
pub fn run_engine(
    shared: &Shared,
    session: &mut Session,
    engine: &Engine<AnyCodec>,
    args: &[Bytes],
) -> Reply {
    match command_table::get(&args[0]) {
        Some(spec) => run_engine_spec(shared, session, engine, spec, args),
        None => engine.execute(args),
    }
}

/// [`run_engine`] for a resolved command.
pub fn run_engine_spec(
    shared: &Shared,
    session: &mut Session,
    engine: &Engine<AnyCodec>,
    spec: &Spec,
    args: &[Bytes],
) -> Reply {
    // FLUSHALL / FLUSHDB touch the watched keys that existed, as Redis
    // does (a key created meanwhile was touched by its creator).
    let flushed: Vec<Vec<u8>> = if spec.keys == Keys::Everything {
        let ns = session.namespace.as_str();
        let watched = shared.watch.watched_in(ns);
        watched
            .into_iter()
            .filter(|key| engine.execute(&[b"exists".as_slice(), key]) == Reply::Integer(1))
            .collect()
    } else {
        Vec::new()
    };
    // CONFIG SET proto-max-bulk-len also bounds the strings commands make
    // (an engine reopened in another namespace starts at the default).
    let max_bulk_len = u64::try_from(shared.max_bulk_len.load(Ordering::Relaxed)).unwrap_or(0);
    if engine.max_bulk_len() != max_bulk_len {
        engine.set_max_bulk_len(max_bulk_len);
    }
    shared.repl.attach(shared, engine, &session.namespace);
    let (reply, unchanged) = match &spec.engine {
        Some(resolved) => engine.execute_resolved(spec.name, resolved, args),
        // Not an engine command: the engine's own reply (unknown).
        None => engine.execute_noting_unchanged(args),
    };
    if spec.changed(&reply, args, &unchanged) {
        session.wrote = true;
        shared.note_write();
        let mut keys = spec.keys_of(args);
        keys.retain(|key| !unchanged.iter().any(|u| u == key));
        keys.extend(flushed.iter().map(Vec::as_slice));
        let ns = session.namespace.as_str();
        shared.watch.touch(ns, &keys);
        match session.ready_keys.as_mut() {
            Some(ready) => ready.extend(keys.iter().map(|k| k.to_vec())),
            None => shared.waiters.serve(engine, &shared.watch, ns, &keys),
        }
    }
    reply
}

/// Runs a non-blocking command `args` (its name first, any case) by its
/// spec (see [`run_spec`]); an unknown one gets the engine's reply.
pub fn run_sync(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    args: &[Bytes],
) -> Reply {
    match command_table::get(&args[0]) {
        Some(spec) => run_spec(shared, session, access, spec, args),
        None => {
            let ns = session.namespace.clone();
            match access.with(&ns, |engine| engine.execute(args)) {
                Ok(reply) | Err(reply) => reply,
            }
        }
    }
}

/// Runs a resolved command at once (anything but EXEC, and the blocking
/// pops without blocking: inside a transaction or a script), shown to the
/// monitors ([`crate::monitor`]).
pub fn run_spec(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    spec: &Spec,
    args: &[Bytes],
) -> Reply {
    crate::monitor::around(shared, session, spec, args, |session| {
        run_unmonitored(shared, session, access, spec, args)
    })
}

/// [`run_spec`] without the monitors.
fn run_unmonitored(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    spec: &Spec,
    args: &[Bytes],
) -> Reply {
    if let Some(container) = spec.container {
        if args.len() == 2 && args[1].eq_ignore_ascii_case(b"help") {
            return container.help_reply();
        }
    }
    match spec.run {
        Run::Server(handler) => return handler(shared, session, access, spec, args),
        Run::Blocking(pop) => return blocking::non_blocking(shared, session, access, pop, args),
        Run::Wait => return crate::master::wait_now(shared),
        // EXEC, PSYNC and SYNC reach the engine here, which does not
        // know them (as before the registry).
        Run::Engine | Run::Exec | Run::ReplicaSync(_) | Run::KvrocksMaster(_) => {}
    }
    run_in_namespace(shared, session, access, spec, args)
}

/// [`run_engine_spec`] on the engine of the connection's namespace.
pub fn run_in_namespace(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    spec: &Spec,
    args: &[Bytes],
) -> Reply {
    match access.engine(&session.namespace) {
        Ok(engine) => run_engine_spec(shared, session, &engine, spec, args),
        Err(reply) => reply,
    }
}
