//! `cjson.encode(value)`: a Lua value as JSON text.
//!
//! A table is an array when its keys are all positive integers and it is
//! not excessively sparse, else an object (an empty table is `{}`).
//! Object members come in `next` order. Numbers use `%.14g`.

use mlua::{Lua, Table, Value};

use super::config::{Config, InvalidNumbers};
use crate::cfunction::{c_i32, results, type_name, Args, Outcome};
use crate::failure::{lua_failure, Failure};
use crate::luastack::{LuaStack, LUAI_MAXCSTACK};
use crate::number::format_g;

/// `cjson.encode(value)`.
pub(crate) fn encode(lua: &Lua, args: &Args, config: &mut Config) -> Outcome {
    let value = match args.get(1) {
        Some(value) if args.count() == 1 => value,
        _ => return Err(Failure::arg(1, "expected 1 argument")),
    };
    let mut encoder = Encoder {
        lua,
        config,
        out: Vec::new(),
    };
    encoder.value(value)?;
    let text = lua
        .create_string(encoder.out)
        .map_err(|e| Failure::error(e.to_string()))?;
    results([Value::String(text)])
}

/// JSON text being written.
struct Encoder<'a> {
    lua: &'a Lua,
    config: &'a Config,
    out: Vec<u8>,
}

/// A failure of the encoding: `Cannot serialise <type>: <reason>`.
fn cannot(value: &Value, reason: &str) -> Failure {
    Failure::error(format!("Cannot serialise {}: {reason}", type_name(value)))
}

/// A table being written (kept on the stack of open tables): an array,
/// or an object, its `count` keys in `next` order above it.
enum Level {
    Array { len: i32, next: i32, stack: usize },
    Object { count: i64, next: i64, stack: usize },
}

