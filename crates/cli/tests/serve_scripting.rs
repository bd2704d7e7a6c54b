//! Scripting in `redcodec serve` on every format: the server scenarios
//! (crates/conformance/server-scenarios, checked against redis-server by
//! crates/conformance/tests/server_corpus_redis.rs) replayed against the
//! server; function libraries surviving a restart; atomicity against
//! other clients; BUSY and SCRIPT KILL.

use std::time::{Duration, Instant};

use redcodec_conformance::target::ServerTarget;
use redcodec_conformance::{runner, scenario, server_corpus_dir};
use redis::Value;

mod serve_support;
use serve_support::{formats, store_dir, Serve};

#[test]
fn server_scenarios_replay_on_every_format() {
    let scenarios = scenario::load_dir(&server_corpus_dir()).expect("server corpus parses");
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &["--sync", "no"]);
        let port: u16 = server.port().parse().expect("port");
        let mut target = ServerTarget::connect(format, port).expect("connects");
        let report = runner::run(&mut target, &scenarios).expect("run completes");
        let shown: String = report
            .mismatches
            .iter()
            .take(20)
            .map(std::string::ToString::to_string)
            .collect();
        assert!(
            report.mismatches.is_empty(),
            "{format}: {} replies differ from Redis':\n{shown}",
            report.mismatches.len()
        );
        assert!(report.commands > 100, "{format}: {report}");
    }
}

#[test]
fn select_inside_a_script_stays_in_the_script() {
    // Kvrocks: every index names the connection's one namespace, in a
    // script as outside one.
    let (_tmp, dir) = store_dir();
    let server = Serve::start("kvrocks", &dir, &["--sync", "no"]);
    let mut c = server.conn();
    let set_in_1 = "redis.call('select', 1); return redis.call('set', 'k', 'one')";
    let ok: String = redis::cmd("EVAL")
        .arg(set_in_1)
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(ok, "OK");
    let got: Option<String> = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(got.as_deref(), Some("one"));
    drop(server);

    // Ardb: a store per index; the script holds its caller's alone.
    let (_tmp, dir) = store_dir();
    let server = Serve::start("ardb", &dir, &["--sync", "no"]);
    let mut c = server.conn();
    let _: () = redis::cmd("SELECT").arg(2).query(&mut c).unwrap();
    let in_2 = "redis.call('select', 2); return redis.call('set', 'k', 'two')";
    let ok: String = redis::cmd("EVAL").arg(in_2).arg(0).query(&mut c).unwrap();
    assert_eq!(ok, "OK");
    let leave = "return redis.pcall('select', 3)";
    let err = redis::cmd("EVAL")
        .arg(leave)
        .arg(0)
        .query::<String>(&mut c)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("SELECT inside a script cannot leave the caller's database"),
        "{err}"
    );
    // The caller is still in database 2, which holds the script's write.
    let got: Option<String> = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(got.as_deref(), Some("two"));
    let _: () = redis::cmd("SELECT").arg(0).query(&mut c).unwrap();
    let got: Option<String> = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(got, None);
}

#[test]
fn function_libraries_survive_a_restart() {
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let code = "#!lua name=keep\nredis.register_function('kept', function(keys) return redis.call('incr', keys[1]) end)";
        {
            let server = Serve::start(format, &dir, &["--sync", "always"]);
            let mut c = server.conn();
            let name: String = redis::cmd("FUNCTION")
                .arg("LOAD")
                .arg(code)
                .query(&mut c)
                .unwrap();
            assert_eq!(name, "keep", "{format}");
            let n: i64 = redis::cmd("FCALL")
                .arg("kept")
                .arg(1)
                .arg("n")
                .query(&mut c)
                .unwrap();
            assert_eq!(n, 1, "{format}");
            let status = server.signal("TERM");
            assert!(status.success(), "{format}: {status}");
        }
        let server = Serve::start(format, &dir, &["--sync", "always"]);
        let mut c = server.conn();
        let n: i64 = redis::cmd("FCALL")
            .arg("kept")
            .arg(1)
            .arg("n")
            .query(&mut c)
            .unwrap();
        assert_eq!(n, 2, "{format}: the library and the key are back");
        let listed: Value = redis::cmd("FUNCTION")
            .arg("LIST")
            .arg("WITHCODE")
            .query(&mut c)
            .unwrap();
        let text = format!("{listed:?}");
        assert!(text.contains("kept"), "{format}: {text}");
        // A deleted library stays deleted.
        let _: () = redis::cmd("FUNCTION")
            .arg("DELETE")
            .arg("keep")
            .query(&mut c)
            .unwrap();
        drop(c);
        assert!(server.signal("TERM").success());
        let server = Serve::start(format, &dir, &["--sync", "always"]);
        let mut c = server.conn();
        let err = redis::cmd("FCALL")
            .arg("kept")
            .arg(0)
            .query::<Value>(&mut c)
            .unwrap_err();
        assert!(
            err.to_string().contains("Function not found"),
            "{format}: {err}"
        );
    }
}

