//! The worked examples of `formats-spec/nemo.md` (part C of the Pika
//! reference), byte for byte, and round trips of every record kind through
//! the public [`Codec`] interface. The clock is `T = 1700000000` s
//! (`00 f1 53 65` little-endian).

use redcodec_codec::{
    Codec, DataType, EncodeError, GcDecision, ListBounds, Meta, Place, SubId, SubIdRef, SubKind,
    SubValue,
};
use redcodec_nemo::{gc, layout, NemoCodec};
use redcodec_testkit::{
    assert_element, assert_element_bytes, assert_gc_meta_until, assert_meta_bytes,
    assert_meta_record, edge_elements, field_f_v, filled_metas, member_m_1_5, unhex,
};

const T: u64 = 1_700_000_000;
const NOW_US: u64 = T * 1_000_000;
const NOW_MS: u64 = T * 1000;

fn codec() -> NemoCodec {
    NemoCodec::default()
}

fn instance_dir(c: &NemoCodec, place: Place) -> &'static str {
    assert_eq!(c.layout().cf(place).name, "default");
    c.layout().instances[place.instance].dir
}

#[test]
fn set_foo_bar() {
    let c = codec();
    let rec = assert_meta_record(&c, b"foo", DataType::String, &unhex("66 6f 6f"));
    assert_eq!(instance_dir(&c, rec.place), "kv");
    let meta = Meta::string(b"bar".to_vec(), 0);
    let value = unhex("62 61 72 00000000 00000000");
    assert_meta_bytes(&c, DataType::String, &meta, &value);
    // String keys have no length limit, and may be empty.
    assert!(c.meta_record(&[b'k'; 1000], DataType::String).is_ok());
    assert_eq!(c.meta_record(b"", DataType::String).unwrap().key, b"");
}

#[test]
fn setex_foo_100_bar() {
    // nemo's Put(k, v, 100) at T stores T + 100 - 1, and keeps the key live
    // through that second: it decodes as its last millisecond.
    let c = codec();
    let meta = Meta::string(b"bar".to_vec(), (T + 99) * 1000 + 999);
    let value = unhex("62 61 72 00000000 63f15365");
    assert_meta_bytes(&c, DataType::String, &meta, &value);
    // The kv compaction rule: live through second T+99, dropped after.
    let key = c.meta_record(b"foo", DataType::String).unwrap();
    assert_gc_meta_until(&c, &key, &value, (T + 99) * 1000 + 999, (T + 100) * 1000);
}

#[test]
fn hset_h_f_v() {
    let c = codec();
    let version = c.next_version(NOW_US, 0, None);
    assert_eq!(version, T);
    let mut meta = c.new_meta(DataType::Hash, version);
    meta.size = 1;

    assert_eq!(
        instance_dir(&c, c.sub_place(SubKind::HashField, b"k")),
        "hash"
    );
    // Written, read back, and in the range of the key's fields.
    let element = field_f_v();
    let field = unhex("68 01 68 3d 66");
    let value = unhex("76 00f15365 00000000");
    let range = assert_element_bytes(&c, b"h", &meta, &element, &field, &value).range;

    let rec = assert_meta_record(&c, b"h", DataType::Hash, &unhex("48 68"));
    assert_eq!(rec.place, c.sub_place(SubKind::HashField, b"k"));
    let meta_value = unhex("0100000000000000 00f15365 00000000");
    assert_meta_bytes(&c, DataType::Hash, &meta, &meta_value);

    // The separator "h" already exists.
    let seps = c.bootstrap_records();
    let sep = redcodec_codec::Record {
        place: rec.place,
        key: unhex("68"),
    };
    assert!(seps.contains(&(sep, unhex("00000000 00000000"))));
    assert_eq!(c.decode_meta_key(rec.place, b"h"), Ok(None));
    assert_eq!(c.decode_meta_key(rec.place, &field), Ok(None));

    assert_eq!(range.lower, unhex("68 01 68 3d"));
    assert_eq!(range.upper, unhex("68 01 68 3e"));
    assert!(range.lower <= field && field < range.upper);
    assert!(c.sub_is_current(SubKind::HashField.of(b"h", &meta), &value));

    // Compaction: the field's owner is the metadata record.
    let owner = c.gc_sub_owner(range.place, &field, &value).unwrap();
    assert_eq!(owner.version, T);
    assert_eq!(owner.meta, rec);
    assert_eq!(
        c.gc_sub(&owner, Some(&meta_value), NOW_MS),
        GcDecision::Keep
    );
    assert_eq!(c.gc_sub(&owner, None, NOW_MS), GcDecision::Drop);
    assert_eq!(
        c.gc_meta(rec.place, &rec.key, &meta_value, NOW_MS),
        GcDecision::Keep
    );
    assert_eq!(
        c.gc_meta(rec.place, b"h", &seps[0].1, NOW_MS),
        GcDecision::Keep
    );
    match c.gc_record(range.place, &field, &value, NOW_MS) {
        gc::Verdict::Element(o) => {
            assert_eq!(o.meta, rec);
            assert_eq!(o.version, T);
        }
        gc::Verdict::Decided(other) => panic!("element expected, got {other:?}"),
    }
}

