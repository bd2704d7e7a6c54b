//! Adding members to a sorted set, as Redis' `zsetAdd` does (ZADD with
//! its options, ZINCRBY, the typed API's [`crate::Engine::zadd`]): scores
//! as `f64`, replies left to the callers.

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta};

use super::write::{member_key, put_member_at, score_at};
use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::Ctx;
use crate::types::first_seen::FirstSeen;

/// ZADD's options.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct AddFlags {
    /// NX: only add new members.
    pub(crate) nx: bool,
    /// XX: only update existing members.
    pub(crate) xx: bool,
    /// GT: only update to a greater score.
    pub(crate) gt: bool,
    /// LT: only update to a lower score.
    pub(crate) lt: bool,
    /// CH: count changed members too.
    pub(crate) ch: bool,
    /// INCR: add the score to the current one (ZINCRBY).
    pub(crate) incr: bool,
}

/// What one score–member pair did, as Redis' `zsetAdd` reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    /// The member was added with this score.
    Added(f64),
    /// The member's score became this (possibly the same) score.
    Updated { changed: bool, score: f64 },
    /// Nothing was done (NX, XX, GT or LT).
    Skipped,
}

/// `zsetAdd` for one pair on a member whose current score is `current`.
fn add_step(flags: AddFlags, current: Option<f64>, score: f64) -> CmdResult<Step> {
    let Some(current) = current else {
        return Ok(if flags.xx {
            Step::Skipped
        } else {
            Step::Added(score)
        });
    };
    if flags.nx {
        return Ok(Step::Skipped);
    }
    let score = if flags.incr { score + current } else { score };
    if score.is_nan() {
        return Err(CmdError::other("ERR resulting score is not a number (NaN)"));
    }
    if (flags.lt && score >= current) || (flags.gt && score <= current) {
        return Ok(Step::Skipped);
    }
    Ok(Step::Updated {
        changed: score != current,
        score,
    })
}

/// The members a command touched: their score on disk and their score now,
/// and the key of their member record (made once, to read and to write),
/// each at the member's position.
#[derive(Default)]
struct Touched<'a> {
    members: FirstSeen<&'a [u8]>,
    scores: Vec<(Option<f64>, Option<f64>)>,
    keys: Vec<Vec<u8>>,
}

impl<'a> Touched<'a> {
    /// The position of `member` and its current score, read from disk on
    /// first touch.
    fn current<C: Codec, S: KvStore>(
        &mut self,
        ctx: &Ctx<'_, C, S>,
        key: &[u8],
        meta: &Meta,
        member: &'a [u8],
    ) -> CmdResult<(usize, Option<f64>)> {
        if let Some(at) = self.members.find(member) {
            return Ok((at, self.scores[at].1));
        }
        let record = member_key(ctx, key, meta, member);
        let on_disk = score_at(ctx, key, meta, &record)?;
        let at = self.members.push(member);
        self.keys.push(record);
        self.scores.push((on_disk, on_disk));
        Ok((at, on_disk))
    }

    /// The member at `at` now has `score`.
    fn set(&mut self, at: usize, score: f64) {
        self.scores[at].1 = Some(score);
    }

    /// Queues the records of every member whose score changed and updates
    /// the size. Returns whether anything changed.
    fn write<C: Codec, S: KvStore>(
        self,
        ctx: &mut Ctx<'_, C, S>,
        key: &[u8],
        meta: &mut Meta,
    ) -> CmdResult<bool> {
        let mut changed = false;
        let members = self.members.into_keys();
        for ((member, record), (on_disk, now)) in
            members.into_iter().zip(self.keys).zip(self.scores)
        {
            let Some(now) = now else {
                continue;
            };
            if on_disk == Some(now) {
                continue;
            }
            put_member_at(ctx, key, meta, member, record, on_disk, now)?;
            if on_disk.is_none() {
                meta.size += 1;
            }
            changed = true;
        }
        Ok(changed)
    }
}

/// What [`add`] did, as ZADD reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Added {
    /// Without INCR: the members added (with CH, also those whose score
    /// changed).
    Count(i64),
    /// With INCR: the member's new score, or `None` when NX, XX, GT or LT
    /// skipped it.
    Score(Option<f64>),
}

/// ZADD and ZINCRBY: applies `pairs` (score, member) in order, as Redis'
/// `zsetAdd` does one by one, creating the sorted set if needed.
pub(crate) fn add<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    flags: AddFlags,
    pairs: &[(f64, &[u8])],
) -> CmdResult<Added> {
    let skipped = if flags.incr {
        Added::Score(None)
    } else {
        Added::Count(0)
    };
    let view = ctx.view(key)?;
    let mut meta = match &view.live {
        Some(m) if m.data_type == DataType::ZSet => m.clone(),
        Some(_) => return Err(CmdError::WrongType),
        None if flags.xx => return Ok(skipped),
        None => ctx.create(key, DataType::ZSet, &view)?,
    };
    let mut touched = Touched::default();
    let (mut added, mut updated) = (0, 0);
    let mut last = None;
    for &(score, member) in pairs {
        let (at, current) = touched.current(ctx, key, &meta, member)?;
        match add_step(flags, current, score)? {
            Step::Added(score) => {
                added += 1;
                touched.set(at, score);
                last = Some(score);
            }
            Step::Updated { changed, score } => {
                updated += i64::from(changed);
                touched.set(at, score);
                last = Some(score);
            }
            Step::Skipped => {}
        }
    }
    if touched.write(ctx, key, &mut meta)? {
        ctx.save(key, &meta)?;
    }
    if added + updated > 0 {
        let event = if flags.incr { "zincr" } else { "zadd" };
        ctx.notify(Class::ZSET, event, key);
    }
    Ok(if flags.incr {
        Added::Score(last)
    } else {
        Added::Count(if flags.ch { added + updated } else { added })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_follow_zset_add() {
        let flags = |f: &str| AddFlags {
            nx: f.contains("nx"),
            xx: f.contains("xx"),
            gt: f.contains("gt"),
            lt: f.contains("lt"),
            ch: false,
            incr: f.contains("incr"),
        };
        assert_eq!(add_step(flags(""), None, 1.0).ok(), Some(Step::Added(1.0)));
        assert_eq!(add_step(flags("xx"), None, 1.0).ok(), Some(Step::Skipped));
        assert_eq!(
            add_step(flags("gt"), None, 1.0).ok(),
            Some(Step::Added(1.0))
        );
        assert_eq!(
            add_step(flags("nx"), Some(2.0), 1.0).ok(),
            Some(Step::Skipped)
        );
        assert_eq!(
            add_step(flags("gt"), Some(2.0), 2.0).ok(),
            Some(Step::Skipped)
        );
        assert_eq!(
            add_step(flags("lt"), Some(2.0), 3.0).ok(),
            Some(Step::Skipped)
        );
        assert_eq!(
            add_step(flags("lt incr"), Some(2.0), -1.0).ok(),
            Some(Step::Updated {
                changed: true,
                score: 1.0
            })
        );
        assert_eq!(
            add_step(flags(""), Some(0.0), -0.0).ok(),
            Some(Step::Updated {
                changed: false,
                score: -0.0
            })
        );
        let nan = add_step(flags("incr"), Some(f64::INFINITY), f64::NEG_INFINITY);
        assert_eq!(
            nan.expect_err("NaN").to_string(),
            "ERR resulting score is not a number (NaN)"
        );
    }
}
