//! COMMAND, COMMAND COUNT|LIST|INFO|DOCS, from the command registry
//! ([`super::registry`]).

use bytes::Bytes;
use redcodec_engine::internals::dispatch::{Flags, Keys};
use redcodec_engine::internals::number::parse_i64;
use redcodec_engine::Reply;

use super::subcommands;
use crate::command_table;
use crate::state::Shared;

/// One command as COMMAND lists it: name, arity, key positions, its
/// flags, and a container's subcommands.
struct Entry {
    name: String,
    arity: i32,
    /// Redis' first key, last key and step.
    keys: (i64, i64, i64),
    flags: Vec<&'static str>,
    subcommands: Vec<Entry>,
}

fn entries() -> Vec<Entry> {
    let mut all: Vec<Entry> = command_table::table()
        .iter()
        .map(|spec| {
            let subcommands = spec.container.map_or_else(Vec::new, |c| {
                c.subcommands
                    .iter()
                    .map(|s| Entry {
                        name: format!("{}|{}", spec.name, s.name),
                        arity: s.arity,
                        keys: if s.key > 0 {
                            (s.key, s.key, 1)
                        } else {
                            (0, 0, 0)
                        },
                        flags: if s.key > 0 {
                            vec!["readonly"]
                        } else {
                            Vec::new()
                        },
                        subcommands: Vec::new(),
                    })
                    .collect()
            });
            let keys = key_positions(&spec.keys);
            Entry {
                name: spec.name.to_string(),
                arity: spec.arity,
                keys,
                flags: command_flags(spec, keys.0 > 0),
                subcommands,
            }
        })
        .collect();
    all.sort_by(|a, b| a.name.cmp(&b.name));
    all
}

/// Redis' first key, last key and step for a key spec (BLPOP's last key
/// is the one before its timeout: -2).
fn key_positions(keys: &Keys) -> (i64, i64, i64) {
    match keys {
        // A container's keys are its subcommands'.
        Keys::None | Keys::Everything | Keys::Second => (0, 0, 0),
        Keys::First | Keys::DestNumKeys | Keys::Sort | Keys::GeoRadius => (1, 1, 1),
        Keys::NumKeys | Keys::CountSecond => (0, 0, 0),
        Keys::FirstTwo => (1, 2, 1),
        Keys::All => (1, -1, 1),
        Keys::AllButLast => (1, -2, 1),
        Keys::AfterFirst => (2, -1, 1),
        Keys::Every(step) => (1, -1, *step as i64),
    }
}

/// Whether the keys are found in the arguments rather than at fixed
/// positions (a key count, `STORE`): Redis' `movablekeys`, which tells a
/// cluster client to ask `COMMAND GETKEYS` (or parse the count itself)
/// instead of trusting the first, last and step.
fn movable(keys: &Keys) -> bool {
    matches!(
        keys,
        Keys::NumKeys | Keys::CountSecond | Keys::DestNumKeys | Keys::Sort | Keys::GeoRadius
    )
}

/// The flags of Redis' COMMAND INFO that the registry knows: `write` for
/// the writes (the blocking pops included, as Redis flags them),
/// `readonly` for the other commands with keys (or reading the whole
/// keyspace) but WATCH and the scripts that may write, then those of
/// `blocking`, `noscript`, `loading`, `admin`, `no_auth`, `no_multi`,
/// `allow_busy` and `movablekeys` that apply. (Redis' `fast`, `denyoom`
/// and the like are not kept: no flag is reported that is not known.)
fn command_flags(spec: &crate::command_spec::Spec, has_keys: bool) -> Vec<&'static str> {
    let mut flags = Vec::new();
    if spec.container.is_some() && spec.arity != -1 {
        // A container's flags are its subcommands' (COMMAND, which also
        // runs alone, has its own).
        return flags;
    }
    let movable = movable(&spec.keys);
    if spec.has(Flags::WRITE) || spec.has(Flags::BLOCKING) || spec.has(Flags::SERVER_WRITE) {
        flags.push("write");
    } else if (has_keys || movable || spec.has(Flags::READS_KEYSPACE))
        && !spec.has(Flags::MAY_WRITE)
        && !spec.has(Flags::TRANSACTION)
        && !spec.has(Flags::PUBSUB)
    {
        // EVAL, EVALSHA and FCALL are neither (Redis flags them by what
        // the script declares); their `_RO` forms are read-only.
        flags.push("readonly");
    }
    for (flag, name) in [
        (Flags::BLOCKING, "blocking"),
        (Flags::NO_SCRIPT, "noscript"),
        (Flags::PUBSUB, "pubsub"),
        (Flags::LOADING, "loading"),
        (Flags::ADMIN, "admin"),
        (Flags::NO_AUTH, "no_auth"),
        (Flags::NO_MULTI, "no_multi"),
        (Flags::ALLOW_BUSY, "allow_busy"),
    ] {
        if spec.has(flag) {
            flags.push(name);
        }
    }
    if movable {
        flags.push("movablekeys");
    }
    flags
}

