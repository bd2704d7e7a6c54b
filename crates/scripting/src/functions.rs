//! Function libraries (Redis 7.0's functions.c and function_lua.c): a
//! library is Lua code starting `#!lua name=<library>`, whose top level
//! calls `redis.register_function` for each function it offers; FCALL
//! runs a function by name with its keys and arguments.
//!
//! Libraries run in a Lua state of their own, as in Redis. Their code is
//! what the server persists: loading the same codes again rebuilds the
//! same functions.

use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mlua::{Function, Table, Value};
use parking_lot::Mutex;

use crate::control::RunControl;
use crate::flags::{ScriptFlags, WRITE_FLAG_WITH_RO};
use crate::rand48::Rand48;
use crate::runner::CommandRunner;
use crate::sandbox::{Logger, Sandbox};
use crate::value::RespValue;

/// FUNCTION LOAD gives up on a library whose code runs this long.
pub const LOAD_TIMEOUT: Duration = Duration::from_millis(500);

/// The Library name rule's text.
const BAD_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// One function of a library.
#[derive(Clone, Debug)]
pub struct LibraryFunction {
    /// Its name (FCALL's).
    pub name: String,
    /// `description`, when registered with one.
    pub description: Option<String>,
    /// Its flags.
    pub flags: ScriptFlags,
    callback: Function,
}

/// A loaded library.
#[derive(Clone, Debug)]
pub struct Library {
    /// `name=` of its shebang.
    pub name: String,
    /// Its whole code, shebang included (FUNCTION LIST WITHCODE, DUMP).
    pub code: Vec<u8>,
    /// Its functions, by name.
    pub functions: Vec<LibraryFunction>,
}

/// The loaded libraries and their Lua state.
pub struct Functions {
    sandbox: Sandbox,
    libraries: BTreeMap<String, Library>,
    control: Arc<RunControl>,
    rand: Arc<Mutex<Rand48>>,
    logger: Logger,
}

/// Whether `name` is a valid library or function name.
fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// The library's name and the code after its shebang line (which keeps
/// its newline), or Redis' error text.
pub fn parse_library(code: &[u8]) -> Result<(String, String, usize), String> {
    if !code.starts_with(b"#!") {
        return Err("ERR Missing library metadata".into());
    }
    let Some(end) = code.iter().position(|&b| b == b'\n') else {
        return Err("ERR Invalid library metadata".into());
    };
    let parts = match redcodec_protocol::cmdline::split_arg_bytes(&code[..end]) {
        Ok(p) if !p.is_empty() => p,
        _ => return Err("ERR Invalid library metadata".into()),
    };
    let engine = String::from_utf8_lossy(&parts[0][2..]).into_owned();
    let mut name: Option<String> = None;
    for part in &parts[1..] {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err(
                    "ERR Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            name = Some(String::from_utf8_lossy(&part[5..]).into_owned());
            continue;
        }
        return Err(format!(
            "ERR Invalid metadata value given: {}",
            String::from_utf8_lossy(part)
        ));
    }
    let Some(name) = name else {
        return Err("ERR Library name was not given".into());
    };
    Ok((name, engine, end))
}

impl Functions {
    /// No libraries.
    pub fn new(
        control: Arc<RunControl>,
        rand: Arc<Mutex<Rand48>>,
        logger: Logger,
    ) -> mlua::Result<Functions> {
        let sandbox = Self::sandbox(control.clone(), rand.clone(), logger.clone())?;
        Ok(Functions {
            sandbox,
            libraries: BTreeMap::new(),
            control,
            rand,
            logger,
        })
    }

    fn sandbox(
        control: Arc<RunControl>,
        rand: Arc<Mutex<Rand48>>,
        logger: Logger,
    ) -> mlua::Result<Sandbox> {
        let sandbox = Sandbox::new(control, rand, logger)?;
        Ok(sandbox)
    }

