//! Pub/Sub as Redis 7.0 serves it on one server: SUBSCRIBE, PSUBSCRIBE,
//! UNSUBSCRIBE, PUNSUBSCRIBE, PUBLISH and PUBSUB CHANNELS, NUMSUB and
//! NUMPAT; and the sharded channels of Redis 7 (SSUBSCRIBE, SUNSUBSCRIBE,
//! SPUBLISH, PUBSUB SHARDCHANNELS and SHARDNUMSUB), names of their own,
//! without patterns, counted apart in the confirmations.
//!
//! Each subscribed connection has a feed (`client_feed`): PUBLISH encodes the message
//! in the subscriber's protocol (a RESP2 array, a RESP3 push) and appends
//! it there, and the connection's loop writes it when it wakes. A
//! subscriber that leaves more than 32 MiB unread is disconnected, Redis'
//! hard `client-output-buffer-limit` of the pubsub class.
//!
//! A master sends PUBLISH on to its replicas, as Redis does
//! (`commands::channels::publish`). In cluster mode a node does not
//! forward messages to the others (Redis does, over its cluster bus).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::client_feed::Feed;
use crate::reply::Protocol;

/// The most bytes a subscriber may leave unread.
const MAX_PENDING: usize = 32 * 1024 * 1024;

/// A channel or a pattern.
type Name = Vec<u8>;

/// Every subscription of the server.
#[derive(Default)]
pub struct PubSub {
    inner: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    /// Channel → its subscribers.
    channels: HashMap<Name, HashSet<u64>>,
    /// Pattern → its subscribers.
    patterns: HashMap<Name, HashSet<u64>>,
    /// Sharded channel → its subscribers.
    shards: HashMap<Name, HashSet<u64>>,
    /// Client id → what it subscribed to.
    clients: HashMap<u64, Subscriber>,
}

struct Subscriber {
    channels: HashSet<Name>,
    patterns: HashSet<Name>,
    shards: HashSet<Name>,
    protocol: Protocol,
    feed: Arc<Feed>,
}

impl Subscriber {
    /// Every subscription.
    fn count(&self) -> usize {
        self.channels.len() + self.patterns.len() + self.shards.len()
    }

    /// What a confirmation of `kind` counts: channels and patterns
    /// together (`clientSubscriptionsCount`), or sharded channels alone.
    fn count_of(&self, kind: Kind) -> usize {
        match kind {
            Kind::Channel | Kind::Pattern => self.channels.len() + self.patterns.len(),
            Kind::Shard => self.shards.len(),
        }
    }

    fn names(&mut self, kind: Kind) -> &mut HashSet<Name> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shards,
        }
    }
}

/// A client's subscriptions after a command: channels, patterns, sharded
/// channels.
pub type Counts = (usize, usize, usize);

/// Channels or patterns: which kind of subscription a command works on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// SUBSCRIBE, UNSUBSCRIBE: channels by name.
    Channel,
    /// PSUBSCRIBE, PUNSUBSCRIBE: glob-style patterns.
    Pattern,
    /// SSUBSCRIBE, SUNSUBSCRIBE: sharded channels.
    Shard,
}

impl Kind {
    /// The verb of `change`'s confirmations.
    fn verb(self, change: Change) -> &'static [u8] {
        match (change, self) {
            (Change::Subscribe, Kind::Channel) => b"subscribe",
            (Change::Subscribe, Kind::Pattern) => b"psubscribe",
            (Change::Unsubscribe, Kind::Channel) => b"unsubscribe",
            (Change::Unsubscribe, Kind::Pattern) => b"punsubscribe",
            (Change::Subscribe, Kind::Shard) => b"ssubscribe",
            (Change::Unsubscribe, Kind::Shard) => b"sunsubscribe",
        }
    }
}

/// Whether a command adds subscriptions or drops them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Change {
    /// SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE.
    Subscribe,
    /// UNSUBSCRIBE, PUNSUBSCRIBE, SUNSUBSCRIBE.
    Unsubscribe,
}

/// One element of a confirmation or a message.
enum Item<'a> {
    Bulk(&'a [u8]),
    Null,
    Int(usize),
}

