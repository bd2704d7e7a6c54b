//! Set commands. Each member is one `SetMember` record named by the member,
//! with no value.
//!
//! Also home of what the collection families share for random picks
//! (SPOP, SRANDMEMBER, HRANDFIELD, ZRANDMEMBER): [`Rng`], [`random_count_arg`],
//! [`random_pick`] and [`random_record`], and of [`record_name`] and
//! [`distinct`].

use std::collections::HashSet;

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta, SubValueRef};

use super::scan_args::scan_records;
use super::stored::store_collection;
use crate::cmd::args::{is, positive_arg};
use crate::cmd::variants::variants;
use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::Ctx;
use crate::number::parse_i64;
use crate::reply::Reply;
use crate::types::first_seen::distinct;
use crate::types::random::{random_count_arg, random_pick, random_record, Rng};
use crate::types::set::{member_id, read_all, record_name, write_all, KIND};
use crate::types::ValueMut;

// ---------------------------------------------------------------------------
// Reading and writing members

/// Whether `member` belongs to the set `meta` at `key`. A fresh set (size
/// 0) has no members, whatever stale records a version-less format still
/// holds under its key.
fn is_member<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    member: &[u8],
) -> CmdResult<bool> {
    is_member_at(
        ctx,
        key,
        meta,
        &ctx.sub_key(KIND, key, meta, member_id(member)),
    )
}

/// [`is_member`] for the member whose record's key is `at`
/// ([`Ctx::sub_key`]).
fn is_member_at<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    at: &[u8],
) -> CmdResult<bool> {
    Ok(ctx.member_at(KIND, key, meta, at)?.is_some())
}

/// The live set at `key`; WRONGTYPE for another type.
fn read<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, key: &[u8]) -> CmdResult<Option<Meta>> {
    ctx.typed(key, DataType::Set)
}

/// Queues the removal of `members` (present, distinct) from the set and
/// saves it (removed when emptied).
fn remove_members<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &mut Meta,
    members: &[Vec<u8>],
) -> CmdResult<()> {
    for member in members {
        ctx.sub_del(KIND, key, meta, member_id(member));
    }
    meta.size = meta.size.saturating_sub(members.len() as u64);
    ctx.save(key, meta)
}

// ---------------------------------------------------------------------------
// Single-key commands

pub fn sadd<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let mut meta = ctx.typed_or_create(key, DataType::Set)?;
    let mut added = 0;
    for member in distinct(a[2..].iter().copied()) {
        // The member record's key, made once to read and to write.
        let at = ctx.sub_key(KIND, key, &meta, member_id(member));
        if !is_member_at(ctx, key, &meta, &at)? {
            ctx.sub_put_at(KIND, key, &meta, at, SubValueRef::Empty);
            ctx.codec().note_member(&mut meta, member);
            added += 1;
        }
    }
    if added > 0 {
        meta.size += added;
        ctx.save(key, &meta)?;
        ctx.notify(Class::SET, "sadd", key);
    }
    Ok(Reply::Integer(added as i64))
}

pub fn srem<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let Some(mut meta) = read(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let mut present = Vec::new();
    for member in distinct(a[2..].iter().copied()) {
        if is_member(ctx, key, &meta, member)? {
            present.push(member.to_vec());
        }
    }
    if !present.is_empty() {
        remove_members(ctx, key, &mut meta, &present)?;
        ctx.notify(Class::SET, "srem", key);
        ctx.notify_if_emptied(key, &meta);
    }
    Ok(Reply::Integer(present.len() as i64))
}

pub fn scard<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Integer(
        read(ctx, a[1])?.map_or(0, |m| m.size as i64),
    ))
}

/// `1` / `0` for each of `members`, all `0` for a missing set.
fn membership<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    members: &[&[u8]],
) -> CmdResult<Vec<Reply>> {
    let meta = read(ctx, key)?;
    members
        .iter()
        .map(|member| {
            let found = match &meta {
                Some(meta) => is_member(ctx, key, meta, member)?,
                None => false,
            };
            Ok(Reply::Integer(i64::from(found)))
        })
        .collect()
}

pub fn sismember<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let mut replies = membership(ctx, a[1], &a[2..3])?;
    Ok(replies.pop().unwrap_or(Reply::Integer(0)))
}

pub fn smismember<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Array(membership(ctx, a[1], &a[2..])?))
}

