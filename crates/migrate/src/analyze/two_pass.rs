//! The first, two-pass `analyze`, kept as the reference the one-pass
//! analysis is tested against: the live keys, each collection's element
//! records read through their ranges (a seek per collection key), then
//! every element record once more, judged by the format's compaction rule.

use redcodec_codec::{Codec, DataType, GcDecision, Meta, Place, SubKind};
use redcodec_engine::keyspace::Ctx;
use redcodec_engine::walk::KeyWalk;
use redcodec_engine::CmdError;
use redcodec_engine::EngineCore;

use super::{
    family_name, is_live, kinds_of, prefix_of, Analysis, AnalyzeOptions, KeyStats, Stale, Top,
    TtlBucket, MAX_PREFIXES, TTL_BUCKETS,
};

/// Analyzes the store behind `engine` (open it read-only) the way the
/// first version did, in two passes: the live keys, each collection's
/// element records read through their ranges, then every element record
/// again. Kept as the reference the one-pass [`super::analyze`] is tested
/// against (`analyze --two-pass`): both report the same.
pub fn analyze_two_pass<C: Codec>(
    engine: &EngineCore<C>,
    options: &AnalyzeOptions,
) -> Result<Analysis, CmdError> {
    let ctx = Ctx::new(engine);
    let mut analysis = Analysis {
        format: engine.codec().name(),
        ..Analysis::default()
    };
    live_keys(&ctx, options, &mut analysis)?;
    stale_records(&ctx, &mut analysis)?;
    analysis.families = super::families::families(engine.store(), &|p| family_name(&ctx, p))?;
    Ok(analysis)
}

