//! `redcodec serve` as a replication master that redis-server replicas
//! follow: `REPLCONF`, `PSYNC`/`SYNC`, full resynchronisation (an RDB
//! snapshot, then the stream), partial resynchronisation from the
//! backlog (`+CONTINUE`), `WAIT`, and INFO replication's master fields.
//!
//! **The stream.** The engine calls an observer after every command,
//! while the command still holds its keys' locks
//! ([`redcodec_engine::observe`]). A write that changed something is
//! turned into what Redis 7 propagates ([`propagate`]), preceded by a
//! `DEL` of each key it met expired (a replica still holds those: it
//! never expires keys itself), encoded as RESP and appended, under one
//! mutex, to the backlog and to the output queue of every replica. Two
//! commands on one key hold its lock in turn, so they are appended in
//! the order they applied; commands on different keys commute.
//!
//! **Full resynchronisation.** The snapshot takes every key lock
//! ([`redcodec_engine::EngineCore::lock_all`]): no command runs, none is
//! half applied and unappended. Under it, the stream's offset is read, the
//! replica's queue registered, and the store checkpointed (RocksDB hard
//! links and a flush: [`snapshot::Checkpoint`]); then the locks go, and
//! the keyspace is written as an RDB file from the checkpoint while
//! commands run. Every write is therefore either in the snapshot (applied
//! before) or in the replica's queue (after), never both, never neither.
//! Commands wait only for the checkpoint, whatever the store's size (see
//! `docs/src/replication-master.md` for figures).
//!
//! **Restarts.** A master stopped cleanly keeps its stream's ID and offset
//! so that its replicas continue after it starts again ([`restart`]).
//!
//! **Databases.** Where namespaces are database indexes (Ardb's `SELECT
//! n`), every one of them (0-15) is replicated as its database: the stream
//! selects it before its writes and the snapshot holds each. Elsewhere the
//! default namespace is replicated, as database 0.

pub mod backlog;
pub mod backlog_size;
pub mod databases;
pub mod kvrocks;
pub mod propagate;
pub mod replica_link;
pub mod replication_commands;
pub mod replication_state;
pub mod restart;
pub mod snapshot;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use redcodec_engine::observe::CommandEvent;
use redcodec_engine::{EngineCore, Reply};
use redcodec_formats::AnyCodec;

use crate::state::Shared;
use propagate::Args;

pub use backlog_size::DEFAULT_BACKLOG_SIZE;
pub use databases::database_of;
pub use replica_link::serve_replica;
pub use replication_commands::{check_sync, client_type, replconf, type_name, wait, wait_now};
pub use replication_state::{
    Handshake, Link, LinkState, ReplCore, Replication, PING_PERIOD, QUEUE_LIMIT,
};

impl Replication {
    /// Installs the observer on `engine` when it works in a namespace
    /// that is replicated ([`database_of`]) and has none yet.
    pub fn attach(&self, shared: &Shared, engine: &EngineCore<AnyCodec>, namespace: &str) {
        if engine.has_observer() {
            return;
        }
        let Some(db) = database_of(shared, namespace) else {
            return;
        };
        let core = self.core.clone();
        let observer: redcodec_engine::observe::Observer<AnyCodec, _> = Arc::new(
            move |engine: &EngineCore<AnyCodec>, event: &CommandEvent<'_>| {
                core.observe(engine, event, db);
            },
        );
        engine.set_observer(Some(observer));
    }

    /// ROLE on a master, as Redis 7.0's `roleCommand` answers it: `master`,
    /// the stream's offset, and each replica that is online with its
    /// address, listening port and acknowledged offset.
    pub fn role(&self) -> Reply {
        let s = self.core.stream.lock();
        let offset = s.backlog.as_ref().map_or(0, backlog::Backlog::offset);
        let replicas = s
            .links
            .iter()
            .filter(|link| *link.state.lock() == LinkState::Online)
            .map(|link| {
                Reply::Array(vec![
                    Reply::bulk(link.ip.clone()),
                    Reply::bulk(link.port.to_string()),
                    Reply::bulk(link.ack.load(Ordering::SeqCst).to_string()),
                ])
            })
            .collect();
        Reply::Array(vec![
            Reply::bulk("master"),
            Reply::Integer(i64::try_from(offset).unwrap_or(i64::MAX)),
            Reply::Array(replicas),
        ])
    }

    /// INFO replication on a master, Redis 7.0's fields in its order.
    pub fn info_replication(&self, shared: &Shared) -> String {
        let s = self.core.stream.lock();
        let (kvrocks, kvrocks_lines) = kvrocks::feed::info_lines(shared, s.links.len());
        let mut out = format!(
            "role:master\r\nconnected_slaves:{}\r\n",
            s.links.len() + kvrocks
        );
        for (i, link) in s.links.iter().enumerate() {
            let lag = link.ack_time.lock().elapsed().as_secs();
            out.push_str(&format!(
                "slave{i}:ip={},port={},state={},offset={},lag={lag}\r\n",
                link.ip,
                link.port,
                link.state.lock().name(),
                link.ack.load(Ordering::SeqCst),
            ));
        }
        out.push_str(&kvrocks_lines);
        let (offset, active, first, histlen) = match &s.backlog {
            Some(b) => (b.offset(), 1, b.first_byte_offset(), b.histlen()),
            None => (0, 0, 0, 0),
        };
        let (replid2, second_offset) = match &*self.core.second.lock() {
            Some((id, upto)) => (id.clone(), i64::try_from(*upto).unwrap_or(i64::MAX)),
            None => ("0".repeat(40), -1),
        };
        out.push_str(&format!(
            "master_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:{replid2}\r\nmaster_repl_offset:{offset}\r\nsecond_repl_offset:{second_offset}\r\nrepl_backlog_active:{active}\r\nrepl_backlog_size:{}\r\nrepl_backlog_first_byte_offset:{first}\r\nrepl_backlog_histlen:{histlen}\r\n",
            shared.replid,
            self.core.backlog_size.load(Ordering::SeqCst),
        ));
        out
    }
}

impl ReplCore {
    /// The engine's observer: propagates a write, in database `db`, that
    /// changed something.
    fn observe(&self, engine: &EngineCore<AnyCodec>, event: &CommandEvent<'_>, db: u32) {
        if !self.active.load(Ordering::SeqCst) {
            return;
        }
        let Some(name) = event.args.first() else {
            return;
        };
        let Some(spec) = crate::command_table::get(name) else {
            return;
        };
        if !spec.changed(event.reply, event.args, event.unchanged) {
            return;
        }
        let mut commands: Vec<Args> = event
            .expired
            .iter()
            .map(|k| vec![b"DEL".to_vec(), k.clone()])
            .collect();
        let rewritten = propagate::rewrite(engine, spec.propagation, event);
        if rewritten.is_empty() {
            return;
        }
        commands.extend(rewritten);
        if let Some(commands) = crate::held_feed::hold_feed(db, commands) {
            self.feed_in(db, &commands);
        }
    }
}
