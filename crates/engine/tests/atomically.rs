//! `Engine::atomically`: a group of commands replies as the same commands
//! run one by one and leaves the same store; a group whose commit fails
//! leaves nothing; other threads neither see nor join an open group. A
//! group on known keys (`Engine::atomically_on`) holds only their locks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use redcodec_codec::Codec;
use redcodec_engine::store::{FaultyStore, KvStore, MemStore, Store};
use redcodec_engine::{Engine, EngineOptions, ManualClock, Reply};
use redcodec_formats::{AnyCodec, Format, FormatOptions};
use redcodec_testkit::command_lines::{cases, line, word, Alphabets};

const START_MS: u64 = 1_700_000_000_000;

/// One generated step: a command, or time passing.
#[derive(Clone, Debug)]
enum Step {
    Cmd(Vec<String>),
    Sleep(u64),
}

/// Commands generated, one a line (words as in the conformance crate's
/// model-based test): writes and reads of every type, including the ones
/// that scan forward and in reverse, delete ranges and walk the keyspace.
const COMMANDS: &[&str] = &[
    "SET key val",
    "SET key val PX 5|50",
    "GET key",
    "MGET key key key",
    "APPEND key val",
    "INCR key",
    "DEL key",
    "DEL key key",
    "EXISTS key",
    "TYPE key",
    "PEXPIRE key -1|10|100",
    "PTTL key",
    "PERSIST key",
    "RENAME key key",
    "COPY key key REPLACE",
    "HSET key elem val",
    "HSET key elem val elem val",
    "HDEL key elem",
    "HGET key elem",
    "HLEN key",
    "HGETALL key",
    "HINCRBY key elem 3",
    "LPUSH key elem elem",
    "RPUSH key elem",
    "LPOP key",
    "RPOP key 2",
    "LRANGE key idx idx",
    "LINDEX key idx",
    "LSET key idx elem",
    "LREM key 0|1|-1 elem",
    "LINSERT key BEFORE|AFTER elem elem",
    "LTRIM key idx idx",
    "LMOVE key key LEFT|RIGHT LEFT|RIGHT",
    "SADD key elem elem",
    "SREM key elem",
    "SCARD key",
    "SISMEMBER key elem",
    "SMEMBERS key",
    "SINTERSTORE key key key",
    "ZADD key score elem score elem",
    "ZINCRBY key score elem",
    "ZREM key elem",
    "ZRANK key elem",
    "ZREVRANK key elem",
    "ZRANGE key idx idx WITHSCORES",
    "ZRANGE key idx idx REV",
    "ZRANGEBYSCORE key score score",
    "ZREVRANGEBYSCORE key score score",
    "ZRANGEBYLEX key - +",
    "ZREMRANGEBYRANK key idx idx",
    "ZPOPMIN key",
    "ZPOPMAX key",
    "KEYS *",
    "SCAN 0 COUNT 100",
    "DBSIZE",
    "FLUSHDB",
];

/// The alphabets of the [`COMMANDS`] words.
const ALPHABETS: Alphabets = &[
    ("key", &["a", "b", "c"]),
    ("elem", &["x", "y", "z", "w"]),
    ("val", &["1", "2", "v", ""]),
    ("idx", &["0", "1", "-1", "2", "-2", "5"]),
    ("score", &["-1", "0", "0.5", "1", "2"]),
];

fn step() -> impl Strategy<Value = Step> {
    let commands = COMMANDS
        .iter()
        .map(|template| line(template, ALPHABETS).prop_map(Step::Cmd).boxed());
    let sleep = word("1|20", ALPHABETS)
        .prop_map(|ms| Step::Sleep(ms.parse().unwrap_or(1)))
        .boxed();
    proptest::strategy::Union::new(commands.chain([sleep]))
}

/// Runs `steps`, returning the replies (every reply compared exactly:
/// reply orders depend only on the store, the same in both runs).
fn run_steps<S: KvStore>(
    engine: &Engine<AnyCodec, S>,
    clock: &ManualClock,
    steps: &[Step],
) -> Vec<Reply> {
    let mut replies = Vec::new();
    for step in steps {
        match step {
            Step::Sleep(ms) => clock.advance_ms(*ms),
            Step::Cmd(words) => replies.push(engine.execute(words)),
        }
    }
    replies
}

