//! Keyspace notifications on every format, on a manual clock: what a
//! sink receives, `expired` announced once per expiry, the keys watched
//! for their expiry deleted and announced when due (and not while the
//! store holds expiry, as a replica's does), nothing gathered for a
//! class switched off. Every command's events are compared with
//! redis-server's in crates/conformance/tests/keyspace_events.rs.

use std::sync::{Arc, Mutex};

use redcodec_engine::key_events::{EventClasses, KeyEvent, KeyEventSink};
use redcodec_engine::{Engine, EngineOptions, ManualClock};
use redcodec_formats::{AnyCodec, Format, FormatOptions};

const START_MS: u64 = 1_700_000_000_000;

/// Gathers `event key` lines.
struct Gather {
    classes: EventClasses,
    seen: Mutex<Vec<String>>,
}

impl KeyEventSink for Gather {
    fn classes(&self) -> EventClasses {
        self.classes
    }

    fn publish(&self, events: &[KeyEvent]) {
        let mut seen = self.seen.lock().unwrap();
        seen.extend(
            events
                .iter()
                .map(|e| format!("{} {}", e.event, String::from_utf8_lossy(&e.key))),
        );
    }
}

impl Gather {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

/// An engine of `format` publishing `classes` to the returned sink.
fn engine(
    format: Format,
    classes: &str,
) -> (
    tempfile::TempDir,
    Engine<AnyCodec>,
    Arc<ManualClock>,
    Arc<Gather>,
) {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::at_ms(START_MS));
    let codec = format.codec(&FormatOptions::default()).unwrap();
    let engine = Engine::open(codec, dir.path(), EngineOptions::with_clock(clock.clone())).unwrap();
    let gather = Arc::new(Gather {
        classes: EventClasses::parse(classes).unwrap(),
        seen: Mutex::new(Vec::new()),
    });
    assert!(engine.publish_key_events_to(gather.clone()));
    (dir, engine, clock, gather)
}

fn run(engine: &Engine<AnyCodec>, line: &str) {
    let args: Vec<&str> = line.split(' ').collect();
    let reply = engine.execute(&args);
    assert!(!reply.is_error(), "{line}: {reply:?}");
}

#[test]
fn keys_watched_for_their_expiry_are_deleted_and_announced_when_due() {
    for &format in Format::ALL {
        let (_dir, engine, clock, gather) = engine(format, "KEA");
        run(&engine, "SET k v PX 1500");
        run(&engine, "HSET h f v");
        run(&engine, "EXPIRE h 3");
        assert_eq!(gather.take(), ["set k", "expire k", "hset h", "expire h"]);
        assert!(engine.watches_expiries());
        clock.advance_ms(1000);
        assert_eq!(engine.expire_watched_keys().unwrap(), 0, "{format}");
        assert!(gather.take().is_empty());
        // A replica's store holds expiry: its master's DEL removes keys.
        engine.store().expiry_hold().set(true);
        clock.advance_ms(1100);
        assert_eq!(engine.expire_watched_keys().unwrap(), 0, "{format}");
        engine.store().expiry_hold().set(false);
        assert_eq!(engine.expire_watched_keys().unwrap(), 1, "{format}");
        assert_eq!(gather.take(), ["expired k"], "{format}");
        clock.advance_ms(2000);
        assert_eq!(engine.expire_watched_keys().unwrap(), 1, "{format}");
        assert_eq!(gather.take(), ["expired h"], "{format}");
        assert!(!engine.watches_expiries());
        run(&engine, "GET k");
        run(&engine, "DBSIZE");
        assert!(gather.take().is_empty(), "{format}");
    }
}

#[test]
fn a_key_written_again_is_watched_at_its_new_expiry() {
    for &format in Format::ALL {
        let (_dir, engine, clock, gather) = engine(format, "Ex");
        run(&engine, "SET k v EX 1");
        run(&engine, "SET k w EX 10");
        clock.advance_ms(2000);
        assert_eq!(engine.expire_watched_keys().unwrap(), 0, "{format}");
        assert!(engine.watches_expiries(), "{format}");
        clock.advance_ms(9000);
        assert_eq!(engine.expire_watched_keys().unwrap(), 1, "{format}");
        assert_eq!(gather.take(), ["expired k"], "{format}");
    }
}

