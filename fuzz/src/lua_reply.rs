//! Scripts' replies: arbitrary Lua values through Redis' Lua-to-RESP
//! conversion, and arbitrary replies through the RESP-to-Lua conversion
//! and back (`redcodec_scripting::convert`).
//!
//! Input: one selector byte, then a value description. Selector even:
//! the bytes describe a Lua value (see [`Builder`]), converted for a
//! RESP2 and a RESP3 script. Selector odd: the bytes are a reply as the
//! server writes them; when it parses, it goes to Lua as a command's
//! reply would and the Lua value comes back as a script's reply.
//!
//! Checked: no panic; every reply the conversion gives is written, in
//! both protocols, as bytes that parse back whole into a reply written
//! the same way (a client never gets a malformed or ambiguous reply).

use mlua::{Lua, Table, Value};
use redcodec_scripting::convert::{lua_to_resp, resp_to_lua};
use redcodec_scripting::RespValue;

/// The memory one input's Lua state may use.
const LUA_MEMORY: usize = 32 << 20;

/// Runs one input.
pub fn lua_reply(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    LUA.with(|lua| {
        convert_all(lua, selector, rest);
        // What this input made is garbage for the next one.
        let _ = lua.gc_collect();
    });
}

thread_local! {
    /// One Lua state for every input (a fresh state per input costs more
    /// than the conversions).
    static LUA: Lua = {
        let lua = Lua::new();
        lua.set_memory_limit(LUA_MEMORY).expect("a memory limit");
        lua
    };
}

fn convert_all(lua: &Lua, selector: u8, rest: &[u8]) {
    let values = if selector % 2 == 0 {
        let mut b = Builder {
            data: rest,
            lua,
            nested: false,
        };
        let Some(value) = b.value(0) else {
            return;
        };
        vec![lua_to_resp(&value, false), lua_to_resp(&value, true)]
    } else {
        let Some((reply, _)) = RespValue::parse(rest) else {
            return;
        };
        let Ok(value) = resp_to_lua(lua, &reply) else {
            return;
        };
        vec![lua_to_resp(&value, false), lua_to_resp(&value, true)]
    };
    for value in &values {
        for resp3 in [false, true] {
            written_whole(value, resp3);
        }
    }
}

/// `value` written in one protocol parses back whole, and what it parses
/// to is written the same way.
fn written_whole(value: &RespValue, resp3: bool) {
    let mut out = Vec::new();
    value.encode(resp3, &mut out);
    let Some((parsed, used)) = RespValue::parse(&out) else {
        panic!("{value:?} written as {out:?} (resp3 {resp3}) does not parse");
    };
    assert_eq!(
        used,
        out.len(),
        "{value:?} written as {out:?} (resp3 {resp3}) parses short"
    );
    let mut again = Vec::new();
    parsed.encode(resp3, &mut again);
    assert_eq!(again, out, "{value:?} (resp3 {resp3}) is not written alike");
}

/// Builds a Lua value from bytes: one operation byte, then its operands.
struct Builder<'a> {
    data: &'a [u8],
    lua: &'a Lua,
    /// Whether the one deep nesting an input may have was built.
    nested: bool,
}

/// Nesting this deep goes past the conversion's limit.
const DEEP: usize = 1100;

impl Builder<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.data.split_first()?;
        self.data = rest;
        Some(b)
    }

    fn bytes(&mut self) -> Option<&[u8]> {
        let n = usize::from(self.byte()?).min(self.data.len());
        let (s, rest) = self.data.split_at(n);
        self.data = rest;
        Some(s)
    }

    fn u64(&mut self) -> Option<u64> {
        let mut b = [0u8; 8];
        for x in &mut b {
            *x = self.byte()?;
        }
        Some(u64::from_le_bytes(b))
    }

    fn string(&mut self) -> Option<Value> {
        let s = self.bytes()?.to_vec();
        self.lua.create_string(&s).ok().map(Value::String)
    }

    fn table(&mut self) -> Option<Table> {
        self.lua.create_table().ok()
    }

    /// `{name = value}`.
    fn wrapped(&mut self, name: &str, value: Value) -> Option<Value> {
        let t = self.table()?;
        t.raw_set(name, value).ok()?;
        Some(Value::Table(t))
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        let op = self.byte()?;
        if depth > 64 && op % 16 >= 6 {
            return Some(Value::Nil);
        }
        Some(match op % 16 {
            0 => self.string()?,
            1 => Value::Integer(self.u64()? as i64),
            2 => Value::Number(f64::from_bits(self.u64()?)),
            3 => Value::Boolean(op & 0x10 != 0),
            4 => Value::Nil,
            5 => Value::Number(f64::from(self.byte()?) - 128.5),
            // An array of up to 7 elements (a nil among them is a hole).
            6 => {
                let t = self.table()?;
                for i in 1..=i64::from(self.byte()? % 8) {
                    let v = self.value(depth + 1)?;
                    t.raw_set(i, v).ok()?;
                }
                Value::Table(t)
            }
            7 => {
                let v = self.value(depth + 1)?;
                self.wrapped("err", v)?
            }
            8 => {
                let v = self.value(depth + 1)?;
                self.wrapped("ok", v)?
            }
            9 => {
                let v = self.value(depth + 1)?;
                self.wrapped("double", v)?
            }
            10 => {
                let v = self.value(depth + 1)?;
                self.wrapped("big_number", v)?
            }
            11 => {
                let inner = self.table()?;
                let format = self.value(depth + 1)?;
                let string = self.value(depth + 1)?;
                inner.raw_set("format", format).ok()?;
                inner.raw_set("string", string).ok()?;
                self.wrapped("verbatim_string", Value::Table(inner))?
            }
            // A map or a set of up to 7 entries (nil and NaN keys are not
            // table keys in Lua: skipped).
            12 | 13 => {
                let t = self.table()?;
                for _ in 0..self.byte()? % 8 {
                    let k = self.value(depth + 1)?;
                    let v = if op % 16 == 12 {
                        self.value(depth + 1)?
                    } else {
                        Value::Boolean(true)
                    };
                    let _ = t.raw_set(k, v);
                }
                self.wrapped(if op % 16 == 12 { "map" } else { "set" }, Value::Table(t))?
            }
            // Entries at arbitrary small indices: holes, index 0, negative.
            14 => {
                let t = self.table()?;
                for _ in 0..self.byte()? % 8 {
                    let i = i64::from(self.byte()?) - 8;
                    let v = self.value(depth + 1)?;
                    let _ = t.raw_set(i, v);
                }
                Value::Table(t)
            }
            // Tables nested past the conversion's depth limit (once an
            // input: it is slow to build).
            _ if self.nested => Value::Nil,
            _ => {
                self.nested = true;
                let mut v = self.value(depth + 1)?;
                for _ in 0..DEEP {
                    let t = self.table()?;
                    t.raw_set(1, v).ok()?;
                    v = Value::Table(t);
                }
                v
            }
        })
    }
}
