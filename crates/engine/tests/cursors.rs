//! `value::visit_elements_on`: elements read key after key on kept
//! iterators (`internals::cursors`) are the elements read on an iterator
//! made for each key, on every format, whatever the order the keys are
//! read in and wherever a reading stops early; and `Ctx::view_on`'s
//! metadata, read on iterators moved forward, is what point reads give.

use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use redcodec_codec::Meta;
use redcodec_engine::error::CmdError;
use redcodec_engine::internals::cursors::{ReadCursors, SubCursors};
use redcodec_engine::internals::keyspace::Ctx;
use redcodec_engine::internals::walk::KeyWalk;
use redcodec_engine::store::{KvStore, MemStore};
use redcodec_engine::value::{visit_elements, visit_elements_on, Element};
use redcodec_engine::{Engine, EngineOptions, ManualClock, OpenMode};
use redcodec_formats::{AnyCodec, Format, FormatOptions};
use redcodec_testkit::command_lines::{cases, line, Alphabets};

const START_MS: u64 = 1_700_000_000_000;

/// Commands that make collections, delete and remake them (records of old
/// versions stay behind in some formats), and let some expire; lists are
/// pushed and popped at both ends (an array list's head moves), and
/// inserted into and removed from in the middle (a sparse list's indexes
/// turn fractional, an array list's shift).
const COMMANDS: &[&str] = &[
    "SET key val",
    "HSET key elem val elem val",
    "HDEL key elem",
    "SADD key elem elem",
    "SREM key elem",
    "ZADD key score elem score elem",
    "ZREM key elem",
    "RPUSH key elem elem",
    "LPUSH key elem",
    "LPOP key",
    "RPOP key",
    "LINSERT key BEFORE elem elem",
    "LREM key 0 elem",
    "DEL key",
    "PEXPIRE key 10",
];

/// The alphabets of the [`COMMANDS`] words: keys that are prefixes of
/// each other, and neighbours.
const ALPHABETS: Alphabets = &[
    ("key", &["a", "aa", "ab", "b", "b\u{0}", "c"]),
    ("elem", &["x", "y", "z", "w", "xx"]),
    ("val", &["1", "v", ""]),
    ("score", &["-1", "0", "0.5", "2"]),
];

fn command() -> impl Strategy<Value = Vec<String>> {
    proptest::strategy::Union::new(COMMANDS.iter().map(|template| line(template, ALPHABETS)))
}

/// The live keys in walk order, with their metadata.
fn live_keys<S: KvStore>(ctx: &Ctx<'_, AnyCodec, S>) -> Vec<(Vec<u8>, Meta)> {
    let mut walk = KeyWalk::new(ctx, None);
    let mut keys = Vec::new();
    while let Some((key, meta)) = walk.next().expect("walk") {
        keys.push((key, meta.expect("readable")));
    }
    keys
}

/// A reading stopped by its visitor, or failed.
#[derive(Debug, PartialEq)]
struct Cut(String);

impl From<CmdError> for Cut {
    fn from(e: CmdError) -> Cut {
        Cut(e.to_string())
    }
}

/// Every element of `key`, on an iterator of its own.
fn alone<S: KvStore>(ctx: &Ctx<'_, AnyCodec, S>, key: &[u8], meta: &Meta) -> Vec<Element> {
    let mut out = Vec::new();
    visit_elements(ctx, key, meta, |e| -> Result<(), CmdError> {
        out.push(e);
        Ok(())
    })
    .expect("elements");
    out
}

/// Reads the keys in `order` (indexes into `keys`) on one set of cursors;
/// a key whose index is in `cut` is read up to its first element only.
/// Checks each reading against the key's elements read alone.
fn check_order<'e, S: KvStore>(
    ctx: &Ctx<'e, AnyCodec, S>,
    keys: &[(Vec<u8>, Meta)],
    order: &[usize],
    cut: &[usize],
) -> Result<(), TestCaseError> {
    let mut cursors = SubCursors::new();
    for &i in order {
        let (key, meta) = &keys[i];
        let want = alone(ctx, key, meta);
        let mut got = Vec::new();
        let stop = cut.contains(&i);
        let read = visit_elements_on(ctx, Some(&mut cursors), key, meta, |e| -> Result<(), Cut> {
            got.push(e);
            if stop {
                return Err(Cut("cut".to_string()));
            }
            Ok(())
        });
        if stop && !want.is_empty() {
            prop_assert_eq!(read, Err(Cut("cut".to_string())));
            prop_assert_eq!(&got[..], &want[..1], "key {:?}", key);
        } else {
            prop_assert_eq!(read, Ok(want.len() as u64));
            prop_assert_eq!(&got, &want, "key {:?}", key);
        }
    }
    Ok(())
}

