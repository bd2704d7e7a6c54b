//! `check` on a damaged store: every fault found, each once, reported in
//! its order (metadata faults, keys in several types, counts that
//! disagree), with the live keys counted once however many types they
//! hold.

use std::sync::Arc;

use redcodec_codec::{Codec, DataType, SubKind};
use redcodec_engine::check::{check, Finding};
use redcodec_engine::internals::keyspace::Ctx;
use redcodec_engine::store::Batch;
use redcodec_engine::{Engine, EngineOptions, ManualClock, OpenMode};
use redcodec_formats::{Format, FormatOptions};

const START_MS: u64 = 1_700_000_000_000;

#[test]
fn check_finds_every_fault_of_a_damaged_blackwidow_store_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(ManualClock::at_ms(START_MS));
    let codec = Format::Blackwidow
        .codec(&FormatOptions::default())
        .expect("codec");
    let options = EngineOptions {
        mode: OpenMode::CreateIfMissing,
        ..EngineOptions::with_clock(clock)
    };
    let engine = Engine::open(codec, dir.path(), options).expect("engine");
    for line in [
        "HSET h f1 v1 f2 v2 f3 v3",
        "SADD s a b",
        "SET multi x",
        "ZADD z 1 m",
        "RPUSH l a b",
    ] {
        let words: Vec<&str> = line.split(' ').collect();
        assert!(!engine.execute(&words).is_error(), "{line}");
    }
    let codec = engine.codec();
    let store = engine.store();
    let mut damage = Batch::default();
    // `multi` becomes a hash as well (h's metadata: three fields, none of
    // them stored under `multi`).
    let h = codec.meta_record(b"h", DataType::Hash).expect("record");
    let h_meta = store.get(h.place, &h.key).expect("read").expect("stored");
    let multi = codec.meta_record(b"multi", DataType::Hash).expect("record");
    damage.put(multi.place, multi.key, h_meta);
    // One of `s`'s two members goes.
    let s_meta = Ctx::new(&engine).live(b"s").expect("read").expect("live");
    let range = codec.sub_range(SubKind::SetMember.of(b"s", &s_meta));
    let mut members = store.scan(&range, None, false);
    let (member, _) = members.next().expect("scan").expect("a member");
    drop(members);
    damage.delete(range.place, member);
    // A string whose metadata does not decode.
    let bad = codec.meta_record(b"bad", DataType::String).expect("record");
    damage.put(bad.place, bad.key.clone(), Vec::new());
    store.write(damage).expect("write");

    let report = check(&engine).expect("check");
    assert_eq!(report.keys, 5, "{report:?}");
    assert_eq!(report.meta_records, 7, "{report:?}");
    let strings = store.layout().instances[bad.place.instance].dir;
    let families: Vec<String> = report
        .findings
        .iter()
        .filter_map(|f| match f {
            Finding::Undecodable { family, key, .. } if *key == bad.key => Some(family.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(families.len(), 1, "{report:?}");
    assert!(families[0].starts_with(strings), "{families:?}");
    assert_eq!(
        report.findings[1..],
        [
            Finding::SeveralTypes {
                key: b"multi".to_vec(),
                types: vec![DataType::String, DataType::Hash],
            },
            Finding::CountMismatch {
                key: b"multi".to_vec(),
                data_type: DataType::Hash,
                stored: 3,
                found: 0,
            },
            Finding::CountMismatch {
                key: b"s".to_vec(),
                data_type: DataType::Set,
                stored: 2,
                found: 1,
            },
        ],
        "{report:?}"
    );
    assert!(matches!(report.findings[0], Finding::Undecodable { .. }));
}
