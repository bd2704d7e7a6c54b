//! The command registry: one [`Spec`] per command the server knows, the
//! engine's and its own, each with everything said about it in one place.
//!
//! # Design
//! - A command's properties are the engine's [`Flags`] (write, blocking,
//!   no-multi, allowed before AUTH, …), [`Keys`] and [`ShapeRule`] (the
//!   RESP3 shape of its reply). The engine's commands carry them in
//!   `redcodec_engine`'s `cmd/table.rs`; the server's own are listed in
//!   `server_specs` below with a [`Run`] that says who answers them.
//! - [`REGISTRY`] is built once per process from both lists (the data is
//!   the same for every server): a request is resolved to a
//!   `&'static Spec` at the client loop's edge ([`Registry::get`], no
//!   allocation), and arity, MULTI refusals, NOAUTH, WATCH touching, the
//!   RESP3 shape, COMMAND and commandstats read that spec.
//! - A container command (CLIENT, CONFIG, …) keeps its subcommands' table
//!   in [`super::subcommands`]; its spec points at it.
//! - What the subsystems know of a command is data of its spec too
//!   ([`crate::command_roles`]): how its writes reach replicas
//!   (`PROPAGATIONS`), what MONITOR redacts, what a replica does with it
//!   in its master's stream, which blocking pop or replication hand-over
//!   it is, and the flags its subcommands add. No code outside this table
//!   compares a command's name.

use bytes::Bytes;
use std::collections::HashMap;
use std::sync::LazyLock;

use redcodec_engine::internals::dispatch::{
    CommandSpec, CommandTable, Flags, Keys, Shape, ShapeRule,
};
use redcodec_engine::Reply;
use redcodec_formats::AnyCodec;

use super::subcommands;
use super::{
    channels, client, command, config_commands, connection, flush_all, info, memory, move_key,
    object, save,
};
use crate::access::Access;
use crate::command_roles::{
    BlockingPop, Handover, InStream, KvrocksCommand, Propagation, Redaction,
};
pub use crate::command_spec::{Run, ServerHandler, Spec};
pub use crate::command_table::Registry;
use crate::pubsub::{Change, Kind};
use crate::session::Session;
use crate::spec_id::SpecId;
use crate::state::Shared;

/// The registry, built at first use.
pub static REGISTRY: LazyLock<Registry> = LazyLock::new(build);

/// Builds the registry from the engine's table and the server's own
/// commands.
fn build() -> Registry {
    let engine: CommandTable<AnyCodec> = CommandTable::default();
    let mut specs: HashMap<&'static str, Spec> = engine
        .iter()
        .map(|(name, e)| {
            let spec = Spec {
                name,
                arity: e.arity,
                keys: e.keys.clone(),
                flags: e.flags,
                reply_shape: e.reply_shape,
                run: Run::Engine,
                id: SpecId(0),
                container: None,
                engine: Some(CommandSpec {
                    arity: e.arity,
                    keys: e.keys.clone(),
                    flags: e.flags,
                    reply_shape: e.reply_shape,
                    run: e.run,
                }),
                ..DEFAULTS
            };
            (name, spec)
        })
        .collect();
    for (name, propagation) in PROPAGATIONS {
        let spec = specs.get_mut(name).expect("an engine command");
        spec.propagation = *propagation;
    }
    specs.get_mut("copy").expect("an engine command").in_stream = InStream::CopyDb;
    for spec in server_specs() {
        match specs.get_mut(spec.name) {
            // The engine's metadata, answered by the server (PING, ECHO):
            // what the server says of it is the server's.
            Some(engine) => {
                engine.run = spec.run;
                engine.in_stream = spec.in_stream;
                engine.flags = engine.flags.with(spec.flags);
            }
            None => {
                specs.insert(spec.name, spec);
            }
        }
    }
    Registry::from_specs(specs.into_values().collect())
}

