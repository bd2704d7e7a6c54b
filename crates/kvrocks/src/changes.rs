//! What a Kvrocks write batch did, as Redis commands a replica of another
//! format can run (the job of Kvrocks' `WriteBatchExtractor`,
//! `src/storage/batch_extractor.cc`, with the state a batch carries used
//! where it is exact).
//!
//! Kvrocks starts every batch a command writes with a `LogData` record:
//! `"<RedisType>[ <command code> <args>…]"` (space-separated,
//! `WriteBatchLogData`), or `"r <replid>"` for the server's own log. The
//! records then change metadata (column family 1) and subkeys (0); the
//! score index (2), pub/sub (3), propagate (4) and search (6) families are
//! replication side channels and are not changes of keys; of them only the
//! namespace tokens a master with namespace replication writes are read
//! ([`Changes::namespace_tokens`]).
//!
//! Per key, at the end of the batch:
//!
//! - metadata deleted (and not written again): `DEL key`;
//! - a string's metadata written: `SET key value`, then `PEXPIREAT` if it
//!   expires (the metadata is the whole string);
//! - a collection's metadata written with size 0: `DEL key`;
//! - a collection's metadata written, and the batch puts as many distinct
//!   subkeys of that metadata's version as its size: those subkeys are the
//!   whole collection (a new key, RENAME, COPY, *STORE, a collection
//!   rewritten): `DEL key`, then the whole content (`HSET`, `SADD`,
//!   `ZADD`, `RPUSH` in index order), then `PEXPIREAT` if it expires;
//! - otherwise the members the batch changed (`HSET`/`HDEL`, `SADD`/`SREM`,
//!   `ZADD`/`ZREM`; lists from the command in the `LogData`: `LPUSH`,
//!   `RPUSH`, `LPOP`, `RPOP`, `LSET`, `LINSERT`, `LREM`, `LTRIM`), then,
//!   when the metadata was written, its expiry (`PEXPIREAT` or `PERSIST`:
//!   EXPIRE and PERSIST write the metadata only);
//! - `LMOVE`/`RPOPLPUSH`/`BLMOVE`: one `LMOVE src dst from to`.
//!
//! A slot migration's batches (`APPLYBATCH` of Kvrocks' `raw-key-value`
//! migration) hold many keys under the `LogData` of the first: each key's
//! metadata, then its subkeys, a big collection split over several
//! batches. They read the same way; a list's elements under another
//! type's `LogData` are `RPUSH`ed in index order.
//!
//! A metadata `DeleteRange` is FLUSHDB (one namespace's whole range) or
//! FLUSHALL (any other range): [`Change::FlushNamespace`] /
//! [`Change::FlushAll`].
//!
//! Keys of types redcodec does not model (bitmaps, sorted ints, streams,
//! JSON, bloom filters, HyperLogLogs) are reported in
//! [`Changes::skipped`]; a key that becomes such a type is deleted (its old
//! value would be stale).

use std::collections::HashMap;

use redcodec_codec::{DataType, DecodeError};
use thiserror::Error;

use crate::batch::{self, BatchError, Record};
use crate::keys::InternalKey;
use crate::meta::{self, Header};

/// A Redis command: name and arguments.
pub type Command = Vec<Vec<u8>>;

/// One change, in the order the replica applies them.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Run `args` in `namespace`.
    Command {
        /// The Kvrocks namespace name (`__namespace` by default).
        namespace: Vec<u8>,
        /// The command.
        args: Command,
    },
    /// Every key of `namespace` deleted (FLUSHDB).
    FlushNamespace(Vec<u8>),
    /// Every key of every namespace deleted (FLUSHALL).
    FlushAll,
}

/// A key whose change is not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Its namespace.
    pub namespace: Vec<u8>,
    /// The user key.
    pub key: Vec<u8>,
    /// Why.
    pub reason: String,
}

/// What one write batch did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Changes {
    /// The batch's first sequence number.
    pub sequence: u64,
    /// The sequence number after the batch.
    pub next_sequence: u64,
    /// The changes, in order.
    pub changes: Vec<Change>,
    /// Keys left out.
    pub skipped: Vec<Skipped>,
    /// The namespace tokens the batch wrote (the JSON value of
    /// [`crate::layout::NAMESPACE_TOKENS_KEY`] in the propagate family: a
    /// master with namespace replication changed its tokens), the last
    /// one if it wrote several.
    pub namespace_tokens: Option<Vec<u8>>,
}

