//! Scripting in `redcodec serve`: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO,
//! SCRIPT, FUNCTION, FCALL and FCALL_RO over `redcodec-scripting`.
//!
//! A script runs as one command: `run_atomically` holds the namespace's
//! engine exclusively for the whole run (as EXEC does) and wraps its
//! writes in one replicated transaction; nothing else runs between its
//! calls. A script that fails keeps the writes it made before the
//! failure, as in Redis.
//!
//! While a script runs past `busy-reply-threshold` (`lua-time-limit`),
//! other clients get Redis' `BUSY …` ([`busy_gate`]) instead of waiting,
//! and SCRIPT KILL / FUNCTION KILL can stop it unless it wrote.
//!
//! Function libraries are kept in the data directory, in the file
//! `redcodec-functions` ([`FUNCTIONS_FILE`]), next to the replication
//! state file: outside every format's keyspace, so no user key of any
//! format can collide with them (Kvrocks keeps them in its `propagate`
//! column family, which the other formats do not have). The file is
//! replaced atomically (written aside, synced, renamed) at every FUNCTION
//! LOAD, DELETE, FLUSH and RESTORE, and read at start.

use std::time::Instant;

use bytes::{Bytes, BytesMut};
use redcodec_codec::number::format_g17;
use redcodec_engine::{ExpiryPin, Reply};
use redcodec_scripting::runner::{NOT_ALLOWED, UNKNOWN_COMMAND, WRITE_IN_READ_ONLY, WRONG_ARITY};
use redcodec_scripting::{
    parse_numkeys, CommandRunner, LaneScript, RespValue, RunControl, ScriptFlags, Scripting,
};

pub use crate::scripts::{read_libraries, write_libraries, Scripts, FUNCTIONS_FILE};

use crate::access::Access;
use crate::cluster::script_keys::ScriptSlots;
use crate::command_spec::{Run, Spec};
use crate::command_table::{self, check};
use crate::engines::EngineGuard;
use crate::reply::{encode, Protocol};
use crate::runner;
use crate::script_lane::{self, LaneKeys, GAVE_UP};
use crate::script_worker;
use crate::scripts::Running;
use crate::session::Session;
use crate::settings::Settings;
use crate::state::Shared;
use redcodec_engine::internals::dispatch::Flags;

/// INFO memory's scripting fields, as Redis 7.0 names them.
pub fn info_memory(shared: &Shared, out: &mut String) {
    use std::fmt::Write as _;
    let human = crate::process::human_bytes;
    let Some((lua, functions, scripts, cached)) = shared.scripts.memory() else {
        return;
    };
    let (libs, funcs) = shared.scripts.scripting.try_lock().map_or((0, 0), |s| {
        (
            s.functions().libraries().count(),
            s.functions().function_count(),
        )
    });
    let (lua, functions, scripts) = (lua as u64, functions as u64, scripts as u64);
    let _ = write!(
        out,
        "used_memory_lua:{lua}\r\nused_memory_vm_eval:{lua}\r\nused_memory_lua_human:{}\r\nused_memory_scripts_eval:{scripts}\r\nnumber_of_cached_scripts:{cached}\r\nnumber_of_functions:{funcs}\r\nnumber_of_libraries:{libs}\r\nused_memory_vm_functions:{functions}\r\nused_memory_vm_total:{}\r\nused_memory_vm_total_human:{}\r\nused_memory_functions:0\r\nused_memory_scripts:{scripts}\r\nused_memory_scripts_human:{}\r\n",
        human(lua),
        lua + functions,
        human(lua + functions),
        human(scripts),
    );
}

