//! PING HELLO AUTH SELECT RESET TIME SHUTDOWN FUNCTION.

use bytes::Bytes;
use std::time::{SystemTime, UNIX_EPOCH};

use redcodec_engine::Reply;

use crate::config::NamespaceMode;
use crate::reply::Protocol;
use crate::session::Session;
use crate::state::Shared;

/// Redis' version, as HELLO and INFO report it.
pub const REDIS_VERSION: &str = "7.0.15";

const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// `PING [message]`; `None` lets nothing else answer (never).
pub fn ping(session: &Session, args: &[Bytes]) -> Option<Reply> {
    if session.subscribed_resp2() && args.len() <= 2 {
        // Redis' pingCommand for a subscribed RESP2 connection.
        let message = args.get(1).map_or_else(Vec::new, |m| m.to_vec());
        return Some(Reply::Array(vec![
            Reply::bulk("pong"),
            Reply::Bulk(message),
        ]));
    }
    Some(match args.len() {
        1 => Reply::Status("PONG".into()),
        2 => Reply::Bulk(args[1].to_vec()),
        _ => Reply::error("ERR wrong number of arguments for 'ping' command"),
    })
}

/// Checks a password (for the `default` user): the server's password,
/// or a namespace token, which also selects its namespace.
fn authenticate(shared: &Shared, session: &mut Session, user: &[u8], pass: &[u8]) -> Reply {
    if user != b"default" {
        return Reply::error(WRONGPASS);
    }
    let config = &shared.config;
    if config.namespaces == NamespaceMode::Tokens {
        if let Some(ns) = shared.namespace_tokens.namespace_of(pass) {
            session.authenticated = true;
            session.namespace = ns;
            return Reply::ok();
        }
    }
    match shared.requirepass() {
        Some(p) if p.as_bytes() == pass => {
            session.authenticated = true;
            session.namespace = config.default_namespace.clone();
            Reply::ok()
        }
        Some(_) => Reply::error(WRONGPASS),
        None if shared.namespace_tokens.is_empty() => Reply::error(
            "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
        ),
        None => Reply::error(WRONGPASS),
    }
}

/// `AUTH [username] password`.
pub fn auth(shared: &Shared, session: &mut Session, args: &[Bytes]) -> Reply {
    match args.len() {
        2 => authenticate(shared, session, b"default", &args[1]),
        3 => authenticate(shared, session, &args[1], &args[2]),
        _ => Reply::error("ERR syntax error"),
    }
}

/// HELLO [protover [AUTH username password] [SETNAME clientname]].
pub fn hello(shared: &Shared, session: &mut Session, args: &[Bytes]) -> Reply {
    let mut protocol = session.protocol;
    if let Some(ver) = args.get(1) {
        match std::str::from_utf8(ver)
            .ok()
            .and_then(|v| v.parse::<i64>().ok())
        {
            Some(2) => protocol = Protocol::Resp2,
            Some(3) => protocol = Protocol::Resp3,
            Some(_) => return Reply::error("NOPROTO unsupported protocol version"),
            None => return Reply::error("ERR Protocol version is not an integer or out of range"),
        }
    }
    let mut i = 2;
    let mut name = None;
    while i < args.len() {
        let more = args.len() - i - 1;
        let opt = String::from_utf8_lossy(&args[i]).to_ascii_lowercase();
        if opt == "auth" && more >= 2 {
            let reply = authenticate(shared, session, &args[i + 1], &args[i + 2]);
            if reply.is_error() {
                return reply;
            }
            i += 3;
        } else if opt == "setname" && more >= 1 {
            name = Some(args[i + 1].clone());
            i += 2;
        } else {
            return Reply::error(format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(&args[i])
            ));
        }
    }
    if !session.authenticated {
        return Reply::error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time");
    }
    if let Some(name) = name {
        if let Err(e) = super::client::set_name(session, &name) {
            return e;
        }
    }
    session.set_protocol(protocol);
    if session.subscriptions > 0 {
        // Its messages from now on in the new protocol.
        shared.pubsub.set_protocol(session.info.id, protocol);
    }
    Reply::Array(vec![
        Reply::bulk("server"),
        Reply::bulk("redis"),
        Reply::bulk("version"),
        Reply::bulk(REDIS_VERSION),
        Reply::bulk("proto"),
        Reply::Integer(protocol.version()),
        Reply::bulk("id"),
        Reply::Integer(session.info.id as i64),
        Reply::bulk("mode"),
        Reply::bulk("standalone"),
        Reply::bulk("role"),
        Reply::bulk("master"),
        Reply::bulk("modules"),
        Reply::Array(Vec::new()),
    ])
}

/// What SELECT to another database inside a script answers where each
/// database is an engine of its own: the script holds only its caller's.
pub const SELECT_IN_SCRIPT: &str =
    "ERR SELECT inside a script cannot leave the caller's database on this format (a store per database)";

/// SELECT index, as the real system of the format answers it.
///
/// Inside a script (Redis 7 lets scripts SELECT, for the rest of the
/// script only) it changes nothing the caller keeps: where every index
/// names the one keyspace (Kvrocks' namespaces, Pika's database 0) the
/// script goes on in it, as Redis' would in the database it chose; where
/// each index is a store of its own (Ardb's), an index other than the
/// caller's is refused ([`SELECT_IN_SCRIPT`]), as the script runs while
/// holding the caller's store alone.
pub fn select(shared: &Shared, session: &mut Session, args: &[Bytes]) -> Reply {
    let Some(n) = std::str::from_utf8(&args[1])
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
    else {
        return Reply::error("ERR value is not an integer or out of range");
    };
    let in_range = (0..16).contains(&n);
    let in_script = crate::monitor::ScriptCalls::active();
    match shared.config.namespaces {
        NamespaceMode::DbIndex if in_range && in_script => {
            if n == session.db {
                Reply::ok()
            } else {
                Reply::error(SELECT_IN_SCRIPT)
            }
        }
        NamespaceMode::DbIndex if in_range => {
            session.namespace = n.to_string();
            session.set_db(n);
            Reply::ok()
        }
        NamespaceMode::Tokens if in_range => Reply::ok(),
        NamespaceMode::None if n == 0 => Reply::ok(),
        _ => Reply::error("ERR DB index is out of range"),
    }
}

/// RESET: back to a new connection's state.
pub fn reset(shared: &Shared, session: &mut Session) -> Reply {
    session.discard(shared);
    session.unwatch(shared);
    shared.monitors.stop(session.info.id);
    shared.pubsub.forget(session.info.id);
    session.subscriptions = 0;
    session.info.live.lock().subscriptions = (0, 0, 0);
    session.set_protocol(Protocol::Resp2);
    session.namespace = shared.config.default_namespace.clone();
    session.set_db(0);
    session.authenticated = shared.requirepass().is_none();
    let _ = super::client::set_name(session, b"");
    Reply::Status("RESET".into())
}

/// TIME: seconds and microseconds.
pub fn time() -> Reply {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Reply::Array(vec![
        Reply::bulk(now.as_secs().to_string()),
        Reply::bulk(now.subsec_micros().to_string()),
    ])
}

/// `SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE]`: no reply; the server stops.
pub fn shutdown(shared: &Shared, session: &mut Session, args: &[Bytes]) -> Reply {
    for a in &args[1..] {
        let opt = String::from_utf8_lossy(a).to_ascii_lowercase();
        if !matches!(opt.as_str(), "nosave" | "save" | "now" | "force") {
            return Reply::error("ERR syntax error");
        }
    }
    shared.begin_shutdown();
    session.close = true;
    session.silent = true;
    Reply::ok()
}
