//! The one way the engine reads a sorted set in order: members in Redis
//! order — by exact score, ties by member bytes — with their exact scores,
//! whatever the format's score index keeps.
//!
//! With an exact index ([`ScoreIndex::Exact`]) the score records are
//! streamed as they are. With a rounded index ([`ScoreIndex::Rounded`]) the
//! index only orders entries by their rounded score: each run of entries
//! sharing a rounded score is read whole, completed with the exact scores
//! of the member records, sorted, and then yielded. Seeks into a rounded
//! index start one rounding step early, so a caller filtering by exact
//! score sees every candidate.
//!
//! [`range_walk`] then applies Redis' range rules (start, offset, limit) to
//! such an ordered stream.

use std::cmp::Ordering;
use std::collections::VecDeque;

use crate::store::KvStore;
use redcodec_codec::{Codec, Meta, ScoreIndex, SubId, SubIdRef, SubKind};

use super::bounds::Interval;
pub(crate) use super::entry::Entry;
use super::write::score_of;
use crate::error::CmdResult;
use crate::keyspace::{corrupt, Ctx, SubIter};

/// Redis' order of sorted-set entries: by score, then by member bytes.
pub(crate) fn redis_order(a: &Entry, b: &Entry) -> Ordering {
    a.score
        .partial_cmp(&b.score)
        .unwrap_or(Ordering::Equal)
        .then_with(|| a.member.cmp(&b.member))
}

/// Where a walk starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Start<'a> {
    /// At the first entry in the walk's direction.
    Edge,
    /// Far enough that no entry with a score at or past `s` in the walk's
    /// direction (≥ `s` forward, ≤ `s` backward) is missed. Entries before
    /// that point may come first: callers filter by score.
    Score(f64),
    /// At the entry (`score`, `member`) or the next one in the walk's
    /// direction. Only exact indexes can seek to a member; with a rounded
    /// index this starts at the edge (callers filter).
    Entry(f64, &'a [u8]),
}

/// Walks the sorted set `key` in Redis order (or its reverse) from `start`.
pub(crate) fn walk<'c, 'e, 'k, C: Codec, S: KvStore>(
    ctx: &'c Ctx<'e, C, S>,
    key: &'k [u8],
    meta: &'k Meta,
    start: Start<'_>,
    reverse: bool,
) -> InOrder<Indexed<'c, 'e, 'k, C, S>> {
    let index = ctx.caps().score_index;
    let from = seek_id(index, start, reverse);
    let records = ctx.subs(SubKind::ZSetScore, key, meta, from, reverse);
    let rounded = matches!(index, ScoreIndex::Rounded { .. });
    InOrder::new(
        Indexed {
            ctx,
            key,
            meta,
            records,
            rounded,
        },
        rounded,
        reverse,
    )
}

/// The score-index id to seek to for `start`, or `None` for the edge.
fn seek_id(index: ScoreIndex, start: Start<'_>, reverse: bool) -> Option<SubIdRef<'_>> {
    let scored = |score: f64, member| SubIdRef::Scored { score, member };
    match (index, start) {
        (_, Start::Edge) => None,
        (ScoreIndex::Exact, Start::Entry(score, member)) => Some(scored(score, member)),
        (ScoreIndex::Rounded { .. }, Start::Entry(..)) => None,
        (ScoreIndex::Exact, Start::Score(s)) => {
            if reverse {
                // The empty member sorts first among entries of a score,
                // so seek to the next score up: every entry of `s` is
                // before it.
                (s != f64::INFINITY).then(|| scored(s.next_up(), b""))
            } else {
                // -0 is the lowest zero a format may order separately.
                Some(scored(if s == 0.0 { -0.0 } else { s }, b""))
            }
        }
        (ScoreIndex::Rounded { decimals }, Start::Score(s)) => {
            // Two rounding steps: whatever way the format rounds, the
            // rounded score of `s` is on this side of the seek key. Where
            // a double's precision is coarser than the step (|s| above
            // about 10^11 for 5 decimals), `s ± step` is `s` itself: four
            // units in the last place more move the seek key off `s`'s
            // own rounded score.
            let step = 10f64.powi(-i32::try_from(decimals).unwrap_or(i32::MAX));
            let ulp = s.abs().next_up() - s.abs();
            let margin = 2.0 * step + 4.0 * ulp;
            let widened = if reverse { s + margin } else { s - margin };
            widened.is_finite().then(|| scored(widened, b""))
        }
    }
}

/// Score-index entries in index order, each as (indexed score, entry with
/// its exact score).
pub(crate) struct Indexed<'c, 'e, 'k, C: Codec, S: KvStore> {
    ctx: &'c Ctx<'e, C, S>,
    key: &'k [u8],
    meta: &'k Meta,
    records: SubIter<'e, 'k, C, S>,
    /// Whether indexed scores are rounded: exact scores are then read from
    /// the member records.
    rounded: bool,
}

