//! Digests of logical content, independent of any format, and the
//! comparison of two stores key by key ([`verify`]).
//!
//! A key's digest is its type, its absolute expiry as a chosen format
//! stores it (see [`redcodec_engine::internals::keyspace::migrated_expiry`]), its element count, and a
//! SHA-256 over its elements: in order for a list, as an order-free sum of
//! per-element hashes for hashes, sets and sorted sets (formats may keep
//! elements in different orders). Sorted-set scores are hashed by their
//! exact bits. Elements are read in chunks: memory does not grow with a
//! key's size.

use std::fmt;

use redcodec_codec::{Capabilities, Codec, DataType, Meta};
use sha2::{Digest, Sha256};

use redcodec_engine::error::CmdError;
use redcodec_engine::internals::cursors::{ReadCursors, SubCursors};
use redcodec_engine::internals::keyspace::{migrated_expiry, Ctx};
use redcodec_engine::internals::walk::KeyWalk;
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::value::Value;
use redcodec_engine::{Engine, Store};

use crate::error::MigrateError;
use crate::options::TypeConflict;
use crate::represent;
use crate::source::{stream_value, Limits};
use crate::stores::check_distinct;

/// Chunks read while digesting.
const LIMITS: Limits = Limits {
    elements: 1024,
    bytes: 1 << 20,
};

/// The logical content of one key, summarized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyDigest {
    /// The key's type.
    pub data_type: DataType,
    /// Absolute expiry in unix ms at the digest's resolution; 0: none.
    pub expire_ms: u64,
    /// Elements (1 for a string).
    pub elements: u64,
    /// SHA-256 of the elements.
    pub content: [u8; 32],
}

/// An order-free sum of element hashes (two 128-bit lanes, wrapping).
#[derive(Default)]
struct Multiset {
    lanes: [u128; 2],
}

impl Multiset {
    fn add(&mut self, hash: [u8; 32]) {
        let (a, b) = hash.split_at(16);
        let a = u128::from_le_bytes(a.try_into().unwrap_or_default());
        let b = u128::from_le_bytes(b.try_into().unwrap_or_default());
        self.lanes[0] = self.lanes[0].wrapping_add(a);
        self.lanes[1] = self.lanes[1].wrapping_add(b);
    }

    fn bytes(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        out[..16].copy_from_slice(&self.lanes[0].to_le_bytes());
        out[16..].copy_from_slice(&self.lanes[1].to_le_bytes());
        out
    }
}

/// Feeds a length-prefixed byte string.
fn feed(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

fn element_hash(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for part in parts {
        feed(&mut h, part);
    }
    h.finalize().into()
}

/// The digest of the live key `key` (metadata `meta`), with its expiry
/// as a store with capabilities `rule` keeps it.
pub(crate) fn digest_live<'e, C: Codec>(
    ctx: &Ctx<'e, C>,
    cursors: Option<&mut SubCursors<'e, Store>>,
    key: &[u8],
    meta: &Meta,
    rule: &Capabilities,
) -> Result<KeyDigest, CmdError> {
    let mut digest = ContentDigest::new(meta.data_type);
    stream_value(
        ctx,
        cursors,
        key,
        meta,
        LIMITS,
        |chunk| -> Result<(), CmdError> {
            digest.add(&chunk);
            Ok(())
        },
    )?;
    let expire_ms = if meta.expire_ms == 0 {
        0
    } else {
        migrated_expiry(rule, meta.expire_ms)
    };
    Ok(digest.finish(expire_ms))
}

/// A [`KeyDigest`] built chunk by chunk, from a store or from anything
/// else that yields a key's value in [`Value`] chunks (a Redis server, for
/// the network migration): SHA-256 over the elements in order for a string
/// or a list, an order-free sum of per-element hashes for a hash, a set or
/// a sorted set. Scores are hashed by their exact bits, except the sign of
/// zero, which Redis does not keep (`ZADD k -0 m` stores 0).
pub struct ContentDigest {
    data_type: DataType,
    ordered: Sha256,
    unordered: Multiset,
    elements: u64,
}

