//! `redcodec serve --format kvrocks` as a master that Apache Kvrocks
//! replicas follow with Kvrocks' own protocol (`src/cluster/replication.cc`
//! on the replica's side, `src/commands/cmd_replication.cc` on the
//! master's), byte for byte:
//!
//! - `_db_name`: the store's name (`--db-name`, Kvrocks' `db-name`,
//!   `change.me.db` by default) on a bare line; the replica goes on only
//!   when it is its own.
//! - `replconf listening-port <port> [ip-address <ip>]`: `+OK` (the
//!   Redis master's REPLCONF, which keeps both for INFO).
//! - `PSYNC <seq>`: `+OK` and the stream ([`feed`]) when the WAL holds the
//!   batch starting at `seq` (or `seq` is the next to be written); else
//!   `-ERR sequence out of range, please use fullsync`, and the replica
//!   takes a full copy.
//! - `_fetch_meta`: the file names of a RocksDB checkpoint of the store
//!   ([`checkpoint`]), comma-separated on one line; the connection closes.
//! - `_fetch_file <name,name,…>`: per file `<size>\r\n` then its bytes; a
//!   name that is not a file of the checkpoint gets an error line and the
//!   connection closes.
//!
//! Only a kvrocks-format store holds Kvrocks' bytes: on any other format
//! these commands answer an error naming the format (a redcodec replica
//! of any format follows any redcodec master with the Redis protocol).
//! `PSYNC` with three arguments is Redis' (`PSYNC <replid> <offset>`):
//! Kvrocks' replicas send that form only with `use-rsid-psync yes`, and
//! only once their master wrote a replication id into the data, which
//! redcodec never does.

pub mod checkpoint;
pub mod db_name;
pub mod feed;

use bytes::Bytes;
use std::sync::Arc;

use redcodec_codec::Codec;
use redcodec_engine::Reply;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

pub use db_name::{Options, DEFAULT_DB_NAME};

use crate::clients::ClientInfo;
use crate::command_roles::{Handover, KvrocksCommand};
use crate::command_spec::{Run, Spec};
use crate::session::Session;
use crate::state::Shared;

/// The name of the format whose store Kvrocks' replicas can follow.
const KVROCKS_FORMAT: &str = "kvrocks";

/// What the client loop does with a command of Kvrocks' protocol.
pub enum Intercepted {
    /// Answer this (a raw reply may be set on the session).
    Reply(Reply),
    /// The connection becomes the command's: [`serve`] takes it over.
    TakeOver(KvrocksCommand),
}

/// Kvrocks' text for a wrong argument count (`errWrongNumOfArguments`).
const WRONG_ARGS: &str = "ERR wrong number of arguments";

/// The command of Kvrocks' protocol `args` of `spec` is, if it is one:
/// `_db_name`, `_fetch_meta`, `_fetch_file`, or Kvrocks' PSYNC
/// (`PSYNC <seq>`: one argument, other than Redis' `?`, a Redis
/// replica's PSYNC that lost its offset, which gets Redis' arity error).
fn kvrocks_command(spec: &Spec, args: &[Bytes]) -> Option<KvrocksCommand> {
    match spec.run {
        Run::KvrocksMaster(command) => Some(command),
        Run::ReplicaSync(Handover::Psync) if args.len() == 2 && args[1][..] != b"?"[..] => {
            Some(KvrocksCommand::Psync)
        }
        _ => None,
    }
}

