//! INFO as Redis 7.0.15 gives it: the sections each argument selects (the
//! cases of Redis' `tests/unit/info-command.tcl`), exact commandstats and
//! errorstats after a known sequence, CONFIG RESETSTAT, the cpu and
//! memory fields; and SAVE, BGSAVE, LASTSAVE with INFO persistence on
//! every format.

mod support;

use std::collections::BTreeMap;

use std::time::{Duration, Instant};

use redcodec_formats::Format;
use redcodec_testkit::table_files;
use support::{command_counts, owned, stats_lines, Client, Served};

/// The `# Header` lines of an INFO text, in order.
fn headers(info: &str) -> Vec<&str> {
    info.lines().filter_map(|l| l.strip_prefix("# ")).collect()
}

/// Every `name:value` field of an INFO text.
fn fields(info: &str) -> BTreeMap<&str, &str> {
    info.lines().filter_map(|l| l.split_once(':')).collect()
}

/// The value of `name` in an INFO text.
fn field<'a>(info: &'a str, name: &str) -> &'a str {
    fields(info)
        .get(name)
        .copied()
        .unwrap_or_else(|| panic!("no {name} in {info}"))
}

/// Every section's header, in Redis 7.0.15's order (`INFO all`).
const ALL: &[&str] = &[
    "Server",
    "Clients",
    "Memory",
    "Persistence",
    "Stats",
    "Replication",
    "CPU",
    "Modules",
    "Commandstats",
    "Errorstats",
    "Latencystats",
    "Cluster",
    "Keyspace",
];

/// `INFO` and `INFO default`: every section but commandstats and
/// latencystats, as Redis' `genInfoSectionDict` chooses them.
fn default_sections() -> Vec<&'static str> {
    ALL.iter()
        .copied()
        .filter(|h| !matches!(*h, "Commandstats" | "Latencystats"))
        .collect()
}

#[test]
fn sections_are_selected_as_redis_selects_them() {
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    // A command counted, so commandstats has a line.
    assert_eq!(c.call(&[b"SET", b"k", b"v"]), "+OK\r\n");
    let default = default_sections();
    let cases: &[(&[&str], &[&str])] = &[
        (&[], &default),
        (&["default"], &default),
        (&["all"], ALL),
        (&["everything"], ALL),
        (&["cpu"], &["CPU"]),
        (&["sentinel"], &[]),
        (&["commandSTATS"], &["Commandstats"]),
        (&["cpu", "sentinel"], &["CPU"]),
        (&["cpu", "all"], ALL),
        (&["cpu", "default"], &default),
        // Kvrocks' section, by its name only.
        (&["rocksdb"], &["RocksDB"]),
        (&["ROCKSDB", "cpu"], &["CPU", "RocksDB"]),
        (
            &["keyspace", "CPU", "server"],
            &["Server", "CPU", "Keyspace"],
        ),
    ];
    for (args, expected) in cases {
        let info = c.info(args);
        assert_eq!(headers(&info), *expected, "INFO {args:?}");
        // Each section ends with CRLF, and a blank line separates them.
        assert_eq!(info.is_empty(), expected.is_empty(), "INFO {args:?}");
        let blank = info.split("\r\n").filter(|l| l.is_empty()).count();
        assert_eq!(blank, expected.len().max(1), "INFO {args:?}: {info:?}");
        assert!(info.is_empty() || info.ends_with("\r\n"));
        assert_eq!(
            info.matches("used_cpu_user_children").count(),
            usize::from(expected.contains(&"CPU"))
        );
        assert_eq!(
            info.contains("rejected_calls"),
            expected.contains(&"Commandstats"),
            "INFO {args:?}"
        );
        assert_eq!(
            info.contains("used_memory"),
            expected.contains(&"Memory"),
            "INFO {args:?}"
        );
        assert_eq!(
            info.contains("master_repl_offset"),
            expected.contains(&"Replication")
        );
        assert!(!info.contains("sentinel_tilt"));
    }
    assert_eq!(c.info(&["sentinel"]), "");
}

