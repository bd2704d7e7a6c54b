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

use std::collections::HashMap;
use std::sync::LazyLock;

use redcodec_engine::internals::dispatch::{
    CommandSpec, CommandTable, Flags, Keys, Shape, ShapeRule,
};
use redcodec_engine::Reply;
use redcodec_formats::AnyCodec;

use super::subcommands;
use super::{
    client, command, config_commands, connection, flush_all, info, memory, move_key, object, save,
};
use crate::access::Access;
pub use crate::command_spec::{Run, ServerHandler, Spec};
pub use crate::command_table::Registry;
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
            };
            (name, spec)
        })
        .collect();
    for spec in server_specs() {
        match specs.get_mut(spec.name) {
            // The engine's metadata, answered by the server (PING, ECHO).
            Some(engine) => engine.run = spec.run,
            None => {
                specs.insert(spec.name, spec);
            }
        }
    }
    Registry::from_specs(specs.into_values().collect())
}

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
        keys: Keys::None,
        flags,
        reply_shape: ShapeRule::PLAIN,
        run,
        id: SpecId(0),
        container: subcommands::container(name),
        engine: None,
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
/// The blocking pops a script may not call.
const BLOCK: Flags = Flags::BLOCKING.with(Flags::NO_SCRIPT);

/// The commands the server answers itself (PING and ECHO keep the
/// engine's arity, keys and flags: only their [`Run`] is taken).
fn server_specs() -> Vec<Spec> {
    let sub = |subs: &'static [&'static str], then: Shape| ShapeRule::Subcommand { subs, then };
    vec![
        server("ping", -1, Flags::NONE, |_, se, _, _, a| {
            connection::ping(se, a).unwrap_or_else(Reply::ok)
        }),
        server("echo", 2, Flags::NONE, |_, _, _, _, a| {
            Reply::Bulk(a[1].clone())
        }),
        server(
            "hello",
            -1,
            PRE_AUTH.with(Flags::LOADING),
            |sh, se, _, _, a| connection::hello(sh, se, a),
        )
        .shaped(ShapeRule::Always(Shape::Map)),
        server(
            "auth",
            -2,
            PRE_AUTH.with(Flags::LOADING),
            |sh, se, _, _, a| connection::auth(sh, se, a),
        ),
        server(
            "monitor",
            1,
            NS.with(Flags::ADMIN).with(Flags::LOADING),
            |sh, se, _, _, _| crate::monitor::monitor(sh, se),
        ),
        server("flushall", -1, Flags::WRITE, flush_all::flush_all),
        server("move", 3, Flags::WRITE, |sh, se, ac, _, a| {
            move_key::move_key(sh, se, ac, a)
        })
        .keyed(Keys::First),
        server("select", 2, NS.with(Flags::LOADING), |sh, se, _, _, a| {
            connection::select(sh, se, a)
        }),
        server(
            "quit",
            -1,
            TX.with(Flags::NO_AUTH).with(Flags::LOADING),
            |_, se, _, _, _| {
                se.close = true;
                Reply::ok()
            },
        ),
        server(
            "reset",
            1,
            TX.with(Flags::NO_AUTH).with(Flags::LOADING),
            |sh, se, _, _, _| connection::reset(sh, se),
        ),
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
        .shaped(sub(&["info", "list"], Shape::Verbatim)),
        // Kvrocks' CLUSTER NODES, INFO and REPLICAS: `conn->VerbatimString`.
        server("cluster", -2, NS, |sh, se, _, _, a| {
            crate::cluster::cluster_commands::cluster(sh, se, a)
        })
        .shaped(sub(&["nodes", "info", "replicas"], Shape::Verbatim)),
        server("clusterx", -2, NS, |sh, se, _, _, a| {
            crate::cluster::cluster_commands::clusterx(sh, se, a)
        }),
        server(
            "applybatch",
            -2,
            Flags::WRITE.with(Flags::NO_MULTI).with(NS),
            |sh, se, _, _, a| crate::cluster::apply_batch::apply_batch(sh, se, a),
        ),
        server("asking", 1, Flags::NONE, link_flag),
        server("readonly", 1, Flags::NONE, link_flag),
        server("readwrite", 1, Flags::NONE, link_flag),
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
        }),
        server("script", -2, NS, |sh, _, _, _, a| {
            crate::scripting::script(sh, a)
        }),
        // `script numkeys key…`
        server("eval", -3, SCRIPT_RW, eval).keyed(Keys::CountSecond),
        server("evalsha", -3, SCRIPT_RW, eval).keyed(Keys::CountSecond),
        server("eval_ro", -3, SCRIPT, eval).keyed(Keys::CountSecond),
        server("evalsha_ro", -3, SCRIPT, eval).keyed(Keys::CountSecond),
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
        }),
        server("discard", 1, TX.with(Flags::LOADING), |sh, se, _, _, _| {
            se.discard(sh)
        }),
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
            NS.with(Flags::ALLOW_BUSY).with(Flags::LOADING),
            |sh, se, _, _, a| crate::master::replconf(sh, se, a),
        ),
        spec("wait", 3, NS, Run::Wait),
        spec(
            "exec",
            1,
            Flags::TRANSACTION.with(NS).with(Flags::LOADING),
            Run::Exec,
        ),
        spec("psync", -3, Flags::NO_MULTI.with(NS), Run::ReplicaSync),
        spec("sync", 1, Flags::NO_MULTI.with(NS), Run::ReplicaSync),
        spec("blpop", -3, BLOCK, Run::Blocking).keyed(Keys::AllButLast),
        spec("brpop", -3, BLOCK, Run::Blocking).keyed(Keys::AllButLast),
        spec("bzpopmin", -3, BLOCK, Run::Blocking)
            .keyed(Keys::AllButLast)
            .shaped(ShapeRule::Always(Shape::KeyScored)),
        spec("bzpopmax", -3, BLOCK, Run::Blocking)
            .keyed(Keys::AllButLast)
            .shaped(ShapeRule::Always(Shape::KeyScored)),
        spec("blmove", 6, BLOCK, Run::Blocking).keyed(Keys::FirstTwo),
        spec("brpoplpush", 4, BLOCK, Run::Blocking).keyed(Keys::FirstTwo),
        // Scripts may call BLMPOP and BZMPOP (not as writes of the engine).
        spec(
            "blmpop",
            -5,
            Flags::BLOCKING.with(Flags::SERVER_WRITE),
            Run::Blocking,
        )
        .keyed(Keys::CountSecond),
        spec(
            "bzmpop",
            -5,
            Flags::BLOCKING.with(Flags::SERVER_WRITE),
            Run::Blocking,
        )
        .keyed(Keys::CountSecond)
        .shaped(ShapeRule::Always(Shape::KeyScoredPairs)),
        // Kvrocks' replication protocol: arity and authentication are
        // checked by its handler, with Kvrocks' texts.
        spec("_db_name", -1, Flags::KVROCKS_MASTER, Run::KvrocksMaster),
        spec("_fetch_meta", -1, Flags::KVROCKS_MASTER, Run::KvrocksMaster),
        spec("_fetch_file", -1, Flags::KVROCKS_MASTER, Run::KvrocksMaster),
    ]
}

fn link_flag(sh: &Shared, se: &mut Session, _: &Access<'_>, spec: &Spec, _: &[Vec<u8>]) -> Reply {
    crate::cluster::cluster_commands::link_flag(sh, se, spec.name)
}

fn eval(sh: &Shared, se: &mut Session, ac: &Access<'_>, spec: &Spec, a: &[Vec<u8>]) -> Reply {
    crate::scripting::eval(sh, se, ac, spec.name, a)
}

fn fcall(sh: &Shared, se: &mut Session, ac: &Access<'_>, spec: &Spec, a: &[Vec<u8>]) -> Reply {
    crate::scripting::fcall(sh, se, ac, spec.name, a)
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
    fn shapes_follow_the_arguments() {
        let words =
            |w: &[&str]| -> Vec<Vec<u8>> { w.iter().map(|w| w.as_bytes().to_vec()).collect() };
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