/// The pass over the live keys: each key's records counted through its
/// metadata and the ranges of its element records.
fn live_keys<C: Codec>(
    ctx: &Ctx<'_, C>,
    options: &AnalyzeOptions,
    analysis: &mut Analysis,
) -> Result<(), CmdError> {
    let codec = ctx.codec();
    let store = ctx.engine().store();
    let now = ctx.now_ms();
    let mut by_bytes = Top::new(options.top);
    let mut by_elements = Top::new(options.top);
    let mut ttl = [0u64; TTL_BUCKETS.len()];
    let mut lanes: Vec<(Place, redcodec_engine::store::StoreIter<'_>)> = Vec::new();
    let mut walk = KeyWalk::new(ctx, None);
    while let Some((key, meta)) = walk.next()? {
        let Some(meta) = meta else {
            analysis.unreadable_keys += 1;
            continue;
        };
        let meta_key = codec
            .meta_record(&key, meta.data_type)
            .map_or(key.len(), |r| r.key.len());
        let meta_value = codec.encode_meta(&meta).map_or(0, |v| v.len());
        let mut bytes = (meta_key + meta_value) as u64;
        let mut counted = 0u64;
        for &kind in kinds_of(meta.data_type) {
            let of = kind.of(&key, &meta);
            let range = codec.sub_range(of);
            // One iterator per family, moved from key to key: creating
            // one per key would cost more than the key's records.
            let it = match lanes.iter().position(|(p, _)| *p == range.place) {
                Some(at) => &mut lanes[at].1,
                None => {
                    lanes.push((range.place, store.scan_family(range.place)));
                    &mut lanes.last_mut().expect("just pushed").1
                }
            };
            let order = store.order(range.place);
            it.seek(&range.lower);
            while let Some((k, v)) = it.next()? {
                if order(&k, &range.upper) != std::cmp::Ordering::Less {
                    break;
                }
                if !codec.sub_is_current(of, &v) {
                    continue;
                }
                bytes += (k.len() + v.len()) as u64;
                if kind != SubKind::ZSetScore {
                    counted += 1;
                }
            }
        }
        let elements = match meta.data_type {
            DataType::String => 1,
            _ if ctx.caps().size_unknown(&meta) => counted,
            _ => meta.size,
        };
        let type_name = meta.data_type.redis_name();
        analysis.total.add(elements, bytes);
        analysis
            .by_type
            .entry(type_name)
            .or_default()
            .add(elements, bytes);
        let mut prefix = prefix_of(&key, options);
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
        let stats = || KeyStats {
            bytes,
            elements,
            key: String::from_utf8_lossy(&key).into_owned(),
            type_name,
            expire_ms: meta.expire_ms,
        };
        by_bytes.offer((bytes, elements), &key, stats);
        by_elements.offer((elements, bytes), &key, stats);
    }
    analysis.top_by_bytes = by_bytes.into_sorted();
    analysis.top_by_elements = by_elements.into_sorted();
    analysis.ttl = TTL_BUCKETS
        .iter()
        .zip(ttl)
        .map(|((label, _), keys)| TtlBucket { label, keys })
        .collect();
    Ok(())
}

/// The stale records of a family, created when first met.
fn stale_of(stale: &mut Vec<Stale>, family: String) -> &mut Stale {
    let at = match stale.iter().position(|s| s.family == family) {
        Some(at) => at,
        None => {
            stale.push(Stale {
                family,
                ..Stale::default()
            });
            stale.len() - 1
        }
    };
    &mut stale[at]
}

/// The pass over every metadata and element record: what no read sees.
fn stale_records<C: Codec>(ctx: &Ctx<'_, C>, analysis: &mut Analysis) -> Result<(), CmdError> {
    let codec = ctx.codec();
    let store = ctx.engine().store();
    let now = ctx.now_ms();
    let mut stale = Vec::new();
    let place_types: Vec<(Place, Option<DataType>)> = codec
        .meta_ranges()
        .into_iter()
        .map(|(range, ty)| (range.place, ty))
        .collect();
    let type_at = |place: Place| {
        place_types
            .iter()
            .find(|(p, _)| *p == place)
            .and_then(|(_, ty)| *ty)
            .unwrap_or(DataType::String)
    };
    for (range, place_type) in codec.meta_ranges() {
        let mut it = store.scan(&range, None, false);
        while let Some((raw_key, value)) = it.next()? {
            let Ok(Some(_)) = codec.decode_meta_key(range.place, &raw_key) else {
                continue;
            };
            let ty = place_type.unwrap_or(DataType::String);
            if let Ok(meta) = codec.decode_meta(ty, &value) {
                if !is_live(&meta, now) {
                    let s = stale_of(&mut stale, family_name(ctx, range.place));
                    s.meta_records += 1;
                    s.bytes += (raw_key.len() + value.len()) as u64;
                }
            }
        }
    }
    let mut places: Vec<Place> = [
        SubKind::HashField,
        SubKind::SetMember,
        SubKind::ListItem,
        SubKind::ZSetMember,
        SubKind::ZSetScore,
    ]
    .into_iter()
    .flat_map(|kind| codec.sub_places(kind))
    .collect();
    places.sort();
    places.dedup();
    // The owner's metadata of the last element record (raw, and decoded):
    // a key's element records are next to each other in their family.
    let mut last: Option<(redcodec_codec::Record, Option<Vec<u8>>, Option<Meta>)> = None;
    for place in places {
        let mut it = store.scan_family(place);
        while let Some((key, value)) = it.next()? {
            let Some(owner) = codec.gc_sub_owner(place, &key, &value) else {
                continue;
            };
            // Elements of another namespace are analyzed with it.
            if !matches!(
                codec.decode_meta_key(owner.meta.place, &owner.meta.key),
                Ok(Some(_))
            ) {
                continue;
            }
            if last.as_ref().is_none_or(|(r, _, _)| *r != owner.meta) {
                let raw = store.get(owner.meta.place, &owner.meta.key)?;
                let decoded = raw
                    .as_deref()
                    .and_then(|raw| codec.decode_meta(type_at(owner.meta.place), raw).ok());
                last = Some((owner.meta.clone(), raw, decoded));
            }
            let (raw, meta) = last.as_ref().map_or((None, None), |(_, raw, meta)| {
                (raw.as_deref(), meta.as_ref())
            });
            // Dropped by the format's rule, or kept for a key no read
            // sees (expired, deleted), or of another version (an orphan).
            let dropped = codec.gc_sub(&owner, raw, now) == GcDecision::Drop
                || meta.is_some_and(|m| !is_live(m, now));
            let orphan =
                !dropped && meta.is_some_and(|m| owner.version != 0 && m.version != owner.version);
            if dropped || orphan {
                let s = stale_of(&mut stale, family_name(ctx, place));
                if dropped {
                    s.element_records += 1;
                } else {
                    s.orphan_records += 1;
                }
                s.bytes += (key.len() + value.len()) as u64;
            }
        }
    }
    analysis.stale = stale;
    Ok(())
}