/// A confirmation or a message: a RESP2 array, a RESP3 push.
fn encode(protocol: Protocol, items: &[Item<'_>], out: &mut Vec<u8>) {
    let head = if protocol == Protocol::Resp3 {
        b'>'
    } else {
        b'*'
    };
    out.push(head);
    out.extend_from_slice(format!("{}\r\n", items.len()).as_bytes());
    for item in items {
        match item {
            Item::Bulk(b) => {
                out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            Item::Null if protocol == Protocol::Resp3 => out.extend_from_slice(b"_\r\n"),
            Item::Null => out.extend_from_slice(b"$-1\r\n"),
            Item::Int(n) => out.extend_from_slice(format!(":{n}\r\n").as_bytes()),
        }
    }
}

impl Registry {
    fn index(&mut self, kind: Kind) -> &mut HashMap<Name, HashSet<u64>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shards,
        }
    }

    /// Subscribes client `id` to `name` of `kind`.
    fn add(&mut self, id: u64, protocol: Protocol, kind: Kind, name: &[u8]) {
        let sub = self.clients.entry(id).or_insert_with(|| Subscriber {
            channels: HashSet::new(),
            patterns: HashSet::new(),
            shards: HashSet::new(),
            protocol,
            feed: Arc::new(Feed::new(MAX_PENDING)),
        });
        sub.protocol = protocol;
        if sub.names(kind).insert(name.to_vec()) {
            self.index(kind)
                .entry(name.to_vec())
                .or_default()
                .insert(id);
        }
    }

    /// Drops `name` of `kind` for client `id` (nothing when it is not
    /// subscribed to it).
    fn drop_one(&mut self, id: u64, kind: Kind, name: &[u8]) {
        let Some(sub) = self.clients.get_mut(&id) else {
            return;
        };
        if !sub.names(kind).remove(name) {
            return;
        }
        let index = self.index(kind);
        if let Some(ids) = index.get_mut(name) {
            ids.remove(&id);
            if ids.is_empty() {
                index.remove(name);
            }
        }
    }

    fn count(&self, id: u64, kind: Kind) -> usize {
        self.clients.get(&id).map_or(0, |s| s.count_of(kind))
    }

    fn counts(&self, id: u64) -> Counts {
        self.clients.get(&id).map_or((0, 0, 0), |s| {
            (s.channels.len(), s.patterns.len(), s.shards.len())
        })
    }

    /// Forgets client `id` once it holds no subscription.
    fn tidy(&mut self, id: u64) {
        if self.clients.get(&id).is_some_and(|s| s.count() == 0) {
            self.clients.remove(&id);
        }
    }
}

impl PubSub {
    /// SUBSCRIBE, PSUBSCRIBE, UNSUBSCRIBE or PUNSUBSCRIBE `names` for
    /// client `id`, as `change` and `kind` say: one confirmation per name
    /// (the verb, the name, the client's count of subscriptions after
    /// it), encoded in `protocol` into `out`. An unsubscribe without names
    /// drops every subscription of the kind, and names nil when there is
    /// none. Returns the client's channels and patterns after the last.
    pub fn change(
        &self,
        id: u64,
        protocol: Protocol,
        (change, kind): (Change, Kind),
        names: &[impl AsRef<[u8]>],
        out: &mut Vec<u8>,
    ) -> Counts {
        let mut r = self.inner.lock();
        let verb = kind.verb(change);
        let mut confirm = |name: Option<&[u8]>, count: usize| {
            let name = name.map_or(Item::Null, Item::Bulk);
            encode(protocol, &[Item::Bulk(verb), name, Item::Int(count)], out);
        };
        let names: Vec<Name> = match change {
            Change::Unsubscribe if names.is_empty() => r
                .clients
                .get_mut(&id)
                .map_or_else(Vec::new, |s| s.names(kind).iter().cloned().collect()),
            _ => names.iter().map(|n| n.as_ref().to_vec()).collect(),
        };
        if change == Change::Unsubscribe && names.is_empty() {
            confirm(None, r.count(id, kind));
        }
        for name in &names {
            match change {
                Change::Subscribe => r.add(id, protocol, kind, name),
                Change::Unsubscribe => r.drop_one(id, kind, name),
            }
            confirm(Some(name), r.count(id, kind));
        }
        let counts = r.counts(id);
        r.tidy(id);
        counts
    }

    /// Client `id` switched protocols (HELLO): its next messages are
    /// written in `protocol`.
    pub fn set_protocol(&self, id: u64, protocol: Protocol) {
        if let Some(sub) = self.inner.lock().clients.get_mut(&id) {
            sub.protocol = protocol;
        }
    }

    /// Drops every subscription of client `id` (RESET, a disconnection).
    pub fn forget(&self, id: u64) {
        let mut r = self.inner.lock();
        let Some(sub) = r.clients.remove(&id) else {
            return;
        };
        for (kind, names) in [
            (Kind::Channel, sub.channels),
            (Kind::Pattern, sub.patterns),
            (Kind::Shard, sub.shards),
        ] {
            let index = r.index(kind);
            for name in names {
                if let Some(ids) = index.get_mut(&name) {
                    ids.remove(&id);
                    if ids.is_empty() {
                        index.remove(&name);
                    }
                }
            }
        }
    }

