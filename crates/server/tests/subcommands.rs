//! The container commands (CLIENT, COMMAND, CONFIG, FUNCTION, MEMORY,
//! OBJECT) as Redis 7.0.15 answers them: an unknown subcommand or a
//! subcommand with the wrong number of arguments is refused before it
//! runs, with Redis' texts, counted as a rejected call of the subcommand
//! and aborting a transaction; HELP lists what is served; the checks
//! Redis makes inside its handlers give its texts; COMMAND INFO and LIST
//! report the subcommands. Every expected text here is what
//! redis-server 7.0.15 replied to the same request.

mod support;

use redcodec_formats::Format;
use redcodec_server::commands::subcommands::CONTAINERS;
use support::{command_counts, owned, stats_lines, Client, Resp, Served};

fn line(text: &str) -> Resp {
    Resp::Line(format!("{text}\r\n"))
}

fn status_lines(lines: &[&str]) -> Resp {
    Resp::Array(lines.iter().map(|l| line(&format!("+{l}"))).collect())
}

/// For each container: an unknown subcommand, a subcommand with too many
/// or too few arguments, and the container alone.
const REFUSED: &[(&[&str], &str)] = &[
    (
        &["CLIENT", "nosuch"],
        "-ERR unknown subcommand 'nosuch'. Try CLIENT HELP.",
    ),
    (
        &["CLIENT", "ID", "x"],
        "-ERR wrong number of arguments for 'client|id' command",
    ),
    (
        &["CLIENT"],
        "-ERR wrong number of arguments for 'client' command",
    ),
    (
        &["COMMAND", "nosuch"],
        "-ERR unknown subcommand 'nosuch'. Try COMMAND HELP.",
    ),
    (
        &["COMMAND", "COUNT", "x"],
        "-ERR wrong number of arguments for 'command|count' command",
    ),
    (
        &["CONFIG", "nosuch"],
        "-ERR unknown subcommand 'nosuch'. Try CONFIG HELP.",
    ),
    (
        &["CONFIG", "GET"],
        "-ERR wrong number of arguments for 'config|get' command",
    ),
    (
        &["CONFIG"],
        "-ERR wrong number of arguments for 'config' command",
    ),
    (
        &["FUNCTION", "nosuch"],
        "-ERR unknown subcommand 'nosuch'. Try FUNCTION HELP.",
    ),
    (
        &["FUNCTION", "HELP", "x"],
        "-ERR wrong number of arguments for 'function|help' command",
    ),
    (
        &["FUNCTION"],
        "-ERR wrong number of arguments for 'function' command",
    ),
    (
        &["MEMORY", "nosuch"],
        "-ERR unknown subcommand 'nosuch'. Try MEMORY HELP.",
    ),
    (
        &["MEMORY", "USAGE"],
        "-ERR wrong number of arguments for 'memory|usage' command",
    ),
    (
        &["MEMORY"],
        "-ERR wrong number of arguments for 'memory' command",
    ),
    (
        &["OBJECT", "nosuch"],
        "-ERR unknown subcommand 'nosuch'. Try OBJECT HELP.",
    ),
    (
        &["OBJECT", "ENCODING"],
        "-ERR wrong number of arguments for 'object|encoding' command",
    ),
    (
        &["OBJECT"],
        "-ERR wrong number of arguments for 'object' command",
    ),
];

fn call(c: &mut Client, args: &[&str]) -> Resp {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    c.query(&args)
}

