//! The command table: every command the engine implements, with Redis'
//! arity (negative: at least that many words, the name included), where
//! its keys are, and the handler that implements it. One list, family by
//! family, as Redis' own command table keeps them; the families hold only
//! the handlers.

use crate::command::{Keys, Table};
use crate::store::KvStore;
use redcodec_codec::Codec;

use super::{dump, hashes, keys, lists, scan, server, sets, sort, strings, zsets};

/// The table of every command the engine implements.
pub fn table<C: Codec, S: KvStore>() -> Table<C, S> {
    let mut t = Table::default();
    // Strings
    t.add("get", 2, Keys::First, strings::get);
    t.add("lcs", -3, Keys::FirstTwo, strings::lcs);
    t.add("setbit", 4, Keys::First, strings::setbit);
    t.add("getbit", 3, Keys::First, strings::getbit);
    t.add("bitcount", -2, Keys::First, strings::bitcount);
    t.add("set", -3, Keys::First, strings::set);
    t.add("setnx", 3, Keys::First, strings::setnx);
    t.add("setex", 4, Keys::First, strings::setex);
    t.add("psetex", 4, Keys::First, strings::psetex);
    t.add("mget", -2, Keys::All, strings::mget);
    t.add("mset", -3, Keys::Every(2), strings::mset);
    t.add("msetnx", -3, Keys::Every(2), strings::msetnx);
    t.add("getset", 3, Keys::First, strings::getset);
    t.add("getdel", 2, Keys::First, strings::getdel);
    t.add("getex", -2, Keys::First, strings::getex);
    t.add("append", 3, Keys::First, strings::append);
    t.add("strlen", 2, Keys::First, strings::strlen);
    t.add("incr", 2, Keys::First, strings::incr);
    t.add("decr", 2, Keys::First, strings::decr);
    t.add("incrby", 3, Keys::First, strings::incrby);
    t.add("decrby", 3, Keys::First, strings::decrby);
    t.add("incrbyfloat", 3, Keys::First, strings::incrbyfloat);
    t.add("getrange", 4, Keys::First, strings::getrange);
    t.add("setrange", 4, Keys::First, strings::setrange);
    // Hashes
    t.add("hset", -4, Keys::First, hashes::hset);
    t.add("hsetnx", 4, Keys::First, hashes::hsetnx);
    t.add("hget", 3, Keys::First, hashes::hget);
    t.add("hmget", -3, Keys::First, hashes::hmget);
    t.add("hmset", -4, Keys::First, hashes::hmset);
    t.add("hdel", -3, Keys::First, hashes::hdel);
    t.add("hlen", 2, Keys::First, hashes::hlen);
    t.add("hexists", 3, Keys::First, hashes::hexists);
    t.add("hgetall", 2, Keys::First, hashes::hgetall);
    t.add("hkeys", 2, Keys::First, hashes::hkeys);
    t.add("hvals", 2, Keys::First, hashes::hvals);
    t.add("hincrby", 4, Keys::First, hashes::hincrby);
    t.add("hincrbyfloat", 4, Keys::First, hashes::hincrbyfloat);
    t.add("hstrlen", 3, Keys::First, hashes::hstrlen);
    t.add("hscan", -3, Keys::First, hashes::hscan);
    t.add("hrandfield", -2, Keys::First, hashes::hrandfield);
    // Lists
    t.add("lpush", -3, Keys::First, lists::lpush);
    t.add("rpush", -3, Keys::First, lists::rpush);
    t.add("lpushx", -3, Keys::First, lists::lpushx);
    t.add("rpushx", -3, Keys::First, lists::rpushx);
    t.add("lpop", -2, Keys::First, lists::lpop);
    t.add("rpop", -2, Keys::First, lists::rpop);
    t.add("llen", 2, Keys::First, lists::llen);
    t.add("lindex", 3, Keys::First, lists::lindex);
    t.add("lrange", 4, Keys::First, lists::lrange);
    t.add("lset", 4, Keys::First, lists::lset);
    t.add("linsert", 5, Keys::First, lists::linsert);
    t.add("lrem", 4, Keys::First, lists::lrem);
    t.add("ltrim", 4, Keys::First, lists::ltrim);
    t.add("lpos", -3, Keys::First, lists::lpos);
    t.add("rpoplpush", 3, Keys::FirstTwo, lists::rpoplpush);
    t.add("lmove", 5, Keys::FirstTwo, lists::lmove);
    t.add("lmpop", -4, Keys::NumKeys, lists::lmpop);
    // Sets
    t.add("sadd", -3, Keys::First, sets::sadd);
    t.add("srem", -3, Keys::First, sets::srem);
    t.add("scard", 2, Keys::First, sets::scard);
    t.add("sismember", 3, Keys::First, sets::sismember);
    t.add("smismember", -3, Keys::First, sets::smismember);
    t.add("smembers", 2, Keys::First, sets::smembers);
    t.add("spop", -2, Keys::First, sets::spop);
    t.add("srandmember", -2, Keys::First, sets::srandmember);
    t.add("smove", 4, Keys::FirstTwo, sets::smove);
    t.add("sinter", -2, Keys::All, sets::sinter);
    t.add("sunion", -2, Keys::All, sets::sunion);
    t.add("sdiff", -2, Keys::All, sets::sdiff);
    t.add("sintercard", -3, Keys::NumKeys, sets::sintercard);
    t.add("sinterstore", -3, Keys::All, sets::sinterstore);
    t.add("sunionstore", -3, Keys::All, sets::sunionstore);
    t.add("sdiffstore", -3, Keys::All, sets::sdiffstore);
    t.add("sscan", -3, Keys::First, sets::sscan);
    // Sorted sets
    t.add("zadd", -4, Keys::First, zsets::members::zadd);
    t.add("zincrby", 4, Keys::First, zsets::members::zincrby);
    t.add("zrem", -3, Keys::First, zsets::members::zrem);
    t.add("zcard", 2, Keys::First, zsets::members::zcard);
    t.add("zscore", 3, Keys::First, zsets::members::zscore);
    t.add("zmscore", -3, Keys::First, zsets::members::zmscore);
    t.add("zrandmember", -2, Keys::First, zsets::members::zrandmember);
    t.add("zrank", 3, Keys::First, zsets::range::zrank);
    t.add("zrevrank", 3, Keys::First, zsets::range::zrevrank);
    t.add("zrange", -4, Keys::First, zsets::range::zrange);
    t.add("zrevrange", -4, Keys::First, zsets::range::zrevrange);
    t.add("zrangestore", -5, Keys::FirstTwo, zsets::range::zrangestore);
    t.add(
        "zrangebyscore",
        -4,
        Keys::First,
        zsets::range::zrangebyscore,
    );
    t.add(
        "zrevrangebyscore",
        -4,
        Keys::First,
        zsets::range::zrevrangebyscore,
    );
    t.add("zrangebylex", -4, Keys::First, zsets::range::zrangebylex);
    t.add(
        "zrevrangebylex",
        -4,
        Keys::First,
        zsets::range::zrevrangebylex,
    );
    t.add("zcount", 4, Keys::First, zsets::range::zcount);
    t.add("zlexcount", 4, Keys::First, zsets::range::zlexcount);
    t.add("zscan", -3, Keys::First, zsets::range::zscan);
    t.add(
        "zremrangebyrank",
        4,
        Keys::First,
        zsets::remove::zremrangebyrank,
    );
    t.add(
        "zremrangebyscore",
        4,
        Keys::First,
        zsets::remove::zremrangebyscore,
    );
    t.add(
        "zremrangebylex",
        4,
        Keys::First,
        zsets::remove::zremrangebylex,
    );
    t.add("zpopmin", -2, Keys::First, zsets::remove::zpopmin);
    t.add("zpopmax", -2, Keys::First, zsets::remove::zpopmax);
    t.add("zmpop", -4, Keys::NumKeys, zsets::remove::zmpop);
    t.add(
        "zunionstore",
        -4,
        Keys::DestNumKeys,
        zsets::setops::zunionstore,
    );
    t.add(
        "zinterstore",
        -4,
        Keys::DestNumKeys,
        zsets::setops::zinterstore,
    );
    t.add(
        "zdiffstore",
        -4,
        Keys::DestNumKeys,
        zsets::setops::zdiffstore,
    );
    t.add("zunion", -3, Keys::NumKeys, zsets::setops::zunion);
    t.add("zinter", -3, Keys::NumKeys, zsets::setops::zinter);
    t.add("zdiff", -3, Keys::NumKeys, zsets::setops::zdiff);
    t.add("zintercard", -3, Keys::NumKeys, zsets::setops::zintercard);
    // Keys and expiry
    t.add("del", -2, Keys::All, keys::del);
    t.add("unlink", -2, Keys::All, keys::del);
    t.add("exists", -2, Keys::All, keys::exists);
    t.add("type", 2, Keys::First, keys::type_of);
    t.add("expire", -3, Keys::First, keys::expire);
    t.add("pexpire", -3, Keys::First, keys::pexpire);
    t.add("expireat", -3, Keys::First, keys::expireat);
    t.add("pexpireat", -3, Keys::First, keys::pexpireat);
    t.add("ttl", 2, Keys::First, keys::ttl);
    t.add("pttl", 2, Keys::First, keys::pttl);
    t.add("expiretime", 2, Keys::First, keys::expiretime);
    t.add("pexpiretime", 2, Keys::First, keys::pexpiretime);
    t.add("persist", 2, Keys::First, keys::persist);
    t.add("rename", 3, Keys::FirstTwo, keys::rename);
    t.add("renamenx", 3, Keys::FirstTwo, keys::renamenx);
    t.add("copy", -3, Keys::FirstTwo, keys::copy);
    // SORT
    t.add("sort", -2, Keys::Sort, sort::sort);
    t.add("sort_ro", -2, Keys::First, sort::sort_ro);
    // SCAN
    t.add("keys", 2, Keys::None, scan::keys);
    t.add("scan", -2, Keys::None, scan::scan);
    t.add("dbsize", 1, Keys::None, scan::dbsize);
    t.add("randomkey", 1, Keys::None, scan::randomkey);
    // Server and keyspace
    t.add("ping", -1, Keys::None, server::ping);
    t.add("echo", 2, Keys::None, server::echo);
    t.add("flushdb", -1, Keys::Everything, server::flush);
    t.add("flushall", -1, Keys::Everything, server::flush);
    // DUMP and RESTORE
    t.add("dump", 2, Keys::First, dump::dump);
    t.add("restore", -4, Keys::First, dump::restore);
    t
}
