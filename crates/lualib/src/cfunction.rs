//! Library functions that behave, seen from Lua, as C functions do.
//!
//! Redis' libraries are C functions: an error they raise is a plain
//! string, prefixed with the position of the Lua code that called them
//! (`luaL_error`), or `bad argument #n to 'name' (...)` with the name the
//! caller used (`luaL_argerror`). An mlua callback's error would reach a
//! script as an mlua error object instead. So each library function is a
//! Rust closure wrapped in a small C closure ([`shim`]): the closure
//! returns a kind, then its results (or, for many results, their count
//! and a table holding them) or its failure's message and argument; the
//! shim returns the results or raises the error with Lua's own auxiliary
//! functions, exactly as the C library would.

use std::ffi::c_int;

use mlua::{ffi, Function, Lua, MultiValue, Value};

use crate::failure::Failure;
use crate::luastack::LuaStack;

/// What a library function returns.
pub(crate) enum Results {
    /// A few values.
    Values(MultiValue),
    /// Values kept in a Lua table, as many as a C function may return
    /// (mlua would hold a handle per value).
    Stack(LuaStack),
}

/// What a library function returns: its results, or a failure.
pub(crate) type Outcome = Result<Results, Failure>;

const KIND_VALUES: i64 = 0;
const KIND_STACK: i64 = 1;
const KIND_ERROR: i64 = 2;
const KIND_ARG: i64 = 3;
const KIND_BARE: i64 = 4;

/// A Lua function calling `f` with its arguments, raising `f`'s failures
/// as Redis' C libraries raise theirs.
pub(crate) fn function<F>(lua: &Lua, f: F) -> mlua::Result<Function>
where
    F: Fn(&Lua, &Args) -> Outcome + Send + 'static,
{
    let inner = lua.create_function(move |lua, args: MultiValue| {
        let args = Args(args.into_iter().collect());
        let mut out = MultiValue::new();
        let outcome = f(lua, &args).and_then(|results| match results {
            Results::Values(values) => Ok(Ok(values)),
            Results::Stack(stack) => {
                let n = stack.len();
                stack.into_table().map(|table| Err((n, table)))
            }
        });
        match outcome {
            Ok(Ok(values)) => {
                out.push_back(Value::Integer(KIND_VALUES));
                out.extend(values);
            }
            Ok(Err((n, table))) => {
                out.push_back(Value::Integer(KIND_STACK));
                out.push_back(Value::Integer(n));
                out.push_back(Value::Table(table));
            }
            Err(failure) => {
                let (kind, message, n) = match failure {
                    Failure::Error(m) => (KIND_ERROR, m, 0),
                    Failure::Arg(n, m) => (KIND_ARG, m, n),
                    Failure::Bare(m) => (KIND_BARE, m, 0),
                };
                out.push_back(Value::Integer(kind));
                out.push_back(Value::String(lua.create_string(message)?));
                out.push_back(Value::Integer(i64::from(n)));
            }
        }
        Ok(out)
    })?;
    // SAFETY: pushes one C closure over the one value on the stack.
    unsafe { lua.exec_raw(inner, |state| ffi::lua_pushcclosure(state, shim, 1)) }
}

/// The C closure around a library function (its upvalue): calls it with
/// the arguments, then returns its results or raises its failure.
unsafe extern "C-unwind" fn shim(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: `state` is the running C function's; the upvalue is the
    // Rust function `function` made, which returns the protocol above.
    // Nothing here owns a Rust value when `lua_error` unwinds.
    unsafe {
        let nargs = ffi::lua_gettop(state);
        // A C function has LUA_MINSTACK free slots: room for the upvalue.
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, nargs, ffi::LUA_MULTRET);
        let kind = ffi::lua_tointeger(state, 1);
        if kind == KIND_VALUES {
            return ffi::lua_gettop(state) - 1;
        }
        if kind == KIND_STACK {
            // The table alone at the bottom, its values above it.
            let n = ffi::lua_tointeger(state, 2) as c_int;
            ffi::lua_settop(state, 3);
            ffi::lua_replace(state, 1);
            ffi::lua_settop(state, 1);
            if ffi::lua_checkstack(state, n) == 0 {
                ffi::luaL_where(state, 1);
                ffi::lua_pushstring(state, c"stack overflow (too many results)".as_ptr());
                ffi::lua_concat(state, 2);
                ffi::lua_error(state);
            }
            for i in 1..=n {
                ffi::lua_rawgeti(state, 1, i.into());
            }
            return n;
        }
        if kind == KIND_ARG {
            let n = ffi::lua_tointeger(state, 3) as c_int;
            let message = ffi::lua_tolstring(state, 2, std::ptr::null_mut());
            ffi::luaL_argerror(state, n, message);
            unreachable!("luaL_argerror returns only by raising")
        }
        if kind == KIND_ERROR {
            ffi::luaL_where(state, 1);
            ffi::lua_pushvalue(state, 2);
            ffi::lua_concat(state, 2);
        } else {
            ffi::lua_pushvalue(state, 2);
        }
        ffi::lua_error(state)
    }
}