#[test]
fn lpush_l_a() {
    let c = codec();
    let mut meta = c.new_meta(DataType::List, T);
    assert_eq!(
        meta.list,
        ListBounds::Linked {
            left: 0,
            right: 0,
            next_seq: 1
        }
    );
    // The first push takes seq 1 and links nothing.
    meta.size = 1;
    meta.list = ListBounds::Linked {
        left: 1,
        right: 1,
        next_seq: 2,
    };
    let rec = assert_meta_record(&c, b"l", DataType::List, &unhex("4c 6c"));
    assert_eq!(instance_dir(&c, rec.place), "list");
    let meta_value = unhex(
        "0100000000000000 0100000000000000 0100000000000000 0200000000000000
         00f15365 00000000",
    );
    assert_meta_bytes(&c, DataType::List, &meta, &meta_value);

    assert_eq!(c.sub_place(SubKind::ListItem, b"k"), rec.place);
    let item = (
        SubKind::ListItem,
        SubId::Seq(1),
        SubValue::Node {
            prev: 0,
            next: 0,
            value: b"a".to_vec(),
        },
    );
    let node = unhex("6c 01 6c 0100000000000000");
    let value = unhex("0000000000000000 0000000000000000 61 00f15365 00000000");
    let range = assert_element_bytes(&c, b"l", &meta, &item, &node, &value).range;
    for seq in [1, 2, 255, 256, i64::MAX, -1] {
        let k = c.sub_key(SubKind::ListItem.of(b"l", &meta), SubIdRef::Seq(seq));
        assert!(range.lower <= k && k < range.upper, "{seq}");
    }
}

#[test]
fn score_keys() {
    let c = codec();
    let mut meta = c.new_meta(DataType::ZSet, T);
    meta.size = 1;
    for (score, bytes) in [
        (1.5, "0de0b6b3a76649f0"),
        (-1.5, "0de0b6b3a761b610"),
        (0.0, "0de0b6b3a7640000"),
    ] {
        let id = SubId::Scored {
            score,
            member: b"m".to_vec(),
        };
        let key = c.sub_key(SubKind::ZSetScore.of(b"z", &meta), id.view());
        assert_eq!(key, unhex(&format!("79 01 7a {bytes} 6d")));
        assert_eq!(
            c.decode_sub_key(SubKind::ZSetScore.of(b"z", &meta), &key),
            Ok(id)
        );
        let value = c.encode_sub_value(SubKind::ZSetScore.of(b"z", &meta), SubValue::Empty.view());
        assert_eq!(value, unhex("00f15365 00000000"));
    }
}

