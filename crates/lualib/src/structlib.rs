//! `struct`: Roberto Ierusalimschy's library packing Lua values into
//! binary strings, as Redis 7.0 builds it on x86-64 Linux (native order
//! little-endian, `long` and `size_t` 8 bytes, default maximum
//! alignment 8).
//!
//! Format options: `>` big-endian, `<` little-endian, `![n]` maximum
//! alignment, `x` a padding byte, `b`/`B` char, `h`/`H` short, `l`/`L`
//! long, `T` size_t, `i[n]`/`I[n]` int of n bytes, `s` zero-terminated
//! string, `f` float, `d` double, `c[n]` fixed-size string, ` ` ignored.

use mlua::{Lua, Table, Value};

use crate::cfunction::{c_i64, function, results, Args, Outcome, Results};
use crate::failure::Failure;
use crate::luastack::{LuaStack, LUAI_MAXCSTACK};

/// Largest `i`/`I` size.
const MAXINTSIZE: usize = 32;
/// Default alignment of `!`.
const MAXALIGN: usize = 8;

/// The `struct` module table.
pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    table.raw_set("pack", function(lua, pack)?)?;
    table.raw_set("unpack", function(lua, unpack)?)?;
    table.raw_set("size", function(lua, size)?)?;
    Ok(table)
}

/// Byte order and alignment in force.
struct Header {
    little: bool,
    align: usize,
}

impl Default for Header {
    fn default() -> Header {
        Header {
            little: true,
            align: 1,
        }
    }
}

/// A format string read option by option (up to a NUL, as C reads it).
struct Format<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Format<'_> {
    fn new(bytes: &[u8]) -> Format<'_> {
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Format {
            bytes: &bytes[..end],
            pos: 0,
        }
    }

    fn next_option(&mut self) -> Option<u8> {
        let opt = *self.bytes.get(self.pos)?;
        self.pos += 1;
        Some(opt)
    }

    /// A decimal count, or `default` when none follows.
    fn number(&mut self, default: usize) -> Result<usize, Failure> {
        if !self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
            return Ok(default);
        }
        let mut a: i32 = 0;
        while let Some(&d) = self.bytes.get(self.pos).filter(|b| b.is_ascii_digit()) {
            let d = i32::from(d - b'0');
            if a > i32::MAX / 10 || a * 10 > i32::MAX - d {
                return Err(Failure::error("integral size overflow"));
            }
            a = a * 10 + d;
            self.pos += 1;
        }
        Ok(a as usize)
    }

    /// The size of option `opt` (reading its count); 0 for options that
    /// need no alignment.
    fn size(&mut self, opt: u8) -> Result<usize, Failure> {
        Ok(match opt {
            b'B' | b'b' | b'x' => 1,
            b'H' | b'h' => 2,
            b'L' | b'l' | b'T' | b'd' => 8,
            b'f' => 4,
            b'c' => self.number(1)?,
            b'i' | b'I' => {
                let size = self.number(4)?;
                if size > MAXINTSIZE {
                    return Err(Failure::error(format!(
                        "integral size {} is larger than limit of {MAXINTSIZE}",
                        size as i32
                    )));
                }
                size
            }
            _ => 0,
        })
    }

    /// The options that change the header (`controloptions`).
    fn control(&mut self, opt: u8, header: &mut Header) -> Result<(), Failure> {
        match opt {
            b' ' => {}
            b'>' => header.little = false,
            b'<' => header.little = true,
            b'!' => {
                let a = self.number(MAXALIGN)?;
                if !(a > 0 && a & (a - 1) == 0) {
                    return Err(Failure::error(format!(
                        "alignment {} is not a power of 2",
                        a as i32
                    )));
                }
                header.align = a;
            }
            _ => {
                let mut message = b"invalid format option '".to_vec();
                message.extend_from_slice(&[opt, b'\'']);
                return Err(Failure::arg(1, message));
            }
        }
        Ok(())
    }
}

