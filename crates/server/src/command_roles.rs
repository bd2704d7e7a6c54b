//! What a command is to each subsystem beyond the client loop, as its
//! [`crate::command_spec::Spec`] says it (a leaf: the subsystems read
//! these without naming the registry's handlers): how a replica hands a
//! connection over, which blocking pop it is, how its writes reach
//! replicas, what MONITOR hides of it, and what a replica does with it in
//! its master's stream.

/// How a replica asks for the data (the connection becomes its link).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Handover {
    /// `PSYNC <replid> <offset>` (Redis), or `PSYNC <seq>` (Kvrocks).
    Psync,
    /// `SYNC`: a full copy, then the stream.
    Sync,
}

/// A command of Kvrocks' replication protocol.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum KvrocksCommand {
    /// `_db_name`: the store's name.
    DbName,
    /// `_fetch_meta`: a checkpoint's file names.
    FetchMeta,
    /// `_fetch_file <names>`: a checkpoint's files.
    FetchFile,
    /// `PSYNC <seq>`: the write batches from a sequence number.
    Psync,
}

/// What a blocking pop takes, and how its arguments read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BlockingPop {
    /// BLPOP / BRPOP `key… timeout`.
    List {
        /// From the head.
        left: bool,
    },
    /// BZPOPMIN / BZPOPMAX `key… timeout`.
    Zset {
        /// The lowest score.
        min: bool,
    },
    /// BLMOVE `source destination LEFT|RIGHT LEFT|RIGHT timeout`.
    Move,
    /// BRPOPLPUSH `source destination timeout`.
    RPopLPush,
    /// BLMPOP `timeout numkeys key… LEFT|RIGHT [COUNT n]`.
    ListMany,
    /// BZMPOP `timeout numkeys key… MIN|MAX [COUNT n]`.
    ZsetMany,
}

/// How a write that changed something reaches replicas
/// ([`crate::master::propagate`]): as it came, or as the commands that
/// carry out what it did, as Redis 7.0 rewrites it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Propagation {
    /// As it came.
    AsIs,
    /// EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT: the absolute time set.
    Expiry,
    /// GETEX: its expiry change, or nothing.
    GetEx,
    /// SETEX, PSETEX: a SET with the absolute time.
    SetEx,
    /// SET: with a relative expiry, the absolute time.
    Set,
    /// SORT: only with STORE.
    Sort,
    /// RESTORE: with the absolute time (ABSTTL).
    Restore,
    /// SPOP: the members popped (SREM), or DEL of what is left.
    SPop,
    /// INCRBYFLOAT: a SET of the value reached.
    IncrByFloat,
    /// HINCRBYFLOAT: an HSET of the value reached.
    HIncrByFloat,
    /// CAS (Kvrocks'): a SET of the new value with its absolute expiry.
    Cas,
}

/// Which arguments MONITOR shows as `(redacted)`, as Redis 7.0's
/// `redactClientCommandArgument` does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Redaction {
    /// None.
    Nothing,
    /// Every argument (AUTH).
    Arguments,
    /// The user and password after `AUTH` (HELLO).
    HelloAuth,
}

impl Redaction {
    /// The positions of the secrets among `args` that Redis 7.0 redacts
    /// (`redactClientCommandArgument`), for MONITOR and SLOWLOG.
    pub fn positions<A: AsRef<[u8]>>(self, args: &[A]) -> Vec<usize> {
        match self {
            Redaction::Nothing => Vec::new(),
            Redaction::Arguments => (1..args.len()).collect(),
            Redaction::HelloAuth => {
                // `helloCommand`'s walk: AUTH takes two words, SETNAME one.
                let mut secrets = Vec::new();
                let mut i = 2;
                while i < args.len() {
                    let more = args.len() - i - 1;
                    let word = args[i].as_ref();
                    if word.eq_ignore_ascii_case(b"auth") && more >= 2 {
                        secrets.extend([i + 1, i + 2]);
                        i += 2;
                    } else if word.eq_ignore_ascii_case(b"setname") && more >= 1 {
                        i += 1;
                    } else {
                        break;
                    }
                    i += 1;
                }
                secrets
            }
        }
    }
}

/// What a replica does with a command of its master's stream
/// ([`crate::replica::stream_apply`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum InStream {
    /// Runs it as a client's command.
    Apply,
    /// Nothing: it moves only the offset (PING).
    Skip,
    /// Maps the master's database to a namespace (SELECT).
    SelectDb,
    /// The stream's transaction (MULTI, DISCARD, EXEC): run on the
    /// replica's session, never taken for a refusal.
    Transaction,
    /// REPLCONF, replication's own messages: a master's GETACK asks
    /// for an acknowledgement, a replica's ACK gives one.
    Replconf,
    /// NAMESPACE: a change of the master's replicated namespace tokens
    /// ([`crate::namespace_replication::apply_from_stream`]).
    NamespaceTokens,
    /// MOVE: a key to another of the master's databases, mapped as SELECT
    /// maps them ([`crate::replica::across_databases`]).
    MoveDb,
    /// COPY, whose `DB` option names another of the master's databases
    /// ([`crate::replica::across_databases`]).
    CopyDb,
}
