//! The pass over the metadata records: every live key counted (its
//! metadata bytes, its elements, its time to live, its type and prefix),
//! strings offered to the top lists, stale metadata counted. The element
//! records of the collections are added by [`super::elements`].
//!
//! The walk merges the metadata places (one, or one per type), each read
//! ahead on a thread of its own, by user key
//! as [`redcodec_engine::internals::walk::KeyWalk`] does, but judges a key from the
//! records it read: no point read, except for a key held in several types
//! (which [`TYPE_ORDER`] resolves) and the element count of a format that
//! stores none.

use std::collections::HashSet;

use redcodec_codec::{Codec, DataType, Place};
use redcodec_engine::internals::keyspace::{Ctx, TYPE_ORDER};
use redcodec_engine::store::{Order, ReadAhead};
use redcodec_engine::CmdError;

use super::analysis::{Analysis, AnalyzeOptions, KeyStats, TtlBucket, MAX_PREFIXES, TTL_BUCKETS};
use super::tally::{is_live, prefix_of, visible, StaleCounts, Top};

/// One metadata place being walked.
struct Lane {
    /// The place's range, read ahead on a thread of its own.
    it: ReadAhead,
    order: Order,
    place: Place,
    place_type: Option<DataType>,
    /// The next (user key, raw key length, raw value) of this lane.
    head: Option<(Vec<u8>, usize, Vec<u8>)>,
    /// The user key of the last metadata record read (whose element
    /// records may follow it, in formats that keep them in one range).
    owner: Option<Vec<u8>>,
    done: bool,
}

/// What the pass over the metadata leaves for the pass over the elements.
#[derive(Default)]
pub(super) struct KeysSeen {
    /// Live collections counted.
    pub live_collections: u64,
    /// User keys whose metadata is in more than one type's place: the
    /// element pass resolves which one a read sees with the engine's rule
    /// (a point read per type), as only these need it.
    pub ambiguous: HashSet<Vec<u8>>,
}

impl Lane {
    /// Fills the head with the next metadata record, past records that
    /// are not a key's metadata.
    fn fill<C: Codec>(&mut self, codec: &C) -> Result<(), CmdError> {
        while self.head.is_none() && !self.done {
            let Some((raw_key, value)) = self.it.next_ref()? else {
                self.done = true;
                break;
            };
            let Ok(Some(user_key)) = codec.decode_meta_key(self.place, raw_key) else {
                // Where a format keeps a key's element records in one
                // range after its metadata, the first one met skips the
                // rest (as the engine's walk does).
                let past_owner = self
                    .owner
                    .take()
                    .and_then(|owner| codec.key_range(&owner))
                    .filter(|range| range.place == self.place);
                if let Some(range) = past_owner {
                    self.it.skip_to(&range.upper, self.order)?;
                }
                continue;
            };
            let (key_len, value) = (raw_key.len(), value.to_vec());
            self.owner = Some(user_key.clone());
            self.head = Some((user_key, key_len, value));
        }
        Ok(())
    }
}

/// Counts every live key's metadata, and every stale metadata record
/// into `stale` (by place).
pub(super) fn meta_pass<C: Codec>(
    ctx: &Ctx<'_, C>,
    options: &AnalyzeOptions,
    analysis: &mut Analysis,
    by_bytes: &mut Top,
    by_elements: &mut Top,
    stale: &mut StaleCounts,
) -> Result<KeysSeen, CmdError> {
    std::thread::scope(|scope| {
        let store = ctx.engine().store();
        let lanes: Vec<Lane> = ctx
            .codec()
            .meta_ranges()
            .into_iter()
            .map(|(range, place_type)| Lane {
                it: store.read_ahead_range(scope, &range),
                order: store.order(range.place),
                place: range.place,
                place_type,
                head: None,
                owner: None,
                done: false,
            })
            .collect();
        walk_lanes(ctx, lanes, options, analysis, by_bytes, by_elements, stale)
    })
}

