//! `cmsgpack`: lua-cmsgpack 0.4.0 as Redis 7.0 ships it — MessagePack
//! encoding of Lua values and decoding of a stream of them.
//!
//! Encoding: a number that is an integer in the 64-bit range is the
//! smallest integer encoding, any other a float 32 when exact, else a
//! float 64; a string is a str; a table whose keys are exactly 1..n is an
//! array, any other a map (in `next` order); tables nested 16 deep and
//! values of other types are nil. Decoding reads str 8/16/32 and every
//! other type but bin and ext; unsigned 64-bit integers of 2^63 and more
//! come back negative, as the C code pushes them through `lua_Integer`.

use mlua::{Lua, Table, Value};

use crate::cfunction::{c_i32, c_i64, function, results, Args, Outcome, Results};
use crate::failure::{lua_failure, Failure};
use crate::luastack::{LuaStack, LUAI_MAXCSTACK};

/// Tables nested this deep are encoded as nil.
const MAX_NESTING: usize = 16;

/// The `cmsgpack` module table.
pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    table.raw_set("pack", function(lua, pack)?)?;
    table.raw_set("unpack", function(lua, unpack)?)?;
    table.raw_set("unpack_one", function(lua, unpack_one)?)?;
    table.raw_set("unpack_limit", function(lua, unpack_limit)?)?;
    table.raw_set("_NAME", "cmsgpack")?;
    table.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    table.raw_set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    table.raw_set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(table)
}

/// `cmsgpack.pack(...)`: the arguments encoded one after the other.
fn pack(lua: &Lua, args: &Args) -> Outcome {
    if args.count() == 0 {
        return Err(Failure::arg(0, "MessagePack pack needs input."));
    }
    // lua-cmsgpack makes room for one packed string per argument.
    if 2 * args.count() > LUAI_MAXCSTACK {
        return Err(Failure::arg(0, "Too many arguments for MessagePack pack."));
    }
    let mut out = Vec::new();
    for n in 1..=args.count() {
        encode(args.get(n).unwrap_or(&Value::Nil), 0, &mut out)?;
    }
    let packed = lua.create_string(out).map_err(lua_failure)?;
    results([Value::String(packed)])
}

fn encode(value: &Value, level: usize, out: &mut Vec<u8>) -> Result<(), Failure> {
    match value {
        Value::String(s) => encode_bytes(&s.as_bytes(), out),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => encode_number(*i as f64, out),
        Value::Number(n) => encode_number(*n, out),
        Value::Table(t) if level < MAX_NESTING => encode_table(t, level, out)?,
        _ => out.push(0xc0),
    }
    Ok(())
}

