//! §14 of `formats-spec/ardb.md`: the RocksDB merge operands Ardb writes in
//! non-redis-compatible mode, and `ardb.merger`, the merge operator that
//! resolves them (`MergeOperator::FullMergeV2`,
//! `src/db/rocksdb/rocksdb_engine.cpp`; `Ardb::MergeOperation`,
//! `src/command/merge.cpp`).
//!
//! ```text
//! operand = 1e | op u16 LITTLE-endian | count u8 | Data × count
//! ```
//!
//! An operand is stored under the key of the record it changes: the `META`
//! key for the string ops, `PEXPIREAT` and `HSETNX`'s size update, a hash
//! field's key for `HSETNX`, `HINCRBY` and `HINCRBYFLOAT`.
//!
//! The full merge works on Ardb's whole value object, not on redcodec's
//! logical model, so that what it writes back is byte for byte what Ardb
//! would write: `Value` is that object (type, merge op, meta fields,
//! `Data` array), decoded and encoded the way Ardb's `ValueObject` is
//! (lenient: no format check, trailing bytes ignored), and each handler
//! mirrors the Ardb function named in its comment.
//!
//! [`full_merge`]:
//! 1. an empty or missing base is "no value" (type 0); a base that does not
//!    decode fails the merge ([`MergeError::UndecodableBase`]);
//! 2. the operands are applied oldest first; one that does not decode, or
//!    whose op is unknown, is skipped; one whose handler refuses (wrong
//!    type, NX on an existing value, …) leaves the value as it is;
//! 3. if any operand applied, the value is encoded again (type 0 encodes to
//!    the empty value, which Ardb reads as missing); otherwise the base comes
//!    back unchanged (the empty value without a base).
//!
//! Refused, where Ardb's result cannot be reproduced or Ardb itself would
//! crash ([`MergeError`]): `PFADD` operands that add elements (the HLL
//! update also depends on the server's `hll-sparse-max-bytes`), and operands
//! whose arguments no Ardb command writes (too few, a negative `SETRANGE`
//! offset that wraps, a `SETBIT` offset beyond 2^32 bits). The merge then
//! fails, and RocksDB reports `Corruption: Merge operator failed` for that
//! key rather than a value Ardb would not have produced.
//!
//! There is no partial merge: Ardb's loses updates (two identical operands
//! count once), so RocksDB keeps the operands until it meets their base.

use redcodec_codec::MergeOperatorSpec;
use thiserror::Error;

use crate::keys::key_type;
use crate::primitives::{format_float, put_varint64, put_varuint32, tag};

/// The merge operator's name (`MergeOperator::Name`).
pub const NAME: &str = "ardb.merger";

/// The operator every Ardb column family is opened with.
pub const SPEC: MergeOperatorSpec = MergeOperatorSpec {
    name: NAME,
    full_merge: full_merge_operator,
};

/// Merge op codes: Ardb's command types
/// (`src/common/channel/codec/redis_command.hpp`). The `…2` commands are the
/// always-non-compatible forms; the merge treats each like its base op.
pub mod op {
    /// `PEXPIREAT`: every expiry command writes this op (absolute ms; 0 for
    /// `PERSIST`). `PEXPIREAT2` (1024) is not a merge op.
    pub const PEXPIREAT: u16 = 55;
    /// `APPEND`.
    pub const APPEND: u16 = 100;
    /// `SET` (a handler exists; no command writes it as an operand).
    pub const SET: u16 = 102;
    /// `DECR`.
    pub const DECR: u16 = 106;
    /// `DECRBY`.
    pub const DECRBY: u16 = 107;
    /// `INCR`.
    pub const INCR: u16 = 111;
    /// `INCRBY`.
    pub const INCRBY: u16 = 112;
    /// `INCRBYFLOAT`.
    pub const INCRBYFLOAT: u16 = 113;
    /// `SET … NX|XX EX|PX`: an unconditional set; the ms argument is ignored.
    pub const PSETEX: u16 = 117;
    /// `SETBIT`.
    pub const SETBIT: u16 = 118;
    /// `SETNX`, `SET … NX`, `MSETNX`.
    pub const SETNX: u16 = 120;
    /// `SETRANGE`.
    pub const SETRANGE: u16 = 121;
    /// `PFADD`.
    pub const PFADD: u16 = 123;
    /// `SET … XX`.
    pub const SETXX: u16 = 126;
    /// `HINCRBY`.
    pub const HINCR: u16 = 154;
    /// `HINCRBYFLOAT`.
    pub const HINCRBYFLOAT: u16 = 155;
    /// `HSET` (a handler exists; no command writes it as an operand).
    pub const HSET: u16 = 160;
    /// `HSETNX`.
    pub const HSETNX: u16 = 161;
    /// `append2`.
    pub const APPEND2: u16 = 1001;
    /// `incrby2`.
    pub const INCRBY2: u16 = 1002;
    /// `incrbyfloat2`.
    pub const INCRBYFLOAT2: u16 = 1003;
    /// `incr2`.
    pub const INCR2: u16 = 1004;
    /// `decr2`.
    pub const DECR2: u16 = 1005;
    /// `decrby2`.
    pub const DECRBY2: u16 = 1006;
    /// `setnx2`, `msetnx2`.
    pub const SETNX2: u16 = 1007;
    /// `set2`.
    pub const SET2: u16 = 1008;
    /// `setrange2`.
    pub const SETRANGE2: u16 = 1009;
    /// `hset2`.
    pub const HSET2: u16 = 1010;
    /// `hsetnx2`.
    pub const HSETNX2: u16 = 1011;
    /// `hincrby2`.
    pub const HINCR2: u16 = 1013;
    /// `hincrbyfloat2`.
    pub const HINCRBYFLOAT2: u16 = 1014;
    /// `setbit2`.
    pub const SETBIT2: u16 = 1028;
    /// `pfadd2`.
    pub const PFADD2: u16 = 1029;
}

/// The longest string value `SETRANGE` may produce (512 MiB,
/// `MergeSetRange`).
pub const MAX_STRING_LEN: u64 = 512 * 1024 * 1024;

/// Why a merge is refused: RocksDB then fails the read or compaction that
/// needed it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MergeError {
    /// The key's base value does not decode (Ardb's merge fails too).
    #[error("ardb.merger: the value under the key does not decode")]
    UndecodableBase,
    /// An operand whose result redcodec cannot reproduce byte for byte.
    #[error("ardb.merger: op {op} is not supported: {reason}")]
    Unsupported {
        /// The op code as stored.
        op: u16,
        /// Why.
        reason: &'static str,
    },
    /// An operand no Ardb command writes, on which Ardb's own merge would
    /// read past its arguments or throw.
    #[error("ardb.merger: malformed op {op} operand: {reason}")]
    Malformed {
        /// The op code as stored.
        op: u16,
        /// What is wrong.
        reason: &'static str,
    },
}

/// The [`MergeOperatorSpec::full_merge`] of [`SPEC`]: [`full_merge`], with
/// a refusal as `None`.
pub fn full_merge_operator(
    key: &[u8],
    existing: Option<&[u8]>,
    operands: &mut dyn Iterator<Item = &[u8]>,
) -> Option<Vec<u8>> {
    full_merge(key, existing, operands).ok()
}