/// Refuses a command while a script is busy, with Redis' `BUSY …`.
/// EXEC refused so inside MULTI ends the transaction with Redis'
/// `EXECABORT Transaction discarded because of: BUSY …`.
pub fn busy_gate(
    shared: &Shared,
    session: &mut Session,
    spec: &Spec,
    args: &[Bytes],
) -> Option<Reply> {
    let text = shared.scripts.control.busy_error()?;
    // SCRIPT KILL, FUNCTION KILL and FUNCTION STATS are allowed by their
    // subcommand.
    if spec.request_has(args, Flags::ALLOW_BUSY) {
        return None;
    }
    if matches!(spec.run, Run::Exec) && session.queued.is_some() {
        let _ = session.discard(shared);
        return Some(Reply::error(format!(
            "EXECABORT Transaction discarded because of: {text}"
        )));
    }
    Some(Reply::error(text))
}

/// A reply as a script sees it.
fn from_reply(reply: Reply) -> RespValue {
    match reply {
        Reply::Status(s) => RespValue::Status(s),
        Reply::Error(e) => RespValue::Error(e),
        Reply::Integer(n) => RespValue::Integer(n),
        Reply::Bulk(b) => RespValue::Bulk(b),
        Reply::Nil => RespValue::Nil,
        Reply::NilArray => RespValue::NilArray,
        Reply::Array(items) => RespValue::Array(items.into_iter().map(from_reply).collect()),
    }
}

/// A script's reply as the server sends it (RESP3 types in their RESP2
/// forms; RESP3 clients get them typed through [`Session`]'s raw reply).
pub fn to_reply(value: RespValue) -> Reply {
    match value {
        RespValue::Status(s) => Reply::Status(s),
        RespValue::Error(e) => Reply::Error(e),
        RespValue::Integer(n) => Reply::Integer(n),
        RespValue::Bulk(b) => Reply::Bulk(b),
        RespValue::Nil | RespValue::Null => Reply::Nil,
        RespValue::NilArray => Reply::NilArray,
        // Redis' `addReplyBool` to a RESP2 client: `:1` or `:0` (a
        // script that chose RESP3 and returned a boolean).
        RespValue::Bool(b) => Reply::Integer(i64::from(b)),
        RespValue::Array(items) | RespValue::Set(items) => {
            Reply::Array(items.into_iter().map(to_reply).collect())
        }
        RespValue::Map(pairs) => Reply::Array(
            pairs
                .into_iter()
                .flat_map(|(k, v)| [to_reply(k), to_reply(v)])
                .collect(),
        ),
        RespValue::Double(d) => Reply::Bulk(format_g17(d).into_bytes()),
        RespValue::BigNumber(n) => Reply::Bulk(n.into_bytes()),
        RespValue::Verbatim(_, s) => Reply::Bulk(s),
    }
}

/// Runs the commands of one script for `session`.
struct Caller<'a, 'b, 's> {
    shared: &'a Shared,
    session: &'a mut Session,
    access: &'a Access<'b>,
    /// The cluster's slot rules for the script's keys.
    slots: ScriptSlots<'s>,
    /// The keys of the lane the script runs in (`None`: it holds the
    /// engine whole).
    lane: Option<LaneKeys<'a>>,
    /// The time the script started, at which every command it calls
    /// judges keys expired ([`ExpiryPin`], as Redis 7 does).
    started_ms: Option<u64>,
}

/// The time a script starting now runs at: its engine's clock.
fn start_time(access: &Access<'_>, namespace: &str) -> Option<u64> {
    access.with(namespace, |engine| engine.now_ms()).ok()
}

