//! One Lua 5.1 state as Redis 7.0 sets it up for scripts: the base,
//! table, string and math libraries, the libraries Redis adds (cjson,
//! cmsgpack, bit, struct: [`load_libraries`]), the `redis` table, Redis'
//! `math.random`, no `os`, `io`, `loadfile`, `dofile` or `print`, and the
//! globals locked (prelude.lua).
//!
//! [`Sandbox::run`] runs a compiled script or function with a
//! [`CommandRunner`] behind `redis.call`, under the error handler that
//! gives Redis' `… script: <name>, on @user_script:<line>.` texts, a hook
//! that marks the run busy and stops it when killed, and a memory limit
//! that turns an allocation past it into an error.

use std::sync::Arc;

use mlua::chunk::ChunkMode;
use mlua::{Function, HookTriggers, Lua, LuaOptions, MultiValue, StdLib, Table, Value, VmState};
use parking_lot::Mutex;
use sha1::{Digest, Sha1};

use crate::control::{RunControl, KILLED};
use crate::convert::{argument, lua_to_resp, resp_to_lua, value_text};
use crate::rand48::Rand48;
use crate::runner::CommandRunner;
use crate::value::RespValue;

/// The Redis version scripts see (`redis.REDIS_VERSION`).
pub const REDIS_VERSION: &str = "7.0.15";
/// `redis.REDIS_VERSION_NUM`: `0x0007000f`.
pub const REDIS_VERSION_NUM: i64 = 0x0007_000f;

/// Memory a Lua state may hold by default: a script that builds a bigger
/// table gets `not enough memory` instead of the server being killed.
pub const DEFAULT_MEMORY_LIMIT: usize = 1 << 30;

/// The hook runs every this many Lua instructions.
const HOOK_EVERY: u32 = 10_000;

/// Where the libraries Redis loads besides Lua's own (cjson, cmsgpack,
/// bit, struct) are registered as globals, before the globals are
/// locked.
pub fn load_libraries(lua: &Lua) -> mlua::Result<()> {
    redcodec_lualib::load(lua)
}

/// The registry field holding prelude.lua's `call_helper`.
const CALL_HELPER: &str = "redcodec.call";

/// `redis.call`: raises the error table a failed command gives.
unsafe extern "C-unwind" fn redis_call(state: *mut mlua::ffi::lua_State) -> std::os::raw::c_int {
    call_c(state, true)
}

/// `redis.pcall`: returns the error table a failed command gives.
unsafe extern "C-unwind" fn redis_pcall(state: *mut mlua::ffi::lua_State) -> std::os::raw::c_int {
    call_c(state, false)
}

/// Calls `call_helper` with the arguments, which returns the reply and
/// whether it is an error; raises it when `raise`. A C function, as in
/// Redis: a script's tail call to it keeps the script's frame.
unsafe fn call_c(state: *mut mlua::ffi::lua_State, raise: bool) -> std::os::raw::c_int {
    use mlua::ffi;
    // The arguments go in one table: thousands of them (an `unpack` of
    // a big table) must not pass through the C stack limit again.
    let n = ffi::lua_gettop(state);
    ffi::lua_createtable(state, n, 0);
    ffi::lua_insert(state, 1);
    for i in (1..=n).rev() {
        ffi::lua_rawseti(state, 1, ffi::lua_Integer::from(i));
    }
    // The helper's name, NUL-terminated.
    ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, c"redcodec.call".as_ptr());
    ffi::lua_insert(state, 1);
    ffi::lua_pushinteger(state, ffi::lua_Integer::from(n));
    ffi::lua_call(state, 2, 2);
    let is_err = ffi::lua_toboolean(state, -1) != 0;
    ffi::lua_settop(state, -2);
    if raise && is_err {
        ffi::lua_error(state);
    }
    1
}

/// The hook every [`HOOK_EVERY`] instructions: marks the run busy past
/// the threshold; once the run is killed (or a FUNCTION LOAD overdue) it
/// raises an error at every line, so that a `pcall` in a loop cannot keep
/// the script alive (as Redis' `luaMaskCountHook` does).
fn install_hook(lua: &Lua, control: &Arc<RunControl>) -> mlua::Result<()> {
    let control = control.clone();
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_EVERY),
        move |lua, _| {
            if control.tick() || control.load_overdue() {
                lua.set_hook(HookTriggers::EVERY_LINE, |_, _| {
                    Err(mlua::Error::runtime(KILLED))
                })?;
                return Err(mlua::Error::runtime(KILLED));
            }
            Ok(VmState::Continue)
        },
    )
}

