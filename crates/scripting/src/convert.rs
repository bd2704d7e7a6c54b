//! Lua values to replies and back, by Redis 7.0's rules (script_lua.c's
//! `luaReplyToRedisReply` and `redisProtocolToLuaType_*`).
//!
//! A script's return value: a string is a bulk string; a number is an
//! integer, truncated; `true` is `1` (RESP3: `#t`) and `false` is nil
//! (`#f`); a table is `{err=…}` (an error), `{ok=…}` (a status),
//! `{double=…}`, `{big_number=…}`, `{verbatim_string=…}`, `{map=…}` or
//! `{set=…}`, else an array of its elements from 1 up to the first nil;
//! anything else is nil.
//!
//! A command's reply in a script: an integer is a number, a bulk string
//! a string, a null bulk or null array `false`, a status `{ok=…}`, an
//! error `{err=…}`, an array a table; under RESP3 a map `{map=…}`, a set
//! `{set=…}` (members set to `true`), a double `{double=…}`, a big number
//! `{big_number=…}`, a boolean a boolean, and a null `nil`.

use mlua::{ffi, Lua, Table, Value};

use crate::value::RespValue;

/// Nesting deeper than this ends in Redis' `reached lua stack limit`.
pub const MAX_DEPTH: usize = 1000;

/// Converts a script's return value (or an element of it). `resp3`: the
/// script's protocol (`redis.setresp`), which decides booleans.
pub fn lua_to_resp(value: &Value, resp3: bool) -> RespValue {
    to_resp(value, resp3, 0)
}

fn to_resp(value: &Value, resp3: bool, depth: usize) -> RespValue {
    if depth > MAX_DEPTH {
        return RespValue::Error("ERR reached lua stack limit".into());
    }
    match value {
        Value::String(s) => RespValue::Bulk(s.as_bytes().to_vec()),
        Value::Boolean(b) if resp3 => RespValue::Bool(*b),
        Value::Boolean(true) => RespValue::Integer(1),
        Value::Boolean(false) => RespValue::Nil,
        Value::Integer(n) => RespValue::Integer(*n),
        Value::Number(n) => RespValue::Integer(truncate(*n)),
        Value::Table(t) => table_to_resp(t, resp3, depth),
        _ => RespValue::Nil,
    }
}

/// C's `(long long)` of a double as Redis computes it on x86-64 (the
/// `cvttsd2si` instruction): truncated toward zero, and the "integer
/// indefinite" value, `i64::MIN`, for a NaN or a number outside the range
/// of `i64` (so a script returning `2^63`, `1/0` or `0/0` gets
/// -9223372036854775808, as from redis-server).
fn truncate(n: f64) -> i64 {
    // 2^63: the first double past i64::MAX; -2^63 is i64::MIN itself.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if n.is_nan() || !(-LIMIT..LIMIT).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

fn text(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Integer(n) => Some(n.to_string().into_bytes()),
        Value::Number(n) => Some(lua_number_text(*n).into_bytes()),
        _ => None,
    }
}