/// What a spec says when nothing else is said: the fields after the
/// engine's (or the server's) own.
const DEFAULTS: Spec = Spec {
    name: "",
    arity: 0,
    keys: Keys::None,
    flags: Flags::NONE,
    reply_shape: ShapeRule::PLAIN,
    run: Run::Engine,
    id: SpecId(0),
    container: None,
    engine: None,
    sub_flags: &[],
    propagation: Propagation::AsIs,
    redaction: Redaction::Nothing,
    in_stream: InStream::Apply,
};

/// The engine's writes that reach replicas as other commands, as Redis
/// 7.0 rewrites them (`alsoPropagate`, `rewriteClientCommandVector`).
const PROPAGATIONS: &[(&str, Propagation)] = &[
    ("expire", Propagation::Expiry),
    ("pexpire", Propagation::Expiry),
    ("expireat", Propagation::Expiry),
    ("pexpireat", Propagation::Expiry),
    ("getex", Propagation::GetEx),
    ("setex", Propagation::SetEx),
    ("psetex", Propagation::SetEx),
    ("set", Propagation::Set),
    ("sort", Propagation::Sort),
    ("restore", Propagation::Restore),
    ("spop", Propagation::SPop),
    ("incrbyfloat", Propagation::IncrByFloat),
    ("hincrbyfloat", Propagation::HIncrByFloat),
    ("cas", Propagation::Cas),
];

/// The command named `name` (any case) in [`REGISTRY`].
pub fn get(name: &[u8]) -> Option<&'static Spec> {
    REGISTRY.get(name)
}

/// The command of `id` in [`REGISTRY`].
pub fn by_id(id: SpecId) -> &'static Spec {
    REGISTRY.by_id(id)
}

/// The command named `name` (any case) in [`REGISTRY`], Kvrocks'
/// replication commands included (the client loop's edge).
pub fn get_at_edge(name: &[u8]) -> Option<&'static Spec> {
    REGISTRY.get_at_edge(name)
}

/// A server command: no keys, a plain reply.
fn spec(name: &'static str, arity: i32, flags: Flags, run: Run) -> Spec {
    Spec {
        name,
        arity,
        flags,
        run,
        container: subcommands::container(name),
        ..DEFAULTS
    }
}

/// A server command answered at once by `handler`.
fn server(name: &'static str, arity: i32, flags: Flags, handler: ServerHandler) -> Spec {
    spec(name, arity, flags, Run::Server(handler))
}

impl Spec {
    fn keyed(mut self, keys: Keys) -> Spec {
        self.keys = keys;
        self
    }

    fn shaped(mut self, rule: ShapeRule) -> Spec {
        self.reply_shape = rule;
        self
    }

    fn redacted(mut self, redaction: Redaction) -> Spec {
        self.redaction = redaction;
        self
    }

    fn in_stream(mut self, in_stream: InStream) -> Spec {
        self.in_stream = in_stream;
        self
    }

    fn sub_flags(mut self, sub_flags: &'static [(&'static str, Flags)]) -> Spec {
        self.sub_flags = sub_flags;
        self
    }
}

/// Flags of the commands a script may not call.
const NS: Flags = Flags::NO_SCRIPT;
/// MULTI, DISCARD, WATCH…: run inside MULTI, allowed while a script is busy.
const TX: Flags = Flags::TRANSACTION
    .with(Flags::NO_SCRIPT)
    .with(Flags::ALLOW_BUSY);
/// AUTH, HELLO…: allowed before authentication and while a script is busy.
const PRE_AUTH: Flags = Flags::NO_AUTH
    .with(Flags::NO_SCRIPT)
    .with(Flags::ALLOW_BUSY);