/// What `ardb.merger` makes of `key`'s base value `existing` (`None`: no
/// base) and its operands, oldest first.
pub fn full_merge(
    key: &[u8],
    existing: Option<&[u8]>,
    operands: &mut dyn Iterator<Item = &[u8]>,
) -> Result<Vec<u8>, MergeError> {
    let on_meta = key_type_byte(key) == key_type::META;
    let base = existing.filter(|b| !b.is_empty());
    let mut value = match base {
        Some(b) => Value::decode(b).ok_or(MergeError::UndecodableBase)?,
        None => Value::default(),
    };
    let mut changed = false;
    for operand in operands {
        let Some(operand) = Value::decode(operand) else {
            continue;
        };
        // A value that is not an operand has merge op 0: unknown, skipped.
        if apply(&mut value, on_meta, operand.merge_op, operand.vals)? {
            changed = true;
        }
    }
    Ok(match (changed, base) {
        (true, _) => value.encode(),
        (false, Some(b)) => b.to_vec(),
        (false, None) => Vec::new(),
    })
}

/// An operand's bytes: `1e ‖ op u16 LE ‖ count ‖ Data × count`
/// (`encode_merge_operation`, `src/db/codec.cpp`). Beyond 255 arguments the
/// count byte wraps, as Ardb's does.
pub fn encode_operand(op: u16, args: &[Scalar]) -> Vec<u8> {
    Value {
        ty: key_type::MERGE,
        merge_op: op,
        vals: args.to_vec(),
        ..Value::default()
    }
    .encode()
}

/// The key type Ardb's merge decodes from `key` (`KeyObject::Decode`): the
/// byte after the length-prefixed user key, or 0 when there is none.
fn key_type_byte(key: &[u8]) -> u8 {
    let mut r = Lenient::new(key);
    let Some(len) = r.varuint32() else {
        return 0;
    };
    r.take(len as usize).and_then(|_| r.u8()).unwrap_or(0)
}

// ---------------------------------------------------------------------------
// Ardb's `Data` and `ValueObject`, owned and mutable.

/// Ardb's `Data` (`src/types.cpp`) as the merge handles it: tag 3 strings
/// become tag 4 when written back, as in Ardb.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    /// Tag 0.
    Nil,
    /// Tag 1.
    Int(i64),
    /// Tag 2.
    Float(f64),
    /// Tag 3 or 4.
    Str(Vec<u8>),
}

impl Scalar {
    /// A string as `Data::SetString(s, true)` stores it: an int64 when
    /// `string2ll` accepts it.
    pub fn try_int(s: &[u8]) -> Scalar {
        match crate::primitives::string2ll(s) {
            Some(i) => Scalar::Int(i),
            None => Scalar::Str(s.to_vec()),
        }
    }

    /// `Data::GetInt64`: 0 unless an int64.
    fn get_int64(&self) -> i64 {
        match *self {
            Scalar::Int(i) => i,
            _ => 0,
        }
    }

    /// `Data::GetFloat64`: ints converted, 0 for strings and nil.
    fn get_float64(&self) -> f64 {
        match *self {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
            _ => 0.0,
        }
    }

    fn is_int(&self) -> bool {
        matches!(self, Scalar::Int(_))
    }

    fn is_number(&self) -> bool {
        matches!(self, Scalar::Int(_) | Scalar::Float(_))
    }

    /// `Data::ToString`: an int in decimal, a float as `lf2string`, a
    /// string as itself, nil as the empty string.
    fn to_text(&self) -> Vec<u8> {
        match self {
            Scalar::Nil => Vec::new(),
            Scalar::Int(i) => i.to_string().into_bytes(),
            Scalar::Float(f) => format_float(*f).into_bytes(),
            Scalar::Str(s) => s.clone(),
        }
    }

    /// [`Scalar::to_text`], moving a string out (no copy) and leaving nil.
    fn take_text(&mut self) -> Vec<u8> {
        match std::mem::replace(self, Scalar::Nil) {
            Scalar::Str(s) => s,
            other => other.to_text(),
        }
    }

    /// `Data::StringLength`: the decimal digits of an int (with its sign),
    /// the length of a string, 0 otherwise.
    fn string_length(&self) -> u64 {
        match self {
            Scalar::Int(i) => u64::from(digits10(*i)),
            Scalar::Str(s) => s.len() as u64,
            _ => 0,
        }
    }

    /// `Data::Compare(other, false) == 0`: nil equals only nil; two ints by
    /// value; an int or float against a float as doubles (where NaN equals
    /// every number: neither is greater nor less); strings bytewise; a
    /// number never equals a string.
    fn ardb_eq(&self, other: &Scalar) -> bool {
        match (self, other) {
            (Scalar::Nil, Scalar::Nil) => true,
            (Scalar::Nil, _) | (_, Scalar::Nil) => false,
            (Scalar::Int(a), Scalar::Int(b)) => a == b,
            (Scalar::Str(a), Scalar::Str(b)) => a == b,
            (Scalar::Str(_), _) | (_, Scalar::Str(_)) => false,
            _ => {
                let (a, b) = (self.get_float64(), other.get_float64());
                // Equal, or unordered (a NaN).
                a.partial_cmp(&b).is_none_or(std::cmp::Ordering::is_eq)
            }
        }
    }

    /// `Data::Encode`.
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Scalar::Nil => out.push(tag::NIL),
            Scalar::Int(i) => {
                out.push(tag::INT64);
                put_varint64(out, *i);
            }
            Scalar::Float(f) => {
                out.push(tag::FLOAT64);
                put_varint64(out, f.to_bits() as i64);
            }
            Scalar::Str(s) => {
                out.push(tag::SDS);
                // Decoded strings fit a varuint32; the merge builds none
                // longer than 512 MiB.
                put_varuint32(out, u32::try_from(s.len()).unwrap_or(u32::MAX));
                out.extend_from_slice(s);
            }
        }
    }

    /// `Data::Decode`.
    fn decode(r: &mut Lenient<'_>) -> Option<Scalar> {
        match r.u8()? {
            tag::NIL => Some(Scalar::Nil),
            tag::INT64 => Some(Scalar::Int(r.varint64()?)),
            tag::FLOAT64 => Some(Scalar::Float(f64::from_bits(r.varint64()? as u64))),
            tag::CSTR | tag::SDS => {
                let len = r.varuint32()?;
                Some(Scalar::Str(r.take(len as usize)?.to_vec()))
            }
            _ => None,
        }
    }
}

/// `digits10` (`src/common/util/math_helper.cpp`): decimal digits of
/// `|v|`, plus one for the sign.
fn digits10(v: i64) -> u32 {
    let mut magnitude = v.unsigned_abs();
    let mut n = 1;
    while magnitude >= 10 {
        magnitude /= 10;
        n += 1;
    }
    n + u32::from(v < 0)
}

/// Ardb's `ValueObject` (`src/db/codec.{hpp,cpp}`): the type byte, the
/// merge op of an operand, the `MetaObject` fields, and the `Data` array.
/// A value with no base is type 0 with a fresh meta (format 0, ttl 0,
/// size −1, sequential).
#[derive(Clone, Debug, PartialEq)]
struct Value {
    ty: u8,
    merge_op: u16,
    format: u8,
    ttl: i64,
    size: i64,
    list_sequential: bool,
    /// `StreamID { ms, seq }` of a stream's meta.
    stream_last_id: (u64, u64),
    vals: Vec<Scalar>,
}

impl Default for Value {
    fn default() -> Self {
        Value {
            ty: 0,
            merge_op: 0,
            format: 0,
            ttl: 0,
            size: -1,
            list_sequential: true,
            stream_last_id: (0, 0),
            vals: Vec::new(),
        }
    }
}

