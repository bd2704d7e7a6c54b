//! COMMAND, COMMAND COUNT|LIST|INFO|DOCS, from the engine's command table
//! and the server's own commands.

use redcodec_engine::dispatch::Keys;
use redcodec_engine::Reply;

use super::{flags, SERVER_COMMANDS};
use crate::state::Shared;

/// One command as COMMAND lists it: name, arity, keys.
struct Entry {
    name: &'static str,
    arity: i32,
    keys: Keys,
}

fn entries(shared: &Shared) -> Vec<Entry> {
    let mut all: Vec<Entry> = shared
        .commands
        .iter()
        .map(|(name, spec)| Entry {
            name,
            arity: spec.arity,
            keys: spec.keys.clone(),
        })
        .collect();
    for &(name, arity) in SERVER_COMMANDS {
        let keys = match name {
            "blpop" | "brpop" | "bzpopmin" | "bzpopmax" | "watch" => Keys::All,
            "blmove" | "brpoplpush" => Keys::FirstTwo,
            "blmpop" | "bzmpop" => Keys::None,
            _ => Keys::None,
        };
        all.push(Entry { name, arity, keys });
    }
    all.sort_by_key(|e| e.name);
    all
}

/// Redis' first key, last key and step for a key spec.
fn key_positions(keys: &Keys) -> (i64, i64, i64) {
    match keys {
        Keys::None | Keys::Everything => (0, 0, 0),
        Keys::First | Keys::DestNumKeys | Keys::Sort => (1, 1, 1),
        Keys::NumKeys => (0, 0, 0),
        Keys::FirstTwo => (1, 2, 1),
        Keys::All => (1, -1, 1),
        Keys::Every(step) => (1, -1, *step as i64),
    }
}

fn info_entry(e: &Entry) -> Reply {
    let (first, last, step) = key_positions(&e.keys);
    let flag = if flags::is_write(e.name) {
        "write"
    } else if first > 0 {
        "readonly"
    } else {
        "fast"
    };
    Reply::Array(vec![
        Reply::bulk(e.name),
        Reply::Integer(i64::from(e.arity)),
        Reply::Array(vec![Reply::Status(flag.into())]),
        Reply::Integer(first),
        Reply::Integer(last),
        Reply::Integer(step),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
    ])
}

fn docs_entry(e: &Entry) -> [Reply; 2] {
    [
        Reply::bulk(e.name),
        Reply::Array(vec![
            Reply::bulk("summary"),
            Reply::bulk(""),
            Reply::bulk("since"),
            Reply::bulk("1.0.0"),
            Reply::bulk("group"),
            Reply::bulk("generic"),
        ]),
    ]
}

/// COMMAND [COUNT | LIST | INFO name… | DOCS name…].
pub fn command(shared: &Shared, args: &[Vec<u8>]) -> Reply {
    let all = entries(shared);
    let Some(sub) = args.get(1) else {
        return Reply::Array(all.iter().map(info_entry).collect());
    };
    let wanted = |e: &Entry| {
        args[2..]
            .iter()
            .any(|n| n.eq_ignore_ascii_case(e.name.as_bytes()))
    };
    match String::from_utf8_lossy(sub).to_ascii_lowercase().as_str() {
        "count" if args.len() == 2 => Reply::Integer(all.len() as i64),
        "list" => Reply::Array(all.iter().map(|e| Reply::bulk(e.name)).collect()),
        "info" if args.len() == 2 => Reply::Array(all.iter().map(info_entry).collect()),
        "info" => Reply::Array(
            args[2..]
                .iter()
                .map(|n| {
                    all.iter()
                        .find(|e| n.eq_ignore_ascii_case(e.name.as_bytes()))
                        .map_or(Reply::NilArray, info_entry)
                })
                .collect(),
        ),
        "docs" if args.len() == 2 => Reply::Array(all.iter().flat_map(docs_entry).collect()),
        "docs" => Reply::Array(
            all.iter()
                .filter(|e| wanted(e))
                .flat_map(docs_entry)
                .collect(),
        ),
        _ => Reply::error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try COMMAND HELP.",
            String::from_utf8_lossy(sub)
        )),
    }
}