impl<C: Codec, S: KvStore> Indexed<'_, '_, '_, C, S> {
    fn entry(&self, id: SubId) -> CmdResult<(f64, Entry)> {
        let SubId::Scored { score, member } = id else {
            return Err(corrupt(self.key, "a score-index record without a score"));
        };
        if !self.rounded {
            return Ok((score, Entry { member, score }));
        }
        match score_of(self.ctx, self.key, self.meta, &member)? {
            Some(exact) => Ok((
                score,
                Entry {
                    member,
                    score: exact,
                },
            )),
            None => Err(corrupt(self.key, "a score-index record without its member")),
        }
    }
}

impl<C: Codec, S: KvStore> Iterator for Indexed<'_, '_, '_, C, S> {
    type Item = CmdResult<(f64, Entry)>;

    fn next(&mut self) -> Option<Self::Item> {
        let record = self.records.next()?;
        Some(record.and_then(|(id, _)| self.entry(id)))
    }
}

/// Turns (indexed score, entry) pairs in index order into entries in exact
/// Redis order: when `regroup`, each run of equal indexed scores is sorted
/// by exact score and member before it is yielded; otherwise entries pass
/// through.
pub(crate) struct InOrder<I> {
    inner: I,
    regroup: bool,
    reverse: bool,
    /// The sorted run being yielded.
    run: VecDeque<Entry>,
    /// The first entry of the next run, read while closing the last one.
    next_run: Option<(f64, Entry)>,
}

impl<I: Iterator<Item = CmdResult<(f64, Entry)>>> InOrder<I> {
    /// Orders `inner`, whose entries go forward or backward (`reverse`) in
    /// index order.
    pub(crate) fn new(inner: I, regroup: bool, reverse: bool) -> InOrder<I> {
        InOrder {
            inner,
            regroup,
            reverse,
            run: VecDeque::new(),
            next_run: None,
        }
    }

    /// Reads the next run of entries sharing an indexed score and sorts it.
    /// Returns `false` at the end of the index.
    fn fill_run(&mut self) -> CmdResult<bool> {
        let (indexed, first) = match self.next_run.take() {
            Some(pair) => pair,
            None => match self.inner.next() {
                Some(pair) => pair?,
                None => return Ok(false),
            },
        };
        let mut run = vec![first];
        for pair in self.inner.by_ref() {
            let (score, entry) = pair?;
            if score == indexed {
                run.push(entry);
            } else {
                self.next_run = Some((score, entry));
                break;
            }
        }
        order_run(&mut run, self.reverse);
        self.run = run.into();
        Ok(true)
    }
}

impl<I: Iterator<Item = CmdResult<(f64, Entry)>>> Iterator for InOrder<I> {
    type Item = CmdResult<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.regroup {
            return self.inner.next().map(|pair| pair.map(|(_, entry)| entry));
        }
        if self.run.is_empty() {
            match self.fill_run() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
        self.run.pop_front().map(Ok)
    }
}

/// Sorts one run of entries into Redis order, or its reverse.
pub(crate) fn order_run(run: &mut [Entry], reverse: bool) {
    if reverse {
        run.sort_by(|a, b| redis_order(b, a));
    } else {
        run.sort_by(redis_order);
    }
}