    /// The loaded libraries, by name.
    pub fn libraries(&self) -> impl Iterator<Item = &Library> {
        self.libraries.values()
    }

    /// The library named `name`.
    pub fn library(&self, name: &str) -> Option<&Library> {
        self.libraries.get(name)
    }

    /// How many functions the libraries hold.
    pub fn function_count(&self) -> usize {
        self.libraries.values().map(|l| l.functions.len()).sum()
    }

    /// Memory of the functions' Lua state.
    pub fn used_memory(&self) -> usize {
        self.sandbox.used_memory()
    }

    /// Sets the memory the functions' Lua state may hold.
    pub fn set_memory_limit(&self, bytes: usize) -> mlua::Result<()> {
        self.sandbox.set_memory_limit(bytes)
    }

    fn find(&self, name: &[u8]) -> Option<&LibraryFunction> {
        let name = std::str::from_utf8(name).ok()?;
        self.libraries
            .values()
            .flat_map(|l| l.functions.iter())
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// The flags of the function `name`.
    pub fn function_flags(&self, name: &[u8]) -> Option<ScriptFlags> {
        self.find(name).map(|f| f.flags)
    }

    /// Compiles and registers a library without linking it: its name and
    /// functions, or Redis' error text.
    fn create(&self, code: &[u8]) -> Result<Library, String> {
        let (name, engine, shebang_len) = parse_library(code)?;
        if !valid_name(name.as_bytes()) {
            return Err(format!("ERR {BAD_NAME}"));
        }
        if !engine.eq_ignore_ascii_case("lua") {
            return Err(format!("ERR Engine '{engine}' not found"));
        }
        let lua = self.sandbox.lua();
        let env = self.function_env()?;
        let chunk = lua
            .load(&code[shebang_len..])
            .set_name("@user_function")
            .set_mode(mlua::chunk::ChunkMode::Text)
            .set_environment(env)
            .into_function()
            .map_err(|e| match e {
                mlua::Error::SyntaxError { message, .. } => {
                    format!("ERR Error compiling function: {message}")
                }
                other => format!("ERR Error compiling function: {other}"),
            })?;
        let load: Function = self.prelude_fn("load_library")?;
        let started = Instant::now();
        let deadline = self.control.load_deadline(Some(started + LOAD_TIMEOUT));
        let result = load.call::<(bool, Value)>(chunk);
        if self.control.load_overdue() {
            self.sandbox.reset_hook();
        }
        self.control.load_deadline(deadline);
        let (ok, value) = match result {
            Ok(r) => r,
            Err(_) if started.elapsed() >= LOAD_TIMEOUT => {
                return Err("ERR Error registering functions: ERR FUNCTION LOAD timeout".into())
            }
            Err(e) => return Err(format!("ERR Error registering functions: {e}")),
        };
        if !ok {
            let msg = match &value {
                Value::Table(t) => t
                    .raw_get::<Value>("err")
                    .ok()
                    .and_then(|v| crate::convert::value_text(&v))
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default(),
                Value::Error(e) if started.elapsed() >= LOAD_TIMEOUT => {
                    let _ = e;
                    "ERR FUNCTION LOAD timeout".into()
                }
                v => format!(
                    "ERR {}",
                    crate::convert::value_text(v)
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default()
                ),
            };
            return Err(format!("ERR Error registering functions: {msg}"));
        }
        let Value::Table(list) = value else {
            return Err("ERR No functions registered".into());
        };
        let mut functions = Vec::new();
        for entry in list.sequence_values::<Table>() {
            let entry = entry.map_err(|e| format!("ERR {e}"))?;
            let mut flags = ScriptFlags::default();
            if let Ok(Value::Table(fl)) = entry.raw_get::<Value>("flags") {
                for f in fl.sequence_values::<String>().flatten() {
                    flags.set(f.as_bytes());
                }
            }
            functions.push(LibraryFunction {
                name: entry.raw_get("name").map_err(|e| format!("ERR {e}"))?,
                description: entry.raw_get("desc").ok(),
                flags,
                callback: entry.raw_get("callback").map_err(|e| format!("ERR {e}"))?,
            });
        }
        if functions.is_empty() {
            return Err("ERR No functions registered".into());
        }
        Ok(Library {
            name,
            code: code.to_vec(),
            functions,
        })
    }

    fn prelude_fn(&self, name: &str) -> Result<Function, String> {
        self.sandbox
            .prelude()
            .raw_get(name)
            .map_err(|e| format!("ERR {e}"))
    }

    fn function_env(&self) -> Result<Table, String> {
        let f: Function = self.prelude_fn("function_env")?;
        f.call(()).map_err(|e| format!("ERR {e}"))
    }

    /// `FUNCTION LOAD [REPLACE]`: the library's name, or Redis' error text.
    pub fn load(&mut self, code: &[u8], replace: bool) -> Result<String, String> {
        let library = self.create(code)?;
        if self.libraries.contains_key(&library.name) && !replace {
            return Err(format!("ERR Library '{}' already exists", library.name));
        }
        for f in &library.functions {
            let clash = self
                .libraries
                .values()
                .filter(|l| l.name != library.name)
                .flat_map(|l| l.functions.iter())
                .any(|g| g.name.eq_ignore_ascii_case(&f.name));
            if clash {
                return Err(format!("ERR Function {} already exists", f.name));
            }
        }
        let name = library.name.clone();
        self.libraries.insert(name.clone(), library);
        Ok(name)
    }

    /// FUNCTION DELETE: whether the library existed.
    pub fn delete(&mut self, name: &[u8]) -> bool {
        let name = String::from_utf8_lossy(name);
        self.libraries.remove(name.as_ref()).is_some()
    }

    /// FUNCTION FLUSH: no libraries, a fresh Lua state.
    pub fn flush(&mut self) -> mlua::Result<()> {
        self.libraries.clear();
        self.sandbox = Self::sandbox(self.control.clone(), self.rand.clone(), self.logger.clone())?;
        Ok(())
    }

    /// FUNCTION RESTORE's work: loads every library of `codes`; with
    /// `replace` an existing library of the same name is replaced, else
    /// it is an error (`Library <name> already exists`). All or nothing.
    pub fn restore(&mut self, codes: &[Vec<u8>], replace: bool) -> Result<(), String> {
        let mut created = Vec::new();
        for code in codes {
            created.push(self.create(code)?);
        }
        for lib in &created {
            if self.libraries.contains_key(&lib.name) && !replace {
                return Err(format!("ERR Library {} already exists", lib.name));
            }
        }
        let mut next = self.libraries.clone();
        for lib in &created {
            next.remove(&lib.name);
        }
        for lib in &created {
            for f in &lib.functions {
                if next
                    .values()
                    .flat_map(|l| l.functions.iter())
                    .any(|g| g.name.eq_ignore_ascii_case(&f.name))
                {
                    return Err(format!("ERR Function {} already exists", f.name));
                }
            }
            next.insert(lib.name.clone(), lib.clone());
        }
        self.libraries = next;
        Ok(())
    }

    /// FCALL / FCALL_RO.
    pub fn call(
        &self,
        runner: &mut dyn CommandRunner,
        name: &[u8],
        keys: &[Bytes],
        args: &[Bytes],
        ro: bool,
    ) -> RespValue {
        let Some(f) = self.find(name) else {
            return RespValue::Error("ERR Function not found".into());
        };
        if ro && !f.flags.no_writes {
            return RespValue::Error(WRITE_FLAG_WITH_RO.into());
        }
        let read_only = ro || f.flags.no_writes;
        let inv = crate::sandbox::Invocation {
            name: &f.name,
            keys,
            args,
            as_function: true,
            read_only,
        };
        self.sandbox.run(runner, &f.callback, &inv).into_reply()
    }
}