pub fn smembers<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let members = match read(ctx, a[1])? {
        Some(meta) => read_all(ctx, a[1], &meta)?,
        None => Vec::new(),
    };
    Ok(Reply::bulks(members))
}

/// SPOP key [count]
pub fn spop<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    match a.len() {
        2 => spop_one(ctx, a[1]),
        3 => spop_count(ctx, a[1], a[2]),
        _ => Err(CmdError::Syntax),
    }
}

fn spop_one<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, key: &[u8]) -> CmdResult<Reply> {
    let Some(mut meta) = read(ctx, key)? else {
        return Ok(Reply::Nil);
    };
    let (id, _) = random_record(ctx, KIND, key, &meta)?;
    let member = record_name(key, id)?;
    remove_members(ctx, key, &mut meta, std::slice::from_ref(&member))?;
    ctx.notify(Class::SET, "spop", key);
    ctx.notify_if_emptied(key, &meta);
    Ok(Reply::bulk(member))
}

fn spop_count<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    count: &[u8],
) -> CmdResult<Reply> {
    // SPOP reads its count as Redis' getPositiveLong, one message for all.
    let count = parse_i64(count)
        .filter(|n| *n >= 0)
        .ok_or_else(|| CmdError::other("ERR value is out of range, must be positive"))?;
    let Some(mut meta) = read(ctx, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    if count == 0 {
        return Ok(Reply::Array(Vec::new()));
    }
    let members = read_all(ctx, key, &meta)?;
    ctx.notify(Class::SET, "spop", key);
    if count as u64 >= meta.size {
        ctx.remove_key(key, &meta)?;
        ctx.notify(Class::GENERIC, "del", key);
        return Ok(Reply::bulks(members));
    }
    let popped = random_pick(&mut Rng::new(ctx.now_ms()), members, count)?;
    remove_members(ctx, key, &mut meta, &popped)?;
    Ok(Reply::bulks(popped))
}

/// SRANDMEMBER key [count]
pub fn srandmember<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    match a.len() {
        2 => {
            let Some(meta) = read(ctx, key)? else {
                return Ok(Reply::Nil);
            };
            let (id, _) = random_record(ctx, KIND, key, &meta)?;
            Ok(Reply::bulk(record_name(key, id)?))
        }
        3 => {
            let count = random_count_arg(a[2])?;
            let Some(meta) = read(ctx, key)?.filter(|_| count != 0) else {
                return Ok(Reply::Array(Vec::new()));
            };
            let members = read_all(ctx, key, &meta)?;
            Ok(Reply::bulks(random_pick(
                &mut Rng::new(ctx.now_ms()),
                members,
                count,
            )?))
        }
        _ => Err(CmdError::Syntax),
    }
}

pub fn sscan<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    scan_records(ctx, a, KIND, read, |key, id, _| {
        Ok((record_name(key, id)?, None))
    })
}

// ---------------------------------------------------------------------------
// Multi-key commands

pub fn smove<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (src, dst, member) = (a[1], a[2], a[3]);
    // Redis answers 0 for a missing source before any type check, then
    // checks both types before looking at the member.
    let Some(mut src_meta) = read(ctx, src)? else {
        return Ok(Reply::Integer(0));
    };
    read(ctx, dst)?;
    if !is_member(ctx, src, &src_meta, member)? {
        return Ok(Reply::Integer(0));
    }
    if src == dst {
        ctx.leave_unchanged(src);
        return Ok(Reply::Integer(1));
    }
    remove_members(ctx, src, &mut src_meta, &[member.to_vec()])?;
    ctx.notify(Class::SET, "srem", src);
    ctx.notify_if_emptied(src, &src_meta);
    let mut dst_meta = ctx.typed_or_create(dst, DataType::Set)?;
    if is_member(ctx, dst, &dst_meta, member)? {
        // Only the source changed.
        ctx.leave_unchanged(dst);
    } else {
        ctx.sub_put(KIND, dst, &dst_meta, member_id(member), SubValueRef::Empty);
        ctx.codec().note_member(&mut dst_meta, member);
        dst_meta.size += 1;
        ctx.save(dst, &dst_meta)?;
        ctx.notify(Class::SET, "sadd", dst);
    }
    Ok(Reply::Integer(1))
}

/// The three set algebra operations.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum SetOp {
    Inter,
    Union,
    Diff,
}

