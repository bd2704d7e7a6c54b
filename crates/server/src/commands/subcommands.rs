//! The container commands the server answers (CLIENT, COMMAND, CONFIG,
//! FUNCTION, MEMORY, OBJECT, PUBSUB, SLOWLOG) and the subcommands it serves, each with
//! Redis 7.0.15's arity and its lines of Redis' `<CONTAINER> HELP`.
//!
//! This one table decides, before a command runs or is queued, what Redis
//! 7.0 decides in `commandCheckExistence` and `commandCheckArity`: an
//! unknown subcommand, a subcommand with the wrong number of arguments.
//! INFO commandstats counts under its names (`config|get`), COMMAND INFO
//! and COMMAND LIST report them, and `<CONTAINER> HELP` prints the help
//! lines of the subcommands listed here. A subcommand Redis has and the
//! server does not serve (CLIENT TRACKING, FUNCTION LOAD…) is not listed:
//! the server calls it unknown.

use bytes::Bytes;
use redcodec_engine::Reply;

/// A subcommand the server serves.
pub struct Subcommand {
    /// Lower-case name, as Redis names it after the `|` (`get`).
    pub name: &'static str,
    /// Redis' arity, the container's name and the subcommand's included
    /// (`-n`: at least n).
    pub arity: i32,
    /// The position of its key (OBJECT ENCODING's 2), 0 without one.
    pub key: i64,
    /// Its lines in Redis 7.0.15's `<CONTAINER> HELP` (none for the
    /// subcommands Redis 7.0 lacks, and for HELP itself).
    pub help: &'static [&'static str],
}

/// A container command and the subcommands the server serves, in the
/// order of Redis' `<CONTAINER> HELP`.
pub struct Container {
    /// Lower-case name (`config`).
    pub name: &'static str,
    /// The help lines for the container without a subcommand (COMMAND's).
    pub help: &'static [&'static str],
    /// Its subcommands.
    pub subcommands: &'static [Subcommand],
}

const fn sub(
    name: &'static str,
    arity: i32,
    key: i64,
    help: &'static [&'static str],
) -> Subcommand {
    Subcommand {
        name,
        arity,
        key,
        help,
    }
}

/// Whether `argc` words (name included) fit `arity` (`-n`: at least n).
pub fn arity_ok(arity: i32, argc: usize) -> bool {
    let argc = argc as i32;
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}

/// HELP, served by every container.
const HELP: Subcommand = sub("help", 2, 0, &[]);