/// Padding before an item of `size` at `len` (`gettoalign`).
fn padding(len: usize, header: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(header.align);
    (size.wrapping_sub(len & size.wrapping_sub(1))) & size.wrapping_sub(1)
}

fn arg_index(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// `struct.pack(format, ...)`.
fn pack(lua: &Lua, args: &Args) -> Outcome {
    let format = args.check_bytes(lua, 1)?;
    let mut format = Format::new(&format);
    // struct.c pushes a nil above the arguments: a missing argument just
    // after them is a nil.
    let args = &args.with_pushed(Value::Nil);
    let mut header = Header::default();
    let mut arg = 2;
    let mut out: Vec<u8> = Vec::new();
    while let Some(opt) = format.next_option() {
        let mut size = format.size(opt)?;
        let pad = padding(out.len(), &header, opt, size);
        out.resize(out.len() + pad, 0);
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let n = args.check_number(lua, arg)?;
                arg += 1;
                put_integer(&mut out, n, header.little, size);
            }
            b'x' => out.push(0),
            b'f' => {
                let f = args.check_number(lua, arg)? as f32;
                arg += 1;
                put_ordered(&mut out, &f.to_le_bytes(), header.little);
            }
            b'd' => {
                let d = args.check_number(lua, arg)?;
                arg += 1;
                put_ordered(&mut out, &d.to_le_bytes(), header.little);
            }
            b'c' | b's' => {
                let s = args.check_bytes(lua, arg)?;
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    return Err(Failure::arg(arg_index(arg), "string too short"));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                }
            }
            _ => format.control(opt, &mut header)?,
        }
    }
    let packed = lua
        .create_string(out)
        .map_err(|e| Failure::error(e.to_string()))?;
    results([Value::String(packed)])
}

/// Little-endian `bytes` in the requested order.
fn put_ordered(out: &mut Vec<u8>, bytes: &[u8], little: bool) {
    if little {
        out.extend_from_slice(bytes);
    } else {
        out.extend(bytes.iter().rev());
    }
}

/// `n` as an integer of `size` bytes (`putinteger`): the C conversion of
/// the double to `unsigned long`, bytes past the eighth zero.
fn put_integer(out: &mut Vec<u8>, n: f64, little: bool, size: usize) {
    let value = if n < 0.0 {
        c_i64(n) as u64
    } else if n >= 9_223_372_036_854_775_808.0 {
        // How x86-64 code converts to unsigned: subtract 2^63, convert,
        // set the top bit back.
        (c_i64(n - 9_223_372_036_854_775_808.0) as u64) ^ (1 << 63)
    } else {
        c_i64(n) as u64
    };
    let mut bytes = vec![0u8; size];
    for (i, byte) in bytes.iter_mut().enumerate().take(8) {
        *byte = (value >> (8 * i)) as u8;
    }
    put_ordered(out, &bytes, little);
}

