//! A typed Rust API over the engine, for library users: whole values in and
//! out ([`Engine::read`], [`Engine::write`], [`Engine::keys_after`]) and
//! typed forms of the everyday commands. Each goes through the same code as
//! the command dispatcher: every command is implemented once.

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta};

use crate::engine::Engine;
use crate::error::CmdError;
use crate::keyspace::{corrupt, Ctx};
use crate::reply::Reply;
use crate::types::zset::add::{add, AddFlags, Added};
use crate::value::{miscounted, read_value, visit_elements, write_value, Element, Value};
use crate::walk::KeyWalk;

/// A key and its type (`None` when its metadata is unreadable).
pub type KeyInfo = (Vec<u8>, Option<DataType>);

/// A live key without its elements: what [`Engine::summary`],
/// [`Engine::summaries_after`] and [`Engine::read_chunks`] report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySummary {
    /// The type commands see.
    pub data_type: DataType,
    /// Absolute expiry in unix ms; 0: none.
    pub expire_ms: u64,
    /// Elements (1 for a string).
    pub elements: u64,
    /// Other live types the store holds the key in, hidden by the rule of
    /// [`crate::keyspace::TYPE_ORDER`] (only in stores Pika wrote); empty
    /// for a key of one type.
    pub shadowed: Vec<DataType>,
}

impl KeySummary {
    fn of(meta: &Meta, shadowed: Vec<DataType>) -> KeySummary {
        KeySummary {
            data_type: meta.data_type,
            expire_ms: meta.expire_ms,
            elements: if meta.data_type.is_collection() {
                meta.size
            } else {
                1
            },
            shadowed,
        }
    }
}

/// A key met by [`Engine::summaries_after`]: its summary, or the error its
/// metadata gives ([`CmdError::Unmodelled`] for a type redcodec does not
/// model, another error for bytes that do not decode).
pub type KeyEntry = (Vec<u8>, Result<KeySummary, CmdError>);

/// What INFO keyspace reports of a keyspace ([`Engine::keyspace_counts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyspaceCounts {
    /// Live keys.
    pub keys: u64,
    /// Live keys with an expiry.
    pub expires: u64,
    /// The average time those keys have left, in milliseconds (0 when
    /// none expires).
    pub avg_ttl_ms: u64,
}

/// A key's value with its absolute expiry.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    /// The content.
    pub value: Value,
    /// Absolute expiry in unix ms; 0: none.
    pub expire_ms: u64,
}

impl<C: Codec, S: KvStore> Engine<C, S> {
    /// The whole value of `key`, if it is live.
    pub fn read(&self, key: impl AsRef<[u8]>) -> Result<Option<Stored>, CmdError> {
        let key = key.as_ref();
        let _held = self.locks.lock_keys(&[key]);
        let ctx = Ctx::new(self);
        let Some(meta) = ctx.live(key)? else {
            return Ok(None);
        };
        let value = read_value(&ctx, key, &meta)?;
        Ok(Some(Stored {
            value,
            expire_ms: meta.expire_ms,
        }))
    }

    /// Replaces `key` with `value` (any type) and the absolute expiry
    /// `expire_ms` (0: none), atomically. An empty collection deletes the key.
    pub fn write(
        &self,
        key: impl AsRef<[u8]>,
        value: &Value,
        expire_ms: u64,
    ) -> Result<(), CmdError> {
        let key = key.as_ref();
        let _held = self.locks.lock_keys(&[key]);
        let mut ctx = Ctx::new(self);
        let view = ctx.view(key)?;
        if expire_ms != 0 && expire_ms <= ctx.expiry_now_ms() {
            if let Some(live) = &view.live {
                ctx.remove_key(key, live)?;
            }
        } else {
            write_value(&mut ctx, key, &view, value, expire_ms)?;
        }
        ctx.commit()
    }