/// Lowercase hex SHA1 of `bytes` (script names, `redis.sha1hex`).
pub fn sha1_hex(bytes: &[u8]) -> String {
    let digest = Sha1::digest(bytes);
    let mut out = String::with_capacity(40);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// What `redis.log` writes to: the level (0 debug … 3 warning) and the
/// text.
pub type Logger = Arc<dyn Fn(u8, &str) + Send + Sync>;

/// A sandboxed Lua state.
pub struct Sandbox {
    lua: Lua,
    parts: Table,
    ctx: Table,
    run: Function,
    set_args: Function,
    env: Table,
    control: Arc<RunControl>,
    /// Runs since the collector's last step.
    runs: std::sync::atomic::AtomicU32,
}

/// Redis' `LUA_GC_CYCLE_PERIOD`: every this many runs, the collector
/// steps this many kilobytes (`lua_gc(lua, LUA_GCSTEP, 50)`, Redis 7.0's
/// `luaCallFunction`), besides the steps Lua takes on its own.
const GC_EVERY: u32 = 50;

/// One run: what errors call it (the SHA1, or the function's name), its
/// keys and arguments, whether it is a function (else an EVAL script),
/// and whether it may not write.
#[derive(Clone, Copy, Debug)]
pub struct Invocation<'a> {
    /// The script's SHA1 or the function's name.
    pub name: &'a str,
    /// KEYS.
    pub keys: &'a [Vec<u8>],
    /// ARGV.
    pub args: &'a [Vec<u8>],
    /// A function (FCALL) rather than an EVAL script.
    pub as_function: bool,
    /// Writes are refused.
    pub read_only: bool,
}

/// How a run ended.
pub enum Outcome {
    /// The value the script returned, converted.
    Value(RespValue),
    /// The script raised an error: Redis' full text.
    Error(String),
}

impl Outcome {
    /// The reply to the client.
    pub fn into_reply(self) -> RespValue {
        match self {
            Outcome::Value(v) => v,
            Outcome::Error(e) => RespValue::Error(e),
        }
    }
}

