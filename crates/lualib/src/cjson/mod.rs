//! `cjson`: lua-cjson 2.1.0 as Redis 7.0 ships it — JSON encoding of Lua
//! values and decoding into them, with its configuration functions.
//!
//! Each table `cjson.new()` returns has a configuration of its own, as
//! the C module's closures share one configuration userdata.

mod config;
mod decode;
mod encode;

use std::sync::{Arc, Mutex, PoisonError};

use mlua::{LightUserData, Lua, Table, Value};

use crate::cfunction::{function, results, Args, Failure, Outcome};

pub(crate) use config::Config;

/// The configuration the functions of one `cjson` table share.
type Shared = Arc<Mutex<Config>>;

/// `cjson.null`: the NULL light userdata JSON `null` decodes to.
pub(crate) fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// A new `cjson` module table (what `cjson.new()` returns).
pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let config: Shared = Arc::new(Mutex::new(Config::default()));
    let table = lua.create_table()?;
    let with = |f: fn(&Lua, &Args, &mut Config) -> Outcome| {
        let config = Arc::clone(&config);
        function(lua, move |lua, args| {
            let mut config = config.lock().unwrap_or_else(PoisonError::into_inner);
            f(lua, args, &mut config)
        })
    };
    table.raw_set("encode", with(encode::encode)?)?;
    table.raw_set("decode", with(decode::decode)?)?;
    table.raw_set("encode_sparse_array", with(config::encode_sparse_array)?)?;
    table.raw_set("encode_max_depth", with(config::encode_max_depth)?)?;
    table.raw_set("decode_max_depth", with(config::decode_max_depth)?)?;
    table.raw_set(
        "encode_number_precision",
        with(config::encode_number_precision)?,
    )?;
    table.raw_set("encode_keep_buffer", with(config::encode_keep_buffer)?)?;
    table.raw_set(
        "encode_invalid_numbers",
        with(config::encode_invalid_numbers)?,
    )?;
    table.raw_set(
        "decode_invalid_numbers",
        with(config::decode_invalid_numbers)?,
    )?;
    table.raw_set("new", function(lua, new)?)?;
    table.raw_set("null", null())?;
    table.raw_set("_NAME", "cjson")?;
    table.raw_set("_VERSION", "2.1.0")?;
    Ok(table)
}

/// `cjson.new()`: a module table with a configuration of its own.
fn new(lua: &Lua, _args: &Args) -> Outcome {
    let table = module(lua).map_err(|e| Failure::error(e.to_string()))?;
    results([Value::Table(table)])
}