/// The entry named `name` in any case: a command, or a subcommand as
/// `container|sub` (Redis' `lookupCommandBySds`).
fn find<'a>(all: &'a [Entry], name: &[u8]) -> Option<&'a Entry> {
    let by_name = |entries: &'a [Entry], name: &[u8]| {
        entries
            .iter()
            .find(|e| name.eq_ignore_ascii_case(e.name.as_bytes()))
    };
    let mut parts = name.split(|&b| b == b'|');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(_), None, _) => by_name(all, name),
        (Some(container), Some(_), None) => by_name(&by_name(all, container)?.subcommands, name),
        _ => None,
    }
}

/// A command's entry of COMMAND INFO; a container's tenth element lists
/// its subcommands' entries, as Redis 7.0 lists them.
fn info_entry(e: &Entry) -> Reply {
    let (first, last, step) = e.keys;
    let flags = e.flags.iter().map(|f| Reply::Status((*f).into())).collect();
    Reply::Array(vec![
        Reply::bulk(e.name.as_str()),
        Reply::Integer(i64::from(e.arity)),
        Reply::Array(flags),
        Reply::Integer(first),
        Reply::Integer(last),
        Reply::Integer(step),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(e.subcommands.iter().map(info_entry).collect()),
    ])
}

fn docs_entry(e: &Entry) -> [Reply; 2] {
    [
        Reply::bulk(e.name.as_str()),
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

/// COMMAND [COUNT | LIST | INFO name… | DOCS name…] (the subcommand and
/// its arity checked before, by [`super::subcommands`], which answers
/// HELP).
pub fn command(_shared: &Shared, args: &[Bytes]) -> Reply {
    let all = entries();
    let Some(sub) = args.get(1) else {
        return Reply::Array(all.iter().map(info_entry).collect());
    };
    let wanted = |e: &Entry| {
        args[2..]
            .iter()
            .any(|n| n.eq_ignore_ascii_case(e.name.as_bytes()))
    };
    match String::from_utf8_lossy(sub).to_ascii_lowercase().as_str() {
        "count" => Reply::Integer(all.len() as i64),
        // Every command, each container followed by its subcommands.
        "list" => Reply::Array(
            all.iter()
                .flat_map(|e| std::iter::once(e).chain(&e.subcommands))
                .map(|e| Reply::bulk(e.name.as_str()))
                .collect(),
        ),
        "info" if args.len() == 2 => Reply::Array(all.iter().map(info_entry).collect()),
        "info" => Reply::Array(
            args[2..]
                .iter()
                .map(|n| find(&all, n).map_or(Reply::Nil, info_entry))
                .collect(),
        ),
        "docs" if args.len() == 2 => Reply::Array(all.iter().flat_map(docs_entry).collect()),
        "docs" => Reply::Array(
            all.iter()
                .filter(|e| wanted(e))
                .flat_map(docs_entry)
                .collect(),
        ),
        "getkeys" => getkeys(&args[2..]),
        _ => subcommands::syntax_error(args),
    }
}

/// COMMAND GETKEYS: the keys of the full command `words` (name first),
/// found by its key spec in the registry, with Redis 7.0's refusals: an
/// unknown command, one without keys, a wrong number of words, and a key
/// count that does not fit (a script's keys are optional: none then).
fn getkeys(words: &[Bytes]) -> Reply {
    let Some(spec) = command_table::get(&words[0]) else {
        return Reply::error("ERR Invalid command specified");
    };
    if matches!(spec.keys, Keys::None | Keys::Everything) {
        return Reply::error("ERR The command has no key arguments");
    }
    if !subcommands::arity_ok(spec.arity, words.len()) {
        return Reply::error("ERR Invalid number of arguments specified for command");
    }
    let argv: Vec<&[u8]> = words.iter().map(|w| &w[..]).collect();
    let count_at = match spec.keys {
        Keys::NumKeys => Some(1),
        Keys::DestNumKeys | Keys::CountSecond => Some(2),
        _ => None,
    };
    if let Some(at) = count_at {
        let fits = parse_i64(argv[at]).is_some_and(|n| n >= 1 && (n as usize) < argv.len() - at);
        if !fits && spec.has(Flags::SCRIPT) {
            return Reply::Array(Vec::new());
        }
        if !fits {
            return Reply::error("ERR Invalid arguments specified for command");
        }
    }
    Reply::Array(spec.keys.of(&argv).into_iter().map(Reply::bulk).collect())
}