impl Sandbox {
    /// A fresh state; `rand` is the generator behind `math.random`.
    pub fn new(
        control: Arc<RunControl>,
        rand: Arc<Mutex<Rand48>>,
        logger: Logger,
    ) -> mlua::Result<Sandbox> {
        // SAFETY: the debug library is needed by the error handler; the
        // prelude keeps it in a local and removes the global before any
        // script runs.
        let lua = unsafe {
            Lua::unsafe_new_with(
                StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG,
                LuaOptions::new(),
            )
        };
        let native = lua.create_table()?;
        native.raw_set(
            "sha1hex",
            lua.create_function(|_, v: Value| Ok(sha1_hex(&value_text(&v).unwrap_or_default())))?,
        )?;
        native.raw_set(
            "log",
            lua.create_function(move |_, (level, text): (u8, mlua::LuaString)| {
                logger(level, &text.to_string_lossy());
                Ok(())
            })?,
        )?;
        let r = rand.clone();
        native.raw_set(
            "rand",
            lua.create_function(move |_, ()| Ok(r.lock().next_unit()))?,
        )?;
        native.raw_set(
            "srand",
            lua.create_function(move |_, seed: f64| {
                rand.lock().seed(seed as i64 as i32);
                Ok(())
            })?,
        )?;
        native.raw_set(
            "flag",
            lua.create_function(|_, name: String| {
                let lower = name.to_ascii_lowercase();
                Ok(crate::flags::FLAG_NAMES
                    .iter()
                    .find(|f| **f == lower)
                    .map(|f| (*f).to_string()))
            })?,
        )?;
        native.raw_set(
            "check_function",
            lua.create_function(|_, (name, taken): (mlua::LuaString, Table)| {
                let bytes = name.as_bytes();
                if bytes.is_empty()
                    || !bytes.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    return Ok(Some("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long".to_string()));
                }
                if taken.raw_get::<bool>(name).unwrap_or(false) {
                    return Ok(Some("Function already exists in the library".to_string()));
                }
                Ok(None)
            })?,
        )?;
        // SAFETY: the two functions only use the Lua C API on their own
        // stack (see `call_c`).
        unsafe {
            native.raw_set("call", lua.create_c_function(redis_call)?)?;
            native.raw_set("pcall", lua.create_c_function(redis_pcall)?)?;
        }
        native.raw_set("version", REDIS_VERSION)?;
        native.raw_set("version_num", REDIS_VERSION_NUM)?;
        let parts: Table = lua
            .load(include_str!("prelude.lua"))
            .set_name("=redcodec")
            .call(native)?;
        lua.set_named_registry_value(CALL_HELPER, parts.raw_get::<Function>("call_helper")?)?;
        load_libraries(&lua)?;
        let finish: Function = parts.raw_get("finish")?;
        let env: Table = finish.call(())?;
        install_hook(&lua, &control)?;
        lua.set_memory_limit(DEFAULT_MEMORY_LIMIT)?;
        lua.gc_collect()?;
        Ok(Sandbox {
            runs: std::sync::atomic::AtomicU32::new(0),
            ctx: parts.raw_get("ctx")?,
            run: parts.raw_get("run")?,
            set_args: parts.raw_get("set_args")?,
            parts,
            env,
            lua,
            control,
        })
    }

    /// What prelude.lua returned (its entry points).
    pub fn prelude(&self) -> &Table {
        &self.parts
    }

    /// The Lua state.
    pub fn lua(&self) -> &Lua {
        &self.lua
    }

    /// The environment scripts run in (the locked globals).
    pub fn env(&self) -> &Table {
        &self.env
    }

    /// Sets the memory the state may hold.
    pub fn set_memory_limit(&self, bytes: usize) -> mlua::Result<()> {
        self.lua.set_memory_limit(bytes).map(|_| ())
    }

    /// Memory the state holds (INFO's `used_memory_lua`).
    pub fn used_memory(&self) -> usize {
        self.lua.used_memory()
    }

    /// Compiles `code` as a chunk named `name` (`@user_script`), running
    /// in the locked globals; the error is Lua's message.
    pub fn compile(&self, code: &[u8], name: &str) -> Result<Function, String> {
        self.lua
            .load(code)
            .set_name(name)
            .set_mode(ChunkMode::Text)
            .set_environment(self.env.clone())
            .into_function()
            .map_err(|e| match e {
                mlua::Error::SyntaxError { message, .. } => message,
                other => other.to_string(),
            })
    }

    /// Runs `f` as `inv` says: an EVAL script (KEYS and ARGV become
    /// globals) or a function (called with the keys and args tables).
    pub fn run(
        &self,
        runner: &mut dyn CommandRunner,
        f: &Function,
        inv: &Invocation<'_>,
    ) -> Outcome {
        let name = inv.name;
        self.control.start(!inv.as_function);
        let outcome = self.run_inner(runner, f, inv);
        let killed = self.control.killed();
        self.control.end();
        if killed {
            let _ = install_hook(&self.lua, &self.control);
        }
        let runs = self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if runs >= GC_EVERY {
            self.runs.store(0, std::sync::atomic::Ordering::Relaxed);
            gc_step(&self.lua, GC_EVERY);
        }
        let _ = self.ctx.raw_set("resp", 2);
        match outcome {
            _ if killed => Outcome::Error(format!("{KILLED} script: {name}")),
            Ok(o) => o,
            Err(e) => Outcome::Error(format!(
                "ERR Error running script {name}, {}",
                first_line(&e.to_string())
            )),
        }
    }

    fn run_inner(
        &self,
        runner: &mut dyn CommandRunner,
        f: &Function,
        inv: &Invocation<'_>,
    ) -> mlua::Result<Outcome> {
        let Invocation {
            name,
            keys,
            args,
            as_function,
            read_only,
        } = *inv;
        let lua = &self.lua;
        let (keys_t, args_t) = unlimited(lua, || -> mlua::Result<_> {
            self.ctx.raw_set("resp", 2)?;
            self.ctx.raw_set("repl", 3)?;
            Ok((strings_table(lua, keys)?, strings_table(lua, args)?))
        })?;
        let (ok, value, resp3) = lua.scope(|scope| {
            let call = scope.create_function_mut(|lua, mv: MultiValue| {
                unlimited(lua, || call_from_script(lua, runner, mv, read_only))
            })?;
            unlimited(lua, || self.ctx.raw_set("call", call))?;
            let result = if as_function {
                self.run.call::<(bool, Value)>((f, keys_t, args_t))
            } else {
                self.set_args.call::<()>((keys_t, args_t))?;
                self.run.call::<(bool, Value)>(f)
            };
            unlimited(lua, || {
                self.ctx.raw_set("call", Value::Nil)?;
                let resp3 = self.ctx.raw_get::<i64>("resp").unwrap_or(2) == 3;
                result.map(|(ok, v)| (ok, v, resp3))
            })
        })?;
        unlimited(lua, || {
            if ok {
                return Ok(Outcome::Value(lua_to_resp(&value, resp3)));
            }
            Ok(Outcome::Error(error_reply(&value, name)))
        })
    }

    /// Puts back the counting hook (after a stop switched it to every line).
    pub fn reset_hook(&self) {
        let _ = install_hook(&self.lua, &self.control);
    }

    /// Runs a full garbage collection (after SCRIPT FLUSH).
    pub fn collect(&self) {
        let _ = self.lua.gc_collect();
    }
}