fn encode_bytes(s: &[u8], out: &mut Vec<u8>) {
    let len = s.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len <= 0xff {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(s);
}

fn encode_number(n: f64, out: &mut Vec<u8>) {
    // An integer when C's (int64_t) cast gives it back.
    if !n.is_infinite() && c_i64(n) as f64 == n {
        encode_int(c_i64(n), out);
    } else if f64::from(n as f32) == n {
        out.push(0xca);
        out.extend_from_slice(&(n as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_int(n: i64, out: &mut Vec<u8>) {
    if n >= 0 {
        if n <= 127 {
            out.push(n as u8);
        } else if n <= 0xff {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&n.to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// A header: the fix form under 16 elements, else 16 or 32 bits.
fn encode_header(n: usize, fix: u8, wide: u8, out: &mut Vec<u8>) {
    if n <= 15 {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(wide);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(wide + 1);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

fn encode_table(table: &Table, level: usize, out: &mut Vec<u8>) -> Result<(), Failure> {
    let (count, array) = count_keys(table)?;
    if array {
        encode_header(count, 0x90, 0xdc, out);
        for i in 1..=count {
            let item: Value = table.raw_get(i).map_err(lua_failure)?;
            encode(&item, level + 1, out)?;
        }
    } else {
        encode_header(count, 0x80, 0xde, out);
        for pair in table.pairs::<Value, Value>() {
            let (key, value) = pair.map_err(lua_failure)?;
            encode(&key, level + 1, out)?;
            encode(&value, level + 1, out)?;
        }
    }
    Ok(())
}

/// How many keys `table` has, and whether they are exactly 1..n
/// (positive `int`s whose largest is their count).
fn count_keys(table: &Table) -> Result<(usize, bool), Failure> {
    let mut count = 0usize;
    let mut max: i32 = 0;
    let mut array = true;
    for pair in table.pairs::<Value, Value>() {
        let (key, _) = pair.map_err(lua_failure)?;
        count += 1;
        if !array {
            continue;
        }
        let n = match key {
            Value::Integer(i) => i as f64,
            Value::Number(n) => n,
            _ => f64::NAN,
        };
        if n.is_nan() || n <= 0.0 || n.is_infinite() || f64::from(c_i32(n)) != n {
            array = false;
        } else {
            max = max.max(n as i32);
        }
    }
    Ok((
        count,
        array && usize::try_from(max).is_ok_and(|max| max == count),
    ))
}

/// `cmsgpack.unpack(data)`: every value in `data`.
fn unpack(lua: &Lua, args: &Args) -> Outcome {
    unpack_full(lua, args, 0, 0)
}

/// `cmsgpack.unpack_one(data[, offset])`: the offset after the first
/// value (-1 at the end) and the value.
fn unpack_one(lua: &Lua, args: &Args) -> Outcome {
    let offset = args.opt_integer(lua, 2, 0)?;
    unpack_full(lua, args, 1, offset)
}

/// `cmsgpack.unpack_limit(data, limit[, offset])`: the offset after the
/// values read (-1 at the end) and up to `limit` values.
fn unpack_limit(lua: &Lua, args: &Args) -> Outcome {
    let limit = args.check_integer(lua, 2)?;
    let offset = args.opt_integer(lua, 3, 0)?;
    unpack_full(lua, args, limit, offset)
}

fn unpack_full(lua: &Lua, args: &Args, limit: i64, offset: i64) -> Outcome {
    let data = args.check_bytes(lua, 1)?;
    let len = data.len();
    if offset < 0 || limit < 0 {
        return Err(Failure::error(format!(
            "Invalid request to unpack with offset of {} and limit of {}.",
            offset as i32, len as i32
        )));
    }
    if offset as u64 > len as u64 {
        return Err(Failure::error(format!(
            "Start offset {} greater than input length {}.",
            offset as i32, len as i32
        )));
    }
    let decode_all = limit == 0 && offset == 0;
    let limit = if decode_all {
        i64::from(i32::MAX)
    } else {
        limit
    };
    let mut decoder = Decoder {
        lua,
        data: &data,
        pos: offset as usize,
    };
    let mut values = LuaStack::new(lua)?;
    if !decode_all {
        // The offset comes first; set once known.
        values.push(Value::Nil)?;
    }
    let first = values.len();
    // The C function's stack holds the data string, then the values.
    while decoder.pos < len && values.len() - first < limit {
        let value = decoder.value(1 + (values.len() - first) as usize)?;
        values.push(value)?;
    }
    if !decode_all {
        // Room for the offset above the data and the values.
        if 1 + (values.len() - first) as usize + 1 > LUAI_MAXCSTACK {
            return Err(Failure::error(
                "stack overflow (in function mp_unpack_full)",
            ));
        }
        let next = if decoder.pos == len {
            -1
        } else {
            decoder.pos as i64
        };
        values.set(1, next)?;
    }
    Ok(Results::Stack(values))
}

/// Why decoding stopped short.
enum Short {
    /// `Missing bytes in input.`
    Eof,
    /// `Bad data format in input.`
    BadFormat,
    /// Any other failure, reported as is.
    Failure(Failure),
}

impl From<Short> for Failure {
    fn from(short: Short) -> Failure {
        match short {
            Short::Eof => Failure::error("Missing bytes in input."),
            Short::BadFormat => Failure::error("Bad data format in input."),
            Short::Failure(f) => f,
        }
    }
}

impl From<mlua::Error> for Short {
    fn from(e: mlua::Error) -> Short {
        Short::Failure(lua_failure(e))
    }
}

struct Decoder<'a> {
    lua: &'a Lua,
    data: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// The next `n` bytes, consumed.
    fn take(&mut self, n: usize) -> Result<&'a [u8], Short> {
        if self.data.len() - self.pos < n {
            return Err(Short::Eof);
        }
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    /// Checks that `n` bytes remain without consuming them.
    fn need(&self, n: usize) -> Result<(), Short> {
        if self.data.len() - self.pos < n {
            return Err(Short::Eof);
        }
        Ok(())
    }

    fn be(&mut self, n: usize) -> Result<u64, Short> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| acc << 8 | u64::from(b)))
    }

    /// The next value, nested arrays and maps included, without
    /// recursion: open tables (and a map's pending key) wait on a stack in
    /// Lua. `base`: the values the C decoder holds on its Lua stack.
    fn value(&mut self, base: usize) -> Result<Value, Short> {
        let mut open = LuaStack::new(self.lua).map_err(Short::Failure)?;
        let mut levels: Vec<Level> = Vec::new();
        loop {
            // The C decoder holds a table and an index per open array, a
            // table and a key per open map.
            let stack = levels.last().map_or(base, |level| match level {
                Level::Array { stack, .. } | Level::Value { stack, .. } => stack + 2,
                Level::Key { stack, .. } => stack + 1,
            });
            let mut value = match self.item(stack)? {
                Item::Value(value) => value,
                Item::Array(len) | Item::Map(len) if len == 0 => {
                    Value::Table(self.lua.create_table()?)
                }
                Item::Array(len) => {
                    open.push(self.lua.create_table()?)
                        .map_err(Short::Failure)?;
                    levels.push(Level::Array {
                        left: len,
                        next: 1,
                        stack,
                    });
                    continue;
                }
                Item::Map(len) => {
                    open.push(self.lua.create_table()?)
                        .map_err(Short::Failure)?;
                    levels.push(Level::Key { left: len, stack });
                    continue;
                }
            };
            // Store the value in the tables it completes.
            loop {
                let Some(level) = levels.last_mut() else {
                    return Ok(value);
                };
                let left = match level {
                    Level::Array { left, next, .. } => {
                        let table: Table = open.peek(0).map_err(Short::Failure)?;
                        table.raw_set(*next, value)?;
                        *next += 1;
                        *left -= 1;
                        *left
                    }
                    Level::Key { left, stack } => {
                        open.push(value).map_err(Short::Failure)?;
                        *level = Level::Value {
                            left: *left,
                            stack: *stack,
                        };
                        break;
                    }
                    Level::Value { left, stack } => {
                        let key: Value = open.pop().map_err(Short::Failure)?;
                        match key {
                            Value::Nil => return Err(bare("table index is nil")),
                            Value::Number(n) if n.is_nan() => {
                                return Err(bare("table index is NaN"));
                            }
                            _ => {}
                        }
                        let table: Table = open.peek(0).map_err(Short::Failure)?;
                        table.raw_set(key, value)?;
                        let left = *left - 1;
                        *level = Level::Key {
                            left,
                            stack: *stack,
                        };
                        left
                    }
                };
                if left > 0 {
                    break;
                }
                levels.pop();
                value = open.pop().map_err(Short::Failure)?;
            }
        }
    }

    /// The next item: a value, or the header of an array or a map.
    fn item(&mut self, stack: usize) -> Result<Item, Short> {
        self.need(1)?;
        if stack + 1 > LUAI_MAXCSTACK {
            return Err(Short::Failure(Failure::error(
                "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)",
            )));
        }
        let tag = self.data[self.pos];
        let number = |n: f64| Ok(Item::Value(Value::Number(n)));
        match tag {
            0xcc..=0xcf => {
                let width = 1 << (tag - 0xcc);
                self.need(1 + width)?;
                self.pos += 1;
                // Pushed through a signed lua_Integer.
                number(self.be(width)? as i64 as f64)
            }
            0xd0 => {
                self.need(2)?;
                self.pos += 1;
                number(f64::from(self.be(1)? as u8 as i8))
            }
            0xd1 => {
                self.need(3)?;
                self.pos += 1;
                number(f64::from(self.be(2)? as u16 as i16))
            }
            0xd2 => {
                self.need(5)?;
                self.pos += 1;
                number(f64::from(self.be(4)? as u32 as i32))
            }
            0xd3 => {
                self.need(9)?;
                self.pos += 1;
                number(self.be(8)? as i64 as f64)
            }
            0xc0 => {
                self.pos += 1;
                Ok(Item::Value(Value::Nil))
            }
            0xc2 | 0xc3 => {
                self.pos += 1;
                Ok(Item::Value(Value::Boolean(tag == 0xc3)))
            }
            0xca => {
                self.need(5)?;
                self.pos += 1;
                number(f64::from(f32::from_bits(self.be(4)? as u32)))
            }
            0xcb => {
                self.need(9)?;
                self.pos += 1;
                number(f64::from_bits(self.be(8)?))
            }
            0xd9 | 0xda => {
                let width = usize::from(tag - 0xd8);
                self.need(1 + width)?;
                let len = be_len(&self.data[self.pos + 1..self.pos + 1 + width]);
                self.need(1 + width + len)?;
                self.pos += 1 + width;
                self.string(len)
            }
            0xdb => {
                self.need(5)?;
                self.pos += 1;
                let len = self.be(4)? as usize;
                self.need(len)?;
                self.string(len)
            }
            0xdc..=0xdf => {
                let width = if tag & 1 == 0 { 2 } else { 4 };
                self.need(1 + width)?;
                self.pos += 1;
                let len = self.be(width)? as usize;
                self.header(tag <= 0xdd, len, stack)
            }
            _ if tag & 0x80 == 0 => {
                self.pos += 1;
                number(f64::from(tag))
            }
            _ if tag & 0xe0 == 0xe0 => {
                self.pos += 1;
                number(f64::from(tag as i8))
            }
            _ if tag & 0xe0 == 0xa0 => {
                let len = usize::from(tag & 0x1f);
                self.need(1 + len)?;
                self.pos += 1;
                self.string(len)
            }
            _ if tag & 0xe0 == 0x80 => {
                self.pos += 1;
                self.header(tag & 0xf0 == 0x90, usize::from(tag & 0xf), stack)
            }
            _ => Err(Short::BadFormat),
        }
    }

    /// An array or map header of `len` elements.
    fn header(&self, array: bool, len: usize, stack: usize) -> Result<Item, Short> {
        if !array {
            return Ok(Item::Map(len));
        }
        // The C decoder checks room for the index next to the table.
        if stack + 2 > LUAI_MAXCSTACK {
            return Err(Short::Failure(Failure::error(
                "stack overflow (in function mp_decode_to_lua_array)",
            )));
        }
        Ok(Item::Array(len))
    }

    fn string(&mut self, len: usize) -> Result<Item, Short> {
        let bytes = self.take(len)?;
        Ok(Item::Value(Value::String(self.lua.create_string(bytes)?)))
    }
}

/// What a tag starts.
enum Item {
    Value(Value),
    Array(usize),
    Map(usize),
}

/// An array or map being read, with the elements left and the values
/// the C decoder held on its Lua stack when it started.
enum Level {
    /// An array, with the index of its next element.
    Array {
        left: usize,
        next: i64,
        stack: usize,
    },
    /// A map expecting a key.
    Key { left: usize, stack: usize },
    /// A map expecting a value, its key on the stack of open tables.
    Value { left: usize, stack: usize },
}

fn bare(message: &str) -> Short {
    Short::Failure(Failure::Bare(message.as_bytes().to_vec()))
}

fn be_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .fold(0usize, |acc, &b| acc << 8 | usize::from(b))
}

#[cfg(test)]
mod tests {
    use crate::test_support::{error, eval, text};

    fn packed(values: &str) -> Vec<u8> {
        eval(&format!("return cmsgpack.pack({values})"))
    }

    #[test]
    fn integers_take_the_smallest_encoding() {
        assert_eq!(packed("0, 127, -1, -32"), [0x00, 0x7f, 0xff, 0xe0]);
        assert_eq!(packed("128, 255"), [0xcc, 0x80, 0xcc, 0xff]);
        assert_eq!(packed("256"), [0xcd, 0x01, 0x00]);
        assert_eq!(packed("65536"), [0xce, 0, 1, 0, 0]);
        assert_eq!(packed("2^32"), [0xcf, 0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(packed("-33, -129"), [0xd0, 0xdf, 0xd1, 0xff, 0x7f]);
        assert_eq!(packed("-32769"), [0xd2, 0xff, 0xff, 0x7f, 0xff]);
        assert_eq!(packed("-2^63"), [0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(packed("-0.0"), [0x00]);
    }

    #[test]
    fn floats_are_32_bits_when_exact() {
        assert_eq!(packed("0.5"), [0xca, 0x3f, 0x00, 0x00, 0x00]);
        assert_eq!(packed("1/0"), [0xca, 0x7f, 0x80, 0x00, 0x00]);
        assert_eq!(packed("0.1"), {
            let mut v = vec![0xcb];
            v.extend_from_slice(&0.1f64.to_be_bytes());
            v
        });
        assert_eq!(packed("2^63")[0], 0xca);
    }

    #[test]
    fn strings_tables_and_other_types() {
        assert_eq!(packed("'abc'"), b"\xa3abc");
        assert_eq!(packed("string.rep('x', 32)")[..2], [0xd9, 32]);
        assert_eq!(packed("string.rep('x', 256)")[..3], [0xda, 1, 0]);
        assert_eq!(packed("{1, 2}"), [0x92, 1, 2]);
        assert_eq!(packed("{}"), [0x90]);
        assert_eq!(packed("{[2] = 5}"), [0x81, 2, 5]);
        assert_eq!(packed("{a = true}"), b"\x81\xa1a\xc3");
        assert_eq!(packed("nil, false, tostring"), [0xc0, 0xc2, 0xc0]);
        // The seventeenth nested table is nil.
        let deep = eval("local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end return cmsgpack.pack(t)");
        assert_eq!(deep, [&[0x91u8; 16][..], &[0xc0]].concat());
    }

    #[test]
    fn unpacks_streams_with_offsets() {
        assert_eq!(
            text("return cjson.encode({cmsgpack.unpack(cmsgpack.pack(1, 'a', {2}, {b = 3}))})"),
            r#"[1,"a",[2],{"b":3}]"#
        );
        assert_eq!(
            text("return cjson.encode({cmsgpack.unpack_one(cmsgpack.pack(1, 2), 1)})"),
            "[-1,2]"
        );
        assert_eq!(
            text("return cjson.encode({cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)})"),
            "[2,1,2]"
        );
        assert_eq!(
            text(
                "return tostring(cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255'))"
            ),
            "-1"
        );
    }

    #[test]
    fn unpack_errors_as_lua_cmsgpack() {
        assert_eq!(
            error("cmsgpack.unpack('\\205\\1')"),
            "t:1: Missing bytes in input."
        );
        assert_eq!(
            error("cmsgpack.unpack('\\193')"),
            "t:1: Bad data format in input."
        );
        assert_eq!(
            error("cmsgpack.unpack('\\129\\192\\1')"),
            "table index is nil"
        );
        assert_eq!(
            error("cmsgpack.unpack_one('\\1', 5)"),
            "t:1: Start offset 5 greater than input length 1."
        );
        assert_eq!(
            error("cmsgpack.unpack_limit('\\1\\1', -1)"),
            "t:1: Invalid request to unpack with offset of 0 and limit of 2."
        );
        assert_eq!(
            error("cmsgpack.pack()"),
            "t:1: bad argument #0 to 'pack' (MessagePack pack needs input.)"
        );
    }
}
