//! DUMP payloads against a real redis-server 7.0: what it DUMPs, the
//! decoder reads as the value; what the encoder writes, it RESTOREs to the
//! same value; and with `rdbcompression no` the encoder's bytes are its
//! bytes, for every encoding the crate claims.
//!
//! Needs `redis-server` on PATH. Without it the test is skipped, unless
//! `REDCODEC_REQUIRE_REDIS=1` (set by `.ci/run`), where it fails.

use redcodec_conformance::dump_samples::samples;
use redcodec_conformance::target::{RedisServer, Target};
use redcodec_engine::Reply;
use redcodec_rdb::{decode_payload, encode_payload, EncodeOptions};

fn run(redis: &mut RedisServer, args: &[&[u8]]) -> Reply {
    let args: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
    redis.execute(&args).expect("redis answers")
}

fn dump(redis: &mut RedisServer, key: &[u8]) -> Vec<u8> {
    match run(redis, &[b"DUMP", key]) {
        Reply::Bulk(b) => b,
        other => panic!("DUMP replied {other:?}"),
    }
}

#[test]
fn payloads_agree_with_redis_server() {
    let Some(mut redis) = RedisServer::start_or_skip("DUMP payloads against redis-server") else {
        return;
    };
    let (mut exact, mut checked, mut equal_compressed) = (0, 0, 0);
    for sample in samples() {
        let name = &sample.name;
        for cmd in sample.build(b"k") {
            let args: Vec<&[u8]> = cmd.iter().map(Vec::as_slice).collect();
            let reply = run(&mut redis, &args);
            assert!(!matches!(reply, Reply::Error(_)), "{name}: {reply:?}");
        }
        let want = sample.value.canonical();
        for compression in [true, false] {
            let flag: &[u8] = if compression { b"yes" } else { b"no" };
            run(&mut redis, &[b"CONFIG", b"SET", b"rdbcompression", flag]);
            let theirs = dump(&mut redis, b"k");
            let decoded = decode_payload(&theirs).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                decoded.canonical(),
                want,
                "{name}: Redis' payload decodes to the value"
            );

            let ours = encode_payload(&sample.value, EncodeOptions { compression });
            if compression && sample.byte_exact() && ours == theirs {
                equal_compressed += 1;
            }
            if !compression && sample.byte_exact() {
                assert_eq!(ours, theirs, "{name}: our bytes are redis-server's");
                exact += 1;
            }
            let reply = run(&mut redis, &[b"RESTORE", b"k2", b"0", &ours, b"REPLACE"]);
            assert_eq!(
                reply,
                Reply::Status("OK".into()),
                "{name}: RESTORE of our payload"
            );
            let again = decode_payload(&dump(&mut redis, b"k2")).expect("decodes");
            assert_eq!(
                again.canonical(),
                want,
                "{name}: restored into redis-server"
            );
            checked += 1;
        }
    }
    println!(
        "{checked} payloads checked both ways; {exact} byte-equal to redis-server's with \
         rdbcompression no, {equal_compressed} with compression"
    );
    assert!(exact >= 30, "byte-exact cases: {exact}");
}
