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

use bytes::Bytes;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

use mlua::chunk::ChunkMode;
use mlua::{Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value, VmState};
use parking_lot::Mutex;
use sha1::{Digest, Sha1};

use crate::control::{RunControl, KILLED};
use crate::convert::{c_len, lua_to_resp, push_error_table, push_resp, value_text};
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

/// `redis.call`: raises the error table a failed command gives.
unsafe extern "C-unwind" fn redis_call(state: *mut mlua::ffi::lua_State) -> std::os::raw::c_int {
    call_c(state, true, |lua, state| bridge(lua, state))
}

/// `redis.pcall`: returns the error table a failed command gives.
unsafe extern "C-unwind" fn redis_pcall(state: *mut mlua::ffi::lua_State) -> std::os::raw::c_int {
    call_c(state, false, |lua, state| bridge(lua, state))
}

/// `redis.acl_check_cmd(name, …)`: true when the command exists, else
/// raises the error table ([`acl_check`]).
unsafe extern "C-unwind" fn redis_acl_check_cmd(
    state: *mut mlua::ffi::lua_State,
) -> std::os::raw::c_int {
    call_c(state, true, |lua, state| acl_check(lua, state))
}

/// Whether `call_c` raises the value it pushed.
enum Raise {
    /// Never: a reply.
    No,
    /// For `redis.call`: a command's error or its bad arguments.
    IfCall,
    /// For all: called outside a run, a panic, and every error of
    /// `redis.acl_check_cmd`.
    Always,
}

/// Runs `work` (`bridge` or `acl_check`) for a C function of the `redis`
/// table, which returns the one value `work` pushed or raises it (as
/// `work` says; [`Raise::IfCall`] when `raise`). C functions, as in
/// Redis: a script's tail call to one keeps the script's frame, and the
/// arguments are read from its own stack, however many an `unpack` gave.
///
/// # Safety
/// Called by Lua only, as a C function of a state made by
/// [`Sandbox::new`].
unsafe fn call_c(
    state: *mut mlua::ffi::lua_State,
    raise: bool,
    work: impl FnOnce(&Lua, *mut mlua::ffi::lua_State) -> Raise,
) -> std::os::raw::c_int {
    let lua = Lua::get_or_init_from_ptr(state);
    // What the command allocates in the state counts, but cannot fail on
    // the limit halfway: the script's next allocation past it does.
    let raise_now = unlimited(lua, || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(lua, state))).unwrap_or_else(
            |panic| {
                // A panic cannot unwind through Lua's C frames: it is kept,
                // the script stopped, and the panic resumed once the run
                // is back in Rust (`Sandbox::run_inner`), as mlua does.
                if let Some(slot) = lua.app_data_ref::<Arc<RunnerSlot>>() {
                    *slot.panic.lock() = Some(panic);
                }
                push_error_table(state, "ERR a command of the script panicked", false);
                Raise::Always
            },
        )
    });
    // Nothing of Rust's is alive past this point: `lua_error` may leave.
    match raise_now {
        Raise::Always => mlua::ffi::lua_error(state),
        Raise::IfCall if raise => mlua::ffi::lua_error(state),
        _ => 1,
    }
}

/// The runner of the run in progress (see [`RunnerSlot::current`]).
fn current_runner(lua: &Lua) -> Option<(NonNull<dyn CommandRunner>, bool, bool)> {
    lua.app_data_ref::<Arc<RunnerSlot>>()
        .and_then(|slot| slot.current())
}

/// The arguments of `redis.call`, `redis.pcall` and
/// `redis.acl_check_cmd`, all of their stack: a string as is, a number
/// as `%.17g`; at least one. Else the text of the error table Redis
/// gives (`luaArgsToRedisArgv`).
///
/// # Safety
/// `state` is the stack of a C function `call_c` runs.
unsafe fn read_args(state: *mut mlua::ffi::lua_State) -> Result<Vec<Bytes>, &'static str> {
    use mlua::ffi;
    let n = ffi::lua_gettop(state);
    let mut args = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
    for i in 1..=n {
        match ffi::lua_type(state, i) {
            ffi::LUA_TSTRING => {
                let mut len = 0;
                let at = ffi::lua_tolstring(state, i, &mut len);
                args.push(Bytes::copy_from_slice(std::slice::from_raw_parts(
                    at.cast::<u8>(),
                    len,
                )));
            }
            ffi::LUA_TNUMBER => args.push(Bytes::from(
                redcodec_codec::number::format_g17(ffi::lua_tonumber(state, i)).into_bytes(),
            )),
            _ => return Err("ERR Lua redis lib command arguments must be strings or integers"),
        }
    }
    if args.is_empty() {
        return Err("ERR Please specify at least one argument for this redis lib call");
    }
    Ok(args)
}