/// Every container command the server answers.
pub const CONTAINERS: &[Container] = &[
    Container {
        name: "client",
        help: &[],
        subcommands: &[
            sub(
                "getname",
                2,
                0,
                &["GETNAME", "    Return the name of the current connection."],
            ),
            sub(
                "id",
                2,
                0,
                &["ID", "    Return the ID of the current connection."],
            ),
            sub(
                "info",
                2,
                0,
                &[
                    "INFO",
                    "    Return information about the current client connection.",
                ],
            ),
            sub(
                "kill",
                -3,
                0,
                &[
                    "KILL <ip:port>",
                    "    Kill connection made from <ip:port>.",
                    "KILL <option> <value> [<option> <value> [...]]",
                    "    Kill connections. Options are:",
                    "    * ADDR (<ip:port>|<unixsocket>:0)",
                    "      Kill connections made from the specified address",
                    "    * LADDR (<ip:port>|<unixsocket>:0)",
                    "      Kill connections made to specified local address",
                    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
                    "      Kill connections by type.",
                    "    * USER <username>",
                    "      Kill connections authenticated by <username>.",
                    "    * SKIPME (YES|NO)",
                    "      Skip killing current connection (default: yes).",
                ],
            ),
            sub(
                "list",
                -2,
                0,
                &[
                    "LIST [options ...]",
                    "    Return information about client connections. Options:",
                    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
                    "      Return clients of specified type.",
                ],
            ),
            sub(
                "unpause",
                2,
                0,
                &["UNPAUSE", "    Stop the current client pause, resuming traffic."],
            ),
            sub(
                "pause",
                -3,
                0,
                &[
                    "PAUSE <timeout> [WRITE|ALL]",
                    "    Suspend all, or just write, clients for <timeout> milliseconds.",
                ],
            ),
            sub(
                "reply",
                3,
                0,
                &[
                    "REPLY (ON|OFF|SKIP)",
                    "    Control the replies sent to the current connection.",
                ],
            ),
            sub(
                "setname",
                3,
                0,
                &[
                    "SETNAME <name>",
                    "    Assign the name <name> to the current connection.",
                ],
            ),
            sub(
                "unblock",
                -3,
                0,
                &[
                    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
                    "    Unblock the specified blocked client.",
                ],
            ),
            sub(
                "no-evict",
                3,
                0,
                &[
                    "NO-EVICT (ON|OFF)",
                    "    Protect current client connection from eviction.",
                ],
            ),
            // Redis 7.2's.
            sub("setinfo", 4, 0, &[]),
            sub("no-touch", 3, 0, &[]),
            HELP,
        ],
    },
    Container {
        name: "command",
        help: &[
            "(no subcommand)",
            "    Return details about all Redis commands.",
        ],
        subcommands: &[
            sub(
                "count",
                2,
                0,
                &[
                    "COUNT",
                    "    Return the total number of commands in this Redis server.",
                ],
            ),
            sub(
                "list",
                -2,
                0,
                &[
                    "LIST",
                    "    Return a list of all commands in this Redis server.",
                ],
            ),
            sub(
                "info",
                -2,
                0,
                &[
                    "INFO [<command-name> ...]",
                    "    Return details about multiple Redis commands.",
                    "    If no command names are given, documentation details for all",
                    "    commands are returned.",
                ],
            ),
            sub(
                "docs",
                -2,
                0,
                &[
                    "DOCS [<command-name> ...]",
                    "    Return documentation details about multiple Redis commands.",
                    "    If no command names are given, documentation details for all",
                    "    commands are returned.",
                ],
            ),
            sub(
                "getkeys",
                -4,
                0,
                &[
                    "GETKEYS <full-command>",
                    "    Return the keys from a full Redis command.",
                ],
            ),
            HELP,
        ],
    },
    Container {
        name: "config",
        help: &[],
        subcommands: &[
            sub(
                "get",
                -3,
                0,
                &[
                    "GET <pattern>",
                    "    Return parameters matching the glob-like <pattern> and their values.",
                ],
            ),
            sub(
                "set",
                -4,
                0,
                &[
                    "SET <directive> <value>",
                    "    Set the configuration <directive> to <value>.",
                ],
            ),
            sub(
                "resetstat",
                2,
                0,
                &[
                    "RESETSTAT",
                    "    Reset statistics reported by the INFO command.",
                ],
            ),
            sub(
                "rewrite",
                2,
                0,
                &["REWRITE", "    Rewrite the configuration file."],
            ),
            HELP,
        ],
    },
    Container {
        name: "function",
        help: &[],
        subcommands: &[
            sub(
                "load",
                -3,
                0,
                &[
                    "LOAD [REPLACE] <FUNCTION CODE>",
                    "    Create a new library with the given library name and code.",
                ],
            ),
            sub(
                "delete",
                3,
                0,
                &["DELETE <LIBRARY NAME>", "    Delete the given library."],
            ),
            sub(
                "list",
                -2,
                0,
                &[
                    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
                    "    Return general information on all the libraries:",
                    "    * Library name",
                    "    * The engine used to run the Library",
                    "    * Library description",
                    "    * Functions list",
                    "    * Library code (if WITHCODE is given)",
                    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
                ],
            ),
            sub(
                "stats",
                2,
                0,
                &[
                    "STATS",
                    "    Return information about the current function running:",
                    "    * Function name",
                    "    * Command used to run the function",
                    "    * Duration in MS that the function is running",
                    "    If no function is running, return nil",
                    "    In addition, returns a list of available engines.",
                ],
            ),
            sub(
                "kill",
                2,
                0,
                &["KILL", "    Kill the current running function."],
            ),
            sub(
                "flush",
                -2,
                0,
                &[
                    "FLUSH [ASYNC|SYNC]",
                    "    Delete all the libraries.",
                    "    When called without the optional mode argument, the behavior is determined by the",
                    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
                    "    * ASYNC: Asynchronously flush the libraries.",
                    "    * SYNC: Synchronously flush the libraries.",
                ],
            ),
            sub(
                "dump",
                2,
                0,
                &[
                    "DUMP",
                    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
                ],
            ),
            sub(
                "restore",
                -3,
                0,
                &[
                    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
                    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
                    "    control how to handle existing libraries (default APPEND):",
                    "    * FLUSH: delete all existing libraries.",
                    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
                    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
                    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
                    "      in case of functions name collision with another library).",
                ],
            ),
            HELP,
        ],
    },
    Container {
        name: "slowlog",
        help: &[],
        subcommands: &[
            sub(
                "get",
                -2,
                0,
                &[
                    "GET [<count>]",
                    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
                    "    Entries are made of:",
                    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
                    "    client name",
                ],
            ),
            sub("len", 2, 0, &["LEN", "    Return the length of the slowlog."]),
            sub("reset", 2, 0, &["RESET", "    Reset the slowlog."]),
            HELP,
        ],
    },
    Container {
        name: "memory",
        help: &[],
        subcommands: &[
            sub(
                "usage",
                -3,
                2,
                &[
                    "USAGE <key> [SAMPLES <count>]",
                    "    Return memory in bytes used by <key> and its value. Nested values are",
                    "    sampled up to <count> times (default: 5, 0 means sample all).",
                ],
            ),
            HELP,
        ],
    },
    Container {
        name: "script",
        help: &[],
        subcommands: &[
            sub(
                "exists",
                -3,
                0,
                &[
                    "EXISTS <sha1> [<sha1> ...]",
                    "    Return information about the existence of the scripts in the script cache.",
                ],
            ),
            sub(
                "flush",
                -2,
                0,
                &[
                    "FLUSH [ASYNC|SYNC]",
                    "    Flush the Lua scripts cache. Very dangerous on replicas.",
                    "    When called without the optional mode argument, the behavior is determined by the",
                    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
                    "    * ASYNC: Asynchronously flush the scripts cache.",
                    "    * SYNC: Synchronously flush the scripts cache.",
                ],
            ),
            sub(
                "kill",
                2,
                0,
                &["KILL", "    Kill the currently executing Lua script."],
            ),
            sub(
                "load",
                3,
                0,
                &[
                    "LOAD <script>",
                    "    Load a script into the scripts cache without executing it.",
                ],
            ),
            HELP,
        ],
    },
    Container {
        name: "object",
        help: &[],
        subcommands: &[
            sub(
                "encoding",
                3,
                2,
                &[
                    "ENCODING <key>",
                    "    Return the kind of internal representation used in order to store the value",
                    "    associated with a <key>.",
                ],
            ),
            sub(
                "freq",
                3,
                2,
                &[
                    "FREQ <key>",
                    "    Return the access frequency index of the <key>. The returned integer is",
                    "    proportional to the logarithm of the recent access frequency of the key.",
                ],
            ),
            sub(
                "idletime",
                3,
                2,
                &[
                    "IDLETIME <key>",
                    "    Return the idle time of the <key>, that is the approximated number of",
                    "    seconds elapsed since the last access to the key.",
                ],
            ),
            sub(
                "refcount",
                3,
                2,
                &[
                    "REFCOUNT <key>",
                    "    Return the number of references of the value associated with the specified",
                    "    <key>.",
                ],
            ),
            HELP,
        ],
    },
    Container {
        name: "pubsub",
        help: &[],
        subcommands: &[
            sub(
                "channels",
                -2,
                0,
                &[
                    "CHANNELS [<pattern>]",
                    "    Return the currently active channels matching a <pattern> (default: '*').",
                ],
            ),
            sub(
                "numpat",
                2,
                0,
                &["NUMPAT", "    Return number of subscriptions to patterns."],
            ),
            sub(
                "numsub",
                -2,
                0,
                &[
                    "NUMSUB [<channel> ...]",
                    "    Return the number of subscribers for the specified channels, excluding",
                    "    pattern subscriptions(default: no channels).",
                ],
            ),
            sub(
                "shardchannels",
                -2,
                0,
                &[
                    "SHARDCHANNELS [<pattern>]",
                    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
                ],
            ),
            sub(
                "shardnumsub",
                -2,
                0,
                &[
                    "SHARDNUMSUB [<shardchannel> ...]",
                    "    Return the number of subscribers for the specified shard level channel(s)",
                ],
            ),
            HELP,
        ],
    },
];