/// `struct.unpack(format, data[, position])`: the values, then the
/// position after them.
fn unpack(lua: &Lua, args: &Args) -> Outcome {
    let format = args.check_bytes(lua, 1)?;
    let data = args.check_bytes(lua, 2)?;
    // A size_t: a negative start is a huge one, caught below as data
    // too short.
    let start = args.opt_integer(lua, 3, 1)? as u64 as usize;
    if start == 0 {
        return Err(Failure::arg(3, "offset must be 1 or greater"));
    }
    let ld = data.len();
    let mut pos = start - 1;
    let mut format = Format::new(&format);
    let mut header = Header::default();
    let mut values = LuaStack::new(lua)?;
    let too_short = || Failure::arg(2, "data string too short");
    while let Some(opt) = format.next_option() {
        let mut size = format.size(opt)?;
        pos = pos.wrapping_add(padding(pos, &header, opt, size));
        if !(size <= ld && pos <= ld - size) {
            return Err(too_short());
        }
        // Room for a value and the position, after the arguments and
        // the values so far.
        if args.count() + values.len() as usize + 2 > LUAI_MAXCSTACK {
            return Err(Failure::error("stack overflow (too many results)"));
        }
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let signed = opt.is_ascii_lowercase();
                let n = get_integer(&data[pos..pos + size], header.little, signed);
                values.push(Value::Number(n))?;
            }
            b'x' => {}
            b'f' => {
                let mut bytes = [0u8; 4];
                bytes.copy_from_slice(&data[pos..pos + 4]);
                let f = if header.little {
                    f32::from_le_bytes(bytes)
                } else {
                    f32::from_be_bytes(bytes)
                };
                values.push(Value::Number(f64::from(f)))?;
            }
            b'd' => {
                let mut bytes = [0u8; 8];
                bytes.copy_from_slice(&data[pos..pos + 8]);
                let d = if header.little {
                    f64::from_le_bytes(bytes)
                } else {
                    f64::from_be_bytes(bytes)
                };
                values.push(Value::Number(d))?;
            }
            b'c' => {
                if size == 0 {
                    let previous: Option<Value> = if values.len() > 0 {
                        Some(values.peek(0)?)
                    } else {
                        None
                    };
                    let length = previous.as_ref().and_then(|v| match v {
                        Value::Number(_) | Value::Integer(_) | Value::String(_) => {
                            crate::cfunction::to_number(lua, v)
                        }
                        _ => None,
                    });
                    let Some(length) = length else {
                        return Err(Failure::error("format 'c0' needs a previous size"));
                    };
                    values.pop::<Value>()?;
                    size = c_u64(length) as usize;
                    if !(size <= ld && pos <= ld - size) {
                        return Err(too_short());
                    }
                }
                let s = lua
                    .create_string(&data[pos..pos + size])
                    .map_err(|e| Failure::error(e.to_string()))?;
                values.push(Value::String(s))?;
            }
            b's' => {
                let Some(len) = data[pos..].iter().position(|&b| b == 0) else {
                    return Err(Failure::error("unfinished string in data"));
                };
                size = len + 1;
                let s = lua
                    .create_string(&data[pos..pos + len])
                    .map_err(|e| Failure::error(e.to_string()))?;
                values.push(Value::String(s))?;
            }
            _ => format.control(opt, &mut header)?,
        }
        pos = pos.wrapping_add(size);
    }
    values.push(Value::Number(pos.wrapping_add(1) as i64 as f64))?;
    Ok(Results::Stack(values))
}

/// A double converted to `size_t` as x86-64 code does.
fn c_u64(d: f64) -> u64 {
    if d >= 9_223_372_036_854_775_808.0 {
        (c_i64(d - 9_223_372_036_854_775_808.0) as u64) ^ (1 << 63)
    } else {
        c_i64(d) as u64
    }
}