/// The scripts.
const SCRIPT: Flags = Flags::SCRIPT.with(Flags::NO_SCRIPT);
/// The scripts that may write.
const SCRIPT_RW: Flags = SCRIPT.with(Flags::MAY_WRITE);
/// EVAL's scripts: they may run in lanes.
const EVAL: Flags = Flags::LANE;
/// EVALSHA's scripts: in lanes too, named by SHA1.
const EVALSHA: Flags = Flags::LANE.with(Flags::BY_SHA);
/// The blocking pops a script may not call.
const BLOCK: Flags = Flags::BLOCKING.with(Flags::NO_SCRIPT);
/// SUBSCRIBE and its kin: not in scripts, nor (as in Kvrocks) queued in
/// a transaction; they run while subscribed and while loading.
const SUBSCRIBE: Flags = Flags::NO_SCRIPT
    .with(Flags::NO_MULTI)
    .with(Flags::LOADING)
    .with(Flags::WHILE_SUBSCRIBED)
    .with(Flags::PUBSUB);

/// PUBLISH, SPUBLISH, PUBSUB.
const PUBLISH: Flags = Flags::LOADING.with(Flags::PUBSUB);

/// The commands the server answers itself (PING and ECHO keep the
/// engine's arity, keys and flags: only their [`Run`] is taken).
fn server_specs() -> Vec<Spec> {
    let sub = |subs: &'static [&'static str], then: Shape| ShapeRule::Subcommand { subs, then };
    vec![
        server("ping", -1, Flags::WHILE_SUBSCRIBED, |_, se, _, _, a| {
            connection::ping(se, a).unwrap_or_else(Reply::ok)
        })
        .in_stream(InStream::Skip),
        server("echo", 2, Flags::NONE, |_, _, _, _, a| {
            Reply::Bulk(a[1].to_vec())
        }),
        server(
            "hello",
            -1,
            PRE_AUTH.with(Flags::LOADING),
            |sh, se, _, _, a| connection::hello(sh, se, a),
        )
        .shaped(ShapeRule::Always(Shape::Map))
        .redacted(Redaction::HelloAuth),
        server(
            "auth",
            -2,
            PRE_AUTH.with(Flags::LOADING),
            |sh, se, _, _, a| connection::auth(sh, se, a),
        )
        .redacted(Redaction::Arguments),
        server(
            "monitor",
            1,
            NS.with(Flags::ADMIN).with(Flags::LOADING),
            |sh, se, _, _, _| crate::monitor::monitor(sh, se),
        ),
        server("subscribe", -2, SUBSCRIBE, |sh, se, _, _, a| {
            channels::change(sh, se, a, (Change::Subscribe, Kind::Channel))
        }),
        server("psubscribe", -2, SUBSCRIBE, |sh, se, _, _, a| {
            channels::change(sh, se, a, (Change::Subscribe, Kind::Pattern))
        }),
        server("unsubscribe", -1, SUBSCRIBE, |sh, se, _, _, a| {
            channels::change(sh, se, a, (Change::Unsubscribe, Kind::Channel))
        }),
        server("punsubscribe", -1, SUBSCRIBE, |sh, se, _, _, a| {
            channels::change(sh, se, a, (Change::Unsubscribe, Kind::Pattern))
        }),
        server("ssubscribe", -2, SUBSCRIBE, |sh, se, _, _, a| {
            channels::change(sh, se, a, (Change::Subscribe, Kind::Shard))
        })
        .keyed(Keys::All),
        server("sunsubscribe", -1, SUBSCRIBE, |sh, se, _, _, a| {
            channels::change(sh, se, a, (Change::Unsubscribe, Kind::Shard))
        })
        .keyed(Keys::All),
        server(
            "publish",
            3,
            PUBLISH.with(Flags::PUBLISH),
            |sh, se, _, _, a| channels::publish(sh, se, a),
        ),
        server(
            "spublish",
            3,
            PUBLISH.with(Flags::PUBLISH),
            |sh, se, _, _, a| channels::spublish(sh, se, a),
        )
        .keyed(Keys::First),
        server("pubsub", -2, PUBLISH, |sh, _, _, _, a| {
            channels::pubsub(sh, a)
        }),
        server("flushall", -1, Flags::WRITE, flush_all::flush_all),
        server("move", 3, Flags::WRITE, |sh, se, ac, _, a| {
            move_key::move_key(sh, se, ac, a)
        })
        .keyed(Keys::First)
        .in_stream(InStream::MoveDb),
        server("select", 2, Flags::LOADING, |sh, se, _, _, a| {
            connection::select(sh, se, a)
        })
        .in_stream(InStream::SelectDb),
        server(
            "quit",
            -1,
            TX.with(Flags::NO_AUTH)
                .with(Flags::LOADING)
                .with(Flags::WHILE_SUBSCRIBED),
            |_, se, _, _, _| {
                se.close = true;
                Reply::ok()
            },
        ),
        server(
            "reset",
            1,
            TX.with(Flags::NO_AUTH)
                .with(Flags::LOADING)
                .with(Flags::WHILE_SUBSCRIBED),
            |sh, se, _, _, _| connection::reset(sh, se),
        ),
        server("role", 1, NS.with(Flags::LOADING), |sh, _, _, _, _| {
            crate::replica::info::role(sh).unwrap_or_else(|| sh.repl.role())
        }),
        server("replicaof", 3, NS.with(Flags::ADMIN), |sh, _, _, _, a| {
            crate::replica::replicaof(sh, a)
        }),
        server("slaveof", 3, NS.with(Flags::ADMIN), |sh, _, _, _, a| {
            crate::replica::replicaof(sh, a)
        }),
        server("time", 1, Flags::LOADING, |_, _, _, _, _| {
            connection::time()
        }),
        server(
            "shutdown",
            -1,
            Flags::NO_MULTI
                .with(NS)
                .with(Flags::ADMIN)
                .with(Flags::ALLOW_BUSY)
                .with(Flags::LOADING),
            |sh, se, _, _, a| connection::shutdown(sh, se, a),
        ),
        server("client", -2, NS.with(Flags::LOADING), |sh, se, _, _, a| {
            client::client(sh, se, a)
        })
        .shaped(sub(&["info", "list"], Shape::Verbatim))
        // The subcommands Redis 7.0 flags `admin` (not shown to monitors).
        .sub_flags(&[
            ("kill", Flags::ADMIN),
            ("list", Flags::ADMIN),
            ("no-evict", Flags::ADMIN),
            ("pause", Flags::ADMIN),
            ("unpause", Flags::ADMIN),
            ("unblock", Flags::ADMIN),
        ]),
        // Kvrocks' CLUSTER NODES, INFO and REPLICAS: `conn->VerbatimString`.
        server("cluster", -2, NS, |sh, se, _, _, a| {
            crate::cluster::cluster_commands::cluster(sh, se, a)
        })
        .shaped(sub(&["nodes", "info", "replicas"], Shape::Verbatim)),
        server("clusterx", -2, NS, |sh, se, _, _, a| {
            crate::cluster::cluster_commands::clusterx(sh, se, a)
        }),
        // Kvrocks' namespace tokens.
        server("namespace", -3, NS.with(Flags::ADMIN), |sh, se, _, _, a| {
            super::namespace::namespace(sh, se, a)
        })
        .in_stream(InStream::NamespaceTokens),
        server(
            "applybatch",
            -2,
            Flags::WRITE.with(Flags::NO_MULTI).with(NS),
            |sh, se, _, _, a| crate::cluster::apply_batch::apply_batch(sh, se, a),
        ),
        server("asking", 1, Flags::NONE, |sh, se, _, _, _| {
            link_flag(sh, se, |l| l.asking = true)
        }),
        server("readonly", 1, Flags::LOADING, |sh, se, _, _, _| {
            link_flag(sh, se, |l| l.readonly = true)
        }),
        server("readwrite", 1, Flags::LOADING, |sh, se, _, _, _| {
            link_flag(sh, se, |l| l.readonly = false)
        }),
        server(
            "config",
            -2,
            NS.with(Flags::ADMIN).with(Flags::LOADING),
            |sh, _, _, _, a| config_commands::config(sh, a),
        )
        .shaped(sub(&["get"], Shape::Map)),
        server("command", -1, Flags::LOADING, |sh, _, _, _, a| {
            command::command(sh, a)
        }),
        server("info", -1, Flags::LOADING, |sh, se, ac, _, a| {
            info::info(sh, se, ac, a)
        })
        .shaped(ShapeRule::Always(Shape::Verbatim)),
        server("function", -2, NS, |sh, se, _, _, a| {
            crate::scripting::function(sh, se, a)
        })
        .sub_flags(&[
            ("kill", Flags::ALLOW_BUSY),
            ("stats", Flags::ALLOW_BUSY),
            ("load", Flags::WRITE),
            ("delete", Flags::WRITE),
            ("flush", Flags::WRITE),
            ("restore", Flags::WRITE),
        ]),
        server("script", -2, NS, |sh, _, _, _, a| {
            crate::scripting::script(sh, a)
        })
        .sub_flags(&[("kill", Flags::ALLOW_BUSY)]),
        // `script numkeys key…`
        server("eval", -3, SCRIPT_RW.with(EVAL), eval).keyed(Keys::CountSecond),
        server("evalsha", -3, SCRIPT_RW.with(EVALSHA), eval).keyed(Keys::CountSecond),
        server("eval_ro", -3, SCRIPT.with(EVAL), eval).keyed(Keys::CountSecond),
        server("evalsha_ro", -3, SCRIPT.with(EVALSHA), eval).keyed(Keys::CountSecond),
        server("fcall", -3, SCRIPT_RW, fcall).keyed(Keys::CountSecond),
        server("fcall_ro", -3, SCRIPT, fcall).keyed(Keys::CountSecond),
        server(
            "save",
            1,
            Flags::NO_MULTI.with(NS).with(Flags::ADMIN),
            |sh, se, ac, _, _| save::save(sh, se, ac),
        ),
        server("bgsave", -1, NS.with(Flags::ADMIN), |sh, _, ac, _, a| {
            save::bgsave(sh, ac, a)
        }),
        server("compact", 1, NS.with(Flags::ADMIN), |sh, _, _, _, _| {
            save::compact(sh)
        }),
        server("slowlog", -2, Flags::LOADING, |sh, _, _, _, a| {
            sh.slowlog
                .command(a)
                .unwrap_or_else(|| subcommands::syntax_error(a))
        })
        .sub_flags(&[
            ("get", Flags::ADMIN),
            ("len", Flags::ADMIN),
            ("reset", Flags::ADMIN),
        ]),
        server("lastsave", 1, Flags::LOADING, |sh, _, _, _, _| {
            save::lastsave(sh)
        }),
        // MEMORY USAGE key, OBJECT ENCODING key…
        server("memory", -2, Flags::NONE, |_, se, ac, _, a| {
            memory::memory(se, ac, a)
        })
        .keyed(Keys::Second),
        server("object", -2, Flags::NONE, |sh, se, ac, _, a| {
            object::object(sh, se, ac, a)
        })
        .keyed(Keys::Second),
        server("multi", 1, TX.with(Flags::LOADING), |sh, se, _, _, _| {
            se.multi(sh)
        })
        .in_stream(InStream::Transaction),
        server("discard", 1, TX.with(Flags::LOADING), |sh, se, _, _, _| {
            se.discard(sh)
        })
        .in_stream(InStream::Transaction),
        server("watch", -2, TX.with(Flags::LOADING), |sh, se, ac, _, a| {
            se.watch(sh, ac, a)
        })
        .keyed(Keys::All),
        server(
            "unwatch",
            1,
            NS.with(Flags::ALLOW_BUSY).with(Flags::LOADING),
            |sh, se, _, _, _| se.unwatch(sh),
        ),
        server(
            "replconf",
            -1,
            NS.with(Flags::ALLOW_BUSY)
                .with(Flags::LOADING)
                .with(Flags::ADMIN),
            |sh, se, _, _, a| crate::master::replconf(sh, se, a),
        )
        .in_stream(InStream::Replconf),
        spec("wait", 3, NS, Run::Wait),
        spec(
            "exec",
            1,
            Flags::TRANSACTION.with(NS).with(Flags::LOADING),
            Run::Exec,
        )
        .in_stream(InStream::Transaction),
        spec(
            "psync",
            -3,
            Flags::NO_MULTI.with(NS).with(Flags::ADMIN),
            Run::ReplicaSync(Handover::Psync),
        ),
        spec(
            "sync",
            1,
            Flags::NO_MULTI.with(NS).with(Flags::ADMIN),
            Run::ReplicaSync(Handover::Sync),
        ),
        blocking("blpop", -3, BlockingPop::List { left: true }).keyed(Keys::AllButLast),
        blocking("brpop", -3, BlockingPop::List { left: false }).keyed(Keys::AllButLast),
        blocking("bzpopmin", -3, BlockingPop::Zset { min: true })
            .keyed(Keys::AllButLast)
            .shaped(ShapeRule::Always(Shape::KeyScored)),
        blocking("bzpopmax", -3, BlockingPop::Zset { min: false })
            .keyed(Keys::AllButLast)
            .shaped(ShapeRule::Always(Shape::KeyScored)),
        blocking("blmove", 6, BlockingPop::Move).keyed(Keys::FirstTwo),
        blocking("brpoplpush", 4, BlockingPop::RPopLPush).keyed(Keys::FirstTwo),
        // Scripts may call BLMPOP and BZMPOP (not as writes of the engine).
        spec(
            "blmpop",
            -5,
            Flags::BLOCKING.with(Flags::SERVER_WRITE),
            Run::Blocking(BlockingPop::ListMany),
        )
        .keyed(Keys::CountSecond),
        spec(
            "bzmpop",
            -5,
            Flags::BLOCKING.with(Flags::SERVER_WRITE),
            Run::Blocking(BlockingPop::ZsetMany),
        )
        .keyed(Keys::CountSecond)
        .shaped(ShapeRule::Always(Shape::KeyScoredPairs)),
        // Kvrocks' replication protocol: arity and authentication are
        // checked by its handler, with Kvrocks' texts.
        kvrocks("_db_name", KvrocksCommand::DbName),
        kvrocks("_fetch_meta", KvrocksCommand::FetchMeta),
        kvrocks("_fetch_file", KvrocksCommand::FetchFile),
    ]
}

