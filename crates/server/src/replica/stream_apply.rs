//! Applying a master's stream: one command of the master's through the
//! same path clients' commands take, the master's SELECT, and the WAL
//! synced before an acknowledgement with `--sync always`.
//!
//! Consecutive keyed writes already read from the link are applied as a
//! group (`gather`, `apply_group`): one store write for all of them,
//! as a client's pipeline is committed ([`crate::group_commit`]), so that
//! the replica keeps up with a master that takes pipelined writes.

use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use redcodec_engine::{Engine, ExpiryPin, Reply};
use redcodec_formats::AnyCodec;

use super::link_error::LinkError;
use super::load::{namespace_of, SKIPPED_DB};
use crate::access::Access;
use crate::command_roles::InStream;
use crate::command_spec::{Run, Spec};
use crate::config::SyncPolicy;
use crate::frame::{frame, Limits};
use crate::held_feed::HeldFeed;
use crate::session::{Answer, Session};
use crate::state::Shared;
use crate::{command_table, runner};

/// The most commands of the stream in one group.
const MAX_GROUP: usize = 256;

/// The most argument bytes in one group.
const MAX_GROUP_BYTES: usize = 1024 * 1024;

/// One command of a group: its spec, its arguments and the bytes it took
/// in the stream.
struct Grouped {
    spec: &'static Spec,
    args: Vec<Bytes>,
    used: usize,
}

/// Consecutive commands of the stream applied as one store write.
pub(crate) struct Group {
    commands: Vec<Grouped>,
}

impl Group {
    /// The bytes the group's first `n` commands took in the stream.
    fn bytes(&self, n: usize) -> usize {
        self.commands[..n].iter().map(|c| c.used).sum()
    }
}

/// Why a group stopped before its end: the command the engine refused
/// (see [`apply`]), its error, and the stream's bytes of the commands
/// before it, which were applied.
pub(crate) struct GroupRefused {
    pub command: String,
    pub error: String,
    pub applied_bytes: usize,
}

/// The group `first` (which took `used` bytes of the stream) starts:
/// `first` and the commands after it in `buf` that join it, taken out of
/// `buf`; or `Err(first)` when it is applied alone. No group forms
/// inside MULTI, in a database the format cannot hold, or in cluster
/// mode (as a client's pipeline does not group there).
pub(crate) fn gather(
    shared: &Shared,
    session: &Session,
    first: Vec<Bytes>,
    used: usize,
    buf: &mut BytesMut,
    limits: &Limits,
) -> Result<Group, Vec<Bytes>> {
    // A command the stream maps (MOVE, COPY … DB) runs alone, in `apply`.
    let Some(spec) = command_table::joining(&first[0], first.len())
        .filter(|spec| spec.in_stream == InStream::Apply)
    else {
        return Err(first);
    };
    if session.queued.is_some()
        || session.namespace == SKIPPED_DB
        || shared.cluster.enabled()
        || shared.client_pause.active()
    {
        return Err(first);
    }
    let mut bytes: usize = first.iter().map(Bytes::len).sum();
    let mut commands = vec![Grouped {
        spec,
        args: first,
        used,
    }];
    while commands.len() < MAX_GROUP && bytes < MAX_GROUP_BYTES {
        let Ok(Some(next)) = frame(buf, limits) else {
            break;
        };
        let (used, name) = (next.used(), next.name(buf));
        let last = commands.last().expect("the first command").spec;
        let Some(spec) = name
            .and_then(|name| command_table::get_after(last, name))
            .filter(|spec| spec.groups(next.len()) && spec.in_stream == InStream::Apply)
        else {
            break;
        };
        let request = next.take(buf);
        bytes += request.args.iter().map(Bytes::len).sum::<usize>();
        commands.push(Grouped {
            spec,
            args: request.args,
            used,
        });
    }
    if commands.len() == 1 {
        return Err(commands.pop().expect("one command").args);
    }
    Ok(Group { commands })
}