#[test]
fn zadd_z_1_5_m() {
    let c = codec();
    let mut meta = c.new_meta(DataType::ZSet, T);
    meta.size = 1;
    let rec = assert_meta_record(&c, b"z", DataType::ZSet, &unhex("5a 7a"));
    assert_eq!(instance_dir(&c, rec.place), "zset");
    let meta_value = unhex("0100000000000000 00f15365 00000000");
    assert_meta_bytes(&c, DataType::ZSet, &meta, &meta_value);
    let [member, _] = member_m_1_5();
    let value = unhex("000000000000f83f 00f15365 00000000");
    assert_element_bytes(&c, b"z", &meta, &member, &unhex("7a 01 7a 6d"), &value);
    // The member record keeps the exact double; the index rounds it.
    let exact = 0.123456789;
    let value = c.encode_sub_value(
        SubKind::ZSetMember.of(b"z", &meta),
        SubValue::Score(exact).view(),
    );
    assert_eq!(
        c.decode_sub_value(SubKind::ZSetMember.of(b"z", &meta), &value),
        Ok(SubValue::Score(exact))
    );
    let key = c.sub_key(
        SubKind::ZSetScore.of(b"z", &meta),
        SubIdRef::Scored {
            score: exact,
            member: b"m",
        },
    );
    assert_eq!(
        c.decode_sub_key(SubKind::ZSetScore.of(b"z", &meta), &key),
        Ok(SubId::Scored {
            score: 0.12346,
            member: b"m".to_vec()
        })
    );
    // A seek key with an empty member sorts before every member of its score.
    let seek = c.sub_key(
        SubKind::ZSetScore.of(b"z", &meta),
        SubIdRef::Scored {
            score: exact,
            member: &[],
        },
    );
    assert!(seek < key);
    // The separators "y" and "z" sort before every record of the zset instance.
    for sep in [b"y", b"z"] {
        assert!(c
            .bootstrap_records()
            .iter()
            .any(|(r, _)| r.place == rec.place && r.key == sep));
    }
}

#[test]
fn del_then_recreate_hides_old_elements() {
    let c = codec();
    let mut old = c.new_meta(DataType::Set, T - 50);
    old.size = 1;
    let member = SubId::Name(b"m".to_vec());
    let old_value = c.encode_sub_value(SubKind::SetMember.of(b"s", &old), SubValue::Empty.view());
    // DEL at T: PutWithKeyVersion gives now.
    let del = c.new_meta(DataType::Set, c.next_version(NOW_US, 0, Some(old.version)));
    assert_eq!(del.version, T);
    let del_value = c.encode_meta(&del).unwrap();
    assert_eq!(del_value, unhex("0000000000000000 00f15365 00000000"));
    // The old member is still in the key's range but no longer current.
    let key = c.sub_key(SubKind::SetMember.of(b"s", &del), member.view());
    let range = c.sub_range(SubKind::SetMember.of(b"s", &del));
    assert!(range.lower <= key && key < range.upper);
    assert!(!c.sub_is_current(SubKind::SetMember.of(b"s", &del), &old_value));
    // A second DEL in the same second: old + 1.
    assert_eq!(c.next_version(NOW_US, 0, Some(T)), T + 1);
    // Compaction: the empty meta stays while its version is now, then goes.
    let rec = c.meta_record(b"s", DataType::Set).unwrap();
    assert_gc_meta_until(&c, &rec, &del_value, NOW_MS, NOW_MS + 1000);
    // The old member: dropped for its version, read from its value; the
    // trait path and gc_record agree.
    let gc::Verdict::Element(owner) = c.gc_record(range.place, &key, &old_value, NOW_MS) else {
        panic!("element expected");
    };
    assert_eq!(c.gc_sub(&owner, Some(&del_value), NOW_MS), GcDecision::Drop);
    let same = c.gc_sub_owner(range.place, &key, &old_value).unwrap();
    assert_eq!(same, owner);
    assert_eq!(same.version, T - 50);
    assert_eq!(c.gc_sub(&same, None, NOW_MS), GcDecision::Drop);
    // A member written under the new version is kept.
    let new_value = c.encode_sub_value(SubKind::SetMember.of(b"s", &del), SubValue::Empty.view());
    let current = c.gc_sub_owner(range.place, &key, &new_value).unwrap();
    assert_eq!(
        c.gc_sub(&current, Some(&del_value), NOW_MS),
        GcDecision::Keep
    );
    // Metadata and separators have no owner: gc_meta judges them.
    assert_eq!(c.gc_sub_owner(rec.place, &rec.key, &del_value), None);
    assert_eq!(c.gc_sub_owner(rec.place, b"s", &[0; 8]), None);
}

