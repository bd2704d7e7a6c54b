//! A lane: a Lua state of its own, beside the EVAL cache's, in which a
//! server runs EVAL scripts side by side with other lanes' (each script
//! holding only the keys it declared). A lane compiles the scripts of
//! the cache from their text as it first meets them, and starts afresh
//! after a SCRIPT FLUSH. Its run control ([`RunControl::for_lane`]) is
//! its own: no other connection waits for a lane's run, so a run that
//! lasts [`crate::control::LONG_RUN`] gives up (to run again, the engine
//! held whole, where BUSY and SCRIPT KILL apply).

use std::sync::Arc;

use bytes::Bytes;
use mlua::Function;
use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use crate::rand48::Rand48;
use crate::{
    eval_invocation, CommandRunner, Logger, RespValue, RunControl, Sandbox, ScriptFlags,
    ScriptingError,
};

/// A cached script as a lane runs it ([`crate::Scripting::lane_script`]).
pub struct LaneScript {
    /// The script's SHA1.
    pub sha: String,
    pub(crate) body: Arc<[u8]>,
    pub(crate) code_at: usize,
    /// Its flags (`#!lua flags=…`).
    pub flags: ScriptFlags,
    /// A lane's run of it reached past its declared keys before
    /// ([`crate::Scripting::mark_stray`]).
    pub stray: bool,
    pub(crate) generation: u64,
}

/// A Lua state for EVAL scripts, its compiled scripts and its control.
pub struct Lane {
    sandbox: Sandbox,
    compiled: FxHashMap<String, Function>,
    control: Arc<RunControl>,
    rand: Arc<Mutex<Rand48>>,
    logger: Logger,
    generation: u64,
}

impl Lane {
    pub(crate) fn new(
        rand: Arc<Mutex<Rand48>>,
        logger: Logger,
        generation: u64,
    ) -> Result<Lane, ScriptingError> {
        let control = Arc::new(RunControl::for_lane());
        Ok(Lane {
            sandbox: Sandbox::new(control.clone(), rand.clone(), logger.clone())?,
            compiled: FxHashMap::default(),
            control,
            rand,
            logger,
            generation,
        })
    }

    /// The lane's run control: whether its last run gave up, or make the
    /// running one give up.
    pub fn control(&self) -> &RunControl {
        &self.control
    }

    /// The lane's run control, to keep beside a run of the lane.
    pub fn control_handle(&self) -> Arc<RunControl> {
        self.control.clone()
    }

    /// Runs `script` as [`crate::Scripting::run_script`] runs a cached
    /// one. `None`: the run gave up ([`RunControl::gave_up`]) and its
    /// reply means nothing.
    pub fn run_script(
        &mut self,
        runner: &mut dyn CommandRunner,
        script: &LaneScript,
        keys: &[Bytes],
        args: &[Bytes],
        ro: bool,
    ) -> Option<RespValue> {
        if script.generation != self.generation {
            // SCRIPT FLUSH since: a fresh state, as the EVAL one.
            let control = self.control.clone();
            self.sandbox = Sandbox::new(control, self.rand.clone(), self.logger.clone()).ok()?;
            self.compiled.clear();
            self.generation = script.generation;
        }
        let inv = match eval_invocation(&script.sha, script.flags, keys, args, ro) {
            Ok(inv) => inv,
            Err(refused) => return Some(refused),
        };
        if !self.compiled.contains_key(&script.sha) {
            // The cache compiled the same text: it compiles here too.
            let code = &script.body[script.code_at..];
            let function = match self.sandbox.compile(code, "@user_script") {
                Ok(f) => f,
                Err(e) => {
                    return Some(RespValue::Error(format!(
                        "ERR Error compiling script (new function): {e}"
                    )))
                }
            };
            self.compiled.insert(script.sha.clone(), function);
        }
        let function = &self.compiled[&script.sha];
        let reply = self.sandbox.run(runner, function, &inv).into_reply();
        (!self.control.gave_up()).then_some(reply)
    }
}