/// Where a command's keys live, for splitting a group into parts that
/// each commit as one atomic write ([`Engine::key_instance`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Home {
    /// The store is one instance, or keeps a key in its type's: the
    /// whole group commits as one atomic write.
    Anywhere,
    /// Every key in this instance of several.
    Instance(usize),
    /// Keys in several instances: the command is a part of its own.
    Several,
}

/// Where the keys of `command` live.
fn home(engine: &Engine<AnyCodec>, command: &Grouped) -> Home {
    let mut instances = command
        .spec
        .keys_of(&command.args)
        .into_iter()
        .map(|key| engine.key_instance(key));
    match instances.next().flatten() {
        None => Home::Anywhere,
        Some(first) if instances.all(|i| i == Some(first)) => Home::Instance(first),
        Some(_) => Home::Several,
    }
}

/// Applies `group`, holding every key it names, as one store write, or,
/// on a store of several instances that keeps each key in one (floyd),
/// as one store write per run of commands on one instance: each is
/// atomic, so that what is applied is always a prefix of the group (a
/// write per instance, not atomic together, could keep a later command
/// and lose an earlier one on a full disk). Returns the stream's bytes of
/// its commands, all applied. A command the engine refuses stops the
/// group there, as [`apply`] stops the link: the commands before it are
/// applied, it and those after are not; so does a store write that
/// fails, at the first command of its part (or after the part, when the
/// store completes it: a write between instances that failed after the
/// first).
pub(crate) fn apply_group(
    shared: &Arc<Shared>,
    session: &mut Session,
    group: &Group,
) -> Result<usize, GroupRefused> {
    // The master's commands see every key it sent alive ([`apply`]).
    let _never = ExpiryPin::never();
    let ns = session.namespace.clone();
    // `at`: the first command not applied (past the last when a failed
    // write is completed whole, which names the last).
    let refuse = |at: usize, error: String| GroupRefused {
        command: group.commands[at.min(group.commands.len() - 1)]
            .spec
            .name
            .to_string(),
        error,
        applied_bytes: group.bytes(at),
    };
    let engine = shared
        .engines
        .shared(&ns)
        .map_err(|reply| refuse(0, reply.to_string()))?;
    let homes: Vec<Home> = group.commands.iter().map(|c| home(&engine, c)).collect();
    let mut start = 0;
    while start < group.commands.len() {
        let mut end = start + 1;
        if homes[start] != Home::Several {
            while end < group.commands.len() && homes[end] == homes[start] {
                end += 1;
            }
        }
        apply_part(shared, session, &engine, &ns, &group.commands[start..end])
            .map_err(|(at, error)| refuse(start + at, error))?;
        start = end;
    }
    Ok(group.bytes(group.commands.len()))
}

/// Applies `part` as one group of the engine ([`Engine::atomically_on`]);
/// on a refusal, or a failed store write, the index of the first command
/// not applied and the error.
fn apply_part(
    shared: &Arc<Shared>,
    session: &mut Session,
    engine: &Engine<AnyCodec>,
    ns: &str,
    part: &[Grouped],
) -> Result<(), (usize, String)> {
    let keys = Spec::keys_of_each(part.iter().map(|c| (c.spec, c.args.as_slice())));
    let access = Access::Held(engine, ns);
    let wrote = session.wrote;
    session.ready_keys = Some(Vec::new());
    let held = HeldFeed::start();
    let owed = engine.store().completions_owed();
    let mut refused = None;
    let committed = engine.atomically_on(
        &keys,
        |_| {
            for (at, c) in part.iter().enumerate() {
                let started = Instant::now();
                let reply = (runner::path().run_spec)(shared, session, &access, c.spec, &c.args);
                let failed = reply.is_error();
                shared
                    .command_stats
                    .ran(c.spec.name, &c.args, started.elapsed(), failed);
                if let Reply::Error(e) = reply {
                    refused = Some((at, e));
                    break;
                }
            }
        },
        || shared.repl.core().feed_held(HeldFeed::take()),
    );
    drop(held);
    let ready = session.ready_keys.take().unwrap_or_default();
    if let Err(e) = committed {
        let error = redcodec_engine::CmdError::Engine(e).to_string();
        if engine.store().completions_owed() > owed {
            // It failed between instances, after the first: the store
            // completes it before any later read or write (its intent
            // record), so all of it is applied; the link stops after it.
            // (An intent an earlier write left is no sign: this write
            // then failed completing it, before writing anything.)
            return Err((part.len(), error));
        }
        session.wrote = wrote;
        return Err((0, error));
    }
    let ready: Vec<&[u8]> = ready.iter().map(Vec::as_slice).collect();
    shared.waiters.serve(engine, &shared.watch, ns, &ready);
    refused.map_or(Ok(()), Err)
}

