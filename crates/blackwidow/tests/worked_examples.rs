//! The worked examples of `formats-spec/blackwidow.md` (the reference's
//! part C, T = 1700000000), byte for byte, through the public [`Codec`]
//! interface; plus round trips of every record kind.

use std::cmp::Ordering::{Equal, Greater, Less};

use redcodec_blackwidow::comparator::{lists_data_key_compare, zsets_score_key_compare};
use redcodec_blackwidow::{layout, BlackwidowCodec};
use redcodec_codec::{
    Codec, DataType, GcDecision, ListBounds, Meta, Place, SubId, SubIdRef, SubKind, SubValue,
};
use redcodec_testkit::{
    assert_element, assert_element_bytes, assert_gc_meta_until, assert_gc_of_set_meta,
    assert_meta_bytes, assert_meta_record, edge_elements, field_f_v, filled_metas, member_m_1_5,
    place_names, set_member_owner, unhex, SetMetas,
};

/// 1700000000 s = 0x6553F100, LE `00 f1 53 65`.
const T: u64 = 1_700_000_000;
const T_US: u64 = T * 1_000_000;
const T_MS: u64 = T * 1_000;

fn codec() -> BlackwidowCodec {
    BlackwidowCodec::default()
}

/// The metadata of a new collection at T after one element was added.
fn one_element(c: &BlackwidowCodec, ty: DataType) -> Meta {
    let mut meta = c.new_meta(ty, c.next_version(T_US, 0, None));
    meta.size = 1;
    meta
}

#[test]
fn version_at_the_reference_clock() {
    let c = codec();
    assert_eq!(c.next_version(T_US, 0, None), T);
    assert_eq!(c.next_version(T_US, 12345, Some(T)), T + 1);
    assert_eq!(c.next_version(T_US + 5_000_000, 0, Some(T + 1)), T + 5);
}

#[test]
fn set_foo_bar() {
    let c = codec();
    let rec = assert_meta_record(&c, b"foo", DataType::String, &unhex("66 6f 6f"));
    assert_eq!(place_names(&c, rec.place), ("strings", "default"));
    let meta = Meta::string(b"bar".to_vec(), 0);
    assert_meta_bytes(&c, DataType::String, &meta, &unhex("62 61 72 00 00 00 00"));
}

#[test]
fn setex_foo_100_bar() {
    let c = codec();
    let meta = Meta::string(b"bar".to_vec(), (T + 100) * 1000);
    let value = assert_meta_bytes(&c, DataType::String, &meta, &unhex("62 61 72 64 f1 53 65"));
    let rec = c.meta_record(b"foo", DataType::String).unwrap();
    assert_gc_meta_until(&c, &rec, &value, (T + 100) * 1000, (T + 101) * 1000);
}

#[test]
fn hset_h_f_v() {
    let c = codec();
    let meta = one_element(&c, DataType::Hash);
    let rec = assert_meta_record(&c, b"h", DataType::Hash, &unhex("68"));
    assert_eq!(place_names(&c, rec.place), ("hashes", "default"));
    let meta_bytes = unhex("01 00 00 00 00 f1 53 65 00 00 00 00");
    assert_meta_bytes(&c, DataType::Hash, &meta, &meta_bytes);

    let place = c.sub_place(SubKind::HashField, b"k");
    assert_eq!(place_names(&c, place), ("hashes", "data_cf"));
    let field = field_f_v();
    let key = unhex("01 00 00 00 68 00 f1 53 65 66");
    let range = assert_element_bytes(&c, b"h", &meta, &field, &key, &unhex("76")).range;
    assert_eq!(range.lower, unhex("01 00 00 00 68 00 f1 53 65"));
    assert_eq!(range.upper, unhex("01 00 00 00 68 00 f1 53 66"));
    assert!(range.lower <= key && key < range.upper);

    // GC: the data key's owner is the meta record, at version T.
    let owner = c.gc_sub_owner(place, &key, &[]).unwrap();
    assert_eq!(owner.meta, rec);
    assert_eq!(owner.version, T);
    assert_eq!(c.gc_sub(&owner, Some(&meta_bytes), T_MS), GcDecision::Keep);
    assert_eq!(c.gc_sub(&owner, None, T_MS), GcDecision::Drop);
    assert_eq!(
        c.gc_meta(rec.place, &rec.key, &meta_bytes, T_MS),
        GcDecision::Keep
    );
}