/// The arguments of a call, read as Lua's auxiliary library reads them
/// (1-based, as in the C API).
pub(crate) struct Args(Vec<Value>);

impl Args {
    /// These arguments with `value` pushed after them, as a C function
    /// pushes a value on its stack (which later argument numbers reach).
    pub(crate) fn with_pushed(&self, value: Value) -> Args {
        let mut values = self.0.clone();
        values.push(value);
        Args(values)
    }

    /// How many arguments were passed (`lua_gettop`).
    pub(crate) fn count(&self) -> usize {
        self.0.len()
    }

    /// Argument `n`, `None` when absent.
    pub(crate) fn get(&self, n: usize) -> Option<&Value> {
        n.checked_sub(1).and_then(|i| self.0.get(i))
    }

    /// Whether argument `n` is absent or nil (`lua_isnoneornil`).
    pub(crate) fn is_none_or_nil(&self, n: usize) -> bool {
        matches!(self.get(n), None | Some(Value::Nil))
    }

    /// The type name Lua's error messages use (`luaL_typename`).
    pub(crate) fn type_name(&self, n: usize) -> &'static str {
        self.get(n).map_or("no value", type_name)
    }

    /// `luaL_typerror`: argument `n` is not a `expected`.
    pub(crate) fn type_error(&self, n: usize, expected: &str) -> Failure {
        Failure::arg(
            arg_index(n),
            format!("{expected} expected, got {}", self.type_name(n)),
        )
    }

    /// `lua_tonumber`: a number, or a string Lua converts to one.
    pub(crate) fn to_number(&self, lua: &Lua, n: usize) -> Option<f64> {
        to_number(lua, self.get(n)?)
    }

    /// `luaL_checknumber`.
    pub(crate) fn check_number(&self, lua: &Lua, n: usize) -> Result<f64, Failure> {
        self.to_number(lua, n)
            .ok_or_else(|| self.type_error(n, "number"))
    }

    /// `luaL_checkinteger`: the number truncated as C casts it.
    pub(crate) fn check_integer(&self, lua: &Lua, n: usize) -> Result<i64, Failure> {
        self.check_number(lua, n).map(c_i64)
    }

    /// `luaL_optinteger`: `default` when absent or nil.
    pub(crate) fn opt_integer(&self, lua: &Lua, n: usize, default: i64) -> Result<i64, Failure> {
        if self.is_none_or_nil(n) {
            Ok(default)
        } else {
            self.check_integer(lua, n)
        }
    }

    /// `luaL_checklstring`: the bytes of a string, or of a number as Lua
    /// writes it.
    pub(crate) fn check_bytes(&self, lua: &Lua, n: usize) -> Result<Vec<u8>, Failure> {
        let bytes = match self.get(n) {
            Some(Value::String(s)) => Some(s.as_bytes().to_vec()),
            Some(v @ (Value::Integer(_) | Value::Number(_))) => lua
                .coerce_string(v.clone())
                .ok()
                .flatten()
                .map(|s| s.as_bytes().to_vec()),
            _ => None,
        };
        bytes.ok_or_else(|| self.type_error(n, "string"))
    }
}

/// The argument number in an error message.
fn arg_index(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// `lua_tonumber` of a value.
pub(crate) fn to_number(lua: &Lua, value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => Some(*n),
        Value::Integer(i) => Some(*i as f64),
        Value::String(_) => lua.coerce_number(value.clone()).ok().flatten(),
        _ => None,
    }
}

/// Lua's name for the type of `value` (`lua_typename`).
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// A double converted to a 64-bit integer as C does on x86-64
/// (`cvttsd2si`): truncated, and out of range or NaN gives `i64::MIN`.
pub(crate) fn c_i64(d: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

/// A double converted to a 32-bit `int` as C does on x86-64: truncated,
/// and out of range or NaN gives `i32::MIN`.
pub(crate) fn c_i32(d: f64) -> i32 {
    if !(d > -2_147_483_649.0 && d < 2_147_483_648.0) {
        i32::MIN
    } else {
        d as i32
    }
}

/// Results from values.
pub(crate) fn results(values: impl IntoIterator<Item = Value>) -> Outcome {
    Ok(Results::Values(values.into_iter().collect()))
}
