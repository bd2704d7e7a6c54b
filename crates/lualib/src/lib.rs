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
mod failure;
mod luastack;
mod number;
mod structlib;

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

#[cfg(test)]
pub(crate) mod test_support {
    //! Scripts run in a Lua state with the libraries loaded.

    /// A Lua state with the libraries loaded.
    pub(crate) fn lua() -> mlua::Lua {
        let lua = mlua::Lua::new();
        super::load(&lua).expect("load the libraries");
        lua
    }

    /// The string (or number as Lua writes it) `script` returns.
    pub(crate) fn eval(script: &str) -> Vec<u8> {
        let lua = lua();
        let value: mlua::Value = lua
            .load(script)
            .set_name("@t")
            .eval()
            .unwrap_or_else(|e| panic!("{script}: {e}"));
        match lua.coerce_string(value.clone()) {
            Ok(Some(s)) => s.as_bytes().to_vec(),
            _ => panic!("{script} returned {value:?}"),
        }
    }

    /// [`eval`] as text.
    pub(crate) fn text(script: &str) -> String {
        String::from_utf8(eval(script)).expect("UTF-8")
    }

    /// The message of the error `call` (a Lua expression) raises in
    /// `pcall`, checked to be a plain string.
    pub(crate) fn error(call: &str) -> String {
        text(&format!(
            "local ok, e = pcall(function() local r = {call} return r end) \
             assert(not ok, 'no error') assert(type(e) == 'string') return e"
        ))
    }
}