fn codec(format: Format) -> AnyCodec {
    format.codec(&FormatOptions::default()).expect("codec")
}

/// Every record of a RocksDB store, family by family.
fn rocks_contents(store: &Store) -> Vec<(redcodec_codec::Place, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    store
        .for_each_pair(|place, k, v| {
            out.push((place, k.to_vec(), v.to_vec()));
            Ok(())
        })
        .expect("scan");
    out
}

fn memory_pair(format: Format) -> [(Engine<AnyCodec, MemStore>, Arc<ManualClock>); 2] {
    [(), ()].map(|()| {
        let clock = Arc::new(ManualClock::at_ms(START_MS));
        let engine = Engine::in_memory(codec(format), clock.clone()).expect("engine");
        (engine, clock)
    })
}

#[test]
fn a_group_replies_and_writes_as_its_commands_one_by_one_on_every_format() {
    let cases = cases(150);
    for &format in Format::ALL {
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(
            &(
                proptest::collection::vec(step(), 0..15),
                proptest::collection::vec(step(), 1..40),
            ),
            |(before, group)| {
                let [(alone, alone_clock), (grouped, grouped_clock)] = memory_pair(format);
                run_steps(&alone, &alone_clock, &before);
                run_steps(&grouped, &grouped_clock, &before);
                let want = run_steps(&alone, &alone_clock, &group);
                let got = grouped
                    .atomically(|e| run_steps(e, &grouped_clock, &group))
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    prop_assert_eq!(g, w, "step {} of the group: {:?}", i, group);
                }
                prop_assert_eq!(got.len(), want.len());
                prop_assert!(
                    grouped.store().pairs() == alone.store().pairs(),
                    "the stores differ after {:?}",
                    group
                );
                Ok(())
            },
        );
        if let Err(e) = result {
            panic!("{format}: {e}");
        }
    }
}