/// Why a batch could not be read as changes.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ChangeError {
    /// Not a write batch.
    #[error("{0}")]
    Batch(#[from] BatchError),
    /// A metadata key or subkey that does not decode.
    #[error("bad key in the write batch: {0}")]
    Key(DecodeError),
    /// Metadata that does not decode.
    #[error("bad metadata of key '{key}' in the write batch: {error}")]
    Meta {
        /// The key (lossy UTF-8).
        key: String,
        /// Why.
        error: DecodeError,
    },
    /// A list subkey that is not an 8-byte index.
    #[error("bad list index subkey of key '{0}' in the write batch")]
    ListIndex(String),
}

/// Kvrocks' column families by id.
const CF_DEFAULT: u32 = 0;
const CF_METADATA: u32 = 1;
const CF_PROPAGATE: u32 = 4;
const CF_STREAM: u32 = 5;

/// Kvrocks' list command codes in `LogData` (`RedisCommand`).
mod list_cmd {
    pub const LSET: u32 = 0;
    pub const LINSERT: u32 = 1;
    pub const LTRIM: u32 = 2;
    pub const LPOP: u32 = 3;
    pub const RPOP: u32 = 4;
    pub const LREM: u32 = 5;
    pub const LPUSH: u32 = 6;
    pub const RPUSH: u32 = 7;
    pub const LMOVE: u32 = 12;
}

/// A batch's `LogData` of the Redis kind: the type, then the raw bytes of
/// the arguments (after one space), kept whole because an argument may
/// itself hold spaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogData {
    /// The Redis type code (as in metadata; 0: none).
    pub type_code: u8,
    /// The bytes after the type and one space (empty if none).
    pub args: Vec<u8>,
}

impl LogData {
    /// Reads a `WriteBatchLogData` blob; `None` for the server's own log
    /// (`r <replid>`) or a blob that is not one.
    pub fn parse(blob: &[u8]) -> Option<LogData> {
        let digits = blob.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 3 {
            return None;
        }
        let type_code: u8 = std::str::from_utf8(&blob[..digits]).ok()?.parse().ok()?;
        let args = match blob.get(digits) {
            None => Vec::new(),
            Some(b' ') => blob[digits + 1..].to_vec(),
            Some(_) => return None,
        };
        Some(LogData { type_code, args })
    }

    /// The command code (the first argument), if any.
    pub fn command(&self) -> Option<u32> {
        let first = self.args.split(|&b| b == b' ').next()?;
        std::str::from_utf8(first).ok()?.parse().ok()
    }

    /// The argument bytes after the command code and `skip` more
    /// space-separated words.
    fn rest_after(&self, skip: usize) -> Option<&[u8]> {
        let mut rest: &[u8] = &self.args;
        for _ in 0..=skip {
            let at = rest.iter().position(|&b| b == b' ')?;
            rest = &rest[at + 1..];
        }
        Some(rest)
    }

    /// The `n`-th space-separated word after the command code.
    fn word(&self, n: usize) -> Option<&[u8]> {
        self.args.split(|&b| b == b' ').nth(n + 1)
    }
}

/// An LMOVE in a batch: its `LogData`'s index, namespace, source (the key an element left), destination
/// (the key one was put in).
type Lmove = (usize, Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);

/// A subkey record of one key.
#[derive(Debug)]
enum SubOp<'a> {
    Put(&'a [u8], &'a [u8]),
    Delete(&'a [u8]),
}

/// The metadata record last seen for a key.
#[derive(Debug)]
enum MetaOp<'a> {
    Put(&'a [u8]),
    Delete,
}

#[derive(Debug)]
struct KeyState<'a> {
    namespace: Vec<u8>,
    key: Vec<u8>,
    meta: Option<MetaOp<'a>>,
    deleted_first: bool,
    /// Version, index of the `LogData` in force, the record.
    subs: Vec<(u64, usize, SubOp<'a>)>,
}