#[test]
fn unknown_subcommands_and_wrong_arity_are_refused_with_redis_texts() {
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    for (args, expected) in REFUSED {
        assert_eq!(call(&mut c, args), line(expected), "{args:?}");
    }
    // In any case; the texts name the subcommand in lower case.
    assert_eq!(
        call(&mut c, &["Config", "gEt"]),
        line("-ERR wrong number of arguments for 'config|get' command")
    );
    assert_eq!(
        call(&mut c, &["object", "eNcoding"]),
        line("-ERR wrong number of arguments for 'object|encoding' command")
    );
    assert_eq!(
        call(&mut c, &["config", "GeT", "maxmemory"]),
        Resp::Array(vec![
            Resp::Bulk(b"maxmemory".to_vec()),
            Resp::Bulk(b"0".to_vec())
        ])
    );
    // The unknown name as typed, at most 128 bytes of it.
    let long = "x".repeat(200);
    assert_eq!(
        call(&mut c, &["config", &long]),
        line(&format!(
            "-ERR unknown subcommand '{}'. Try CONFIG HELP.",
            "x".repeat(128)
        ))
    );
    // Subcommands Redis has and the server does not serve are unknown.
    assert_eq!(
        call(&mut c, &["SCRIPT", "DEBUG", "yes"]),
        line("-ERR unknown subcommand 'DEBUG'. Try SCRIPT HELP.")
    );
    assert_eq!(
        call(&mut c, &["CLIENT", "TRACKING", "on"]),
        line("-ERR unknown subcommand 'TRACKING'. Try CLIENT HELP.")
    );
}

#[test]
fn refusals_count_as_rejected_calls_of_the_subcommand_and_abort_multi() {
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    // The sequence given to redis-server 7.0.15, with its replies and
    // its INFO commandstats and errorstats after it.
    assert_eq!(call(&mut c, &["CONFIG", "RESETSTAT"]), line("+OK"));
    let refused = [
        &["CONFIG", "nosuch"][..],
        &["CONFIG", "GET"],
        &["CONFIG"],
        &["CLIENT", "ID", "x"],
        &["CLIENT", "nosuch"],
        &["OBJECT", "ENCODING"],
        &["MEMORY", "USAGE"],
        &["COMMAND", "COUNT", "x"],
        &["FUNCTION", "HELP", "x"],
    ];
    for args in refused {
        let reply = call(&mut c, args);
        assert!(
            matches!(&reply, Resp::Line(l) if l.starts_with("-ERR ")),
            "{args:?}: {reply:?}"
        );
    }
    assert_eq!(
        call(&mut c, &["config", "GeT", "maxmemory"]).items().len(),
        2
    );
    // A subcommand refused while queueing aborts the transaction (queued
    // commands count in commandstats only when they run).
    let refused_in_multi = [
        (
            &["Config", "gEt"][..],
            "-ERR wrong number of arguments for 'config|get' command",
        ),
        (
            &["MEMORY", "nosuch"],
            "-ERR unknown subcommand 'nosuch'. Try MEMORY HELP.",
        ),
    ];
    for (args, error) in refused_in_multi {
        assert_eq!(call(&mut c, &["MULTI"]), line("+OK"));
        assert_eq!(call(&mut c, &["SET", "k", "v"]), line("+QUEUED"));
        assert_eq!(call(&mut c, args), line(error));
        assert_eq!(
            call(&mut c, &["EXEC"]),
            line("-EXECABORT Transaction discarded because of previous errors.")
        );
    }
    // Neither transaction ran its SET.
    assert_eq!(call(&mut c, &["GET", "k"]), Resp::Nil);

    let info = c.info(&["commandstats", "errorstats"]);
    let cmd = command_counts(&info);
    let rejected = "calls=0,rejected_calls=1,failed_calls=0";
    let expected = owned(&[
        ("client|id", rejected),
        ("command|count", rejected),
        ("config", rejected),
        ("config|get", "calls=1,rejected_calls=2,failed_calls=0"),
        (
            "config|resetstat",
            "calls=1,rejected_calls=0,failed_calls=0",
        ),
        ("exec", "calls=2,rejected_calls=0,failed_calls=2"),
        ("function|help", rejected),
        ("get", "calls=1,rejected_calls=0,failed_calls=0"),
        ("memory|usage", rejected),
        ("multi", "calls=2,rejected_calls=0,failed_calls=0"),
        ("object|encoding", rejected),
    ]);
    assert_eq!(cmd, expected, "{info}");
    let errors = stats_lines(&info, "errorstat_");
    assert_eq!(errors["ERR"], "count=11", "{info}");
    assert_eq!(errors["EXECABORT"], "count=2", "{info}");
}