    /// Up to `limit` live keys in the store's key order, after `after`
    /// (exclusive) or from the first; with each key's type (`None` when its
    /// metadata is unreadable).
    pub fn keys_after(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<KeyInfo>, CmdError> {
        let ctx = Ctx::new(self);
        let mut walk = KeyWalk::new(&ctx, after);
        let mut out = Vec::new();
        while out.len() < limit {
            match walk.next()? {
                Some((key, meta)) => out.push((key, meta.map(|m| m.data_type))),
                None => break,
            }
        }
        Ok(out)
    }

    /// The live keys, how many of them expire, and the average time they
    /// have left (INFO keyspace's `keys`, `expires`, `avg_ttl`): one walk
    /// over the metadata, reading no elements.
    pub fn keyspace_counts(&self) -> Result<KeyspaceCounts, CmdError> {
        let ctx = Ctx::new(self);
        let now = ctx.now_ms();
        let mut walk = KeyWalk::new(&ctx, None);
        let (mut counts, mut ttl_sum) = (KeyspaceCounts::default(), 0u128);
        while let Some((_, meta)) = walk.next()? {
            counts.keys += 1;
            if let Some(m) = meta.filter(|m| m.expire_ms != 0) {
                counts.expires += 1;
                ttl_sum += u128::from(m.expire_ms.saturating_sub(now));
            }
        }
        if counts.expires > 0 {
            counts.avg_ttl_ms =
                u64::try_from(ttl_sum / u128::from(counts.expires)).unwrap_or(u64::MAX);
        }
        Ok(counts)
    }

    /// The summary of `key` (type, expiry, element count, shadowed types)
    /// if it is live; its elements are not read.
    pub fn summary(&self, key: impl AsRef<[u8]>) -> Result<Option<KeySummary>, CmdError> {
        let key = key.as_ref();
        let _held = self.locks.lock_keys(&[key]);
        let ctx = Ctx::new(self);
        let live = ctx.live(key)?;
        Ok(live.map(|meta| KeySummary::of(&meta, ctx.shadowed_types(key))))
    }

    /// Up to `limit` live keys in the store's key order, after `after`
    /// (exclusive) or from the first, each with its summary or the error
    /// its metadata gives: a walk that reads no elements.
    pub fn summaries_after(
        &self,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<KeyEntry>, CmdError> {
        let ctx = Ctx::new(self);
        let mut walk = KeyWalk::new(&ctx, after);
        let mut out = Vec::new();
        while out.len() < limit {
            let Some((key, meta)) = walk.next()? else {
                break;
            };
            let entry = match meta {
                Some(meta) => Ok(KeySummary::of(&meta, ctx.shadowed_types(&key))),
                None => Err(match ctx.live(&key) {
                    Err(e) => e,
                    Ok(_) => corrupt(&key, "its metadata does not decode"),
                }),
            };
            out.push((key, entry));
        }
        Ok(out)
    }

    /// Reads the live key `key` and hands its value to `sink` in chunks of
    /// at most `chunk_elements` elements, each a [`Value`] of the key's type
    /// (a list's chunks in order, head first; a string is one chunk), with
    /// the key's summary. Memory does not grow with the size of the
    /// collection. Returns the summary, or `None` if the key is not live
    /// (`sink` is then never called). A collection holding another number
    /// of elements than its metadata counts is an error naming the key.
    pub fn read_chunks<E: From<CmdError>>(
        &self,
        key: &[u8],
        chunk_elements: usize,
        mut sink: impl FnMut(&KeySummary, Value) -> Result<(), E>,
    ) -> Result<Option<KeySummary>, E> {
        let _held = self.locks.lock_keys(&[key]);
        let ctx = Ctx::new(self);
        let Some(meta) = ctx.live(key)? else {
            return Ok(None);
        };
        let summary = KeySummary::of(&meta, ctx.shadowed_types(key));
        let limit = chunk_elements.max(1);
        let mut chunk = Chunker {
            value: Value::empty(meta.data_type),
            len: 0,
            limit,
        };
        let mut deliver = |value: Value| sink(&summary, value);
        if meta.data_type == DataType::String {
            deliver(Value::String(meta.value.clone()))?;
            return Ok(Some(summary));
        }
        let found = visit_elements(&ctx, key, &meta, |element| {
            chunk.add(element).map_or(Ok(()), &mut deliver)
        })?;
        if let Some(rest) = chunk.rest() {
            deliver(rest)?;
        }
        if let Some(e) = miscounted(key, &meta, found) {
            return Err(e.into());
        }
        Ok(Some(summary))
    }

    fn call(&self, args: &[&[u8]]) -> Result<Reply, CmdError> {
        match self.execute(args) {
            Reply::Error(e) => Err(CmdError::Other(e)),
            reply => Ok(reply),
        }
    }

    /// The integer reply of the command `head` followed by `items`.
    fn count<I: AsRef<[u8]>>(&self, head: &[&[u8]], items: &[I]) -> Result<u64, CmdError> {
        let mut args: Vec<&[u8]> = head.to_vec();
        args.extend(items.iter().map(AsRef::as_ref));
        integer(self.call(&args)?)
    }

    /// GET.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>, CmdError> {
        match self.call(&[b"GET", key.as_ref()])? {
            Reply::Bulk(v) => Ok(Some(v)),
            _ => Ok(None),
        }
    }

    /// SET without options.
    pub fn set(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<(), CmdError> {
        self.call(&[b"SET", key.as_ref(), value.as_ref()]).map(drop)
    }

    /// DEL of several keys; returns how many existed.
    pub fn del<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<u64, CmdError> {
        self.count(&[b"DEL"], keys)
    }

    /// TYPE: the key's type, `None` when missing.
    pub fn type_of(&self, key: impl AsRef<[u8]>) -> Result<Option<DataType>, CmdError> {
        match self.call(&[b"TYPE", key.as_ref()])? {
            Reply::Status(name) => Ok(DataType::from_redis_name(name.as_bytes())),
            _ => Ok(None),
        }
    }

    /// HSET of field–value pairs; returns how many fields were new.
    pub fn hset<F: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        key: impl AsRef<[u8]>,
        pairs: &[(F, V)],
    ) -> Result<u64, CmdError> {
        let mut args: Vec<&[u8]> = vec![b"HSET", key.as_ref()];
        for (f, v) in pairs {
            args.push(f.as_ref());
            args.push(v.as_ref());
        }
        integer(self.call(&args)?)
    }

    /// HGET.
    pub fn hget(
        &self,
        key: impl AsRef<[u8]>,
        field: impl AsRef<[u8]>,
    ) -> Result<Option<Vec<u8>>, CmdError> {
        match self.call(&[b"HGET", key.as_ref(), field.as_ref()])? {
            Reply::Bulk(v) => Ok(Some(v)),
            _ => Ok(None),
        }
    }

    /// RPUSH; returns the new length.
    pub fn rpush<V: AsRef<[u8]>>(
        &self,
        key: impl AsRef<[u8]>,
        values: &[V],
    ) -> Result<u64, CmdError> {
        self.count(&[b"RPUSH", key.as_ref()], values)
    }

    /// SADD; returns how many members were new.
    pub fn sadd<M: AsRef<[u8]>>(
        &self,
        key: impl AsRef<[u8]>,
        members: &[M],
    ) -> Result<u64, CmdError> {
        self.count(&[b"SADD", key.as_ref()], members)
    }

    /// ZADD of (score, member) pairs; returns how many members were new.
    /// The scores reach the sorted set as the `f64`s given, through the
    /// typed operation ZADD runs; a NaN is refused as ZADD refuses it.
    /// Errors are those of ZADD, as text.
    pub fn zadd<M: AsRef<[u8]>>(
        &self,
        key: impl AsRef<[u8]>,
        members: &[(f64, M)],
    ) -> Result<u64, CmdError> {
        let members: Vec<(f64, &[u8])> = members.iter().map(|(s, m)| (*s, m.as_ref())).collect();
        self.zadd_scores(key.as_ref(), &members)
            .map_err(|e| CmdError::Other(e.to_string()))
    }

    fn zadd_scores(&self, key: &[u8], members: &[(f64, &[u8])]) -> Result<u64, CmdError> {
        if members.is_empty() {
            return Err(CmdError::WrongArity("zadd".to_string()));
        }
        if members.iter().any(|(score, _)| score.is_nan()) {
            return Err(CmdError::NotFloat);
        }
        let _held = self.locks.lock_key(key);
        let mut ctx = Ctx::new(self);
        let added = match add(&mut ctx, key, AddFlags::default(), members)? {
            Added::Count(n) => n,
            Added::Score(_) => 0,
        };
        // An observer (a server replicating its writes) is told the
        // command as a client would have sent it.
        let scores: Vec<String> = if self.has_observer() {
            members.iter().map(|(s, _)| format!("{s:?}")).collect()
        } else {
            Vec::new()
        };
        let mut args: Vec<&[u8]> = Vec::with_capacity(2 + 2 * scores.len());
        if !scores.is_empty() {
            args.extend([b"ZADD".as_slice(), key]);
            for ((_, member), score) in members.iter().zip(&scores) {
                args.extend([score.as_bytes(), member]);
            }
        }
        self.finish(&mut ctx, Reply::Integer(added), &args)?;
        Ok(added.max(0) as u64)
    }

    /// PEXPIRE; returns whether the key existed.
    pub fn pexpire(&self, key: impl AsRef<[u8]>, ms: u64) -> Result<bool, CmdError> {
        let ms = ms.to_string();
        Ok(integer(self.call(&[b"PEXPIRE", key.as_ref(), ms.as_bytes()])?)? == 1)
    }

    /// PTTL: `None` for a missing key, `Some(None)` for no expiry.
    pub fn pttl(&self, key: impl AsRef<[u8]>) -> Result<Option<Option<u64>>, CmdError> {
        let Reply::Integer(n) = self.call(&[b"PTTL", key.as_ref()])? else {
            return Ok(None);
        };
        Ok(match n {
            -2 => None,
            -1 => Some(None),
            n => Some(Some(n.max(0) as u64)),
        })
    }
}

/// The chunk [`Engine::read_chunks`] fills.
struct Chunker {
    value: Value,
    len: usize,
    limit: usize,
}

impl Chunker {
    /// Adds one element; the full chunk, when this one filled it.
    fn add(&mut self, element: Element) -> Option<Value> {
        self.value.push(element);
        self.len += 1;
        if self.len < self.limit {
            return None;
        }
        self.len = 0;
        let empty = Value::empty(self.value.data_type());
        Some(std::mem::replace(&mut self.value, empty))
    }