#[test]
fn commandstats_and_errorstats_count_as_redis_and_resetstat_clears_them() {
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    assert_eq!(c.call(&[b"CONFIG", b"RESETSTAT"]), "+OK\r\n");
    for k in [b"a", b"b", b"c"] {
        assert_eq!(c.call(&[b"SET", k, b"1"]), "+OK\r\n");
    }
    assert_eq!(c.call(&[b"GET", b"a"]), "$1\r\n");
    assert_eq!(c.line(), "1\r\n");
    // Refused before running: a rejected call.
    assert_eq!(
        c.call(&[b"SET", b"k"]),
        "-ERR wrong number of arguments for 'set' command\r\n"
    );
    // Ran and failed.
    assert!(c.call(&[b"LPUSH", b"a", b"x"]).starts_with("-WRONGTYPE "));
    // Unknown: an error, counted under no command.
    assert!(c.call(&[b"FOO"]).starts_with("-ERR unknown command 'FOO'"));
    // Refused while queueing: rejected, and EXEC fails with EXECABORT.
    assert_eq!(c.call(&[b"MULTI"]), "+OK\r\n");
    assert!(c.call(&[b"SET", b"x"]).starts_with("-ERR wrong number"));
    assert!(c.call(&[b"EXEC"]).starts_with("-EXECABORT "));
    // An error inside EXEC fails the command, not EXEC.
    assert_eq!(c.call(&[b"MULTI"]), "+OK\r\n");
    assert_eq!(c.call(&[b"SET", b"d", b"4"]), "+QUEUED\r\n");
    assert_eq!(c.call(&[b"LPUSH", b"a", b"y"]), "+QUEUED\r\n");
    c.send(&[b"EXEC"]);
    let replies = c.array_of_lines();
    assert_eq!(replies[0], "+OK\r\n");
    assert!(replies[1].starts_with("-WRONGTYPE "), "{replies:?}");
    // A subcommand counts under Redis' name for it.
    c.send(&[b"CONFIG", b"GET", b"maxmemory"]);
    assert_eq!(c.line(), "*2\r\n");
    assert_eq!((c.bulk(), c.bulk()), (b"maxmemory".to_vec(), b"0".to_vec()));

    let info = c.info(&["commandstats", "errorstats", "stats"]);
    let cmd = command_counts(&info);
    let expected = owned(&[
        ("config|get", "calls=1,rejected_calls=0,failed_calls=0"),
        (
            "config|resetstat",
            "calls=1,rejected_calls=0,failed_calls=0",
        ),
        ("exec", "calls=2,rejected_calls=0,failed_calls=1"),
        ("get", "calls=1,rejected_calls=0,failed_calls=0"),
        ("lpush", "calls=2,rejected_calls=0,failed_calls=2"),
        ("multi", "calls=2,rejected_calls=0,failed_calls=0"),
        ("set", "calls=4,rejected_calls=2,failed_calls=0"),
    ]);
    assert_eq!(cmd, expected, "{info}");
    let errors = stats_lines(&info, "errorstat_");
    let expected_errors = owned(&[
        ("ERR", "count=3"),
        ("EXECABORT", "count=1"),
        ("WRONGTYPE", "count=2"),
    ]);
    assert_eq!(errors, expected_errors, "{info}");
    assert_eq!(field(&info, "total_error_replies"), "6");
    // CONFIG RESETSTAT, SET×4 (one inside EXEC), GET, LPUSH×2, MULTI×2,
    // EXEC×2, CONFIG GET.
    assert_eq!(field(&info, "total_commands_processed"), "13");

    assert_eq!(c.call(&[b"CONFIG", b"RESETSTAT"]), "+OK\r\n");
    let info = c.info(&["commandstats", "errorstats", "stats"]);
    assert_eq!(
        command_counts(&info),
        owned(&[(
            "config|resetstat",
            "calls=1,rejected_calls=0,failed_calls=0"
        )]),
        "{info}"
    );
    assert!(stats_lines(&info, "errorstat_").is_empty(), "{info}");
    assert_eq!(field(&info, "total_error_replies"), "0");
    assert_eq!(field(&info, "total_commands_processed"), "1");
    assert_eq!(field(&info, "total_connections_received"), "0");
}