#[test]
fn del_h_resets_the_meta() {
    // DEL in the same second: count 0, timestamp 0, version T + 1.
    let c = codec();
    let old = one_element(&c, DataType::Hash);
    let fresh = c.new_meta(DataType::Hash, c.next_version(T_US, 0, Some(old.version)));
    let bytes = c.encode_meta(&fresh).unwrap();
    assert_eq!(bytes, unhex("00 00 00 00 01 f1 53 65 00 00 00 00"));
    let rec = c.meta_record(b"h", DataType::Hash).unwrap();
    // The old field is garbage now; the reset meta stays while its version
    // is not older than the clock.
    let old_key = c.sub_key(SubKind::HashField.of(b"h", &old), SubIdRef::Name(b"f"));
    let owner = c.gc_sub_owner(rec.place, &old_key, &[]);
    assert!(owner.is_none(), "meta places hold no data keys");
    let owner = c
        .gc_sub_owner(c.sub_place(SubKind::HashField, b"k"), &old_key, &[])
        .unwrap();
    assert_eq!(c.gc_sub(&owner, Some(&bytes), T_MS), GcDecision::Drop);
    assert_gc_meta_until(&c, &rec, &bytes, T_MS, (T + 2) * 1000);
}

#[test]
fn zadd_z_1_5_m() {
    let c = codec();
    let meta = one_element(&c, DataType::ZSet);
    let rec = c.meta_record(b"z", DataType::ZSet).unwrap();
    assert_eq!(place_names(&c, rec.place), ("zsets", "default"));
    let meta_bytes = unhex("01 00 00 00 00 f1 53 65 00 00 00 00");
    assert_meta_bytes(&c, DataType::ZSet, &meta, &meta_bytes);

    assert_eq!(
        place_names(&c, c.sub_place(SubKind::ZSetMember, b"k")),
        ("zsets", "data_cf")
    );
    let [member, scored] = member_m_1_5();
    let member_key = unhex("01 00 00 00 7a 00 f1 53 65 6d");
    let member_value = unhex("00 00 00 00 00 00 f8 3f");
    assert_element_bytes(&c, b"z", &meta, &member, &member_key, &member_value);

    assert_eq!(
        place_names(&c, c.sub_place(SubKind::ZSetScore, b"k")),
        ("zsets", "score_cf")
    );
    let score_key = unhex("01 00 00 00 7a 00 f1 53 65 00 00 00 00 00 00 f8 3f 6d");
    assert_element_bytes(&c, b"z", &meta, &scored, &score_key, &[]);
    let range = c.sub_range(SubKind::ZSetScore.of(b"z", &meta));
    assert_eq!(
        range.lower,
        unhex("01 00 00 00 7a 00 f1 53 65 00 00 00 00 00 00 f0 ff")
    );
    assert_eq!(
        range.upper,
        unhex("01 00 00 00 7a 00 f1 53 66 00 00 00 00 00 00 f0 ff")
    );
    assert_eq!(zsets_score_key_compare(&range.lower, &score_key), Less);
    assert_eq!(zsets_score_key_compare(&score_key, &range.upper), Less);
}

#[test]
fn rpush_l_a() {
    let c = codec();
    let mut meta = c.new_meta(DataType::List, c.next_version(T_US, 0, None));
    let ListBounds::Array { head, tail } = meta.list else {
        panic!("array list expected");
    };
    assert_eq!((head, tail), (1 << 63, 1 << 63));
    // RPUSH writes at tail, then tail += 1.
    let item = SubId::Index(tail);
    meta.list = ListBounds::Array {
        head,
        tail: tail + 1,
    };
    meta.size = 1;
    let rec = c.meta_record(b"l", DataType::List).unwrap();
    assert_eq!(place_names(&c, rec.place), ("lists", "default"));
    let bytes = unhex(
        "01 00 00 00 00 00 00 00  00 f1 53 65  00 00 00 00
         ff ff ff ff ff ff ff 7f  01 00 00 00 00 00 00 80",
    );
    assert_meta_bytes(&c, DataType::List, &meta, &bytes);

    assert_eq!(
        place_names(&c, c.sub_place(SubKind::ListItem, b"k")),
        ("lists", "data_cf")
    );
    let item = (SubKind::ListItem, item, SubValue::Bytes(b"a".to_vec()));
    let key = unhex("01 00 00 00 6c 00 f1 53 65 00 00 00 00 00 00 00 80");
    assert_element_bytes(&c, b"l", &meta, &item, &key, &unhex("61"));
    let range = c.sub_range(SubKind::ListItem.of(b"l", &meta));
    assert_eq!(range.lower, unhex("01 00 00 00 6c 00 f1 53 65"));
    assert_eq!(range.upper, unhex("01 00 00 00 6c 01 f1 53 65"));
    assert_eq!(lists_data_key_compare(&range.lower, &key), Less);
    assert_eq!(lists_data_key_compare(&key, &range.upper), Less);
    let owner = c.gc_sub_owner(range.place, &key, &[]).unwrap();
    assert_eq!(owner.meta, rec);
    assert_eq!(c.gc_sub(&owner, Some(&bytes), T_MS), GcDecision::Keep);
}

