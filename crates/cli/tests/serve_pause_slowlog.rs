//! CLIENT PAUSE / UNPAUSE and SLOWLOG served, beside a running
//! redis-server where replies can be compared:
//!
//! - a write sent while writes are paused waits (counted in INFO's
//!   `blocked_clients`) and is applied once the pause is lifted, while
//!   reads and read-only scripts go on; `ALL` holds reads too; pipelined
//!   writes all wait and then apply in order;
//! - SLOWLOG keeps what redis-server keeps for the same commands (the
//!   arguments, cut as Redis cuts them, and the client's name), and its
//!   errors read as Redis' do.
//!
//! Needs `redis-server` on PATH. Without it the test is skipped, unless
//! `REDCODEC_REQUIRE_REDIS=1`, where it fails.

use std::time::{Duration, Instant};

use redcodec_conformance::target::{RedisServer, ServerTarget, Target};
use redcodec_engine::Reply;

mod serve_support;
use serve_support::Serve;

fn words(line: &str) -> Vec<Vec<u8>> {
    line.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}

fn run(conn: &mut ServerTarget, line: &str) -> Reply {
    conn.execute(&words(line)).expect("command runs")
}

/// Runs the command of `args` (one word each, spaces kept).
fn run_args(conn: &mut ServerTarget, args: &[&str]) -> Reply {
    let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
    conn.execute(&args).expect("command runs")
}

fn ok() -> Reply {
    Reply::Status("OK".into())
}