/// The result of `op` over the sets at `keys` (a missing key is an empty
/// set). Every key is type-checked first, as Redis does.
fn combine<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    op: SetOp,
    keys: &[&[u8]],
) -> CmdResult<Vec<Vec<u8>>> {
    let mut sets = Vec::with_capacity(keys.len());
    for &key in keys {
        sets.push((key, read(ctx, key)?));
    }
    match op {
        SetOp::Inter => intersect(ctx, sets),
        SetOp::Union => unite(ctx, &sets),
        SetOp::Diff => subtract(ctx, sets),
    }
}

/// Members common to every set: the smallest set's members, filtered by
/// each other set.
fn intersect<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    sets: Vec<(&[u8], Option<Meta>)>,
) -> CmdResult<Vec<Vec<u8>>> {
    let Some(mut sets) = sets
        .into_iter()
        .map(|(key, meta)| meta.map(|m| (key, m)))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(Vec::new());
    };
    sets.sort_by_key(|(_, meta)| meta.size);
    let Some(((first_key, first), rest)) = sets.split_first() else {
        return Ok(Vec::new());
    };
    let mut members = read_all(ctx, first_key, first)?;
    for (key, meta) in rest {
        members = filter_members(ctx, key, meta, members, true)?;
    }
    Ok(members)
}

/// Members of any set, each once, in first-seen order.
fn unite<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    sets: &[(&[u8], Option<Meta>)],
) -> CmdResult<Vec<Vec<u8>>> {
    let mut seen = HashSet::new();
    let mut members = Vec::new();
    for (key, meta) in sets {
        let Some(meta) = meta else { continue };
        for member in read_all(ctx, key, meta)? {
            if seen.insert(member.clone()) {
                members.push(member);
            }
        }
    }
    Ok(members)
}

/// Members of the first set that are in none of the others.
fn subtract<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    sets: Vec<(&[u8], Option<Meta>)>,
) -> CmdResult<Vec<Vec<u8>>> {
    let mut sets = sets.into_iter();
    let Some((first_key, Some(first))) = sets.next() else {
        return Ok(Vec::new());
    };
    let mut members = read_all(ctx, first_key, &first)?;
    for (key, meta) in sets {
        if members.is_empty() {
            break;
        }
        if let Some(meta) = meta {
            members = filter_members(ctx, key, &meta, members, false)?;
        }
    }
    Ok(members)
}

/// Keeps the candidates that are members of the set at `key` (`keep_members`)
/// or that are not. Reads the whole set when it is no larger than the
/// candidates, else looks each candidate up.
fn filter_members<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    candidates: Vec<Vec<u8>>,
    keep_members: bool,
) -> CmdResult<Vec<Vec<u8>>> {
    if meta.size <= candidates.len() as u64 {
        let all: HashSet<Vec<u8>> = read_all(ctx, key, meta)?.into_iter().collect();
        return Ok(candidates
            .into_iter()
            .filter(|c| all.contains(c) == keep_members)
            .collect());
    }
    let mut kept = Vec::new();
    for candidate in candidates {
        if is_member(ctx, key, meta, &candidate)? == keep_members {
            kept.push(candidate);
        }
    }
    Ok(kept)
}

pub fn sinter<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::bulks(combine(ctx, SetOp::Inter, &a[1..])?))
}