#[test]
fn expiry_is_stamped_on_elements() {
    let c = codec();
    let mut meta = c.new_meta(DataType::Hash, T);
    meta.size = 1;
    meta.expire_ms = (T + 9) * 1000;
    let value = c.encode_sub_value(
        SubKind::HashField.of(b"h", &meta),
        SubValue::Bytes(Vec::new()).view(),
    );
    assert_eq!(value, unhex("00f15365 09f15365"));
    let meta_value = c.encode_meta(&meta).unwrap();
    let owner = c
        .gc_sub_owner(layout::HASH, &unhex("68 01 68 3d 66"), &value)
        .unwrap();
    assert_eq!(
        c.gc_sub(&owner, Some(&meta_value), (T + 9) * 1000 + 999),
        GcDecision::Keep
    );
    assert_eq!(
        c.gc_sub(&owner, Some(&meta_value), (T + 10) * 1000),
        GcDecision::Drop
    );
    assert!(c
        .encode_meta(&Meta {
            expire_ms: (i32::MAX as u64 + 1) * 1000,
            ..meta
        })
        .is_err());
}

#[test]
fn collection_key_limit() {
    let c = codec();
    for t in [
        DataType::Hash,
        DataType::List,
        DataType::Set,
        DataType::ZSet,
    ] {
        let rec = c.meta_record(&[b'k'; 254], t).unwrap();
        assert_eq!(rec.key.len(), 255);
        assert_eq!(
            c.meta_record(&[b'k'; 255], t),
            Err(EncodeError::KeyTooLong {
                format: "nemo",
                type_name: t.redis_name(),
                len: 255,
                max: 254
            })
        );
        assert!(c.meta_record(b"", t).is_err());
    }
    let meta = c.new_meta(DataType::Set, 1);
    let key = c.sub_key(
        SubKind::SetMember.of(&[b'k'; 254], &meta),
        SubIdRef::Name(b"m"),
    );
    assert_eq!(key[1], 254);
}

#[test]
fn round_trips_of_every_record_kind() {
    let c = codec();
    let list = ListBounds::Linked {
        left: 7,
        right: -2,
        next_seq: i64::MAX,
    };
    for mut meta in filled_metas(&c, u64::from(u32::MAX), 1_700_000_123_999, &list) {
        let data_type = meta.data_type;
        if data_type == DataType::String {
            meta.version = 0;
        }
        let raw = c.encode_meta(&meta).unwrap();
        assert_eq!(
            c.decode_meta(data_type, &raw).unwrap(),
            meta,
            "{data_type:?}"
        );
    }
    let key: &[u8] = b"key\0\xff=";
    let meta = c.new_meta(DataType::ZSet, 42);
    // Scores are stored to 5 decimals; `=` separates key and field.
    let mut elements = edge_elements(
        -12.25,
        (
            SubId::Seq(i64::MIN),
            SubValue::Node {
                prev: -1,
                next: i64::MAX,
                value: Vec::new(),
            },
        ),
    );
    elements.push((
        SubKind::HashField,
        SubId::Name(b"f=\0".to_vec()),
        SubValue::Bytes(b"v\xff".to_vec()),
    ));
    for element in &elements {
        let kind = element.0;
        let written = assert_element(&c, key, &meta, element);
        assert!(c.sub_is_current(kind.of(key, &meta), &written.value));
        // Another key is rejected.
        let owner = c
            .gc_sub_owner(written.range.place, &written.key, &written.value)
            .unwrap();
        assert_eq!(owner.meta, c.meta_record(key, kind.owner_type()).unwrap());
    }
}

#[test]
fn keys_of_equal_length_do_not_mix() {
    let c = codec();
    let meta = c.new_meta(DataType::Hash, 1);
    let a = c.sub_range(SubKind::HashField.of(b"ab", &meta));
    let longer = c.sub_key(SubKind::HashField.of(b"ab=", &meta), SubIdRef::Name(b"x"));
    let other = c.sub_key(
        SubKind::HashField.of(b"ac", &meta),
        SubIdRef::Name(&Vec::new()),
    );
    for k in [longer, other] {
        assert!(!(a.lower <= k && k < a.upper));
    }
}
