//! What the server knows about one command: its [`Spec`], and [`Run`],
//! who answers it (the data of the registry's table, between the session
//! and the subsystems whose handlers it names; the table is built in
//! [`crate::commands::registry`]).

use bytes::Bytes;
use redcodec_engine::internals::dispatch::{CommandSpec, Flags, Keys, Shape, ShapeRule};
use redcodec_engine::Reply;
use redcodec_formats::AnyCodec;

use crate::access::Access;
use crate::command_roles::{
    BlockingPop, Handover, InStream, KvrocksCommand, Propagation, Redaction,
};
use crate::commands::subcommands::{self, Container};
use crate::session::Session;
use crate::spec_id::SpecId;
use crate::state::Shared;

/// A command the server answers itself: the registry's spec (its name
/// for the handlers serving several) and the request, name first.
pub type ServerHandler = fn(&Shared, &mut Session, &Access<'_>, &Spec, &[Bytes]) -> Reply;

/// Who answers a command.
#[derive(Clone, Copy)]
pub enum Run {
    /// The engine (its handler in its command table).
    Engine,
    /// The server, at once.
    Server(ServerHandler),
    /// EXEC: the queued commands, the engine held exclusively.
    Exec,
    /// WAIT: waits for replicas' acknowledgements (at once inside MULTI).
    Wait,
    /// PSYNC and SYNC: the connection becomes a replica's link.
    ReplicaSync(Handover),
    /// A blocking pop (at once inside MULTI and scripts).
    Blocking(BlockingPop),
    /// Kvrocks' replication protocol (`_db_name`, `_fetch_meta`,
    /// `_fetch_file`; Kvrocks' one-argument PSYNC is Redis' PSYNC's
    /// spec): answered by [`crate::master::kvrocks::intercept`] at the
    /// client loop's edge, before Redis' checks; unknown anywhere else.
    KvrocksMaster(KvrocksCommand),
}

/// Everything about one command.
pub struct Spec {
    /// Lower-case name.
    pub name: &'static str,
    /// Redis arity: `n` exactly n words (name included), `-n` at least n.
    pub arity: i32,
    /// Key positions (COMMAND INFO, WATCH touching, group commit).
    pub keys: Keys,
    /// Its properties.
    pub flags: Flags,
    /// The RESP3 shape of its reply.
    pub reply_shape: ShapeRule,
    /// Who answers it.
    pub run: Run,
    /// Its place in the registry's table.
    pub id: SpecId,
    /// Its subcommands, for a container.
    pub container: Option<&'static Container>,
    /// The engine's command, handed to the engine as resolved (not
    /// looked up again): every engine command has one, PING and ECHO
    /// included.
    pub engine: Option<CommandSpec<AnyCodec>>,
    /// The flags a subcommand adds to its container's (CLIENT KILL is
    /// `admin`, SCRIPT KILL `allow-busy`), by lower-case name.
    pub sub_flags: &'static [(&'static str, Flags)],
    /// How it reaches replicas.
    pub propagation: Propagation,
    /// What MONITOR hides of it.
    pub redaction: Redaction,
    /// What a replica does with it in its master's stream.
    pub in_stream: InStream,
}

