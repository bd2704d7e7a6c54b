//! The keys of a slot: counted, listed, deleted.
//!
//! A cluster store keeps the slot of every key right after its namespace
//! (the layout `Namespaces::Prefix { slots: true }` names: Kvrocks'
//! `[ns_len][ns][slot u16 BE][key]`), so the metadata records of a slot
//! range are one contiguous range of the namespace's metadata range, read
//! as Kvrocks' `ClearKeysOfSlotRange` and `sendSnapshotByCmd` seek them.
//! A record is a key when the engine says it exists (not expired).

use redcodec_codec::{Codec, KeyRange};
use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use super::parse::{SlotRange, SLOTS};

/// The metadata ranges holding the keys of `slots`.
fn ranges(engine: &Engine<AnyCodec>, slots: SlotRange) -> Vec<KeyRange> {
    engine
        .codec()
        .meta_ranges()
        .into_iter()
        .map(|(ns, _)| {
            let at = |slot: u16| {
                let mut k = ns.lower.clone();
                k.extend_from_slice(&slot.to_be_bytes());
                k
            };
            KeyRange {
                place: ns.place,
                lower: at(slots.start),
                upper: if usize::from(slots.end) + 1 == SLOTS {
                    ns.upper.clone()
                } else {
                    at(slots.end + 1)
                },
            }
        })
        .collect()
}

/// Keys in `slots`, at most `limit` of them, in key order.
pub fn keys_in(engine: &Engine<AnyCodec>, slots: SlotRange, limit: usize) -> Vec<Vec<u8>> {
    let mut found = Vec::new();
    for range in ranges(engine, slots) {
        let mut it = engine.store().scan(&range, None, false);
        while let Ok(Some((raw, _))) = it.next() {
            let Ok(Some(key)) = engine.codec().decode_meta_key(range.place, &raw) else {
                continue;
            };
            if engine.execute(&[b"exists".as_slice(), &key]) == Reply::Integer(1) {
                found.push(key);
                if found.len() >= limit {
                    return found;
                }
            }
        }
    }
    found
}

/// Deletes every key in `slots` (Kvrocks' `ClearKeysOfSlotRange`);
/// returns how many went.
pub fn clear(engine: &Engine<AnyCodec>, slots: SlotRange) -> usize {
    let keys = keys_in(engine, slots, usize::MAX);
    for chunk in keys.chunks(512) {
        let mut args: Vec<&[u8]> = vec![b"del"];
        args.extend(chunk.iter().map(Vec::as_slice));
        engine.execute(&args);
    }
    keys.len()
}
