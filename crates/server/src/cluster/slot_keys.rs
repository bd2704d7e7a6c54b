//! The keys of a slot: counted, listed, deleted. The engine is asked with
//! `SCAN` over the namespace Kvrocks' cluster works in (its default one)
//! and the keys are kept by their slot.

use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;
use redcodec_kvrocks::slot::slot;

use super::parse::SlotRange;

/// Keys in `range`, at most `limit` of them.
pub fn keys_in(engine: &Engine<AnyCodec>, range: SlotRange, limit: usize) -> Vec<Vec<u8>> {
    let mut found = Vec::new();
    let mut cursor = b"0".to_vec();
    loop {
        let reply = engine.execute(&[b"scan".as_slice(), &cursor, b"count", b"1000"]);
        let Reply::Array(mut parts) = reply else {
            return found;
        };
        let (Some(Reply::Array(keys)), Some(Reply::Bulk(next))) = (parts.pop(), parts.pop()) else {
            return found;
        };
        for key in keys {
            if let Reply::Bulk(key) = key {
                if range.contains(slot(&key)) {
                    found.push(key);
                    if found.len() >= limit {
                        return found;
                    }
                }
            }
        }
        if next == b"0" {
            return found;
        }
        cursor = next;
    }
}

/// Deletes every key in `range` (Kvrocks' `ClearKeysOfSlotRange`);
/// returns how many went.
pub fn clear(engine: &Engine<AnyCodec>, range: SlotRange) -> usize {
    let keys = keys_in(engine, range, usize::MAX);
    for chunk in keys.chunks(512) {
        let mut args: Vec<&[u8]> = vec![b"del"];
        args.extend(chunk.iter().map(Vec::as_slice));
        engine.execute(&args);
    }
    keys.len()
}
