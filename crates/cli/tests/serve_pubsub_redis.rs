//! Pub/Sub served, compared reply for reply and message for message with
//! a running redis-server:
//!
//! - keyspace notifications: `notify-keyspace-events` as CONFIG SET and
//!   GET take and answer it, and the messages a `PSUBSCRIBE __key*__:*`
//!   subscriber receives for commands sent by clients (reads that miss,
//!   MULTI/EXEC, a script). The events of every command of the corpus are
//!   compared, engine by engine, in crates/conformance/tests/keyspace_events.rs;
//! - the sharded channels of Redis 7: SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH
//!   and PUBSUB SHARDCHANNELS / SHARDNUMSUB beside the other channels.
//!
//! Needs `redis-server` on PATH. Without it the test is skipped, unless
//! `REDCODEC_REQUIRE_REDIS=1`, where it fails.

use redcodec_conformance::target::{RedisServer, ServerTarget, Target};
use redcodec_engine::Reply;

mod serve_support;
use serve_support::Serve;

/// The words of a command line (no quoting needed here).
fn words(line: &str) -> Vec<Vec<u8>> {
    line.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}

/// The messages a subscriber received before the reply to a PING sent
/// now, as `channel message` lines.
fn received(sub: &mut ServerTarget) -> Vec<String> {
    let messages = sub.messages().expect("subscriber reads");
    messages
        .iter()
        .map(|(channel, message)| {
            format!(
                "{} {}",
                String::from_utf8_lossy(channel),
                String::from_utf8_lossy(message)
            )
        })
        .collect()
}

/// A server under test: a connection for commands, and a subscriber.
struct Side {
    conn: ServerTarget,
    sub: ServerTarget,
}

impl Side {
    fn on(name: &str, port: u16) -> Side {
        let conn = ServerTarget::connect(name, port).expect("connects");
        let mut sub = ServerTarget::connect(name, port).expect("subscriber connects");
        sub.send(&words("PSUBSCRIBE __key*__:*")).expect("sent");
        sub.read_reply().expect("PSUBSCRIBE answered");
        Side { conn, sub }
    }

    /// Runs `line`; its reply and the messages it caused.
    fn run(&mut self, line: &[Vec<u8>]) -> (Reply, Vec<String>) {
        let reply = self.conn.execute(line).expect("command runs");
        (reply, received(&mut self.sub))
    }

    /// Sends `line` on the subscriber's connection; the `n` replies read.
    fn on_subscriber(&mut self, line: &str, n: usize) -> Vec<Reply> {
        self.sub.send(&words(line)).expect("sent");
        (0..n)
            .map(|_| self.sub.read_reply().expect("subscriber reads"))
            .collect()
    }
}

#[test]
fn sharded_channels_answer_as_redis_server_answers() {
    let Some(redis) = RedisServer::start_or_skip("sharded channels of serve") else {
        return;
    };
    let (_tmp, serve) = Serve::on_fresh_store("kvrocks", &[]);
    let port: u16 = serve.port().parse().expect("a port");
    let mut sides = [Side::on("redis", redis.port()), Side::on("serve", port)];
    // The subscriber (PSUBSCRIBE __key*__:* already) on the left, with
    // the number of replies each request gets; the other connection's
    // commands, with the messages they caused, on the right.
    let steps: &[(&str, usize)] = &[
        ("SSUBSCRIBE a b a", 3),
        ("SUBSCRIBE a", 1),
        ("SPUBLISH a hi", 0),
        ("PUBLISH a hello", 0),
        ("SPUBLISH b there", 0),
        ("SPUBLISH nobody x", 0),
        ("PUBSUB SHARDCHANNELS", 0),
        ("PUBSUB SHARDCHANNELS a*", 0),
        ("PUBSUB SHARDNUMSUB a b c", 0),
        ("PUBSUB NUMSUB a b", 0),
        ("PUBSUB CHANNELS", 0),
        ("SUNSUBSCRIBE b", 1),
        ("GET k", 1),
        ("SUNSUBSCRIBE", 1),
        ("SUNSUBSCRIBE", 1),
        ("SPUBLISH a gone", 0),
        ("UNSUBSCRIBE", 1),
    ];
    for (line, replies) in steps {
        let [redis, serve] = &mut sides;
        if *replies > 0 {
            let want = redis.on_subscriber(line, *replies);
            let got = serve.on_subscriber(line, *replies);
            assert_eq!(got, want, "{line}");
        } else {
            let mut want = redis.run(&words(line));
            let mut got = serve.run(&words(line));
            // Channels come in hash order.
            for (reply, _) in [&mut want, &mut got] {
                if let Reply::Array(items) = reply {
                    if line.contains("CHANNELS") {
                        items.sort_by_key(|r| format!("{r:?}"));
                    }
                }
            }
            assert_eq!(got, want, "{line}");
        }
    }
}

#[test]
fn clients_commands_publish_what_redis_server_publishes() {
    let Some(redis) = RedisServer::start_or_skip("keyspace notifications of serve") else {
        return;
    };
    let (_tmp, serve) = Serve::on_fresh_store("kvrocks", &[]);
    let port: u16 = serve.port().parse().expect("a port");
    let mut sides = [Side::on("redis", redis.port()), Side::on("serve", port)];
    let script = "return redis.call('set',KEYS[1],'x')";
    let lines: Vec<Vec<Vec<u8>>> = [
        // The setting, read back as Redis writes it.
        "CONFIG SET notify-keyspace-events KEq",
        "CONFIG SET notify-keyspace-events $lshzxeKE",
        "CONFIG GET notify-keyspace-events",
        "CONFIG SET notify-keyspace-events gKE",
        "CONFIG GET notify-keyspace-events",
        "SET ignored 1",
        "DEL ignored",
        "CONFIG SET notify-keyspace-events KEAnm",
        "CONFIG GET notify-keyspace-events",
        // Commands of each class, misses of reads.
        "SET foo bar",
        "GET nokey",
        "EXISTS nokey",
        "LPUSH l a b",
        "RPOP l",
        "LPOP l",
        "HSET h f v",
        "HDEL h f",
        "SADD s m",
        "ZADD z 1 m",
        "ZINCRBY z 2 m",
        "INCR n",
        "EXPIRE foo 100",
        "PERSIST foo",
        "RENAME foo bar2",
        "DEL bar2 nokey",
        "MULTI",
        "SET m1 1",
        "DEL m1",
        "EXEC",
        "CONFIG SET notify-keyspace-events Kh",
        "HSET h2 a b",
        "SET not-published 1",
        "CONFIG SET notify-keyspace-events El",
        "RPUSH l2 x",
        "HSET not-published-either a b",
        "CONFIG SET notify-keyspace-events KEA",
    ]
    .iter()
    .map(|line| words(line))
    .chain([
        vec![
            b"EVAL".to_vec(),
            script.as_bytes().to_vec(),
            b"1".to_vec(),
            b"ev".to_vec(),
        ],
        vec![
            b"CONFIG".to_vec(),
            b"SET".to_vec(),
            b"notify-keyspace-events".to_vec(),
            Vec::new(),
        ],
        words("SET silent 1"),
    ])
    .collect();
    let mut messages = 0;
    for line in &lines {
        let [redis, serve] = &mut sides;
        let want = redis.run(line);
        let got = serve.run(line);
        let shown: Vec<String> = line
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        assert_eq!(got, want, "{}", shown.join(" "));
        messages += want.1.len();
    }
    assert!(messages > 50, "{messages} messages compared");
}
