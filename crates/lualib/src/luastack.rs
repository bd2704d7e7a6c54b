//! A stack of Lua values kept in a Lua table.
//!
//! Deeply nested data (cjson and cmsgpack allow thousands of levels, as
//! far as Lua's C stack limit) is walked without recursion, and the open
//! tables of every level are kept here, in Lua, rather than as Rust
//! handles: mlua keeps each handle in a slot of an auxiliary Lua stack,
//! which has the same 8000-slot limit.

use mlua::{FromLua, IntoLua, Lua, Table, Value};

use crate::cfunction::Failure;

/// An mlua failure as a library failure.
pub(crate) fn lua_failure(e: mlua::Error) -> Failure {
    Failure::error(e.to_string())
}

/// Values pushed and popped in Lua.
pub(crate) struct LuaStack {
    table: Table,
    len: i64,
}

impl LuaStack {
    pub(crate) fn new(lua: &Lua) -> Result<LuaStack, Failure> {
        Ok(LuaStack {
            table: lua.create_table().map_err(lua_failure)?,
            len: 0,
        })
    }

    pub(crate) fn push(&mut self, value: impl IntoLua) -> Result<(), Failure> {
        self.len += 1;
        self.table.raw_set(self.len, value).map_err(lua_failure)
    }

    /// The value `below` places under the top (0: the top).
    pub(crate) fn peek<V: FromLua>(&self, below: i64) -> Result<V, Failure> {
        self.table.raw_get(self.len - below).map_err(lua_failure)
    }

    /// How many values it holds.
    pub(crate) fn len(&self) -> i64 {
        self.len
    }

    /// Replaces the value at `index` (from 1).
    pub(crate) fn set(&self, index: i64, value: impl IntoLua) -> Result<(), Failure> {
        self.table.raw_set(index, value).map_err(lua_failure)
    }

    /// The table holding the values at 1..len.
    pub(crate) fn into_table(self) -> Table {
        self.table
    }

    pub(crate) fn pop<V: FromLua>(&mut self) -> Result<V, Failure> {
        let value = self.peek(0)?;
        self.table
            .raw_set(self.len, Value::Nil)
            .map_err(lua_failure)?;
        self.len -= 1;
        Ok(value)
    }
}
