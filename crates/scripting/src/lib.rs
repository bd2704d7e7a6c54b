//! Redis 7.0 scripting for `redcodec serve`, independent of the server:
//!
//! * [`sandbox`]: a Lua 5.1 state set up as Redis sets it up (libraries,
//!   the `redis.*` API, Redis' `math.random`, locked globals, the error
//!   handler, the busy/kill hook, a memory limit);
//! * [`convert`]: Lua values to replies and back, by Redis' rules;
//! * [`value`]: replies of every RESP2/RESP3 type and their encoding;
//! * [`flags`]: `#!lua flags=…` and function flags;
//! * [`functions`]: libraries of functions (`#!lua name=…`);
//! * [`control`]: BUSY, SCRIPT KILL, FUNCTION KILL;
//! * [`runner`]: the [`CommandRunner`] trait the server implements for
//!   `redis.call`.
//!
//! [`Scripting`] ties them: the EVAL script cache by SHA1 and the loaded
//! libraries, each in its own Lua state as in Redis.

pub mod control;
pub mod convert;
pub mod flags;
pub mod functions;
pub mod lane;
pub mod rand48;
pub mod runner;
pub mod sandbox;
pub mod value;

use bytes::Bytes;
use rustc_hash::FxHashMap;
use std::sync::Arc;

use mlua::Function;
use parking_lot::Mutex;

pub use control::RunControl;
pub use flags::{ScriptFlags, WRITE_FLAG_WITH_RO};
pub use functions::{Library, LibraryFunction};
pub use lane::{Lane, LaneScript};
pub use runner::CommandRunner;
pub use sandbox::{sha1_hex, Logger, Sandbox};
pub use value::RespValue;

use crate::rand48::Rand48;
use crate::sandbox::Outcome;

/// `-NOSCRIPT`
pub const NO_SCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

/// Errors of this crate's setup.
#[derive(Debug, thiserror::Error)]
pub enum ScriptingError {
    /// Lua could not be set up.
    #[error("Lua: {0}")]
    Lua(#[from] mlua::Error),
}

/// A script in the EVAL cache.
struct CachedScript {
    function: Function,
    flags: ScriptFlags,
    /// The script's text (a [`Lane`] compiles it in its own state) and
    /// where its code starts, after the shebang line.
    body: Arc<[u8]>,
    code_at: usize,
    /// A lane's run of it reached past the keys it declared
    /// ([`Scripting::mark_stray`]).
    stray: bool,
}

/// The scripting state of a server: the EVAL cache and its Lua state,
/// the function libraries and theirs, and the run control other
/// connections consult.
pub struct Scripting {
    eval: Sandbox,
    scripts: FxHashMap<String, CachedScript>,
    /// Source bytes of the cached scripts (`used_memory_scripts_eval`).
    scripts_bytes: usize,
    functions: functions::Functions,
    control: Arc<RunControl>,
    rand: Arc<Mutex<Rand48>>,
    logger: Logger,
    /// Counts SCRIPT FLUSHes: a [`Lane`] made before the last one starts
    /// afresh.
    generation: u64,
}

/// Parses EVAL's and FCALL's `numkeys` against the arguments after it:
/// Redis' texts.
pub fn parse_numkeys(arg: &[u8], after: usize, fcall: bool) -> Result<usize, String> {
    let n: i64 = match std::str::from_utf8(arg).ok().and_then(|s| s.parse().ok()) {
        Some(n) => n,
        None if fcall => return Err("ERR Bad number of keys provided".into()),
        None => return Err("ERR value is not an integer or out of range".into()),
    };
    if n > after as i64 {
        return Err("ERR Number of keys can't be greater than number of args".into());
    }
    if n < 0 {
        return Err("ERR Number of keys can't be negative".into());
    }
    Ok(n as usize)
}

impl Scripting {
    /// A fresh state; `logger` receives `redis.log`.
    pub fn new(logger: Logger) -> Result<Scripting, ScriptingError> {
        let control = Arc::new(RunControl::default());
        let rand = Arc::new(Mutex::new(Rand48::default()));
        let eval = Sandbox::new(control.clone(), rand.clone(), logger.clone())?;
        let functions = functions::Functions::new(control.clone(), rand.clone(), logger.clone())?;
        Ok(Scripting {
            eval,
            scripts: FxHashMap::default(),
            scripts_bytes: 0,
            functions,
            control,
            rand,
            logger,
            generation: 0,
        })
    }