/// The container command named `name` (lower-case), if it is one.
pub fn container(name: &str) -> Option<&'static Container> {
    CONTAINERS.iter().find(|c| c.name == name)
}

impl Container {
    /// The subcommand named `name`, in any case.
    pub fn subcommand(&self, name: &[u8]) -> Option<&'static Subcommand> {
        self.subcommands
            .iter()
            .find(|s| name.eq_ignore_ascii_case(s.name.as_bytes()))
    }

    /// `<CONTAINER> HELP` as Redis' `addReplyHelp` prints it: a header,
    /// the lines of the subcommands served, and HELP's own.
    pub fn help_reply(&self) -> Reply {
        let header = format!(
            "{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            self.name.to_ascii_uppercase()
        );
        let served = self.subcommands.iter().flat_map(|s| s.help.iter());
        let lines = std::iter::once(header).chain(
            self.help
                .iter()
                .chain(served)
                .chain(&["HELP", "    Prints this help."])
                .map(|l| (*l).to_string()),
        );
        Reply::Array(lines.map(Reply::Status).collect())
    }
}

/// An argument as Redis prints it with `%.128s`: up to its first NUL byte,
/// at most 128 bytes.
fn printed(arg: &[u8]) -> String {
    let end = arg.iter().position(|&b| b == 0).unwrap_or(arg.len());
    String::from_utf8_lossy(&arg[..end.min(128)]).into_owned()
}

