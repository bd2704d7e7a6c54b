//! BITFIELD and BITFIELD_RO: integers of 1 to 64 bits at any bit offset
//! of a string, read, written and incremented as Redis 7.0's
//! `bitfieldGeneric` does (`src/bitops.c`): every operation is parsed
//! before any runs, the string grows once to the farthest bit a write
//! reaches, and each overflow is wrapped, saturated or refused as the
//! `OVERFLOW` in force says.

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType};

use crate::cmd::args::is;
use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::Ctx;
use crate::number::{int_arg, parse_i64};
use crate::reply::Reply;

use super::strings::{rewrite, write};

/// What an operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// GET: the field's value.
    Get,
    /// SET `value`: replies with the old value.
    Set(i64),
    /// INCRBY `increment`: replies with the new value.
    IncrBy(i64),
}

/// What a write does when the result does not fit its field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Overflow {
    /// Keeps the low bits (the default).
    Wrap,
    /// Stops at the field's smallest or largest value.
    Sat,
    /// Writes nothing and replies nil.
    Fail,
}

/// An integer field: signed (`i1`…`i64`) or unsigned (`u1`…`u63`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field {
    signed: bool,
    bits: u32,
}

/// One parsed operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Op {
    action: Action,
    field: Field,
    /// The field's first bit (bit 0: the most significant of byte 0).
    offset: u64,
    overflow: Overflow,
}

const TYPE_ERROR: &str =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
const OFFSET_ERROR: &str = "ERR bit offset is not an integer or out of range";

/// `getBitfieldTypeFromArgument`: `i` or `u` (lower case only), then the
/// width.
fn field(arg: &[u8]) -> CmdResult<Field> {
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(CmdError::other(TYPE_ERROR)),
    };
    let max = if signed { 64 } else { 63 };
    match parse_i64(&arg[1..]) {
        Some(bits) if (1..=max).contains(&bits) => Ok(Field {
            signed,
            bits: bits as u32,
        }),
        _ => Err(CmdError::other(TYPE_ERROR)),
    }
}

/// `getBitOffsetFromArgument` with `#n`: the n-th field of this width.
/// Offsets are limited as SETBIT's are (the last byte below
/// `proto-max-bulk-len`).
fn offset<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, arg: &[u8], bits: u32) -> CmdResult<u64> {
    let (digits, scale) = match arg.strip_prefix(b"#") {
        Some(rest) => (rest, i64::from(bits)),
        None => (arg, 1),
    };
    let n = parse_i64(digits)
        .map(|n| n.wrapping_mul(scale))
        .ok_or_else(|| CmdError::other(OFFSET_ERROR))?;
    u64::try_from(n)
        .ok()
        .filter(|&n| n >> 3 < ctx.engine().max_bulk_len())
        .ok_or_else(|| CmdError::other(OFFSET_ERROR))
}

/// Every operation of `a[2..]`, in order, or the first argument's error.
fn parse<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Vec<Op>> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < a.len() {
        let rest = a.len() - j - 1;
        let word = a[j];
        let wants_value = if is(word, "get") && rest >= 2 {
            false
        } else if (is(word, "set") || is(word, "incrby")) && rest >= 3 {
            true
        } else if is(word, "overflow") && rest >= 1 {
            let kind = a[j + 1];
            overflow = if is(kind, "wrap") {
                Overflow::Wrap
            } else if is(kind, "sat") {
                Overflow::Sat
            } else if is(kind, "fail") {
                Overflow::Fail
            } else {
                return Err(CmdError::other("ERR Invalid OVERFLOW type specified"));
            };
            j += 2;
            continue;
        } else {
            return Err(CmdError::Syntax);
        };
        let field = field(a[j + 1])?;
        let offset = offset(ctx, a[j + 2], field.bits)?;
        let action = if !wants_value {
            Action::Get
        } else if is(word, "set") {
            Action::Set(int_arg(a[j + 3])?)
        } else {
            Action::IncrBy(int_arg(a[j + 3])?)
        };
        ops.push(Op {
            action,
            field,
            offset,
            overflow,
        });
        j += if wants_value { 4 } else { 3 };
    }
    Ok(ops)
}

/// BITFIELD `key [GET type offset | SET type offset value | INCRBY type
/// offset increment | OVERFLOW WRAP|SAT|FAIL] …`.
pub fn bitfield<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    run(ctx, a, false)
}

/// BITFIELD_RO `key [GET type offset] …`: GET only.
pub fn bitfield_ro<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    run(ctx, a, true)
}