/// [`meta_pass`] over its `lanes`, merged by user key.
fn walk_lanes<C: Codec>(
    ctx: &Ctx<'_, C>,
    mut lanes: Vec<Lane>,
    options: &AnalyzeOptions,
    analysis: &mut Analysis,
    by_bytes: &mut Top,
    by_elements: &mut Top,
    stale: &mut StaleCounts,
) -> Result<KeysSeen, CmdError> {
    let codec = ctx.codec();
    let now = ctx.now_ms();
    let mut seen = KeysSeen::default();
    let mut ttl = [0u64; TTL_BUCKETS.len()];
    // This key's records: (place type, raw key length, raw value).
    let mut here: Vec<(DataType, Place, usize, Vec<u8>)> = Vec::new();
    loop {
        for lane in &mut lanes {
            lane.fill(codec)?;
        }
        let Some(min) = lanes
            .iter()
            .filter_map(|l| l.head.as_ref().map(|h| &h.0))
            .min()
            .cloned()
        else {
            break;
        };
        here.clear();
        for lane in &mut lanes {
            if lane.head.as_ref().is_some_and(|h| h.0 == min) {
                let (_, key_len, value) = lane.head.take().unwrap_or_default();
                here.push((
                    lane.place_type.unwrap_or(DataType::String),
                    lane.place,
                    key_len,
                    value,
                ));
            }
        }
        // Stale metadata, judged record by record.
        for (ty, place, key_len, value) in &here {
            if let Ok(meta) = codec.decode_meta(*ty, value) {
                if !is_live(&meta, now) {
                    let s = stale.at(*place);
                    s.meta_records += 1;
                    s.bytes += (key_len + value.len()) as u64;
                }
            }
        }
        // The metadata a read sees: the first live one in TYPE_ORDER; none
        // if any of them does not decode.
        if here.len() > 1 {
            here.sort_by_key(|(ty, ..)| TYPE_ORDER.iter().position(|t| t == ty));
            seen.ambiguous.insert(min.clone());
        }
        let mut view = None;
        let mut unreadable = false;
        for (ty, _, key_len, value) in &here {
            match ctx.decode_meta(&min, *ty, value) {
                Ok(meta) => {
                    if view.is_none() && visible(&meta, now) {
                        view = Some((meta, *key_len));
                    }
                }
                Err(_) => unreadable = true,
            }
        }
        if unreadable {
            analysis.unreadable_keys += 1;
            continue;
        }
        let Some((meta, key_len)) = view else {
            continue;
        };
        let meta_value = codec.encode_meta(&meta).map_or(0, |v| v.len());
        let bytes = (key_len + meta_value) as u64;
        let elements = match meta.data_type {
            DataType::String => 1,
            _ => meta.size,
        };
        let type_name = meta.data_type.redis_name();
        analysis.total.add(elements, bytes);
        analysis
            .by_type
            .entry(type_name)
            .or_default()
            .add(elements, bytes);
        let mut prefix = prefix_of(&min, options);
        if !analysis.by_prefix.contains_key(&prefix) && analysis.by_prefix.len() >= MAX_PREFIXES {
            prefix = "(other)".into();
        }
        analysis
            .by_prefix
            .entry(prefix)
            .or_default()
            .add(elements, bytes);
        if meta.expire_ms == 0 {
            analysis.no_ttl += 1;
        } else {
            let left = meta.expire_ms.saturating_sub(now);
            let bucket = TTL_BUCKETS
                .iter()
                .position(|(_, upper)| left < *upper)
                .unwrap_or(TTL_BUCKETS.len() - 1);
            ttl[bucket] += 1;
        }
        if meta.data_type == DataType::String {
            let stats = || KeyStats {
                bytes,
                elements,
                key: String::from_utf8_lossy(&min).into_owned(),
                type_name,
                expire_ms: meta.expire_ms,
            };
            by_bytes.offer((bytes, elements), &min, stats);
            by_elements.offer((elements, bytes), &min, stats);
        } else {
            seen.live_collections += 1;
        }
    }
    analysis.ttl = TTL_BUCKETS
        .iter()
        .zip(ttl)
        .map(|((label, _), keys)| TtlBucket { label, keys })
        .collect();
    Ok(seen)
}
