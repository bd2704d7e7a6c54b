//! Which of the engine's commands write: their keys bump WATCH counters
//! and wake blocked clients.

use redcodec_engine::Reply;

/// Commands that may change the keys they name.
const WRITE: &[&str] = &[
    "append",
    "applybatch",
    "copy",
    "decr",
    "decrby",
    "del",
    "expire",
    "expireat",
    "flushall",
    "flushdb",
    "getdel",
    "getex",
    "getset",
    "hdel",
    "hincrby",
    "hincrbyfloat",
    "hmset",
    "hset",
    "hsetnx",
    "incr",
    "incrby",
    "incrbyfloat",
    "linsert",
    "lmove",
    "lmpop",
    "lpop",
    "lpush",
    "lpushx",
    "lrem",
    "lset",
    "ltrim",
    "move",
    "mset",
    "msetnx",
    "persist",
    "pexpire",
    "pexpireat",
    "psetex",
    "rename",
    "renamenx",
    "restore",
    "rpop",
    "rpoplpush",
    "rpush",
    "rpushx",
    "sadd",
    "sdiffstore",
    "set",
    "setbit",
    "setex",
    "setnx",
    "setrange",
    "sinterstore",
    "smove",
    "sort",
    "spop",
    "srem",
    "sunionstore",
    "swapdb",
    "unlink",
    "zadd",
    "zdiffstore",
    "zincrby",
    "zinterstore",
    "zmpop",
    "zpopmax",
    "zpopmin",
    "zrangestore",
    "zrem",
    "zremrangebylex",
    "zremrangebyrank",
    "zremrangebyscore",
    "zunionstore",
];

/// Write commands whose reply 0 says nothing changed.
const ZERO_IS_NO_CHANGE: &[&str] = &[
    "del",
    "expire",
    "expireat",
    "hdel",
    "hsetnx",
    "lpushx",
    "lrem",
    "msetnx",
    "persist",
    "pexpire",
    "pexpireat",
    "renamenx",
    "rpushx",
    "sadd",
    "setnx",
    "smove",
    "srem",
    "unlink",
    "zrem",
    "zremrangebylex",
    "zremrangebyrank",
    "zremrangebyscore",
];

/// Whether the command (lower-case name) writes.
pub fn is_write(name: &str) -> bool {
    WRITE.binary_search(&name).is_ok()
}

/// Whether a write command that replied `reply` may have changed its
/// keys (WATCH counters are bumped, blocked clients served): not when
/// it replied an error, nil, an empty array (a pop from nothing), or 0
/// where 0 means nothing changed.
pub fn may_have_changed(name: &str, reply: &Reply) -> bool {
    match reply {
        Reply::Error(_) | Reply::Nil | Reply::NilArray => false,
        Reply::Array(items) if items.is_empty() => false,
        Reply::Integer(0) => ZERO_IS_NO_CHANGE.binary_search(&name).is_err(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_for_binary_search() {
        assert!(WRITE.windows(2).all(|w| w[0] < w[1]));
        assert!(ZERO_IS_NO_CHANGE.windows(2).all(|w| w[0] < w[1]));
        assert!(!may_have_changed("sadd", &Reply::Integer(0)));
        assert!(
            may_have_changed("zadd", &Reply::Integer(0)),
            "ZADD 0 may update scores"
        );
        assert!(!may_have_changed("lpop", &Reply::Nil));
        assert!(is_write("lpush") && is_write("zadd") && !is_write("get"));
    }
}