impl Encoder<'_> {
    /// Appends `value` without recursion: the tables being written wait
    /// on a stack of open tables, kept in Lua.
    fn value(&mut self, value: &Value) -> Result<(), Failure> {
        let mut open = LuaStack::new(self.lua)?;
        let mut levels: Vec<Level> = Vec::new();
        // The argument is the one value on the C function's stack.
        self.item(value, &mut open, &mut levels, 1)?;
        while let Some(level) = levels.last_mut() {
            match level {
                Level::Array { len, next, stack } => {
                    if *next > *len {
                        self.out.push(b']');
                        levels.pop();
                        open.pop::<Value>()?;
                        continue;
                    }
                    if *next > 1 {
                        self.out.push(b',');
                    }
                    let table: Table = open.peek(0)?;
                    let item: Value = table.raw_get(*next).map_err(lua_failure)?;
                    *next += 1;
                    // The C encoder holds the element above the table.
                    let stack = *stack + 1;
                    self.item(&item, &mut open, &mut levels, stack)?;
                }
                Level::Object { count, next, stack } => {
                    if *next == *count {
                        self.out.push(b'}');
                        open.drop_top(*count + 1);
                        levels.pop();
                        continue;
                    }
                    if *next > 0 {
                        self.out.push(b',');
                    }
                    let key: Value = open.peek(*count - 1 - *next)?;
                    let table: Table = open.peek(*count)?;
                    *next += 1;
                    match &key {
                        Value::Integer(i) => self.quoted_number(*i as f64, &key)?,
                        Value::Number(n) => self.quoted_number(*n, &key)?,
                        Value::String(s) => {
                            self.string(&s.as_bytes());
                            self.out.push(b':');
                        }
                        _ => return Err(cannot(&key, "table key must be a number or string")),
                    }
                    let item: Value = table.raw_get(key).map_err(lua_failure)?;
                    // The C encoder holds the key and the value.
                    let stack = *stack + 2;
                    self.item(&item, &mut open, &mut levels, stack)?;
                }
            }
        }
        Ok(())
    }

    /// Appends a value other than a table, or opens a table, at depth
    /// `levels.len()`, while the C encoder would hold `stack` values on
    /// its Lua stack.
    fn item(
        &mut self,
        value: &Value,
        open: &mut LuaStack,
        levels: &mut Vec<Level>,
        stack: usize,
    ) -> Result<(), Failure> {
        match value {
            Value::String(s) => self.string(&s.as_bytes()),
            Value::Integer(i) => self.number(*i as f64, value)?,
            Value::Number(n) => self.number(*n, value)?,
            Value::Boolean(true) => self.out.extend_from_slice(b"true"),
            Value::Boolean(false) => self.out.extend_from_slice(b"false"),
            Value::Nil => self.out.extend_from_slice(b"null"),
            Value::LightUserData(p) if p.0.is_null() => self.out.extend_from_slice(b"null"),
            Value::Table(table) => {
                let depth = i32::try_from(levels.len() + 1).unwrap_or(i32::MAX);
                // Room for a key, a value and an error message.
                if depth > self.config.encode_max_depth || stack + 3 > LUAI_MAXCSTACK {
                    return Err(Failure::error(format!(
                        "Cannot serialise, excessive nesting ({depth})"
                    )));
                }
                if let Some(len) = self.array_length(table, value)? {
                    self.out.push(b'[');
                    open.push(table.clone())?;
                    levels.push(Level::Array {
                        len,
                        next: 1,
                        stack,
                    });
                } else {
                    self.out.push(b'{');
                    open.push(table.clone())?;
                    let mut count = 0;
                    for pair in table.pairs::<Value, Value>() {
                        let (key, _) = pair.map_err(lua_failure)?;
                        open.push(key)?;
                        count += 1;
                    }
                    levels.push(Level::Object {
                        count,
                        next: 0,
                        stack,
                    });
                }
            }
            _ => return Err(cannot(value, "type not supported")),
        }
        Ok(())
    }

    /// The length of `table` as an array, `None` for an object (keys
    /// other than positive integers, no keys, or excessively sparse and
    /// converted).
    fn array_length(&self, table: &Table, value: &Value) -> Result<Option<i32>, Failure> {
        let mut max: i32 = 0;
        let mut items: i32 = 0;
        for pair in table.pairs::<Value, Value>() {
            let (key, _) = pair.map_err(lua_failure)?;
            let k = match key {
                Value::Integer(i) => i as f64,
                Value::Number(n) => n,
                _ => return Ok(None),
            };
            if k == 0.0 || k.floor() != k || k < 1.0 {
                return Ok(None);
            }
            if k > f64::from(max) {
                max = c_i32(k);
            }
            items = items.wrapping_add(1);
        }
        let config = self.config;
        if config.sparse_ratio > 0
            && max > items.wrapping_mul(config.sparse_ratio)
            && max > config.sparse_safe
        {
            if !config.sparse_convert {
                return Err(cannot(value, "excessively sparse array"));
            }
            return Ok(None);
        }
        Ok((max > 0).then_some(max))
    }

    fn quoted_number(&mut self, n: f64, key: &Value) -> Result<(), Failure> {
        self.out.push(b'"');
        self.number(n, key)?;
        self.out.extend_from_slice(b"\":");
        Ok(())
    }

    fn number(&mut self, n: f64, value: &Value) -> Result<(), Failure> {
        let invalid = n.is_nan() || n.is_infinite();
        match self.config.encode_invalid_numbers {
            InvalidNumbers::Refuse if invalid => {
                return Err(cannot(value, "must not be NaN or Inf"));
            }
            InvalidNumbers::Write if n.is_nan() => {
                self.out.extend_from_slice(b"nan");
                return Ok(());
            }
            InvalidNumbers::Null if invalid => {
                self.out.extend_from_slice(b"null");
                return Ok(());
            }
            _ => {}
        }
        let precision = usize::try_from(self.config.number_precision).unwrap_or(14);
        self.out
            .extend_from_slice(format_g(n, precision).as_bytes());
        Ok(())
    }

    /// A string in quotes; control characters, `"`, `\`, `/` and DEL
    /// escaped, other bytes as they are.
    fn string(&mut self, bytes: &[u8]) {
        self.out.reserve(bytes.len() + 2);
        self.out.push(b'"');
        for &b in bytes {
            match b {
                b'"' => self.out.extend_from_slice(b"\\\""),
                b'\\' => self.out.extend_from_slice(b"\\\\"),
                b'/' => self.out.extend_from_slice(b"\\/"),
                0x08 => self.out.extend_from_slice(b"\\b"),
                b'\t' => self.out.extend_from_slice(b"\\t"),
                b'\n' => self.out.extend_from_slice(b"\\n"),
                0x0c => self.out.extend_from_slice(b"\\f"),
                b'\r' => self.out.extend_from_slice(b"\\r"),
                0..=0x1f | 0x7f => self.out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
                _ => self.out.push(b),
            }
        }
        self.out.push(b'"');
    }
}