/// INFO's `blocked_clients`.
fn blocked_clients(conn: &mut ServerTarget) -> u64 {
    let Reply::Bulk(info) = run(conn, "INFO clients") else {
        panic!("INFO answers a bulk string");
    };
    String::from_utf8_lossy(&info)
        .lines()
        .find_map(|l| l.strip_prefix("blocked_clients:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("INFO clients has blocked_clients")
}

/// A redis-server and `serve` on a fresh kvrocks store, a connection to
/// each.
struct Both {
    _redis: RedisServer,
    _serve: (tempfile::TempDir, Serve),
    sides: [ServerTarget; 2],
}

impl Both {
    fn start(test: &str) -> Option<Both> {
        let redis = RedisServer::start_or_skip(test)?;
        let serve = Serve::on_fresh_store("kvrocks", &[]);
        let port: u16 = serve.1.port().parse().expect("a port");
        let sides = [
            ServerTarget::connect("redis", redis.port()).expect("connects"),
            ServerTarget::connect("serve", port).expect("connects"),
        ];
        Some(Both {
            _redis: redis,
            _serve: serve,
            sides,
        })
    }
}

/// Waits until `n` clients are blocked (the commands just sent reached
/// the server and are held); there is no deadline to meet, only one past
/// which the test gives up.
fn wait_for_blocked(conn: &mut ServerTarget, n: u64) {
    let give_up = Instant::now() + Duration::from_secs(60);
    while blocked_clients(conn) != n {
        assert!(Instant::now() < give_up, "{n} clients never blocked");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn writes_wait_for_the_end_of_a_client_pause_and_reads_go_on() {
    let (_tmp, serve) = Serve::on_fresh_store("kvrocks", &[]);
    let port: u16 = serve.port().parse().expect("a port");
    let mut admin = ServerTarget::connect("serve", port).expect("connects");
    let mut writer = ServerTarget::connect("serve", port).expect("connects");
    let mut reader = ServerTarget::connect("serve", port).expect("connects");
    assert_eq!(run(&mut admin, "SET k before"), ok());

    assert_eq!(run(&mut admin, "CLIENT PAUSE 600000 WRITE"), ok());
    writer.send(&words("SET k during")).expect("sent");
    // Pipelined writes behind it wait too, and then apply in order.
    writer.send(&words("INCR n")).expect("sent");
    writer.send(&words("INCR n")).expect("sent");
    wait_for_blocked(&mut admin, 1);
    assert_eq!(run(&mut reader, "GET k"), Reply::Bulk(b"before".to_vec()));
    let script = "return redis.call('GET', KEYS[1])";
    assert_eq!(
        run_args(&mut reader, &["EVAL_RO", script, "1", "k"]),
        Reply::Bulk(b"before".to_vec())
    );
    // A read-only script may not publish: that reaches the replicas.
    let publish = "return redis.call('PUBLISH', 'c', 'm')";
    let Reply::Error(e) = run_args(&mut reader, &["EVAL_RO", publish, "0"]) else {
        panic!("PUBLISH refused in a read-only script");
    };
    assert!(
        e.starts_with("ERR Write commands are not allowed from read-only scripts."),
        "{e}"
    );
    assert_eq!(blocked_clients(&mut admin), 1);

    assert_eq!(run(&mut admin, "CLIENT UNPAUSE"), ok());
    assert_eq!(writer.read_reply().expect("SET answered"), ok());
    assert_eq!(
        writer.read_reply().expect("INCR answered"),
        Reply::Integer(1)
    );
    assert_eq!(
        writer.read_reply().expect("INCR answered"),
        Reply::Integer(2)
    );
    assert_eq!(run(&mut reader, "GET k"), Reply::Bulk(b"during".to_vec()));
    assert_eq!(blocked_clients(&mut admin), 0);

    // ALL holds reads too (and INFO, and UNPAUSE): the GET is answered
    // only once the pause has run out.
    let asked = Instant::now();
    assert_eq!(run(&mut admin, "CLIENT PAUSE 300 ALL"), ok());
    assert_eq!(run(&mut reader, "GET k"), Reply::Bulk(b"during".to_vec()));
    assert!(asked.elapsed() >= Duration::from_millis(300));
}

/// Nothing expires in the background while writes are paused (a master
/// would send its replicas a `DEL`, as Redis' pause prevents): a key due
/// during the pause is announced `expired` only once it is lifted.
#[test]
fn nothing_expires_in_the_background_during_a_pause() {
    let (_tmp, serve) = Serve::on_fresh_store("kvrocks", &[]);
    let port: u16 = serve.port().parse().expect("a port");
    let mut admin = ServerTarget::connect("serve", port).expect("connects");
    let mut sub = ServerTarget::connect("serve", port).expect("connects");
    assert_eq!(
        run(&mut admin, "CONFIG SET notify-keyspace-events Ex"),
        ok()
    );
    sub.send(&words("SUBSCRIBE __keyevent@0__:expired"))
        .expect("sent");
    sub.read_reply().expect("SUBSCRIBE answered");
    assert_eq!(run(&mut admin, "SET k v PX 50"), ok());
    assert_eq!(run(&mut admin, "CLIENT PAUSE 600000 WRITE"), ok());
    // Long past its expiry, through several passes of the active expiry
    // (ten a second): none deletes it while paused.
    std::thread::sleep(Duration::from_millis(600));
    assert!(sub.messages().expect("subscriber reads").is_empty());
    assert_eq!(run(&mut admin, "CLIENT UNPAUSE"), ok());
    let give_up = Instant::now() + Duration::from_secs(60);
    loop {
        let messages = sub.messages().expect("subscriber reads");
        if !messages.is_empty() {
            assert_eq!(
                messages,
                [(b"__keyevent@0__:expired".to_vec(), b"k".to_vec())]
            );
            break;
        }
        assert!(Instant::now() < give_up, "k never expired");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_pause_ends_by_itself_and_refuses_bad_arguments_as_redis_does() {
    let Some(mut both) = Both::start("CLIENT PAUSE of serve") else {
        return;
    };
    let sides = &mut both.sides;
    for line in [
        "CLIENT PAUSE",
        "CLIENT PAUSE 10 READ",
        "CLIENT PAUSE ten WRITE",
        "CLIENT PAUSE -1 WRITE",
        "CLIENT PAUSE 10 WRITE extra",
        "CLIENT UNPAUSE now",
        "SLOWLOG",
        "SLOWLOG GET -2",
        "SLOWLOG GET many",
        "SLOWLOG GET 1 2",
        "SLOWLOG LEN 1",
        "SLOWLOG RESET 1",
        "SLOWLOG NOPE",
        "CONFIG SET slowlog-log-slower-than -2",
        "CONFIG SET slowlog-max-len -1",
        "CONFIG SET slowlog-max-len many",
    ] {
        let [a, b] = sides.each_mut().map(|side| run(side, line));
        assert_eq!(a, b, "{line}");
    }
    // CONFIG GET's pairs, in Redis' dictionary order there.
    let [a, b] = sides.each_mut().map(|side| {
        let Reply::Array(flat) = run(side, "CONFIG GET slowlog-*") else {
            panic!("CONFIG GET answers an array");
        };
        let mut pairs: Vec<Vec<Reply>> = flat.chunks(2).map(<[Reply]>::to_vec).collect();
        pairs.sort_by_key(|pair| format!("{pair:?}"));
        pairs
    });
    assert_eq!(a, b);
    assert_eq!(a.len(), 2);
    // A pause of 1 ms has ended by the time the next command arrives.
    for side in sides.iter_mut() {
        assert_eq!(run(side, "CLIENT PAUSE 1 ALL"), ok());
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(run(side, "SET after pause"), ok());
    }
}

/// The arguments and client name of each entry of `SLOWLOG GET -1`.
fn entries(conn: &mut ServerTarget) -> Vec<(Reply, Reply)> {
    let Reply::Array(entries) = run(conn, "SLOWLOG GET -1") else {
        panic!("SLOWLOG GET answers an array");
    };
    entries
        .into_iter()
        .map(|entry| {
            let Reply::Array(fields) = entry else {
                panic!("an entry is an array");
            };
            assert_eq!(fields.len(), 6, "id, time, duration, args, peer, name");
            (fields[3].clone(), fields[5].clone())
        })
        .collect()
}

#[test]
fn slowlog_keeps_what_redis_server_keeps() {
    let Some(mut both) = Both::start("SLOWLOG of serve") else {
        return;
    };
    let sides = &mut both.sides;
    let long = "x".repeat(200);
    let many: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    let lines = [
        "CONFIG SET slowlog-log-slower-than 0".to_string(),
        "CONFIG SET slowlog-max-len 6".to_string(),
        "SLOWLOG RESET".to_string(),
        "CLIENT SETNAME slow-client".to_string(),
        format!("SET k {long}"),
        format!("SADD s {}", many.join(" ")),
        "MULTI".to_string(),
        "INCR n".to_string(),
        "GET k".to_string(),
        "EXEC".to_string(),
        "AUTH not-the-password".to_string(),
    ];
    for line in &lines {
        let [a, b] = sides.each_mut().map(|side| run(side, line));
        // AUTH without a password set: both refuse it, in their words.
        if !line.starts_with("AUTH") {
            assert_eq!(a, b, "{line}");
        }
    }
    let [a, b] = sides.each_mut().map(entries);
    assert_eq!(a, b);
    assert_eq!(a.len(), 6, "slowlog-max-len keeps the newest");
    let [a, b] = sides.each_mut().map(|side| run(side, "SLOWLOG LEN"));
    assert_eq!(a, b);
    let [a, b] = sides.each_mut().map(|side| run(side, "SLOWLOG GET 0"));
    assert_eq!((a, b), (Reply::Array(vec![]), Reply::Array(vec![])));
    // Switched off: nothing more is logged.
    for side in sides.iter_mut() {
        assert_eq!(run(side, "CONFIG SET slowlog-log-slower-than -1"), ok());
        assert_eq!(run(side, "SLOWLOG RESET"), ok());
        assert_eq!(run(side, "SET k v"), ok());
        assert_eq!(run(side, "SLOWLOG LEN"), Reply::Integer(0));
    }
}