#[test]
fn a_blocked_pop_counts_once_and_its_unblock_error_fails_it() {
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    let mut blocked = served.client();
    blocked.send(&[b"CLIENT", b"ID"]);
    let id = blocked.line();
    let id = id.trim_start_matches(':').trim_end().to_string();
    assert_eq!(c.call(&[b"CONFIG", b"RESETSTAT"]), "+OK\r\n");
    blocked.send(&[b"BLPOP", b"nothing", b"0"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !c.info(&["clients"]).contains("blocked_clients:1\r\n") {
        assert!(Instant::now() < deadline, "BLPOP never blocked");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        c.call(&[b"CLIENT", b"UNBLOCK", id.as_bytes(), b"ERROR"]),
        ":1\r\n"
    );
    assert!(blocked.line().starts_with("-UNBLOCKED "));
    let info = c.info(&["commandstats", "errorstats"]);
    assert_eq!(
        command_counts(&info)["blpop"],
        "calls=1,rejected_calls=0,failed_calls=1",
        "{info}"
    );
    assert_eq!(stats_lines(&info, "errorstat_")["UNBLOCKED"], "count=1");
}

#[test]
fn cpu_memory_replication_and_cluster_fields() {
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    let cpu = c.info(&["cpu"]);
    for name in [
        "used_cpu_sys",
        "used_cpu_user",
        "used_cpu_sys_children",
        "used_cpu_user_children",
    ] {
        let value = field(&cpu, name);
        let (_, decimals) = value.split_once('.').unwrap();
        assert_eq!(decimals.len(), 6, "{name}:{value}");
        assert!(value.parse::<f64>().unwrap() >= 0.0);
    }

    let mem = c.info(&["memory"]);
    let bytes = |name: &str| -> u64 { field(&mem, name).parse().unwrap() };
    if cfg!(target_os = "linux") {
        assert!(bytes("used_memory_rss") > 0, "{mem}");
        assert!(bytes("used_memory") > 0, "{mem}");
        // Read together from /proc/self/status: the peak is no lower.
        assert!(
            bytes("used_memory_peak") >= bytes("used_memory_rss"),
            "{mem}"
        );
        assert!(bytes("used_memory_rss") >= bytes("used_memory"), "{mem}");
    }
    for name in [
        "store_memtables",
        "store_block_cache",
        "store_table_readers",
    ] {
        bytes(name);
    }
    assert_eq!(field(&mem, "mem_allocator"), "libc");
    assert_eq!(
        (
            field(&mem, "maxmemory"),
            field(&mem, "maxmemory_human"),
            field(&mem, "maxmemory_policy")
        ),
        ("0", "0B", "noeviction")
    );
    assert_eq!(
        c.call(&[
            b"CONFIG",
            b"SET",
            b"maxmemory",
            b"100mb",
            b"maxmemory-policy",
            b"allkeys-lru"
        ]),
        "+OK\r\n"
    );
    let mem = c.info(&["memory"]);
    assert_eq!(
        (
            field(&mem, "maxmemory"),
            field(&mem, "maxmemory_human"),
            field(&mem, "maxmemory_policy")
        ),
        ("104857600", "100.00M", "allkeys-lru")
    );

    let info = c.info(&["replication", "cluster", "modules", "server"]);
    assert_eq!(
        headers(&info),
        ["Server", "Replication", "Modules", "Cluster"]
    );
    let f = fields(&info);
    assert_eq!(f["role"], "master");
    assert_eq!(f["connected_slaves"], "0");
    assert_eq!(f["master_failover_state"], "no-failover");
    assert_eq!(f["master_repl_offset"], "0");
    assert_eq!(f["cluster_enabled"], "0");
    for id in [f["master_replid"], f["run_id"]] {
        assert_eq!(id.len(), 40, "{info}");
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{info}");
    }
    assert_ne!(f["master_replid"], f["run_id"]);
    // New at every start.
    let other = Served::start(Format::Kvrocks);
    let again = other.client().info(&["replication"]);
    assert_ne!(field(&again, "master_replid"), f["master_replid"]);
}

/// The server's TIME, in seconds.
fn server_time(c: &mut Client) -> i64 {
    c.send(&[b"TIME"]);
    assert_eq!(c.line(), "*2\r\n");
    let secs = String::from_utf8(c.bulk()).unwrap().parse().unwrap();
    c.bulk();
    secs
}

/// LASTSAVE's reply.
fn lastsave(c: &mut Client) -> i64 {
    let line = c.call(&[b"LASTSAVE"]);
    line.trim_start_matches(':').trim_end().parse().unwrap()
}

/// Polls INFO persistence until no BGSAVE runs (a save ends whatever
/// the machine's load; the limit only stops a hung test).
fn wait_bgsave(c: &mut Client) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let info = c.info(&["persistence"]);
        if field(&info, "rdb_bgsave_in_progress") == "0" {
            return info;
        }
        assert!(Instant::now() < deadline, "BGSAVE never ended: {info}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn save_and_bgsave_flush_the_store_on_every_format() {
    for &format in Format::ALL {
        let served = Served::start(format);
        let mut c = served.client();
        let started = server_time(&mut c);
        assert!(
            lastsave(&mut c) <= started,
            "{format}: the start counts as saved"
        );
        assert_eq!(c.call(&[b"SET", b"s", b"v"]), "+OK\r\n");
        assert_eq!(c.call(&[b"HSET", b"h", b"f", b"v"]), ":1\r\n");
        assert_eq!(c.call(&[b"RPUSH", b"l", b"a", b"b"]), ":2\r\n");
        // Changes nothing: not counted.
        assert_eq!(c.call(&[b"DEL", b"missing"]), ":0\r\n");
        let info = c.info(&["persistence"]);
        assert_eq!(field(&info, "rdb_changes_since_last_save"), "3", "{format}");
        assert_eq!(table_files(served.dir()), 0, "{format}: all in memtables");

        let before = server_time(&mut c);
        assert_eq!(c.call(&[b"SAVE"]), "+OK\r\n", "{format}");
        let saved = lastsave(&mut c);
        assert!(saved >= before && saved <= server_time(&mut c), "{format}");
        let info = c.info(&["persistence"]);
        assert_eq!(field(&info, "rdb_changes_since_last_save"), "0", "{format}");
        assert_eq!(field(&info, "rdb_last_save_time"), saved.to_string());
        assert_eq!(field(&info, "rdb_saves"), "1");
        let tables = table_files(served.dir());
        assert!(tables > 0, "{format}: SAVE wrote no table file");

        // Refused inside MULTI, which then aborts.
        assert_eq!(c.call(&[b"MULTI"]), "+OK\r\n");
        assert_eq!(c.call(&[b"SET", b"s", b"w"]), "+QUEUED\r\n");
        assert_eq!(
            c.call(&[b"SAVE"]),
            "-ERR Command not allowed inside a transaction\r\n"
        );
        assert!(c.call(&[b"EXEC"]).starts_with("-EXECABORT "));
        assert_eq!(c.call(&[b"GET", b"s"]), "$1\r\n");
        assert_eq!(c.line(), "v\r\n");

        assert_eq!(c.call(&[b"SADD", b"set", b"m"]), ":1\r\n");
        let info = c.info(&["persistence"]);
        assert_eq!(field(&info, "rdb_changes_since_last_save"), "1", "{format}");
        let before = server_time(&mut c);
        assert_eq!(c.call(&[b"BGSAVE"]), "+Background saving started\r\n");
        let info = wait_bgsave(&mut c);
        assert_eq!(field(&info, "rdb_last_bgsave_status"), "ok", "{format}");
        assert_eq!(field(&info, "rdb_changes_since_last_save"), "0", "{format}");
        assert_eq!(field(&info, "rdb_saves"), "2");
        assert!(
            field(&info, "rdb_last_bgsave_time_sec")
                .parse::<i64>()
                .unwrap()
                >= 0
        );
        assert_eq!(field(&info, "rdb_current_bgsave_time_sec"), "-1");
        assert!(lastsave(&mut c) >= before, "{format}");
        assert!(
            table_files(served.dir()) > tables,
            "{format}: BGSAVE wrote no table file"
        );

        // Inside a transaction it is scheduled, and runs once EXEC ends.
        assert_eq!(c.call(&[b"MULTI"]), "+OK\r\n");
        assert_eq!(c.call(&[b"ZADD", b"z", b"1", b"m"]), "+QUEUED\r\n");
        assert_eq!(c.call(&[b"BGSAVE", b"SCHEDULE"]), "+QUEUED\r\n");
        c.send(&[b"EXEC"]);
        assert_eq!(
            c.array_of_lines(),
            [":1\r\n", "+Background saving scheduled\r\n"],
            "{format}"
        );
        let info = wait_bgsave(&mut c);
        assert_eq!(field(&info, "rdb_changes_since_last_save"), "0", "{format}");
        assert_eq!(field(&info, "rdb_saves"), "3");
        assert_eq!(c.call(&[b"BGSAVE", b"NOW"]), "-ERR syntax error\r\n");
    }
}