/// Splits a metadata key: `[u8 ns_len][ns][u16 slot, cluster only][key]`.
fn split_ns_key(raw: &[u8], cluster: bool) -> Result<(&[u8], &[u8]), ChangeError> {
    let bad = |reason: &str| {
        ChangeError::Key(DecodeError::Invalid {
            record: "kvrocks metadata key",
            reason: reason.into(),
        })
    };
    let (&len, rest) = raw.split_first().ok_or_else(|| bad("empty"))?;
    let ns = rest
        .get(..usize::from(len))
        .ok_or_else(|| bad("shorter than its namespace"))?;
    let mut key = &rest[usize::from(len)..];
    if cluster {
        key = key.get(2..).ok_or_else(|| bad("no slot"))?;
    }
    Ok((ns, key))
}

/// Kvrocks' `util::StringNext`: the shortest key after every key with
/// prefix `s`'s bytes (the last byte incremented, with carry).
fn string_next(s: &[u8]) -> Vec<u8> {
    let mut out = s.to_vec();
    while let Some(last) = out.last_mut() {
        if *last == 0xFF {
            out.pop();
        } else {
            *last += 1;
            break;
        }
    }
    out
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A score as a command argument (exact: shortest round-trip form).
fn score_arg(score: f64) -> Vec<u8> {
    if score.is_infinite() {
        return if score > 0.0 {
            b"+inf".to_vec()
        } else {
            b"-inf".to_vec()
        };
    }
    format!("{score:e}").into_bytes()
}

/// Decodes a write batch into the changes it made (see the module docs);
/// `cluster`: keys carry a slot (`cluster-enabled yes`).
pub fn decode(data: &[u8], cluster: bool) -> Result<Changes, ChangeError> {
    let parsed = batch::parse(data)?;
    let mut out = Changes {
        sequence: parsed.sequence,
        next_sequence: parsed.next_sequence(),
        ..Changes::default()
    };
    // The `LogData` records in order (the first: none yet).
    let mut logs: Vec<LogData> = vec![LogData::default()];
    let mut keys: Vec<KeyState<'_>> = Vec::new();
    let mut index: HashMap<(Vec<u8>, Vec<u8>), usize> = HashMap::new();
    let mut lmoves: Vec<Lmove> = Vec::new();
    let mut state = |ns: &[u8], key: &[u8], keys: &mut Vec<KeyState<'_>>| -> usize {
        *index.entry((ns.to_vec(), key.to_vec())).or_insert_with(|| {
            keys.push(KeyState {
                namespace: ns.to_vec(),
                key: key.to_vec(),
                meta: None,
                deleted_first: false,
                subs: Vec::new(),
            });
            keys.len() - 1
        })
    };
    for record in &parsed.records {
        match *record {
            Record::LogData(blob) => {
                if let Some(l) = LogData::parse(blob) {
                    logs.push(l);
                }
            }
            Record::Put {
                cf: CF_METADATA,
                key,
                value,
            } => {
                let (ns, user_key) = split_ns_key(key, cluster)?;
                let i = state(ns, user_key, &mut keys);
                let k = &mut keys[i];
                if matches!(k.meta, Some(MetaOp::Delete)) {
                    k.deleted_first = true;
                }
                k.meta = Some(MetaOp::Put(value));
            }
            Record::Delete {
                cf: CF_METADATA,
                key,
            } => {
                let (ns, user_key) = split_ns_key(key, cluster)?;
                let i = state(ns, user_key, &mut keys);
                let k = &mut keys[i];
                k.meta = Some(MetaOp::Delete);
                k.subs.clear();
            }
            Record::Put {
                cf: CF_DEFAULT,
                key,
                value,
            } => {
                let ik = InternalKey::parse(key, cluster).map_err(ChangeError::Key)?;
                let i = state(ik.namespace, ik.user_key, &mut keys);
                let li = logs.len() - 1;
                keys[i]
                    .subs
                    .push((ik.version, li, SubOp::Put(ik.sub, value)));
                if is_lmove(&logs[li]) {
                    match lmoves.last_mut() {
                        Some(m) if m.0 == li => m.3 = Some(ik.user_key.to_vec()),
                        _ => lmoves.push((
                            li,
                            ik.namespace.to_vec(),
                            None,
                            Some(ik.user_key.to_vec()),
                        )),
                    }
                }
            }
            Record::Delete {
                cf: CF_DEFAULT,
                key,
            } => {
                let ik = InternalKey::parse(key, cluster).map_err(ChangeError::Key)?;
                let i = state(ik.namespace, ik.user_key, &mut keys);
                let li = logs.len() - 1;
                keys[i].subs.push((ik.version, li, SubOp::Delete(ik.sub)));
                if is_lmove(&logs[li]) {
                    match lmoves.last_mut() {
                        Some(m) if m.0 == li => {
                            if m.2.is_none() {
                                m.2 = Some(ik.user_key.to_vec());
                            }
                        }
                        _ => lmoves.push((
                            li,
                            ik.namespace.to_vec(),
                            Some(ik.user_key.to_vec()),
                            None,
                        )),
                    }
                }
            }
            Record::DeleteRange {
                cf: CF_METADATA,
                begin,
                end,
            } => {
                let ns = begin
                    .split_first()
                    .and_then(|(&len, rest)| rest.get(..usize::from(len)));
                match ns {
                    Some(ns) if begin.len() == ns.len() + 1 && end == string_next(begin) => {
                        out.changes.push(Change::FlushNamespace(ns.to_vec()));
                    }
                    _ => out.changes.push(Change::FlushAll),
                }
            }
            Record::Put {
                cf: CF_STREAM, key, ..
            }
            | Record::Delete { cf: CF_STREAM, key } => {
                if let Ok(ik) = InternalKey::parse(key, cluster) {
                    out.skipped.push(Skipped {
                        namespace: ik.namespace.to_vec(),
                        key: ik.user_key.to_vec(),
                        reason: "a stream, a type redcodec does not model".into(),
                    });
                }
            }
            Record::Put {
                cf: CF_PROPAGATE,
                key,
                value,
            } if key == crate::layout::NAMESPACE_TOKENS_KEY => {
                out.namespace_tokens = Some(value.to_vec());
            }
            // Score index, pub/sub, propagate, search: side channels;
            // merges and other ranges: Kvrocks writes none to key data.
            _ => {}
        }
    }
    for (li, ns, src, dst) in lmoves {
        let src = src.or_else(|| dst.clone());
        let dst = dst.or_else(|| src.clone());
        let words: Vec<&[u8]> = logs[li].args.rsplitn(3, |&b| b == b' ').take(2).collect();
        if let (Some(src), Some(dst), [to, from]) = (src, dst, words.as_slice()) {
            out.changes.push(Change::Command {
                namespace: ns,
                args: vec![b"LMOVE".to_vec(), src, dst, from.to_vec(), to.to_vec()],
            });
        }
    }
    for k in keys {
        emit(&mut out, &logs, k)?;
    }
    Ok(out)
}

