//! The worked examples of `formats-spec/kvrocks.md`, byte for byte, and round
//! trips of every record kind through the public [`Codec`] interface.

use redcodec_codec::{
    Codec, DataType, GcDecision, ListBounds, Meta, SubId, SubIdRef, SubKind, SubValue,
};
use redcodec_kvrocks::{KvrocksCodec, KvrocksOptions};
use redcodec_testkit::{
    assert_element, assert_element_bytes, assert_gc_of_set_meta, assert_meta_bytes,
    assert_meta_record, edge_elements, field_f_v, filled_metas, member_m_1_5, set_member_owner,
    unhex, SetMetas,
};

/// `(1700000000000000 µs << 11) + 0`.
const V: u64 = 0x3051_20C0_F200_0000;

fn standalone() -> KvrocksCodec {
    KvrocksCodec::default()
}

fn cluster() -> KvrocksCodec {
    KvrocksCodec::new(KvrocksOptions {
        cluster: true,
        ..KvrocksOptions::default()
    })
    .unwrap()
}

const NS: &str = "0b 5f5f6e616d657370616365";

#[test]
fn version_at_the_reference_clock() {
    let c = standalone();
    assert_eq!(c.next_version(1_700_000_000_000_000, 0, None), V);
    assert_eq!(c.next_version(1_700_000_000_000_000, 2048, Some(1)), V);
}

#[test]
fn set_foo_bar() {
    let c = standalone();
    let rec = assert_meta_record(
        &c,
        b"foo",
        DataType::String,
        &unhex(&format!("{NS} 666f6f")),
    );
    assert_eq!(rec.place, redcodec_codec::Place::new(0, 1));
    assert_eq!(c.layout().cf(rec.place).name, "metadata");
    let meta = Meta::string(b"bar".to_vec(), 0);
    assert_meta_bytes(
        &c,
        DataType::Hash,
        &meta,
        &unhex("81 0000000000000000 626172"),
    );
}

/// Decodes the legacy (variant 1) metadata `hex` of `data_type`, which
/// encodes back to the same bytes.
fn legacy_meta(c: &KvrocksCodec, data_type: DataType, hex: &str) -> Meta {
    let raw = unhex(hex);
    let meta = c.decode_meta(data_type, &raw).unwrap();
    assert_eq!(meta.data_type, data_type);
    assert_eq!(meta.variant, 1);
    assert_eq!(c.encode_meta(&meta).unwrap(), raw);
    meta
}

#[test]
fn legacy_set_foo_bar() {
    let meta = legacy_meta(&standalone(), DataType::String, "01 00000000 626172");
    assert_eq!(meta.value, b"bar");
}

#[test]
fn legacy_hash_metadata() {
    let c = standalone();
    // Hash, expires at 1700000000 s, version V, 1 field.
    let meta = legacy_meta(&c, DataType::Hash, "02 6553f100 305120c0f2000000 00000001");
    assert_eq!(meta.expire_ms, 1_700_000_000_000);
    assert_eq!(meta.version, V);
    assert_eq!(meta.size, 1);
    // Expiry is rounded to seconds on re-encoding.
    let mut later = meta;
    later.expire_ms = 1_700_000_000_999;
    assert_eq!(
        c.encode_meta(&later).unwrap(),
        unhex("02 6553f101 305120c0f2000000 00000001")
    );
}

#[test]
fn hset_h_f_v() {
    let c = standalone();
    let mut meta = c.new_meta(DataType::Hash, V);
    meta.size = 1;
    let rec = assert_meta_record(&c, b"h", DataType::Hash, &unhex(&format!("{NS} 68")));
    let meta_bytes = unhex("82 0000000000000000 305120c0f2000000 0000000000000001");
    assert_meta_bytes(&c, DataType::Hash, &meta, &meta_bytes);
    assert_eq!(
        c.sub_place(SubKind::HashField, b"k"),
        redcodec_codec::Place::new(0, 0)
    );
    let field = field_f_v();
    let key = unhex(&format!("{NS} 00000001 68 305120c0f2000000 66"));
    let range = assert_element_bytes(&c, b"h", &meta, &field, &key, b"v").range;
    assert_eq!(
        range.upper,
        unhex(&format!("{NS} 00000001 68 305120c0f2000001"))
    );

    // The subkey's owner is the metadata record, at version V.
    let owner = c.gc_sub_owner(range.place, &key, &[]).unwrap();
    assert_eq!(owner.meta, rec);
    assert_eq!(owner.version, V);
    assert_eq!(
        c.gc_sub(&owner, Some(&meta_bytes), 1_700_000_000_000),
        GcDecision::Keep
    );
    assert_eq!(c.gc_sub(&owner, None, 1_700_000_000_000), GcDecision::Drop);
    assert_eq!(
        c.gc_meta(rec.place, &rec.key, &meta_bytes, 1_700_000_000_000),
        GcDecision::Keep
    );
}