impl ContentDigest {
    /// An empty digest of a value of type `data_type`.
    pub fn new(data_type: DataType) -> ContentDigest {
        ContentDigest {
            data_type,
            ordered: Sha256::new(),
            unordered: Multiset::default(),
            elements: 0,
        }
    }

    /// Adds a chunk of the value (a string counts as one element).
    pub fn add(&mut self, chunk: &Value) {
        match chunk {
            Value::String(v) => {
                feed(&mut self.ordered, v);
                self.elements += 1;
            }
            Value::List(items) => {
                for v in items {
                    feed(&mut self.ordered, v);
                }
                self.elements += items.len() as u64;
            }
            Value::Hash(pairs) => {
                for (f, v) in pairs {
                    self.unordered.add(element_hash(&[f, v]));
                }
                self.elements += pairs.len() as u64;
            }
            Value::Set(members) => {
                for m in members {
                    self.unordered.add(element_hash(&[m]));
                }
                self.elements += members.len() as u64;
            }
            Value::ZSet(members) => {
                for (m, s) in members {
                    let s = if *s == 0.0 { 0.0f64 } else { *s };
                    self.unordered
                        .add(element_hash(&[m, &s.to_bits().to_le_bytes()]));
                }
                self.elements += members.len() as u64;
            }
        }
    }

    /// Elements added so far.
    pub fn elements(&self) -> u64 {
        self.elements
    }

    /// The finished digest, with the absolute expiry `expire_ms` (0: none).
    pub fn finish(mut self, expire_ms: u64) -> KeyDigest {
        self.ordered.update(self.data_type.redis_name().as_bytes());
        self.ordered.update(self.unordered.bytes());
        KeyDigest {
            data_type: self.data_type,
            expire_ms,
            elements: self.elements,
            content: self.ordered.finalize().into(),
        }
    }
}

/// The digest of `key` in `engine` with its expiry as a store with
/// capabilities `rule` keeps it;
/// `None` if the key is not live.
pub fn key_digest<C: Codec>(
    engine: &Engine<C>,
    key: &[u8],
    rule: &Capabilities,
) -> Result<Option<KeyDigest>, MigrateError> {
    let _held = engine.lock_keys(&[key]);
    let ctx = Ctx::new(engine);
    match ctx.live(key)? {
        Some(meta) => Ok(Some(digest_live(&ctx, None, key, &meta, rule)?)),
        None => Ok(None),
    }
}

/// The digest of a whole store: its live keys and elements, and an
/// order-free sum over every key's name and digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreDigest {
    /// Live keys.
    pub keys: u64,
    /// Elements of every live key (1 per string).
    pub elements: u64,
    /// Order-free sum of SHA-256(key, key digest).
    pub content: [u8; 32],
}

/// The digest of every live key of `engine`, expiries as a store with
/// capabilities `rule` keeps them:
/// two stores holding the same logical data have equal digests whatever
/// their formats.
pub fn store_digest<C: Codec>(
    engine: &Engine<C>,
    rule: &Capabilities,
) -> Result<StoreDigest, MigrateError> {
    let _held = engine.lock_all();
    let ctx = Ctx::new(engine);
    let mut walk = KeyWalk::new(&ctx, None);
    let mut cursors = SubCursors::new();
    let mut sum = Multiset::default();
    let (mut keys, mut elements) = (0u64, 0u64);
    while let Some((key, meta)) = walk.next()? {
        let meta = meta.ok_or_else(|| MigrateError::SourceUnreadable {
            key: quote_bytes(&key),
        })?;
        let d = digest_live(&ctx, Some(&mut cursors), &key, &meta, rule)?;
        keys += 1;
        elements += d.elements;
        sum.add(element_hash(&[
            &key,
            d.data_type.redis_name().as_bytes(),
            &d.expire_ms.to_le_bytes(),
            &d.elements.to_le_bytes(),
            &d.content,
        ]));
    }
    Ok(StoreDigest {
        keys,
        elements,
        content: sum.bytes(),
    })
}

