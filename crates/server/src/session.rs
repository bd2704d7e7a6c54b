//! One connection's state: protocol, authentication, namespace, the
//! transaction being queued and the keys it watches.

use bytes::Bytes;
use std::sync::Arc;

use redcodec_engine::Reply;

use crate::access::Access;
use crate::clients::ClientInfo;
use crate::reply::{Protocol, Shape};
use crate::spec_id::SpecId;
use crate::state::Shared;
use crate::watch::NsKey;

/// What a command answers.
pub enum Answer {
    /// One reply.
    One(Reply),
    /// EXEC's replies, each with its command's RESP3 shape.
    Exec(Vec<(Reply, Shape)>),
}

/// A command queued inside MULTI.
pub struct Queued {
    /// Its spec: resolved when a client queued it, `None` for an unknown
    /// command a master's stream sent.
    pub spec: Option<SpecId>,
    /// Its arguments, name first.
    pub args: Vec<Bytes>,
}

/// A connection's state.
pub struct Session {
    /// The client's entry in the registry.
    pub info: Arc<ClientInfo>,
    /// RESP2 or RESP3.
    pub protocol: Protocol,
    /// Whether AUTH succeeded (or no password is required).
    pub authenticated: bool,
    /// The namespace commands work in.
    pub namespace: String,
    /// The database index it selected.
    pub db: i64,
    /// Commands queued since MULTI, each with its spec.
    pub queued: Option<Vec<Queued>>,
    /// A command failed to queue: EXEC aborts.
    pub queue_failed: bool,
    /// Watched keys, their counters when watched, and whether they existed
    /// then (a key that expires meanwhile aborts EXEC, as in Redis).
    pub watched: Vec<(NsKey, u64, bool)>,
    /// Close the connection after the replies are written.
    pub close: bool,
    /// Write no reply to this command (SHUTDOWN).
    pub silent: bool,
    /// A write ran since the WAL was last synced for this connection.
    pub wrote: bool,
    /// Inside EXEC: keys written so far, whose blocked clients are served
    /// once the whole transaction has run (as Redis serves them after
    /// the command, not in the middle of it).
    pub ready_keys: Option<Vec<Vec<u8>>>,
    /// The reply already encoded, sent instead of the command's `Reply`
    /// (a script's RESP3 types: [`crate::scripting`]).
    pub raw_reply: Option<Vec<u8>>,
    /// Its channels and patterns ([`crate::pubsub`]): under RESP2, a
    /// connection with any runs only the commands allowed while
    /// subscribed.
    pub subscriptions: usize,
    /// Which replies go out (CLIENT REPLY).
    pub replies: ReplyMode,
    /// The reply of this command is a push (Pub/Sub's confirmations),
    /// sent whatever [`Session::replies`] says.
    pub pushed: bool,
}

/// What CLIENT REPLY chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyMode {
    /// Every reply is sent.
    On,
    /// None is, until CLIENT REPLY ON.
    Off,
    /// CLIENT REPLY SKIP ran: the next command's reply is not sent.
    SkipNext,
    /// This command's reply is not sent.
    Skip,
}

impl Session {
    /// A new connection's state.
    pub fn new(shared: &Shared, info: Arc<ClientInfo>) -> Session {
        Session {
            info,
            protocol: Protocol::Resp2,
            authenticated: shared.requirepass().is_none(),
            namespace: shared.config.default_namespace.clone(),
            db: 0,
            queued: None,
            queue_failed: false,
            watched: Vec::new(),
            close: false,
            silent: false,
            wrote: false,
            ready_keys: None,
            raw_reply: None,
            subscriptions: 0,
            replies: ReplyMode::On,
            pushed: false,
        }
    }

    /// Whether the reply of the command that just ran is sent (CLIENT
    /// REPLY), and the mode moved on to the next command's, as Redis'
    /// `resetClient` moves it.
    pub fn reply_goes_out(&mut self) -> bool {
        let pushed = std::mem::take(&mut self.pushed);
        // CLIENT REPLY OFF and SKIP themselves are not answered.
        let out = self.replies == ReplyMode::On || pushed;
        self.replies = match self.replies {
            ReplyMode::SkipNext => ReplyMode::Skip,
            ReplyMode::Skip => ReplyMode::On,
            other => other,
        };
        out
    }

    /// Whether the connection is in RESP2's subscribed mode, where only
    /// the (un)subscribe commands, PING, QUIT and RESET run.
    pub fn subscribed_resp2(&self) -> bool {
        self.subscriptions > 0 && self.protocol == Protocol::Resp2
    }

    /// Whether the connection works in the server's default namespace:
    /// Kvrocks' administrator (a namespace token's connection is not).
    pub fn is_admin(&self, shared: &Shared) -> bool {
        self.namespace == shared.config.default_namespace
    }

    /// Switches the protocol replies are written in.
    pub fn set_protocol(&mut self, protocol: Protocol) {
        self.protocol = protocol;
        self.info.live.lock().resp = protocol.version();
    }

    /// Records the selected database index.
    pub fn set_db(&mut self, db: i64) {
        self.db = db;
        self.info.live.lock().db = db;
    }

    /// MULTI.
    pub fn multi(&mut self, _shared: &Shared) -> Reply {
        if self.queued.is_some() {
            return Reply::error("ERR MULTI calls can not be nested");
        }
        self.queued = Some(Vec::new());
        self.queue_failed = false;
        self.info.live.lock().multi = Some(0);
        Reply::ok()
    }

    /// DISCARD.
    pub fn discard(&mut self, shared: &Shared) -> Reply {
        if self.queued.take().is_none() {
            return Reply::error("ERR DISCARD without MULTI");
        }
        self.queue_failed = false;
        self.info.live.lock().multi = None;
        self.unwatch(shared);
        Reply::ok()
    }

    /// WATCH key ….
    pub fn watch(&mut self, shared: &Shared, access: &Access<'_>, args: &[Bytes]) -> Reply {
        if self.queued.is_some() {
            return Reply::error("ERR WATCH inside MULTI is not allowed");
        }
        for key in &args[1..] {
            let k = (self.namespace.clone(), key.to_vec());
            if self.watched.iter().any(|(w, _, _)| *w == k) {
                continue;
            }
            let version = shared.watch.watch(&k);
            let existed = exists(access, &self.namespace, key);
            self.watched.push((k, version, existed));
        }
        Reply::ok()
    }

    /// UNWATCH.
    pub fn unwatch(&mut self, shared: &Shared) -> Reply {
        for (k, _, _) in self.watched.drain(..) {
            shared.watch.unwatch(&k);
        }
        Reply::ok()
    }
}

/// Whether `key` exists in `namespace`.
pub(crate) fn exists(access: &Access<'_>, namespace: &str, key: &[u8]) -> bool {
    access
        .with(namespace, |engine| {
            engine.execute(&[b"exists".as_slice(), key])
        })
        .is_ok_and(|reply| reply == Reply::Integer(1))
}