#[test]
fn list_items_sort_by_index_around_2_pow_63() {
    let c = codec();
    let meta = c.new_meta(DataType::List, 0x6553_F1FF);
    let at = |i| c.sub_key(SubKind::ListItem.of(b"l", &meta), SubIdRef::Index(i));
    let order = [
        0,
        1,
        255,
        256,
        (1 << 63) - 1,
        1 << 63,
        (1 << 63) + 1,
        u64::MAX,
    ];
    for w in order.windows(2) {
        assert_eq!(lists_data_key_compare(&at(w[0]), &at(w[1])), Less);
    }
    let range = c.sub_range(SubKind::ListItem.of(b"l", &meta));
    for i in order {
        assert_ne!(lists_data_key_compare(&range.lower, &at(i)), Greater);
        assert_eq!(lists_data_key_compare(&at(i), &range.upper), Less);
    }
    // Seek keys for an index are the item keys themselves.
    assert_eq!(lists_data_key_compare(&at(5), &at(5)), Equal);
}

#[test]
fn score_seek_keys() {
    let c = codec();
    let meta = one_element(&c, DataType::ZSet);
    let key = |score: f64, member: &[u8]| {
        c.sub_key(
            SubKind::ZSetScore.of(b"z", &meta),
            SubIdRef::Scored { score, member },
        )
    };
    let seek = key(-1.5, b"");
    assert_eq!(zsets_score_key_compare(&seek, &key(-1.5, b"\0")), Less);
    assert_eq!(zsets_score_key_compare(&key(-2.0, &[0xFF; 5]), &seek), Less);
    assert_eq!(
        zsets_score_key_compare(&key(-1.5, b"a"), &key(-1.0, b"")),
        Less
    );
    assert_eq!(
        zsets_score_key_compare(&key(-1.0, b"z"), &key(1.0, b"a")),
        Less
    );
}

#[test]
fn round_trips_of_every_record_kind() {
    let c = codec();
    let list = ListBounds::Array {
        head: (1 << 63) - 4,
        tail: (1 << 63) - 1,
    };
    for mut meta in filled_metas(&c, 0xFFFF_FFFF, 1_700_000_123_000, &list) {
        let data_type = meta.data_type;
        let raw = c.encode_meta(&meta).unwrap();
        if data_type == DataType::String {
            meta.version = 0;
        }
        assert_eq!(c.decode_meta(data_type, &raw).unwrap(), meta);
        assert_eq!(
            c.meta_record(b"k", data_type).unwrap().place,
            layout::meta_place(data_type)
        );
    }
    let key: &[u8] = b"{tag}key\0\xff";
    let mut elements = edge_elements(
        f64::NEG_INFINITY,
        (SubId::Index(u64::MAX), SubValue::Bytes(Vec::new())),
    );
    elements.push((
        SubKind::ZSetScore,
        SubId::Scored {
            score: f64::MAX,
            member: vec![0xFF; 10],
        },
        SubValue::Empty,
    ));
    for version in [0x6553_F1FFu64, 0xFFFF_FFFF, 0x7FFF_FFFF, 0] {
        let meta = c.new_meta(DataType::ZSet, version);
        for element in &elements {
            let kind = element.0;
            let raw_key = assert_element(&c, key, &meta, element).key;
            // Another version or key is rejected.
            let mut other = meta.clone();
            other.version = version ^ 1;
            assert!(c.decode_sub_key(kind.of(key, &other), &raw_key).is_err());
            let place = c.sub_place(kind, key);
            let owner = c.gc_sub_owner(place, &raw_key, &[]).unwrap();
            assert_eq!(owner.meta.place, Place::new(place.instance, 0));
            assert_eq!(owner.meta.key, key);
            assert_eq!(owner.version, version);
        }
    }
}

#[test]
fn gc_rules_through_the_codec() {
    let c = codec();
    let SetMetas {
        rec,
        meta,
        live,
        expired,
    } = assert_gc_of_set_meta(&c, T - 10, T_MS - 1000, T_MS);
    // Within the same second, not yet expired (seconds resolution).
    assert_eq!(
        c.gc_meta(rec.place, &rec.key, &expired, T_MS - 1),
        GcDecision::Keep
    );
    assert_eq!(
        c.gc_meta(rec.place, &rec.key, b"\x01", T_MS),
        GcDecision::Keep
    );

    let (sub, owner) = set_member_owner(&c, &meta);
    assert_eq!(owner.meta, rec);
    assert_eq!(c.gc_sub(&owner, Some(&live), T_MS), GcDecision::Keep);
    // No grace period: expired metadata drops its data at once.
    assert_eq!(c.gc_sub(&owner, Some(&expired), T_MS), GcDecision::Drop);
    let newer = c.encode_meta(&c.new_meta(DataType::Set, T - 9)).unwrap();
    assert_eq!(c.gc_sub(&owner, Some(&newer), T_MS), GcDecision::Drop);
    let older = c.encode_meta(&c.new_meta(DataType::Set, T - 11)).unwrap();
    assert_eq!(c.gc_sub(&owner, Some(&older), T_MS), GcDecision::Keep);
    assert_eq!(c.gc_sub(&owner, None, T_MS), GcDecision::Drop);
    assert_eq!(c.gc_sub(&owner, Some(b"\x01"), T_MS), GcDecision::Keep);
    assert_eq!(c.gc_sub_owner(rec.place, &sub, &[]), None);
}
