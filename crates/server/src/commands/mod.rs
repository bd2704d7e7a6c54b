//! The commands the server answers itself, and the hand-over of every
//! other command to the engine.

pub mod blocking;
pub mod client;
pub mod command;
pub mod config_commands;
pub mod connection;
pub mod flags;
pub mod info;
pub mod memory;
mod object;
pub mod save;
pub mod subcommands;

use std::sync::atomic::Ordering;

use redcodec_engine::dispatch::{self, Keys};
use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use crate::engines::EngineSlot;
use crate::session::Session;
use crate::state::Shared;

/// The commands the server answers itself: lower-case name and Redis
/// arity (`-n`: at least n).
pub const SERVER_COMMANDS: &[(&str, i32)] = &[
    ("applybatch", -2),
    ("asking", 1),
    ("auth", -2),
    ("bgsave", -1),
    ("blmove", 6),
    ("blmpop", -5),
    ("blpop", -3),
    ("brpop", -3),
    ("brpoplpush", 4),
    ("bzmpop", -5),
    ("bzpopmax", -3),
    ("bzpopmin", -3),
    ("client", -2),
    ("cluster", -2),
    ("clusterx", -2),
    ("command", -1),
    ("config", -2),
    ("discard", 1),
    ("eval", -3),
    ("eval_ro", -3),
    ("evalsha", -3),
    ("evalsha_ro", -3),
    ("exec", 1),
    ("fcall", -3),
    ("fcall_ro", -3),
    ("function", -2),
    ("hello", -1),
    ("info", -1),
    ("lastsave", 1),
    ("memory", -2),
    ("multi", 1),
    ("object", -2),
    ("psync", -3),
    ("quit", -1),
    ("readonly", 1),
    ("readwrite", 1),
    ("replconf", -1),
    ("replicaof", 3),
    ("reset", 1),
    ("save", 1),
    ("script", -2),
    ("select", 2),
    ("shutdown", -1),
    ("slaveof", 3),
    ("sync", 1),
    ("time", 1),
    ("unwatch", 1),
    ("wait", 3),
    ("watch", -2),
];

/// The server commands Redis refuses inside MULTI (`Command not allowed
/// inside a transaction`; EXEC then aborts).
pub const NO_MULTI: &[&str] = &["save", "shutdown", "psync", "sync", "applybatch"];

/// The arity of the server command named `name` (lower-case).
pub fn server_command(name: &str) -> Option<i32> {
    SERVER_COMMANDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, arity)| *arity)
}

/// Whether `argc` arguments fit `arity`.
pub fn arity_ok(arity: i32, argc: usize) -> bool {
    let argc = argc as i32;
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}

/// Checks a command before running or queueing it, as Redis 7.0 does:
/// unknown command, unknown subcommand of a container, wrong arity (of
/// the subcommand, when there is one), with Redis' texts.
pub fn check(shared: &Shared, name: &str, args: &[Vec<u8>]) -> Result<(), Reply> {
    if let (Some(container), true) = (subcommands::container(name), args.len() > 1) {
        return subcommands::check(container, args);
    }
    let arity = match server_command(name) {
        Some(arity) => arity,
        None => match shared.commands.get(args[0].as_slice()) {
            Some((_, spec)) => spec.arity,
            None => {
                let argv: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                return Err(Reply::Error(dispatch::unknown_command(&argv).to_string()));
            }
        },
    };
    if !arity_ok(arity, args.len()) {
        return Err(Reply::error(format!(
            "ERR wrong number of arguments for '{name}' command"
        )));
    }
    Ok(())
}

/// How a command reaches the engine: through the shared slot, or
/// through an engine already held exclusively (inside EXEC).
pub enum Access<'a> {
    /// Take the engine shared for this command.
    Shared(&'a EngineSlot),
    /// The engine EXEC holds, and its namespace.
    Held(&'a Engine<AnyCodec>, &'a str),
}

impl Access<'_> {
    /// Runs `f` with the engine in `namespace`.
    pub fn with<R>(
        &self,
        namespace: &str,
        f: impl FnOnce(&Engine<AnyCodec>) -> R,
    ) -> Result<R, Reply> {
        match self {
            Access::Shared(slot) => {
                let engine = slot.shared(namespace)?;
                Ok(f(&engine))
            }
            Access::Held(engine, held) if *held == namespace => Ok(f(engine)),
            Access::Held(..) => Err(Reply::error(
                "ERR a transaction cannot change namespace after SELECT or AUTH",
            )),
        }
    }
}