    /// What is left after the last full chunk, if anything.
    fn rest(&mut self) -> Option<Value> {
        (self.len > 0).then(|| {
            self.len = 0;
            let empty = Value::empty(self.value.data_type());
            std::mem::replace(&mut self.value, empty)
        })
    }
}

fn integer(reply: Reply) -> Result<u64, CmdError> {
    match reply {
        Reply::Integer(n) => Ok(n.max(0) as u64),
        other => Err(CmdError::Other(format!("unexpected reply {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use parking_lot::Mutex;

    use crate::cmd::testkit::TestEngine;
    use crate::error::CmdError;
    use crate::value::Value;
    use redcodec_codec::DataType;

    #[test]
    fn whole_values_round_trip_through_read_and_write() {
        let t = TestEngine::new();
        let e = &t.engine;
        let values = [
            Value::String(b"v\x00\xff".to_vec()),
            Value::Hash(vec![
                (b"f".to_vec(), b"1".to_vec()),
                (b"g".to_vec(), b"2".to_vec()),
            ]),
            Value::List(vec![b"a".to_vec(), b"b".to_vec(), b"a".to_vec()]),
            Value::Set(vec![b"x".to_vec(), b"y".to_vec()]),
            Value::ZSet(vec![(b"m".to_vec(), -1.5), (b"n".to_vec(), 2.0)]),
        ];
        for (i, v) in values.iter().enumerate() {
            let key = format!("k{i}").into_bytes();
            e.write(&key, v, 0).unwrap();
            let stored = e.read(&key).unwrap().unwrap();
            assert_eq!(&stored.value, v);
            assert_eq!(stored.expire_ms, 0);
            assert_eq!(e.type_of(&key).unwrap(), Some(v.data_type()));
        }
        // Overwrite a hash with a list: the old fields must not leak.
        e.write(b"k1", &Value::List(vec![b"z".to_vec()]), 0)
            .unwrap();
        assert_eq!(
            e.read(b"k1").unwrap().unwrap().value,
            Value::List(vec![b"z".to_vec()])
        );
        let keys = e.keys_after(None, 100).unwrap();
        assert_eq!(keys.len(), 5);
        assert_eq!(e.keys_after(Some(b"k2"), 100).unwrap().len(), 2);
    }

    #[test]
    fn a_typed_zadd_reaches_the_observer_as_the_command() {
        let t = TestEngine::new();
        let e = &t.engine;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        e.set_observer(Some(Arc::new(move |_, event| {
            let args: Vec<String> = event
                .args
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            log.lock()
                .push((args.join(" "), event.reply.to_cli_string()));
        })));
        assert_eq!(e.zadd(b"z", &[(1.5, b"m"), (-2.0, b"n")]).unwrap(), 2);
        assert!(e.zadd(b"z", &[(f64::NAN, b"m")]).is_err());
        assert_eq!(
            *seen.lock(),
            [("ZADD z 1.5 m -2.0 n".to_string(), "(integer) 2".to_string())]
        );
    }

    #[test]
    fn chunked_reads_and_summaries_give_every_element_once() {
        let t = TestEngine::new();
        let e = &t.engine;
        let items: Vec<Vec<u8>> = (0..25).map(|i| format!("i{i}").into_bytes()).collect();
        e.write(b"l", &Value::List(items.clone()), 0).unwrap();
        let pairs: Vec<(Vec<u8>, Vec<u8>)> = (0..7)
            .map(|i| (format!("f{i}").into_bytes(), vec![i as u8]))
            .collect();
        e.write(b"h", &Value::Hash(pairs.clone()), 1_800_000_000_000)
            .unwrap();
        e.write(b"z", &Value::ZSet(vec![(b"m".to_vec(), -0.5)]), 0)
            .unwrap();
        e.set(b"s", b"v").unwrap();

        let mut chunks = Vec::new();
        let summary = e
            .read_chunks(b"l", 10, |s, v| -> Result<(), CmdError> {
                assert_eq!(s.elements, 25);
                chunks.push(v);
                Ok(())
            })
            .unwrap()
            .unwrap();
        assert_eq!(summary.data_type, DataType::List);
        let sizes: Vec<usize> = chunks
            .iter()
            .map(|c| match c {
                Value::List(v) => v.len(),
                _ => 0,
            })
            .collect();
        assert_eq!(sizes, [10, 10, 5]);
        let joined: Vec<Vec<u8>> = chunks
            .into_iter()
            .flat_map(|c| match c {
                Value::List(v) => v,
                _ => Vec::new(),
            })
            .collect();
        assert_eq!(joined, items);

        let mut fields = Vec::new();
        e.read_chunks(b"h", 3, |_, v| -> Result<(), CmdError> {
            if let Value::Hash(p) = v {
                fields.extend(p);
            }
            Ok(())
        })
        .unwrap();
        fields.sort();
        assert_eq!(fields, pairs);
        assert_eq!(
            e.read_chunks(b"nope", 3, |_, _| -> Result<(), CmdError> { Ok(()) })
                .unwrap(),
            None
        );

        let entries = e.summaries_after(None, 10).unwrap();
        let names: Vec<&[u8]> = entries.iter().map(|(k, _)| k.as_slice()).collect();
        assert_eq!(names.len(), 4);
        let h = entries.iter().find(|(k, _)| k == b"h").unwrap();
        let h = h.1.as_ref().unwrap();
        assert_eq!(
            (h.data_type, h.expire_ms, h.elements),
            (DataType::Hash, 1_800_000_000_000, 7)
        );
        assert!(h.shadowed.is_empty());
        assert_eq!(e.summary(b"s").unwrap().unwrap().elements, 1);
        assert_eq!(e.summary(b"nope").unwrap(), None);
    }

    #[test]
    fn typed_commands_and_expiry() {
        const WRONG_TYPE: &str =
            "WRONGTYPE Operation against a key holding the wrong kind of value";
        let t = TestEngine::new();
        let e = &t.engine;
        e.set(b"s", b"1").unwrap();
        assert_eq!(e.get(b"s").unwrap(), Some(b"1".to_vec()));
        assert_eq!(e.hset(b"h", &[(b"f", b"v")]).unwrap(), 1);
        assert_eq!(e.hget(b"h", b"f").unwrap(), Some(b"v".to_vec()));
        assert!(e.hget(b"s", b"f").is_err(), "WRONGTYPE is an error");
        assert_eq!(e.zadd(b"z", &[(0.1, b"a")]).unwrap(), 1);
        assert_eq!(
            e.zadd(b"z", &[(0.1, b"a"), (-0.0, b"b"), (f64::INFINITY, b"c")])
                .unwrap(),
            2
        );
        assert_eq!(
            t.cli("ZRANGE z 0 -1 WITHSCORES"),
            "1) \"b\"\n2) \"0\"\n3) \"a\"\n4) \"0.10000000000000001\"\n5) \"c\"\n6) \"inf\""
        );
        let refused = |members: &[(f64, &[u8])]| e.zadd(b"z", members).unwrap_err().to_string();
        assert_eq!(
            refused(&[(f64::NAN, b"d")]),
            "ERR value is not a valid float"
        );
        assert_eq!(
            refused(&[]),
            "ERR wrong number of arguments for 'zadd' command"
        );
        e.set(b"str", b"v").unwrap();
        assert_eq!(
            e.zadd(b"str", &[(1.0, b"d")]).unwrap_err().to_string(),
            WRONG_TYPE
        );
        assert_eq!(e.type_of(b"z").unwrap(), Some(DataType::ZSet));
        assert!(e.pexpire(b"s", 1000).unwrap());
        assert_eq!(e.pttl(b"s").unwrap(), Some(Some(1000)));
        t.clock.advance_ms(1001);
        assert_eq!(e.get(b"s").unwrap(), None);
        assert_eq!(e.del(&["h", "nope"]).unwrap(), 1);
    }
}
