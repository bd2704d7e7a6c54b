//! Hash commands. Each field is one `HashField` record named by the field,
//! holding the value's bytes.

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta, SubValueRef};

use super::scan_args::scan_records;
use crate::cmd::args::{is, random_count_with};
use crate::cmd::kvrocks_args::{take_integer, LexRange};
use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::Ctx;
use crate::long_double::LongDouble;
use crate::number::{int_arg, parse_i64};
use crate::reply::Reply;
use crate::types::first_seen::{distinct, last_wins};
use crate::types::hash::{decode_pair, field_id, put_value, read_all, value_bytes, KIND};
use crate::types::random::{random_pick, random_record, Rng};
use crate::types::set::record_name;

// ---------------------------------------------------------------------------
// Reading and writing fields

/// The live hash at `key`; WRONGTYPE for another type.
fn read<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, key: &[u8]) -> CmdResult<Option<Meta>> {
    ctx.typed(key, DataType::Hash)
}

/// The value of `field` in the hash `meta` at `key`. A fresh hash (size 0)
/// has no fields, whatever stale records a version-less format still holds
/// under its key.
fn get_value<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    field: &[u8],
) -> CmdResult<Option<Vec<u8>>> {
    value_at(
        ctx,
        key,
        meta,
        &ctx.sub_key(KIND, key, meta, field_id(field)),
    )
}

/// The value of the field whose record's key is `at` ([`Ctx::sub_key`]).
fn value_at<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    at: &[u8],
) -> CmdResult<Option<Vec<u8>>> {
    ctx.member_at(KIND, key, meta, at)?
        .map(|value| value_bytes(key, value))
        .transpose()
}

/// The value of `field` in the hash at `key`, if both exist.
fn lookup<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    field: &[u8],
) -> CmdResult<Option<Vec<u8>>> {
    match read(ctx, key)? {
        Some(meta) => get_value(ctx, key, &meta, field),
        None => Ok(None),
    }
}

/// Queues `field` = `value`; a new field (`existed` false) grows the hash
/// and its metadata is saved.
fn set_field<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &mut Meta,
    field: &[u8],
    value: &[u8],
    existed: bool,
) -> CmdResult<()> {
    put_value(ctx, key, meta, field, value);
    if !existed {
        meta.size += 1;
        ctx.save(key, meta)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Commands

/// HSET / HMSET key field value [field value ...]: returns the number of
/// new fields.
fn set_pairs<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    cmd: &str,
) -> CmdResult<u64> {
    if !a.len().is_multiple_of(2) {
        return Err(CmdError::WrongArity(cmd.into()));
    }
    let key = a[1];
    let pairs = last_wins(a[2..].chunks(2).map(|p| (p[0], p[1])));
    let mut meta = ctx.typed_or_create(key, DataType::Hash)?;
    let mut added = 0;
    for (field, value) in pairs {
        // The field record's key, made once to read and to write.
        let at = ctx.sub_key(KIND, key, &meta, field_id(field));
        match value_at(ctx, key, &meta, &at)? {
            None => added += 1,
            // A field that holds the value already is not written again,
            // as Kvrocks' and Pika 3's HSET leave it (Pika 4 writes it
            // again for its new ctime, which floyd here does not store:
            // formats-spec/floyd.md §11).
            Some(old) if old == value => continue,
            Some(_) => {}
        }
        ctx.sub_put_at(KIND, key, &meta, at, SubValueRef::Bytes(value));
    }
    if added > 0 {
        meta.size += added;
        ctx.save(key, &meta)?;
    }
    ctx.notify(Class::HASH, "hset", key);
    Ok(added)
}

pub fn hset<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Integer(set_pairs(ctx, a, "hset")? as i64))
}

pub fn hmset<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    set_pairs(ctx, a, "hmset")?;
    Ok(Reply::ok())
}

pub fn hsetnx<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (key, field) = (a[1], a[2]);
    let mut meta = ctx.typed_or_create(key, DataType::Hash)?;
    if get_value(ctx, key, &meta, field)?.is_some() {
        return Ok(Reply::Integer(0));
    }
    set_field(ctx, key, &mut meta, field, a[3], false)?;
    ctx.notify(Class::HASH, "hset", key);
    Ok(Reply::Integer(1))
}

pub fn hget<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::opt_bulk(lookup(ctx, a[1], a[2])?))
}

pub fn hmget<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let meta = read(ctx, key)?;
    let mut out = Vec::with_capacity(a.len() - 2);
    for field in &a[2..] {
        let value = match &meta {
            Some(meta) => get_value(ctx, key, meta, field)?,
            None => None,
        };
        out.push(Reply::opt_bulk(value));
    }
    Ok(Reply::Array(out))
}