fn run<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    read_only: bool,
) -> CmdResult<Reply> {
    let ops = parse(ctx, a)?;
    let last_written_bit = ops
        .iter()
        .filter(|op| op.action != Action::Get)
        .map(|op| op.offset + u64::from(op.field.bits) - 1)
        .max();
    let Some(last_bit) = last_written_bit else {
        // Only reads: a missing key reads as zeros and is not created.
        ctx.leave_unchanged(a[1]);
        let value = ctx
            .typed(a[1], DataType::String)?
            .map(|m| m.value)
            .unwrap_or_default();
        let replies = ops
            .iter()
            .map(|op| Reply::Integer(read(&value, op.offset, op.field)))
            .collect();
        return Ok(Reply::Array(replies));
    };
    if read_only {
        return Err(CmdError::other(
            "ERR BITFIELD_RO only supports the GET subcommand",
        ));
    }
    let view = ctx.view(a[1])?;
    let live = match &view.live {
        Some(m) if m.data_type != DataType::String => return Err(CmdError::WrongType),
        other => other.clone(),
    };
    let mut value = live.as_ref().map(|m| m.value.clone()).unwrap_or_default();
    // `lookupStringForBitCommand`: created, or grown with zero bytes, to
    // the last bit written; either counts as a change.
    let needed = usize::try_from(last_bit >> 3).map_or(usize::MAX, |b| b + 1);
    let dirty = live.is_none() || value.len() < needed;
    // Whether an operation wrote (`changes` in Redis: `setbit` is
    // announced for those only).
    let mut wrote = false;
    if value.len() < needed {
        value.resize(needed, 0);
    }
    let mut replies = Vec::with_capacity(ops.len());
    for op in &ops {
        let reply = match op.action {
            Action::Get => Some(read(&value, op.offset, op.field)),
            Action::Set(_) | Action::IncrBy(_) => {
                let old = read(&value, op.offset, op.field);
                apply(op, old).map(|(new, reply)| {
                    wrote |= dirty || new != old;
                    store(&mut value, op.offset, op.field.bits, new as u64);
                    reply
                })
            }
        };
        replies.push(reply.map_or(Reply::Nil, Reply::Integer));
    }
    let changed = dirty || wrote;
    match live {
        _ if !changed => ctx.leave_unchanged(a[1]),
        Some(m) => rewrite(ctx, a[1], m, value)?,
        None => write(ctx, a[1], &view, &value, 0)?,
    }
    if wrote {
        ctx.notify(Class::STRING, "setbit", a[1]);
    }
    Ok(Reply::Array(replies))
}

/// A write's new value and its reply (`None`: refused by `OVERFLOW
/// FAIL`). Values are carried as `i64`; an unsigned field's fit below
/// 2^63.
fn apply(op: &Op, old: i64) -> Option<(i64, i64)> {
    let Field { signed, bits } = op.field;
    let (base, incr) = match op.action {
        Action::IncrBy(by) => (old, by),
        Action::Set(v) => (v, 0),
        Action::Get => unreachable!("reads are not applied"),
    };
    let checked = if signed {
        signed_overflow(base, incr, bits, op.overflow)
    } else {
        unsigned_overflow(base as u64, incr, bits, op.overflow).map(|c| c.map(|l| l as i64))
    };
    let new = match checked {
        Some(Checked::Fits) => base.wrapping_add(incr),
        Some(Checked::Limited(limit)) => limit,
        None => return None,
    };
    let reply = match op.action {
        Action::IncrBy(_) => new,
        _ => old,
    };
    Some((new, reply))
}

/// The outcome of an overflow check that did not refuse the write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Checked<T> {
    /// `value + incr` fits the field.
    Fits,
    /// It did not: the wrapped or saturated value.
    Limited(T),
}

impl<T> Checked<T> {
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Checked<U> {
        match self {
            Checked::Fits => Checked::Fits,
            Checked::Limited(t) => Checked::Limited(f(t)),
        }
    }
}

/// `checkUnsignedBitfieldOverflow`: `None` when `OVERFLOW FAIL` refuses.
fn unsigned_overflow(value: u64, incr: i64, bits: u32, overflow: Overflow) -> Option<Checked<u64>> {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = value.wrapping_neg() as i64;
    let saturated = if value > max || (incr > 0 && incr > max_incr) {
        max
    } else if incr < 0 && incr < min_incr {
        0
    } else {
        return Some(Checked::Fits);
    };
    match overflow {
        Overflow::Wrap => {
            let mask = u64::MAX.checked_shl(bits).unwrap_or(0);
            Some(Checked::Limited(value.wrapping_add(incr as u64) & !mask))
        }
        Overflow::Sat => Some(Checked::Limited(saturated)),
        Overflow::Fail => None,
    }
}

/// `checkSignedBitfieldOverflow`: `None` when `OVERFLOW FAIL` refuses.
fn signed_overflow(value: i64, incr: i64, bits: u32, overflow: Overflow) -> Option<Checked<i64>> {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let narrow = bits != 64;
    let saturated = if value > max
        || (narrow && incr > max_incr)
        || (value >= 0 && incr > 0 && incr > max_incr)
    {
        max
    } else if value < min
        || (narrow && incr < min_incr)
        || (value < 0 && incr < 0 && incr < min_incr)
    {
        min
    } else {
        return Some(Checked::Fits);
    };
    match overflow {
        Overflow::Wrap => {
            let mut c = (value as u64).wrapping_add(incr as u64);
            if narrow {
                let mask = u64::MAX << bits;
                if c & (1u64 << (bits - 1)) != 0 {
                    c |= mask;
                } else {
                    c &= !mask;
                }
            }
            Some(Checked::Limited(c as i64))
        }
        Overflow::Sat => Some(Checked::Limited(saturated)),
        Overflow::Fail => None,
    }
}