/// Whether a command of the master's (`None`: one unknown here) may
/// change the store: everything but what only moves the offset or the
/// stream's state.
pub(crate) fn changes_store(spec: Option<&Spec>) -> bool {
    spec.is_none_or(|spec| match spec.in_stream {
        InStream::Apply | InStream::NamespaceTokens | InStream::MoveDb | InStream::CopyDb => true,
        InStream::Transaction => matches!(spec.run, Run::Exec),
        InStream::Skip | InStream::SelectDb | InStream::Replconf => false,
    })
}

/// The master's SELECT: the database maps to a namespace as a client's
/// SELECT maps it ([`namespace_of`]); a database the format cannot hold
/// leaves the session in no namespace, and its writes are skipped.
pub(crate) fn select_db(shared: &Shared, session: &mut Session, db: u64) {
    session.set_db(i64::try_from(db).unwrap_or(i64::MAX));
    match namespace_of(shared, db) {
        Some(ns) => session.namespace = ns,
        None => {
            if !shared
                .replica
                .warned_skipped_db
                .swap(true, Ordering::SeqCst)
            {
                eprintln!("redcodec serve: replication: this format holds database 0 only; the master's writes to database {db} (and any other but 0) are skipped");
            }
            session.namespace = SKIPPED_DB.to_string();
        }
    }
}

/// A command of the master's that failed here ([`apply`]).
#[derive(Debug)]
pub(crate) struct Refused {
    /// The error it got.
    pub error: String,
    /// Whether it counts as applied nonetheless: a write between
    /// instances that failed after its first, which the store completes
    /// before any later read or write (its intent record). Otherwise the
    /// store is unchanged by it.
    pub applied: bool,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.error)
    }
}

