//! Walks the live keys of the store in key order, across every metadata
//! place the format has (one, or one per type), resuming after a key.

use redcodec_codec::{Codec, DataType, Meta};

use crate::error::CmdResult;
use crate::keyspace::Ctx;
use crate::store::{DefaultStore, GroupIter, KvIter, KvStore};

/// One metadata place being walked.
struct Lane<'e, S: KvStore> {
    it: GroupIter<S::Iter<'e>>,
    place_type: Option<DataType>,
    place: redcodec_codec::Place,
    /// The next (user key, raw value) of this lane, if any.
    head: Option<(Vec<u8>, Vec<u8>)>,
    /// The user key of the last metadata record read, whose element
    /// records may follow it in the same range.
    owner: Option<Vec<u8>>,
}

/// Iterator over `(user key, live metadata)`; the metadata is `None` for a
/// key whose metadata cannot be decoded (it still exists, and commands on
/// it reply with an error naming it).
pub struct KeyWalk<'c, 'e, C: Codec, S: KvStore = DefaultStore> {
    ctx: &'c Ctx<'e, C, S>,
    lanes: Vec<Lane<'e, S>>,
    after: Option<Vec<u8>>,
}

impl<'c, 'e, C: Codec, S: KvStore> KeyWalk<'c, 'e, C, S> {
    /// Starts after `after` (exclusive), or at the first key.
    pub fn new(ctx: &'c Ctx<'e, C, S>, after: Option<&[u8]>) -> KeyWalk<'c, 'e, C, S> {
        let codec = ctx.codec();
        let lanes = codec
            .meta_ranges()
            .into_iter()
            .map(|(range, place_type)| {
                let from = after.and_then(|k| {
                    codec
                        .meta_record(k, place_type.unwrap_or(DataType::String))
                        .ok()
                        .map(|r| r.key)
                });
                Lane {
                    it: ctx.scan(&range, from.as_deref(), false),
                    place_type,
                    place: range.place,
                    head: None,
                    owner: None,
                }
            })
            .collect();
        KeyWalk {
            ctx,
            lanes,
            after: after.map(<[u8]>::to_vec),
        }
    }

    /// Fills each lane's head with its next user key past `after`.
    fn fill(&mut self) -> CmdResult<()> {
        let codec = self.ctx.codec();
        for lane in &mut self.lanes {
            while lane.head.is_none() {
                let Some((raw_key, value)) = lane.it.next()? else {
                    break;
                };
                // Records that are not a key's metadata, or whose key bytes
                // do not parse, are not keys. Where a format keeps all of a
                // key's records in one range next to its metadata, the
                // first element record met skips the rest of them.
                let Ok(Some(user_key)) = codec.decode_meta_key(lane.place, &raw_key) else {
                    let past_owner = lane
                        .owner
                        .take()
                        .and_then(|owner| codec.key_range(&owner))
                        .filter(|range| range.place == lane.place);
                    if let Some(range) = past_owner {
                        lane.it.seek(&range.upper);
                    }
                    continue;
                };
                lane.owner = Some(user_key.clone());
                if self.after.as_deref() == Some(user_key.as_slice()) {
                    continue;
                }
                lane.head = Some((user_key, value));
            }
        }
        Ok(())
    }

    /// The next live key and its metadata.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> CmdResult<Option<(Vec<u8>, Option<Meta>)>> {
        loop {
            self.fill()?;
            let Some(min) = self
                .lanes
                .iter()
                .filter_map(|l| l.head.as_ref().map(|h| h.0.clone()))
                .min()
            else {
                return Ok(None);
            };
            let mut value_of_single = None;
            for lane in &mut self.lanes {
                if lane.head.as_ref().is_some_and(|h| h.0 == min) {
                    let (_, value) = lane.head.take().unwrap_or_default();
                    value_of_single = Some((lane.place_type, value));
                }
            }
            self.after = Some(min.clone());
            let decoded = if self.lanes.len() == 1 {
                let (place_type, value) = value_of_single.unwrap_or((None, Vec::new()));
                self.ctx
                    .decode_meta(&min, place_type.unwrap_or(DataType::String), &value)
                    .map(|meta| {
                        let live = self.ctx.is_live(&meta);
                        if !live && meta.expire_ms != 0 {
                            self.ctx.met_expired_now(&min, &meta);
                        }
                        live.then_some(meta)
                    })
                    .map_err(|_| ())
            } else {
                self.ctx.view(&min).map(|view| view.live).map_err(|_| ())
            };
            match decoded {
                Ok(Some(meta)) => return Ok(Some((min, Some(meta)))),
                Ok(None) => {}
                Err(()) => return Ok(Some((min, None))),
            }
        }
    }
}
