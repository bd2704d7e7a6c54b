//! DUMP and RESTORE end to end: between redis-server 7.0 and `redcodec
//! serve` on every format, both directions, for values of every type and
//! size class (`redcodec_conformance::dump_samples`); a RESTORE aborts a
//! transaction that WATCHes its key.
//!
//! Needs `redis-server` on PATH. Without it the test is skipped, unless
//! `REDCODEC_REQUIRE_REDIS=1` (set by `.ci/run`), where it fails.

use redcodec_conformance::dump_samples::samples;
use redcodec_conformance::target::{RedisServer, Target};
use redcodec_engine::Reply;
use redcodec_rdb::decode_payload;

mod common;
mod serve_support;
use common::command;
use serve_support::{store_dir, Serve};

fn on_redis(redis: &mut RedisServer, args: &[Vec<u8>]) -> Reply {
    redis.execute(args).expect("redis-server answers")
}

fn on_serve(conn: &mut redis::Connection, args: &[Vec<u8>]) -> redis::RedisResult<redis::Value> {
    let mut cmd = redis::cmd(&String::from_utf8_lossy(&args[0]));
    for a in &args[1..] {
        cmd.arg(a.as_slice());
    }
    cmd.query(conn)
}

fn words(args: &[&[u8]]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.to_vec()).collect()
}

#[test]
fn dump_on_one_server_restores_on_the_other_both_ways() {
    let Some(mut redis) = RedisServer::start_or_skip("DUMP/RESTORE between redis-server and serve")
    else {
        return;
    };
    for format in ["kvrocks", "blackwidow", "nemo", "ardb", "floyd"] {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &["--sync", "no"]);
        let mut c = server.conn();
        let (mut moved, mut refused) = (0, 0);
        for sample in samples() {
            let name = format!("{format}: {}", sample.name);
            let want = sample.value.canonical();
            // redis-server → serve.
            for cmd in sample.build(b"k") {
                assert!(
                    !matches!(on_redis(&mut redis, &cmd), Reply::Error(_)),
                    "{name}"
                );
            }
            let Reply::Bulk(theirs) = on_redis(&mut redis, &words(&[b"DUMP", b"k"])) else {
                panic!("{name}: DUMP on redis-server")
            };
            match on_serve(
                &mut c,
                &words(&[b"RESTORE", b"k", b"0", &theirs, b"REPLACE"]),
            ) {
                Ok(_) => {}
                // A format that stores fewer scores refuses them, naming its limit.
                Err(e) if format!("{e}").contains("is out of range for the") => {
                    refused += 1;
                    continue;
                }
                Err(e) => panic!("{name}: RESTORE on serve: {e}"),
            }
            let ours: Vec<u8> = redis::cmd("DUMP")
                .arg("k")
                .query(&mut c)
                .expect("DUMP on serve");
            let got = decode_payload(&ours).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(got.canonical(), want, "{name}: redis-server → serve");
            // serve → redis-server: the payload serve wrote for the value
            // it built itself.
            for cmd in sample.build(b"built") {
                on_serve(&mut c, &cmd).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            let built: Vec<u8> = redis::cmd("DUMP").arg("built").query(&mut c).expect("DUMP");
            let reply = on_redis(
                &mut redis,
                &words(&[b"RESTORE", b"k2", b"0", &built, b"REPLACE"]),
            );
            assert_eq!(
                reply,
                Reply::Status("OK".into()),
                "{name}: RESTORE on redis-server"
            );
            let Reply::Bulk(back) = on_redis(&mut redis, &words(&[b"DUMP", b"k2"])) else {
                panic!("{name}: DUMP of the restored key")
            };
            let back = decode_payload(&back).expect("decodes");
            assert_eq!(back.canonical(), want, "{name}: serve → redis-server");
            moved += 1;
        }
        // RESTORE is a write to its key for WATCH.
        let payload: Vec<u8> = redis::cmd("DUMP").arg("built").query(&mut c).expect("DUMP");
        let _: () = redis::cmd("WATCH").arg("k").query(&mut c).expect("WATCH");
        let mut other = server.conn();
        let _: () = command(&["RESTORE", "k", "0"])
            .arg(payload.as_slice())
            .arg("REPLACE")
            .query(&mut other)
            .expect("RESTORE");
        let exec: Option<(redis::Value,)> = redis::pipe()
            .atomic()
            .cmd("TYPE")
            .arg("k")
            .query(&mut c)
            .expect("EXEC");
        assert!(
            exec.is_none(),
            "{format}: EXEC after a RESTORE of a watched key"
        );
        println!(
            "{format}: {moved} values moved both ways, {refused} refused by the format's limits"
        );
        assert!(moved >= 30, "{format}: {moved}");
    }
}
