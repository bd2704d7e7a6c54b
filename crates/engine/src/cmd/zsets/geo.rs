//! GEO commands over sorted sets, as Redis 7.0's `geo.c` does them: a
//! point is a member whose score is its 52-bit geohash
//! ([`crate::geohash`]). GEOADD is ZADD with those scores; GEOPOS,
//! GEODIST and GEOHASH decode them.

use crate::store::KvStore;
use redcodec_codec::Codec;

use super::common::zset;
use super::members::zadd;
use crate::cmd::args::is;
use crate::error::{CmdError, CmdResult};
use crate::geohash;
use crate::keyspace::Ctx;
use crate::long_double::LongDouble;
use crate::number::float_arg;
use crate::reply::Reply;
use crate::types::zset::write::score_of;

/// GEOADD `key [NX|XX] [CH] longitude latitude member …`: ZADD of each
/// member at its point's score.
pub fn geoadd<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let mut first = 2;
    let (mut nx, mut xx) = (false, false);
    while first < a.len() {
        if is(a[first], "nx") {
            nx = true;
        } else if is(a[first], "xx") {
            xx = true;
        } else if !is(a[first], "ch") {
            break;
        }
        first += 1;
    }
    if !(a.len() - first).is_multiple_of(3) || (nx && xx) {
        return Err(CmdError::Syntax);
    }
    let mut scores = Vec::with_capacity((a.len() - first) / 3);
    for point in a[first..].chunks(3) {
        let (longitude, latitude) = point_arg(point[0], point[1])?;
        let score = geohash::score_of(longitude, latitude).unwrap_or(0);
        scores.push(score.to_string().into_bytes());
    }
    let mut args: Vec<&[u8]> = a[..first].to_vec();
    for (point, score) in a[first..].chunks(3).zip(&scores) {
        args.push(score);
        args.push(point[2]);
    }
    args[0] = b"zadd";
    zadd(ctx, &args)
}

/// A longitude and latitude argument pair, within Redis' limits.
pub(super) fn point_arg(longitude: &[u8], latitude: &[u8]) -> CmdResult<(f64, f64)> {
    let x = float_arg(longitude)?;
    let y = float_arg(latitude)?;
    if !(geohash::LONG_MIN..=geohash::LONG_MAX).contains(&x)
        || !(geohash::LAT_MIN..=geohash::LAT_MAX).contains(&y)
    {
        return Err(CmdError::other(format!(
            "ERR invalid longitude,latitude pair {x:.6},{y:.6}"
        )));
    }
    Ok((x, y))
}

/// A coordinate as Redis replies it (`addReplyHumanLongDouble`: the
/// double as a long double, `%.17Lf` without trailing zeros).
pub(super) fn coordinate(value: f64) -> Reply {
    Reply::bulk(LongDouble::from_f64(value).to_redis_string())
}

/// The point of `member` of the sorted set at `key` (`None`: missing).
fn member_point<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: Option<&redcodec_codec::Meta>,
    member: &[u8],
) -> CmdResult<Option<(f64, f64)>> {
    let Some(meta) = meta else {
        return Ok(None);
    };
    Ok(score_of(ctx, key, meta, member)?.and_then(geohash::point_of))
}

/// GEOPOS `key member …`: `[longitude, latitude]` of each, nil for a
/// missing one.
pub fn geopos<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let meta = zset(ctx, a[1])?;
    let mut out = Vec::with_capacity(a.len() - 2);
    for member in &a[2..] {
        out.push(match member_point(ctx, a[1], meta.as_ref(), member)? {
            Some((x, y)) => Reply::Array(vec![coordinate(x), coordinate(y)]),
            None => Reply::NilArray,
        });
    }
    Ok(Reply::Array(out))
}

/// The factor from meters to `unit`'s unit (`extractUnitOrReply`).
pub(super) fn unit_arg(unit: &[u8]) -> CmdResult<f64> {
    if is(unit, "m") {
        Ok(1.0)
    } else if is(unit, "km") {
        Ok(1000.0)
    } else if is(unit, "ft") {
        Ok(0.3048)
    } else if is(unit, "mi") {
        Ok(1609.34)
    } else {
        Err(CmdError::other(
            "ERR unsupported unit provided. please use M, KM, FT, MI",
        ))
    }
}

/// A distance as Redis replies it (`fixedpoint_d2string` with four
/// decimals): the value times 10,000 rounded half to even, printed with
/// the point four digits from the end.
pub(super) fn distance_reply(distance: f64) -> Reply {
    let scaled = (distance * 10_000.0).round_ties_even() as i64;
    let sign = if scaled < 0 { "-" } else { "" };
    let abs = scaled.unsigned_abs();
    Reply::bulk(format!("{sign}{}.{:04}", abs / 10_000, abs % 10_000))
}

/// GEODIST `key member1 member2 [M|KM|FT|MI]`: nil when one is missing.
pub fn geodist<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let to_meter = match a.len() {
        4 => 1.0,
        5 => unit_arg(a[4])?,
        _ => return Err(CmdError::Syntax),
    };
    let Some(meta) = zset(ctx, a[1])? else {
        return Ok(Reply::Nil);
    };
    let one = member_point(ctx, a[1], Some(&meta), a[2])?;
    let two = member_point(ctx, a[1], Some(&meta), a[3])?;
    Ok(match (one, two) {
        (Some((x1, y1)), Some((x2, y2))) => {
            distance_reply(geohash::distance(x1, y1, x2, y2) / to_meter)
        }
        _ => Reply::Nil,
    })
}

/// GEOHASH `key member …`: each member's standard 11-character geohash,
/// nil for a missing one.
pub fn geohash<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let meta = zset(ctx, a[1])?;
    let mut out = Vec::with_capacity(a.len() - 2);
    for member in &a[2..] {
        out.push(match member_point(ctx, a[1], meta.as_ref(), member)? {
            Some((x, y)) => Reply::bulk(geohash::standard_string(x, y)),
            None => Reply::Nil,
        });
    }
    Ok(Reply::Array(out))
}
