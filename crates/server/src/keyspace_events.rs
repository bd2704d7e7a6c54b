//! Keyspace notifications: the `notify-keyspace-events` setting, and the
//! events the engines announce ([`redcodec_engine::key_events`]) published
//! through Pub/Sub as Redis 7.0's `notifyKeyspaceEvent` publishes them:
//! `__keyspace@<db>__:<key>` with the event's name, and
//! `__keyevent@<db>__:<event>` with the key.
//!
//! Every engine the server opens gets a sink for its database (the
//! namespace's index where namespaces are database indexes, else 0);
//! the setting, read by every sink, is the server's. The engine hands a
//! command's events over once it committed, its keys' locks still held:
//! two commands on one key are announced in the order they applied. As in
//! Redis, the messages go to this server's subscribers only.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;

use redcodec_engine::key_events::{EventClasses, KeyEvent, KeyEventSink};

use crate::pubsub::PubSub;

/// Redis' error for a letter that names no class.
pub const INVALID_CLASSES: &str = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";

/// The server's setting and where its events go.
pub struct KeyspaceEvents {
    classes: AtomicU16,
    pubsub: Arc<PubSub>,
}

impl KeyspaceEvents {
    /// Nothing published (`notify-keyspace-events ""`) until configured.
    pub fn new(pubsub: Arc<PubSub>) -> Arc<KeyspaceEvents> {
        Arc::new(KeyspaceEvents {
            classes: AtomicU16::new(0),
            pubsub,
        })
    }

    /// Takes the setting's value (already checked: a value that names no
    /// class publishes nothing).
    pub fn configure(&self, letters: &str) {
        let classes = EventClasses::parse(letters).unwrap_or_default();
        self.classes.store(classes.bits(), Ordering::Relaxed);
    }

    /// Whether `expired` events are published now (keys written with an
    /// expiry are then watched, and expired when due).
    pub fn publishes_expired(&self) -> bool {
        EventClasses::from_bits(self.classes.load(Ordering::Relaxed))
            .publishes(EventClasses::EXPIRED)
    }

    /// The sink of an engine serving database `db`.
    pub fn sink(self: &Arc<Self>, db: u32) -> Arc<dyn KeyEventSink> {
        Arc::new(DatabaseSink {
            events: self.clone(),
            db,
        })
    }
}

/// The sink of one database.
struct DatabaseSink {
    events: Arc<KeyspaceEvents>,
    db: u32,
}

impl KeyEventSink for DatabaseSink {
    fn classes(&self) -> EventClasses {
        EventClasses::from_bits(self.events.classes.load(Ordering::Relaxed))
    }

    fn publish(&self, events: &[KeyEvent]) {
        let classes = self.classes();
        let pubsub = &self.events.pubsub;
        let mut channel = Vec::new();
        for event in events.iter().filter(|e| classes.publishes(e.class)) {
            if classes.intersects(EventClasses::KEYSPACE) {
                channel.clear();
                channel.extend_from_slice(format!("__keyspace@{}__:", self.db).as_bytes());
                channel.extend_from_slice(&event.key);
                pubsub.publish(&channel, event.event.as_bytes());
            }
            if classes.intersects(EventClasses::KEYEVENT) {
                let channel = format!("__keyevent@{}__:{}", self.db, event.event);
                pubsub.publish(channel.as_bytes(), &event.key);
            }
        }
    }
}

/// Checks a value of `notify-keyspace-events`; the value CONFIG GET
/// answers afterwards (Redis writes the classes back in its own order),
/// or Redis' error.
pub fn normalized(letters: &str) -> Result<String, &'static str> {
    EventClasses::parse(letters)
        .map(EventClasses::letters)
        .ok_or(INVALID_CLASSES)
}