/// How [`verify`] judges keys only the destination has.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// The destination held data of its own before the migration (merge):
    /// keys only it has are counted, not reported as differences.
    pub merge: bool,
    /// Most differences kept in the report (all are counted).
    pub max_listed: usize,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            merge: false,
            max_listed: 100,
        }
    }
}

/// One key that differs between source and destination.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// The key.
    pub key: Vec<u8>,
    /// How it differs.
    pub kind: DifferenceKind,
}

/// How a key differs.
#[derive(Clone, Debug, PartialEq)]
pub enum DifferenceKind {
    /// Live in the source, absent from the destination.
    Missing,
    /// Live in the destination only.
    Extra,
    /// Present in both with different content (the source's expiry at the
    /// destination's resolution).
    Differs {
        /// The source's digest.
        source: KeyDigest,
        /// The destination's digest.
        destination: KeyDigest,
    },
    /// Unreadable on one side (the message says which and why).
    Unreadable(String),
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = quote_bytes(&self.key);
        match &self.kind {
            DifferenceKind::Missing => write!(f, "{key}: missing from the destination"),
            DifferenceKind::Extra => write!(f, "{key}: only in the destination"),
            DifferenceKind::Unreadable(why) => write!(f, "{key}: {why}"),
            DifferenceKind::Differs {
                source: s,
                destination: d,
            } => {
                let mut parts = Vec::new();
                if s.data_type != d.data_type {
                    parts.push(format!(
                        "type {} vs {}",
                        s.data_type.redis_name(),
                        d.data_type.redis_name()
                    ));
                }
                if s.expire_ms != d.expire_ms {
                    parts.push(format!("expiry {} vs {} ms", s.expire_ms, d.expire_ms));
                }
                if s.elements != d.elements {
                    parts.push(format!("{} vs {} elements", s.elements, d.elements));
                }
                if parts.is_empty() {
                    parts.push(format!("content differs ({} elements)", s.elements));
                }
                write!(f, "{key}: {} (source vs destination)", parts.join(", "))
            }
        }
    }
}

/// What [`verify`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VerifyReport {
    /// Live source keys compared.
    pub source_keys: u64,
    /// Source keys whose destination digest is equal.
    pub matching: u64,
    /// Source keys the destination cannot represent (and so lacks).
    pub unrepresentable: u64,
    /// Keys only the destination has, when merging.
    pub destination_only: u64,
    /// Keys that differ.
    pub differences: u64,
    /// The first differences (at most `max_listed`).
    pub listed: Vec<Difference>,
}

impl VerifyReport {
    fn differ(&mut self, difference: Difference, max_listed: usize) {
        self.differences += 1;
        if self.listed.len() < max_listed {
            self.listed.push(difference);
        }
    }

    /// `result`'s value; or, when it is an error, `None` after listing
    /// `key` as unreadable in `side` ("source", "destination").
    fn readable<T>(
        &mut self,
        key: &[u8],
        side: &str,
        result: Result<T, CmdError>,
        max_listed: usize,
    ) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(e) => {
                let why = format!("unreadable in the {side}: {e}");
                self.differ(
                    difference(key.to_vec(), DifferenceKind::Unreadable(why)),
                    max_listed,
                );
                None
            }
        }
    }

    /// Whether source and destination hold the same data.
    pub fn is_equal(&self) -> bool {
        self.differences == 0
    }
}