impl CommandRunner for Caller<'_, '_, '_> {
    fn call(&mut self, args: &[Bytes], resp3: bool, read_only: bool) -> Result<RespValue, String> {
        let spec = match check(args) {
            Ok(spec) => spec,
            Err(e) => {
                let text = match &e {
                    Reply::Error(t) if t.contains("wrong number of arguments") => WRONG_ARITY,
                    _ => UNKNOWN_COMMAND,
                };
                return Err(text.to_string());
            }
        };
        if spec.has(Flags::NO_SCRIPT) {
            return Err(NOT_ALLOWED.to_string());
        }
        let writes = spec.has(Flags::WRITE) || spec.has(Flags::SERVER_WRITE);
        // Redis counts the may-replicate commands (PFCOUNT, PUBLISH) as
        // writes here, so that read-only scripts run during CLIENT PAUSE
        // WRITE.
        if read_only && (writes || spec.may_replicate()) {
            return Err(WRITE_IN_READ_ONLY.to_string());
        }
        // A replica's clients write nothing, through a script neither:
        // the call gets Redis' refusal of the command, `-READONLY …`.
        if writes && self.shared.replica.is_replica() && !self.session.info.master {
            return Ok(RespValue::Error(crate::replica::replicaof::READONLY.into()));
        }
        self.slots
            .check(self.session.info.id, spec, args)
            .map_err(str::to_string)?;
        if self.lane.as_ref().is_some_and(|l| !l.admits(spec, args)) {
            // The group is abandoned and runs again: no one sees this.
            return Err(GAVE_UP.to_string());
        }
        let started = Instant::now();
        let lua = crate::monitor::ScriptCalls::enter();
        let pin = self.started_ms.map(ExpiryPin::at);
        let reply = (runner::path().run_spec)(self.shared, self.session, self.access, spec, args);
        drop(pin);
        drop(lua);
        self.shared
            .command_stats
            .ran(spec.name, args, started.elapsed(), reply.is_error());
        if writes && !reply.is_error() {
            match &self.lane {
                Some(lane) => lane.control().note_write(),
                None => self.shared.scripts.control.note_write(),
            }
        }
        if !resp3 {
            return Ok(from_reply(reply));
        }
        let mut out = BytesMut::new();
        encode(&reply, spec.shape(args), Protocol::Resp3, &mut out);
        Ok(RespValue::parse(&out).map_or_else(|| from_reply(reply), |(v, _)| v))
    }

    fn exists(&self, name: &[u8]) -> bool {
        command_table::get(name).is_some()
    }
}

/// Runs `run` as one command: the namespace's engine held exclusively
/// (or the one EXEC already holds) and its writes replicated as one
/// transaction. The seam for making the script one store write.
fn run_atomically<T>(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    run: impl FnOnce(&mut Session, &Access<'_>) -> T,
) -> Result<T, Reply> {
    let mut run = Some(run);
    match access {
        // Inside EXEC: the engine is held and the transaction open.
        Access::Held(..) => Ok((run.take().expect("runs once"))(session, access)),
        Access::Shared(slot) => {
            let ns = session.namespace.clone();
            let body = |guard: Result<EngineGuard<'_>, Reply>| {
                let guard = guard?;
                let Some(engine) = guard.engine() else {
                    return Err(Reply::error("ERR the server is shutting down"));
                };
                let held = Access::Held(engine, &ns);
                session.ready_keys = Some(Vec::new());
                shared.repl.begin_transaction();
                // One store write for the whole script: all of its writes
                // or, after a crash, none. A script that fails keeps the
                // writes it made before the error, as in Redis.
                let committed =
                    engine.atomically(|_| (run.take().expect("runs once"))(session, &held));
                let out = match committed {
                    Ok(out) => out,
                    Err(e) => {
                        session.ready_keys = None;
                        shared.repl.discard_transaction();
                        return Err(Reply::error(
                            redcodec_engine::CmdError::Engine(e).to_string(),
                        ));
                    }
                };
                shared.repl.end_transaction();
                let ready = session.ready_keys.take().unwrap_or_default();
                let ready: Vec<&[u8]> = ready.iter().map(Vec::as_slice).collect();
                shared.waiters.serve(engine, &shared.watch, &ns, &ready);
                Ok(out)
            };
            script_worker::exclusively(slot, &ns, body)
        }
    }
}

