//! The C libraries Redis 7.0 loads into its Lua 5.1 scripting state,
//! written in Rust: `cjson` (lua-cjson 2.1.0), `cmsgpack` (lua-cmsgpack
//! 0.4.0), `bit` (LuaBitOp 1.0.2) and `struct` (Roberto Ierusalimschy's
//! struct library).
//!
//! Their behaviour follows Redis' copies byte for byte: the same
//! encodings, the same number formatting (`%.14g`), the same limits and
//! the same error texts, raised as plain strings as a C function raises
//! them. `tests/redis_compare.rs` runs a corpus of scripts through both
//! this crate and a real redis-server and compares every result.
//!
//! ```
//! let lua = mlua::Lua::new();
//! redcodec_lualib::load(&lua).unwrap();
//! let json: String = lua.load("return cjson.encode({1, 2, {a = true}})").eval().unwrap();
//! assert_eq!(json, r#"[1,2,{"a":true}]"#);
//! ```

mod bit;
mod cfunction;
mod cjson;
mod cmsgpack;
mod luastack;
mod number;
mod structlib;

/// Lua 5.1's limit on the values a C function may hold on its stack
/// (`LUAI_MAXCSTACK`): the C libraries fail on deep nesting where it is
/// reached, and so do these.
pub(crate) const LUAI_MAXCSTACK: usize = 8000;

/// Registers the globals `cjson`, `cmsgpack`, `bit` and `struct` as Redis
/// 7.0 does.
pub fn load(lua: &mlua::Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    globals.set("cjson", cjson::module(lua)?)?;
    globals.set("struct", structlib::module(lua)?)?;
    globals.set("cmsgpack", cmsgpack::module(lua)?)?;
    globals.set("bit", bit::module(lua)?)?;
    Ok(())
}