#[test]
fn a_group_writes_rocksdb_as_its_commands_one_by_one_on_every_format() {
    for &format in Format::ALL {
        let mut runner = TestRunner::new(Config {
            cases: 6,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&proptest::collection::vec(step(), 20..60), |group| {
            let dirs = [(); 2].map(|()| tempfile::tempdir().expect("tempdir"));
            let [mut alone, mut grouped] = [0, 1].map(|i| {
                let clock = Arc::new(ManualClock::at_ms(START_MS));
                let options = EngineOptions::with_clock(clock.clone());
                let engine = Engine::open(codec(format), dirs[i].path(), options).expect("open");
                (engine, clock)
            });
            alone.0.stop_expiry_task();
            grouped.0.stop_expiry_task();
            let want = run_steps(&alone.0, &alone.1, &group);
            let got = grouped
                .0
                .atomically(|e| run_steps(e, &grouped.1, &group))
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(got, want, "{:?}", group);
            prop_assert!(
                rocks_contents(grouped.0.store()) == rocks_contents(alone.0.store()),
                "the stores differ after {:?}",
                group
            );
            Ok(())
        });
        if let Err(e) = result {
            panic!("{format}: {e}");
        }
    }
}

/// A FaultyStore over memory for `format`, and its engine.
fn faulty(format: Format) -> Engine<AnyCodec, FaultyStore<MemStore>> {
    let codec = codec(format);
    let store = FaultyStore::new(MemStore::new(codec.layout()));
    let clock = Arc::new(ManualClock::at_ms(START_MS));
    Engine::over(codec, store, clock).expect("engine")
}

#[test]
fn a_group_whose_commit_fails_leaves_the_store_as_it_was() {
    for &format in Format::ALL {
        let engine = faulty(format);
        engine.execute(&["SET", "kept", "1"]);
        engine.execute(&["HSET", "h", "f", "old"]);
        let before = engine.store().inner().pairs();
        engine.store().fail_write(1);
        let writes = engine.store().writes();
        let outcome = engine.atomically(|e| {
            [
                e.execute(&["SET", "a", "1"]),
                e.execute(&["INCR", "kept"]),
                e.execute(&["HSET", "h", "f", "new", "g", "2"]),
                e.execute(&["RPUSH", "l", "x", "y"]),
                e.execute(&["DEL", "h"]),
                e.execute(&["GET", "kept"]),
            ]
        });
        let err = outcome.expect_err("the commit fails");
        assert_eq!(
            err.to_string(),
            "storage error: injected write failure",
            "{format}"
        );
        // One write was asked of the store: the group's.
        assert_eq!(engine.store().writes(), writes + 1, "{format}");
        assert!(
            engine.store().inner().pairs() == before,
            "{format}: the store changed"
        );
        assert!(!engine.in_group(), "{format}");
        // The engine works on, and the group left nothing behind.
        assert_eq!(engine.execute(&["GET", "a"]), Reply::Nil, "{format}");
        assert_eq!(
            engine.execute(&["HGET", "h", "f"]),
            Reply::Bulk(b"old".to_vec()),
            "{format}"
        );
        assert_eq!(
            engine.execute(&["INCR", "kept"]),
            Reply::Integer(2),
            "{format}"
        );
    }
}

#[test]
fn inside_a_group_later_commands_see_earlier_writes_and_the_store_sees_none() {
    for &format in Format::ALL {
        let engine = faulty(format);
        let writes = engine.store().writes();
        let before = engine.store().inner().pairs();
        let replies = engine
            .atomically(|e| {
                assert!(e.in_group());
                let replies = vec![
                    e.execute(&["RPUSH", "l", "a", "b", "c"]),
                    e.execute(&["LRANGE", "l", "0", "-1"]),
                    e.execute(&["ZADD", "z", "1", "m", "2", "n"]),
                    e.execute(&["ZREVRANGE", "z", "0", "-1"]),
                    e.execute(&["FLUSHDB"]),
                    e.execute(&["EXISTS", "l", "z"]),
                    e.execute(&["SET", "s", "v"]),
                    e.execute(&["KEYS", "*"]),
                    // Nested: joins this group.
                    e.atomically(|e| e.execute(&["APPEND", "s", "w"]))
                        .expect("nested"),
                ];
                // Nothing written yet.
                assert_eq!(e.store().writes(), writes);
                assert!(e.store().inner().pairs() == before);
                replies
            })
            .expect("commit");
        let bulk = |s: &str| Reply::Bulk(s.as_bytes().to_vec());
        assert_eq!(
            replies,
            vec![
                Reply::Integer(3),
                Reply::Array(vec![bulk("a"), bulk("b"), bulk("c")]),
                Reply::Integer(2),
                Reply::Array(vec![bulk("n"), bulk("m")]),
                Reply::Status("OK".into()),
                Reply::Integer(0),
                Reply::Status("OK".into()),
                Reply::Array(vec![bulk("s")]),
                Reply::Integer(2),
            ],
            "{format}"
        );
        assert_eq!(engine.store().writes(), writes + 1, "{format}: one write");
        assert_eq!(engine.execute(&["GET", "s"]), bulk("vw"), "{format}");
    }
}

#[test]
fn other_threads_neither_see_nor_join_an_open_group() {
    for &format in Format::ALL {
        let clock = Arc::new(ManualClock::at_ms(START_MS));
        let engine = Arc::new(Engine::in_memory(codec(format), clock).expect("engine"));
        engine.execute(&["MSET", "x", "0", "y", "0"]);
        let stop = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (engine, stop) = (engine.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut seen = 0u64;
                    let mut increments = 0u64;
                    while !stop.load(Ordering::SeqCst) {
                        // A group sets x and y together: never one alone.
                        let reply = engine.execute(&["MGET", "x", "y"]);
                        let Reply::Array(items) = reply else {
                            panic!("MGET: {reply:?}");
                        };
                        assert_eq!(items[0], items[1], "half a group seen");
                        assert!(!engine.in_group());
                        // Writes of this thread never join a group.
                        engine.execute(&["INCR", "counter"]);
                        increments += 1;
                        seen += 1;
                    }
                    (seen, increments)
                })
            })
            .collect();
        let groups = 200u64;
        for i in 1..=groups {
            let v = i.to_string();
            engine
                .atomically(|e| {
                    e.execute(&["SET", "x", &v]);
                    std::thread::yield_now();
                    e.execute(&["INCR", "counter"]);
                    e.execute(&["SET", "y", &v]);
                })
                .expect("commit");
        }
        stop.store(true, Ordering::SeqCst);
        let mut increments = groups;
        for reader in readers {
            increments += reader.join().expect("reader").1;
        }
        // No increment lost: every thread's INCR applied exactly once.
        assert_eq!(
            engine.execute(&["GET", "counter"]),
            Reply::Bulk(increments.to_string().into_bytes()),
            "{format}"
        );
    }
}

