//! COMMAND, COMMAND COUNT|LIST|INFO|DOCS|GETKEYS, from the command
//! registry ([`super::registry`]) and Redis' ACL categories
//! ([`super::acl_categories`]).

use bytes::Bytes;
use redcodec_engine::internals::dispatch::{Flags, Keys};
use redcodec_engine::internals::number::parse_i64;
use redcodec_engine::Reply;

use super::acl_categories::REDIS_CATEGORIES;
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
    /// Its ACL categories (`@write`, `@string`…).
    categories: Vec<&'static str>,
    subcommands: Vec<Entry>,
}

fn entries() -> Vec<Entry> {
    let mut all: Vec<Entry> = command_table::table()
        .iter()
        .map(|spec| {
            let subcommands = spec.container.map_or_else(Vec::new, |c| {
                c.subcommands
                    .iter()
                    .map(|s| {
                        let flags = if s.key > 0 {
                            vec!["readonly"]
                        } else {
                            Vec::new()
                        };
                        let name = format!("{}|{}", spec.name, s.name);
                        Entry {
                            categories: categories(&name, &flags),
                            name,
                            arity: s.arity,
                            keys: if s.key > 0 {
                                (s.key, s.key, 1)
                            } else {
                                (0, 0, 0)
                            },
                            flags,
                            subcommands: Vec::new(),
                        }
                    })
                    .collect()
            });
            let keys = key_positions(&spec.keys);
            let flags = command_flags(spec, keys.0 > 0);
            Entry {
                name: spec.name.to_string(),
                arity: spec.arity,
                keys,
                categories: categories(spec.name, &flags),
                flags,
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

/// The ACL categories of the command or subcommand `name`: Redis' own
/// ([`acl_categories`]); for a command Redis does not have, those its
/// `flags` imply, as Redis' `setImplicitACLCategories` adds them.
fn categories(name: &str, flags: &[&str]) -> Vec<&'static str> {
    if let Ok(at) = REDIS_CATEGORIES.binary_search_by(|(n, _)| (*n).cmp(name)) {
        return REDIS_CATEGORIES[at].1.to_vec();
    }
    let mut implied: Vec<&'static str> = [
        ("write", &["@write"][..]),
        ("readonly", &["@read"]),
        ("admin", &["@admin", "@dangerous"]),
        ("pubsub", &["@pubsub"]),
        ("blocking", &["@blocking"]),
    ]
    .iter()
    .filter(|(flag, _)| flags.contains(flag))
    .flat_map(|(_, cats)| cats.iter().copied())
    .collect();
    implied.push("@slow");
    implied
}

/// COMMAND LIST `[FILTERBY MODULE name | ACLCAT category | PATTERN glob]`
/// (Redis' `commandListCommand`): every command and subcommand, or those
/// the filter keeps (no module is loaded here, so MODULE keeps none).
fn list(all: &[Entry], options: &[Bytes]) -> Reply {
    let keep: Box<dyn Fn(&Entry) -> bool> = match options {
        [] => Box::new(|_| true),
        [by, kind, arg] if by.eq_ignore_ascii_case(b"filterby") => {
            match String::from_utf8_lossy(kind).to_ascii_lowercase().as_str() {
                "module" => Box::new(|_| false),
                "aclcat" => {
                    let wanted = format!("@{}", String::from_utf8_lossy(arg));
                    Box::new(move |e| e.categories.iter().any(|c| c.eq_ignore_ascii_case(&wanted)))
                }
                "pattern" => {
                    Box::new(|e| redcodec_protocol::glob::matches(arg, e.name.as_bytes(), true))
                }
                _ => return Reply::error("ERR syntax error"),
            }
        }
        _ => return Reply::error("ERR syntax error"),
    };
    Reply::Array(
        all.iter()
            .flat_map(|e| std::iter::once(e).chain(&e.subcommands))
            .filter(|e| keep(e))
            .map(|e| Reply::bulk(e.name.as_str()))
            .collect(),
    )
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
        Reply::Array(
            e.categories
                .iter()
                .map(|c| Reply::Status((*c).into()))
                .collect(),
        ),
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
        "list" => list(&all, &args[2..]),
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::frame::args_of as args;

    fn names(reply: Reply) -> Vec<String> {
        let Reply::Array(items) = reply else {
            panic!("an array: {reply:?}");
        };
        items
            .into_iter()
            .map(|i| match i {
                Reply::Bulk(b) => String::from_utf8(b).expect("a name"),
                other => panic!("a name: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn redis_categories_are_sorted_and_name_commands_served_here() {
        crate::commands::install();
        let all = entries();
        for pair in REDIS_CATEGORIES.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
        for (name, _) in REDIS_CATEGORIES {
            assert!(
                find(&all, name.as_bytes()).is_some(),
                "{name} is not served"
            );
        }
        let set = find(&all, b"set").expect("SET");
        assert_eq!(set.categories, ["@write", "@string", "@slow"]);
        // Kvrocks' CAS is not Redis': the categories its flags imply.
        let cas = find(&all, b"cas").expect("CAS");
        assert_eq!(cas.categories, ["@write", "@slow"]);
    }

    #[test]
    fn command_list_filters_as_redis_does() {
        crate::commands::install();
        let all = entries();
        let list = |words: &[&str]| list(&all, &args(words));
        assert_eq!(names(list(&["filterby", "pattern", "set"])), ["set"]);
        let config = names(list(&["FILTERBY", "PATTERN", "config|*re*"]));
        assert_eq!(config, ["config|resetstat", "config|rewrite"]);
        let scripting = names(list(&["filterby", "aclcat", "Scripting"]));
        assert!(scripting.contains(&"eval".to_string()));
        assert!(scripting.contains(&"script|kill".to_string()));
        assert!(!scripting.contains(&"set".to_string()));
        assert!(names(list(&["filterby", "aclcat", "nope"])).is_empty());
        assert!(names(list(&["filterby", "module", "any"])).is_empty());
        for bad in [
            &["bad_arg"][..],
            &["filterby", "bad_arg"],
            &["filterby", "x", "y"],
        ] {
            assert_eq!(list(bad), Reply::error("ERR syntax error"));
        }
    }
}
