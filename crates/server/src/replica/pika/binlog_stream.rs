//! The binlog stream of a Pika master (`PikaReplBgWorker::
//! HandleBGWorkerWriteBinlog` is what a Pika replica does with it): each
//! `kBinlogSync` message carries binlog items, by database, each with the
//! binlog position after it; an empty item is the master's keep-alive.
//! Every command is run through the path the Redis follower's commands
//! take (`crate::replica::master_link::apply`); then the items of each
//! database are acknowledged with the range of their positions (first,
//! last), and a keep-alive with an empty range, as a Pika replica does
//! (the master sends more once its window is acknowledged, and forgets a
//! replica silent for 20 s).
//!
//! A command refused here is reported on stderr and the stream goes on,
//! as a Pika replica goes on past a command that fails.
//!
//! The replication state file ([`crate::replica::resume`]) is removed
//! before the first item of a message is applied, and written when a
//! message brings only keep-alives (the master sends one every few
//! seconds while it has nothing else).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::binlog;
use super::link::PbConn;
use super::messages::{BinlogOffset, BinlogSyncRequest, InnerRequest, InnerResponse, Node, Type};
use super::pika_resume::{set_resume, DbPosition, Resume};
use crate::command_table;
use crate::replica::link_error::LinkError;
use crate::replica::resume;
use crate::replica::resume_file;
use crate::replica::stream_apply::{apply, command_name, sync_if_always};
use crate::session::Session;
use crate::state::Shared;

/// The acknowledgements of a message, by database (its index in the
/// resume point), in the order they came: the range of positions applied.
type Acks = Vec<(usize, Option<(BinlogOffset, BinlogOffset)>)>;

/// Errors reported on stderr before only counts are.
const REPORTED: u64 = 20;

/// A `kBinlogSync` request: the acknowledgement of `start..=end`
/// (`first_send`: the start of the stream at `start`).
pub fn ack(
    node: &Node,
    db: &DbPosition,
    start: BinlogOffset,
    end: BinlogOffset,
    first_send: bool,
) -> InnerRequest {
    InnerRequest {
        r#type: Type::BinlogSync as i32,
        binlog_sync: Some(BinlogSyncRequest {
            node: node.clone(),
            db_name: db.name.clone(),
            slot_id: 0,
            ack_range_start: start,
            ack_range_end: end,
            session_id: db.session_id,
            first_send,
        }),
        ..InnerRequest::default()
    }
}

/// The zero position (an acknowledgement of a keep-alive).
pub fn zero() -> BinlogOffset {
    BinlogOffset {
        filenum: 0,
        offset: 0,
        term: Some(0),
        index: Some(0),
    }
}

/// Applies the stream until the link breaks.
pub async fn run(
    shared: &Arc<Shared>,
    conn: &mut PbConn,
    session: &mut Session,
    node: &Node,
    mut resume: Resume,
) -> Result<(), LinkError> {
    let mut reported = 0u64;
    // The Pika measure of the position last saved in the replication
    // state file.
    let mut saved: Option<i64> = None;
    loop {
        let message: InnerResponse = conn.recv().await?;
        shared.replica.state.lock().last_io = Some(Instant::now());
        if message.r#type != Type::BinlogSync as i32 {
            // A late reply to a request of the handshake: nothing to do.
            continue;
        }
        // Applied and counted as one step, unless a REPLICAOF came first
        // (see `Replica::step`).
        let stepped = shared.replica.step(|| -> Result<(Acks, bool), LinkError> {
            let mut acks: Acks = Vec::new();
            let mut wrote = false;
            let mut items = false;
            for item in message.binlog_sync {
                let Some(at) = resume.dbs.iter().position(|d| d.name == item.slot.db_name) else {
                    return Err(LinkError::Protocol(format!(
                        "the Pika master sent binlog of database '{}', which this replica did not ask for",
                        item.slot.db_name
                    )));
                };
                let db = &mut resume.dbs[at];
                if item.session_id != db.session_id {
                    return Err(LinkError::Protocol(format!(
                        "the Pika master sent binlog of {} for session {} where {} was due",
                        db.name, item.session_id, db.session_id
                    )));
                }
                let slot = match acks.iter().position(|(i, _)| *i == at) {
                    Some(s) => s,
                    None => {
                        acks.push((at, None));
                        acks.len() - 1
                    }
                };
                if item.binlog.is_empty() {
                    continue;
                }
                if !std::mem::replace(&mut items, true) {
                    // The store moves past the saved position.
                    resume_file::invalidate(shared).map_err(LinkError::State)?;
                    saved = None;
                }
                let decoded = binlog::decode(&item.binlog).map_err(|e| {
                    LinkError::Protocol(format!(
                        "a binlog item of {} at {}:{} from the Pika master: {e}",
                        db.name, item.binlog_offset.filenum, item.binlog_offset.offset
                    ))
                })?;
                if let Some(dest) = &db.dest {
                    for args in decoded.commands.into_iter().filter_map(binlog::translate) {
                        session.namespace = dest.clone();
                        let spec = command_table::get(&args[0]);
                        let name = command_name(spec, &args);
                        if let Err(e) = apply(shared, session, spec, args) {
                            if reported < REPORTED {
                                eprintln!("redcodec serve: replication: the Pika master's {name} failed here: {e}");
                            }
                            reported += 1;
                        }
                        wrote = true;
                    }
                }
                let mut end = item.binlog_offset.clone();
                end.term = Some(decoded.term);
                db.filenum = end.filenum;
                db.offset = end.offset;
                let range = &mut acks[slot].1;
                match range {
                    Some((_, last)) => *last = end,
                    None => *range = Some((item.binlog_offset, end)),
                }
            }
            sync_if_always(shared, session)?;
            set_resume(shared, Some(resume.clone()));
            {
                let mut st = shared.replica.state.lock();
                st.offset = resume.offset();
                st.read_offset = st.offset;
                if wrote {
                    st.last_write = Some(Instant::now());
                }
            }
            Ok((acks, items))
        });
        let (acks, items) = stepped.ok_or(LinkError::Killed)??;
        for (at, range) in acks {
            let db = &resume.dbs[at];
            let request = match range {
                Some((start, end)) => ack(node, db, start, end, false),
                None => ack(node, db, zero(), zero(), false),
            };
            conn.send(&request).await?;
        }
        if session.info.killed.load(Ordering::SeqCst) {
            return Err(LinkError::Killed);
        }
        // Only keep-alives: the stream is quiet, the store is at the
        // position the file would say.
        let at = resume.offset();
        if !items && saved != Some(at) {
            match resume::save(shared) {
                Ok(_) => saved = Some(at),
                Err(e) => {
                    eprintln!("redcodec serve: replication: saving the replication state: {e}");
                }
            }
        }
    }
}