#[test]
fn groups_on_keys_of_several_threads_run_at_once_and_stay_whole() {
    for &format in Format::ALL {
        let clock = Arc::new(ManualClock::at_ms(START_MS));
        let engine = Arc::new(Engine::in_memory(codec(format), clock).expect("engine"));
        // While one thread's group on `a` is open, another thread's group
        // on `b` runs and commits (the first holds only the lock of `a`).
        let (opened, wait_open) = std::sync::mpsc::channel();
        let (go, wait_go) = std::sync::mpsc::channel::<()>();
        let first = {
            let engine = engine.clone();
            std::thread::spawn(move || {
                engine
                    .atomically_on(
                        &[b"a".as_slice()],
                        |e| {
                            assert!(e.in_group());
                            e.execute(&["SET", "a", "1"]);
                            let seen = e.execute(&["INCR", "a"]);
                            opened.send(()).unwrap();
                            wait_go
                                .recv_timeout(std::time::Duration::from_secs(60))
                                .expect("the other thread's group never committed");
                            seen
                        },
                        || {},
                    )
                    .expect("commit")
            })
        };
        wait_open
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the first group never opened");
        let mut committed = false;
        let got = engine
            .atomically_on(
                &[b"b".as_slice()],
                |e| (e.execute(&["RPUSH", "b", "x"]), e.execute(&["LLEN", "b"])),
                || committed = true,
            )
            .expect("commit");
        assert!(committed, "{format}: `committed` ran");
        assert_eq!(got, (Reply::Integer(1), Reply::Integer(1)), "{format}");
        go.send(()).unwrap();
        assert_eq!(first.join().expect("first"), Reply::Integer(2), "{format}");
        assert_eq!(
            engine.execute(&["GET", "a"]),
            Reply::Bulk(b"2".to_vec()),
            "{format}"
        );
        assert!(!engine.in_group(), "{format}");
    }
}

#[test]
fn a_group_on_keys_is_one_store_write_and_a_failed_one_leaves_nothing() {
    for &format in Format::ALL {
        let engine = faulty(format);
        engine.execute(&["SET", "kept", "1"]);
        let before = engine.store().inner().pairs();
        let writes = engine.store().writes();
        let keys: [&[u8]; 3] = [b"kept", b"h", b"l"];
        let mut committed = false;
        engine.store().fail_write(1);
        let outcome = engine.atomically_on(
            &keys,
            |e| {
                e.execute(&["INCR", "kept"]);
                e.execute(&["HSET", "h", "f", "v"]);
                e.execute(&["RPUSH", "l", "x"]);
            },
            || committed = true,
        );
        assert!(outcome.is_err(), "{format}: the commit fails");
        assert!(!committed, "{format}: `committed` ran after a failure");
        assert_eq!(engine.store().writes(), writes + 1, "{format}");
        assert!(engine.store().inner().pairs() == before, "{format}");
        assert!(!engine.in_group(), "{format}");
        let replies = engine
            .atomically_on(
                &keys,
                |e| {
                    [
                        e.execute(&["INCR", "kept"]),
                        e.execute(&["HSET", "h", "f", "v"]),
                        e.execute(&["HGET", "h", "f"]),
                        e.execute(&["RPUSH", "l", "x", "y"]),
                        e.execute(&["LPOP", "l"]),
                    ]
                },
                || {},
            )
            .expect("commit");
        assert_eq!(
            replies,
            [
                Reply::Integer(2),
                Reply::Integer(1),
                Reply::Bulk(b"v".to_vec()),
                Reply::Integer(2),
                Reply::Bulk(b"x".to_vec()),
            ],
            "{format}"
        );
        assert_eq!(engine.store().writes(), writes + 2, "{format}: one write");
    }
}