/// Runs one command of the master's (its reply goes nowhere; an error is
/// reported on stderr).
///
/// A command the engine has but refuses (a value out of the format's
/// range, a key of another type: the data here no longer matches the
/// master's) is returned as [`Refused`], the store unchanged by it (or,
/// when a write failed between instances, completed: see
/// [`Refused::applied`]): the link stops before it (after it). A command
/// the engine does not have is reported and passed over, and so is a
/// refusal inside a transaction (its other commands ran).
pub(crate) fn apply(
    shared: &Arc<Shared>,
    session: &mut Session,
    mut spec: Option<&'static Spec>,
    mut args: Vec<Bytes>,
) -> Result<(), Refused> {
    // As a Redis replica, this one judges no key expired for its master's
    // commands: the master deletes its keys when they expire and says so
    // (a `DEL` in the stream), and what it wrote before then applies here
    // however late, where the replica's clock may have passed the expiry.
    let _never = ExpiryPin::never();
    let started = Instant::now();
    let name = command_name(spec, &args);
    let in_stream = spec.map_or(InStream::Apply, |spec| spec.in_stream);
    match in_stream {
        InStream::Skip | InStream::Replconf => return Ok(()),
        InStream::SelectDb => {
            let db = std::str::from_utf8(&args[1])
                .ok()
                .and_then(|d| d.parse::<u64>().ok());
            match db {
                Some(db) => select_db(shared, session, db),
                None => report(
                    &name,
                    &Reply::error("ERR value is not an integer or out of range"),
                ),
            }
            return Ok(());
        }
        InStream::NamespaceTokens => {
            if let Err(e) = crate::namespace_replication::apply_from_stream(shared, &args) {
                report(&name, &Reply::Error(e));
            }
            return Ok(());
        }
        InStream::MoveDb | InStream::CopyDb if session.queued.is_none() => {
            match super::across_databases::map(shared, session, in_stream, args) {
                Some(mapped) => {
                    spec = command_table::get(&mapped[0]);
                    args = mapped;
                }
                None => return Ok(()),
            }
        }
        InStream::Apply | InStream::Transaction | InStream::MoveDb | InStream::CopyDb => {}
    }
    if session.namespace == SKIPPED_DB {
        return Ok(());
    }
    let transaction = in_stream == InStream::Transaction;
    if session.queued.is_some() && !transaction {
        (runner::path().queue)(session, args);
        return Ok(());
    }
    // Writes the store will complete, before the command and after.
    let ns = session.namespace.clone();
    let owed = || {
        shared
            .engines
            .shared(&ns)
            .map_or(0, |engine| engine.store().completions_owed())
    };
    let owed_before = owed();
    let access = Access::Shared(&shared.engines);
    let reply = match spec {
        Some(spec) => match spec.run {
            Run::Exec => match (runner::path().exec)(shared, session) {
                Answer::One(r) => r,
                Answer::Exec(replies) => {
                    for (r, _) in &replies {
                        report(spec.name, r);
                    }
                    Reply::ok()
                }
            },
            // MULTI and DISCARD, unseen by monitors.
            Run::Server(handler) if transaction => handler(shared, session, &access, spec, &args),
            _ => (runner::path().run_spec)(shared, session, &access, spec, &args),
        },
        None => (runner::path().run_sync)(shared, session, &access, &args),
    };
    let failed = reply.is_error();
    shared
        .command_stats
        .ran(&name, &args, started.elapsed(), failed);
    match reply {
        Reply::Error(error) if error.starts_with("ERR unknown command") => {
            // Not applied, and counted where the operator looks (INFO
            // replication, `migrate --follow`); named on stderr once.
            if shared.replica.note_unknown(&name) {
                eprintln!("redcodec serve: replication: the master's {name} is not a command here: not applied (its keys now differ from the master's; counted in INFO replication's unknown_master_commands)");
            }
            Ok(())
        }
        Reply::Error(error) if !transaction => Err(Refused {
            error,
            applied: owed() > owed_before,
        }),
        reply => {
            report(&name, &reply);
            Ok(())
        }
    }
}

/// The lower-case name of a command of the master's, for reports.
pub(crate) fn command_name(spec: Option<&'static Spec>, args: &[Bytes]) -> Cow<'static, str> {
    match spec {
        Some(spec) => Cow::Borrowed(spec.name),
        None => Cow::Owned(String::from_utf8_lossy(&args[0]).to_ascii_lowercase()),
    }
}

/// Reports an error a master's command got here.
fn report(name: &str, reply: &Reply) {
    if let Reply::Error(e) = reply {
        eprintln!("redcodec serve: replication: the master's {name} failed here: {e}");
    }
}

/// With `--sync always`, syncs the write-ahead log once a batch of the
/// stream wrote something (before it is acknowledged).
pub(crate) fn sync_if_always(shared: &Shared, session: &mut Session) -> Result<(), LinkError> {
    if session.wrote && shared.config.sync == SyncPolicy::Always {
        session.wrote = false;
        shared
            .engines
            .sync_wal()
            .map_err(|e| LinkError::Protocol(format!("the WAL sync failed: {e}")))?;
    }
    Ok(())
}