/// Lua 5.1's `tostring` of a number (`%.14g`).
pub fn lua_number_text(n: f64) -> String {
    if n.is_nan() {
        return redcodec_codec::number::nan_text(n).into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if n == n.trunc() && n.abs() < 1e15 {
        return format!("{}", n as i64);
    }
    let sci = format!("{n:.13e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..14).contains(&exp) {
        let m = trim_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (13 - exp).max(0) as usize;
        trim_zeros(&format!("{n:.decimals$}")).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Replaces CR and LF by spaces, as Redis does in status lines and errors.
fn one_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .chars()
        .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
        .collect()
}

fn field(t: &Table, name: &str) -> Value {
    t.raw_get::<Value>(name).unwrap_or(Value::Nil)
}

fn table_to_resp(t: &Table, resp3: bool, depth: usize) -> RespValue {
    if let Value::String(e) = field(t, "err") {
        return RespValue::Error(one_line(&e.as_bytes()));
    }
    if let Value::String(s) = field(t, "ok") {
        return RespValue::Status(one_line(&s.as_bytes()));
    }
    match field(t, "double") {
        Value::Number(d) => return RespValue::Double(d),
        Value::Integer(d) => return RespValue::Double(d as f64),
        _ => {}
    }
    if let Value::String(s) = field(t, "big_number") {
        return RespValue::BigNumber(one_line(&s.as_bytes()));
    }
    if let Value::Table(v) = field(t, "verbatim_string") {
        if let (Value::String(format), Value::String(s)) =
            (field(&v, "format"), field(&v, "string"))
        {
            return RespValue::Verbatim(
                String::from_utf8_lossy(&format.as_bytes()).into_owned(),
                s.as_bytes().to_vec(),
            );
        }
    }
    if let Value::Table(m) = field(t, "map") {
        let pairs = m
            .pairs::<Value, Value>()
            .filter_map(Result::ok)
            .map(|(k, v)| (to_resp(&k, resp3, depth + 1), to_resp(&v, resp3, depth + 1)))
            .collect();
        return RespValue::Map(pairs);
    }
    if let Value::Table(s) = field(t, "set") {
        let members = s
            .pairs::<Value, Value>()
            .filter_map(Result::ok)
            .map(|(k, _)| to_resp(&k, resp3, depth + 1))
            .collect();
        return RespValue::Set(members);
    }
    let mut items = Vec::new();
    for i in 1.. {
        let v = t.raw_get::<Value>(i).unwrap_or(Value::Nil);
        if v.is_nil() {
            break;
        }
        let item = to_resp(&v, resp3, depth + 1);
        let stop = depth + 1 > MAX_DEPTH;
        items.push(item);
        if stop {
            break;
        }
    }
    RespValue::Array(items)
}

/// Converts a command's reply into what the script sees (through
/// [`push_resp`], the one conversion).
pub fn resp_to_lua(lua: &Lua, reply: &RespValue) -> mlua::Result<Value> {
    // SAFETY: `push_resp` only pushes onto the stack it is given (one
    // value, or what a failed conversion left, which is reported).
    let (value, whole) = unsafe {
        lua.exec_raw::<(Value, bool)>((), |state| {
            let whole = push_resp(state, reply);
            if !whole {
                ffi::lua_settop(state, 0);
                ffi::lua_pushnil(state);
            }
            ffi::lua_pushboolean(state, std::os::raw::c_int::from(whole));
        })?
    };
    if !whole {
        return Err(mlua::Error::StackError);
    }
    Ok(value)
}

/// Pushes what a script sees of `reply` onto `state`'s stack (one value).
/// False, with part of it pushed, when the reply nests deeper than the
/// Lua stack allows. A map pair whose key is RESP3's null (which no
/// table can hold) is left out.
///
/// # Safety
/// `state` is a live Lua state. Under a memory limit an allocation here
/// may raise a Lua error: call it with the limit lifted, or protected.
pub unsafe fn push_resp(state: *mut ffi::lua_State, reply: &RespValue) -> bool {
    if ffi::lua_checkstack(state, 4) == 0 {
        return false;
    }
    match reply {
        RespValue::Integer(n) => ffi::lua_pushnumber(state, *n as f64),
        RespValue::Bulk(b) => push_bytes(state, b),
        RespValue::Nil | RespValue::NilArray => ffi::lua_pushboolean(state, 0),
        RespValue::Null => ffi::lua_pushnil(state),
        RespValue::Bool(b) => ffi::lua_pushboolean(state, std::os::raw::c_int::from(*b)),
        RespValue::Status(s) => {
            ffi::lua_createtable(state, 0, 1);
            set_field(state, c"ok", |state| push_bytes(state, s.as_bytes()));
        }
        RespValue::Error(e) => push_error_table(state, &error_text(e), true),
        RespValue::Array(items) => {
            // Sized up front unless a RESP3 null leaves a hole: Redis fills
            // a new empty table, and where its elements stop (`#`) then
            // depends on how the table grew, as it does here.
            let holes = items.iter().any(|i| matches!(i, RespValue::Null));
            ffi::lua_createtable(state, if holes { 0 } else { c_len(items.len()) }, 0);
            for (i, item) in items.iter().enumerate() {
                if !push_resp(state, item) {
                    return false;
                }
                ffi::lua_rawseti_(state, -2, c_len(i + 1));
            }
        }
        RespValue::Map(pairs) => {
            ffi::lua_createtable(state, 0, c_len(pairs.len()));
            for (k, v) in pairs {
                if matches!(k, RespValue::Null) {
                    continue;
                }
                if !push_resp(state, k) || !push_resp(state, v) {
                    return false;
                }
                ffi::lua_rawset(state, -3);
            }
            wrap(state, c"map");
        }
        RespValue::Set(items) => {
            ffi::lua_createtable(state, 0, c_len(items.len()));
            for item in items {
                if matches!(item, RespValue::Null) {
                    continue;
                }
                if !push_resp(state, item) {
                    return false;
                }
                ffi::lua_pushboolean(state, 1);
                ffi::lua_rawset(state, -3);
            }
            wrap(state, c"set");
        }
        RespValue::Double(d) => {
            ffi::lua_pushnumber(state, *d);
            wrap(state, c"double");
        }
        RespValue::BigNumber(n) => {
            push_bytes(state, n.as_bytes());
            wrap(state, c"big_number");
        }
        RespValue::Verbatim(format, s) => {
            ffi::lua_createtable(state, 0, 2);
            set_field(state, c"string", |state| push_bytes(state, s));
            set_field(state, c"format", |state| {
                push_bytes(state, format.as_bytes());
            });
            wrap(state, c"verbatim_string");
        }
    }
    true
}

/// Pushes `{err = text}` (and `ignore_error_stats_update = true` when
/// `counted`: a command's error reply, already in the error statistics).
///
/// # Safety
/// As [`push_resp`].
pub unsafe fn push_error_table(state: *mut ffi::lua_State, text: &str, counted: bool) {
    ffi::lua_createtable(state, 0, 2);
    set_field(state, c"err", |state| push_bytes(state, text.as_bytes()));
    if counted {
        set_field(state, c"ignore_error_stats_update", |state| {
            ffi::lua_pushboolean(state, 1);
        });
    }
}

unsafe fn push_bytes(state: *mut ffi::lua_State, bytes: &[u8]) {
    ffi::lua_pushlstring_(state, bytes.as_ptr().cast(), bytes.len());
}

/// Sets `name` of the table on top to what `push` pushes.
unsafe fn set_field(
    state: *mut ffi::lua_State,
    name: &std::ffi::CStr,
    push: impl FnOnce(*mut ffi::lua_State),
) {
    ffi::lua_pushstring_(state, name.as_ptr());
    push(state);
    ffi::lua_rawset(state, -3);
}

/// Replaces the value on top by `{name = value}`.
unsafe fn wrap(state: *mut ffi::lua_State, name: &std::ffi::CStr) {
    ffi::lua_createtable(state, 0, 1);
    ffi::lua_pushstring_(state, name.as_ptr());
    ffi::lua_pushvalue(state, -3);
    ffi::lua_rawset(state, -3);
    ffi::lua_replace(state, -2);
}

/// A length as Lua's C API takes it (saturating: only a size hint).
pub(crate) fn c_len(n: usize) -> std::os::raw::c_int {
    std::os::raw::c_int::try_from(n).unwrap_or(std::os::raw::c_int::MAX)
}

/// `luaPushErrorBuff`'s text for an error without its leading `-`: a
/// text without a space is given the code `ERR`; trailing CR/LF go.
pub fn error_text(text: &str) -> String {
    let text = text.trim_end_matches(['\r', '\n']);
    if text.contains(' ') {
        text.to_string()
    } else {
        format!("ERR {text}")
    }
}

/// Text of a value as Lua's `tostring` gives it for strings and numbers.
pub fn value_text(value: &Value) -> Option<Vec<u8>> {
    text(value)
}
