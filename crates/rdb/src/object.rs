//! An RDB object: its type byte and body (`rdbSaveObjectType`,
//! `rdbSaveObject`, `rdbLoadObject`).

use std::collections::HashSet;

use redcodec_codec::number::{format_g17, parse_f64, parse_i64};
use redcodec_codec::Reader;

use crate::error::{bad, DumpResult};
use crate::listpack::{self, ListpackWriter};
use crate::string::EncodeOptions;
use crate::string::{put_len, put_string, read_count, read_len, read_string, read_text_double};
use crate::{intset, ziplist, zipmap, Value};

/// The RDB object types of the five data types (`rdb.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ObjectType {
    /// A string: plain, integer-encoded or LZF-compressed.
    String = 0,
    /// A list as a count and its elements (RDB 1–6).
    List = 1,
    /// A set as a count and its members (hash table encoding).
    Set = 2,
    /// A sorted set with scores as text (RDB 1–7).
    ZSet = 3,
    /// A hash as a count and field–value pairs (hash table encoding).
    Hash = 4,
    /// A sorted set with binary double scores (skiplist encoding).
    ZSet2 = 5,
    /// A hash as one zipmap string (RDB 1–3).
    HashZipmap = 9,
    /// A list as one ziplist string (RDB 4–6).
    ListZiplist = 10,
    /// A set of integers as one intset string.
    SetIntset = 11,
    /// A sorted set as one ziplist string (RDB 4–9).
    ZSetZiplist = 12,
    /// A hash as one ziplist string (RDB 4–9).
    HashZiplist = 13,
    /// A list as ziplist nodes (RDB 7–9).
    ListQuicklist = 14,
    /// A hash as one listpack string (RDB 10).
    HashListpack = 16,
    /// A sorted set as one listpack string (RDB 10).
    ZSetListpack = 17,
    /// A list as listpack or plain nodes (RDB 10).
    ListQuicklist2 = 18,
}

impl ObjectType {
    /// The type a byte names, if it is one of the five data types'.
    pub fn from_byte(b: u8) -> Option<ObjectType> {
        use ObjectType::*;
        Some(match b {
            0 => String,
            1 => List,
            2 => Set,
            3 => ZSet,
            4 => Hash,
            5 => ZSet2,
            9 => HashZipmap,
            10 => ListZiplist,
            11 => SetIntset,
            12 => ZSetZiplist,
            13 => HashZiplist,
            14 => ListQuicklist,
            16 => HashListpack,
            17 => ZSetListpack,
            18 => ListQuicklist2,
            _ => return None,
        })
    }
}

/// Redis 7.0's default thresholds (`redis.conf`): past them a collection
/// leaves its compact encoding.
mod limits {
    /// `hash-max-listpack-entries`, `zset-max-listpack-entries`.
    pub const LISTPACK_ENTRIES: usize = 128;
    /// `hash-max-listpack-value`, `zset-max-listpack-value`.
    pub const LISTPACK_VALUE: usize = 64;
    /// `set-max-intset-entries`.
    pub const INTSET_ENTRIES: usize = 512;
    /// `list-max-listpack-size -2`: a quicklist node's listpack stays
    /// within 8 KiB (`optimization_level[1]`).
    pub const NODE_BYTES: usize = 8192;
    /// `SIZE_ESTIMATE_OVERHEAD`: what Redis adds to an element's length
    /// when it estimates a node's growth.
    pub const NODE_OVERHEAD: usize = 8;
    /// Elements from 1 GiB on get a plain node of their own.
    pub const PLAIN_ELEMENT: usize = 1 << 30;
}

/// Quicklist node containers.
const CONTAINER_PLAIN: u64 = 1;
const CONTAINER_PACKED: u64 = 2;