/// An integer of `bytes.len()` bytes (`getinteger`): only the last eight
/// bytes read count, and the sign mask shifts as x86-64 shifts.
fn get_integer(bytes: &[u8], little: bool, signed: bool) -> f64 {
    let mut l: u64 = 0;
    let mut push = |b: u8| l = l.wrapping_shl(8) | u64::from(b);
    if little {
        for &b in bytes.iter().rev() {
            push(b);
        }
    } else {
        for &b in bytes {
            push(b);
        }
    }
    if !signed {
        return l as f64;
    }
    let bits = (bytes.len() * 8) as u32;
    let mask = u64::MAX.wrapping_shl(bits.wrapping_sub(1));
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

/// `struct.size(format)`: the size of the packed data.
fn size(lua: &Lua, args: &Args) -> Outcome {
    let format = args.check_bytes(lua, 1)?;
    let mut format = Format::new(&format);
    let mut header = Header::default();
    let mut pos: usize = 0;
    while let Some(opt) = format.next_option() {
        let size = format.size(opt)?;
        pos = pos.wrapping_add(padding(pos, &header, opt, size));
        if opt == b's' {
            return Err(Failure::arg(1, "option 's' has no fixed size"));
        }
        if opt == b'c' && size == 0 {
            return Err(Failure::arg(1, "option 'c0' has no fixed size"));
        }
        if !opt.is_ascii_alphanumeric() {
            format.control(opt, &mut header)?;
        }
        pos = pos.wrapping_add(size);
    }
    results([Value::Number(pos as i64 as f64)])
}

#[cfg(test)]
mod tests {
    use crate::test_support::{error, eval, text};

    #[test]
    fn packs_integers_floats_and_strings() {
        assert_eq!(eval("return struct.pack('>i2', 300)"), [0x01, 0x2c]);
        assert_eq!(eval("return struct.pack('<i2', 300)"), [0x2c, 0x01]);
        assert_eq!(
            eval("return struct.pack('i', -2)"),
            [0xfe, 0xff, 0xff, 0xff]
        );
        assert_eq!(eval("return struct.pack('>I8', 2^64)"), [0; 8]);
        assert_eq!(
            eval("return struct.pack('>i9', -1)"),
            [0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(eval("return struct.pack('>f', 1.5)"), [0x3f, 0xc0, 0, 0]);
        assert_eq!(eval("return struct.pack('s', 'ab')"), b"ab\0");
        assert_eq!(eval("return struct.pack('c3', 'abcdef')"), b"abc");
        assert_eq!(
            eval("return struct.pack('!4 b i', 1, 2)"),
            [1, 0, 0, 0, 2, 0, 0, 0]
        );
        assert_eq!(eval("return struct.pack('b i', 1, 2)"), [1, 2, 0, 0, 0]);
    }

    #[test]
    fn unpacks_and_sizes() {
        assert_eq!(
            text("return cjson.encode({struct.unpack('>i2 <I2 s b c0', '\\255\\254\\1\\0ab\\0\\2xy')})"),
            "[-2,1,\"ab\",\"xy\",11]"
        );
        assert_eq!(
            text("return cjson.encode({struct.unpack('b', '\\1\\2', 2)})"),
            "[2,3]"
        );
        assert_eq!(text("return struct.size('!bBhHlLTfd')"), "48");
        assert_eq!(text("return struct.size('i3 c9 x')"), "13");
    }

    #[test]
    fn errors_as_struct_c() {
        assert_eq!(
            error("struct.pack('z', 1)"),
            "t:1: bad argument #1 to 'pack' (invalid format option 'z')"
        );
        assert_eq!(
            error("struct.pack('>i2')"),
            "t:1: bad argument #2 to 'pack' (number expected, got nil)"
        );
        assert_eq!(
            error("struct.pack('c5', 'ab')"),
            "t:1: bad argument #3 to 'pack' (string too short)"
        );
        assert_eq!(
            error("struct.pack('i33', 1)"),
            "t:1: integral size 33 is larger than limit of 32"
        );
        assert_eq!(
            error("struct.pack('!3')"),
            "t:1: alignment 3 is not a power of 2"
        );
        assert_eq!(
            error("struct.unpack('i4', 'abc')"),
            "t:1: bad argument #2 to 'unpack' (data string too short)"
        );
        assert_eq!(
            error("struct.unpack('b', 'a', 0)"),
            "t:1: bad argument #3 to 'unpack' (offset must be 1 or greater)"
        );
        assert_eq!(
            error("struct.unpack('s', 'abc')"),
            "t:1: unfinished string in data"
        );
        assert_eq!(
            error("struct.unpack('c0', 'abc')"),
            "t:1: format 'c0' needs a previous size"
        );
        assert_eq!(
            error("struct.size('s')"),
            "t:1: bad argument #1 to 'size' (option 's' has no fixed size)"
        );
    }
}