#[test]
fn cluster_mode_slots() {
    let c = cluster();
    let rec = c.meta_record(b"foo", DataType::String).unwrap();
    assert_eq!(rec.key, unhex(&format!("{NS} 2f96 666f6f")));
    assert_eq!(
        c.decode_meta_key(rec.place, &rec.key),
        Ok(Some(b"foo".to_vec()))
    );
    let mut meta = c.new_meta(DataType::Hash, V);
    meta.size = 1;
    assert_eq!(
        c.meta_record(b"h", DataType::Hash).unwrap().key,
        unhex(&format!("{NS} 2dae 68"))
    );
    let key = c.sub_key(SubKind::HashField.of(b"h", &meta), SubIdRef::Name(b"f"));
    assert_eq!(
        key,
        unhex(&format!("{NS} 2dae 00000001 68 305120c0f2000000 66"))
    );
    let owner = c
        .gc_sub_owner(c.sub_place(SubKind::HashField, b"k"), &key, &[])
        .unwrap();
    assert_eq!(owner.meta.key, unhex(&format!("{NS} 2dae 68")));
    // ZADD z 1.5 m: slot("z") = 8157 = 0x1fdd.
    let scored = SubId::Scored {
        score: 1.5,
        member: b"m".to_vec(),
    };
    assert_eq!(
        c.sub_key(SubKind::ZSetScore.of(b"z", &meta), scored.view()),
        unhex(&format!(
            "{NS} 1fdd 00000001 7a 305120c0f2000000 bff8000000000000 6d"
        ))
    );
    // A standalone codec does not read cluster keys as its own.
    assert!(standalone()
        .decode_meta_key(rec.place, &rec.key)
        .unwrap()
        .is_some_and(|k| k != b"foo"));
}

#[test]
fn zadd_z_1_5_m() {
    let c = standalone();
    let mut meta = c.new_meta(DataType::ZSet, V);
    meta.size = 1;
    let meta_bytes = unhex("85 0000000000000000 305120c0f2000000 0000000000000001");
    assert_meta_bytes(&c, DataType::ZSet, &meta, &meta_bytes);
    assert_eq!(
        c.layout().cf(c.sub_place(SubKind::ZSetScore, b"k")).name,
        "zset_score"
    );
    let [member, scored] = member_m_1_5();
    let score_key = unhex(&format!(
        "{NS} 00000001 7a 305120c0f2000000 bff8000000000000 6d"
    ));
    assert_element_bytes(&c, b"z", &meta, &scored, &score_key, &[]);

    assert_eq!(
        c.layout().cf(c.sub_place(SubKind::ZSetMember, b"k")).name,
        "default"
    );
    let member_key = unhex(&format!("{NS} 00000001 7a 305120c0f2000000 6d"));
    let value = unhex("bff8000000000000");
    assert_element_bytes(&c, b"z", &meta, &member, &member_key, &value);
    assert!(c
        .decode_sub_value(SubKind::ZSetMember.of(b"z", &meta), &value[..7])
        .is_err());
    assert!(c
        .decode_sub_value(
            SubKind::ZSetMember.of(b"z", &meta),
            &unhex("bff800000000000000")
        )
        .is_err());
}