impl Spec {
    /// Whether `argc` words (name included) fit the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        subcommands::arity_ok(self.arity, argc)
    }

    /// Whether a request of it with `argc` words (name included) may run
    /// in a group whose writes commit together: the engine runs it, it
    /// names its keys by position (not keyless like `DBSIZE`, not
    /// keyspace-wide like `FLUSHALL`), and its arity fits (a pipeline's
    /// group commit, [`crate::group_commit`], and a replica's group of
    /// its master's stream, [`crate::replica::stream_apply`]).
    pub fn groups(&self, argc: usize) -> bool {
        matches!(self.run, Run::Engine)
            && !matches!(self.keys, Keys::None | Keys::Everything)
            && self.arity_ok(argc)
    }

    /// The keys of the request `args` (name first), by its key positions.
    pub fn keys_of<'a>(&self, args: &'a [Bytes]) -> Vec<&'a [u8]> {
        self.keys.of(args)
    }

    /// The keys of a group of commands, each resolved to its spec, in
    /// order, gathered in one vector.
    pub fn keys_of_each<'a>(
        commands: impl ExactSizeIterator<Item = (&'a Spec, &'a [Bytes])>,
    ) -> Vec<&'a [u8]> {
        let mut keys = Vec::with_capacity(commands.len());
        for (spec, args) in commands {
            spec.keys.push_of(args, &mut keys);
        }
        keys
    }

    /// Whether it has every property of `flags`.
    pub fn has(&self, flags: Flags) -> bool {
        self.flags.has(flags)
    }

    /// Whether it may reach the replicas without writing a key: Redis'
    /// `CMD_MAY_REPLICATE` (PFCOUNT), and PUBLISH and SPUBLISH, which are
    /// passed on to them. CLIENT PAUSE WRITE holds these, and read-only
    /// scripts may not call them.
    pub fn may_replicate(&self) -> bool {
        self.has(Flags::MAY_REPLICATE) || self.has(Flags::PUBLISH)
    }

    /// Counts `args` of this command, run by `client` in `took` (INFO
    /// commandstats), and logs it if it was slow (SLOWLOG). EXEC is
    /// counted but not logged: the commands it ran are.
    pub fn ran(
        &self,
        shared: &Shared,
        client: &crate::clients::ClientInfo,
        args: &[Bytes],
        took: std::time::Duration,
        failed: bool,
    ) {
        shared.command_stats.ran(self.name, args, took, failed);
        if !matches!(self.run, Run::Exec) {
            shared.slowlog.note(client, self.redaction, args, took);
        }
    }

    /// Whether the request `args` (name first) has every property of
    /// `flags`, its subcommand's included (CLIENT KILL is `admin`).
    pub fn request_has(&self, args: &[Bytes], flags: Flags) -> bool {
        if self.has(flags) {
            return true;
        }
        let Some(sub) = args.get(1) else {
            return false;
        };
        self.sub_flags
            .iter()
            .any(|(name, f)| f.has(flags) && sub.eq_ignore_ascii_case(name.as_bytes()))
    }

    /// The RESP3 shape of the reply to `args` (name first).
    pub fn shape<A: AsRef<[u8]>>(&self, args: &[A]) -> Shape {
        self.reply_shape.shape(args)
    }

    /// [`Spec::may_have_changed`] knowing which of its keys the command
    /// left unchanged (the engine's `unchanged`): a write that named keys
    /// and left every one of them as it was changed nothing (BITFIELD
    /// that only read, or wrote the values already there; SORT without
    /// STORE; SMOVE within one set), as Redis counts no dirty change for
    /// it, touches no WATCH and propagates nothing.
    pub fn changed<A: AsRef<[u8]>>(
        &self,
        reply: &Reply,
        args: &[A],
        unchanged: &[Vec<u8>],
    ) -> bool {
        if !self.may_have_changed(reply) {
            return false;
        }
        if unchanged.is_empty() {
            return true;
        }
        let keys = self.keys.of(args);
        keys.is_empty() || !keys.iter().all(|k| unchanged.iter().any(|u| u == k))
    }

    /// Whether a write that replied `reply` may have changed its keys
    /// (WATCH counters are bumped, blocked clients served, the write
    /// propagated): not a read (but one that may store what it computed,
    /// PFCOUNT), nor an error, nil, an empty array (a pop
    /// from nothing), or 0 or less where that means nothing changed.
    pub fn may_have_changed(&self, reply: &Reply) -> bool {
        if !self.has(Flags::WRITE) && !self.has(Flags::MAY_REPLICATE) {
            return false;
        }
        match reply {
            Reply::Error(_) | Reply::Nil | Reply::NilArray => false,
            Reply::Array(items) if items.is_empty() => false,
            Reply::Integer(n) if *n <= 0 => !self.has(Flags::ZERO_IS_NO_CHANGE),
            _ => true,
        }
    }
}