pub fn hdel<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let Some(mut meta) = read(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let mut removed = 0;
    for field in distinct(a[2..].iter().copied()) {
        if get_value(ctx, key, &meta, field)?.is_some() {
            ctx.sub_del(KIND, key, &meta, field_id(field));
            removed += 1;
        }
    }
    if removed > 0 {
        meta.size = meta.size.saturating_sub(removed);
        ctx.save(key, &meta)?;
        ctx.notify(Class::HASH, "hdel", key);
        ctx.notify_if_emptied(key, &meta);
    }
    Ok(Reply::Integer(removed as i64))
}

pub fn hlen<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Integer(
        read(ctx, a[1])?.map_or(0, |m| m.size as i64),
    ))
}

pub fn hexists<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Integer(i64::from(
        lookup(ctx, a[1], a[2])?.is_some(),
    )))
}

pub fn hstrlen<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Integer(
        lookup(ctx, a[1], a[2])?.map_or(0, |v| v.len() as i64),
    ))
}

/// Every pair of the hash at `key` (none when missing).
fn all_pairs<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
) -> CmdResult<Vec<(Vec<u8>, Vec<u8>)>> {
    match read(ctx, key)? {
        Some(meta) => read_all(ctx, key, &meta),
        None => Ok(Vec::new()),
    }
}

/// Pairs as a flat reply: field, value, field, value…, or only the fields.
fn pairs_reply(pairs: Vec<(Vec<u8>, Vec<u8>)>, with_values: bool) -> Reply {
    let mut out = Vec::with_capacity(pairs.len() * if with_values { 2 } else { 1 });
    for (field, value) in pairs {
        out.push(Reply::Bulk(field));
        if with_values {
            out.push(Reply::Bulk(value));
        }
    }
    Reply::Array(out)
}

pub fn hgetall<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(pairs_reply(all_pairs(ctx, a[1])?, true))
}

pub fn hkeys<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(pairs_reply(all_pairs(ctx, a[1])?, false))
}

pub fn hvals<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::bulks(
        all_pairs(ctx, a[1])?.into_iter().map(|(_, v)| v),
    ))
}

/// Replaces the value of `field` with `update(current)` (`None`: no such
/// field), creating the hash or field as needed; returns the new value.
fn update_field<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    field: &[u8],
    update: impl FnOnce(Option<&[u8]>) -> CmdResult<Vec<u8>>,
) -> CmdResult<Vec<u8>> {
    let mut meta = ctx.typed_or_create(key, DataType::Hash)?;
    let current = get_value(ctx, key, &meta, field)?;
    let next = update(current.as_deref())?;
    set_field(ctx, key, &mut meta, field, &next, current.is_some())?;
    Ok(next)
}

pub fn hincrby<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let by = int_arg(a[3])?;
    let next = update_field(ctx, a[1], a[2], |current| {
        let current = match current {
            Some(text) => parse_i64(text)
                .ok_or_else(|| CmdError::other("ERR hash value is not an integer"))?,
            None => 0,
        };
        let next = current
            .checked_add(by)
            .ok_or_else(|| CmdError::other("ERR increment or decrement would overflow"))?;
        Ok(itoa::Buffer::new().format(next).as_bytes().to_vec())
    })?;
    ctx.notify(Class::HASH, "hincrby", a[1]);
    // The text was just printed from an i64.
    Ok(Reply::Integer(parse_i64(&next).unwrap_or_default()))
}

pub fn hincrbyfloat<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
) -> CmdResult<Reply> {
    let by = LongDouble::parse(a[3]).ok_or(CmdError::NotFloat)?;
    if by.is_infinite() {
        return Err(CmdError::other("ERR value is NaN or Infinity"));
    }
    let next = update_field(ctx, a[1], a[2], |current| {
        let current = match current {
            Some(text) => LongDouble::parse(text)
                .ok_or_else(|| CmdError::other("ERR hash value is not a float"))?,
            None => LongDouble::ZERO,
        };
        let next = current
            .plus(by)
            .map_err(|_| CmdError::other("ERR increment would produce NaN or Infinity"))?;
        Ok(next.to_redis_string().into_bytes())
    })?;
    ctx.notify(Class::HASH, "hincrbyfloat", a[1]);
    Ok(Reply::Bulk(next))
}

pub fn hscan<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    scan_records(ctx, a, KIND, read, |key, id, value| {
        let (field, value) = decode_pair(key, id, value)?;
        Ok((field, Some(value)))
    })
}