#[test]
fn an_expired_key_met_again_and_again_is_announced_once() {
    for &format in Format::ALL {
        let (_dir, engine, clock, gather) = engine(format, "Eg$x");
        run(&engine, "SET k v PX 100");
        clock.advance_ms(2000);
        run(&engine, "GET k");
        run(&engine, "EXISTS k");
        run(&engine, "TTL k");
        assert_eq!(
            gather.take(),
            ["set k", "expire k", "expired k"],
            "{format}"
        );
        // Written again and expired again: a new expiry, announced again.
        run(&engine, "SET k v PX 100");
        clock.advance_ms(2000);
        run(&engine, "GET k");
        assert_eq!(
            gather.take(),
            ["set k", "expire k", "expired k"],
            "{format}"
        );
    }
}

#[test]
fn nothing_is_gathered_or_watched_for_classes_switched_off() {
    for &format in Format::ALL {
        // Classes without a channel kind (K or E) publish nothing.
        for classes in ["", "A", "Kh", "Eh"] {
            let (_dir, engine, _clock, gather) = engine(format, classes);
            run(&engine, "SET k v EX 100");
            run(&engine, "DEL k");
            run(&engine, "LPUSH l a");
            assert!(gather.take().is_empty(), "{format} {classes}");
            assert!(!engine.watches_expiries(), "{format} {classes}");
        }
    }
}

#[test]
fn an_expiry_met_by_a_command_that_fails_is_announced_by_the_next() {
    for &format in Format::ALL {
        let (_dir, engine, clock, gather) = engine(format, "Ex");
        run(&engine, "SET k v PX 100");
        clock.advance_ms(2000);
        // LSET meets the expired key, then fails: nothing is published.
        assert!(engine.execute(&["LSET", "k", "0", "x"]).is_error());
        assert!(gather.take().is_empty(), "{format}");
        run(&engine, "GET k");
        assert_eq!(gather.take(), ["expired k"], "{format}");
        run(&engine, "GET k");
        assert!(gather.take().is_empty(), "{format}");
    }
}

/// Records, at each publication, the store's latest sequence numbers.
struct SequenceAtPublish {
    engine: std::sync::OnceLock<std::sync::Weak<Engine<AnyCodec>>>,
    seen: Mutex<Vec<Vec<u64>>>,
}

impl KeyEventSink for SequenceAtPublish {
    fn classes(&self) -> EventClasses {
        EventClasses::parse("KA").unwrap()
    }

    fn publish(&self, _events: &[KeyEvent]) {
        let engine = self.engine.get().and_then(std::sync::Weak::upgrade);
        let engine = engine.expect("the engine is alive while it publishes");
        self.seen
            .lock()
            .unwrap()
            .push(engine.store().latest_sequences());
    }
}

/// A group's events go out once its write is in the store: a subscriber
/// that reads the key it hears of finds what the command wrote (the
/// pipelined commands a server groups commit together, after them).
#[test]
fn a_groups_events_are_published_once_its_write_is_in_the_store() {
    for &format in Format::ALL {
        let dir = tempfile::tempdir().unwrap();
        let codec = format.codec(&FormatOptions::default()).unwrap();
        let engine = Arc::new(Engine::open(codec, dir.path(), EngineOptions::default()).unwrap());
        let sink = Arc::new(SequenceAtPublish {
            engine: std::sync::OnceLock::new(),
            seen: Mutex::new(Vec::new()),
        });
        let _ = sink.engine.set(Arc::downgrade(&engine));
        assert!(engine.publish_key_events_to(sink.clone()));
        let before = engine.store().latest_sequences();
        engine
            .atomically_on(
                &[b"a", b"b"],
                |e| {
                    assert!(!e.execute(&["SET", "a", "1"]).is_error());
                    assert!(!e.execute(&["SET", "b", "2"]).is_error());
                },
                || {},
            )
            .unwrap();
        let after = engine.store().latest_sequences();
        assert_ne!(before, after, "{format:?}: the group wrote");
        let seen = std::mem::take(&mut *sink.seen.lock().unwrap());
        assert!(!seen.is_empty(), "{format:?}: events published");
        for at_publish in seen {
            assert_eq!(at_publish, after, "{format:?}: published before the write");
        }
    }
}
