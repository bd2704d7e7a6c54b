//! `bit`: LuaBitOp 1.0.2 — 32-bit operations on Lua numbers.
//!
//! An argument becomes 32 bits as LuaBitOp converts it: the double plus
//! 2^52 + 2^51, whose low 32 bits are the number rounded to an integer
//! modulo 2^32. Results are signed 32-bit numbers.

use mlua::{Lua, Table, Value};

use crate::cfunction::{function, results, Args, Outcome};
use crate::failure::Failure;

/// A function of the library.
type BitFunction = fn(&Lua, &Args) -> Outcome;

/// The `bit` module table.
pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    let functions: [(&str, BitFunction); 12] = [
        ("tobit", tobit),
        ("bnot", bnot),
        ("band", band),
        ("bor", bor),
        ("bxor", bxor),
        ("lshift", lshift),
        ("rshift", rshift),
        ("arshift", arshift),
        ("rol", rol),
        ("ror", ror),
        ("bswap", bswap),
        ("tohex", tohex),
    ];
    for (name, f) in functions {
        table.raw_set(name, function(lua, f)?)?;
    }
    Ok(table)
}

/// Argument `n` as 32 bits (`barg`).
fn bits(lua: &Lua, args: &Args, n: usize) -> Result<u32, Failure> {
    let d = args.to_number(lua, n).unwrap_or(0.0);
    let b = (d + 6_755_399_441_055_744.0).to_bits() as u32;
    if b == 0 && args.to_number(lua, n).is_none() {
        return Err(args.type_error(n, "number"));
    }
    Ok(b)
}

/// A result: the 32 bits as a signed number.
fn ret(b: u32) -> Outcome {
    results([Value::Number(f64::from(b as i32))])
}

fn tobit(lua: &Lua, args: &Args) -> Outcome {
    ret(bits(lua, args, 1)?)
}

fn bnot(lua: &Lua, args: &Args) -> Outcome {
    ret(!bits(lua, args, 1)?)
}

/// `op` over all arguments; the first is converted first, then the
/// others from the last down, as LuaBitOp does.
fn fold(lua: &Lua, args: &Args, op: fn(u32, u32) -> u32) -> Outcome {
    let mut b = bits(lua, args, 1)?;
    for n in (2..=args.count()).rev() {
        b = op(b, bits(lua, args, n)?);
    }
    ret(b)
}

fn band(lua: &Lua, args: &Args) -> Outcome {
    fold(lua, args, |a, b| a & b)
}

fn bor(lua: &Lua, args: &Args) -> Outcome {
    fold(lua, args, |a, b| a | b)
}

fn bxor(lua: &Lua, args: &Args) -> Outcome {
    fold(lua, args, |a, b| a ^ b)
}

/// `op(value, count & 31)`.
fn shift(lua: &Lua, args: &Args, op: fn(u32, u32) -> u32) -> Outcome {
    let b = bits(lua, args, 1)?;
    let n = bits(lua, args, 2)? & 31;
    ret(op(b, n))
}

fn lshift(lua: &Lua, args: &Args) -> Outcome {
    shift(lua, args, |b, n| b << n)
}

fn rshift(lua: &Lua, args: &Args) -> Outcome {
    shift(lua, args, |b, n| b >> n)
}

fn arshift(lua: &Lua, args: &Args) -> Outcome {
    shift(lua, args, |b, n| ((b as i32) >> n) as u32)
}

fn rol(lua: &Lua, args: &Args) -> Outcome {
    shift(lua, args, u32::rotate_left)
}

fn ror(lua: &Lua, args: &Args) -> Outcome {
    shift(lua, args, u32::rotate_right)
}

fn bswap(lua: &Lua, args: &Args) -> Outcome {
    ret(bits(lua, args, 1)?.swap_bytes())
}

/// `bit.tohex(x[, n])`: the low `n` hex digits of `x` (8 by default;
/// upper case for negative `n`; at most 8).
fn tohex(lua: &Lua, args: &Args) -> Outcome {
    let mut b = bits(lua, args, 1)?;
    let mut n = if args.get(2).is_none() {
        8
    } else {
        bits(lua, args, 2)? as i32
    };
    let digits: &[u8; 16] = if n < 0 {
        n = n.wrapping_neg();
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    // n is still negative only for -2^31 (its negation overflows): Redis'
    // build treats it as more than 8 digits, so it gives 8 (upper case):
    // `bit.tohex(65535, -2147483648)` is "0000FFFF" (its TCL suite's "lua
    // bit.tohex bug" test).
    let n = if n < 0 {
        8
    } else {
        usize::try_from(n.min(8)).unwrap_or(0)
    };
    let mut out = vec![0u8; n];
    for slot in out.iter_mut().rev() {
        *slot = digits[(b & 15) as usize];
        b >>= 4;
    }
    let hex = lua
        .create_string(out)
        .map_err(|e| Failure::error(e.to_string()))?;
    results([Value::String(hex)])
}

#[cfg(test)]
mod tests {
    use crate::test_support::{error, text};

    #[test]
    fn thirty_two_bit_operations() {
        let cases = [
            ("bit.tobit(0xffffffff)", "-1"),
            ("bit.tobit(2^32 + 5)", "5"),
            ("bit.tobit(2.5)", "2"),
            ("bit.tobit(3.5)", "4"),
            ("bit.bnot(0)", "-1"),
            ("bit.band(0xff, 0x0f, 0x3c)", "12"),
            ("bit.bor(1, 2, 4)", "7"),
            ("bit.bxor(0xff, 0x0f)", "240"),
            ("bit.lshift(1, 31)", "-2147483648"),
            ("bit.lshift(1, 33)", "2"),
            ("bit.rshift(-1, 28)", "15"),
            ("bit.arshift(-256, 4)", "-16"),
            ("bit.rol(0x12345678, 8)", "878082066"),
            ("bit.ror(0x12345678, 8)", "2014458966"),
            ("bit.bswap(0x12345678)", "2018915346"),
            ("bit.tohex(bit.bnot(0))", "ffffffff"),
            ("bit.tohex(255, -4)", "00FF"),
            ("bit.tohex(0x1234, 2)", "34"),
            ("bit.tobit('0x10')", "16"),
        ];
        for (call, want) in cases {
            assert_eq!(text(&format!("return {call}")), want, "{call}");
        }
    }

    #[test]
    fn arguments_must_be_numbers() {
        assert_eq!(
            error("bit.tobit()"),
            "t:1: bad argument #1 to 'tobit' (number expected, got no value)"
        );
        assert_eq!(
            error("bit.band(1, 'x')"),
            "t:1: bad argument #2 to 'band' (number expected, got string)"
        );
    }
}
