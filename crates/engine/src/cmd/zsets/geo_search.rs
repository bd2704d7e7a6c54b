//! The GEO searches, as Redis 7.0's `georadiusGeneric` runs them:
//! GEORADIUS, GEORADIUSBYMEMBER (and their `_RO` forms), GEOSEARCH and
//! GEOSEARCHSTORE. The members of the nine geohash cells around the
//! centre are read cell by cell in score order, kept when inside the
//! shape, then sorted by distance when asked (or when COUNT is given
//! without ANY), cut to COUNT, and replied or stored.

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta};

use super::common::zset;
use super::geo::{coordinate, distance_reply, point_arg, unit_arg};
use crate::cmd::args::is;
use crate::cmd::stored::store_collection;
use crate::cmd::variants::variants;
use crate::error::{CmdError, CmdResult};
use crate::geohash::{self, Search, Shape};
use crate::keyspace::Ctx;
use crate::number::{float_arg, int_arg};
use crate::reply::Reply;
use crate::types::zset::order::{walk, Start};
use crate::types::zset::write::score_of;
use crate::types::zset::{write_all, Members};
use crate::types::ValueMut;

/// Which command of the family runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// GEORADIUS (`ro`: GEORADIUS_RO).
    Radius { ro: bool },
    /// GEORADIUSBYMEMBER (`ro`: its `_RO` form).
    ByMember { ro: bool },
    /// GEOSEARCH (`store`: GEOSEARCHSTORE).
    Search { store: bool },
}

/// A point found.
struct Found {
    member: Vec<u8>,
    score: f64,
    point: (f64, f64),
    distance: f64,
}

variants! {
    /// GEORADIUS `key longitude latitude radius unit [options]`.
    pub fn georadius(ctx, a) => generic(ctx, a, Form::Radius { ro: false });
    /// GEORADIUS_RO: GEORADIUS without STORE.
    pub fn georadius_ro(ctx, a) => generic(ctx, a, Form::Radius { ro: true });
    /// GEORADIUSBYMEMBER `key member radius unit [options]`.
    pub fn georadiusbymember(ctx, a) => generic(ctx, a, Form::ByMember { ro: false });
    /// GEORADIUSBYMEMBER_RO: GEORADIUSBYMEMBER without STORE.
    pub fn georadiusbymember_ro(ctx, a) => generic(ctx, a, Form::ByMember { ro: true });
    /// GEOSEARCH `key FROMMEMBER m|FROMLONLAT x y BYRADIUS r unit|BYBOX w
    /// h unit [options]`.
    pub fn geosearch(ctx, a) => generic(ctx, a, Form::Search { store: false });
    /// GEOSEARCHSTORE `destination source …`: GEOSEARCH's result stored.
    pub fn geosearchstore(ctx, a) => generic(ctx, a, Form::Search { store: true });
}

/// A radius and its unit (`extractDistanceOrReply`).
fn radius_arg(radius: &[u8], unit: &[u8]) -> CmdResult<(Shape, f64)> {
    let r = float_arg(radius).map_err(|_| CmdError::other("ERR need numeric radius"))?;
    if r < 0.0 {
        return Err(CmdError::other("ERR radius cannot be negative"));
    }
    Ok((Shape::Radius(r), unit_arg(unit)?))
}

/// A box's width, height and unit (`extractBoxOrReply`).
fn box_arg(width: &[u8], height: &[u8], unit: &[u8]) -> CmdResult<(Shape, f64)> {
    let w = float_arg(width).map_err(|_| CmdError::other("ERR need numeric width"))?;
    let h = float_arg(height).map_err(|_| CmdError::other("ERR need numeric height"))?;
    if h < 0.0 || w < 0.0 {
        return Err(CmdError::other("ERR height or width cannot be negative"));
    }
    Ok((Shape::Box(w, h), unit_arg(unit)?))
}