/// The field at `offset`, bits past the end of `value` reading as 0;
/// signed fields sign-extended.
fn read(value: &[u8], offset: u64, field: Field) -> i64 {
    let mut raw = 0u64;
    for bit in offset..offset + u64::from(field.bits) {
        let byte = usize::try_from(bit >> 3)
            .ok()
            .and_then(|i| value.get(i))
            .copied()
            .unwrap_or(0);
        raw = (raw << 1) | u64::from((byte >> (7 - (bit & 7))) & 1);
    }
    let bits = field.bits;
    if field.signed && bits < 64 && raw & (1u64 << (bits - 1)) != 0 {
        raw |= u64::MAX << bits;
    }
    raw as i64
}

/// Writes the low `bits` of `raw` at `offset` (inside `value`).
fn store(value: &mut [u8], offset: u64, bits: u32, raw: u64) {
    for j in 0..u64::from(bits) {
        let bit = offset + j;
        let on = raw & (1u64 << (u64::from(bits) - 1 - j)) != 0;
        let mask = 1u8 << (7 - (bit & 7));
        let byte = &mut value[(bit >> 3) as usize];
        if on {
            *byte |= mask;
        } else {
            *byte &= !mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U8: Field = Field {
        signed: false,
        bits: 8,
    };
    const I8: Field = Field {
        signed: true,
        bits: 8,
    };

    #[test]
    fn fields_read_across_byte_boundaries_and_past_the_end() {
        let value = [0b1010_1010, 0b1111_0000];
        assert_eq!(read(&value, 0, U8), 0b1010_1010);
        assert_eq!(read(&value, 4, U8), 0b1010_1111);
        assert_eq!(read(&value, 12, U8), 0);
        assert_eq!(read(&value, 4, I8), i64::from(0b1010_1111u8 as i8));
        let i64_field = Field {
            signed: true,
            bits: 64,
        };
        assert_eq!(read(&[0xff; 8], 0, i64_field), -1);
    }

    #[test]
    fn a_stored_field_reads_back() {
        let mut value = [0u8; 3];
        store(&mut value, 5, 8, 0xa5);
        assert_eq!(read(&value, 5, U8), 0xa5);
        assert_eq!(value, [0b0000_0101, 0b0010_1000, 0]);
    }

    #[test]
    fn unsigned_overflow_wraps_saturates_or_fails() {
        assert_eq!(
            unsigned_overflow(250, 10, 8, Overflow::Wrap),
            Some(Checked::Limited(4))
        );
        assert_eq!(
            unsigned_overflow(250, 10, 8, Overflow::Sat),
            Some(Checked::Limited(255))
        );
        assert_eq!(unsigned_overflow(250, 10, 8, Overflow::Fail), None);
        assert_eq!(
            unsigned_overflow(5, -10, 8, Overflow::Sat),
            Some(Checked::Limited(0))
        );
        assert_eq!(
            unsigned_overflow(5, -10, 8, Overflow::Wrap),
            Some(Checked::Limited(251))
        );
        assert_eq!(
            unsigned_overflow(5, 250, 8, Overflow::Fail),
            Some(Checked::Fits)
        );
    }

    #[test]
    fn signed_overflow_wraps_saturates_or_fails() {
        assert_eq!(
            signed_overflow(120, 10, 8, Overflow::Wrap),
            Some(Checked::Limited(-126))
        );
        assert_eq!(
            signed_overflow(120, 10, 8, Overflow::Sat),
            Some(Checked::Limited(127))
        );
        assert_eq!(
            signed_overflow(-120, -10, 8, Overflow::Sat),
            Some(Checked::Limited(-128))
        );
        assert_eq!(signed_overflow(-120, -10, 8, Overflow::Fail), None);
        assert_eq!(
            signed_overflow(i64::MAX, 1, 64, Overflow::Wrap),
            Some(Checked::Limited(i64::MIN))
        );
        assert_eq!(
            signed_overflow(i64::MAX, 1, 64, Overflow::Sat),
            Some(Checked::Limited(i64::MAX))
        );
        assert_eq!(
            signed_overflow(-5, 5, 64, Overflow::Fail),
            Some(Checked::Fits)
        );
    }

    #[test]
    fn types_are_lower_case_letters_and_a_width() {
        assert_eq!(
            field(b"i64").unwrap(),
            Field {
                signed: true,
                bits: 64
            }
        );
        assert_eq!(
            field(b"u63").unwrap(),
            Field {
                signed: false,
                bits: 63
            }
        );
        for bad in [&b"u64"[..], b"i65", b"i0", b"U8", b"i", b"", b"i+8", b"u08"] {
            assert!(field(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