/// Whether a `LogData` is an LMOVE's.
fn is_lmove(log: &LogData) -> bool {
    log.type_code == meta::type_code::LIST && log.command() == Some(list_cmd::LMOVE)
}

/// The commands for one key's records.
fn emit(out: &mut Changes, logs: &[LogData], k: KeyState<'_>) -> Result<(), ChangeError> {
    // An LMOVE moved an element from or to this key (emitted apart).
    let moved = k.subs.iter().any(|(_, li, _)| is_lmove(&logs[*li]));
    let ns = k.namespace.clone();
    let key = k.key.clone();
    let mut cmds: Vec<Command> = Vec::new();
    let skip = |out: &mut Changes, reason: String| {
        out.skipped.push(Skipped {
            namespace: ns.clone(),
            key: key.clone(),
            reason,
        });
    };
    match k.meta {
        Some(MetaOp::Delete) => cmds.push(vec![b"DEL".to_vec(), key.clone()]),
        Some(MetaOp::Put(raw)) => {
            let header = Header::decode(raw).map_err(|error| ChangeError::Meta {
                key: lossy(&key),
                error,
            })?;
            let decoded = match meta::decode(raw) {
                Ok(m) => m,
                Err(DecodeError::Unmodelled { type_name, .. }) => {
                    skip(
                        out,
                        format!("a {type_name}, a type redcodec does not model; deleted here"),
                    );
                    cmds.push(vec![b"DEL".to_vec(), key.clone()]);
                    push(out, &ns, cmds);
                    return Ok(());
                }
                Err(error) => {
                    return Err(ChangeError::Meta {
                        key: lossy(&key),
                        error,
                    })
                }
            };
            let expire = header.expire_ms;
            if decoded.data_type == DataType::String {
                cmds.push(vec![b"SET".to_vec(), key.clone(), decoded.value.clone()]);
                if expire != 0 {
                    cmds.push(pexpireat(&key, expire));
                }
            } else if decoded.size == 0 {
                cmds.push(vec![b"DEL".to_vec(), key.clone()]);
            } else {
                let subs: Vec<(usize, &SubOp<'_>)> = k
                    .subs
                    .iter()
                    .filter(|(v, _, _)| *v == decoded.version)
                    .map(|(_, li, op)| (*li, op))
                    .collect();
                let whole = if moved {
                    None
                } else {
                    let ops: Vec<&SubOp<'_>> = subs.iter().map(|(_, op)| *op).collect();
                    whole_content(&key, decoded.data_type, decoded.size, &ops)?
                };
                if let Some(whole) = whole {
                    cmds.push(vec![b"DEL".to_vec(), key.clone()]);
                    cmds.push(whole);
                    if expire != 0 {
                        cmds.push(pexpireat(&key, expire));
                    }
                } else {
                    if k.deleted_first {
                        cmds.push(vec![b"DEL".to_vec(), key.clone()]);
                    }
                    members(&mut cmds, out, logs, &ns, &key, decoded.data_type, &subs)?;
                    cmds.push(if expire != 0 {
                        pexpireat(&key, expire)
                    } else {
                        vec![b"PERSIST".to_vec(), key.clone()]
                    });
                }
            }
        }
        None => {
            let Some((_, first, _)) = k.subs.first() else {
                return Ok(());
            };
            let log = &logs[*first];
            match meta::type_of(log.type_code) {
                Some(t) if t != DataType::String => {
                    let subs: Vec<(usize, &SubOp<'_>)> =
                        k.subs.iter().map(|(_, li, op)| (*li, op)).collect();
                    members(&mut cmds, out, logs, &ns, &key, t, &subs)?;
                }
                _ => skip(
                    out,
                    format!(
                        "subkeys written without metadata by a command of type {}",
                        log.type_code
                    ),
                ),
            }
        }
    }
    push(out, &ns, cmds);
    Ok(())
}

fn push(out: &mut Changes, ns: &[u8], cmds: Vec<Command>) {
    out.changes
        .extend(cmds.into_iter().map(|args| Change::Command {
            namespace: ns.to_vec(),
            args,
        }));
}

fn pexpireat(key: &[u8], ms: u64) -> Command {
    vec![
        b"PEXPIREAT".to_vec(),
        key.to_vec(),
        ms.to_string().into_bytes(),
    ]
}

fn list_index(key: &[u8], sub: &[u8]) -> Result<u64, ChangeError> {
    let bytes: [u8; 8] = sub
        .try_into()
        .map_err(|_| ChangeError::ListIndex(lossy(key)))?;
    Ok(u64::from_be_bytes(bytes))
}

fn zset_score(key: &[u8], value: &[u8]) -> Result<f64, ChangeError> {
    let bytes: [u8; 8] = value.try_into().map_err(|_| ChangeError::Meta {
        key: lossy(key),
        error: DecodeError::Invalid {
            record: "kvrocks zset member",
            reason: format!("score of {} bytes", value.len()),
        },
    })?;
    Ok(crate::score::from_bytes(bytes))
}

/// The whole collection, when the batch puts as many distinct subkeys of
/// the metadata's version as its size and deletes none.
fn whole_content(
    key: &[u8],
    data_type: DataType,
    size: u64,
    subs: &[&SubOp<'_>],
) -> Result<Option<Command>, ChangeError> {
    if subs.iter().any(|op| matches!(op, SubOp::Delete(_))) {
        return Ok(None);
    }
    // The last value put for each subkey, in first-put order.
    let mut order: Vec<&[u8]> = Vec::new();
    let mut last: HashMap<&[u8], &[u8]> = HashMap::new();
    for op in subs {
        if let SubOp::Put(sub, value) = op {
            if last.insert(sub, value).is_none() {
                order.push(sub);
            }
        }
    }
    if order.len() as u64 != size {
        return Ok(None);
    }
    let mut cmd = vec![key.to_vec()];
    let name: &[u8] = match data_type {
        DataType::Hash => {
            for sub in &order {
                cmd.push(sub.to_vec());
                cmd.push(last[sub].to_vec());
            }
            b"HSET"
        }
        DataType::Set => {
            cmd.extend(order.iter().map(|s| s.to_vec()));
            b"SADD"
        }
        DataType::ZSet => {
            for sub in &order {
                cmd.push(score_arg(zset_score(key, last[sub])?));
                cmd.push(sub.to_vec());
            }
            b"ZADD"
        }
        DataType::List => {
            let mut items: Vec<(u64, &[u8])> = Vec::with_capacity(order.len());
            for sub in &order {
                items.push((list_index(key, sub)?, last[sub]));
            }
            items.sort_by_key(|(i, _)| *i);
            cmd.extend(items.into_iter().map(|(_, v)| v.to_vec()));
            b"RPUSH"
        }
        DataType::String => return Ok(None),
    };
    cmd.insert(0, name.to_vec());
    Ok(Some(cmd))
}

/// Appends `arg` to the last command if it is `name key …`, else starts
/// one.
fn merged(cmds: &mut Vec<Command>, name: &[u8], key: &[u8], args: Vec<Vec<u8>>) {
    if let Some(last) = cmds.last_mut() {
        if last[0] == name && last[1] == key {
            last.extend(args);
            return;
        }
    }
    let mut cmd = vec![name.to_vec(), key.to_vec()];
    cmd.extend(args);
    cmds.push(cmd);
}

/// The member changes of a batch that is not a whole collection.
fn members(
    cmds: &mut Vec<Command>,
    out: &mut Changes,
    logs: &[LogData],
    ns: &[u8],
    key: &[u8],
    data_type: DataType,
    subs: &[(usize, &SubOp<'_>)],
) -> Result<(), ChangeError> {
    if data_type == DataType::List {
        // One command per `LogData` (a MULTI's batch holds several); an
        // LMOVE's records are its LMOVE, emitted apart.
        for group in subs.chunk_by(|a, b| a.0 == b.0) {
            let log = &logs[group[0].0];
            if !is_lmove(log) {
                let ops: Vec<&SubOp<'_>> = group.iter().map(|(_, op)| *op).collect();
                list_members(cmds, out, log, ns, key, &ops)?;
            }
        }
        return Ok(());
    }
    for (_, op) in subs {
        match (data_type, op) {
            (DataType::Hash, SubOp::Put(f, v)) => {
                merged(cmds, b"HSET", key, vec![f.to_vec(), v.to_vec()]);
            }
            (DataType::Hash, SubOp::Delete(f)) => merged(cmds, b"HDEL", key, vec![f.to_vec()]),
            (DataType::Set, SubOp::Put(m, _)) => merged(cmds, b"SADD", key, vec![m.to_vec()]),
            (DataType::Set, SubOp::Delete(m)) => merged(cmds, b"SREM", key, vec![m.to_vec()]),
            (DataType::ZSet, SubOp::Put(m, s)) => merged(
                cmds,
                b"ZADD",
                key,
                vec![score_arg(zset_score(key, s)?), m.to_vec()],
            ),
            (DataType::ZSet, SubOp::Delete(m)) => merged(cmds, b"ZREM", key, vec![m.to_vec()]),
            _ => {}
        }
    }
    Ok(())
}

/// A list's changes, from the command its `LogData` names (as Kvrocks'
/// `WriteBatchExtractor` does).
fn list_members(
    cmds: &mut Vec<Command>,
    out: &mut Changes,
    log: &LogData,
    ns: &[u8],
    key: &[u8],
    subs: &[&SubOp<'_>],
) -> Result<(), ChangeError> {
    let puts = || {
        subs.iter().filter_map(|op| match op {
            SubOp::Put(_, v) => Some(v.to_vec()),
            SubOp::Delete(_) => None,
        })
    };
    let deletes = subs
        .iter()
        .filter(|op| matches!(op, SubOp::Delete(_)))
        .count();
    let unknown = |out: &mut Changes, what: &str| {
        out.skipped.push(Skipped {
            namespace: ns.to_vec(),
            key: key.to_vec(),
            reason: format!(
                "list change {what} not understood; the list may differ from the master's"
            ),
        });
    };
    let key_cmd = |name: &[u8], args: Vec<Vec<u8>>| {
        let mut c = vec![name.to_vec(), key.to_vec()];
        c.extend(args);
        c
    };
    match (log.type_code == meta::type_code::LIST)
        .then(|| log.command())
        .flatten()
    {
        Some(c @ (list_cmd::LPUSH | list_cmd::RPUSH)) => {
            let values: Vec<Vec<u8>> = puts().collect();
            if !values.is_empty() {
                let name: &[u8] = if c == list_cmd::LPUSH {
                    b"LPUSH"
                } else {
                    b"RPUSH"
                };
                merged(cmds, name, key, values);
            }
        }
        Some(list_cmd::LPOP) => (0..deletes).for_each(|_| cmds.push(key_cmd(b"LPOP", vec![]))),
        Some(list_cmd::RPOP) => (0..deletes).for_each(|_| cmds.push(key_cmd(b"RPOP", vec![]))),
        Some(list_cmd::LSET) => match (log.word(0), puts().next()) {
            (Some(i), Some(v)) => cmds.push(key_cmd(b"LSET", vec![i.to_vec(), v])),
            _ => unknown(out, "LSET"),
        },
        Some(list_cmd::LTRIM) => match (log.word(0), log.word(1)) {
            (Some(a), Some(b)) => cmds.push(key_cmd(b"LTRIM", vec![a.to_vec(), b.to_vec()])),
            _ => unknown(out, "LTRIM"),
        },
        Some(list_cmd::LREM) => match (log.word(0), log.rest_after(1)) {
            (Some(count), Some(elem)) => {
                cmds.push(key_cmd(b"LREM", vec![count.to_vec(), elem.to_vec()]));
            }
            _ => unknown(out, "LREM"),
        },
        Some(list_cmd::LINSERT) => {
            // "<before 1|0> <pivot> <elem>": pivot and element may hold
            // spaces; Kvrocks' `List::Insert` puts the new element last,
            // after the elements it shifts.
            let found = log
                .word(0)
                .zip(log.rest_after(1))
                .zip(puts().next_back())
                .and_then(|((before, rest), v)| {
                    let cut = rest.len().checked_sub(v.len() + 1)?;
                    (rest.ends_with(&v) && rest[cut] == b' ').then(|| {
                        let place: &[u8] = if before == b"1" { b"BEFORE" } else { b"AFTER" };
                        vec![place.to_vec(), rest[..cut].to_vec(), v]
                    })
                });
            match found {
                Some(args) => cmds.push(key_cmd(b"LINSERT", args)),
                None => unknown(out, "LINSERT"),
            }
        }
        // A slot migration's batch (Kvrocks' `BatchSender`,
        // `sendSnapshotByRawKV`) carries the `LogData` of its first key
        // only: elements of a list under another type's `LogData` are that
        // list's snapshot, sent head first.
        None if log.type_code != meta::type_code::LIST && deletes == 0 => {
            let mut items = subs
                .iter()
                .filter_map(|op| match op {
                    SubOp::Put(sub, v) => Some(list_index(key, sub).map(|i| (i, v.to_vec()))),
                    SubOp::Delete(_) => None,
                })
                .collect::<Result<Vec<_>, _>>()?;
            items.sort_by_key(|(i, _)| *i);
            if !items.is_empty() {
                merged(
                    cmds,
                    b"RPUSH",
                    key,
                    items.into_iter().map(|(_, v)| v).collect(),
                );
            }
        }
        other => unknown(
            out,
            &match other {
                Some(c) => format!("with command code {c}"),
                None => "without a command".into(),
            },
        ),
    }
    Ok(())
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod tests;