/// Checks the subcommand of a container's request before it runs: the
/// error Redis 7.0 refuses it with, if any (`container` is the container
/// named by `args[0]`, and `args` has a subcommand).
pub fn check(container: &Container, args: &[Bytes]) -> Result<(), Reply> {
    let Some(sub) = container.subcommand(&args[1]) else {
        // commandCheckExistence: newlines would break the protocol.
        let text = format!(
            "ERR unknown subcommand '{}'. Try {} HELP.",
            printed(&args[1]),
            container.name.to_ascii_uppercase()
        );
        return Err(Reply::Error(text.replace(['\r', '\n'], " ")));
    };
    if !arity_ok(sub.arity, args.len()) {
        return Err(Reply::error(format!(
            "ERR wrong number of arguments for '{}|{}' command",
            container.name, sub.name
        )));
    }
    Ok(())
}

/// Redis' `addReplySubcommandSyntaxError`, which some subcommands still
/// give for arguments their arity allows (CLIENT UNBLOCK with five,
/// FUNCTION FLUSH with four).
pub fn syntax_error(args: &[Bytes]) -> Reply {
    Reply::error(format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
        printed(&args[1]),
        String::from_utf8_lossy(&args[0]).to_ascii_uppercase()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&[u8]]) -> Vec<bytes::Bytes> {
        crate::frame::args_of(words)
    }

    fn error(r: Result<(), Reply>) -> String {
        match r {
            Err(Reply::Error(e)) => e,
            other => panic!("not an error: {other:?}"),
        }
    }

    #[test]
    fn names_are_lower_case_unique_and_every_container_has_help() {
        for c in CONTAINERS {
            assert_eq!(c.name, c.name.to_ascii_lowercase());
            assert!(c.subcommand(b"HELP").is_some(), "{}", c.name);
            for (i, s) in c.subcommands.iter().enumerate() {
                assert_eq!(s.name, s.name.to_ascii_lowercase());
                assert!(s.arity >= 2 || s.arity <= -2, "{}|{}", c.name, s.name);
                assert!(
                    c.subcommands[i + 1..].iter().all(|o| o.name != s.name),
                    "{}|{} twice",
                    c.name,
                    s.name
                );
            }
        }
    }

    #[test]
    fn unknown_subcommands_and_wrong_arity_get_redis_texts() {
        let config = container("config").unwrap();
        assert_eq!(check(config, &args(&[b"config", b"GeT", b"x"])), Ok(()));
        assert_eq!(
            error(check(config, &args(&[b"config", b"GeT"]))),
            "ERR wrong number of arguments for 'config|get' command"
        );
        assert_eq!(
            error(check(config, &args(&[b"config", b"no\r\nsuch"]))),
            "ERR unknown subcommand 'no  such'. Try CONFIG HELP."
        );
        let long = [b'x'; 200];
        assert_eq!(
            error(check(config, &args(&[b"config", &long]))),
            format!(
                "ERR unknown subcommand '{}'. Try CONFIG HELP.",
                "x".repeat(128)
            )
        );
        assert_eq!(
            error(check(config, &args(&[b"config", b"ab\0cd"]))),
            "ERR unknown subcommand 'ab'. Try CONFIG HELP."
        );
        assert_eq!(
            syntax_error(&args(&[b"function", b"FLUSH", b"a", b"b"])),
            Reply::error(
                "ERR unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP."
            )
        );
    }

    #[test]
    fn help_has_redis_header_served_lines_and_footer() {
        let Reply::Array(lines) = container("config").unwrap().help_reply() else {
            panic!("not an array");
        };
        let lines: Vec<String> = lines
            .into_iter()
            .map(|l| match l {
                Reply::Status(s) => s,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            lines,
            [
                "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "GET <pattern>",
                "    Return parameters matching the glob-like <pattern> and their values.",
                "SET <directive> <value>",
                "    Set the configuration <directive> to <value>.",
                "RESETSTAT",
                "    Reset statistics reported by the INFO command.",
                "REWRITE",
                "    Rewrite the configuration file.",
                "HELP",
                "    Prints this help.",
            ]
        );
    }
}