    /// PUBLISH `channel` `message`: sent to the channel's subscribers
    /// (`message`) and to those of every pattern it matches (`pmessage`);
    /// returns how many received it.
    pub fn publish(&self, channel: &[u8], message: &[u8]) -> usize {
        let r = self.inner.lock();
        let mut received = 0;
        let mut bytes = Vec::new();
        let to_channel = [
            Item::Bulk(b"message"),
            Item::Bulk(channel),
            Item::Bulk(message),
        ];
        let by_channel = r.channels.get(channel).map(|ids| (&to_channel[..], ids));
        let by_pattern = r
            .patterns
            .iter()
            .filter(|(pattern, _)| redcodec_protocol::glob::matches(pattern, channel, false))
            .map(|(pattern, ids)| {
                let items = vec![
                    Item::Bulk(b"pmessage"),
                    Item::Bulk(pattern),
                    Item::Bulk(channel),
                    Item::Bulk(message),
                ];
                (items, ids)
            })
            .collect::<Vec<_>>();
        let deliveries = by_channel
            .into_iter()
            .chain(by_pattern.iter().map(|(items, ids)| (&items[..], *ids)));
        for (items, ids) in deliveries {
            for sub in ids.iter().filter_map(|id| r.clients.get(id)) {
                bytes.clear();
                encode(sub.protocol, items, &mut bytes);
                sub.feed.push(&bytes);
                received += 1;
            }
        }
        received
    }

    /// SPUBLISH `channel` `message`: sent to the sharded channel's
    /// subscribers (`smessage`); returns how many received it.
    pub fn publish_shard(&self, channel: &[u8], message: &[u8]) -> usize {
        let r = self.inner.lock();
        let items = [
            Item::Bulk(b"smessage"),
            Item::Bulk(channel),
            Item::Bulk(message),
        ];
        let mut bytes = Vec::new();
        let mut received = 0;
        let ids = r.shards.get(channel).into_iter().flatten();
        for sub in ids.filter_map(|id| r.clients.get(id)) {
            bytes.clear();
            encode(sub.protocol, &items, &mut bytes);
            sub.feed.push(&bytes);
            received += 1;
        }
        received
    }

    /// PUBSUB CHANNELS (`Kind::Channel`) or SHARDCHANNELS
    /// (`Kind::Shard`): the channels with a subscriber, those matching
    /// `pattern` when given.
    pub fn channels(&self, kind: Kind, pattern: Option<&[u8]>) -> Vec<Name> {
        let mut r = self.inner.lock();
        r.index(kind)
            .keys()
            .filter(|c| pattern.is_none_or(|p| redcodec_protocol::glob::matches(p, c, false)))
            .cloned()
            .collect()
    }

    /// PUBSUB NUMSUB (`Kind::Channel`) or SHARDNUMSUB (`Kind::Shard`):
    /// the subscribers of `channel` (patterns not counted).
    pub fn subscribers(&self, kind: Kind, channel: &[u8]) -> usize {
        self.inner
            .lock()
            .index(kind)
            .get(channel)
            .map_or(0, HashSet::len)
    }

    /// PUBSUB NUMPAT: the patterns some client subscribed to (each
    /// counted once, as Redis counts them).
    pub fn patterns(&self) -> usize {
        self.inner.lock().patterns.len()
    }

    /// The messages waiting for client `id` now (perhaps none), taken
    /// without waiting: its connection writes them before the replies to
    /// the requests it reads next, as Redis' one output buffer orders
    /// them. `None` when it must be disconnected (it fell too far behind).
    pub fn take(&self, id: u64) -> Option<Vec<u8>> {
        let feed = self.inner.lock().clients.get(&id).map(|s| s.feed.clone());
        feed.map_or(Some(Vec::new()), |feed| feed.take())
    }

