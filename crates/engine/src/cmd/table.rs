//! The command table: every command the engine implements, with Redis'
//! arity (negative: at least that many words, the name included), where
//! its keys are, its flags (write, …), the RESP3 shape of its reply when
//! not plain, and the handler that implements it. One list, family by
//! family, as Redis' own command table keeps them; the families hold only
//! the handlers.

use crate::command::{Flags, Keys, Shape, ShapeRule, Table};
use crate::store::KvStore;
use redcodec_codec::Codec;

use super::{
    bitfield, dump, hashes, hyperloglog, keys, lists, scan, server, sets, sort, strings, zsets,
};

/// Reads (and the keyless commands): no flag the server acts on.
const R: Flags = Flags::NONE;
/// Reads of the whole keyspace (KEYS, SCAN…).
const RK: Flags = Flags::READS_KEYSPACE;
/// Writes: their keys bump WATCH counters and wake blocked clients.
const W: Flags = Flags::WRITE;
/// Writes whose reply 0 (or a negative one) says nothing changed.
const W0: Flags = Flags::WRITE.with(Flags::ZERO_IS_NO_CHANGE);
/// `[[m, s], …]` with `WITHSCORES`.
const WITHSCORES: ShapeRule = ShapeRule::with_word("withscores", Shape::ScoredPairs);
/// ZPOPMIN / ZPOPMAX: pairs with a count, one flat pair without.
const POP_SHAPE: ShapeRule = ShapeRule::MoreThan {
    argc: 2,
    then: Shape::ScoredPairs,
    otherwise: Shape::ScoredFlat,
};