/// Compares every live key of `src` with the same key of `dst` by digest,
/// the source's expiry taken at the destination's resolution (a
/// second-resolution destination stores expiries rounded up to the
/// second). Then walks `dst` for keys the source lacks. A source key the
/// destination cannot represent is counted apart, not as a difference.
pub fn verify<A: Codec, B: Codec>(
    src: &Engine<A>,
    dst: &Engine<B>,
    options: &VerifyOptions,
) -> Result<VerifyReport, MigrateError> {
    check_distinct(src, dst)?;
    let _src_held = src.lock_all();
    let _dst_held = dst.lock_all();
    let src_ctx = Ctx::new(src);
    let dst_ctx = Ctx::new(dst);
    let rule = dst.capabilities();
    let mut report = VerifyReport::default();
    let max = options.max_listed;

    let mut walk = KeyWalk::new(&src_ctx, None);
    let (mut src_cursors, mut dst_cursors) = (SubCursors::new(), SubCursors::new());
    // The other store's metadata, read in (mostly) the same key order.
    let mut dst_metas = ReadCursors::new(dst_ctx.engine().store());
    while let Some((key, meta)) = walk.next()? {
        report.source_keys += 1;
        let Some(meta) = meta else {
            // A key of a type redcodec does not model cannot have been
            // migrated: absent from the destination, it is unrepresentable.
            let unmodelled = crate::reader::unmodelled(&src_ctx, &key);
            if unmodelled.is_some() && matches!(dst_ctx.live(&key), Ok(None)) {
                report.unrepresentable += 1;
                continue;
            }
            let why = match unmodelled {
                Some(type_name) => format!("the source holds a {type_name}"),
                None => "unreadable in the source".to_string(),
            };
            report.differ(difference(key, DifferenceKind::Unreadable(why)), max);
            continue;
        };
        let source = digest_live(&src_ctx, Some(&mut src_cursors), &key, &meta, rule);
        let Some(source) = report.readable(&key, "source", source, max) else {
            continue;
        };
        let live = dst_ctx.view_on(&mut dst_metas, &key).map(|view| view.live);
        let Some(live) = report.readable(&key, "destination", live, max) else {
            continue;
        };
        let Some(dmeta) = live else {
            if represent::check(&src_ctx, dst.codec(), &key, &meta, TypeConflict::Fail)?.is_some() {
                report.unrepresentable += 1;
            } else {
                report.differ(difference(key, DifferenceKind::Missing), max);
            }
            continue;
        };
        let destination = digest_live(&dst_ctx, Some(&mut dst_cursors), &key, &dmeta, rule);
        let Some(destination) = report.readable(&key, "destination", destination, max) else {
            continue;
        };
        if source == destination {
            report.matching += 1;
        } else {
            let kind = DifferenceKind::Differs {
                source,
                destination,
            };
            report.differ(difference(key, kind), max);
        }
    }

    let mut walk = KeyWalk::new(&dst_ctx, None);
    let mut src_metas = ReadCursors::new(src_ctx.engine().store());
    while let Some((key, meta)) = walk.next()? {
        let view = src_ctx.view_on(&mut src_metas, &key)?;
        if view.live.is_some() {
            continue;
        }
        // Expired in the source but, rounded up to the destination's
        // resolution, not yet in the destination: the same key.
        let rounded_alike = meta.as_ref().is_some_and(|d| {
            view.dead.iter().any(|s| {
                s.expire_ms != 0
                    && migrated_expiry(rule, s.expire_ms) == migrated_expiry(rule, d.expire_ms)
            })
        });
        if rounded_alike {
            continue;
        }
        if options.merge {
            report.destination_only += 1;
        } else {
            report.differ(difference(key, DifferenceKind::Extra), max);
        }
    }
    Ok(report)
}

