//! Why a library function failed: the error a C function of Redis'
//! libraries would raise, before [`crate::cfunction`] raises it in Lua.

/// Why a library function failed, and how Lua reports it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// `luaL_error`: the message after the caller's position.
    Error(Vec<u8>),
    /// `luaL_argerror`: `bad argument #n to 'name' (message)`.
    Arg(i32, Vec<u8>),
    /// An error Lua's core raises inside a C function (`lua_error` of the
    /// bare message, no position), such as `table index is nil`.
    Bare(Vec<u8>),
}

impl Failure {
    /// A `luaL_error` failure.
    pub(crate) fn error(message: impl Into<Vec<u8>>) -> Failure {
        Failure::Error(message.into())
    }

    /// A `luaL_argerror` failure for argument `n`.
    pub(crate) fn arg(n: i32, message: impl Into<Vec<u8>>) -> Failure {
        Failure::Arg(n, message.into())
    }
}

/// An mlua failure as a library failure.
pub(crate) fn lua_failure(e: mlua::Error) -> Failure {
    Failure::error(e.to_string())
}