/// Decodes an object: its type byte, then its body. Bytes after the body
/// are not read (Redis' RESTORE does not read them either).
pub fn decode_object(bytes: &[u8]) -> DumpResult<Value> {
    let mut r = Reader::new("dump payload", bytes);
    let byte = r.u8()?;
    let ty = ObjectType::from_byte(byte).ok_or_else(|| {
        bad(format!(
            "object type {byte} is not one of the five data types"
        ))
    })?;
    let value = decode_body(ty, &mut r)?;
    let empty = match &value {
        Value::String(_) => false,
        Value::List(v) | Value::Set(v) => v.is_empty(),
        Value::ZSet(v) => v.is_empty(),
        Value::Hash(v) => v.is_empty(),
    };
    if empty {
        return Err(bad("empty collection"));
    }
    Ok(value)
}

fn decode_body(ty: ObjectType, r: &mut Reader<'_>) -> DumpResult<Value> {
    use ObjectType as T;
    Ok(match ty {
        T::String => Value::String(read_string(r)?),
        T::List => Value::List(read_strings(r)?),
        T::Set => Value::Set(distinct(read_strings(r)?)?),
        T::ZSet | T::ZSet2 => {
            let n = read_count(r, 2)?;
            let mut members = Vec::with_capacity(n);
            for _ in 0..n {
                let member = read_string(r)?;
                let score = if ty == T::ZSet {
                    read_text_double(r)?
                } else {
                    r.f64_le()?
                };
                members.push((member, score));
            }
            Value::ZSet(checked_zset(members)?)
        }
        T::Hash => {
            let n = read_count(r, 2)?;
            let mut pairs = Vec::with_capacity(n);
            for _ in 0..n {
                pairs.push((read_string(r)?, read_string(r)?));
            }
            Value::Hash(distinct_pairs(pairs)?)
        }
        T::HashZipmap => Value::Hash(distinct_pairs(zipmap::decode(&read_string(r)?)?)?),
        T::ListZiplist => Value::List(ziplist::decode(&read_string(r)?)?),
        T::SetIntset => Value::Set(intset::decode(&read_string(r)?)?),
        T::ZSetZiplist => Value::ZSet(zset_of(ziplist::decode(&read_string(r)?)?)?),
        T::HashZiplist => Value::Hash(distinct_pairs(pairs_of(ziplist::decode(&read_string(
            r,
        )?)?)?)?),
        T::ListQuicklist => {
            let nodes = read_count(r, 1)?;
            let mut items = Vec::new();
            for _ in 0..nodes {
                items.extend(ziplist::decode(&read_string(r)?)?);
            }
            Value::List(items)
        }
        T::HashListpack => Value::Hash(distinct_pairs(pairs_of(listpack::decode(
            &read_string(r)?,
        )?)?)?),
        T::ZSetListpack => Value::ZSet(zset_of(listpack::decode(&read_string(r)?)?)?),
        T::ListQuicklist2 => {
            let nodes = read_count(r, 2)?;
            let mut items = Vec::new();
            for _ in 0..nodes {
                let container = read_len(r)?;
                let blob = read_string(r)?;
                match container {
                    CONTAINER_PLAIN => items.push(blob),
                    CONTAINER_PACKED => items.extend(listpack::decode(&blob)?),
                    _ => return Err(bad(format!("quicklist container {container}"))),
                }
            }
            Value::List(items)
        }
    })
}

fn read_strings(r: &mut Reader<'_>) -> DumpResult<Vec<Vec<u8>>> {
    let n = read_count(r, 1)?;
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        items.push(read_string(r)?);
    }
    Ok(items)
}

fn distinct(items: Vec<Vec<u8>>) -> DumpResult<Vec<Vec<u8>>> {
    no_duplicates(items.iter().map(Vec::as_slice))?;
    Ok(items)
}

