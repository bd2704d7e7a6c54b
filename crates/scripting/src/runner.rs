//! How a script reaches the server: the [`CommandRunner`] the server
//! implements, and Redis 7.0's texts for the commands a script may not
//! call (`scriptCall` in Redis' script.c).

use crate::value::RespValue;
use bytes::Bytes;

/// `Unknown Redis command called from script`
pub const UNKNOWN_COMMAND: &str = "Unknown Redis command called from script";
/// `Wrong number of args calling Redis command from script`
pub const WRONG_ARITY: &str = "Wrong number of args calling Redis command from script";
/// `This Redis command is not allowed from script`
pub const NOT_ALLOWED: &str = "This Redis command is not allowed from script";
/// `Write commands are not allowed from read-only scripts.`
pub const WRITE_IN_READ_ONLY: &str = "Write commands are not allowed from read-only scripts.";

/// Runs the commands a script calls, with the server's state held for the
/// whole script.
pub trait CommandRunner {
    /// Runs `args` (name first) for a script and gives its reply, in RESP3
    /// types when `resp3` (the script called `redis.setresp(3)`).
    /// `read_only`: the run may not write (EVAL_RO, FCALL_RO, a
    /// `no-writes` script). A command refused before it runs is `Err`
    /// with Redis' text (one of this module's constants), which the
    /// script sees as an `ERR …` error.
    fn call(&mut self, args: &[Bytes], resp3: bool, read_only: bool) -> Result<RespValue, String>;

    /// Whether a command named `name` exists (`redis.acl_check_cmd`).
    fn exists(&self, name: &[u8]) -> bool;
}
