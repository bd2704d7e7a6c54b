//! Parsing the blocking pops, and running them without blocking (inside
//! MULTI, as Redis does).

use bytes::Bytes;
use std::time::Duration;

use redcodec_engine::Reply;

use crate::access::Access;
use crate::command_roles::BlockingPop;
use crate::session::Session;
use crate::state::Shared;
use crate::waiters::BlockOp;

/// A parsed blocking command.
pub struct BlockRequest {
    /// Keys to wait on, in order.
    pub keys: Vec<Vec<u8>>,
    /// What to take.
    pub op: BlockOp,
    /// How long to wait; `None`: forever.
    pub timeout: Option<Duration>,
}

/// Redis' `getTimeoutFromObjectOrReply` in seconds: `None` for 0.
fn parse_timeout(arg: &[u8]) -> Result<Option<Duration>, Reply> {
    let secs = std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite())
        .ok_or_else(|| Reply::error("ERR timeout is not a float or out of range"))?;
    if secs < 0.0 {
        return Err(Reply::error("ERR timeout is negative"));
    }
    if secs == 0.0 {
        return Ok(None);
    }
    Duration::try_from_secs_f64(secs)
        .map(Some)
        .map_err(|_| Reply::error("ERR timeout is out of range"))
}

fn side(arg: &[u8]) -> Result<&'static str, Reply> {
    if arg.eq_ignore_ascii_case(b"left") {
        Ok("left")
    } else if arg.eq_ignore_ascii_case(b"right") {
        Ok("right")
    } else {
        Err(Reply::error("ERR syntax error"))
    }
}

/// A count or numkeys argument: an integer from 1 up; anything else,
/// non-integers included, names `what`, as Redis replies.
fn positive(arg: &[u8], what: &str) -> Result<i64, Reply> {
    std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|&n| n >= 1)
        .ok_or_else(|| Reply::error(format!("ERR {what} should be greater than 0")))
}

/// BLMPOP / BZMPOP: `timeout numkeys key… LEFT|RIGHT|MIN|MAX [COUNT n]`,
/// checked in Redis' order (numkeys, side, COUNT, then the timeout).
fn parse_mpop(zset: bool, args: &[Bytes]) -> Result<BlockRequest, Reply> {
    let numkeys = positive(&args[2], "numkeys")?;
    let side_at = 3usize.saturating_add(numkeys as usize);
    let Some(side) = args.get(side_at) else {
        return Err(Reply::error("ERR syntax error"));
    };
    let first = if zset {
        if side.eq_ignore_ascii_case(b"min") {
            true
        } else if side.eq_ignore_ascii_case(b"max") {
            false
        } else {
            return Err(Reply::error("ERR syntax error"));
        }
    } else {
        self::side(side)? == "left"
    };
    let mut count = None;
    let mut i = side_at + 1;
    while i < args.len() {
        if count.is_none() && args[i].eq_ignore_ascii_case(b"count") && i + 1 < args.len() {
            count = Some(positive(&args[i + 1], "count")?);
            i += 2;
        } else {
            return Err(Reply::error("ERR syntax error"));
        }
    }
    let count = count.unwrap_or(1);
    let op = if zset {
        BlockOp::ZMPop { min: first, count }
    } else {
        BlockOp::MPop { left: first, count }
    };
    let timeout = parse_timeout(&args[1])?;
    Ok(BlockRequest {
        keys: owned(&args[3..side_at]),
        op,
        timeout,
    })
}

/// Keys a blocked client waits on: copies, which do not hold the
/// connection's read buffer while it waits.
fn owned(keys: &[Bytes]) -> Vec<Vec<u8>> {
    keys.iter().map(|k| k.to_vec()).collect()
}

/// Parses a blocking pop's arguments (arity already checked).
pub fn parse(pop: BlockingPop, args: &[Bytes]) -> Result<BlockRequest, Reply> {
    let last = &args[args.len() - 1];
    let many = || owned(&args[1..args.len() - 1]);
    let (keys, op) = match pop {
        BlockingPop::ListMany => return parse_mpop(false, args),
        BlockingPop::ZsetMany => return parse_mpop(true, args),
        BlockingPop::List { left } => (many(), BlockOp::Pop { left }),
        BlockingPop::Zset { min } => (many(), BlockOp::ZPop { min }),
        BlockingPop::Move => {
            let from = side(&args[3])?;
            let to = side(&args[4])?;
            let op = BlockOp::Move {
                dst: args[2].to_vec(),
                from,
                to,
            };
            (vec![args[1].to_vec()], op)
        }
        BlockingPop::RPopLPush => {
            let op = BlockOp::Move {
                dst: args[2].to_vec(),
                from: "right",
                to: "left",
            };
            (vec![args[1].to_vec()], op)
        }
    };
    let timeout = parse_timeout(last)?;
    Ok(BlockRequest { keys, op, timeout })
}

/// Runs a blocking command once, without waiting: the first key that
/// holds something answers, else the timeout reply.
pub fn non_blocking(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    pop: BlockingPop,
    args: &[Bytes],
) -> Reply {
    let request = match parse(pop, args) {
        Ok(r) => r,
        Err(e) => return e,
    };
    let ns = session.namespace.clone();
    let outcome = access.with(&ns, |engine| {
        for key in &request.keys {
            if let Some(reply) = request.op.try_once(engine, key) {
                if !reply.is_error() {
                    session.wrote = true;
                    let mut written: Vec<&[u8]> = vec![key];
                    if let BlockOp::Move { dst, .. } = &request.op {
                        written.push(dst);
                    }
                    shared.watch.touch(&ns, &written);
                    match session.ready_keys.as_mut() {
                        Some(ready) => ready.extend(written[1..].iter().map(|k| k.to_vec())),
                        None => shared
                            .waiters
                            .serve(engine, &shared.watch, &ns, &written[1..]),
                    }
                }
                return reply;
            }
        }
        request.op.timeout_reply()
    });
    match outcome {
        Ok(r) | Err(r) => r,
    }
}
