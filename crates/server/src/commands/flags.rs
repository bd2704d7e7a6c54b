//! Which of the engine's commands write: their keys bump WATCH counters
//! and wake blocked clients.

/// Commands that may change the keys they name.
const WRITE: &[&str] = &[
    "append",
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

/// Whether the command (lower-case name) writes.
pub fn is_write(name: &str) -> bool {
    WRITE.binary_search(&name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_for_binary_search() {
        assert!(WRITE.windows(2).all(|w| w[0] < w[1]));
        assert!(is_write("lpush") && is_write("zadd") && !is_write("get"));
    }
}