/// SINTERCARD `numkeys key… [LIMIT limit]`: the size of the intersection,
/// at most `limit` when it is not 0. Arguments are checked in Redis' order
/// before any key is read.
pub fn sintercard<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let numkeys = positive_arg(a[1], "numkeys")?;
    let numkeys = usize::try_from(numkeys).unwrap_or(usize::MAX);
    if numkeys > a.len() - 2 {
        return Err(CmdError::other(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    let mut limit = 0u64;
    let mut i = 2 + numkeys;
    while i < a.len() {
        if is(a[i], "limit") && i + 1 < a.len() {
            limit = parse_i64(a[i + 1])
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| CmdError::other("ERR LIMIT can't be negative"))?;
            i += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    let size = combine(ctx, SetOp::Inter, &a[2..2 + numkeys])?.len() as u64;
    let size = if limit == 0 { size } else { size.min(limit) };
    Ok(Reply::Integer(i64::try_from(size).unwrap_or(i64::MAX)))
}

variants! {
    pub fn sunion(ctx, a) => Ok(Reply::bulks(combine(ctx, SetOp::Union, &a[1..])?));
    pub fn sdiff(ctx, a) => Ok(Reply::bulks(combine(ctx, SetOp::Diff, &a[1..])?));
}

/// S*STORE destination key...: the result replaces the destination whatever
/// it held; an empty result deletes it. Replies with the result's size.
fn store<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    op: SetOp,
    a: &[&[u8]],
) -> CmdResult<Reply> {
    let dest = a[1];
    let members = combine(ctx, op, &a[2..])?;
    let event = match op {
        SetOp::Inter => "sinterstore",
        SetOp::Union => "sunionstore",
        SetOp::Diff => "sdiffstore",
    };
    store_collection(
        ctx,
        dest,
        DataType::Set,
        event,
        members.is_empty(),
        |ctx, meta| write_all(ValueMut::new(ctx, dest, meta), &members),
    )
}

variants! {
    pub fn sinterstore(ctx, a) => store(ctx, SetOp::Inter, a);
    pub fn sunionstore(ctx, a) => store(ctx, SetOp::Union, a);
    pub fn sdiffstore(ctx, a) => store(ctx, SetOp::Diff, a);
}

// ---------------------------------------------------------------------------
// Random picks, shared with HRANDFIELD and ZRANDMEMBER

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::testkit::{quoted, sorted, TestEngine, WRONG};

    /// More members than `first_seen` scans (16), repeated before and
    /// after its map takes over; replies from redis-server 7.0.15.
    #[test]
    fn sadd_and_srem_of_many_members_with_repeats_follow_redis() {
        let t = TestEngine::in_memory();
        let members: String = (0..20).map(|i| format!(" m{i}")).collect();
        assert_eq!(t.cli(&format!("SADD s{members} m0 m19 m7")), "(integer) 20");
        assert_eq!(t.cli("SCARD s"), "(integer) 20");
        let members: String = (1..19).map(|i| format!(" m{i}")).collect();
        assert_eq!(t.cli(&format!("SREM s m0{members} m0 m2")), "(integer) 19");
        assert_eq!(t.cli("SMEMBERS s"), "1) \"m19\"");
    }

    #[test]
    fn add_remove_and_membership() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
                === add remove and membership
                > SADD s a b a c
                (integer) 3
                > SADD s c d
                (integer) 1
                > SCARD s
                (integer) 4
                > SISMEMBER s a
                (integer) 1
                > SISMEMBER s z
                (integer) 0
                > SISMEMBER nokey z
                (integer) 0
                > SMISMEMBER s a z d
                1) (integer) 1
                2) (integer) 0
                3) (integer) 1
                > SMISMEMBER nokey a
                1) (integer) 0
            "#,
        );
        assert_eq!(sorted(t.run("SMEMBERS s")), quoted(&["a", "b", "c", "d"]));
        t.script(
            r#"
                === add remove and membership
                > SREM s a a z
                (integer) 1
                > SREM nokey a
                (integer) 0
                > SREM s b c d
                (integer) 3
                > EXISTS s
                (integer) 0
                > SMEMBERS s
                (empty array)
                > SCARD s
                (integer) 0
                > SADD s x
                (integer) 1
                > SMEMBERS s
                1) "x"
            "#,
        );
    }

    #[test]
    fn wrong_types_are_refused() {
        let t = TestEngine::in_memory();
        t.run("SET str v");
        t.run("SADD s a");
        for cmd in [
            "SADD str a",
            "SREM str a",
            "SCARD str",
            "SISMEMBER str a",
            "SMISMEMBER str a",
            "SMEMBERS str",
            "SPOP str",
            "SPOP str 0",
            "SRANDMEMBER str",
            "SRANDMEMBER str 0",
            "SMOVE str s a",
            "SMOVE s str a",
            "SINTER nokey str",
            "SUNION s str",
            "SDIFF nokey str",
            "SINTERSTORE d nokey str",
            "SSCAN str 0",
            "SSCAN str 0 COUNT 0",
        ] {
            assert_eq!(t.cli(cmd), WRONG, "{cmd}");
        }
        assert_eq!(t.cli("GET str"), "\"v\"");
    }

    #[test]
    fn pop_and_random_follow_redis_counts() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
                === pop and random follow redis counts
                > SPOP nokey
                (nil)
                > SPOP nokey 2
                (empty array)
                > SRANDMEMBER nokey
                (nil)
                > SRANDMEMBER nokey -3
                (empty array)
                > SADD s a b c d e
                (integer) 5
                > SPOP s 0
                (empty array)
            "#,
        );
        let positive = "(error) ERR value is out of range, must be positive";
        assert_eq!(t.cli("SPOP s -1"), positive);
        assert_eq!(t.cli("SPOP s x"), positive);
        t.script(
            r#"
                === pop and random follow redis counts
                > SPOP s 1 2
                (error) ERR syntax error
                > SRANDMEMBER s 1 2
                (error) ERR syntax error
                > SRANDMEMBER s x
                (error) ERR value is not an integer or out of range
                > SRANDMEMBER s -9223372036854775808
                (error) ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807
                > SRANDMEMBER s 0
                (empty array)
            "#,
        );
        assert_eq!(
            sorted(t.run("SRANDMEMBER s 10")),
            quoted(&["a", "b", "c", "d", "e"])
        );
        let three = sorted(t.run("SRANDMEMBER s 3"));
        assert_eq!(three.len(), 3);
        assert!(
            three.windows(2).all(|w| w[0] != w[1]),
            "distinct: {three:?}"
        );
        let Reply::Array(repeated) = t.run("SRANDMEMBER s -20") else {
            panic!("array expected")
        };
        assert_eq!(repeated.len(), 20);
        assert!(t.run("SRANDMEMBER s").to_cli_string().len() == 3);
        assert_eq!(t.cli("SCARD s"), "(integer) 5");

        let popped = sorted(t.run("SPOP s 2"));
        assert_eq!(popped.len(), 2);
        assert_eq!(t.cli("SCARD s"), "(integer) 3");
        for member in &popped {
            let name = member.trim_matches('"');
            assert_eq!(t.cli(&format!("SISMEMBER s {name}")), "(integer) 0");
        }
        let one = t.run("SPOP s");
        assert!(matches!(one, Reply::Bulk(_)));
        assert_eq!(t.cli("SCARD s"), "(integer) 2");
        assert_eq!(sorted(t.run("SPOP s 5")).len(), 2);
        t.script(
            r#"
                === pop and random follow redis counts
                > EXISTS s
                (integer) 0
                > SADD one m
                (integer) 1
                > SPOP one
                "m"
                > EXISTS one
                (integer) 0
            "#,
        );
    }

    #[test]
    fn huge_repeat_counts_fail_cleanly() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
                === huge repeat counts fail cleanly
                > SADD s a
                (integer) 1
                > SRANDMEMBER s -9223372036854775807
                (error) ERR value is out of range
                > SRANDMEMBER s 9223372036854775807
                1) "a"
                > SPOP s 9223372036854775807
                1) "a"
            "#,
        );
    }

    #[test]
    fn smove_moves_once() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
                === smove moves once
                > SADD src a b
                (integer) 2
                > SADD dst b
                (integer) 1
                > SMOVE src dst zz
                (integer) 0
                > SMOVE nokey dst a
                (integer) 0
                # A missing source answers 0 before the destination's type is seen.
                > SET str x
                OK
                > SMOVE nokey str a
                (integer) 0
            "#,
        );
        assert!(t.cli("SMOVE src str a").starts_with("(error) WRONGTYPE"));
        t.script(
            r#"
                === smove moves once
                > SMOVE src src a
                (integer) 1
                > SMOVE src src zz
                (integer) 0
                > SMOVE src dst b
                (integer) 1
                > SCARD dst
                (integer) 1
                > SMOVE src new a
                (integer) 1
                > EXISTS src
                (integer) 0
                > SMEMBERS new
                1) "a"
            "#,
        );
    }

    #[test]
    fn algebra_and_store() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
                === algebra and store
                > SADD s1 a b c
                (integer) 3
                > SADD s2 b c d
                (integer) 3
                > SADD s3 c d e
                (integer) 3
            "#,
        );
        assert_eq!(sorted(t.run("SINTER s1 s2")), quoted(&["b", "c"]));
        assert_eq!(sorted(t.run("SINTER s1 s2 s3")), quoted(&["c"]));
        assert_eq!(t.cli("SINTER s1 nokey"), "(empty array)");
        assert_eq!(
            sorted(t.run("SUNION s1 nokey s3")),
            quoted(&["a", "b", "c", "d", "e"])
        );
        assert_eq!(sorted(t.run("SDIFF s1 s2")), quoted(&["a"]));
        assert_eq!(sorted(t.run("SDIFF s1 nokey")), quoted(&["a", "b", "c"]));
        assert_eq!(t.cli("SDIFF nokey s1"), "(empty array)");
        assert_eq!(t.cli("SDIFF s1 s1"), "(empty array)");

        assert_eq!(t.cli("SUNIONSTORE d s1 s2"), "(integer) 4");
        assert_eq!(sorted(t.run("SMEMBERS d")), quoted(&["a", "b", "c", "d"]));
        // The destination is replaced, not merged.
        t.script(
            r#"
                === algebra and store
                > SINTERSTORE d s1 s3
                (integer) 1
                > SMEMBERS d
                1) "c"
                # A destination that is also a source.
                > SDIFFSTORE s1 s1 s2
                (integer) 1
                > SMEMBERS s1
                1) "a"
                # Any type is replaced; an empty result deletes.
                > SET str x
                OK
                > EXPIRE d 100
                (integer) 1
                > SUNIONSTORE str s2
                (integer) 3
                > TYPE str
                set
                > SUNIONSTORE d s2
                (integer) 3
                > TTL d
                (integer) -1
                > SINTERSTORE str nokey s2
                (integer) 0
                > EXISTS str
                (integer) 0
                > SDIFFSTORE none nokey
                (integer) 0
                > EXISTS none
                (integer) 0
            "#,
        );
    }

    #[test]
    fn sscan_pages_through_a_big_set() {
        let t = TestEngine::in_memory();
        let members: Vec<String> = (0..1000).map(|i| format!("m{i}")).collect();
        for chunk in members.chunks(100) {
            t.run(&format!("SADD big {}", chunk.join(" ")));
        }
        assert_eq!(t.cli("SCARD big"), "(integer) 1000");
        let mut seen = Vec::new();
        let mut cursor = "0".to_string();
        let mut calls = 0;
        loop {
            let reply = t.run(&format!("SSCAN big {cursor} COUNT 70"));
            let Reply::Array(parts) = reply else {
                panic!("array")
            };
            let (Reply::Bulk(next), Reply::Array(items)) = (&parts[0], &parts[1]) else {
                panic!("scan reply")
            };
            assert!(items.len() <= 70);
            seen.extend(items.iter().map(crate::reply::Reply::to_cli_string));
            cursor = String::from_utf8(next.clone()).expect("utf8");
            calls += 1;
            if cursor == "0" {
                break;
            }
        }
        assert_eq!(calls, 15);
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 1000);
        let matched = sorted(match t.run("SSCAN big 0 MATCH m99? COUNT 1000") {
            Reply::Array(parts) => parts[1].clone(),
            other => other,
        });
        assert_eq!(
            matched,
            quoted(&[
                "m990", "m991", "m992", "m993", "m994", "m995", "m996", "m997", "m998", "m999"
            ])
        );
        t.script(
            r#"
                === sscan pages through a big set
                > SSCAN big 9999
                1) "0"
                2) (empty array)
                > SSCAN nokey 0 COUNT 0
                1) "0"
                2) (empty array)
                > SSCAN big x
                (error) ERR invalid cursor
                > SSCAN big 0 COUNT 0
                (error) ERR syntax error
                > SSCAN big 0 TYPE set
                (error) ERR syntax error
                > SSCAN big 0 COUNT x
                (error) ERR value is not an integer or out of range
                > SMOVE big other m5
                (integer) 1
            "#,
        );
        assert_eq!(t.cli("SPOP big 2000").lines().count(), 999);
        assert_eq!(t.cli("EXISTS big"), "(integer) 0");
    }

    #[test]
    fn random_picks_obey_counts() {
        let mut rng = Rng::new(7);
        let items: Vec<u32> = (0..10).collect();
        assert_eq!(random_pick(&mut rng, items.clone(), 0).ok(), Some(vec![]));
        assert_eq!(
            random_pick(&mut rng, Vec::<u32>::new(), -5).ok(),
            Some(vec![])
        );
        let mut some = random_pick(&mut rng, items.clone(), 4).expect("pick");
        some.sort_unstable();
        some.dedup();
        assert_eq!(some.len(), 4);
        assert_eq!(
            random_pick(&mut rng, items.clone(), 10).ok(),
            Some(items.clone())
        );
        let repeated = random_pick(&mut rng, vec![1u8], -3).expect("pick");
        assert_eq!(repeated, vec![1, 1, 1]);
        for n in 1..50 {
            assert!(rng.below(n) < n);
        }
    }
}