/// The table of every command the engine implements.
pub fn table<C: Codec, S: KvStore>() -> Table<C, S> {
    let mut t = Table::default();
    // Strings
    t.add("get", 2, Keys::First, R, strings::get);
    t.add("lcs", -3, Keys::FirstTwo, R, strings::lcs)
        .shaped(ShapeRule::with_word("idx", Shape::Map));
    t.add("setbit", 4, Keys::First, W, strings::setbit);
    t.add("getbit", 3, Keys::First, R, strings::getbit);
    t.add("bitcount", -2, Keys::First, R, strings::bitcount);
    t.add("bitpos", -3, Keys::First, R, strings::bitpos);
    t.add("bitop", -4, Keys::AfterFirst, W, strings::bitop);
    t.add("bitfield", -2, Keys::First, W, bitfield::bitfield);
    t.add("bitfield_ro", -2, Keys::First, R, bitfield::bitfield_ro);
    t.add("set", -3, Keys::First, W, strings::set);
    t.add("setnx", 3, Keys::First, W0, strings::setnx);
    t.add("setex", 4, Keys::First, W, strings::setex);
    t.add("psetex", 4, Keys::First, W, strings::psetex);
    t.add("mget", -2, Keys::All, R, strings::mget);
    t.add("mset", -3, Keys::Every(2), W, strings::mset);
    t.add("msetnx", -3, Keys::Every(2), W0, strings::msetnx);
    t.add("getset", 3, Keys::First, W, strings::getset);
    t.add("getdel", 2, Keys::First, W, strings::getdel);
    t.add("getex", -2, Keys::First, W, strings::getex);
    t.add("append", 3, Keys::First, W, strings::append);
    t.add("strlen", 2, Keys::First, R, strings::strlen);
    t.add("incr", 2, Keys::First, W, strings::incr);
    t.add("decr", 2, Keys::First, W, strings::decr);
    t.add("incrby", 3, Keys::First, W, strings::incrby);
    t.add("decrby", 3, Keys::First, W, strings::decrby);
    t.add("incrbyfloat", 3, Keys::First, W, strings::incrbyfloat);
    t.add("getrange", 4, Keys::First, R, strings::getrange);
    t.add("substr", 4, Keys::First, R, strings::getrange);
    t.add("setrange", 4, Keys::First, W, strings::setrange);
    // HyperLogLog (strings holding Redis' HLL bytes). PFCOUNT stores the
    // cardinality it computed in the key's header, as Redis does.
    t.add("pfadd", -2, Keys::First, W, hyperloglog::pfadd);
    t.add(
        "pfcount",
        -2,
        Keys::All,
        Flags::MAY_REPLICATE,
        hyperloglog::pfcount,
    );
    t.add("pfmerge", -2, Keys::All, W, hyperloglog::pfmerge);
    // Kvrocks' own (served on every format: Redis has no such command)
    t.add("cas", -4, Keys::First, W0, strings::cas);
    t.add("cad", 3, Keys::First, W0, strings::cad);
    // Hashes
    t.add("hset", -4, Keys::First, W, hashes::hset);
    t.add("hsetnx", 4, Keys::First, W0, hashes::hsetnx);
    t.add("hget", 3, Keys::First, R, hashes::hget);
    t.add("hmget", -3, Keys::First, R, hashes::hmget);
    t.add("hmset", -4, Keys::First, W, hashes::hmset);
    t.add("hdel", -3, Keys::First, W0, hashes::hdel);
    t.add("hlen", 2, Keys::First, R, hashes::hlen);
    t.add("hexists", 3, Keys::First, R, hashes::hexists);
    t.add("hgetall", 2, Keys::First, R, hashes::hgetall)
        .shaped(ShapeRule::Always(Shape::Map));
    t.add("hkeys", 2, Keys::First, R, hashes::hkeys);
    t.add("hvals", 2, Keys::First, R, hashes::hvals);
    t.add("hincrby", 4, Keys::First, W, hashes::hincrby);
    t.add("hincrbyfloat", 4, Keys::First, W, hashes::hincrbyfloat);
    t.add("hstrlen", 3, Keys::First, R, hashes::hstrlen);
    t.add("hscan", -3, Keys::First, R, hashes::hscan);
    t.add("hrandfield", -2, Keys::First, R, hashes::hrandfield)
        .shaped(ShapeRule::with_word("withvalues", Shape::Pairs));
    // Kvrocks' own
    t.add("hrangebylex", -4, Keys::First, R, hashes::hrangebylex);
    // Lists
    t.add("lpush", -3, Keys::First, W, lists::lpush);
    t.add("rpush", -3, Keys::First, W, lists::rpush);
    t.add("lpushx", -3, Keys::First, W0, lists::lpushx);
    t.add("rpushx", -3, Keys::First, W0, lists::rpushx);
    t.add("lpop", -2, Keys::First, W, lists::lpop);
    t.add("rpop", -2, Keys::First, W, lists::rpop);
    t.add("llen", 2, Keys::First, R, lists::llen);
    t.add("lindex", 3, Keys::First, R, lists::lindex);
    t.add("lrange", 4, Keys::First, R, lists::lrange);
    t.add("lset", 4, Keys::First, W, lists::lset);
    t.add("linsert", 5, Keys::First, W, lists::linsert);
    t.add("lrem", 4, Keys::First, W0, lists::lrem);
    t.add("ltrim", 4, Keys::First, W, lists::ltrim);
    t.add("lpos", -3, Keys::First, R, lists::lpos);
    t.add("rpoplpush", 3, Keys::FirstTwo, W, lists::rpoplpush);
    t.add("lmove", 5, Keys::FirstTwo, W, lists::lmove);
    t.add("lmpop", -4, Keys::NumKeys, W, lists::lmpop);
    // Sets
    t.add("sadd", -3, Keys::First, W0, sets::sadd);
    t.add("srem", -3, Keys::First, W0, sets::srem);
    t.add("scard", 2, Keys::First, R, sets::scard);
    t.add("sismember", 3, Keys::First, R, sets::sismember);
    t.add("smismember", -3, Keys::First, R, sets::smismember);
    t.add("smembers", 2, Keys::First, R, sets::smembers)
        .shaped(ShapeRule::Always(Shape::Set));
    t.add("spop", -2, Keys::First, W, sets::spop);
    t.add("srandmember", -2, Keys::First, R, sets::srandmember);
    t.add("smove", 4, Keys::FirstTwo, W0, sets::smove);
    t.add("sinter", -2, Keys::All, R, sets::sinter)
        .shaped(ShapeRule::Always(Shape::Set));
    t.add("sunion", -2, Keys::All, R, sets::sunion)
        .shaped(ShapeRule::Always(Shape::Set));
    t.add("sdiff", -2, Keys::All, R, sets::sdiff)
        .shaped(ShapeRule::Always(Shape::Set));
    t.add("sintercard", -3, Keys::NumKeys, R, sets::sintercard);
    t.add("sinterstore", -3, Keys::All, W, sets::sinterstore);
    t.add("sunionstore", -3, Keys::All, W, sets::sunionstore);
    t.add("sdiffstore", -3, Keys::All, W, sets::sdiffstore);
    t.add("sscan", -3, Keys::First, R, sets::sscan);
    // Sorted sets
    t.add("zadd", -4, Keys::First, W, zsets::members::zadd)
        .shaped(ShapeRule::with_word("incr", Shape::Double));
    t.add("zincrby", 4, Keys::First, W, zsets::members::zincrby)
        .shaped(ShapeRule::Always(Shape::Double));
    t.add("zrem", -3, Keys::First, W0, zsets::members::zrem);
    t.add("zcard", 2, Keys::First, R, zsets::members::zcard);
    // GEO: points as members of sorted sets, scored by their geohash.
    t.add("geoadd", -5, Keys::First, W, zsets::geo::geoadd);
    t.add("geopos", -2, Keys::First, R, zsets::geo::geopos)
        .shaped(ShapeRule::Always(Shape::Positions));
    t.add("geodist", -4, Keys::First, R, zsets::geo::geodist);
    t.add("geohash", -2, Keys::First, R, zsets::geo::geohash);
    let located = ShapeRule::Always(Shape::Located);
    t.add(
        "georadius",
        -6,
        Keys::GeoRadius,
        W,
        zsets::geo_search::georadius,
    )
    .shaped(located);
    t.add(
        "georadius_ro",
        -6,
        Keys::First,
        R,
        zsets::geo_search::georadius_ro,
    )
    .shaped(located);
    t.add(
        "georadiusbymember",
        -5,
        Keys::GeoRadius,
        W,
        zsets::geo_search::georadiusbymember,
    )
    .shaped(located);
    t.add(
        "georadiusbymember_ro",
        -5,
        Keys::First,
        R,
        zsets::geo_search::georadiusbymember_ro,
    )
    .shaped(located);
    t.add(
        "geosearch",
        -7,
        Keys::First,
        R,
        zsets::geo_search::geosearch,
    )
    .shaped(located);
    t.add(
        "geosearchstore",
        -8,
        Keys::FirstTwo,
        W,
        zsets::geo_search::geosearchstore,
    );
    t.add("zscore", 3, Keys::First, R, zsets::members::zscore)
        .shaped(ShapeRule::Always(Shape::Double));
    t.add("zmscore", -3, Keys::First, R, zsets::members::zmscore)
        .shaped(ShapeRule::Always(Shape::Doubles));
    t.add(
        "zrandmember",
        -2,
        Keys::First,
        R,
        zsets::members::zrandmember,
    )
    .shaped(WITHSCORES);
    t.add("zrank", 3, Keys::First, R, zsets::range::zrank);
    t.add("zrevrank", 3, Keys::First, R, zsets::range::zrevrank);
    t.add("zrange", -4, Keys::First, R, zsets::range::zrange)
        .shaped(WITHSCORES);
    t.add("zrevrange", -4, Keys::First, R, zsets::range::zrevrange)
        .shaped(WITHSCORES);
    t.add(
        "zrangestore",
        -5,
        Keys::FirstTwo,
        W,
        zsets::range::zrangestore,
    );
    t.add(
        "zrangebyscore",
        -4,
        Keys::First,
        R,
        zsets::range::zrangebyscore,
    )
    .shaped(WITHSCORES);
    t.add(
        "zrevrangebyscore",
        -4,
        Keys::First,
        R,
        zsets::range::zrevrangebyscore,
    )
    .shaped(WITHSCORES);
    t.add("zrangebylex", -4, Keys::First, R, zsets::range::zrangebylex);
    t.add(
        "zrevrangebylex",
        -4,
        Keys::First,
        R,
        zsets::range::zrevrangebylex,
    );
    t.add("zcount", 4, Keys::First, R, zsets::range::zcount);
    t.add("zlexcount", 4, Keys::First, R, zsets::range::zlexcount);
    t.add("zscan", -3, Keys::First, R, zsets::range::zscan);
    t.add(
        "zremrangebyrank",
        4,
        Keys::First,
        W0,
        zsets::remove::zremrangebyrank,
    );
    t.add(
        "zremrangebyscore",
        4,
        Keys::First,
        W0,
        zsets::remove::zremrangebyscore,
    );
    t.add(
        "zremrangebylex",
        4,
        Keys::First,
        W0,
        zsets::remove::zremrangebylex,
    );
    t.add("zpopmin", -2, Keys::First, W, zsets::remove::zpopmin)
        .shaped(POP_SHAPE);
    t.add("zpopmax", -2, Keys::First, W, zsets::remove::zpopmax)
        .shaped(POP_SHAPE);
    t.add("zmpop", -4, Keys::NumKeys, W, zsets::remove::zmpop)
        .shaped(ShapeRule::Always(Shape::KeyScoredPairs));
    t.add(
        "zunionstore",
        -4,
        Keys::DestNumKeys,
        W,
        zsets::setops::zunionstore,
    );
    t.add(
        "zinterstore",
        -4,
        Keys::DestNumKeys,
        W,
        zsets::setops::zinterstore,
    );
    t.add(
        "zdiffstore",
        -4,
        Keys::DestNumKeys,
        W,
        zsets::setops::zdiffstore,
    );
    t.add("zunion", -3, Keys::NumKeys, R, zsets::setops::zunion)
        .shaped(WITHSCORES);
    t.add("zinter", -3, Keys::NumKeys, R, zsets::setops::zinter)
        .shaped(WITHSCORES);
    t.add("zdiff", -3, Keys::NumKeys, R, zsets::setops::zdiff)
        .shaped(WITHSCORES);
    t.add(
        "zintercard",
        -3,
        Keys::NumKeys,
        R,
        zsets::setops::zintercard,
    );
    // Keys and expiry
    t.add("del", -2, Keys::All, W0, keys::del);
    t.add("unlink", -2, Keys::All, W0, keys::del);
    t.add("exists", -2, Keys::All, R, keys::exists);
    // TOUCH: the keys that exist, each time named (no access time is kept).
    t.add("touch", -2, Keys::All, R, keys::exists);
    t.add("type", 2, Keys::First, R, keys::type_of);
    t.add("expire", -3, Keys::First, W0, keys::expire);
    t.add("pexpire", -3, Keys::First, W0, keys::pexpire);
    t.add("expireat", -3, Keys::First, W0, keys::expireat);
    t.add("pexpireat", -3, Keys::First, W0, keys::pexpireat);
    t.add("ttl", 2, Keys::First, R, keys::ttl);
    t.add("pttl", 2, Keys::First, R, keys::pttl);
    t.add("expiretime", 2, Keys::First, R, keys::expiretime);
    t.add("pexpiretime", 2, Keys::First, R, keys::pexpiretime);
    t.add("persist", 2, Keys::First, W0, keys::persist);
    t.add("rename", 3, Keys::FirstTwo, W, keys::rename);
    t.add("renamenx", 3, Keys::FirstTwo, W0, keys::renamenx);
    t.add("copy", -3, Keys::FirstTwo, W, keys::copy);
    // SORT
    t.add("sort", -2, Keys::Sort, W, sort::sort);
    t.add("sort_ro", -2, Keys::Sort, R, sort::sort_ro);
    // SCAN
    t.add("keys", 2, Keys::None, RK, scan::keys);
    t.add("scan", -2, Keys::None, RK, scan::scan);
    // -1 for Kvrocks' `DBSIZE SCAN`; any other argument gets Redis' error.
    t.add("dbsize", -1, Keys::None, RK, scan::dbsize);
    t.add("randomkey", 1, Keys::None, RK, scan::randomkey);
    // Server and keyspace
    t.add("ping", -1, Keys::None, R, server::ping);
    t.add("echo", 2, Keys::None, Flags::LOADING, server::echo);
    t.add("flushdb", -1, Keys::Everything, W, server::flush);
    t.add("flushall", -1, Keys::Everything, W, server::flush_all);
    // DUMP and RESTORE
    t.add("dump", 2, Keys::First, R, dump::dump);
    t.add("restore", -4, Keys::First, W, dump::restore);
    t
}