/// A blocking pop a script may not call.
fn blocking(name: &'static str, arity: i32, pop: BlockingPop) -> Spec {
    spec(name, arity, BLOCK, Run::Blocking(pop))
}

/// A command of Kvrocks' replication protocol.
fn kvrocks(name: &'static str, command: KvrocksCommand) -> Spec {
    spec(name, -1, Flags::KVROCKS_MASTER, Run::KvrocksMaster(command))
}

/// ASKING, READONLY, READWRITE: a flag of the connection's cluster link.
fn link_flag(
    sh: &Shared,
    se: &Session,
    set: fn(&mut crate::cluster::cluster_state::Link),
) -> Reply {
    crate::cluster::cluster_commands::link_flag(sh, se, set)
}

/// EVAL, EVALSHA and their `_RO` forms.
fn eval(sh: &Shared, se: &mut Session, ac: &Access<'_>, spec: &Spec, a: &[Bytes]) -> Reply {
    crate::scripting::eval(sh, se, ac, spec, a)
}

fn fcall(sh: &Shared, se: &mut Session, ac: &Access<'_>, spec: &Spec, a: &[Bytes]) -> Reply {
    crate::scripting::fcall(sh, se, ac, spec, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_found_in_any_case_with_its_flags() {
        let set = get(b"SeT").expect("SET");
        assert_eq!(set.name, "set");
        assert!(set.has(Flags::WRITE) && matches!(set.run, Run::Engine));
        assert!(!get(b"get").expect("GET").has(Flags::WRITE));
        assert!(get(b"save").expect("SAVE").has(Flags::NO_MULTI));
        assert!(matches!(get(b"PING").expect("PING").run, Run::Server(_)));
        assert!(get(b"nosuch").is_none());
        assert!(
            get(b"_fetch_meta").is_none(),
            "unknown to MULTI and scripts"
        );
        assert!(get_at_edge(b"_FETCH_meta").is_some());
        assert!(REGISTRY.iter().all(|s| !s.name.starts_with('_')));
        assert!(get(&[b'a'; 64]).is_none());
        let sadd = get(b"sadd").expect("SADD");
        assert!(!sadd.may_have_changed(&Reply::Integer(0)));
        let zadd = get(b"zadd").expect("ZADD");
        assert!(
            zadd.may_have_changed(&Reply::Integer(0)),
            "ZADD 0 may update scores"
        );
        assert!(!get(b"lpop").expect("LPOP").may_have_changed(&Reply::Nil));
    }

    #[test]
    fn what_the_subsystems_know_of_a_command_is_in_its_spec() {
        let spec = |name: &str| get_at_edge(name.as_bytes()).expect("a command");
        assert_eq!(spec("set").propagation, Propagation::Set);
        assert_eq!(spec("pexpireat").propagation, Propagation::Expiry);
        assert_eq!(spec("lpush").propagation, Propagation::AsIs);
        // PING is the engine's, answered by the server: its role in a
        // master's stream is the server's.
        assert_eq!(spec("ping").in_stream, InStream::Skip);
        assert!(matches!(spec("ping").run, Run::Server(_)));
        assert_eq!(spec("select").in_stream, InStream::SelectDb);
        for name in ["multi", "exec", "discard"] {
            assert_eq!(spec(name).in_stream, InStream::Transaction, "{name}");
        }
        assert_eq!(spec("replconf").in_stream, InStream::Replconf);
        assert_eq!(spec("set").in_stream, InStream::Apply);
        assert_eq!(spec("auth").redaction, Redaction::Arguments);
        assert_eq!(spec("hello").redaction, Redaction::HelloAuth);
        assert!(matches!(
            spec("brpop").run,
            Run::Blocking(BlockingPop::List { left: false })
        ));
        assert!(matches!(
            spec("bzmpop").run,
            Run::Blocking(BlockingPop::ZsetMany)
        ));
        assert!(matches!(
            spec("psync").run,
            Run::ReplicaSync(Handover::Psync)
        ));
        assert!(matches!(
            spec("_fetch_file").run,
            Run::KvrocksMaster(KvrocksCommand::FetchFile)
        ));
        use crate::frame::args_of as words;
        assert!(spec("script").request_has(&words(&["script", "KILL"]), Flags::ALLOW_BUSY));
        assert!(!spec("script").request_has(&words(&["script", "flush"]), Flags::ALLOW_BUSY));
        assert!(spec("function").request_has(&words(&["function", "stats"]), Flags::ALLOW_BUSY));
    }

    #[test]
    fn shapes_follow_the_arguments() {
        use crate::frame::args_of as words;
        let shape = |w: &[&str]| get(w[0].as_bytes()).expect("known").shape(&words(w));
        assert_eq!(
            shape(&["zrange", "k", "0", "1", "WithScores"]),
            Shape::ScoredPairs
        );
        assert_eq!(shape(&["zrange", "k", "0", "1"]), Shape::Plain);
        assert_eq!(shape(&["zpopmin", "k"]), Shape::ScoredFlat);
        assert_eq!(shape(&["zpopmin", "k", "2"]), Shape::ScoredPairs);
        assert_eq!(shape(&["config", "GET", "x"]), Shape::Map);
        assert_eq!(shape(&["config", "set", "x", "y"]), Shape::Plain);
        assert_eq!(shape(&["CLIENT", "list"]), Shape::Verbatim);
        assert_eq!(shape(&["smembers", "k"]), Shape::Set);
    }
}