/// Runs a command on the engine; after a write, bumps the WATCH counters
/// of its keys and serves clients blocked on them.
pub fn run_engine(
    shared: &Shared,
    session: &mut Session,
    engine: &Engine<AnyCodec>,
    name: &str,
    args: &[Vec<u8>],
) -> Reply {
    // FLUSHALL / FLUSHDB touch the watched keys that existed, as Redis
    // does (a key created meanwhile was touched by its creator).
    let flush = shared
        .commands
        .get(args[0].as_slice())
        .is_some_and(|(_, spec)| spec.keys == Keys::Everything);
    let flushed: Vec<Vec<u8>> = if flush {
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
    let (reply, unchanged) = engine.execute_noting_unchanged(args);
    if flags::is_write(name) && flags::may_have_changed(name, &reply) {
        session.wrote = true;
        shared.note_write();
        if let Some((_, spec)) = shared.commands.get(args[0].as_slice()) {
            let argv: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            let mut keys = spec.keys.of(&argv);
            keys.retain(|key| !unchanged.iter().any(|u| u == key));
            keys.extend(flushed.iter().map(Vec::as_slice));
            let ns = session.namespace.as_str();
            shared.watch.touch(ns, &keys);
            match session.ready_keys.as_mut() {
                Some(ready) => ready.extend(keys.iter().map(|k| k.to_vec())),
                None => shared.waiters.serve(engine, &shared.watch, ns, &keys),
            }
        }
    }
    reply
}

/// Runs a non-blocking command (anything but EXEC and the blocking pops
/// outside a transaction).
pub fn run_sync(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    name: &str,
    args: &[Vec<u8>],
) -> Reply {
    if let Some(container) = subcommands::container(name) {
        if args.len() == 2 && args[1].eq_ignore_ascii_case(b"help") {
            return container.help_reply();
        }
    }
    let reply = match name {
        "ping" => connection::ping(session, args),
        "echo" => Some(Reply::Bulk(args[1].clone())),
        "hello" => Some(connection::hello(shared, session, args)),
        "auth" => Some(connection::auth(shared, session, args)),
        "select" => Some(connection::select(shared, session, args)),
        "quit" => {
            session.close = true;
            Some(Reply::ok())
        }
        "reset" => Some(connection::reset(shared, session)),
        "replicaof" | "slaveof" => Some(crate::replica::replicaof(shared, args)),
        "time" => Some(connection::time()),
        "shutdown" => Some(connection::shutdown(shared, session, args)),
        "client" => Some(client::client(shared, session, args)),
        "cluster" => Some(crate::cluster::cluster_commands::cluster(
            shared, session, args,
        )),
        "clusterx" => Some(crate::cluster::cluster_commands::clusterx(
            shared, session, args,
        )),
        "applybatch" => Some(crate::cluster::apply_batch::apply_batch(
            shared, session, args,
        )),
        "asking" | "readonly" | "readwrite" => Some(crate::cluster::cluster_commands::link_flag(
            shared, session, name,
        )),
        "config" => Some(config_commands::config(shared, args)),
        "command" => Some(command::command(shared, args)),
        "info" => Some(info::info(shared, session, access, args)),
        "function" => Some(crate::scripting::function(shared, session, args)),
        "script" => Some(crate::scripting::script(shared, args)),
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" => {
            Some(crate::scripting::eval(shared, session, access, name, args))
        }
        "fcall" | "fcall_ro" => Some(crate::scripting::fcall(shared, session, access, name, args)),
        "save" => Some(save::save(shared, session, access)),
        "bgsave" => Some(save::bgsave(shared, access, args)),
        "lastsave" => Some(save::lastsave(shared)),
        "memory" => Some(memory::memory(session, access, args)),
        "object" => Some(object::object(shared, session, access, args)),
        "multi" => Some(session.multi(shared)),
        "replconf" => Some(crate::master::replconf(shared, session, args)),
        "wait" => Some(crate::master::wait_now(shared)),
        "discard" => Some(session.discard(shared)),
        "watch" => Some(session.watch(shared, access, args)),
        "unwatch" => Some(session.unwatch(shared)),
        "blpop" | "brpop" | "blmove" | "brpoplpush" | "bzpopmin" | "bzpopmax" | "blmpop"
        | "bzmpop" => Some(blocking::non_blocking(shared, session, access, name, args)),
        _ => None,
    };
    if let Some(reply) = reply {
        return reply;
    }
    let ns = session.namespace.clone();
    match access.with(&ns, |engine| {
        run_engine(shared, session, engine, name, args)
    }) {
        Ok(reply) | Err(reply) => reply,
    }
}
