//! The redcodec bugs the peers' own suites found ([The peers' own test
//! suites](../../../docs/src/peer-suites.md)), each checked against
//! redis-server 7.0.15 where Redis has the behaviour (the comparison is
//! reported as skipped without it, unless `REDCODEC_REQUIRE_REDIS=1`, where
//! it fails).

use redcodec_conformance::target::RedisServer;

mod serve_support;
use serve_support::{connect, formats, Serve};

/// The `keyspace_hits` and `keyspace_misses` of INFO stats.
fn hits_and_misses(c: &mut redis::Connection) -> (u64, u64) {
    let info: String = redis::cmd("INFO").arg("stats").query(c).unwrap();
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .unwrap_or_else(|| panic!("no {name} in {info}"))
            .trim()
            .parse::<u64>()
            .unwrap()
    };
    (field("keyspace_hits"), field("keyspace_misses"))
}

/// Commands and the counts INFO gives after each, on a server.
fn lookups_after_each(c: &mut redis::Connection, commands: &[&[&str]]) -> Vec<(String, u64, u64)> {
    commands
        .iter()
        .map(|args| {
            let mut cmd = redis::cmd(args[0]);
            for a in &args[1..] {
                cmd.arg(*a);
            }
            let _: redis::Value = cmd.query(c).unwrap_or(redis::Value::Nil);
            let (hits, misses) = hits_and_misses(c);
            (args.join(" "), hits, misses)
        })
        .collect()
}

#[test]
fn keyspace_hits_and_misses_count_read_lookups_as_redis_does() {
    let commands: &[&[&str]] = &[
        &["SET", "foo", "bar"],
        &["GET", "foo"],
        &["GET", "nokey"],
        &["HSET", "hash", "f1", "v1"],
        &["HGET", "hash", "f1"],
        &["HGET", "nohash", "f1"],
        &["GET", "hash"],
        &["MGET", "foo", "nokey", "hash"],
        &["EXISTS", "foo", "nokey"],
        &["TYPE", "foo"],
        &["TTL", "nokey"],
        &["RPUSH", "l", "a", "b"],
        &["LRANGE", "l", "0", "-1"],
        &["LPOP", "l"],
        &["DEL", "foo"],
        &["SINTER", "s1", "s2"],
        &["KEYS", "*"],
        &["SCAN", "0"],
        &["DBSIZE"],
        &["CONFIG", "RESETSTAT"],
        &["STRLEN", "nokey"],
    ];
    let Some(redis) = RedisServer::start_or_skip("keyspace_hits_and_misses") else {
        return;
    };
    let mut real = connect(&format!("redis://127.0.0.1:{}/", redis.port()));
    let expected = lookups_after_each(&mut real, commands);
    assert_eq!(expected[2], ("GET nokey".into(), 1, 1), "redis-server");
    for format in formats() {
        let (_tmp, server) = Serve::on_fresh_store(format, &[]);
        let got = lookups_after_each(&mut server.conn(), commands);
        assert_eq!(got, expected, "{format}");
    }
}