/// `HRANGEBYLEX key min max [REV] [LIMIT offset count]`, Kvrocks' range
/// of a hash's fields by name (`Hash::RangeByLex`): field, value, field,
/// value… of the fields in the range, in name order (from `max` down with
/// `REV`, which takes its range as `max min`, as ZREVRANGEBYLEX does). The
/// first `offset` fields in the range are left out (none when negative),
/// and at most `count` are given (all when negative; none when 0, before
/// the key is even read). The walk starts at the range's first name.
pub fn hrangebylex<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (mut reverse, mut offset, mut count) = (false, -1, -1);
    let mut i = 4;
    while let Some(word) = a.get(i) {
        if is(word, "rev") {
            reverse = true;
            i += 1;
        } else if is(word, "limit") {
            offset = take_integer(a, i + 1)?;
            count = take_integer(a, i + 2)?;
            i += 3;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    let range = if reverse {
        LexRange::parse(a[3], a[2])?
    } else {
        LexRange::parse(a[2], a[3])?
    };
    if count == 0 {
        return Ok(Reply::Array(Vec::new()));
    }
    let key = a[1];
    let Some(meta) = read(ctx, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let start = if reverse {
        range.max.member()
    } else {
        range.min.member()
    };
    let (mut skip, mut out) = (offset.max(0), Vec::new());
    for record in ctx.subs(KIND, key, &meta, start.map(field_id), reverse) {
        let (id, value) = record?;
        let (field, value) = decode_pair(key, id, value)?;
        let (past_end, before_start) = if reverse {
            (range.below(&field), range.above(&field))
        } else {
            (range.above(&field), range.below(&field))
        };
        if past_end {
            break;
        }
        if before_start {
            continue;
        }
        if skip > 0 {
            skip -= 1;
            continue;
        }
        out.push(Reply::Bulk(field));
        out.push(Reply::Bulk(value));
        if count > 0 && out.len() as u64 >= 2 * count as u64 {
            break;
        }
    }
    Ok(Reply::Array(out))
}

/// HRANDFIELD key [count [WITHVALUES]]
pub fn hrandfield<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    if a.len() == 2 {
        let Some(meta) = read(ctx, key)? else {
            return Ok(Reply::Nil);
        };
        let (id, _) = random_record(ctx, KIND, key, &meta)?;
        return Ok(Reply::Bulk(record_name(key, id)?));
    }
    let (count, with_values) = random_count_with(&a[2..], "withvalues")?;
    let Some(meta) = read(ctx, key)?.filter(|_| count != 0) else {
        return Ok(Reply::Array(Vec::new()));
    };
    let pairs = read_all(ctx, key, &meta)?;
    let picked = random_pick(&mut Rng::new(ctx.now_ms()), pairs, count)?;
    Ok(pairs_reply(picked, with_values))
}

#[cfg(test)]
mod tests {
    use crate::cmd::testkit::{quoted, sorted, TestEngine, WRONG};
    use crate::reply::Reply;

    /// More fields than `first_seen` scans (16), repeated before and
    /// after its map takes over; replies from redis-server 7.0.15.
    #[test]
    fn hset_and_hdel_of_many_fields_with_repeats_follow_redis() {
        let t = TestEngine::in_memory();
        let fields: String = (0..20).map(|i| format!(" f{i} v{i}")).collect();
        assert_eq!(
            t.cli(&format!("HSET h{fields} f0 last f19 end")),
            "(integer) 20"
        );
        assert_eq!(t.cli("HGET h f0"), "\"last\"");
        assert_eq!(t.cli("HGET h f19"), "\"end\"");
        assert_eq!(t.cli("HLEN h"), "(integer) 20");
        let fields: String = (1..18).map(|i| format!(" f{i}")).collect();
        assert_eq!(
            t.cli(&format!("HDEL h f0 f0{fields} f1 nope")),
            "(integer) 18"
        );
        assert_eq!(
            sorted_pairs(t.run("HGETALL h")),
            [("\"f18\"", "\"v18\""), ("\"f19\"", "\"end\"")]
                .map(|(f, v)| (f.to_string(), v.to_string()))
        );
    }

    /// The items of an array reply as (field, value) pairs, sorted.
    fn sorted_pairs(reply: Reply) -> Vec<(String, String)> {
        let Reply::Array(items) = reply else {
            panic!("not an array: {reply:?}")
        };
        let mut out: Vec<(String, String)> = items
            .chunks(2)
            .map(|p| (p[0].to_cli_string(), p[1].to_cli_string()))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn set_get_and_delete() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
                === set get and delete
                > HSET h a 1 b 2 a 3
                (integer) 2
                > HGET h a
                "3"
                > HSET h a 4 c 5
                (integer) 1
                > HLEN h
                (integer) 3
                > HSET h a
                (error) ERR wrong number of arguments for 'hset' command
                > HSET h a 1 b
                (error) ERR wrong number of arguments for 'hset' command
                > HMSET h x 1 y
                (error) ERR wrong number of arguments for 'hmset' command
                > HMSET h d 6
                OK
                > HSETNX h a 9
                (integer) 0
                > HSETNX h e 7
                (integer) 1
                > HSETNX new f v
                (integer) 1
                > HGET h zz
                (nil)
                > HGET nokey a
                (nil)
                > HMGET h a zz c
                1) "4"
                2) (nil)
                3) "5"
                > HMGET nokey a b
                1) (nil)
                2) (nil)
                > HEXISTS h a
                (integer) 1
                > HEXISTS h zz
                (integer) 0
                > HSTRLEN h a
                (integer) 1
                > HSTRLEN h zz
                (integer) 0
                > HSTRLEN nokey a
                (integer) 0
            "#,
        );
        assert_eq!(
            sorted_pairs(t.run("HGETALL h")),
            [("a", "4"), ("b", "2"), ("c", "5"), ("d", "6"), ("e", "7")]
                .iter()
                .map(|(f, v)| (format!("\"{f}\""), format!("\"{v}\"")))
                .collect::<Vec<_>>()
        );
        assert_eq!(sorted(t.run("HKEYS h")), quoted(&["a", "b", "c", "d", "e"]));
        assert_eq!(sorted(t.run("HVALS h")), quoted(&["2", "4", "5", "6", "7"]));
        t.script(
            r#"
                === set get and delete
                > HGETALL nokey
                (empty array)
                > HDEL h a a zz
                (integer) 1
                > HDEL nokey a
                (integer) 0
                > HDEL h b c d e
                (integer) 4
                > EXISTS h
                (integer) 0
                > HLEN h
                (integer) 0
                > HSET h z 1
                (integer) 1
                > HGETALL h
                1) "z"
                2) "1"
            "#,
        );
    }

    #[test]
    fn wrong_types_are_refused() {
        let t = TestEngine::in_memory();
        t.run("SET str v");
        for cmd in [
            "HSET str a 1",
            "HMSET str a 1",
            "HSETNX str a 1",
            "HGET str a",
            "HMGET str a",
            "HDEL str a",
            "HLEN str",
            "HEXISTS str a",
            "HGETALL str",
            "HKEYS str",
            "HVALS str",
            "HINCRBY str a 1",
            "HINCRBYFLOAT str a 1",
            "HSTRLEN str a",
            "HSCAN str 0",
            "HRANDFIELD str",
            "HRANDFIELD str 0",
        ] {
            assert_eq!(t.cli(cmd), WRONG, "{cmd}");
        }
        // Arguments are checked before the key.
        t.script(
            r#"
                === wrong types are refused
                > HINCRBY str a x
                (error) ERR value is not an integer or out of range
                > HINCRBYFLOAT str a x
                (error) ERR value is not a valid float
                > HSCAN str x
                (error) ERR invalid cursor
                > GET str
                "v"
            "#,
        );
    }

    #[test]
    fn increments() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
                === increments
                > HINCRBY h n 5
                (integer) 5
                > HINCRBY h n -7
                (integer) -2
                > HLEN h
                (integer) 1
                > HINCRBY h n x
                (error) ERR value is not an integer or out of range
                > HSET h big 9223372036854775807 s abc sp " 1"
                (integer) 3
                > HINCRBY h big 1
                (error) ERR increment or decrement would overflow
                > HINCRBY h s 1
                (error) ERR hash value is not an integer
                > HINCRBY h sp 1
                (error) ERR hash value is not an integer
                > HINCRBYFLOAT h s 1
                (error) ERR hash value is not a float
                > HINCRBYFLOAT h sp 1
                (error) ERR hash value is not a float
                > HINCRBYFLOAT h n abc
                (error) ERR value is not a valid float
                > HINCRBYFLOAT h n inf
                (error) ERR value is NaN or Infinity
                > HSET h fl 10.5 i inf
                (integer) 2
                > HINCRBYFLOAT h fl 0.1
                "10.6"
                > HGET h fl
                "10.6"
                > HINCRBYFLOAT h i 1
                (error) ERR increment would produce NaN or Infinity
                > HINCRBYFLOAT h f2 5e3
                "5000"
                > HINCRBYFLOAT h f3 1e20
                "100000000000000000000"
                > HINCRBYFLOAT h f4 0.0000001
                "0.0000001"
                > HINCRBYFLOAT h n 2.5
                "0.5"
                > HGET h n
                "0.5"
                > HINCRBY h n 1
                (error) ERR hash value is not an integer
                > HLEN h
                (integer) 9
            "#,
        );
    }

    #[test]
    fn random_fields_follow_redis_counts() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
                === random fields follow redis counts
                > HRANDFIELD nokey
                (nil)
                > HRANDFIELD nokey 2
                (empty array)
                > HRANDFIELD nokey -2 WITHVALUES
                (empty array)
                > HSET h a 1 b 2 c 3
                (integer) 3
                > HRANDFIELD h 0
                (empty array)
                > HRANDFIELD h x
                (error) ERR value is not an integer or out of range
                > HRANDFIELD h 1 withvalue
                (error) ERR syntax error
                > HRANDFIELD h 1 withvalues x
                (error) ERR syntax error
                > HRANDFIELD h -9223372036854775808
                (error) ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807
                > HRANDFIELD h -4611686018427387904 WITHVALUES
                (error) ERR value is out of range
                > HRANDFIELD h 9223372036854775807 withvalues
                (error) ERR value is out of range
            "#,
        );
        assert_eq!(
            sorted(t.run("HRANDFIELD h 9223372036854775807")),
            quoted(&["a", "b", "c"])
        );
        let one = t.cli("HRANDFIELD h");
        assert!(["\"a\"", "\"b\"", "\"c\""].contains(&one.as_str()), "{one}");
        let pairs = sorted_pairs(t.run("HRANDFIELD h 2 WITHVALUES"));
        assert_eq!(pairs.len(), 2);
        assert_ne!(pairs[0].0, pairs[1].0);
        for (f, v) in &pairs {
            assert_eq!(t.cli(&format!("HGET h {}", f.trim_matches('"'))), *v);
        }
        let Reply::Array(repeated) = t.run("HRANDFIELD h -10 WITHVALUES") else {
            panic!("array")
        };
        assert_eq!(repeated.len(), 20);
        let Reply::Array(repeated) = t.run("HRANDFIELD h -7") else {
            panic!("array")
        };
        assert_eq!(repeated.len(), 7);
    }

    #[test]
    fn hscan_pages_through_a_big_hash() {
        let t = TestEngine::in_memory();
        for chunk in (0..500).collect::<Vec<_>>().chunks(50) {
            let args: Vec<String> = chunk.iter().map(|i| format!("f{i} v{i}")).collect();
            t.run(&format!("HSET big {}", args.join(" ")));
        }
        assert_eq!(t.cli("HLEN big"), "(integer) 500");
        let mut cursor = "0".to_string();
        let mut fields = Vec::new();
        loop {
            let Reply::Array(parts) = t.run(&format!("HSCAN big {cursor}")) else {
                panic!("array")
            };
            let (Reply::Bulk(next), Reply::Array(items)) = (&parts[0], &parts[1]) else {
                panic!("scan reply")
            };
            assert!(items.len() <= 20);
            for pair in items.chunks(2) {
                let (f, v) = (pair[0].to_cli_string(), pair[1].to_cli_string());
                assert_eq!(f[2..], v[2..]);
                fields.push(f);
            }
            cursor = String::from_utf8(next.clone()).expect("utf8");
            if cursor == "0" {
                break;
            }
        }
        fields.sort();
        fields.dedup();
        assert_eq!(fields.len(), 500);
        let Reply::Array(parts) = t.run("HSCAN big 0 MATCH f4?9 COUNT 1000") else {
            panic!("array")
        };
        assert_eq!(
            sorted_pairs(parts[1].clone()).len(),
            10,
            "f409, f419, …, f499"
        );
        t.script(
            r#"
                === hscan pages through a big hash
                > HSCAN nokey 0
                1) "0"
                2) (empty array)
                > HSCAN big 0 NOVALUES
                (error) ERR syntax error
                > HSCAN big 0 COUNT -1
                (error) ERR syntax error
            "#,
        );
    }

    #[test]
    fn binary_fields_and_values_round_trip() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
                === binary fields and values round trip
                > HSET h "\x00\xff" "" "" "\r\n"
                (integer) 2
                > HGET h "\x00\xff"
                ""
                > HGET h ""
                "\r\n"
                > HSTRLEN h ""
                (integer) 2
            "#,
        );
    }
}