#[test]
fn round_trips_of_every_record_kind() {
    let list = ListBounds::Array {
        head: (1 << 63) - 4,
        tail: (1 << 63) - 1,
    };
    for c in [standalone(), cluster()] {
        for variant in [0u8, 1] {
            for mut meta in filled_metas(&c, V + 3, 1_700_000_123_000, &list) {
                meta.variant = variant;
                let raw = c.encode_meta(&meta).unwrap();
                assert_eq!(c.decode_meta(DataType::String, &raw).unwrap(), meta);
            }
        }
        let key: &[u8] = b"{tag}key\0\xff";
        let meta = c.new_meta(DataType::ZSet, u64::MAX);
        let elements = edge_elements(
            f64::NEG_INFINITY,
            (SubId::Index(u64::MAX / 2), SubValue::Bytes(Vec::new())),
        );
        for element in &elements {
            let kind = element.0;
            let written = assert_element(&c, key, &meta, element);
            let raw_key = written.key;
            // Another version or key is rejected.
            let mut other = meta.clone();
            other.version = 1;
            assert!(c.decode_sub_key(kind.of(key, &other), &raw_key).is_err());
            let owner = c.gc_sub_owner(written.range.place, &raw_key, &[]).unwrap();
            assert_eq!(owner.meta, c.meta_record(key, DataType::ZSet).unwrap());
            assert_eq!(owner.version, u64::MAX);
        }
    }
}

#[test]
fn list_items_sort_by_index() {
    let c = standalone();
    let meta = c.new_meta(DataType::List, V);
    let ListBounds::Array { head, tail } = meta.list else {
        panic!("array list expected");
    };
    assert_eq!((head, tail), (0x7FFF_FFFF_FFFF_FFFF, 0x7FFF_FFFF_FFFF_FFFF));
    let at = |i| c.sub_key(SubKind::ListItem.of(b"l", &meta), SubIdRef::Index(i));
    assert!(at(head - 1) < at(head) && at(head) < at(tail + 1));
    assert!(c
        .decode_sub_key(
            SubKind::ListItem.of(b"l", &meta),
            &[at(head), vec![0]].concat()
        )
        .is_err());
}

#[test]
fn meta_keys_of_other_namespaces_are_skipped() {
    let c = standalone();
    let other = KvrocksCodec::new(KvrocksOptions {
        namespace: b"tenant".to_vec(),
        cluster: false,
    })
    .unwrap();
    let rec = other.meta_record(b"k", DataType::Set).unwrap();
    assert_eq!(rec.key, b"\x06tenantk");
    assert_eq!(c.decode_meta_key(rec.place, &rec.key), Ok(None));
    assert_eq!(
        other.decode_meta_key(rec.place, &rec.key),
        Ok(Some(b"k".to_vec()))
    );
    // Subkeys of any namespace find their owner.
    let meta = other.new_meta(DataType::Set, 5);
    let sub = other.sub_key(SubKind::SetMember.of(b"k", &meta), SubIdRef::Name(b"m"));
    assert_eq!(
        c.gc_sub_owner(c.sub_place(SubKind::SetMember, b"k"), &sub, &[])
            .unwrap()
            .meta,
        rec
    );
}

#[test]
fn gc_rules_through_the_codec() {
    let c = standalone();
    let now = 1_700_000_000_000u64;
    let SetMetas {
        rec,
        meta,
        live,
        expired,
    } = assert_gc_of_set_meta(&c, V, now - 1, now);
    assert_eq!(
        c.gc_meta(rec.place, &rec.key, b"\x84", now),
        GcDecision::Keep
    );
    // An empty string never expires by size.
    let string = c.encode_meta(&Meta::string(Vec::new(), 0)).unwrap();
    assert_eq!(
        c.gc_meta(rec.place, &rec.key, &string, now),
        GcDecision::Keep
    );

    let (sub, owner) = set_member_owner(&c, &meta);
    assert_eq!(c.gc_sub(&owner, Some(&live), now), GcDecision::Keep);
    assert_eq!(c.gc_sub(&owner, Some(&expired), now), GcDecision::Keep);
    assert_eq!(
        c.gc_sub(&owner, Some(&expired), now + 300_000),
        GcDecision::Drop
    );
    assert_eq!(c.gc_sub(&owner, Some(&string), now), GcDecision::Drop);
    let mut newer = c.new_meta(DataType::Set, V + 1);
    newer.size = 1;
    let newer = c.encode_meta(&newer).unwrap();
    assert_eq!(c.gc_sub(&owner, Some(&newer), now), GcDecision::Drop);
    assert_eq!(c.gc_sub(&owner, Some(b"\x84\0"), now), GcDecision::Keep);
    assert_eq!(c.gc_sub(&owner, None, now), GcDecision::Drop);
    assert_eq!(c.gc_sub_owner(rec.place, &sub, &[]), None);
}