    /// A new [`Lane`]: a Lua state of its own beside the EVAL one, which
    /// shares `math.random`'s generator and `redis.log`'s logger.
    pub fn lane(&self) -> Result<Lane, ScriptingError> {
        Lane::new(self.rand.clone(), self.logger.clone(), self.generation)
    }

    /// The cached script `sha` as a [`Lane`] runs it (`None`: not
    /// cached).
    pub fn lane_script(&self, sha: &str) -> Option<LaneScript> {
        let cached = self.scripts.get(sha)?;
        Some(LaneScript {
            sha: sha.to_string(),
            body: cached.body.clone(),
            code_at: cached.code_at,
            flags: cached.flags,
            stray: cached.stray,
            generation: self.generation,
        })
    }

    /// Whether the cached script `sha` (hex, any case) is marked
    /// ([`Scripting::mark_stray`]).
    pub fn is_stray(&self, sha: &[u8]) -> bool {
        self.cached(sha).is_some_and(|c| c.stray)
    }

    /// The cached script whose SHA1 is `sha` (40 hex digits, any case).
    fn cached(&self, sha: &[u8]) -> Option<&CachedScript> {
        let sha = std::str::from_utf8(sha).ok().filter(|s| s.len() == 40)?;
        match sha.bytes().any(|b| b.is_ascii_uppercase()) {
            true => self.scripts.get(&sha.to_ascii_lowercase()),
            false => self.scripts.get(sha),
        }
    }

    /// Notes that a lane's run of the cached script `sha` reached past
    /// the keys it declared: its later runs skip the lanes (until SCRIPT
    /// FLUSH), as one that does so again would only be run twice.
    pub fn mark_stray(&mut self, sha: &str) {
        if let Some(cached) = self.scripts.get_mut(sha) {
            cached.stray = true;
        }
    }

    /// The run control (BUSY, KILL), shared with every connection.
    pub fn control(&self) -> Arc<RunControl> {
        self.control.clone()
    }

    /// Compiles `body` into the cache (EVAL, SCRIPT LOAD): its SHA1, or
    /// Redis' error text.
    pub fn load_script(&mut self, body: &[u8]) -> Result<String, String> {
        let sha = sha1_hex(body);
        if self.scripts.contains_key(&sha) {
            return Ok(sha);
        }
        let (flags, shebang_len) = flags::parse_shebang(body).map_err(|e| format!("ERR {e}"))?;
        let function = self
            .eval
            .compile(&body[shebang_len..], "@user_script")
            .map_err(|e| format!("ERR Error compiling script (new function): {e}"))?;
        self.scripts_bytes += body.len();
        let cached = CachedScript {
            function,
            flags,
            body: body.into(),
            code_at: shebang_len,
            stray: false,
        };
        self.scripts.insert(sha.clone(), cached);
        Ok(sha)
    }

    /// Whether the cache holds the script with this SHA1 (any case).
    pub fn script_exists(&self, sha: &[u8]) -> bool {
        self.cached(sha).is_some()
    }

    /// The flags of a cached script.
    pub fn script_flags(&self, sha: &str) -> Option<ScriptFlags> {
        self.scripts.get(sha).map(|s| s.flags)
    }

    /// SCRIPT FLUSH: the cache and the EVAL Lua state start afresh.
    pub fn flush_scripts(&mut self) -> Result<(), ScriptingError> {
        self.scripts.clear();
        self.scripts_bytes = 0;
        self.generation += 1;
        self.eval = Sandbox::new(self.control.clone(), self.rand.clone(), self.logger.clone())?;
        Ok(())
    }