#[test]
fn an_abandoned_group_on_keys_writes_nothing_and_releases_its_locks() {
    for &format in Format::ALL {
        let engine = faulty(format);
        engine.execute(&["SET", "kept", "1"]);
        let before = engine.store().inner().pairs();
        let writes = engine.store().writes();
        let keys: [&[u8]; 2] = [b"kept", b"h"];
        let mut committed = false;
        let outcome = engine.atomically_on_or_abandon(
            &keys,
            |e| {
                e.execute(&["INCR", "kept"]);
                e.execute(&["HSET", "h", "f", "v"]);
                // Read through the group's own writes, then give up.
                match e.execute(&["GET", "kept"]) {
                    Reply::Bulk(v) if v == b"2" => Err("gave up"),
                    other => Ok(other),
                }
            },
            || committed = true,
        );
        assert_eq!(outcome.expect("no store error"), Err("gave up"), "{format}");
        assert!(
            !committed,
            "{format}: `committed` ran for an abandoned group"
        );
        assert_eq!(engine.store().writes(), writes, "{format}: a store write");
        assert!(engine.store().inner().pairs() == before, "{format}");
        assert!(!engine.in_group(), "{format}");
        // The locks are free: another thread's group on the same keys runs.
        let other = std::thread::scope(|s| {
            s.spawn(|| {
                engine.atomically_on_or_abandon(
                    &keys,
                    |e| Ok::<Reply, ()>(e.execute(&["INCR", "kept"])),
                    || committed = true,
                )
            })
            .join()
            .expect("thread")
        });
        assert_eq!(other.expect("commit"), Ok(Reply::Integer(2)), "{format}");
        assert!(committed, "{format}: `committed` after a commit");
        assert_eq!(engine.store().writes(), writes + 1, "{format}: one write");
    }
}

/// Runs `lines` as one pipeline group (`atomically_on` their keys, as
/// the server groups a pipeline) on `engine`.
fn pipeline_group(
    engine: &Engine<AnyCodec>,
    keys: &[&str],
    lines: &[&[&str]],
) -> Result<(), String> {
    let keys: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
    engine
        .atomically_on(
            &keys,
            |e| {
                for line in lines {
                    assert!(!e.execute(line).is_error(), "{line:?}");
                }
            },
            || {},
        )
        .map_err(|e| e.to_string())
}

#[test]
fn a_pipeline_group_whose_commands_each_wrote_one_instance_commits_per_instance() {
    // floyd spreads ten keys over its three instances. The store's test
    // hook fails the next write across instances after its first
    // instance: a group committed per instance takes no such write.
    let dir = tempfile::tempdir().expect("tempdir");
    let options = EngineOptions::with_clock(Arc::new(ManualClock::at_ms(START_MS)));
    let mut engine = Engine::open(codec(Format::Floyd), dir.path(), options).expect("open");
    engine.stop_expiry_task();
    let keys: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    engine.store().fail_between_instances(1);
    let sets: Vec<[&str; 3]> = keys.iter().map(|k| ["SET", k, "v"]).collect();
    let lines: Vec<&[&str]> = sets.iter().map(<[&str; 3]>::as_slice).collect();
    pipeline_group(&engine, &keys, &lines).expect("a group of one-instance commands");
    for k in &keys {
        assert_eq!(
            engine.execute(&["GET", k]),
            Reply::Bulk(b"v".to_vec()),
            "{k}"
        );
    }
    // One command across instances: the group takes the intent record,
    // and the hook still armed fails it.
    let mut mset = vec!["MSET"];
    for k in &keys {
        mset.extend([*k, "w"]);
    }
    let failed = pipeline_group(&engine, &keys, &[&["SET", "k0", "x"], &mset]);
    assert!(
        failed.is_err(),
        "the MSET across instances took the intent record"
    );
    // Failed after its first instance, the write is completed before the
    // next read (`Store::write`).
    assert_eq!(engine.execute(&["GET", "k0"]), Reply::Bulk(b"w".to_vec()));

    // blackwidow keeps a key's types in different instances: a group
    // across instances always takes the intent record.
    let dir = tempfile::tempdir().expect("tempdir");
    let options = EngineOptions::with_clock(Arc::new(ManualClock::at_ms(START_MS)));
    let mut engine = Engine::open(codec(Format::Blackwidow), dir.path(), options).expect("open");
    engine.stop_expiry_task();
    engine.store().fail_between_instances(1);
    let failed = pipeline_group(
        &engine,
        &["s", "h"],
        &[&["SET", "s", "1"], &["HSET", "h", "f", "1"]],
    );
    assert!(
        failed.is_err(),
        "blackwidow's group across instances took the intent record"
    );
}