impl Value {
    /// `ValueObject::Decode`: `None` where Ardb's decode returns false, or
    /// where Ardb would read a stream's last id through a null pointer.
    fn decode(raw: &[u8]) -> Option<Value> {
        let mut r = Lenient::new(raw);
        let mut v = Value {
            ty: r.u8()?,
            ..Value::default()
        };
        if v.ty == key_type::MERGE {
            let b = r.take(2)?;
            v.merge_op = u16::from_le_bytes([b[0], b[1]]);
        } else if key_type::is_meta(v.ty) {
            v.format = r.u8()?;
            v.ttl = r.varint64()?;
            if v.ty != key_type::STRING {
                v.size = r.varint64()?;
            }
            if v.ty == key_type::LIST {
                v.list_sequential = r.u8()? != 0;
            }
            if v.ty == key_type::STREAM {
                v.stream_last_id = stream_id(&Scalar::decode(&mut r)?)?;
            }
        }
        let count = r.u8()?;
        for _ in 0..count {
            v.vals.push(Scalar::decode(&mut r)?);
        }
        Some(v)
    }

    /// `ValueObject::Encode`: type 0 is the empty value.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.ty == 0 {
            return out;
        }
        out.push(self.ty);
        if self.ty == key_type::MERGE {
            out.extend_from_slice(&self.merge_op.to_le_bytes());
        } else if key_type::is_meta(self.ty) {
            out.push(self.format);
            put_varint64(&mut out, self.ttl);
            if self.ty != key_type::STRING {
                put_varint64(&mut out, self.size);
            }
            if self.ty == key_type::LIST {
                out.push(u8::from(self.list_sequential));
            }
            if self.ty == key_type::STREAM {
                let (ms, seq) = self.stream_last_id;
                let id = [ms.to_be_bytes(), seq.to_be_bytes()].concat();
                Scalar::Str(id).encode(&mut out);
            }
        }
        // `(char) vals.size()`: decoded values hold at most 255 and the
        // handlers add at most one.
        out.push(self.vals.len() as u8);
        for d in &self.vals {
            d.encode(&mut out);
        }
        out
    }

    /// `getElement(idx)`: the `Data` at `idx`, growing the array with nils.
    fn element(&mut self, idx: usize) -> &mut Scalar {
        if self.vals.len() <= idx {
            self.vals.resize(idx + 1, Scalar::Nil);
        }
        &mut self.vals[idx]
    }

    /// `GetStringValue()` / `GetHashValue()`.
    fn first(&mut self) -> &mut Scalar {
        self.element(0)
    }

    /// The type check of the string merges: a value that is none, or a
    /// string whose datum `accepts`, becomes a string (true); any other is
    /// left as it is (false).
    fn becomes_string(&mut self, accepts: impl FnOnce(&Scalar) -> bool) -> bool {
        if self.ty > 0 && (self.ty != key_type::STRING || !accepts(self.first())) {
            return false;
        }
        self.ty = key_type::STRING;
        true
    }
}

/// `StreamID::Decode`: the first 16 bytes of a string of at least 16 bytes,
/// big-endian ms then seq; (0, 0) for anything shorter. `None` for an int
/// of 16 digits or more, which Ardb would copy from a null pointer.
fn stream_id(d: &Scalar) -> Option<(u64, u64)> {
    if d.string_length() < 16 {
        return Some((0, 0));
    }
    let Scalar::Str(s) = d else {
        return None;
    };
    let ms = u64::from_be_bytes(s.get(..8)?.try_into().ok()?);
    let seq = u64::from_be_bytes(s.get(8..16)?.try_into().ok()?);
    Some((ms, seq))
}

/// A reader with Ardb's `BufferHelper` rules: varints of up to 10 bytes,
/// bits beyond 64 dropped, a varuint32 truncated to 32 bits.
struct Lenient<'a> {
    bytes: &'a [u8],
}