#[test]
fn help_lists_the_subcommands_served_in_redis_words() {
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    // Every OBJECT subcommand is served: Redis' whole text.
    assert_eq!(
        call(&mut c, &["object", "help"]),
        status_lines(&[
            "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>",
            "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
            "HELP",
            "    Prints this help.",
        ])
    );
    // Of MEMORY's, USAGE only.
    assert_eq!(
        call(&mut c, &["MEMORY", "HELP"]),
        status_lines(&[
            "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "USAGE <key> [SAMPLES <count>]",
            "    Return memory in bytes used by <key> and its value. Nested values are",
            "    sampled up to <count> times (default: 5, 0 means sample all).",
            "HELP",
            "    Prints this help.",
        ])
    );
    assert_eq!(
        call(&mut c, &["COMMAND", "HELP"]),
        status_lines(&[
            "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "(no subcommand)",
            "    Return details about all Redis commands.",
            "COUNT",
            "    Return the total number of commands in this Redis server.",
            "LIST",
            "    Return a list of all commands in this Redis server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "GETKEYS <full-command>",
            "    Return the keys from a full Redis command.",
            "HELP",
            "    Prints this help.",
        ])
    );
    let client = call(&mut c, &["CLIENT", "HELP"]);
    let client: Vec<&Resp> = client.items().iter().collect();
    assert_eq!(
        client[0],
        &line("+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
    );
    assert!(client.contains(&&line("+UNBLOCK <clientid> [TIMEOUT|ERROR]")));
    assert!(!client.contains(&&line("+GETREDIR")));
    for container in ["CONFIG", "FUNCTION"] {
        let help = call(&mut c, &[container, "HELP"]);
        let help = help.items();
        assert_eq!(
            help[0],
            line(&format!(
                "+{container} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
            ))
        );
        assert_eq!(
            help[help.len() - 2..],
            [line("+HELP"), line("+    Prints this help.")]
        );
    }
}

/// Whether a reply is one of the refusals of an unknown subcommand.
fn unknown(reply: &Resp) -> bool {
    matches!(reply, Resp::Line(l) if l.starts_with("-ERR unknown subcommand"))
}

#[test]
fn every_subcommand_of_the_table_is_answered_by_its_handler() {
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    for container in CONTAINERS {
        for sub in container.subcommands {
            let argc = sub.arity.unsigned_abs() as usize;
            let mut args = vec![container.name, sub.name];
            args.resize(argc, "x");
            let reply = call(&mut c, &args);
            assert!(!unknown(&reply), "{args:?}: {reply:?}");
        }
    }
}

#[test]
fn handlers_check_their_arguments_as_redis_does() {
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    let mut other = served.client();
    let other_id = match other.query(&[b"CLIENT", b"ID"]) {
        Resp::Line(l) => l.trim_start_matches(':').trim_end().to_string(),
        r => panic!("{r:?}"),
    };
    let cases: &[(&[&str], &str)] = &[
        (
            &["config", "set", "a"],
            "-ERR wrong number of arguments for 'config|set' command",
        ),
        (&["config", "set", "a", "b", "c"], "-ERR syntax error"),
        (
            &["config", "set", "maxmemory", "0", "x"],
            "-ERR syntax error",
        ),
        (
            &["client", "unblock", "1", "2", "3"],
            "-ERR unknown subcommand or wrong number of arguments for 'unblock'. Try CLIENT HELP.",
        ),
        (
            &["client", "unblock", "x", "foo"],
            "-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR",
        ),
        (
            &["client", "unblock", "x"],
            "-ERR value is not an integer or out of range",
        ),
        (&["client", "unblock", "999999"], ":0"),
        (&["client", "kill", "1", "2", "3"], "-ERR syntax error"),
        (
            &["client", "kill", "id", "0"],
            "-ERR client-id should be greater than 0",
        ),
        (
            &["client", "kill", "type", "foo"],
            "-ERR Unknown client type 'foo'",
        ),
        (
            &["client", "kill", "user", "nobody"],
            "-ERR No such user 'nobody'",
        ),
        (&["client", "kill", "skipme", "maybe"], "-ERR syntax error"),
        (&["client", "kill", "maxage", "1"], "-ERR syntax error"),
        (&["client", "kill", "type", "pubsub"], ":0"),
        (&["client", "kill", "1.2.3.4:5"], "-ERR No such client"),
        (&["client", "list", "x"], "-ERR syntax error"),
        (
            &["client", "list", "type", "foo"],
            "-ERR Unknown client type 'foo'",
        ),
        (&["client", "list", "id", "x"], "-ERR Invalid client ID"),
        (&["client", "no-evict", "maybe"], "-ERR syntax error"),
        (&["client", "no-evict", "ON"], "+OK"),
        (&["client", "no-touch", "off"], "+OK"),
        (
            &["function", "flush", "a", "b"],
            "-ERR unknown subcommand or wrong number of arguments for 'flush'. Try FUNCTION HELP.",
        ),
        (
            &["function", "flush", "x"],
            "-ERR FUNCTION FLUSH only supports SYNC|ASYNC option",
        ),
        (&["function", "flush", "async"], "+OK"),
        (&["function", "flush"], "+OK"),
        (&["memory", "usage", "k", "samples"], "-ERR syntax error"),
        (
            &["memory", "usage", "k", "samples", "-1"],
            "-ERR syntax error",
        ),
        (
            &["memory", "usage", "k", "samples", "x"],
            "-ERR value is not an integer or out of range",
        ),
        (&["memory", "usage", "k", "foo"], "-ERR syntax error"),
    ];
    for (args, expected) in cases {
        assert_eq!(call(&mut c, args), line(expected), "{args:?}");
    }
    assert_eq!(
        call(&mut c, &["memory", "usage", "nokey", "samples", "0"]),
        Resp::Nil
    );
    assert_eq!(
        call(&mut c, &["client", "list", "type", "master"]),
        Resp::Bulk(Vec::new())
    );
    let listed = call(&mut c, &["client", "list", "id", &other_id, "999999"]).text();
    assert_eq!(listed.lines().count(), 1, "{listed}");
    assert!(listed.starts_with(&format!("id={other_id} ")), "{listed}");
    assert_eq!(
        call(&mut c, &["client", "list", "type", "normal"])
            .text()
            .lines()
            .count(),
        2
    );
    // Filters combine: the default user, of type normal, by id.
    assert_eq!(
        call(
            &mut c,
            &["client", "kill", "user", "default", "type", "normal", "id", &other_id]
        ),
        line(":1")
    );
    assert!(other.closed());
}

#[test]
fn command_info_and_list_report_the_subcommands() {
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    let info = call(
        &mut c,
        &["COMMAND", "INFO", "CONFIG|get", "config|nosuch", "config"],
    );
    let [get, missing, config] = info.items() else {
        panic!("{info:?}");
    };
    let get = get.items();
    assert_eq!(get[0].text(), "config|get");
    assert_eq!(get[1], line(":-3"));
    assert_eq!(get[9], Resp::Array(Vec::new()));
    // A null bulk string in RESP2, as Redis' addReplyNull.
    assert_eq!(*missing, Resp::Nil);
    let config = config.items();
    assert_eq!(config[0].text(), "config");
    assert_eq!(config[1], line(":-2"));
    let subs: Vec<String> = config[9]
        .items()
        .iter()
        .map(|e| e.items()[0].text())
        .collect();
    assert_eq!(
        subs,
        [
            "config|get",
            "config|set",
            "config|resetstat",
            "config|rewrite",
            "config|help"
        ]
    );
    let object = call(&mut c, &["COMMAND", "INFO", "object|encoding"]);
    let encoding = object.items()[0].items();
    // The key is the third argument.
    assert_eq!(encoding[3..6], [line(":2"), line(":2"), line(":1")]);

    let Resp::Line(count) = call(&mut c, &["COMMAND", "COUNT"]) else {
        panic!("COUNT is an integer");
    };
    let count: usize = count[1..].trim_end().parse().unwrap();
    let names: Vec<String> = call(&mut c, &["COMMAND", "LIST"])
        .items()
        .iter()
        .map(Resp::text)
        .collect();
    let subcommands: usize = CONTAINERS.iter().map(|c| c.subcommands.len()).sum();
    assert_eq!(names.len(), count + subcommands);
    assert!(names.iter().any(|n| n == "config|get"));
    assert!(names.iter().any(|n| n == "client|no-evict"));
    assert!(!names.iter().any(|n| n == "client|tracking"));
}