/// `call_c`'s work for `redis.call` and `redis.pcall`, leaving one value
/// on the stack.
unsafe fn bridge(lua: &Lua, state: *mut mlua::ffi::lua_State) -> Raise {
    use mlua::ffi;
    let Some((runner, read_only, resp3)) = current_runner(lua) else {
        let text = "ERR redis.call/pcall can only be called inside a script invocation";
        push_error_table(state, text, false);
        return Raise::Always;
    };
    let args = match read_args(state) {
        Ok(args) => args,
        Err(text) => {
            push_error_table(state, text, false);
            return Raise::IfCall;
        }
    };
    // SAFETY: the runner is held for the run in progress
    // (`RunnerSlot::hold`), whose thread this is.
    let reply = (*runner.as_ptr()).call(&args, resp3, read_only);
    drop(args);
    let reply = match reply {
        Ok(reply) => reply,
        Err(text) => {
            push_error_table(state, &format!("ERR {text}"), false);
            return Raise::IfCall;
        }
    };
    // The arguments (copied) make room for the reply: an `unpack` may
    // have filled the stack.
    ffi::lua_settop(state, 0);
    if !push_resp(state, &reply) {
        ffi::lua_settop(state, 0);
        push_error_table(state, "ERR reached lua stack limit", false);
        return Raise::IfCall;
    }
    if reply.is_error() {
        Raise::IfCall
    } else {
        Raise::No
    }
}

/// `call_c`'s work for `redis.acl_check_cmd`, leaving one value on the
/// stack: true when the command its first argument names exists, else
/// the error table, raised. Outside a run (no runner held: the slot is
/// held for the whole of prelude.lua's `run`, as long as its
/// `ctx.active`) it raises before reading its arguments, as
/// `redis.call` does. (There is no ACL: a command that exists is
/// allowed.)
unsafe fn acl_check(lua: &Lua, state: *mut mlua::ffi::lua_State) -> Raise {
    let Some((runner, _, _)) = current_runner(lua) else {
        let text = "ERR redis.acl_check_cmd can only be called inside a script invocation";
        push_error_table(state, text, false);
        return Raise::Always;
    };
    let args = match read_args(state) {
        Ok(args) => args,
        Err(text) => {
            push_error_table(state, text, false);
            return Raise::Always;
        }
    };
    // SAFETY: as in `bridge`: held for the run in progress, on its thread.
    let exists = (*runner.as_ptr()).exists(&args[0]);
    drop(args);
    if exists {
        mlua::ffi::lua_pushboolean(state, 1);
        return Raise::No;
    }
    let text = "ERR Invalid command passed to redis.acl_check_cmd()";
    push_error_table(state, text, false);
    Raise::Always
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
    hex::encode(Sha1::digest(bytes))
}

/// What `redis.log` writes to: the level (0 debug … 3 warning) and the
/// text.
pub type Logger = Arc<dyn Fn(u8, &str) + Send + Sync>;