/// `key_instance` names the instance every record of a key lands in, on
/// the formats that keep a key in one instance of several (floyd), and
/// nothing elsewhere: a store of one instance, or one that keeps a key
/// in the instance of its type.
#[test]
fn key_instance_names_where_a_keys_records_land() {
    for &format in Format::ALL {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = Arc::new(ManualClock::at_ms(START_MS));
        let engine = Engine::open(codec(format), dir.path(), EngineOptions::with_clock(clock))
            .expect("engine");
        let codec = codec(format);
        let instances = codec.layout().instances.len();
        let caps = codec.capabilities();
        for i in 0..40 {
            let key = format!("key:{i}");
            let Some(at) = engine.key_instance(key.as_bytes()) else {
                assert!(
                    instances == 1 || !caps.key_in_one_instance,
                    "{format:?}: no instance for {key}"
                );
                continue;
            };
            assert!(caps.key_in_one_instance && instances > 1, "{format:?}");
            for line in [
                format!("SET {key} v"),
                format!("DEL {key}"),
                format!("HSET {key} f v"),
                format!("DEL {key}"),
                format!("ZADD {key} 1 m"),
                format!("DEL {key}"),
                format!("RPUSH {key} a b"),
            ] {
                let args: Vec<&str> = line.split(' ').collect();
                let group = engine
                    .atomically_on(&[key.as_bytes()], |e| e.execute(&args), || {})
                    .expect("commit");
                assert!(!matches!(group, Reply::Error(_)), "{format:?} {line}");
            }
            let store = engine.store();
            for place in store.layout().places() {
                let held = store.scan_family(place).next().expect("scan").is_some();
                assert!(
                    !held || place.instance == at,
                    "{format:?}: {key} has records in instance {} (said {at})",
                    place.instance
                );
            }
            engine.execute(&["FLUSHALL"]);
        }
    }
}

/// A group on known keys reads the store once for a metadata record the
/// store does not hold: every later read of it in the group is answered
/// by the group (a pipeline's `HSET`s of one hash read the key's record
/// in every type's place of blackwidow and nemo once, not once a
/// command). Checked with reads of the store failing after the first
/// command: `TYPE` reads every type's record, the group answers them all.
#[test]
fn a_group_on_keys_reads_the_store_once_for_a_record_it_does_not_hold() {
    for &format in Format::ALL {
        let engine = faulty(format);
        let keys: [&[u8]; 1] = [b"h"];
        let replies = engine
            .atomically_on(
                &keys,
                |e| {
                    let first = e.execute(&["HSET", "h", "f", "v"]);
                    e.store().fail_reads(true);
                    [
                        first,
                        e.execute(&["TYPE", "h"]),
                        e.execute(&["EXISTS", "h"]),
                    ]
                },
                || {},
            )
            .expect("commit");
        engine.store().fail_reads(false);
        assert_eq!(
            replies,
            [
                Reply::Integer(1),
                Reply::Status("hash".into()),
                Reply::Integer(1)
            ],
            "{format}"
        );
        assert_eq!(
            engine.execute(&["HGET", "h", "f"]),
            Reply::Bulk(b"v".to_vec()),
            "{format}"
        );
    }
}

/// Ardb's comparator takes a list index -1 and -1.0 for one key: a pop
/// deletes the element at -1, and LINSERT puts one at -1.0. The store
/// keeps the newest spelling; so does a group (it had kept the first).
#[test]
fn a_group_keeps_the_newest_spelling_of_a_key_its_comparator_takes_for_one() {
    let [(alone, alone_clock), (grouped, grouped_clock)] = memory_pair(Format::Ardb);
    let steps: Vec<Step> = ["LPUSH c y x", "LPOP c", "LINSERT c BEFORE y x"]
        .iter()
        .map(|line| Step::Cmd(line.split(' ').map(String::from).collect()))
        .collect();
    let want = run_steps(&alone, &alone_clock, &steps);
    let got = grouped
        .atomically(|e| run_steps(e, &grouped_clock, &steps))
        .expect("the group commits");
    assert_eq!(got, want);
    assert_eq!(grouped.store().pairs(), alone.store().pairs());
}