/// Other clients never see a script half done: a script moves a unit
/// between two keys, another client reads both, many times.
#[test]
fn scripts_are_atomic_against_other_clients() {
    let (_tmp, dir) = store_dir();
    let server = Serve::start("kvrocks", &dir, &["--sync", "no"]);
    let mut c = server.conn();
    let _: () = redis::cmd("MSET")
        .arg("a")
        .arg(1000)
        .arg("b")
        .arg(0)
        .query(&mut c)
        .unwrap();
    let mover = "for i = 1, 50 do redis.call('decr', KEYS[1]); redis.call('incr', KEYS[2]) end";
    let addr = server.addr.clone();
    let writer = std::thread::spawn(move || {
        let mut w = redis::Client::open(format!("redis://{addr}/"))
            .unwrap()
            .get_connection()
            .unwrap();
        for _ in 0..20 {
            let _: Value = redis::cmd("EVAL")
                .arg(mover)
                .arg(2)
                .arg("a")
                .arg("b")
                .query(&mut w)
                .unwrap();
        }
    });
    let mut reads = 0;
    while !writer.is_finished() || reads < 50 {
        let (a, b): (i64, i64) = redis::cmd("MGET").arg("a").arg("b").query(&mut c).unwrap();
        assert_eq!(a + b, 1000, "a script was seen half done: a={a} b={b}");
        assert_eq!(b % 50, 0, "a script was seen half done: b={b}");
        reads += 1;
    }
    writer.join().unwrap();
    let (a, b): (i64, i64) = redis::cmd("MGET").arg("a").arg("b").query(&mut c).unwrap();
    assert_eq!((a, b), (0, 1000));
}

/// A script past `busy-reply-threshold`: other clients get Redis' BUSY,
/// SCRIPT KILL stops it when it has not written, and a script that wrote
/// is UNKILLABLE.
#[test]
fn busy_scripts_and_script_kill() {
    let (_tmp, dir) = store_dir();
    let server = Serve::start("kvrocks", &dir, &["--sync", "no"]);
    let mut c = server.conn();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("lua-time-limit")
        .arg(10)
        .query(&mut c)
        .unwrap();
    let addr = server.addr.clone();
    let runner = std::thread::spawn(move || {
        let mut r = redis::Client::open(format!("redis://{addr}/"))
            .unwrap()
            .get_connection()
            .unwrap();
        redis::cmd("EVAL")
            .arg("while true do end")
            .arg(0)
            .query::<Value>(&mut r)
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match redis::cmd("PING").query::<String>(&mut c) {
            Err(e) if e.to_string().contains("BUSY") => {
                assert!(
                    e.to_string()
                        .contains("You can only call SCRIPT KILL or SHUTDOWN NOSAVE"),
                    "{e}"
                );
                break;
            }
            _ if Instant::now() > deadline => panic!("no BUSY within 60 s"),
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let _: () = redis::cmd("SCRIPT").arg("KILL").query(&mut c).unwrap();
    let killed = runner.join().unwrap().unwrap_err();
    assert!(
        killed
            .to_string()
            .contains("Script killed by user with SCRIPT KILL"),
        "{killed}"
    );
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");

    // A script that wrote cannot be killed; it ends on its own here.
    let addr = server.addr.clone();
    let runner = std::thread::spawn(move || {
        let mut r = redis::Client::open(format!("redis://{addr}/"))
            .unwrap()
            .get_connection()
            .unwrap();
        redis::cmd("EVAL")
            .arg("redis.call('set', 'w', '1'); local t = redis.call('time')[1] + 0; while redis.call('time')[1] + 0 < t + 2 do end; return 'done'")
            .arg(0)
            .query::<String>(&mut r)
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match redis::cmd("SCRIPT").arg("KILL").query::<String>(&mut c) {
            Err(e) if e.to_string().contains("UNKILLABLE") => break,
            _ if Instant::now() > deadline => panic!("no UNKILLABLE within 60 s"),
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    assert_eq!(runner.join().unwrap().unwrap(), "done");
    let w: String = redis::cmd("GET").arg("w").query(&mut c).unwrap();
    assert_eq!(w, "1");
}

/// RESP3 clients get a script's RESP3 types as they are.
#[test]
fn resp3_types_reach_resp3_clients() {
    let (_tmp, dir) = store_dir();
    let server = Serve::start("kvrocks", &dir, &["--sync", "no"]);
    let mut c = server.conn3();
    let v: Value = redis::cmd("EVAL")
        .arg("redis.setresp(3); return {double=1.5}")
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(v, Value::Double(1.5));
    let v: Value = redis::cmd("EVAL")
        .arg("redis.setresp(3); return {map={a=1}}")
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(
        v,
        Value::Map(vec![(Value::BulkString(b"a".to_vec()), Value::Int(1))])
    );
    let v: Value = redis::cmd("EVAL")
        .arg("redis.setresp(3); return true")
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(v, Value::Boolean(true));
}