impl<'a> Lenient<'a> {
    fn new(bytes: &'a [u8]) -> Lenient<'a> {
        Lenient { bytes }
    }

    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        Some(b)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.bytes.len() < n {
            return None;
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(head)
    }

    /// `ReadVarUInt64`.
    fn varuint64(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for count in 0..10u32 {
            let b = self.u8()?;
            value |= u64::from(b & 0x7F).wrapping_shl(7 * count);
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// `ReadVarInt64`: zigzag.
    fn varint64(&mut self) -> Option<i64> {
        self.varuint64().map(crate::primitives::unzigzag)
    }

    /// `ReadVarUInt32`: the low 32 bits.
    fn varuint32(&mut self) -> Option<u32> {
        self.varuint64().map(|v| v as u32)
    }
}

// ---------------------------------------------------------------------------
// `MergeOperation` and its handlers.

/// Applies one operand (`Ardb::MergeOperation`): `Ok(true)` when the value
/// changed, `Ok(false)` when Ardb skips the operand or its handler refuses.
fn apply(
    v: &mut Value,
    on_meta: bool,
    stored_op: u16,
    mut args: Vec<Scalar>,
) -> Result<bool, MergeError> {
    let malformed = |reason| MergeError::Malformed {
        op: stored_op,
        reason,
    };
    // `AdjustMergeOp`: fold the op codes.
    let op = match stored_op {
        op::HSET | op::HSET2 => op::HSET,
        op::HSETNX | op::HSETNX2 => op::HSETNX,
        op::SET | op::SET2 => op::SET,
        op::SETXX => op::SETXX,
        op::SETNX | op::SETNX2 => op::SETNX,
        op::PSETEX => op::PSETEX,
        op::APPEND | op::APPEND2 => op::APPEND,
        op::INCR | op::INCR2 | op::INCRBY | op::INCRBY2 => op::INCRBY,
        op::HINCR | op::HINCR2 => op::HINCR,
        op::HINCRBYFLOAT | op::HINCRBYFLOAT2 => op::HINCRBYFLOAT,
        op::DECR | op::DECR2 | op::DECRBY | op::DECRBY2 => {
            let first = args.first_mut().ok_or_else(|| malformed("no argument"))?;
            *first = if matches!(stored_op, op::DECR | op::DECR2) {
                Scalar::Int(-1)
            } else {
                Scalar::Int(first.get_int64().wrapping_neg())
            };
            op::INCRBY
        }
        op::INCRBYFLOAT | op::INCRBYFLOAT2 => op::INCRBYFLOAT,
        op::SETRANGE | op::SETRANGE2 => op::SETRANGE,
        op::SETBIT | op::SETBIT2 => op::SETBIT,
        op::PFADD | op::PFADD2 => op::PFADD,
        op::PEXPIREAT => op::PEXPIREAT,
        _ => return Ok(false),
    };
    // Ardb indexes its argument array without checking its length.
    let needed = match op {
        op::PFADD => 0,
        op::SETRANGE | op::SETBIT => 2,
        _ => 1,
    };
    if args.len() < needed {
        return Err(malformed("too few arguments"));
    }
    let given = args.len();
    let mut args = args.into_iter();
    let mut arg = || args.next().unwrap_or(Scalar::Nil);
    match op {
        op::HSET | op::HSETNX => Ok(merge_hset(v, on_meta, op == op::HSETNX, arg())),
        op::HINCR | op::HINCRBYFLOAT => Ok(merge_hincrby(v, op == op::HINCR, arg())),
        op::SET | op::SETXX | op::SETNX | op::PSETEX => Ok(merge_set(v, op, arg())),
        op::APPEND => Ok(merge_append(v, &arg().to_text())),
        op::INCRBY => Ok(merge_incrby(v, arg().get_int64())),
        op::INCRBYFLOAT => Ok(merge_incrbyfloat(v, arg().get_float64())),
        op::SETRANGE => {
            let offset = arg().get_int64();
            merge_setrange(v, offset, &arg().to_text()).ok_or_else(|| {
                malformed("negative offset (Ardb's std::string::replace would throw)")
            })
        }
        op::SETBIT => {
            let offset = arg().get_int64();
            let on = arg().get_int64() & 1 == 1;
            merge_setbit(v, offset, on).ok_or_else(|| malformed("bit offset beyond 2^32"))
        }
        op::PFADD => merge_pfadd(v, given).ok_or(MergeError::Unsupported {
            op: stored_op,
            reason: "adding elements to a HyperLogLog (its bytes also depend on the \
                     server's hll-sparse-max-bytes)",
        }),
        // PEXPIREAT.
        _ => Ok(merge_expire(v, arg().get_int64())),
    }
}

/// `MergeHSet` (`t_hash.cpp`): `HSETNX` on the `META` key marks the hash's
/// size unknown (−1) or, with no value, creates a hash of size `opv`; on a
/// field key it sets the field unless it exists. `HSET` also replaces a
/// different field value.
fn merge_hset(v: &mut Value, on_meta: bool, nx: bool, opv: Scalar) -> bool {
    if v.ty > 0 {
        if nx && !on_meta {
            return false;
        }
        if on_meta {
            if v.ty != key_type::HASH || v.size == -1 {
                return false;
            }
            v.size = -1;
        } else {
            if v.ty != key_type::HASH_FIELD || v.first().ardb_eq(&opv) {
                return false;
            }
            *v.first() = opv;
        }
        return true;
    }
    if on_meta {
        v.ty = key_type::HASH;
        v.size = match opv {
            Scalar::Int(i) => i,
            _ => -1,
        };
    } else {
        v.ty = key_type::HASH_FIELD;
        *v.first() = opv;
    }
    true
}

/// `MergeHIncrby` (`t_hash.cpp`): the argument must be an int (`HINCRBY`)
/// or a number (`HINCRBYFLOAT`). No value: the field becomes the argument.
/// Otherwise the value's first `Data` must be an int (a number): the int
/// sum wraps; the float sum is always a float.
fn merge_hincrby(v: &mut Value, int: bool, inc: Scalar) -> bool {
    if (int && !inc.is_int()) || !inc.is_number() {
        return false;
    }
    if v.ty == 0 {
        v.ty = key_type::HASH_FIELD;
        *v.first() = inc;
        return true;
    }
    let current = v.first();
    if int {
        if !current.is_int() {
            return false;
        }
        *current = Scalar::Int(inc.get_int64().wrapping_add(current.get_int64()));
    } else {
        if !current.is_number() {
            return false;
        }
        *current = Scalar::Float(inc.get_float64() + current.get_float64());
    }
    true
}

/// `MergeSet` (`t_string.cpp`), called with ttl 0: only on no value or a
/// string; `SETNX` only on no value, `SETXX` only on a value. The `Data`
/// is stored as written.
fn merge_set(v: &mut Value, op: u16, data: Scalar) -> bool {
    if v.ty > 0 && v.ty != key_type::STRING {
        return false;
    }
    if (op == op::SETNX && v.ty != 0) || (op == op::SETXX && v.ty == 0) {
        return false;
    }
    v.ty = key_type::STRING;
    *v.first() = data;
    true
}

/// `MergeAppend` (`t_string.cpp`): the text of the value (an int or float
/// printed) followed by `append`, stored as a string.
fn merge_append(v: &mut Value, append: &[u8]) -> bool {
    if !v.becomes_string(|_| true) {
        return false;
    }
    let mut s = v.first().take_text();
    reserve_capped(&mut s, append.len());
    s.extend_from_slice(append);
    *v.first() = Scalar::Str(s);
    true
}

/// `MergeIncrBy` (`t_string.cpp`): a string value must be int-encoded; the
/// sum wraps (Ardb does not check overflow).
fn merge_incrby(v: &mut Value, inc: i64) -> bool {
    if !v.becomes_string(Scalar::is_int) {
        return false;
    }
    let current = v.first();
    *current = Scalar::Int(current.get_int64().wrapping_add(inc));
    true
}

/// `MergeIncrByFloat` (`t_string.cpp`): a string value must be an int or
/// a float; the result is a float.
fn merge_incrbyfloat(v: &mut Value, inc: f64) -> bool {
    if !v.becomes_string(Scalar::is_number) {
        return false;
    }
    let current = v.first();
    *current = Scalar::Float(current.get_float64() + inc);
    true
}

/// `MergeSetRange` (`t_string.cpp`): overwrite at `offset`, zero-filling up
/// to it. The type becomes string before the 512 MiB check, which is
/// computed on the unsigned sum. `None` where the sum wraps below the
/// limit (a negative offset): Ardb's `replace` would throw.
fn merge_setrange(v: &mut Value, offset: i64, range: &[u8]) -> Option<bool> {
    if !v.becomes_string(|_| true) {
        return Some(false);
    }
    let end = (offset as u64).wrapping_add(range.len() as u64);
    if end > MAX_STRING_LEN {
        return Some(false);
    }
    let start = usize::try_from(offset).ok()?;
    // end ≤ 512 MiB and start ≥ 0: both fit.
    let end = end as usize;
    let mut s = v.first().take_text();
    zero_extend(&mut s, end);
    s[start..end].copy_from_slice(range);
    *v.first() = Scalar::Str(s);
    Some(true)
}

/// `MergeSetBit` (`t_bitset.cpp`): the value as a byte string (an int or
/// float as its text), zero-padded to hold bit `offset`, bit set or
/// cleared (bit 0 is the high bit of the first byte). `None` for an offset
/// outside `0..2^32` that no `SETBIT` writes (Ardb would truncate it to a
/// C `int` byte index).
fn merge_setbit(v: &mut Value, offset: i64, on: bool) -> Option<bool> {
    if !v.becomes_string(|_| true) {
        return Some(false);
    }
    let byte = u64::try_from(offset).ok().map(|o| o >> 3)?;
    if byte >= MAX_STRING_LEN {
        return None;
    }
    // byte < 512 Mi.
    let byte = byte as usize;
    let data = v.first();
    // `ToMutableStr` (a number becomes its text), then
    // `ReserveStringSpace(byte + 1)` (a nil becomes zero bytes).
    let mut s = data.take_text();
    zero_extend(&mut s, byte + 1);
    let bit = 7 - (offset & 7) as u32;
    s[byte] = (s[byte] & !(1 << bit)) | (u8::from(on) << bit);
    *data = Scalar::Str(s);
    Some(true)
}

/// `s` zero-padded to at least `len` bytes (see [`reserve_capped`]).
fn zero_extend(s: &mut Vec<u8>, len: usize) {
    if s.len() < len {
        reserve_capped(s, len - s.len());
        s.resize(len, 0);
    }
}

/// Room for `additional` more bytes in a string value: doubling, as a
/// `Vec` grows, but never past [`MAX_STRING_LEN`] unless the bytes asked
/// for need it. A 400 MiB value grown by a few bytes then allocates
/// 512 MiB, not 800 MiB.
fn reserve_capped(s: &mut Vec<u8>, additional: usize) {
    let needed = s.len().saturating_add(additional);
    if needed <= s.capacity() {
        return;
    }
    let doubled = s.capacity().saturating_mul(2).min(MAX_STRING_LEN as usize);
    s.reserve_exact(needed.max(doubled) - s.len());
}

/// The HyperLogLog header length (`struct hllhdr`).
const HLL_HDR_SIZE: usize = 16;

/// A dense HyperLogLog's length: the header and 16384 6-bit registers.
const HLL_DENSE_SIZE: usize = HLL_HDR_SIZE + 16384 * 6 / 8;

/// `MergePFAdd` (`hyperloglog.cpp`) where it needs no HLL arithmetic:
/// - on a value whose text is not an HLL (`isHLLObjectOrReply`), the
///   operand is refused: `Some(false)`;
/// - with no elements, a missing value becomes an empty sparse HLL whose
///   cached cardinality is marked invalid (`Some(true)`), and an HLL is
///   left as it is (`Some(false)`).
///
/// `None` when elements would be added.
fn merge_pfadd(v: &mut Value, elements: usize) -> Option<bool> {
    if v.ty == 0 {
        if elements > 0 {
            return None;
        }
        // `createHLLObject`: "HYLL", sparse (1), then one XZERO opcode
        // covering all 16384 registers; `HLL_INVALIDATE_CACHE` sets the high
        // bit of the first cardinality byte.
        let mut hll = b"HYLL\x01\0\0\0".to_vec();
        hll.extend_from_slice(&[0x80, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff]);
        v.ty = key_type::STRING;
        *v.first() = Scalar::Str(hll);
        return Some(true);
    }
    let text = v.first().to_text();
    let is_hll = text.len() >= HLL_HDR_SIZE
        && text.starts_with(b"HYLL")
        && text[4] <= 1
        && (text[4] != 0 || text.len() == HLL_DENSE_SIZE);
    if !is_hll || elements == 0 {
        return Some(false);
    }
    None
}

/// `MergeExpire` (`keys.cpp`): any value but none gets `ttl` (ms), unless
/// it already has it.
fn merge_expire(v: &mut Value, ttl: i64) -> bool {
    if v.ty == 0 || v.ttl == ttl {
        return false;
    }
    v.ttl = ttl;
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{encode, meta_key};
    use crate::primitives::{zigzag, Data};
    use redcodec_testkit::{hex, unhex};

    fn str_(s: &str) -> Scalar {
        Scalar::Str(s.as_bytes().to_vec())
    }

    /// The merge of `operands` (hex) on `base` (hex; `None`: no base) under
    /// the META key `k`, as hex.
    fn merge_meta(base: Option<&str>, operands: &[&str]) -> Result<String, MergeError> {
        merge_at(&meta_key(b"k"), base, operands)
    }

    fn merge_at(key: &[u8], base: Option<&str>, operands: &[&str]) -> Result<String, MergeError> {
        let base = base.map(unhex);
        let ops: Vec<Vec<u8>> = operands.iter().map(|o| unhex(o)).collect();
        full_merge(key, base.as_deref(), &mut ops.iter().map(Vec::as_slice)).map(|v| hex(&v))
    }

    fn field_key() -> Vec<u8> {
        encode(b"h", key_type::HASH_FIELD, &[Data::Str(b"f")])
    }

    #[test]
    fn operand_bytes() {
        // The table of §14.1, from Ardb's encoding rules.
        let cases: [(u16, Vec<Scalar>, &str); 16] = [
            (op::APPEND, vec![str_("x")], "1e 64 00 01 04 01 78"),
            (op::INCR, vec![Scalar::Int(1)], "1e 6f 00 01 01 02"),
            (op::INCRBY, vec![Scalar::Int(5)], "1e 70 00 01 01 0a"),
            (op::DECRBY, vec![Scalar::Int(5)], "1e 6b 00 01 01 0a"),
            (
                op::INCRBYFLOAT,
                vec![Scalar::Float(1.5)],
                "1e 71 00 01 02 80 80 80 80 80 80 80 f8 7f",
            ),
            (op::SETNX, vec![str_("v")], "1e 78 00 01 04 01 76"),
            (op::SETXX, vec![str_("v")], "1e 7e 00 01 04 01 76"),
            (
                op::PEXPIREAT,
                vec![Scalar::Int(1_700_000_000_000)],
                "1e 37 00 01 01 80 a0 ab fe f9 62",
            ),
            (op::PEXPIREAT, vec![Scalar::Int(0)], "1e 37 00 01 01 00"),
            (
                op::SETRANGE,
                vec![Scalar::Int(2), str_("ab")],
                "1e 79 00 02 01 04 04 02 61 62",
            ),
            (
                op::SETBIT,
                vec![Scalar::Int(7), Scalar::Int(1)],
                "1e 76 00 02 01 0e 01 02",
            ),
            (
                op::PFADD,
                vec![str_("a"), str_("b")],
                "1e 7b 00 02 04 01 61 04 01 62",
            ),
            (op::HSETNX, vec![Scalar::Int(1)], "1e a1 00 01 01 02"),
            (op::HSETNX, vec![str_("v")], "1e a1 00 01 04 01 76"),
            (op::HINCR, vec![Scalar::Int(5)], "1e 9a 00 01 01 0a"),
            (op::INCR2, vec![Scalar::Int(1)], "1e ec 03 01 01 02"),
        ];
        for (op, args, want) in cases {
            assert_eq!(hex(&encode_operand(op, &args)), want, "op {op}");
        }
        assert_eq!(Scalar::try_int(b"12"), Scalar::Int(12));
        assert_eq!(Scalar::try_int(b"012"), str_("012"));
    }

    #[test]
    fn incr_family_folds_into_incrby() {
        let incr = "1e 6f 00 01 01 02"; // INCR
        let incrby5 = "1e 70 00 01 01 0a"; // INCRBY 5
        let decr = "1e 6a 00 01 01 02"; // DECR (its 1 is replaced by -1)
        let decrby5 = "1e 6b 00 01 01 0a"; // DECRBY 5
        let incr2 = "1e ec 03 01 01 02"; // incr2
                                         // No base: 1 + 5 - 1 - 5 + 1 = 1.
        assert_eq!(
            merge_meta(None, &[incr, incrby5, decr, decrby5, incr2]).unwrap(),
            "02 00 00 01 01 02"
        );
        // SET n 5 (int-encoded), then INCR: 6, the ttl kept.
        assert_eq!(
            merge_meta(Some("02 00 80 a0 ab fe f9 62 01 01 0a"), &[incr]).unwrap(),
            "02 00 80 a0 ab fe f9 62 01 01 0c"
        );
        // A string that is not int-encoded (or a float) is left alone: the
        // base comes back as stored, not re-encoded.
        for base in [
            "02 00 00 01 04 03 31 2e 35",
            "02 00 00 01 02 80 80 80 80 80 80 80 f8 7f",
            "03 00 00 01 00",
        ] {
            assert_eq!(merge_meta(Some(base), &[incrby5]).unwrap(), base);
        }
        // The sum wraps, as Ardb's int64 addition does.
        let max = hex(&encode_operand(op::INCRBY, &[Scalar::Int(i64::MAX)]));
        let min = hex(&Data::Int(i64::MIN).to_bytes());
        assert_eq!(
            merge_meta(None, &[&max, incr]).unwrap(),
            format!("02 00 00 01 {min}")
        );
        // DECRBY i64::MIN negates to itself.
        let decr_min = hex(&encode_operand(op::DECRBY, &[Scalar::Int(i64::MIN)]));
        assert_eq!(
            merge_meta(None, &[&decr_min]).unwrap(),
            format!("02 00 00 01 {min}")
        );
        // A string argument counts as 0 (GetInt64), and still applies.
        let by_text = hex(&encode_operand(op::INCRBY, &[str_("7")]));
        assert_eq!(merge_meta(None, &[&by_text]).unwrap(), "02 00 00 01 01 00");
    }

    #[test]
    fn incrbyfloat_writes_a_float64() {
        let by15 = "1e 71 00 01 02 80 80 80 80 80 80 80 f8 7f"; // INCRBYFLOAT 1.5
        let f3 = hex(&Data::Float(3.0).to_bytes());
        // No base: 1.5; twice: 3.0, still a float64 Data.
        assert_eq!(
            merge_meta(None, &[by15]).unwrap(),
            "02 00 00 01 02 80 80 80 80 80 80 80 f8 7f"
        );
        assert_eq!(
            merge_meta(None, &[by15, by15]).unwrap(),
            format!("02 00 00 01 {f3}")
        );
        // On an int: 2 + 1.5 = 3.5.
        let f35 = hex(&Data::Float(3.5).to_bytes());
        assert_eq!(
            merge_meta(Some("02 00 00 01 01 04"), &[by15]).unwrap(),
            format!("02 00 00 01 {f35}")
        );
        // On the text "1.5" (SET writes it as a string): ignored.
        assert_eq!(
            merge_meta(Some("02 00 00 01 04 03 31 2e 35"), &[by15]).unwrap(),
            "02 00 00 01 04 03 31 2e 35"
        );
        // incrbyfloat2 with an int argument: converted.
        let two = hex(&encode_operand(op::INCRBYFLOAT2, &[Scalar::Int(2)]));
        let f2 = hex(&Data::Float(2.0).to_bytes());
        assert_eq!(
            merge_meta(None, &[&two]).unwrap(),
            format!("02 00 00 01 {f2}")
        );
    }

    #[test]
    fn append_writes_text() {
        let x = "1e 64 00 01 04 01 78"; // APPEND x
        assert_eq!(merge_meta(None, &[x]).unwrap(), "02 00 00 01 04 01 78");
        // On an int: its decimal text, then the argument, as a string.
        assert_eq!(
            merge_meta(Some("02 00 00 01 01 f6 01"), &[x]).unwrap(),
            "02 00 00 01 04 04 31 32 33 78"
        );
        // APPEND "1" to nothing stays a string (no int encoding).
        let one = hex(&encode_operand(op::APPEND, &[str_("1")]));
        assert_eq!(merge_meta(None, &[&one]).unwrap(), "02 00 00 01 04 01 31");
        // On a float: lf2string's text (3.5), then the argument.
        let f35 = hex(&Data::Float(3.5).to_bytes());
        assert_eq!(
            merge_meta(Some(&format!("02 00 00 01 {f35}")), &[x]).unwrap(),
            "02 00 00 01 04 04 33 2e 35 78"
        );
        // On a hash: ignored. append2 is APPEND.
        assert_eq!(
            merge_meta(Some("03 00 00 01 00"), &[x]).unwrap(),
            "03 00 00 01 00"
        );
        let x2 = "1e e9 03 01 04 01 78";
        assert_eq!(
            merge_meta(None, &[x, x2]).unwrap(),
            "02 00 00 01 04 02 78 78"
        );
        // Then INCR on "xx" fails, the value stays.
        assert_eq!(
            merge_meta(None, &[x, "1e 6f 00 01 01 02"]).unwrap(),
            "02 00 00 01 04 01 78"
        );
    }

    #[test]
    fn set_nx_xx_psetex() {
        let nx = "1e 78 00 01 04 01 76"; // SETNX k v
        let xx = "1e 7e 00 01 04 01 77"; // SET k w XX
        let nx5 = hex(&encode_operand(op::SETNX, &[Scalar::Int(5)])); // SETNX k 5
        let psetex = hex(&encode_operand(
            op::PSETEX,
            &[str_("p"), Scalar::Int(1_700_000_000_000)],
        ));
        // No value: NX sets (int-encoded as written), XX does not.
        assert_eq!(merge_meta(None, &[&nx5]).unwrap(), "02 00 00 01 01 0a");
        assert_eq!(merge_meta(None, &[xx]).unwrap(), "");
        assert_eq!(merge_meta(None, &[nx, xx]).unwrap(), "02 00 00 01 04 01 77");
        // A value with a ttl: NX does nothing, XX replaces and keeps the ttl.
        let base = "02 00 80 a0 ab fe f9 62 01 04 01 61";
        assert_eq!(merge_meta(Some(base), &[nx]).unwrap(), base);
        assert_eq!(
            merge_meta(Some(base), &[xx]).unwrap(),
            "02 00 80 a0 ab fe f9 62 01 04 01 77"
        );
        // PSETEX sets whatever there is, ignoring its ms: the ttl stays.
        assert_eq!(
            merge_meta(Some(base), &[&psetex]).unwrap(),
            "02 00 80 a0 ab fe f9 62 01 04 01 70"
        );
        // Not on another type.
        assert_eq!(
            merge_meta(Some("05 00 00 02 01 02 01 00 01 00"), &[&psetex]).unwrap(),
            "05 00 00 02 01 02 01 00 01 00"
        );
        // set2 and setnx2.
        let set2 = hex(&encode_operand(op::SET2, &[str_("s")]));
        let setnx2 = hex(&encode_operand(op::SETNX2, &[str_("t")]));
        assert_eq!(
            merge_meta(Some(base), &[&set2, &setnx2]).unwrap(),
            "02 00 80 a0 ab fe f9 62 01 04 01 73"
        );
    }

    #[test]
    fn setrange() {
        let op2ab = "1e 79 00 02 01 04 04 02 61 62"; // SETRANGE 2 ab
                                                     // No value: zero-filled up to the offset.
        assert_eq!(
            merge_meta(None, &[op2ab]).unwrap(),
            "02 00 00 01 04 04 00 00 61 62"
        );
        // Overwrite inside "hello"; extend an int's text.
        assert_eq!(
            merge_meta(Some("02 00 00 01 04 05 68 65 6c 6c 6f"), &[op2ab]).unwrap(),
            "02 00 00 01 04 05 68 65 61 62 6f"
        );
        assert_eq!(
            merge_meta(Some("02 00 00 01 01 0e"), &[op2ab]).unwrap(),
            "02 00 00 01 04 04 37 00 61 62"
        );
        // Beyond 512 MiB: refused, but the type became string already, so a
        // later APPEND sees a string with no value Data.
        let huge = hex(&encode_operand(
            op::SETRANGE,
            &[Scalar::Int(MAX_STRING_LEN as i64), str_("a")],
        ));
        assert_eq!(merge_meta(None, &[&huge]).unwrap(), "");
        assert_eq!(
            merge_meta(None, &[&huge, "1e 64 00 01 04 01 78"]).unwrap(),
            "02 00 00 01 04 01 78"
        );
        // With only PEXPIREAT after it: a string holding no Data at all.
        assert_eq!(
            merge_meta(None, &[&huge, "1e 37 00 01 01 04"]).unwrap(),
            "02 00 04 00"
        );
        // A negative offset that wraps: Ardb would throw.
        let negative = hex(&encode_operand(op::SETRANGE, &[Scalar::Int(-1), str_("a")]));
        assert!(matches!(
            merge_meta(None, &[&negative]),
            Err(MergeError::Malformed { op: 121, .. })
        ));
        // A negative offset far enough not to wrap is only over the limit.
        let far = hex(&encode_operand(op::SETRANGE, &[Scalar::Int(-9), str_("a")]));
        assert_eq!(merge_meta(None, &[&far]).unwrap(), "");
    }

    #[test]
    fn a_string_value_grows_by_doubling_up_to_the_limit_only() {
        // Small values double, as a Vec does.
        let mut small = vec![0u8; 100];
        reserve_capped(&mut small, 1);
        assert_eq!(small.capacity(), 200);
        // A 448 MiB value grown by a byte: 512 MiB, not 896 MiB (the
        // fuzzer's find). Zeroed memory is mapped, not touched: cheap.
        let mut big = vec![0u8; 448 << 20];
        reserve_capped(&mut big, 1);
        assert_eq!(big.capacity(), MAX_STRING_LEN as usize);
        // Past the limit only as far as asked.
        let mut full = vec![0u8; MAX_STRING_LEN as usize];
        reserve_capped(&mut full, 3);
        assert_eq!(full.capacity(), MAX_STRING_LEN as usize + 3);
    }

    #[test]
    fn setbit() {
        let bit7 = "1e 76 00 02 01 0e 01 02"; // SETBIT 7 1
        assert_eq!(merge_meta(None, &[bit7]).unwrap(), "02 00 00 01 04 01 01");
        // Bit 0 is the high bit; the string grows with zero bytes.
        let bit8 = hex(&encode_operand(
            op::SETBIT,
            &[Scalar::Int(8), Scalar::Int(1)],
        ));
        assert_eq!(
            merge_meta(Some("02 00 00 01 04 01 61"), &[&bit8]).unwrap(),
            "02 00 00 01 04 02 61 80"
        );
        // Clearing bit 7 of "a" (0x61) gives "`" (0x60); an int is its text.
        let clear7 = hex(&encode_operand(
            op::SETBIT,
            &[Scalar::Int(7), Scalar::Int(0)],
        ));
        assert_eq!(
            merge_meta(Some("02 00 00 01 04 01 61"), &[&clear7]).unwrap(),
            "02 00 00 01 04 01 60"
        );
        assert_eq!(
            merge_meta(Some("02 00 00 01 01 02"), &[&clear7]).unwrap(),
            "02 00 00 01 04 01 30"
        );
        // The bit argument is masked to its lowest bit (3 sets, 2 clears).
        let three = hex(&encode_operand(
            op::SETBIT,
            &[Scalar::Int(0), Scalar::Int(3)],
        ));
        assert_eq!(merge_meta(None, &[&three]).unwrap(), "02 00 00 01 04 01 80");
        // Not on a hash; offsets no SETBIT writes are refused.
        assert_eq!(
            merge_meta(Some("03 00 00 01 00"), &[bit7]).unwrap(),
            "03 00 00 01 00"
        );
        for bad in [-1, 1i64 << 32] {
            let op = hex(&encode_operand(
                op::SETBIT2,
                &[Scalar::Int(bad), Scalar::Int(1)],
            ));
            assert!(matches!(
                merge_meta(None, &[&op]),
                Err(MergeError::Malformed { op: 1028, .. })
            ));
        }
    }

    #[test]
    fn pfadd_where_no_hll_arithmetic_is_needed() {
        let add = "1e 7b 00 02 04 01 61 04 01 62"; // PFADD a b
        let empty = hex(&encode_operand(op::PFADD, &[]));
        // Elements to add: refused.
        assert!(matches!(
            merge_meta(None, &[add]),
            Err(MergeError::Unsupported { op: 123, .. })
        ));
        // A value that is not an HLL: skipped, as Ardb does.
        assert_eq!(
            merge_meta(Some("02 00 00 01 04 01 61"), &[add]).unwrap(),
            "02 00 00 01 04 01 61"
        );
        assert_eq!(
            merge_meta(Some("03 00 00 01 00"), &[add]).unwrap(),
            "03 00 00 01 00"
        );
        // PFADD k with no element: a new empty sparse HLL, cache invalid.
        let hll = "48 59 4c 4c 01 00 00 00 80 00 00 00 00 00 00 00 7f ff";
        assert_eq!(
            merge_meta(None, &[&empty]).unwrap(),
            format!("02 00 00 01 04 12 {hll}")
        );
        // Adding nothing to an HLL changes nothing; adding to one is refused.
        let stored = format!("02 00 00 01 04 12 {hll}");
        assert_eq!(merge_meta(Some(&stored), &[&empty]).unwrap(), stored);
        assert!(merge_meta(Some(&stored), &[add]).is_err());
    }

    #[test]
    fn pexpireat_on_any_type() {
        let at = "1e 37 00 01 01 80 a0 ab fe f9 62"; // PEXPIREAT 1700000000000
        let persist = "1e 37 00 01 01 00";
        // No value: not performed, and nothing else applied: empty value.
        assert_eq!(merge_meta(None, &[at]).unwrap(), "");
        assert_eq!(
            merge_meta(Some("02 00 00 01 04 01 76"), &[at]).unwrap(),
            "02 00 80 a0 ab fe f9 62 01 04 01 76"
        );
        // A hash, a list, a set, a zset: only the ttl changes.
        for (base, want) in [
            ("03 00 00 01 00", "03 00 80 a0 ab fe f9 62 01 00"),
            (
                "05 00 00 02 01 02 01 00 01 00",
                "05 00 80 a0 ab fe f9 62 02 01 02 01 00 01 00",
            ),
            (
                "07 00 00 02 02 01 0a 01 0a",
                "07 00 80 a0 ab fe f9 62 02 02 01 0a 01 0a",
            ),
            (
                "09 00 00 02 02 04 01 6d 04 01 6d",
                "09 00 80 a0 ab fe f9 62 02 02 04 01 6d 04 01 6d",
            ),
        ] {
            assert_eq!(merge_meta(Some(base), &[at]).unwrap(), want);
        }
        // The same ttl: not performed, the base comes back as stored.
        let with_ttl = "02 00 80 a0 ab fe f9 62 01 04 01 76";
        assert_eq!(merge_meta(Some(with_ttl), &[at]).unwrap(), with_ttl);
        // PERSIST clears it; an expired value is revived.
        assert_eq!(
            merge_meta(Some(with_ttl), &[persist]).unwrap(),
            "02 00 00 01 04 01 76"
        );
        // A stream meta keeps its last id (16 bytes, big-endian).
        let stream = format!(
            "0c 00 00 02 04 10 {} {} 00",
            "00 00 00 00 00 00 00 07", "00 00 00 00 00 00 00 01"
        );
        let want = format!(
            "0c 00 80 a0 ab fe f9 62 02 04 10 {} {} 00",
            "00 00 00 00 00 00 00 07", "00 00 00 00 00 00 00 01"
        );
        assert_eq!(merge_meta(Some(&stream), &[at]).unwrap(), want);
        // PEXPIREAT2 (1024) is no merge op: skipped.
        let at2 = hex(&encode_operand(1024, &[Scalar::Int(5)]));
        assert_eq!(
            merge_meta(Some("03 00 00 01 00"), &[&at2]).unwrap(),
            "03 00 00 01 00"
        );
    }

    #[test]
    fn hsetnx_on_meta_and_field() {
        let meta_op = "1e a1 00 01 01 02"; // HSETNX's META operand (size 1)
        let field_op = "1e a1 00 01 04 01 76"; // HSETNX h f v
                                               // META: no value → a hash of size 1; a hash of known size → −1.
        assert_eq!(merge_meta(None, &[meta_op]).unwrap(), "03 00 00 02 00");
        assert_eq!(
            merge_meta(Some("03 00 00 06 00"), &[meta_op]).unwrap(),
            "03 00 00 01 00"
        );
        // Already −1, or not a hash: not performed.
        assert_eq!(
            merge_meta(Some("03 00 00 01 00"), &[meta_op]).unwrap(),
            "03 00 00 01 00"
        );
        assert_eq!(
            merge_meta(Some("02 00 00 01 04 01 76"), &[meta_op]).unwrap(),
            "02 00 00 01 04 01 76"
        );
        // Field: set when missing, left when present (whatever its value).
        let key = field_key();
        assert_eq!(merge_at(&key, None, &[field_op]).unwrap(), "04 01 04 01 76");
        assert_eq!(
            merge_at(&key, Some("04 01 04 01 77"), &[field_op]).unwrap(),
            "04 01 04 01 77"
        );
        // hsetnx2 is HSETNX.
        let nx2 = hex(&encode_operand(op::HSETNX2, &[Scalar::Int(9)]));
        assert_eq!(merge_at(&key, None, &[&nx2]).unwrap(), "04 01 01 12");
    }

    #[test]
    fn hset_replaces_a_different_field_value() {
        let key = field_key();
        let hset = hex(&encode_operand(op::HSET, &[Scalar::Int(5)]));
        assert_eq!(
            merge_at(&key, Some("04 01 04 01 77"), &[&hset]).unwrap(),
            "04 01 01 0a"
        );
        // Equal under Data::Compare (5 == 5.0): not performed.
        let five = hex(&Data::Float(5.0).to_bytes());
        let base = format!("04 01 {five}");
        assert_eq!(merge_at(&key, Some(&base), &[&hset]).unwrap(), base);
        // On the META key: no value → a hash whose size is the argument.
        assert_eq!(merge_meta(None, &[&hset]).unwrap(), "03 00 00 0a 00");
        let hset_str = hex(&encode_operand(op::HSET2, &[str_("x")]));
        assert_eq!(merge_meta(None, &[&hset_str]).unwrap(), "03 00 00 01 00");
    }

    #[test]
    fn hincrby_and_hincrbyfloat_on_fields() {
        let key = field_key();
        let by5 = "1e 9a 00 01 01 0a"; // HINCRBY h f 5
        let byf = hex(&encode_operand(op::HINCRBYFLOAT, &[Scalar::Float(0.5)]));
        assert_eq!(merge_at(&key, None, &[by5]).unwrap(), "04 01 01 0a");
        assert_eq!(merge_at(&key, None, &[by5, by5]).unwrap(), "04 01 01 14");
        // HSET wrote "10" int-encoded: 15.
        assert_eq!(
            merge_at(&key, Some("04 01 01 14"), &[by5]).unwrap(),
            "04 01 01 1e"
        );
        // A field holding text: HINCRBY ignored; HINCRBYFLOAT too.
        assert_eq!(
            merge_at(&key, Some("04 01 04 01 76"), &[by5, &byf]).unwrap(),
            "04 01 04 01 76"
        );
        // HINCRBYFLOAT on an int field: a float sum.
        let f105 = hex(&Data::Float(10.5).to_bytes());
        assert_eq!(
            merge_at(&key, Some("04 01 01 14"), &[&byf]).unwrap(),
            format!("04 01 {f105}")
        );
        // Then HINCRBY on the float: ignored.
        assert_eq!(
            merge_at(&key, Some("04 01 01 14"), &[&byf, by5]).unwrap(),
            format!("04 01 {f105}")
        );
        // An HINCRBY whose argument is not an int is refused by the handler.
        let bad = hex(&encode_operand(op::HINCR2, &[str_("1")]));
        assert_eq!(merge_at(&key, None, &[&bad]).unwrap(), "");
        // hincrbyfloat2 with an int argument: a number, stored as given.
        let int_arg = hex(&encode_operand(op::HINCRBYFLOAT2, &[Scalar::Int(2)]));
        assert_eq!(merge_at(&key, None, &[&int_arg]).unwrap(), "04 01 01 04");
    }

    #[test]
    fn bad_operands_are_skipped_and_bad_bases_fail() {
        let incr = "1e 6f 00 01 01 02";
        // Empty, truncated or unknown operands are skipped.
        for junk in [
            "",
            "1e",
            "1e 6f",
            "1e 6f 00 01",
            "1e 6f 00 01 09",
            "1e 39 05 01 01 02",
        ] {
            assert_eq!(
                merge_meta(None, &[junk, incr]).unwrap(),
                "02 00 00 01 01 02",
                "{junk}"
            );
        }
        // A value that is not an operand has op 0: skipped.
        assert_eq!(merge_meta(None, &["02 00 00 01 01 02"]).unwrap(), "");
        // Nothing applied and no base: the empty value. An empty base is
        // no base.
        assert_eq!(merge_meta(None, &[]).unwrap(), "");
        assert_eq!(merge_meta(Some(""), &[incr]).unwrap(), "02 00 00 01 01 02");
        // An undecodable base fails the merge.
        for base in ["02", "02 00", "02 00 00 01 04 05 61", "02 00 00 01 07"] {
            assert_eq!(
                merge_meta(Some(base), &[incr]),
                Err(MergeError::UndecodableBase),
                "{base}"
            );
        }
        // Missing arguments: refused.
        for op in [op::INCR, op::DECR, op::APPEND, op::PEXPIREAT, op::HSETNX] {
            let bare = hex(&encode_operand(op, &[]));
            assert!(matches!(
                merge_meta(None, &[&bare]),
                Err(MergeError::Malformed { .. })
            ));
        }
        let one = hex(&encode_operand(op::SETRANGE, &[Scalar::Int(0)]));
        assert!(merge_meta(None, &[&one]).is_err());
    }

    #[test]
    fn re_encoding_follows_ardb() {
        // A changed value is re-encoded: tag 3 strings become tag 4,
        // non-minimal varints minimal, trailing bytes dropped, any format
        // byte kept.
        assert_eq!(
            merge_meta(
                Some("02 07 80 00 01 03 01 61 ff"),
                &["1e 64 00 01 04 01 62"]
            )
            .unwrap(),
            "02 07 00 01 04 02 61 62"
        );
        // A list's sequential byte is read as a bool.
        assert_eq!(
            merge_meta(Some("05 00 00 02 05 00"), &["1e 37 00 01 01 02"]).unwrap(),
            "05 00 02 02 01 00"
        );
        // An element value under a META key gets its ttl set but not
        // written (types without meta carry none).
        assert_eq!(
            merge_meta(Some("04 01 04 01 76"), &["1e 37 00 01 01 02"]).unwrap(),
            "04 01 04 01 76"
        );
        // An undecodable key is no META key: HSETNX sets a field.
        assert_eq!(
            merge_at(b"", None, &["1e a1 00 01 01 02"]).unwrap(),
            "04 01 01 02"
        );
    }

    #[test]
    fn stream_ids_follow_stream_id_decode() {
        assert_eq!(stream_id(&Scalar::Nil), Some((0, 0)));
        assert_eq!(stream_id(&str_("short")), Some((0, 0)));
        assert_eq!(stream_id(&Scalar::Int(123_456_789_012_345)), Some((0, 0)));
        assert_eq!(stream_id(&Scalar::Int(1_234_567_890_123_456)), None);
        assert_eq!(stream_id(&Scalar::Int(-123_456_789_012_345)), None);
        let mut id = vec![0u8; 17];
        id[7] = 2;
        id[15] = 3;
        assert_eq!(stream_id(&Scalar::Str(id)), Some((2, 3)));
        assert_eq!(digits10(i64::MIN), 20);
        assert_eq!(digits10(0), 1);
        assert_eq!(digits10(-10), 3);
    }

    #[test]
    fn lenient_varints() {
        // Ten bytes at most; bits past 64 are dropped; a varuint32 keeps
        // the low 32 bits.
        let mut r = Lenient::new(&[0xff; 11]);
        assert_eq!(r.varuint64(), None);
        let mut r = Lenient::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
        assert_eq!(r.varuint64(), Some(u64::MAX));
        let mut r = Lenient::new(&[0x80, 0x80, 0x80, 0x80, 0x10]);
        assert_eq!(r.varuint32(), Some(0));
        assert_eq!(zigzag(-1), 1);
    }

    #[test]
    fn the_operator_spec() {
        assert_eq!(SPEC.name, "ardb.merger");
        let ops = [unhex("1e 6f 00 01 01 02")];
        let key = meta_key(b"k");
        assert_eq!(
            (SPEC.full_merge)(&key, None, &mut ops.iter().map(Vec::as_slice)),
            Some(unhex("02 00 00 01 01 02"))
        );
        assert_eq!(
            (SPEC.full_merge)(&key, Some(&[0x02]), &mut ops.iter().map(Vec::as_slice)),
            None
        );
    }
}