/// A sandboxed Lua state.
pub struct Sandbox {
    lua: Lua,
    parts: Table,
    run: Function,
    ctx_end: Function,
    runner: Arc<RunnerSlot>,
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
    pub keys: &'a [Bytes],
    /// ARGV.
    pub args: &'a [Bytes],
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
        // SAFETY: the three functions only use the Lua C API on their
        // own stack (see `call_c`).
        unsafe {
            native.raw_set("call", lua.create_c_function(redis_call)?)?;
            native.raw_set("pcall", lua.create_c_function(redis_pcall)?)?;
            native.raw_set("acl_check_cmd", lua.create_c_function(redis_acl_check_cmd)?)?;
        }
        let runner = Arc::new(RunnerSlot::default());
        lua.set_app_data(runner.clone());
        let slot = runner.clone();
        native.raw_set(
            "set_resp",
            lua.create_function(move |_, resp3: bool| {
                slot.set_resp3(resp3);
                Ok(())
            })?,
        )?;
        native.raw_set("version", REDIS_VERSION)?;
        native.raw_set("version_num", REDIS_VERSION_NUM)?;
        let parts: Table = lua
            .load(include_str!("prelude.lua"))
            .set_name("=redcodec")
            .call(native)?;
        load_libraries(&lua)?;
        let finish: Function = parts.raw_get("finish")?;
        let env: Table = finish.call(())?;
        install_hook(&lua, &control)?;
        lua.set_memory_limit(DEFAULT_MEMORY_LIMIT)?;
        lua.gc_collect()?;
        Ok(Sandbox {
            runs: std::sync::atomic::AtomicU32::new(0),
            run: parts.raw_get("run")?,
            ctx_end: parts.raw_get("ctx_end")?,
            runner,
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
        if outcome.is_err() {
            // The run raised out of prelude.lua's `run` (killed, or out
            // of memory): its context ends here, under the usual hook.
            let _ = self.ctx_end.call::<()>(());
        }
        let runs = self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if runs >= GC_EVERY {
            self.runs.store(0, std::sync::atomic::Ordering::Relaxed);
            gc_step(&self.lua, GC_EVERY);
        }
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
        let (keys_t, args_t) = strings_tables(lua, keys, args)?;
        let held = self.runner.hold(runner, read_only);
        let result = self
            .run
            .call::<(bool, Value)>((f, keys_t, args_t, as_function));
        let resp3 = held.resp3();
        drop(held);
        if let Some(panic) = self.runner.panic.lock().take() {
            std::panic::resume_unwind(panic);
        }
        let (ok, value) = result?;
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

/// The `KEYS` and `ARGV` tables of a run, made in one protected call.
fn strings_tables(lua: &Lua, keys: &[Bytes], args: &[Bytes]) -> mlua::Result<(Table, Table)> {
    // SAFETY: the closure pushes the two tables onto the stack it is
    // given; an allocation error there is returned, the call protected.
    unsafe {
        lua.exec_raw((), |state| {
            for items in [keys, args] {
                mlua::ffi::lua_createtable(state, c_len(items.len()), 0);
                for (i, item) in items.iter().enumerate() {
                    mlua::ffi::lua_pushlstring_(state, item.as_ptr().cast(), item.len());
                    mlua::ffi::lua_rawseti_(state, -2, c_len(i + 1));
                }
            }
        })
    }
}

/// The [`CommandRunner`] of the run in progress, behind `redis.call`
/// (the state's app data, read by [`call_c`]): empty between runs.
#[derive(Default)]
struct RunnerSlot {
    held: Mutex<Option<HeldRunner>>,
    /// A panic of the runner, to resume once the run is back in Rust.
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

/// A run's runner, its borrow's lifetime erased; whether the run may not
/// write; whether the script asked for RESP3 (`redis.setresp(3)`).
struct HeldRunner {
    runner: NonNull<dyn CommandRunner>,
    read_only: bool,
    resp3: bool,
}

// SAFETY: the pointer is only followed by `bridge` and `acl_check`,
// on the thread running the script that holds it (`RunnerSlot::hold`);
// the Lua state runs one script at a time.
unsafe impl Send for HeldRunner {}

impl RunnerSlot {
    /// Puts `runner` behind `redis.call` until the guard drops. The guard
    /// keeps `runner` mutably borrowed, so nothing else reaches it while
    /// a script may.
    fn hold<'a>(&'a self, runner: &'a mut dyn CommandRunner, read_only: bool) -> RunnerHeld<'a> {
        let runner: NonNull<dyn CommandRunner + 'a> = NonNull::from(runner);
        // SAFETY: only the borrow's lifetime changes; the guard empties
        // the slot before that borrow ends.
        let runner: NonNull<dyn CommandRunner> = unsafe { std::mem::transmute(runner) };
        *self.held.lock() = Some(HeldRunner {
            runner,
            read_only,
            resp3: false,
        });
        RunnerHeld {
            slot: self,
            _runner: PhantomData,
        }
    }

    /// The runner of the run in progress, if one runs, with its flags
    /// (read-only, RESP3).
    fn current(&self) -> Option<(NonNull<dyn CommandRunner>, bool, bool)> {
        self.held
            .lock()
            .as_ref()
            .map(|h| (h.runner, h.read_only, h.resp3))
    }

    /// `redis.setresp`: the protocol of the replies the run sees.
    fn set_resp3(&self, resp3: bool) {
        if let Some(held) = self.held.lock().as_mut() {
            held.resp3 = resp3;
        }
    }
}

/// Empties the [`RunnerSlot`] when dropped.
struct RunnerHeld<'a> {
    slot: &'a RunnerSlot,
    _runner: PhantomData<&'a mut dyn CommandRunner>,
}

impl RunnerHeld<'_> {
    /// Whether the run ended asking for RESP3 (its value's conversion).
    fn resp3(&self) -> bool {
        self.slot.held.lock().as_ref().is_some_and(|h| h.resp3)
    }
}

impl Drop for RunnerHeld<'_> {
    fn drop(&mut self) {
        *self.slot.held.lock() = None;
    }
}
