//! A stack of Lua values, its top in Rust and the rest in a Lua table.
//!
//! Deeply nested data (cjson and cmsgpack allow thousands of levels, as
//! far as Lua's C stack limit) is walked without recursion, and the open
//! tables of every level wait here. Only the top [`HOT`] values are Rust
//! handles: mlua keeps each handle in a slot of an auxiliary Lua stack,
//! which has the same 8000-slot limit, so deeper values move to a Lua
//! table.

use std::collections::VecDeque;

use mlua::{FromLua, IntoLua, Lua, Table, Value};

use crate::failure::{lua_failure, Failure};

/// Lua 5.1's limit on the values a C function may hold on its stack
/// (`LUAI_MAXCSTACK`): the C libraries fail on deep nesting where it is
/// reached, and so do these.
pub(crate) const LUAI_MAXCSTACK: usize = 8000;

/// How many values stay Rust handles.
const HOT: usize = 64;

/// Values pushed and popped.
pub(crate) struct LuaStack {
    lua: Lua,
    /// Values 1..=`spilled`, once there are any.
    cold: Option<Table>,
    spilled: i64,
    /// The values above `spilled`, the top last.
    hot: VecDeque<Value>,
}

impl LuaStack {
    pub(crate) fn new(lua: &Lua) -> Result<LuaStack, Failure> {
        Ok(LuaStack {
            lua: lua.clone(),
            cold: None,
            spilled: 0,
            hot: VecDeque::new(),
        })
    }

    fn cold(&mut self) -> Result<&Table, Failure> {
        if self.cold.is_none() {
            self.cold = Some(self.lua.create_table().map_err(lua_failure)?);
        }
        Ok(self.cold.as_ref().expect("just created"))
    }

    pub(crate) fn push(&mut self, value: impl IntoLua) -> Result<(), Failure> {
        if self.hot.len() == HOT {
            let oldest = self.hot.pop_front().expect("HOT values");
            self.spilled += 1;
            let index = self.spilled;
            self.cold()?.raw_set(index, oldest).map_err(lua_failure)?;
        }
        let value = value.into_lua(&self.lua).map_err(lua_failure)?;
        self.hot.push_back(value);
        Ok(())
    }

    /// How many values it holds.
    pub(crate) fn len(&self) -> i64 {
        self.spilled + self.hot.len() as i64
    }

    /// The value `below` places under the top (0: the top).
    pub(crate) fn peek<V: FromLua>(&self, below: i64) -> Result<V, Failure> {
        let hot = self.hot.len() as i64;
        let value = if below < hot {
            self.hot[(hot - 1 - below) as usize].clone()
        } else {
            match &self.cold {
                Some(cold) => cold
                    .raw_get(self.spilled - (below - hot))
                    .map_err(lua_failure)?,
                None => Value::Nil,
            }
        };
        V::from_lua(value, &self.lua).map_err(lua_failure)
    }

    /// Replaces the value at `index` (from 1).
    pub(crate) fn set(&mut self, index: i64, value: impl IntoLua) -> Result<(), Failure> {
        if index > self.spilled {
            let value = value.into_lua(&self.lua).map_err(lua_failure)?;
            if let Some(slot) = self.hot.get_mut((index - self.spilled - 1) as usize) {
                *slot = value;
            }
            return Ok(());
        }
        self.cold()?.raw_set(index, value).map_err(lua_failure)
    }

    /// A table holding the values at 1..len.
    pub(crate) fn into_table(mut self) -> Result<Table, Failure> {
        let hot = std::mem::take(&mut self.hot);
        let table = self.cold()?.clone();
        for (i, value) in hot.into_iter().enumerate() {
            table
                .raw_set(self.spilled + i as i64 + 1, value)
                .map_err(lua_failure)?;
        }
        Ok(table)
    }

    /// Drops the top `n` values (those in the Lua table stay there until
    /// overwritten, unreachable).
    pub(crate) fn drop_top(&mut self, n: i64) {
        let from_hot = n.min(self.hot.len() as i64);
        self.hot.truncate(self.hot.len() - from_hot as usize);
        self.spilled = (self.spilled - (n - from_hot)).max(0);
    }

    pub(crate) fn pop<V: FromLua>(&mut self) -> Result<V, Failure> {
        let value = match self.hot.pop_back() {
            Some(value) => value,
            None if self.spilled > 0 => {
                let index = self.spilled;
                let cold = self.cold()?;
                let value: Value = cold.raw_get(index).map_err(lua_failure)?;
                cold.raw_set(index, Value::Nil).map_err(lua_failure)?;
                self.spilled -= 1;
                value
            }
            None => Value::Nil,
        };
        V::from_lua(value, &self.lua).map_err(lua_failure)
    }
}