/// How many entries of a range to skip and to return (`LIMIT offset count`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Window {
    /// Entries skipped after the first one in range.
    pub(crate) offset: u64,
    /// Entries returned at most; `None` for all.
    pub(crate) count: Option<u64>,
}

impl Window {
    /// The whole range.
    pub(crate) const ALL: Window = Window {
        offset: 0,
        count: None,
    };
}

/// Redis' walk over a range of an ordered stream (`zzlFirstInRange`, then
/// the offset, then the limit): entries before the range's start are
/// skipped; the first entry at or past it must also be inside the range's
/// end, or nothing is in range; from there `window.offset` entries are
/// skipped whatever they are, and up to `window.count` entries are passed
/// to `emit` while they are inside the end. Going `reverse`, the start is
/// the maximum and the end the minimum.
pub(crate) fn range_walk<R: Interval>(
    mut entries: impl Iterator<Item = CmdResult<Entry>>,
    range: &R,
    reverse: bool,
    window: Window,
    mut emit: impl FnMut(Entry),
) -> CmdResult<()> {
    let at_start = |e: &Entry| {
        if reverse {
            range.within_max(e)
        } else {
            range.reaches_min(e)
        }
    };
    let inside_end = |e: &Entry| {
        if reverse {
            range.reaches_min(e)
        } else {
            range.within_max(e)
        }
    };
    if range.is_empty() {
        return Ok(());
    }
    let mut current = loop {
        match entries.next() {
            None => return Ok(()),
            Some(entry) => {
                let entry = entry?;
                if at_start(&entry) {
                    break Some(entry);
                }
            }
        }
    };
    if !current.as_ref().is_some_and(inside_end) {
        return Ok(());
    }
    for _ in 0..window.offset {
        current = entries.next().transpose()?;
        if current.is_none() {
            return Ok(());
        }
    }
    let mut left = window.count;
    while let Some(entry) = current {
        if left == Some(0) || !inside_end(&entry) {
            break;
        }
        emit(entry);
        left = left.map(|n| n - 1);
        current = entries.next().transpose()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::bounds::ScoreRange;
    use super::super::entry::entry;
    use super::*;

    /// Rounds to 5 decimals as a lossy index would.
    fn rounded(score: f64) -> f64 {
        (score * 1e5).round() / 1e5
    }

    /// A lossy index in index order: by (rounded score, member), so that
    /// members whose exact scores are close come out by name.
    fn lossy_index(entries: &[Entry], reverse: bool) -> Vec<CmdResult<(f64, Entry)>> {
        let mut index: Vec<(f64, Entry)> = entries
            .iter()
            .map(|e| (rounded(e.score), e.clone()))
            .collect();
        index.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then_with(|| a.1.member.cmp(&b.1.member))
        });
        if reverse {
            index.reverse();
        }
        index.into_iter().map(Ok).collect()
    }

    fn names(entries: &[Entry]) -> Vec<String> {
        entries
            .iter()
            .map(|e| String::from_utf8_lossy(&e.member).into_owned())
            .collect()
    }

    fn ordered(index: Vec<CmdResult<(f64, Entry)>>, reverse: bool) -> Vec<Entry> {
        InOrder::new(index.into_iter(), true, reverse)
            .collect::<CmdResult<_>>()
            .expect("no errors")
    }

    fn walked(entries: &[Entry], range: &str, reverse: bool, window: Window) -> Vec<String> {
        let (min, max) = range.split_once(' ').expect("two bounds");
        let range = ScoreRange::parse(min.as_bytes(), max.as_bytes()).expect("valid");
        let mut out = Vec::new();
        let stream = InOrder::new(lossy_index(entries, reverse).into_iter(), true, reverse);
        range_walk(stream, &range, reverse, window, |e| out.push(e)).expect("no errors");
        names(&out)
    }

    #[test]
    fn rounded_runs_come_out_in_exact_order() {
        // "a" sorts first by name but has the higher exact score.
        let set = [
            entry("a", 1.000002),
            entry("b", 1.000001),
            entry("c", 0.5),
            entry("d", 2.0),
        ];
        let index = lossy_index(&set, false);
        let indexed_names: Vec<_> = index
            .iter()
            .map(|p| p.as_ref().map(|(_, e)| e.clone()).expect("ok"))
            .collect();
        assert_eq!(names(&indexed_names), ["c", "a", "b", "d"]);
        let forward = ordered(index, false);
        assert_eq!(names(&forward), ["c", "b", "a", "d"]);
        assert_eq!(forward[1].score, 1.000001);
        assert_eq!(forward[2].score, 1.000002);
        let backward = ordered(lossy_index(&set, true), true);
        assert_eq!(names(&backward), ["d", "a", "b", "c"]);
    }

    #[test]
    fn ranges_filter_rounded_runs_by_exact_score() {
        let set = [
            entry("a", 1.000002),
            entry("b", 1.000001),
            entry("c", 0.5),
            entry("d", 2.0),
        ];
        assert_eq!(
            walked(&set, "(1.000001 +inf", false, Window::ALL),
            ["a", "d"]
        );
        assert_eq!(walked(&set, "1.000001 1.000001", false, Window::ALL), ["b"]);
        assert_eq!(walked(&set, "1 (1.000002", false, Window::ALL), ["b"]);
        assert_eq!(walked(&set, "-inf 1.000001", true, Window::ALL), ["b", "c"]);
        assert_eq!(walked(&set, "(1 1.5", true, Window::ALL), ["a", "b"]);
        let one = Window {
            offset: 1,
            count: Some(1),
        };
        assert_eq!(walked(&set, "-inf +inf", false, one), ["b"]);
        assert_eq!(walked(&set, "1 2", true, one), ["a"]);
        assert!(walked(&set, "3 4", false, Window::ALL).is_empty());
        assert!(walked(&set, "2 1", false, Window::ALL).is_empty());
    }

    #[test]
    fn exact_streams_pass_through() {
        let index = vec![Ok((1.0, entry("b", 1.0))), Ok((2.0, entry("a", 2.0)))];
        let out: Vec<Entry> = InOrder::new(index.into_iter(), false, false)
            .collect::<CmdResult<_>>()
            .expect("ok");
        assert_eq!(names(&out), ["b", "a"]);
    }

    #[test]
    fn seeks_cover_their_bound() {
        let exact = ScoreIndex::Exact;
        let id = |s: f64| {
            Some(SubIdRef::Scored {
                score: s,
                member: &[],
            })
        };
        assert_eq!(seek_id(exact, Start::Score(0.0), false), id(-0.0));
        assert_eq!(seek_id(exact, Start::Score(1.5), false), id(1.5));
        assert_eq!(
            seek_id(exact, Start::Score(1.0), true),
            id(1.0f64.next_up())
        );
        assert_eq!(seek_id(exact, Start::Score(f64::INFINITY), true), None);
        let lossy = ScoreIndex::Rounded { decimals: 5 };
        let ulp_of_one = 1.0f64.next_up() - 1.0;
        assert_eq!(
            seek_id(lossy, Start::Score(1.0), false),
            id(1.0 - (2.0 * 10f64.powi(-5) + 4.0 * ulp_of_one))
        );
        assert_eq!(seek_id(lossy, Start::Score(f64::NEG_INFINITY), false), None);
        // Where doubles are coarser than the step, the seek still moves
        // past the bound's own rounded score (5 decimals, as nemo rounds).
        let index = |x: f64| (x * 1e5).round() as i64;
        for s in [1e13, 5e12, 123456789012.345, -1e13, 3e11] {
            let Some(SubIdRef::Scored { score: up, .. }) = seek_id(lossy, Start::Score(s), true)
            else {
                panic!("a seek for {s}");
            };
            assert!(index(up) > index(s), "{s} -> {up}");
            let Some(SubIdRef::Scored { score: down, .. }) = seek_id(lossy, Start::Score(s), false)
            else {
                panic!("a seek for {s}");
            };
            assert!(index(down) < index(s), "{s} -> {down}");
        }
        assert_eq!(seek_id(lossy, Start::Entry(1.0, b"m"), false), None);
    }
}