/// Refuses keys given twice. Most collections are short, and comparing
/// each key with those before it costs less there than hashing it: up to
/// [`SCAN_MAX`] keys are compared so, longer lists go through a hash set.
fn no_duplicates<'a>(keys: impl Iterator<Item = &'a [u8]> + Clone) -> DumpResult<()> {
    let duplicate = || bad("duplicate member");
    if keys.clone().nth(SCAN_MAX).is_none() {
        for (i, k) in keys.clone().enumerate() {
            if keys.clone().take(i).any(|before| before == k) {
                return Err(duplicate());
            }
        }
        return Ok(());
    }
    let mut seen = HashSet::new();
    for k in keys {
        if !seen.insert(k) {
            return Err(duplicate());
        }
    }
    Ok(())
}

/// The most keys [`no_duplicates`] compares with each other rather than
/// hashing.
const SCAN_MAX: usize = 16;

fn distinct_pairs<T>(pairs: Vec<(Vec<u8>, T)>) -> DumpResult<Vec<(Vec<u8>, T)>> {
    no_duplicates(pairs.iter().map(|(k, _)| k.as_slice()))?;
    Ok(pairs)
}

/// Alternate entries as pairs.
fn pairs_of(items: Vec<Vec<u8>>) -> DumpResult<Vec<(Vec<u8>, Vec<u8>)>> {
    if !items.len().is_multiple_of(2) {
        return Err(bad("odd number of entries in a pair encoding"));
    }
    let mut it = items.into_iter();
    let mut pairs = Vec::with_capacity(it.len() / 2);
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        pairs.push((k, v));
    }
    Ok(pairs)
}

/// Member, score entries of a ziplist or listpack (scores as integers or
/// `%.17g` text).
fn zset_of(items: Vec<Vec<u8>>) -> DumpResult<Vec<(Vec<u8>, f64)>> {
    let members = pairs_of(items)?
        .into_iter()
        .map(|(m, s)| {
            parse_f64(&s)
                .map(|score| (m, score))
                .ok_or_else(|| bad("unreadable score"))
        })
        .collect::<DumpResult<Vec<_>>>()?;
    checked_zset(members)
}

fn checked_zset(members: Vec<(Vec<u8>, f64)>) -> DumpResult<Vec<(Vec<u8>, f64)>> {
    if members.iter().any(|(_, s)| s.is_nan()) {
        return Err(bad("NaN score"));
    }
    distinct_pairs(members)
}

/// Encodes a value as redis-server 7.0 does under its default
/// configuration: the object type byte, then the body.
pub fn encode_object(value: &Value, opts: EncodeOptions) -> Vec<u8> {
    let mut out = Vec::new();
    match value {
        Value::String(s) => {
            out.push(ObjectType::String as u8);
            put_string(&mut out, s, opts);
        }
        Value::List(items) => encode_list(&mut out, items, opts),
        Value::Set(members) => encode_set(&mut out, members, opts),
        Value::ZSet(members) => encode_zset(&mut out, members, opts),
        Value::Hash(pairs) => encode_hash(&mut out, pairs, opts),
    }
    out
}

/// One quicklist node being filled.
enum Node {
    Packed(ListpackWriter),
    Plain(Vec<u8>),
}

/// A list as the quicklist RPUSH builds (`_quicklistNodeAllowInsert`
/// with `list-max-listpack-size -2`): an element joins the tail node
/// while the node's bytes plus the element's length plus 8 stay within
/// 8 KiB.
fn encode_list(out: &mut Vec<u8>, items: &[Vec<u8>], opts: EncodeOptions) {
    let mut nodes: Vec<Node> = Vec::new();
    for item in items {
        if item.len() >= limits::PLAIN_ELEMENT {
            nodes.push(Node::Plain(item.clone()));
            continue;
        }
        let fits = matches!(nodes.last(), Some(Node::Packed(lp))
            if lp.bytes() + item.len() + limits::NODE_OVERHEAD <= limits::NODE_BYTES);
        if !fits {
            nodes.push(Node::Packed(ListpackWriter::new()));
        }
        if let Some(Node::Packed(lp)) = nodes.last_mut() {
            lp.push(item);
        }
    }
    out.push(ObjectType::ListQuicklist2 as u8);
    put_len(out, nodes.len() as u64);
    for node in nodes {
        match node {
            Node::Packed(lp) => {
                put_len(out, CONTAINER_PACKED);
                put_string(out, &lp.finish(), opts);
            }
            Node::Plain(item) => {
                put_len(out, CONTAINER_PLAIN);
                put_string(out, &item, opts);
            }
        }
    }
}

