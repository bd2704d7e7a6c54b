//! Reading and writing one member's records. Every score that reaches the
//! store goes through [`put_member`].

use crate::store::KvStore;
use redcodec_codec::{Codec, Meta, SubIdRef, SubKind, SubValue, SubValueRef};

use crate::error::{CmdError, CmdResult};
use crate::keyspace::{corrupt, Ctx};
use crate::number::format_score;

/// The id of a member record.
fn member_id(member: &[u8]) -> SubIdRef<'_> {
    SubIdRef::Name(member)
}

/// The id of a score-index record.
fn score_id(member: &[u8], score: f64) -> SubIdRef<'_> {
    SubIdRef::Scored { score, member }
}

/// The exact score of `member`, if it is in the sorted set.
pub(crate) fn score_of<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    member: &[u8],
) -> CmdResult<Option<f64>> {
    score_at(ctx, key, meta, &member_key(ctx, key, meta, member))
}

/// The key of `member`'s member record, made once by a command that
/// reads its score ([`score_at`]) and then writes it ([`put_member_at`]).
pub(crate) fn member_key<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    member: &[u8],
) -> Vec<u8> {
    ctx.sub_key(SubKind::ZSetMember, key, meta, member_id(member))
}

/// [`score_of`] the member whose record's key is `at` ([`member_key`]).
/// A sorted set of size 0 (a new one) has no members, whatever stale
/// records a version-less format still holds under its key.
pub(crate) fn score_at<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    at: &[u8],
) -> CmdResult<Option<f64>> {
    match ctx.member_at(SubKind::ZSetMember, key, meta, at)? {
        None => Ok(None),
        Some(SubValue::Score(score)) => Ok(Some(score)),
        Some(_) => Err(corrupt(key, "a sorted-set member record without a score")),
    }
}

/// The score as stored: -0 becomes 0, as Redis' compact encoding keeps it
/// (and so that no format orders the two zeros apart).
fn stored_score(score: f64) -> f64 {
    score + 0.0
}

/// Refuses a score the format cannot store.
fn check_score_limit<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, score: f64) -> CmdResult<()> {
    match ctx.caps().score_limit {
        Some((min, max)) if !(min..=max).contains(&score) => Err(CmdError::other(format!(
            "ERR score {} is out of range for the {} format (from {} to {})",
            format_score(score),
            ctx.codec().name(),
            format_score(min),
            format_score(max)
        ))),
        _ => Ok(()),
    }
}

/// Queues the records of `member` with score `new`, replacing the index
/// record of its previous score `old` if it had one. This is the one place
/// scores are stored: a score beyond the format's limit is an error here.
/// The codec is told of the member ([`Codec::note_member`]).
pub(crate) fn put_member<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &mut Meta,
    member: &[u8],
    old: Option<f64>,
    new: f64,
) -> CmdResult<()> {
    let at = member_key(ctx, key, meta, member);
    put_member_at(ctx, key, meta, member, at, old, new)
}

/// [`put_member`] with the key of the member's record made already
/// ([`member_key`]).
pub(crate) fn put_member_at<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &mut Meta,
    member: &[u8],
    at: Vec<u8>,
    old: Option<f64>,
    new: f64,
) -> CmdResult<()> {
    let new = stored_score(new);
    check_score_limit(ctx, new)?;
    if let Some(old) = old {
        // Deleted before the new index record is put: with a rounded index
        // both may be the same record.
        ctx.sub_del(SubKind::ZSetScore, key, meta, score_id(member, old));
    }
    ctx.sub_put_at(SubKind::ZSetMember, key, meta, at, SubValueRef::Score(new));
    ctx.sub_put(
        SubKind::ZSetScore,
        key,
        meta,
        score_id(member, new),
        SubValueRef::Empty,
    );
    ctx.codec().note_member(meta, member);
    Ok(())
}

/// Queues the removal of both records of `member`, whose score is `score`.
pub(crate) fn del_member<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    member: &[u8],
    score: f64,
) {
    ctx.sub_del(SubKind::ZSetMember, key, meta, member_id(member));
    ctx.sub_del(SubKind::ZSetScore, key, meta, score_id(member, score));
}