    /// Waits for the messages of client `id`: `Some(bytes)` to write,
    /// `None` when it must be disconnected (it fell too far behind).
    /// Never completes for a client without subscriptions.
    pub async fn next(&self, id: u64) -> Option<Vec<u8>> {
        let feed = self.inner.lock().clients.get(&id).map(|s| s.feed.clone());
        match feed {
            Some(feed) => feed.next().await,
            None => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R2: Protocol = Protocol::Resp2;
    const SUB_C: (Change, Kind) = (Change::Subscribe, Kind::Channel);
    const SUB_P: (Change, Kind) = (Change::Subscribe, Kind::Pattern);
    const UNSUB_C: (Change, Kind) = (Change::Unsubscribe, Kind::Channel);
    const UNSUB_P: (Change, Kind) = (Change::Unsubscribe, Kind::Pattern);

    #[test]
    fn subscriptions_are_counted_per_client_and_messages_reach_channels_and_patterns() {
        let ps = PubSub::default();
        let mut out = Vec::new();
        assert_eq!(
            ps.change(1, R2, SUB_C, &["a", "b", "a"], &mut out),
            (2, 0, 0)
        );
        assert_eq!(
            out,
            b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n\
              *3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n\
              *3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:2\r\n"
        );
        out.clear();
        assert_eq!(
            ps.change(2, Protocol::Resp3, SUB_P, &["a*"], &mut out),
            (0, 1, 0)
        );
        assert_eq!(out, b">3\r\n$10\r\npsubscribe\r\n$2\r\na*\r\n:1\r\n");
        assert_eq!(ps.publish(b"a", b"hi"), 2);
        assert_eq!(ps.publish(b"zz", b"hi"), 0);
        assert_eq!(ps.subscribers(Kind::Channel, b"a"), 1);
        ps.change(3, R2, SUB_P, &["a*"], &mut Vec::new());
        assert_eq!(ps.patterns(), 1);
        assert_eq!(ps.publish(b"a", b"hi"), 3);
        ps.forget(3);
        let mut channels = ps.channels(Kind::Channel, None);
        channels.sort();
        assert_eq!(channels, [b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(ps.channels(Kind::Channel, Some(b"b*")), [b"b".to_vec()]);
        ps.forget(2);
        assert_eq!(ps.patterns(), 0);
        assert_eq!(ps.publish(b"a", b"again"), 1);
    }

    #[test]
    fn sharded_channels_are_apart_and_counted_apart() {
        const SUB_S: (Change, Kind) = (Change::Subscribe, Kind::Shard);
        const UNSUB_S: (Change, Kind) = (Change::Unsubscribe, Kind::Shard);
        let ps = PubSub::default();
        let mut out = Vec::new();
        ps.change(1, R2, SUB_C, &["a"], &mut out);
        out.clear();
        assert_eq!(ps.change(1, R2, SUB_S, &["a", "b"], &mut out), (1, 0, 2));
        assert_eq!(
            out,
            b"*3\r\n$10\r\nssubscribe\r\n$1\r\na\r\n:1\r\n\
              *3\r\n$10\r\nssubscribe\r\n$1\r\nb\r\n:2\r\n"
        );
        // A channel's message does not reach the sharded one of that name.
        assert_eq!(ps.publish(b"b", b"hi"), 0);
        assert_eq!(ps.publish_shard(b"b", b"hi"), 1);
        assert_eq!(ps.subscribers(Kind::Shard, b"a"), 1);
        assert_eq!(ps.channels(Kind::Shard, Some(b"b")), [b"b".to_vec()]);
        out.clear();
        assert_eq!(
            ps.change(1, R2, UNSUB_S, &[] as &[&str], &mut out),
            (1, 0, 0)
        );
        assert_eq!(out.windows(12).filter(|w| w == b"sunsubscribe").count(), 2);
        assert_eq!(ps.publish_shard(b"a", b"hi"), 0);
        assert_eq!(ps.publish(b"a", b"hi"), 1);
    }

    #[test]
    fn unsubscribing_from_nothing_names_nil_and_everything_empties_the_client() {
        let ps = PubSub::default();
        let mut out = Vec::new();
        assert_eq!(
            ps.change(1, R2, UNSUB_C, &[] as &[&str], &mut out),
            (0, 0, 0)
        );
        assert_eq!(out, b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n");
        ps.change(1, R2, SUB_C, &["x"], &mut out);
        ps.change(1, R2, SUB_P, &["y*"], &mut out);
        out.clear();
        assert_eq!(
            ps.change(1, R2, UNSUB_C, &[] as &[&str], &mut out),
            (0, 1, 0)
        );
        assert_eq!(out, b"*3\r\n$11\r\nunsubscribe\r\n$1\r\nx\r\n:1\r\n");
        out.clear();
        assert_eq!(
            ps.change(1, R2, UNSUB_P, &["nope", "y*"], &mut out),
            (0, 0, 0)
        );
        assert_eq!(
            out,
            b"*3\r\n$12\r\npunsubscribe\r\n$4\r\nnope\r\n:1\r\n\
              *3\r\n$12\r\npunsubscribe\r\n$2\r\ny*\r\n:0\r\n"
        );
        assert!(ps.inner.lock().clients.is_empty());
        assert!(ps.inner.lock().channels.is_empty());
    }
}
