//! `NAMESPACE GET|ADD|SET|DEL`, Kvrocks' command over its namespace tokens
//! ([`crate::namespace_tokens`]), with its refusals and reply texts
//! (`src/server/namespace.cc`, `src/commands/cmd_server.cc`); the tokens
//! are kept in the configuration file, and with namespace replication in
//! the store and sent to replicas ([`crate::namespace_replication`]).

use redcodec_engine::Reply;

use crate::config::NamespaceMode;
use crate::namespace_replication;
use crate::session::Session;
use crate::state::Shared;

/// Why a namespace cannot be changed, in Kvrocks' words, or `None`.
fn refused_change(shared: &Shared, ns: &str, token: Option<&str>) -> Option<&'static str> {
    let config = &shared.config;
    let replication = shared.replicates_namespace_tokens();
    let requirepass = shared.requirepass();
    if let Some(token) = token {
        if ns.len() > 255 {
            return Some("size exceed limit 255");
        }
        if ns.as_bytes().last() == Some(&0x7f) {
            return Some("namespace contain illegal letter");
        }
        if requirepass.is_none() {
            return Some("forbidden to add namespace when requirepass was empty");
        }
        if shared.cluster.enabled() {
            return Some("forbidden to add namespace when cluster mode was enabled");
        }
        if config.config_file.is_none() && !replication {
            return Some(CANNOT_MODIFY);
        }
        if ns == config.default_namespace {
            return Some("forbidden to add the default namespace");
        }
        if Some(token) == requirepass.as_deref()
            || Some(token) == config.replica.masterauth.as_deref()
        {
            return Some("the token is duplicated with requirepass or masterauth");
        }
        return None;
    }
    if ns == config.default_namespace {
        return Some("forbidden to delete the default namespace");
    }
    (config.config_file.is_none() && !replication).then_some(CANNOT_MODIFY)
}

/// Kvrocks' refusal where the tokens could not be kept.
const CANNOT_MODIFY: &str = "modify namespace requires the server is running with a configuration file or enabled namespace replication";

/// `NAMESPACE GET ns|*`, `SET ns token`, `ADD ns token`, `DEL ns`:
/// Kvrocks' command, for connections of the default namespace (its
/// admins). A change is written to the configuration file (every
/// `namespace.` line replaced, as Kvrocks' `Config::Rewrite` does) before
/// it is answered; one that cannot be written is undone.
pub fn namespace(shared: &Shared, session: &Session, args: &[bytes::Bytes]) -> Reply {
    if shared.config.namespaces != NamespaceMode::Tokens {
        return Reply::error("ERR namespaces are Kvrocks' (serve --format kvrocks)");
    }
    if !session.is_admin(shared) {
        return Reply::error(super::flush_all::ADMIN_REQUIRED);
    }
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    if sub != "get" && shared.replica.is_replica() && shared.replicates_namespace_tokens() {
        return Reply::error(namespace_replication::READ_ONLY);
    }
    let word = |i: usize| String::from_utf8_lossy(&args[i]).into_owned();
    let tokens = &shared.namespace_tokens;
    match (sub.as_str(), args.len()) {
        ("get", 3) if args[2].as_ref() == b"*" => {
            let mut out = Vec::new();
            for (ns, token) in tokens.list() {
                out.push(Reply::bulk(ns));
                out.push(Reply::bulk(token));
            }
            out.push(Reply::bulk(shared.config.default_namespace.clone()));
            out.push(Reply::bulk(shared.requirepass().unwrap_or_default()));
            Reply::Array(out)
        }
        ("get", 3) => tokens.token_of(&args[2]).map_or(Reply::Nil, Reply::bulk),
        ("add", 4) => change(shared, &word(2), Some(&word(3)), true),
        ("set", 4) => change(shared, &word(2), Some(&word(3)), false),
        ("del", 3) => change(shared, &word(2), None, false),
        _ => Reply::error("ERR NAMESPACE subcommand must be one of GET, SET, DEL, ADD"),
    }
}

/// Gives `ns` the token `token` (`None`: removes `ns`; `add`: only a
/// namespace and a token not yet known), writes the configuration file
/// and, with namespace replication, the store, sends the change to the
/// replicas, and answers. The tokens stay locked until then, so changes
/// reach the file, the store and the replicas in the order they are made.
fn change(shared: &Shared, ns: &str, token: Option<&str>, add: bool) -> Reply {
    let mut tokens = shared.namespace_tokens.changing();
    let at = tokens.iter().position(|(n, _)| n == ns);
    if add {
        match at.map(|at| tokens[at].1.as_str()) {
            Some(old) if Some(old) == token => return Reply::ok(),
            Some(_) => return Reply::error("ERR the namespace already exists"),
            None if tokens.iter().any(|(_, t)| Some(t.as_str()) == token) => {
                return Reply::error("ERR the token already exists")
            }
            None => {}
        }
    }
    if let Some(why) = refused_change(shared, ns, token) {
        return Reply::error(format!("ERR {why}"));
    }
    let before = tokens.clone();
    match (token, at) {
        (Some(token), _) => {
            // A token names one namespace (Kvrocks' map is keyed by it).
            tokens.retain(|(n, t)| n != ns && t != token);
            tokens.push((ns.to_string(), token.to_string()));
        }
        (None, Some(at)) => {
            tokens.remove(at);
        }
        (None, None) => return Reply::error("ERR the namespace was not found"),
    }
    match namespace_replication::rewrite(shared, &tokens) {
        Ok(()) => {
            namespace_replication::propagate(shared, ns, token);
            Reply::ok()
        }
        Err(e) => {
            *tokens = before;
            Reply::Error(e)
        }
    }
}
