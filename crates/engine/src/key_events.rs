//! Keyspace notifications: the events Redis 7.0 publishes on
//! `__keyspace@<db>__:<key>` and `__keyevent@<db>__:<event>` when
//! `notify-keyspace-events` asks for their class (`notify.c`).
//!
//! A command names its events as it runs ([`crate::keyspace::Ctx::notify`],
//! at the places Redis calls `notifyKeyspaceEvent`); the engine hands
//! them, in order, to the [`KeyEventSink`] a server installed
//! ([`crate::EngineCore::publish_key_events_to`]) once the command
//! committed, its keys' locks still held. Without a sink, or with the
//! event's class switched off, nothing is gathered.

use std::collections::{HashMap, VecDeque};

/// A set of event classes: the letters of `notify-keyspace-events`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventClasses(u16);

impl EventClasses {
    /// None.
    pub const NONE: EventClasses = EventClasses(0);
    /// `K`: publish on `__keyspace@<db>__:<key>`.
    pub const KEYSPACE: EventClasses = EventClasses(1 << 0);
    /// `E`: publish on `__keyevent@<db>__:<event>`.
    pub const KEYEVENT: EventClasses = EventClasses(1 << 1);
    /// `g`: DEL, EXPIRE, RENAME… (type-independent).
    pub const GENERIC: EventClasses = EventClasses(1 << 2);
    /// `$`: string commands.
    pub const STRING: EventClasses = EventClasses(1 << 3);
    /// `l`: list commands.
    pub const LIST: EventClasses = EventClasses(1 << 4);
    /// `s`: set commands.
    pub const SET: EventClasses = EventClasses(1 << 5);
    /// `h`: hash commands.
    pub const HASH: EventClasses = EventClasses(1 << 6);
    /// `z`: sorted-set commands.
    pub const ZSET: EventClasses = EventClasses(1 << 7);
    /// `x`: a key deleted because its time to live ran out.
    pub const EXPIRED: EventClasses = EventClasses(1 << 8);
    /// `e`: a key evicted for memory (never, here: nothing is evicted).
    pub const EVICTED: EventClasses = EventClasses(1 << 9);
    /// `t`: stream commands (no stream is served).
    pub const STREAM: EventClasses = EventClasses(1 << 10);
    /// `m`: a read command's key not found (not in `A`).
    pub const KEY_MISS: EventClasses = EventClasses(1 << 11);
    /// `d`: module events (no module is loaded).
    pub const MODULE: EventClasses = EventClasses(1 << 13);
    /// `n`: a key created (not in `A`).
    pub const NEW: EventClasses = EventClasses(1 << 14);
    /// `A`: `g$lshzxetd`.
    pub const ALL: EventClasses = EventClasses(
        Self::GENERIC.0
            | Self::STRING.0
            | Self::LIST.0
            | Self::SET.0
            | Self::HASH.0
            | Self::ZSET.0
            | Self::EXPIRED.0
            | Self::EVICTED.0
            | Self::STREAM.0
            | Self::MODULE.0,
    );

    /// The letters and their classes, in the order Redis writes them back.
    const LETTERS: [(char, EventClasses); 11] = [
        ('g', Self::GENERIC),
        ('$', Self::STRING),
        ('l', Self::LIST),
        ('s', Self::SET),
        ('h', Self::HASH),
        ('z', Self::ZSET),
        ('x', Self::EXPIRED),
        ('e', Self::EVICTED),
        ('t', Self::STREAM),
        ('d', Self::MODULE),
        ('n', Self::NEW),
    ];

    /// The classes a `notify-keyspace-events` value names, as
    /// `keyspaceEventsStringToFlags` reads it; `None` for a letter that
    /// names none.
    pub fn parse(letters: &str) -> Option<EventClasses> {
        let mut classes = EventClasses::NONE;
        for c in letters.chars() {
            let class = match c {
                'A' => Self::ALL,
                'K' => Self::KEYSPACE,
                'E' => Self::KEYEVENT,
                'm' => Self::KEY_MISS,
                _ => Self::LETTERS.iter().find(|(l, _)| *l == c)?.1,
            };
            classes = classes.with(class);
        }
        Some(classes)
    }

    /// The value `CONFIG GET notify-keyspace-events` answers, as
    /// `keyspaceEventsFlagsToString` writes it (`A` for all of its
    /// classes, then `K`, `E`, `m`).
    pub fn letters(self) -> String {
        let mut out = String::new();
        if self.contains(Self::ALL) {
            // `n` is not written beside `A` (Redis 7.0 drops it there).
            out.push('A');
        } else {
            for (letter, class) in Self::LETTERS {
                if self.intersects(class) {
                    out.push(letter);
                }
            }
        }
        for (letter, class) in [
            ('K', Self::KEYSPACE),
            ('E', Self::KEYEVENT),
            ('m', Self::KEY_MISS),
        ] {
            if self.intersects(class) {
                out.push(letter);
            }
        }
        out
    }