/// Every key of the alphabet and a few never written, in key order.
fn every_name() -> Vec<Vec<u8>> {
    let (_, keys) = ALPHABETS[0];
    let mut names: Vec<Vec<u8>> = keys.iter().map(|k| k.as_bytes().to_vec()).collect();
    names.extend([b"".to_vec(), b"0".to_vec(), b"a\0".to_vec(), b"d".to_vec()]);
    names.sort();
    names
}

/// Views of `names` (live, expired, deleted or never written) read in
/// `order` on one set of [`ReadCursors`] are the views point reads give.
fn check_views<S: KvStore>(
    ctx: &Ctx<'_, AnyCodec, S>,
    names: &[Vec<u8>],
    order: &[usize],
) -> Result<(), TestCaseError> {
    let mut reads = ReadCursors::new(ctx.engine().store());
    for &i in order {
        let key = &names[i];
        let on = format!("{:?}", ctx.view_on(&mut reads, key));
        prop_assert_eq!(on, format!("{:?}", ctx.view(key)), "key {:?}", key);
    }
    Ok(())
}

/// [`check_order`] and [`check_views`] in every order: forward,
/// backward, twice over, and every other key.
fn check_every_order<S: KvStore>(engine: &Engine<AnyCodec, S>) -> Result<(), TestCaseError> {
    let ctx = Ctx::new(engine);
    let names = every_name();
    let all: Vec<usize> = (0..names.len()).collect();
    let reversed: Vec<usize> = all.iter().rev().copied().collect();
    let doubled: Vec<usize> = all.iter().chain(&all).copied().collect();
    let odd: Vec<usize> = all.iter().skip(1).step_by(2).copied().collect();
    for order in [&all, &reversed, &doubled, &odd] {
        check_views(&ctx, &names, order)?;
    }
    let keys = live_keys(&ctx);
    let forward: Vec<usize> = (0..keys.len()).collect();
    let backward: Vec<usize> = forward.iter().rev().copied().collect();
    let twice: Vec<usize> = forward.iter().chain(&forward).copied().collect();
    let every_other: Vec<usize> = forward.iter().step_by(2).copied().collect();
    for order in [&forward, &backward, &twice] {
        check_order(&ctx, &keys, order, &[])?;
        check_order(&ctx, &keys, order, &every_other)?;
    }
    Ok(())
}

fn codec(format: Format) -> AnyCodec {
    format.codec(&FormatOptions::default()).expect("codec")
}

fn run(engine: &Engine<AnyCodec, impl KvStore>, clock: &ManualClock, commands: &[Vec<String>]) {
    for words in commands {
        engine.execute(words);
        clock.advance_ms(3);
    }
}

#[test]
fn elements_read_on_kept_cursors_are_the_elements_read_alone_on_every_format() {
    let cases = cases(100);
    for &format in Format::ALL {
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&proptest::collection::vec(command(), 1..60), |commands| {
            let clock = Arc::new(ManualClock::at_ms(START_MS));
            let engine: Engine<AnyCodec, MemStore> =
                Engine::in_memory(codec(format), clock.clone()).expect("engine");
            run(&engine, &clock, &commands);
            check_every_order(&engine)
        });
        if let Err(e) = result {
            panic!("{format}: {e}");
        }
    }
}

#[test]
fn elements_read_on_kept_cursors_over_rocksdb_are_the_elements_read_alone() {
    let mut runner = TestRunner::new(Config {
        cases: 5,
        failure_persistence: None,
        ..Config::default()
    });
    for &format in Format::ALL {
        let result = runner.run(&proptest::collection::vec(command(), 20..80), |commands| {
            let dir = tempfile::tempdir().expect("tempdir");
            let clock = Arc::new(ManualClock::at_ms(START_MS));
            let options = EngineOptions {
                mode: OpenMode::CreateIfMissing,
                ..EngineOptions::with_clock(clock.clone())
            };
            let engine = Engine::open(codec(format), dir.path(), options).expect("engine");
            run(&engine, &clock, &commands);
            check_every_order(&engine)
        });
        if let Err(e) = result {
            panic!("{format}: {e}");
        }
    }
}