/// The point of a member of the source (`longLatFromMember`).
fn member_center<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    member: &[u8],
) -> CmdResult<(f64, f64)> {
    score_of(ctx, key, meta, member)?
        .and_then(geohash::point_of)
        .ok_or_else(|| CmdError::other("ERR could not decode requested zset member"))
}

/// How results are ordered.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sort {
    None,
    Asc,
    Desc,
}

fn generic<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    form: Form,
) -> CmdResult<Reply> {
    let search = matches!(form, Form::Search { .. });
    // The event of a stored result.
    let stored = if search {
        "geosearchstore"
    } else {
        "georadiusstore"
    };
    let (src, mut store) = match form {
        Form::Search { store: true } => (a[2], Some(a[1])),
        _ => (a[1], None),
    };
    let meta = zset(ctx, src)?;
    let mut center = None;
    let mut shape = None;
    let base = match form {
        Form::Radius { .. } => {
            center = Some(point_arg(a[2], a[3])?);
            shape = Some(radius_arg(a[4], a[5])?);
            6
        }
        Form::ByMember { .. } => {
            if let Some(meta) = &meta {
                center = Some(member_center(ctx, src, meta, a[2])?);
                shape = Some(radius_arg(a[3], a[4])?);
            }
            5
        }
        Form::Search { store } => 2 + usize::from(store),
    };
    let may_store = matches!(
        form,
        Form::Radius { ro: false } | Form::ByMember { ro: false }
    );
    let (mut withdist, mut withhash, mut withcoord, mut any) = (false, false, false, false);
    let (mut from_member, mut from_loc, mut by_radius, mut by_box) = (false, false, false, false);
    let mut storedist = false;
    let mut sort = Sort::None;
    let mut count: i64 = 0;
    let options = &a[base.min(a.len())..];
    let remaining = options.len();
    let mut i = 0;
    while i < remaining {
        let arg = options[i];
        if is(arg, "withdist") {
            withdist = true;
        } else if is(arg, "withhash") {
            withhash = true;
        } else if is(arg, "withcoord") {
            withcoord = true;
        } else if is(arg, "any") {
            any = true;
        } else if is(arg, "asc") {
            sort = Sort::Asc;
        } else if is(arg, "desc") {
            sort = Sort::Desc;
        } else if is(arg, "count") && i + 1 < remaining {
            count = int_arg(options[i + 1])?;
            if count <= 0 {
                return Err(CmdError::other("ERR COUNT must be > 0"));
            }
            i += 1;
        } else if (is(arg, "store") || is(arg, "storedist")) && i + 1 < remaining && may_store {
            store = Some(options[i + 1]);
            storedist = is(arg, "storedist");
            i += 1;
        } else if is(arg, "storedist") && form == (Form::Search { store: true }) {
            storedist = true;
        } else if is(arg, "frommember") && i + 1 < remaining && search && !from_loc {
            if let Some(meta) = &meta {
                center = Some(member_center(ctx, src, meta, options[i + 1])?);
            }
            from_member = true;
            i += 1;
        } else if is(arg, "fromlonlat") && i + 2 < remaining && search && !from_member {
            center = Some(point_arg(options[i + 1], options[i + 2])?);
            from_loc = true;
            i += 2;
        } else if is(arg, "byradius") && i + 2 < remaining && search && !by_box {
            shape = Some(radius_arg(options[i + 1], options[i + 2])?);
            by_radius = true;
            i += 2;
        } else if is(arg, "bybox") && i + 3 < remaining && search && !by_radius {
            shape = Some(box_arg(options[i + 1], options[i + 2], options[i + 3])?);
            by_box = true;
            i += 3;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    let name = String::from_utf8_lossy(a[0]);
    if store.is_some() && (withdist || withhash || withcoord) {
        let what = if form == (Form::Search { store: true }) {
            "GEOSEARCHSTORE"
        } else {
            "STORE option in GEORADIUS"
        };
        return Err(CmdError::other(format!(
            "ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        )));
    }
    if search && !(from_member || from_loc) {
        return Err(CmdError::other(format!(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
        )));
    }
    if search && !(by_radius || by_box) {
        return Err(CmdError::other(format!(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
        )));
    }
    if any && count == 0 {
        return Err(CmdError::other(
            "ERR the ANY argument requires COUNT argument",
        ));
    }
    let (Some(meta), Some(center), Some((shape, conversion))) = (meta, center, shape) else {
        return match store {
            Some(dest) => store_collection(ctx, dest, DataType::ZSet, stored, true, |_, _| Ok(())),
            None => Ok(Reply::Array(Vec::new())),
        };
    };
    if count != 0 && sort == Sort::None && !any {
        sort = Sort::Asc;
    }
    let query = Search {
        shape,
        center,
        conversion,
    };
    let limit = if any { count as usize } else { 0 };
    let mut found = points(ctx, src, &meta, &query, limit)?;
    if found.is_empty() && store.is_none() {
        return Ok(Reply::Array(Vec::new()));
    }
    match sort {
        Sort::None => {}
        Sort::Asc => found.sort_by(|x, y| x.distance.total_cmp(&y.distance)),
        Sort::Desc => found.sort_by(|x, y| y.distance.total_cmp(&x.distance)),
    }
    if count != 0 {
        found.truncate(usize::try_from(count).unwrap_or(usize::MAX));
    }
    for f in &mut found {
        f.distance /= conversion;
    }
    if let Some(dest) = store {
        let members: Members = found
            .into_iter()
            .map(|f| (f.member, if storedist { f.distance } else { f.score }))
            .collect();
        let empty = members.is_empty();
        return store_collection(ctx, dest, DataType::ZSet, stored, empty, |ctx, meta| {
            write_all(ValueMut::new(ctx, dest, meta), &members)
        });
    }
    let with = [withdist, withhash, withcoord]
        .iter()
        .filter(|w| **w)
        .count();
    let items = found
        .into_iter()
        .map(|f| {
            if with == 0 {
                return Reply::Bulk(f.member);
            }
            let mut item = vec![Reply::Bulk(f.member)];
            if withdist {
                item.push(distance_reply(f.distance));
            }
            if withhash {
                item.push(Reply::Integer(f.score as i64));
            }
            if withcoord {
                item.push(Reply::Array(vec![
                    coordinate(f.point.0),
                    coordinate(f.point.1),
                ]));
            }
            Reply::Array(item)
        })
        .collect();
    Ok(Reply::Array(items))
}

/// The members inside `query`, cell by cell (`membersOfAllNeighbors`),
/// stopping at `limit` (0: none).
fn points<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    query: &Search,
    limit: usize,
) -> CmdResult<Vec<Found>> {
    let mut found = Vec::new();
    let full = |found: &Vec<Found>| !found.is_empty() && limit != 0 && found.len() >= limit;
    let cells = query.cells();
    let mut last: Option<usize> = None;
    for (i, cell) in cells.iter().enumerate() {
        let Some(cell) = cell else { continue };
        // Redis compares with the last cell read, the centre's excepted.
        if let Some(l) = last.filter(|l| *l > 0) {
            if cells[l] == Some(*cell) {
                continue;
            }
        }
        if full(&found) {
            break;
        }
        let (min, max) = geohash::score_range(*cell);
        let (min, max) = (min as f64, max as f64);
        for entry in walk(ctx, key, meta, Start::Score(min), false) {
            let entry = entry?;
            if entry.score < min {
                continue;
            }
            if entry.score >= max {
                break;
            }
            if let Some((point, distance)) = query.contains(entry.score) {
                found.push(Found {
                    member: entry.member,
                    score: entry.score,
                    point,
                    distance,
                });
            }
            if full(&found) {
                break;
            }
        }
        last = Some(i);
    }
    Ok(found)
}
