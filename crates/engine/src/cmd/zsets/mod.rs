//! Sorted-set commands.
//!
//! Every member has two records: a member record (member → exact score)
//! and a score-index record ((score, member) → nothing). Point reads use
//! the member records; everything ordered goes through
//! [`order::walk`](crate::cmd::types::zsets::order::walk), which yields
//! members in Redis order with exact scores whatever the format's score
//! index keeps. Every score written goes through
//! [`put_member`](crate::cmd::types::zsets::write::put_member), which
//! applies the format's score limit.

use crate::store::KvStore;
use redcodec_codec::Codec;

use crate::command::{Keys, Table};

mod common;
mod members;
mod range;
mod remove;
mod setops;

#[cfg(test)]
mod nemo_tests;
#[cfg(test)]
mod tests;

pub fn register<C: Codec, S: KvStore>(t: &mut Table<C, S>) {
    t.add("zadd", -4, Keys::First, members::zadd);
    t.add("zincrby", 4, Keys::First, members::zincrby);
    t.add("zrem", -3, Keys::First, members::zrem);
    t.add("zcard", 2, Keys::First, members::zcard);
    t.add("zscore", 3, Keys::First, members::zscore);
    t.add("zmscore", -3, Keys::First, members::zmscore);
    t.add("zrandmember", -2, Keys::First, members::zrandmember);
    t.add("zrank", 3, Keys::First, range::zrank);
    t.add("zrevrank", 3, Keys::First, range::zrevrank);
    t.add("zrange", -4, Keys::First, range::zrange);
    t.add("zrevrange", -4, Keys::First, range::zrevrange);
    t.add("zrangestore", -5, Keys::FirstTwo, range::zrangestore);
    t.add("zrangebyscore", -4, Keys::First, range::zrangebyscore);
    t.add("zrevrangebyscore", -4, Keys::First, range::zrevrangebyscore);
    t.add("zrangebylex", -4, Keys::First, range::zrangebylex);
    t.add("zrevrangebylex", -4, Keys::First, range::zrevrangebylex);
    t.add("zcount", 4, Keys::First, range::zcount);
    t.add("zlexcount", 4, Keys::First, range::zlexcount);
    t.add("zscan", -3, Keys::First, range::zscan);
    t.add("zremrangebyrank", 4, Keys::First, remove::zremrangebyrank);
    t.add("zremrangebyscore", 4, Keys::First, remove::zremrangebyscore);
    t.add("zremrangebylex", 4, Keys::First, remove::zremrangebylex);
    t.add("zpopmin", -2, Keys::First, remove::zpopmin);
    t.add("zpopmax", -2, Keys::First, remove::zpopmax);
    t.add("zmpop", -4, Keys::NumKeys, remove::zmpop);
    t.add("zunionstore", -4, Keys::DestNumKeys, setops::zunionstore);
    t.add("zinterstore", -4, Keys::DestNumKeys, setops::zinterstore);
    t.add("zdiffstore", -4, Keys::DestNumKeys, setops::zdiffstore);
    t.add("zunion", -3, Keys::NumKeys, setops::zunion);
    t.add("zinter", -3, Keys::NumKeys, setops::zinter);
    t.add("zdiff", -3, Keys::NumKeys, setops::zdiff);
    t.add("zintercard", -3, Keys::NumKeys, setops::zintercard);
}