/// Runs `f`, redcodec's own work on the state (a run's keys and
/// arguments, a command's reply handed to the script, the script's value
/// read back), with the state's memory limit lifted. mlua makes its API
/// calls unprotected where no limit is set; under a limit it wraps each
/// in a protected call with a new C closure, which was a third of an
/// EVALSHA's instructions. Script code never runs so: what `f` allocates
/// still counts, and the script's next allocation past the limit fails
/// as before.
fn unlimited<R>(lua: &Lua, f: impl FnOnce() -> R) -> R {
    struct Restore<'a>(&'a Lua, usize);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let _ = self.0.set_memory_limit(self.1);
        }
    }
    let _restore = Restore(lua, lua.set_memory_limit(0).unwrap_or(0));
    f()
}

/// One step of Lua's collector covering `kbytes` (`LUA_GCSTEP`).
fn gc_step(lua: &Lua, kbytes: u32) {
    let kbytes = std::os::raw::c_int::try_from(kbytes).unwrap_or(std::os::raw::c_int::MAX);
    // SAFETY: `lua_gc` neither pushes nor pops; exec_raw runs it in a
    // protected call, so an error of a finaliser is returned, not raised.
    let _ = unsafe {
        lua.exec_raw::<()>((), |state| {
            mlua::ffi::lua_gc(state, mlua::ffi::LUA_GCSTEP, kbytes);
        })
    };
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Redis' reply to a script that raised `err` (a table from the error
/// handler): `<err> script: <name>, on <source>:<line>.`
fn error_reply(err: &Value, name: &str) -> String {
    let Value::Table(t) = err else {
        let msg = value_text(err).map_or_else(
            || "execution failure".to_string(),
            |b| String::from_utf8_lossy(&b).into_owned(),
        );
        return format!("ERR Error running script {name}, {msg}");
    };
    let text = |k: &str| t.raw_get::<Value>(k).ok().and_then(|v| value_text(&v));
    let msg = match t.raw_get::<Value>("err") {
        Ok(Value::Error(e)) => lua_error_text(&e),
        Ok(v) => {
            value_text(&v).map_or_else(String::new, |b| String::from_utf8_lossy(&b).into_owned())
        }
        Err(_) => String::new(),
    };
    let mut out = msg;
    if let (Some(source), Some(line)) = (text("source"), text("line")) {
        out.push_str(&format!(
            " script: {name}, on {}:{}.",
            String::from_utf8_lossy(&source),
            String::from_utf8_lossy(&line)
        ));
    }
    out.replace(['\r', '\n'], " ")
}

fn lua_error_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => lua_error_text(cause),
        mlua::Error::RuntimeError(m) => m.clone(),
        other => other.to_string(),
    }
}

fn strings_table(lua: &Lua, items: &[Vec<u8>]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, item) in items.iter().enumerate() {
        t.raw_set(i + 1, lua.create_string(item)?)?;
    }
    Ok(t)
}

/// `redis.call`'s work: `mode` 0 runs a command, 1 is `acl_check_cmd`.
/// Returns the value and whether it is an error table.
fn call_from_script(
    lua: &Lua,
    runner: &mut dyn CommandRunner,
    mv: MultiValue,
    read_only: bool,
) -> mlua::Result<(Value, bool)> {
    let mut it = mv.into_iter();
    let mode = match it.next() {
        Some(Value::Integer(m)) => m,
        _ => 0,
    };
    let resp3 = matches!(it.next(), Some(Value::Integer(3)));
    let rest: Vec<Value> = match (it.next(), it.next()) {
        (Some(Value::Table(t)), Some(Value::Integer(n))) => (1..=n)
            .map(|i| t.raw_get::<Value>(i).unwrap_or(Value::Nil))
            .collect(),
        _ => Vec::new(),
    };
    let err = |text: &str| -> mlua::Result<(Value, bool)> {
        let t = lua.create_table()?;
        t.raw_set("err", format!("ERR {text}"))?;
        Ok((Value::Table(t), true))
    };
    if rest.is_empty() {
        return err("Please specify at least one argument for this redis lib call");
    }
    let mut args = Vec::with_capacity(rest.len());
    for v in &rest {
        match argument(v) {
            Some(a) => args.push(a),
            None => return err("Lua redis lib command arguments must be strings or integers"),
        }
    }
    if mode == 1 {
        if runner.exists(&args[0]) {
            return Ok((Value::Boolean(true), false));
        }
        return err("Invalid command passed to redis.acl_check_cmd()");
    }
    match runner.call(&args, resp3, read_only) {
        Err(text) => err(&text),
        Ok(reply) => {
            let is_err = reply.is_error();
            Ok((resp_to_lua(lua, &reply)?, is_err))
        }
    }
}