    /// Both sets' classes.
    pub const fn with(self, other: EventClasses) -> EventClasses {
        EventClasses(self.0 | other.0)
    }

    /// Whether every class of `other` is in this set.
    pub const fn contains(self, other: EventClasses) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether some class of `other` is in this set.
    pub const fn intersects(self, other: EventClasses) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether an event of `class` is published under these settings: its
    /// class is on, and so is one of `K` and `E`.
    pub const fn publishes(self, class: EventClasses) -> bool {
        self.intersects(class) && self.intersects(Self::KEYSPACE.with(Self::KEYEVENT))
    }

    /// The bits, for an atomic.
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// The classes of `bits` ([`EventClasses::bits`]).
    pub const fn from_bits(bits: u16) -> EventClasses {
        EventClasses(bits)
    }
}

/// One event: its class, its name (`set`, `lpush`, `expired`…) and the
/// key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyEvent {
    /// The class it belongs to.
    pub class: EventClasses,
    /// Redis' name for it.
    pub event: &'static str,
    /// The key.
    pub key: Vec<u8>,
}

/// Where an engine's events go: a server's Pub/Sub.
pub trait KeyEventSink: Send + Sync {
    /// The classes published now (`notify-keyspace-events`); an event of
    /// another class is not gathered at all.
    fn classes(&self) -> EventClasses;
    /// Publishes the events of one command (or of one key the active
    /// expiry deleted), in the order they happened.
    fn publish(&self, events: &[KeyEvent]);
}

/// The expired keys already announced (`expired`), each with the expiry
/// it had: a key whose expired metadata stays stored (until the active
/// expiry or a compaction removes it) is announced the first time it is
/// met, as Redis announces it when it deletes it, not at every later
/// access. Bounded: the oldest are forgotten first.
#[derive(Default)]
pub(crate) struct AnnouncedExpiries {
    /// Each key's announced expiries (one, unless it expired, was set
    /// again and expired again while remembered).
    known: HashMap<Vec<u8>, Vec<u64>>,
    order: VecDeque<(Vec<u8>, u64)>,
}

impl AnnouncedExpiries {
    /// How many are remembered.
    const CAPACITY: usize = 65_536;

    /// Whether `key` expired at `expire_ms` was announced.
    pub(crate) fn contains(&self, key: &[u8], expire_ms: u64) -> bool {
        self.known
            .get(key)
            .is_some_and(|expiries| expiries.contains(&expire_ms))
    }

    /// Notes `key` expired at `expire_ms` as announced; whether it was new.
    pub(crate) fn first_time(&mut self, key: &[u8], expire_ms: u64) -> bool {
        if self.contains(key, expire_ms) {
            return false;
        }
        if self.order.len() == Self::CAPACITY {
            if let Some((oldest, at)) = self.order.pop_front() {
                if let Some(expiries) = self.known.get_mut(&oldest) {
                    expiries.retain(|&e| e != at);
                    if expiries.is_empty() {
                        self.known.remove(&oldest);
                    }
                }
            }
        }
        self.known.entry(key.to_vec()).or_default().push(expire_ms);
        self.order.push_back((key.to_vec(), expire_ms));
        true
    }

    /// Forgets every key (the keyspace was flushed).
    pub(crate) fn clear(&mut self) {
        self.known.clear();
        self.order.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_read_and_written_as_redis_does() {
        let cases = [
            ("", ""),
            ("KA", "AK"),
            ("EA", "AE"),
            ("gKE", "gKE"),
            ("$lshzxeKE", "$lshzxeKE"),
            ("KEA", "AKE"),
            ("KEAn", "AKE"),
            ("Exm", "xEm"),
            ("Kgd", "gdK"),
        ];
        for (given, answered) in cases {
            let classes = EventClasses::parse(given).expect(given);
            assert_eq!(classes.letters(), answered, "{given}");
        }
        assert_eq!(EventClasses::parse("KEq"), None);
    }

    #[test]
    fn an_event_needs_its_class_and_a_channel_kind() {
        let e = EventClasses::parse("Eg").unwrap();
        assert!(e.publishes(EventClasses::GENERIC));
        assert!(!e.publishes(EventClasses::STRING));
        assert!(!EventClasses::parse("A")
            .unwrap()
            .publishes(EventClasses::GENERIC));
        assert!(!EventClasses::parse("KEA")
            .unwrap()
            .publishes(EventClasses::NEW));
    }

    #[test]
    fn an_expiry_is_announced_once() {
        let mut seen = AnnouncedExpiries::default();
        assert!(seen.first_time(b"k", 5));
        assert!(!seen.first_time(b"k", 5));
        assert!(seen.first_time(b"k", 6));
    }
}