/// An intset when every member is an integer's canonical text and there
/// are at most 512; else the hash table form, members in the given order.
fn encode_set(out: &mut Vec<u8>, members: &[Vec<u8>], opts: EncodeOptions) {
    let ints: Option<Vec<i64>> = if members.len() <= limits::INTSET_ENTRIES {
        members.iter().map(|m| parse_i64(m)).collect()
    } else {
        None
    };
    if let Some(mut ints) = ints {
        out.push(ObjectType::SetIntset as u8);
        put_string(out, &intset::encode(&mut ints), opts);
        return;
    }
    out.push(ObjectType::Set as u8);
    put_len(out, members.len() as u64);
    for m in members {
        put_string(out, m, opts);
    }
}

/// A listpack of member, score pairs in Redis' order while there are at
/// most 128 members of at most 64 bytes; else the skiplist form, highest
/// first, scores as binary doubles.
fn encode_zset(out: &mut Vec<u8>, members: &[(Vec<u8>, f64)], opts: EncodeOptions) {
    let mut sorted: Vec<&(Vec<u8>, f64)> = members.iter().collect();
    // Redis' order: by score (-0.0 and 0.0 are one score), then by member.
    sorted.sort_by(|a, b| {
        (a.1 + 0.0)
            .total_cmp(&(b.1 + 0.0))
            .then_with(|| a.0.cmp(&b.0))
    });
    let compact = members.len() <= limits::LISTPACK_ENTRIES
        && members
            .iter()
            .all(|(m, _)| m.len() <= limits::LISTPACK_VALUE);
    if compact {
        let mut lp = ListpackWriter::new();
        for (member, score) in sorted {
            lp.push(member);
            push_score(&mut lp, *score);
        }
        out.push(ObjectType::ZSetListpack as u8);
        put_string(out, &lp.finish(), opts);
        return;
    }
    out.push(ObjectType::ZSet2 as u8);
    put_len(out, members.len() as u64);
    for (member, score) in sorted.into_iter().rev() {
        put_string(out, member, opts);
        out.extend_from_slice(&score.to_le_bytes());
    }
}

/// A score as `zzlInsertAt` stores it: the integer when the double is
/// whole and within ±2^62 (`double2ll`), else its `%.17g` text.
fn push_score(lp: &mut ListpackWriter, score: f64) {
    const LIMIT: f64 = (i64::MAX / 2) as f64;
    if (-LIMIT..=LIMIT).contains(&score) && score == score.trunc() {
        lp.push_int(score as i64);
    } else {
        lp.push(format_g17(score).as_bytes());
    }
}

/// A listpack of field, value pairs in the given order while there are at
/// most 128 pairs of at most 64 bytes each; else the hash table form.
fn encode_hash(out: &mut Vec<u8>, pairs: &[(Vec<u8>, Vec<u8>)], opts: EncodeOptions) {
    let compact = pairs.len() <= limits::LISTPACK_ENTRIES
        && pairs
            .iter()
            .all(|(f, v)| f.len() <= limits::LISTPACK_VALUE && v.len() <= limits::LISTPACK_VALUE);
    if compact {
        let mut lp = ListpackWriter::new();
        for (f, v) in pairs {
            lp.push(f);
            lp.push(v);
        }
        out.push(ObjectType::HashListpack as u8);
        put_string(out, &lp.finish(), opts);
        return;
    }
    out.push(ObjectType::Hash as u8);
    put_len(out, pairs.len() as u64);
    for (f, v) in pairs {
        put_string(out, f, opts);
        put_string(out, v, opts);
    }
}