fn difference(key: Vec<u8>, kind: DifferenceKind) -> Difference {
    Difference { key, kind }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestEngine;
    use redcodec_codec::{RelativeExpiry, TtlResolution};

    #[test]
    fn digests_ignore_element_order_of_unordered_types_but_not_of_lists() {
        let t = TestEngine::new();
        let e = &t.engine;
        let rule = e.capabilities();
        t.run("SADD a x y z");
        t.run("SADD b z y x");
        t.run("RPUSH l1 x y");
        t.run("RPUSH l2 y x");
        t.run("HSET h1 f v g w");
        t.run("HSET h2 f w g v");
        let d = |k: &[u8]| key_digest(e, k, rule).unwrap().unwrap();
        assert_eq!(d(b"a"), d(b"b"));
        assert_ne!(d(b"l1").content, d(b"l2").content);
        assert_ne!(d(b"h1").content, d(b"h2").content);
        assert_eq!(key_digest(e, b"nope", rule).unwrap(), None);
    }

    #[test]
    fn digests_see_type_expiry_and_scores() {
        let t = TestEngine::new();
        let e = &t.engine;
        t.run("ZADD z1 1 m");
        t.run("ZADD z2 1.0000000000000002 m");
        t.run("SET s1 v");
        t.run("SET s2 v");
        t.run("PEXPIRE s2 1500");
        let mut seconds = e.capabilities().clone();
        seconds.ttl = TtlResolution::Seconds;
        let mut through = seconds.clone();
        through.relative_expiry = RelativeExpiry::SecondsMinusOne;
        let ms = |k: &[u8]| key_digest(e, k, e.capabilities()).unwrap().unwrap();
        let secs = |k: &[u8]| key_digest(e, k, &seconds).unwrap().unwrap();
        let lived_through = |k: &[u8]| key_digest(e, k, &through).unwrap().unwrap();
        assert_ne!(ms(b"z1"), ms(b"z2"));
        assert_eq!(ms(b"s1").content, ms(b"s2").content);
        assert_eq!(ms(b"s2").expire_ms, 1_700_000_001_500);
        assert_eq!(secs(b"s2").expire_ms, 1_700_000_002_000);
        assert_eq!(lived_through(b"s2").expire_ms, 1_700_000_001_999);
        let store = store_digest(e, e.capabilities()).unwrap();
        assert_eq!((store.keys, store.elements), (4, 4));
        t.run("PERSIST s2");
        assert_ne!(store_digest(e, e.capabilities()).unwrap(), store);
    }

    fn chunked_digest(chunks: &[Value]) -> KeyDigest {
        let mut d = ContentDigest::new(chunks[0].data_type());
        for c in chunks {
            d.add(c);
        }
        d.finish(0)
    }

    #[test]
    fn chunking_and_order_of_unordered_types_do_not_matter() {
        let a = chunked_digest(&[Value::Set(vec![b"x".to_vec(), b"y".to_vec()])]);
        let b = chunked_digest(&[
            Value::Set(vec![b"y".to_vec()]),
            Value::Set(vec![b"x".to_vec()]),
        ]);
        assert_eq!(a, b);
        let l1 = chunked_digest(&[Value::List(vec![b"x".to_vec(), b"y".to_vec()])]);
        let l2 = chunked_digest(&[Value::List(vec![b"y".to_vec(), b"x".to_vec()])]);
        assert_ne!(l1.content, l2.content);
        let z1 = chunked_digest(&[Value::ZSet(vec![(b"m".to_vec(), 0.1)])]);
        // Redis 7.0 prints 0.1 with 17 digits: the same double.
        let printed: f64 = "0.10000000000000001".parse().unwrap();
        let z2 = chunked_digest(&[Value::ZSet(vec![(b"m".to_vec(), printed)])]);
        let next = f64::from_bits(0.1f64.to_bits() + 1);
        let z3 = chunked_digest(&[Value::ZSet(vec![(b"m".to_vec(), next)])]);
        assert_eq!(z1, z2, "the same double");
        let zero = chunked_digest(&[Value::ZSet(vec![(b"m".to_vec(), 0.0)])]);
        let negative_zero = chunked_digest(&[Value::ZSet(vec![(b"m".to_vec(), -0.0)])]);
        assert_eq!(zero, negative_zero);
        assert_ne!(z1, z3);
        assert_eq!(z1.elements, 1);
    }
}