/// The commands of Kvrocks' protocol, before Redis' checks (they are not
/// Redis commands, and Kvrocks' PSYNC has one argument): `None` for any
/// other command (and inside MULTI, where Kvrocks refuses them and Redis'
/// checks answer).
pub fn intercept(
    shared: &Shared,
    session: &mut Session,
    spec: &Spec,
    args: &[Bytes],
) -> Option<Intercepted> {
    let command = kvrocks_command(spec, args)?;
    if session.queued.is_some() {
        return None;
    }
    let reply = |r: Reply| Some(Intercepted::Reply(r));
    if !session.authenticated {
        return reply(Reply::error("NOAUTH Authentication required."));
    }
    if let Err(e) = kvrocks_store(shared, spec.name) {
        return reply(e);
    }
    let wanted = match command {
        KvrocksCommand::DbName | KvrocksCommand::FetchMeta => 1,
        KvrocksCommand::FetchFile | KvrocksCommand::Psync => 2,
    };
    if args.len() != wanted {
        return reply(Reply::error(WRONG_ARGS));
    }
    match command {
        KvrocksCommand::DbName => {
            let mut raw = shared.config.kvrocks_master.db_name.clone().into_bytes();
            raw.extend_from_slice(b"\r\n");
            session.raw_reply = Some(raw);
            reply(Reply::ok())
        }
        KvrocksCommand::Psync => match psync_check(shared, &args[1]) {
            Ok(()) => Some(Intercepted::TakeOver(command)),
            Err(e) => reply(e),
        },
        KvrocksCommand::FetchMeta | KvrocksCommand::FetchFile => {
            Some(Intercepted::TakeOver(command))
        }
    }
}

/// The store, if it is of the kvrocks format; else the error naming it.
fn kvrocks_store(shared: &Shared, name: &str) -> Result<(), Reply> {
    let engine = shared.engines.current()?;
    let format = engine.codec().name();
    if format == KVROCKS_FORMAT {
        return Ok(());
    }
    Err(Reply::error(format!(
        "ERR {name}: Kvrocks' replication protocol serves a store of the kvrocks format; \
         this one is of the {format} format (a redcodec replica follows it with the Redis protocol)"
    )))
}

/// `PSYNC <seq>`'s checks, with Kvrocks' texts: an unsigned number, which
/// the WAL holds a batch starting at (Kvrocks' `checkWALBoundary`).
fn psync_check(shared: &Shared, arg: &[u8]) -> Result<(), Reply> {
    let Some(seq) = parse_sequence(arg) else {
        return Err(Reply::error(
            "ERR value is not an unsigned long long or out of range",
        ));
    };
    if let Some(refused) = crate::replica::replicaof::refuse_sync(shared) {
        return Err(refused);
    }
    let engine = shared.engines.current()?;
    if engine.store().wal_starts_at(seq) {
        Ok(())
    } else {
        eprintln!(
            "redcodec serve: Kvrocks replica asked PSYNC {seq}: out of the WAL (latest sequence {}); it takes a full copy",
            engine.store().latest_sequence()
        );
        Err(Reply::error(
            "ERR sequence out of range, please use fullsync",
        ))
    }
}

/// A sequence number as Kvrocks parses it (`ParseInt<uint64_t>`, base 10).
pub fn parse_sequence(arg: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(arg).ok()?;
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Serves a command that took the connection over ([`intercept`]): the
/// stream after `PSYNC <seq>`, or a checkpoint's file names or files.
pub async fn serve(
    shared: Arc<Shared>,
    info: Arc<ClientInfo>,
    rd: OwnedReadHalf,
    mut wr: OwnedWriteHalf,
    command: KvrocksCommand,
    args: Vec<Bytes>,
) {
    match command {
        KvrocksCommand::Psync => {
            let seq = parse_sequence(&args[1]).unwrap_or(0);
            feed::run(shared, info, rd, wr, seq).await;
        }
        KvrocksCommand::FetchMeta => {
            checkpoint::send_meta(&shared, &mut wr).await;
            let _ = wr.shutdown().await;
        }
        KvrocksCommand::FetchFile => {
            checkpoint::send_files(&shared, &mut wr, &args[1]).await;
            let _ = wr.shutdown().await;
        }
        // Answered by `intercept`; nothing takes the connection over.
        KvrocksCommand::DbName => {
            let _ = wr.shutdown().await;
        }
    }
}