    /// Number of cached scripts (INFO's `number_of_cached_scripts`).
    pub fn cached_scripts(&self) -> usize {
        self.scripts.len()
    }

    /// Memory of the EVAL Lua state (INFO's `used_memory_lua`).
    pub fn eval_memory(&self) -> usize {
        self.eval.used_memory()
    }

    /// Memory of the functions' Lua state (`used_memory_vm_functions`).
    pub fn functions_memory(&self) -> usize {
        self.functions.used_memory()
    }

    /// Bytes of the cached scripts' sources.
    pub fn scripts_bytes(&self) -> usize {
        self.scripts_bytes
    }

    /// Sets the memory each Lua state may hold.
    pub fn set_memory_limit(&self, bytes: usize) -> Result<(), ScriptingError> {
        self.eval.set_memory_limit(bytes)?;
        self.functions.set_memory_limit(bytes)?;
        Ok(())
    }

    /// Resolves EVAL's or EVALSHA's first argument to a cached script's
    /// SHA1 (compiling an EVAL body): the SHA1 and its flags.
    pub fn resolve(
        &mut self,
        script: &[u8],
        by_sha: bool,
    ) -> Result<(String, ScriptFlags), String> {
        let sha = if by_sha {
            String::from_utf8_lossy(script).to_ascii_lowercase()
        } else {
            self.load_script(script)?
        };
        match self.scripts.get(&sha) {
            Some(cached) if sha.len() == 40 => {
                let flags = cached.flags;
                Ok((sha, flags))
            }
            _ => Err(NO_SCRIPT.to_string()),
        }
    }

    /// Runs the cached script `sha` (from [`Scripting::resolve`]).
    /// `ro`: EVAL_RO/EVALSHA_RO. The reply, an error reply on failure.
    pub fn run_script(
        &self,
        runner: &mut dyn CommandRunner,
        sha: &str,
        keys: &[Bytes],
        args: &[Bytes],
        ro: bool,
    ) -> RespValue {
        let Some(script) = self.scripts.get(sha) else {
            return RespValue::Error(NO_SCRIPT.into());
        };
        let inv = match eval_invocation(sha, script.flags, keys, args, ro) {
            Ok(inv) => inv,
            Err(refused) => return refused,
        };
        self.eval.run(runner, &script.function, &inv).into_reply()
    }

    /// The function libraries.
    pub fn functions(&self) -> &functions::Functions {
        &self.functions
    }

    /// The function libraries, to load, delete or flush.
    pub fn functions_mut(&mut self) -> &mut functions::Functions {
        &mut self.functions
    }

    /// FCALL / FCALL_RO of `name`.
    pub fn call_function(
        &self,
        runner: &mut dyn CommandRunner,
        name: &[u8],
        keys: &[Bytes],
        args: &[Bytes],
        ro: bool,
    ) -> RespValue {
        self.functions.call(runner, name, keys, args, ro)
    }
}

/// The run of an EVAL script with `flags` (`ro`: EVAL_RO/EVALSHA_RO),
/// or the reply refusing it.
fn eval_invocation<'a>(
    sha: &'a str,
    flags: ScriptFlags,
    keys: &'a [Bytes],
    args: &'a [Bytes],
    ro: bool,
) -> Result<sandbox::Invocation<'a>, RespValue> {
    if ro && !flags.eval_compat && !flags.no_writes {
        return Err(RespValue::Error(WRITE_FLAG_WITH_RO.into()));
    }
    Ok(sandbox::Invocation {
        name: sha,
        keys,
        args,
        as_function: false,
        read_only: ro || (!flags.eval_compat && flags.no_writes),
    })
}

impl From<Outcome> for RespValue {
    fn from(o: Outcome) -> RespValue {
        o.into_reply()
    }
}
