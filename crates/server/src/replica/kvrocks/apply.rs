//! The stream of a Kvrocks master: one bulk string per RocksDB write batch
//! (`ping` to check the link), each read as Redis commands
//! ([`redcodec_kvrocks::changes::decode`]) and run through the path
//! clients' commands take (WATCH and blocked clients see them), one
//! MULTI/EXEC per namespace a batch touches. A batch out of sequence or
//! that does not decode ends the link (the next one resumes from the last
//! batch applied).

use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use redcodec_engine::Reply;
use redcodec_kvrocks::changes::{self, Change, Changes};

use super::copy::flush_everything;
use super::kvrocks_conn::Conn;
use super::kvrocks_resume::{set_resume, Resume};
use super::namespace_dest::destination;
use crate::access::Access;
use crate::namespace_replication;
use crate::replica::link_error::LinkError;
use crate::runner;
use crate::session::{Answer, Session};
use crate::state::Shared;

/// Keys left out reported on stderr before only counts are.
const REPORTED: u64 = 20;

/// Applies batches until the link breaks.
pub async fn run(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    session: &mut Session,
    mut resume: Resume,
) -> Result<(), LinkError> {
    let mut reported: u64 = 0;
    loop {
        let body = conn.bulk().await?.map_err(|line| {
            LinkError::Protocol(format!(
                "the Kvrocks master sent '{line}' instead of a write batch"
            ))
        })?;
        shared.replica.state.lock().last_io = Some(Instant::now());
        if body == b"ping" {
            continue;
        }
        let changes = changes::decode(&body, resume.cluster).map_err(|e| {
            LinkError::Protocol(format!(
                "a write batch from the Kvrocks master does not decode: {e}"
            ))
        })?;
        if changes.sequence != resume.next_sequence {
            return Err(LinkError::Protocol(format!(
                "the Kvrocks master sent the batch of sequence {} where {} was due",
                changes.sequence, resume.next_sequence
            )));
        }
        // Applied and counted as one step, unless a REPLICAOF came first
        // (see `Replica::step`).
        let stepped = shared.replica.step(|| -> Result<(), LinkError> {
            // Errors are reported on stderr; the stream goes on, as
            // Kvrocks' replicas do.
            let _ = apply(shared, session, &changes, &mut reported);
            if let Some(json) = &changes.namespace_tokens {
                // Kvrocks' replica loads the tokens of such a batch.
                namespace_replication::learn_json(shared, Some(json));
            }
            crate::replica::stream_apply::sync_if_always(shared, session)?;
            resume.next_sequence = changes.next_sequence;
            set_resume(shared, Some(resume.clone()));
            let mut st = shared.replica.state.lock();
            st.offset = i64::try_from(changes.next_sequence - 1).unwrap_or(i64::MAX);
            st.read_offset = st.offset;
            if !changes.changes.is_empty() {
                st.last_write = Some(Instant::now());
            }
            Ok(())
        });
        stepped.ok_or(LinkError::Killed)??;
        if session.info.killed.load(Ordering::SeqCst) {
            return Err(LinkError::Killed);
        }
    }
}

/// Runs one batch's changes; the first error a change got here, if any
/// (each is also reported on stderr).
pub fn apply(
    shared: &Shared,
    session: &mut Session,
    changes: &Changes,
    reported: &mut u64,
) -> Option<Reply> {
    // The master's changes see every key alive, as its commands do on a
    // replica of a Redis master (`stream_apply::apply`).
    let _never = redcodec_engine::ExpiryPin::never();
    for s in &changes.skipped {
        if *reported < REPORTED {
            eprintln!(
                "redcodec serve: replication: key '{}' of the Kvrocks master's namespace '{}': {}",
                String::from_utf8_lossy(&s.key),
                String::from_utf8_lossy(&s.namespace),
                s.reason
            );
        }
        *reported += 1;
    }
    let mut first_error = None;
    let mut note = |error: Option<Reply>| {
        if first_error.is_none() {
            first_error = error;
        }
    };
    let mut group: Vec<Vec<Bytes>> = Vec::new();
    let mut group_ns: Option<&[u8]> = None;
    for change in &changes.changes {
        match change {
            Change::Command { namespace, args } => {
                if group_ns != Some(namespace.as_slice()) {
                    note(run_group(
                        shared,
                        session,
                        group_ns,
                        std::mem::take(&mut group),
                        reported,
                    ));
                    group_ns = Some(namespace);
                }
                group.push(crate::frame::args_of(args));
            }
            Change::FlushNamespace(ns) => {
                note(run_group(
                    shared,
                    session,
                    group_ns,
                    std::mem::take(&mut group),
                    reported,
                ));
                group_ns = None;
                if let Some(dest) = destination(shared, ns) {
                    session.namespace = dest;
                    note(run_one(shared, session, &[Bytes::from_static(b"flushdb")]));
                }
            }
            Change::FlushAll => {
                note(run_group(
                    shared,
                    session,
                    group_ns,
                    std::mem::take(&mut group),
                    reported,
                ));
                group_ns = None;
                if let Err(e) = flush_everything(shared, session) {
                    eprintln!("redcodec serve: replication: the Kvrocks master's FLUSHALL failed here: {e}");
                    note(Some(Reply::error(format!("ERR {e}"))));
                }
            }
        }
    }
    note(run_group(shared, session, group_ns, group, reported));
    first_error
}

/// Runs the commands of one namespace: alone, or in MULTI/EXEC.
fn run_group(
    shared: &Shared,
    session: &mut Session,
    namespace: Option<&[u8]>,
    commands: Vec<Vec<Bytes>>,
    reported: &mut u64,
) -> Option<Reply> {
    let namespace = namespace?;
    if commands.is_empty() {
        return None;
    }
    let Some(dest) = destination(shared, namespace) else {
        if *reported < REPORTED {
            eprintln!(
                "redcodec serve: replication: this format has one keyspace: the Kvrocks master's writes to namespace '{}' are skipped",
                String::from_utf8_lossy(namespace)
            );
        }
        *reported += 1;
        return None;
    };
    session.namespace = dest;
    if commands.len() == 1 {
        return run_one(shared, session, &commands[0]);
    }
    session.multi(shared);
    for args in commands {
        (runner::path().queue)(session, args);
    }
    match (runner::path().exec)(shared, session) {
        Answer::One(r) => report("exec", r),
        Answer::Exec(replies) => replies
            .into_iter()
            .filter_map(|(r, _)| report("exec", r))
            .reduce(|first, _| first),
    }
}

fn run_one(shared: &Shared, session: &mut Session, args: &[Bytes]) -> Option<Reply> {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    let started = Instant::now();
    let reply = (runner::path().run_sync)(shared, session, &Access::Shared(&shared.engines), args);
    shared
        .command_stats
        .ran(&name, args, started.elapsed(), reply.is_error());
    report(&name, reply)
}

/// Reports an error a master's change got here; the error, if it is one.
fn report(name: &str, reply: Reply) -> Option<Reply> {
    if let Reply::Error(e) = &reply {
        eprintln!("redcodec serve: replication: the Kvrocks master's {name} failed here: {e}");
        return Some(reply);
    }
    None
}