/// Reads `busy-reply-threshold` / `lua-time-limit` (the smaller, when
/// one was changed) into the run control: at start and after every
/// CONFIG SET.
pub(crate) fn apply_threshold(settings: &Settings, control: &RunControl) {
    let read = |k: &str| {
        settings
            .value(k)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(5000)
    };
    let ms = read("busy-reply-threshold").min(read("lua-time-limit"));
    control.set_threshold_ms(ms);
}

/// Redis' `scriptPrepareForRun` refusals of a script with `flags` before
/// it runs: the cluster's, and a replica's of a script that declares it
/// may write (a shebang without `no-writes`, or any function without it)
/// for a client other than its master.
fn refused_here(shared: &Shared, session: &Session, flags: &ScriptFlags) -> Option<Reply> {
    if let Some(refused) = shared.cluster.refuses_script(flags) {
        return Some(refused);
    }
    let may_write = !flags.eval_compat && !flags.no_writes;
    (may_write && shared.replica.is_replica() && !session.info.master)
        .then(|| Reply::error(crate::replica::replicaof::READONLY))
}

/// Runs a script or function (`flags`) declaring `keys` under the run
/// control, returning the reply.
fn run_one(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    (args, keys, flags): (&[Bytes], &[Bytes], ScriptFlags),
    label: String,
    f: impl FnOnce(&Scripting, &mut Caller<'_, '_, '_>) -> RespValue,
) -> Reply {
    if let Some(refused) = refused_here(shared, session, &flags) {
        return refused;
    }
    let namespace = session.namespace.clone();
    let db = session.db;
    // Writes to moving slots stay tracked until the script committed.
    let mut moving = Vec::new();
    let result = run_atomically(shared, session, access, |session, held| {
        let scripting = shared.scripts.scripting.lock();
        *shared.scripts.running.lock() = Some(Running {
            name: label,
            command: args.to_vec(),
            started: Instant::now(),
        });
        let started_ms = start_time(held, &session.namespace);
        let mut caller = Caller {
            shared,
            session,
            access: held,
            slots: shared.cluster.script_slots(keys, &flags),
            lane: None,
            started_ms,
        };
        let value = f(&scripting, &mut caller);
        moving = caller.slots.into_guards();
        *shared.scripts.running.lock() = None;
        value
    });
    drop(moving);
    session.namespace = namespace;
    if session.db != db {
        session.set_db(db);
    }
    match result {
        Ok(value) => scripted_reply(session, value),
        Err(e) => e,
    }
}

/// The reply to the client; a RESP3 client gets RESP3 types as they are
/// (through the session's raw reply).
fn scripted_reply(session: &mut Session, value: RespValue) -> Reply {
    if session.protocol == Protocol::Resp3 && !value.is_resp2_shaped() {
        let mut out = Vec::new();
        value.encode(true, &mut out);
        session.raw_reply = Some(out);
    }
    to_reply(value)
}

/// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO.
pub fn eval(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    spec: &Spec,
    args: &[Bytes],
) -> Reply {
    let (ro, by_sha) = (!spec.has(Flags::MAY_WRITE), spec.has(Flags::BY_SHA));
    let numkeys = match parse_numkeys(&args[2], args.len() - 3, false) {
        Ok(n) => n,
        Err(e) => return Reply::error(e),
    };
    // One look at the cache: the script, and what a lane runs of it.
    let (sha, flags, for_lane) = {
        let mut scripting = shared.scripts.scripting.lock();
        let (sha, flags) = match scripting.resolve(&args[1], by_sha) {
            Ok(found) => found,
            Err(e) => return Reply::error(e),
        };
        let for_lane = script_lane::installed()
            .then(|| scripting.lane_script(&sha))
            .flatten();
        (sha, flags, for_lane)
    };
    let keys = &args[3..3 + numkeys];
    let argv = &args[3 + numkeys..];
    let in_lane = for_lane.and_then(|script| {
        script_lane::with_lane(|lane, lane_keys| {
            run_in_lane(
                shared,
                session,
                access,
                lane,
                lane_keys,
                script,
                (keys, argv, ro),
            )
        })
    });
    if let Some(reply) = in_lane {
        return reply;
    }
    let label = sha.clone();
    run_one(
        shared,
        session,
        access,
        (args, keys, flags),
        label,
        |s, caller| s.run_script(caller, &sha, keys, argv, ro),
    )
}

/// Runs the cached `script` in `lane` (installed by a group of scripts
/// that holds `lane_keys`, [`crate::script_lane`]): as [`run_one`] runs
/// it, the group's engine held already.
fn run_in_lane(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    lane: &mut redcodec_scripting::Lane,
    lane_keys: LaneKeys<'_>,
    script: LaneScript,
    (keys, argv, ro): (&[Bytes], &[Bytes], bool),
) -> Reply {
    if let Some(refused) = refused_here(shared, session, &script.flags) {
        return refused;
    }
    if script.stray {
        // It would reach past its keys again: held whole at once.
        lane_keys.control().give_up();
        return Reply::error(GAVE_UP);
    }
    let (namespace, db) = (session.namespace.clone(), session.db);
    let started_ms = start_time(access, &namespace);
    let mut caller = Caller {
        shared,
        session,
        access,
        slots: shared.cluster.script_slots(keys, &script.flags),
        lane: Some(lane_keys),
        started_ms,
    };
    let value = lane.run_script(&mut caller, &script, keys, argv, ro);
    if caller.lane.as_ref().is_some_and(LaneKeys::strayed) {
        shared.scripts.scripting.lock().mark_stray(&script.sha);
    }
    session.namespace = namespace;
    if session.db != db {
        session.set_db(db);
    }
    match value {
        Some(value) => scripted_reply(session, value),
        None => Reply::error(GAVE_UP),
    }
}

/// FCALL, FCALL_RO.
pub fn fcall(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    spec: &Spec,
    args: &[Bytes],
) -> Reply {
    let ro = !spec.has(Flags::MAY_WRITE);
    let function = args[1].clone();
    let found = shared
        .scripts
        .scripting
        .lock()
        .functions()
        .function_flags(&function);
    let Some(flags) = found else {
        return Reply::error("ERR Function not found");
    };
    let numkeys = match parse_numkeys(&args[2], args.len() - 3, true) {
        Ok(n) => n,
        Err(e) => return Reply::error(e),
    };
    let keys = &args[3..3 + numkeys];
    let argv = &args[3 + numkeys..];
    let label = String::from_utf8_lossy(&function).into_owned();
    run_one(
        shared,
        session,
        access,
        (args, keys, flags),
        label,
        |s, caller| s.call_function(caller, &function, keys, argv, ro),
    )
}

/// SCRIPT LOAD|EXISTS|FLUSH|KILL (arity and subcommand checked before).
pub fn script(shared: &Shared, args: &[Bytes]) -> Reply {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    match sub.as_str() {
        "load" => match shared.scripts.scripting.lock().load_script(&args[2]) {
            Ok(sha) => Reply::Bulk(sha.into_bytes()),
            Err(e) => Reply::error(e),
        },
        "exists" => {
            let s = shared.scripts.scripting.lock();
            Reply::Array(
                args[2..]
                    .iter()
                    .map(|sha| Reply::Integer(i64::from(s.script_exists(sha))))
                    .collect(),
            )
        }
        "flush" => {
            let mode_ok = match args.get(2) {
                None => args.len() == 2,
                Some(m) => {
                    args.len() == 3
                        && (m.eq_ignore_ascii_case(b"sync") || m.eq_ignore_ascii_case(b"async"))
                }
            };
            if !mode_ok {
                return Reply::error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
            }
            match shared.scripts.scripting.lock().flush_scripts() {
                Ok(()) => Reply::ok(),
                Err(e) => Reply::error(format!("ERR {e}")),
            }
        }
        "kill" => kill(shared, true),
        _ => crate::commands::subcommands::syntax_error(args),
    }
}

fn kill(shared: &Shared, eval: bool) -> Reply {
    match shared.scripts.control.kill(eval) {
        Ok(()) => Reply::ok(),
        Err(text) => Reply::error(text),
    }
}

/// FUNCTION LOAD|DELETE|LIST|DUMP|RESTORE|FLUSH|STATS|KILL.
pub fn function(shared: &Shared, session: &mut Session, args: &[Bytes]) -> Reply {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    let scripts = &shared.scripts;
    match sub.as_str() {
        "kill" => kill(shared, false),
        "stats" => match function_stats(shared) {
            Ok(v) => scripted_reply(session, v),
            Err(e) => e,
        },
        "load" => {
            let mut replace = false;
            let mut at = 2;
            while at < args.len() - 1 {
                if args[at].eq_ignore_ascii_case(b"replace") {
                    replace = true;
                    at += 1;
                    continue;
                }
                return Reply::error(format!(
                    "ERR Unknown option given: {}",
                    String::from_utf8_lossy(&args[at])
                ));
            }
            if at >= args.len() {
                return Reply::error("ERR Function code is missing");
            }
            let mut s = scripts.scripting.lock();
            match s.functions_mut().load(&args[at], replace) {
                Ok(name) => match scripts.persist(&s) {
                    Ok(()) => Reply::Bulk(name.into_bytes()),
                    Err(e) => Reply::error(e),
                },
                Err(e) => Reply::error(e),
            }
        }
        "delete" => {
            let mut s = scripts.scripting.lock();
            if !s.functions_mut().delete(&args[2]) {
                return Reply::error("ERR Library not found");
            }
            match scripts.persist(&s) {
                Ok(()) => Reply::ok(),
                Err(e) => Reply::error(e),
            }
        }
        "flush" => {
            if args.len() > 3 {
                return crate::commands::subcommands::syntax_error(args);
            }
            if let Some(mode) = args.get(2) {
                if !mode.eq_ignore_ascii_case(b"sync") && !mode.eq_ignore_ascii_case(b"async") {
                    return Reply::error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
                }
            }
            let mut s = scripts.scripting.lock();
            if let Err(e) = s.functions_mut().flush() {
                return Reply::error(format!("ERR {e}"));
            }
            match scripts.persist(&s) {
                Ok(()) => Reply::ok(),
                Err(e) => Reply::error(e),
            }
        }
        "list" => match function_list(shared, args) {
            Ok(v) => scripted_reply(session, v),
            Err(e) => e,
        },
        "dump" => {
            let s = scripts.scripting.lock();
            let codes: Vec<Vec<u8>> = s.functions().libraries().map(|l| l.code.clone()).collect();
            Reply::Bulk(crate::scripting_dump::dump(&codes))
        }
        "restore" => {
            let policy = args.get(3).map_or("append".to_string(), |p| {
                String::from_utf8_lossy(p).to_ascii_lowercase()
            });
            if args.len() > 4 {
                return crate::commands::subcommands::syntax_error(args);
            }
            if !matches!(policy.as_str(), "append" | "replace" | "flush") {
                return Reply::error(
                    "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
                );
            }
            let Some(codes) = crate::scripting_dump::restore(&args[2]) else {
                return Reply::error("ERR DUMP payload version or checksum are wrong");
            };
            let mut s = scripts.scripting.lock();
            if policy == "flush" {
                let backup: Vec<Vec<u8>> =
                    s.functions().libraries().map(|l| l.code.clone()).collect();
                if let Err(e) = s.functions_mut().flush() {
                    return Reply::error(format!("ERR {e}"));
                }
                if let Err(e) = s.functions_mut().restore(&codes, false) {
                    let _ = s.functions_mut().restore(&backup, false);
                    return Reply::error(e);
                }
            } else if let Err(e) = s.functions_mut().restore(&codes, policy == "replace") {
                return Reply::error(e);
            }
            match scripts.persist(&s) {
                Ok(()) => Reply::ok(),
                Err(e) => Reply::error(e),
            }
        }
        _ => crate::commands::subcommands::syntax_error(args),
    }
}

fn bulk(s: &str) -> RespValue {
    RespValue::Bulk(s.as_bytes().to_vec())
}

/// FUNCTION STATS.
fn function_stats(shared: &Shared) -> Result<RespValue, Reply> {
    if shared.scripts.control.busy_error() == Some(redcodec_scripting::control::BUSY_EVAL) {
        return Err(Reply::error(redcodec_scripting::control::BUSY_EVAL));
    }
    let running = match &*shared.scripts.running.lock() {
        None => RespValue::Nil,
        Some(r) => RespValue::Map(vec![
            (bulk("name"), bulk(&r.name)),
            (
                bulk("command"),
                RespValue::Array(
                    r.command
                        .iter()
                        .map(|a| RespValue::Bulk(a.to_vec()))
                        .collect(),
                ),
            ),
            (
                bulk("duration_ms"),
                RespValue::Integer(r.started.elapsed().as_millis() as i64),
            ),
        ]),
    };
    let (libs, funcs) = match shared.scripts.scripting.try_lock() {
        Some(s) => (
            s.functions().libraries().count(),
            s.functions().function_count(),
        ),
        None => (0, 0),
    };
    Ok(RespValue::Map(vec![
        (bulk("running_script"), running),
        (
            bulk("engines"),
            RespValue::Map(vec![(
                bulk("LUA"),
                RespValue::Map(vec![
                    (bulk("libraries_count"), RespValue::Integer(libs as i64)),
                    (bulk("functions_count"), RespValue::Integer(funcs as i64)),
                ]),
            )]),
        ),
    ]))
}

/// FUNCTION LIST [WITHCODE] [LIBRARYNAME pattern].
fn function_list(shared: &Shared, args: &[Bytes]) -> Result<RespValue, Reply> {
    let mut with_code = false;
    let mut pattern: Option<&[u8]> = None;
    let mut i = 2;
    while i < args.len() {
        let a = &args[i];
        if !with_code && a.eq_ignore_ascii_case(b"withcode") {
            with_code = true;
        } else if pattern.is_none() && a.eq_ignore_ascii_case(b"libraryname") {
            if i >= args.len() - 1 {
                return Err(Reply::error("ERR library name argument was not given"));
            }
            i += 1;
            pattern = Some(&args[i]);
        } else {
            return Err(Reply::error(format!(
                "ERR Unknown argument {}",
                String::from_utf8_lossy(a)
            )));
        }
        i += 1;
    }
    let s = shared.scripts.scripting.lock();
    let mut out = Vec::new();
    for lib in s.functions().libraries() {
        if let Some(p) = pattern {
            if !redcodec_protocol::glob::matches(p, lib.name.as_bytes(), true) {
                continue;
            }
        }
        let functions = lib
            .functions
            .iter()
            .map(|f| {
                RespValue::Map(vec![
                    (bulk("name"), bulk(&f.name)),
                    (
                        bulk("description"),
                        f.description.as_deref().map_or(RespValue::Nil, bulk),
                    ),
                    (
                        bulk("flags"),
                        RespValue::Set(
                            f.flags
                                .names()
                                .into_iter()
                                .map(|n| RespValue::Status(n.to_string()))
                                .collect(),
                        ),
                    ),
                ])
            })
            .collect();
        let mut entry = vec![
            (bulk("library_name"), bulk(&lib.name)),
            (bulk("engine"), bulk("LUA")),
            (bulk("functions"), RespValue::Array(functions)),
        ];
        if with_code {
            entry.push((bulk("library_code"), RespValue::Bulk(lib.code.clone())));
        }
        out.push(RespValue::Map(entry));
    }
    Ok(RespValue::Array(out))
}
