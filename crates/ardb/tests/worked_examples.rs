//! The worked examples of `formats-spec/ardb.md` (the reference's §9, whose
//! hex was produced by Ardb's own code), byte for byte, and round trips of
//! every record kind through the public [`Codec`] interface.

use std::cmp::Ordering;

use redcodec_ardb::comparator::compare_keys;
use redcodec_ardb::meta::{VARIANT_FLOAT_VALUE, VARIANT_SIZE_UNKNOWN};
use redcodec_ardb::{ArdbCodec, ArdbOptions};
use redcodec_codec::{
    Codec, DataType, DecodeError, GcDecision, ListBounds, Meta, Place, SparseIndex, SubId,
    SubIdRef, SubKind, SubValue,
};
use redcodec_testkit::{
    assert_element, assert_element_bytes, assert_meta_bytes, assert_meta_record, edge_elements,
    field_f_v, filled_metas, in_range, member_m_1_5, unhex,
};

const NS: Place = Place::new(0, 1);

fn codec() -> ArdbCodec {
    ArdbCodec::default()
}

#[test]
fn layout_is_one_instance_with_the_namespace_family() {
    let c = codec();
    let l = c.layout();
    assert_eq!(l.instances.len(), 1);
    assert_eq!(l.instances[0].dir, "rocksdb");
    let names: Vec<_> = l.instances[0]
        .column_families
        .iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["default", "0"]);
    assert!(l.instances[0]
        .column_families
        .iter()
        .all(|f| f.comparator.is_some_and(|c| c.name == "ardb.comparator")));
    let other = ArdbCodec::new(ArdbOptions {
        namespace: b"tenant".to_vec(),
    })
    .unwrap();
    assert_eq!(other.layout().cf(NS).name, "tenant");
    // The bytes do not depend on the namespace.
    assert_eq!(
        other.meta_record(b"foo", DataType::String).unwrap(),
        codec().meta_record(b"foo", DataType::String).unwrap()
    );
}

#[test]
fn set_foo_bar() {
    let c = codec();
    let rec = assert_meta_record(&c, b"foo", DataType::String, &unhex("03 66 6f 6f 01 00"));
    assert_eq!(rec.place, NS);
    let meta = Meta::string(b"bar".to_vec(), 0);
    assert_meta_bytes(
        &c,
        DataType::Hash,
        &meta,
        &unhex("02 00 00 01 04 03 62 61 72"),
    );
}

#[test]
fn set_n_123_is_int_encoded() {
    let c = codec();
    let meta = Meta::string(b"123".to_vec(), 0);
    assert_meta_bytes(&c, DataType::String, &meta, &unhex("02 00 00 01 01 f6 01"));
    // Not canonical: stays a string.
    let meta = Meta::string(b"0123".to_vec(), 0);
    assert_eq!(
        c.encode_meta(&meta).unwrap(),
        unhex("02 00 00 01 04 04 30 31 32 33")
    );
}

#[test]
fn set_foo_bar_with_ttl() {
    let c = codec();
    let meta = Meta::string(b"bar".to_vec(), 1_700_000_000_000);
    let value = unhex("02 00 80 a0 ab fe f9 62 01 04 03 62 61 72");
    assert_meta_bytes(&c, DataType::String, &meta, &value);
}

#[test]
fn hset_h_f_v() {
    let c = codec();
    let rec = assert_meta_record(&c, b"h", DataType::Hash, &unhex("01 68 01 00"));
    let mut meta = c.new_meta(DataType::Hash, c.next_version(0, 0, None));
    meta.size = 1;
    // Compat mode, new hash: size 1 (zigzag 02).
    assert_meta_bytes(&c, DataType::Hash, &meta, &unhex("03 00 00 02 00"));
    // Non-compat mode (and any later compat HSET): size -1.
    let unknown = c
        .decode_meta(DataType::Hash, &unhex("03 00 00 01 00"))
        .unwrap();
    assert_eq!((unknown.size, unknown.variant), (0, VARIANT_SIZE_UNKNOWN));
    assert_eq!(c.encode_meta(&unknown).unwrap(), unhex("03 00 00 01 00"));

    assert_eq!(c.sub_place(SubKind::HashField, b"k"), NS);
    let field = field_f_v();
    let key = unhex("01 68 04 01 04 01 66");
    let value = unhex("04 01 04 01 76");
    let range = assert_element_bytes(&c, b"h", &meta, &field, &key, &value).range;
    assert_eq!(range.lower, unhex("01 68 04 01 00"));
    assert_eq!(range.upper, unhex("01 68 05 00"));
    assert!(in_range(&c, &range, &key));
    assert!(!in_range(&c, &range, &rec.key));
    assert_eq!(c.decode_meta_key(NS, &key), Ok(None));

    // DEL of a big hash: one range delete over [META h, END h).
    let all = c.key_range(b"h").expect("ardb deletes by range");
    assert_eq!(all.lower, unhex("01 68 01 00"));
    assert_eq!(all.upper, unhex("01 68 1f 00"));
    assert!(in_range(&c, &all, &rec.key) && in_range(&c, &all, &key));
}

#[test]
fn rpush_l_a() {
    let c = codec();
    let mut meta = c.new_meta(DataType::List, 0);
    assert_eq!(
        meta.list,
        ListBounds::Sparse {
            min: SparseIndex::Int(0),
            max: SparseIndex::Int(0),
            sequential: true
        }
    );
    meta.size = 1;
    let meta_bytes = unhex("05 00 00 02 01 02 01 00 01 00");
    assert_meta_bytes(&c, DataType::List, &meta, &meta_bytes);
    let item = (
        SubKind::ListItem,
        SubId::Sparse(SparseIndex::Int(0)),
        SubValue::Bytes(b"a".to_vec()),
    );
    let key = unhex("01 6c 06 01 01 00");
    assert_element_bytes(&c, b"l", &meta, &item, &key, &unhex("06 01 04 01 61"));
}

#[test]
fn zadd_z_1_5_m() {
    let c = codec();
    let mut meta = c.new_meta(DataType::ZSet, 0);
    // ZADD widens the min/max members, then counts the member.
    c.note_member(&mut meta, b"m");
    meta.size = 1;
    // `02 <min member> <max member>`, members as strings.
    let ardb_meta = unhex("09 00 00 02 02 04 01 6d 04 01 6d");
    assert_meta_bytes(&c, DataType::ZSet, &meta, &ardb_meta);

    let [member, scored] = member_m_1_5();
    let score_key = unhex("01 7a 0b 01 04 01 6d");
    let score_value = unhex("0b 01 02 80 80 80 80 80 80 80 f8 7f");
    assert_element_bytes(&c, b"z", &meta, &member, &score_key, &score_value);

    let sort_key = unhex("01 7a 0a 02 02 80 80 80 80 80 80 80 f8 7f 04 01 6d");
    assert_element_bytes(&c, b"z", &meta, &scored, &sort_key, &unhex("0a 00"));
    // The score index range starts at Ardb's pre-sized seek key.
    let range = c.sub_range(SubKind::ZSetScore.of(b"z", &meta));
    assert_eq!(range.lower, unhex("01 7a 0a 02 00 00"));
    assert_eq!(range.upper, unhex("01 7a 0b 00"));
    assert!(in_range(&c, &range, &sort_key));
    assert!(!in_range(&c, &range, &score_key));
    // A seek key with an empty member sorts at or before every member of
    // its score and after every lower score.
    let seek = c.sub_key(
        SubKind::ZSetScore.of(b"z", &meta),
        SubIdRef::Scored {
            score: 1.5,
            member: &[],
        },
    );
    assert_eq!(compare_keys(&seek, &sort_key), Ordering::Less);
    let lower_score = c.sub_key(
        SubKind::ZSetScore.of(b"z", &meta),
        SubIdRef::Scored {
            score: 1.0,
            member: b"zzz",
        },
    );
    assert_eq!(compare_keys(&lower_score, &seek), Ordering::Less);
}

#[test]
fn sadd_s_5() {
    let c = codec();
    let meta = c.new_meta(DataType::Set, 0);
    let key = c.sub_key(SubKind::SetMember.of(b"s", &meta), SubIdRef::Name(b"5"));
    assert_eq!(key, unhex("01 73 08 01 01 0a"));
    assert_eq!(
        c.encode_sub_value(SubKind::SetMember.of(b"s", &meta), SubValue::Empty.view()),
        unhex("08 00")
    );
    assert_eq!(
        c.decode_sub_key(SubKind::SetMember.of(b"s", &meta), &key),
        Ok(SubId::Name(b"5".to_vec()))
    );
    // Compat-mode set meta (size 1, min = max = 5, int-encoded).
    let ardb_meta = unhex("07 00 00 02 02 01 0a 01 0a");
    let decoded = c.decode_meta(DataType::Set, &ardb_meta).unwrap();
    assert_eq!((decoded.data_type, decoded.size), (DataType::Set, 1));
    assert_eq!(c.encode_meta(&decoded).unwrap(), ardb_meta);
    let mut written = c.new_meta(DataType::Set, 0);
    c.note_member(&mut written, b"5");
    written.size = 1;
    assert_eq!(written, decoded);
    // Non-compat SADD: size -1, no min/max.
    let non_compat = c
        .decode_meta(DataType::Set, &unhex("07 00 00 01 00"))
        .unwrap();
    assert_eq!(non_compat.variant, VARIANT_SIZE_UNKNOWN);
}

#[test]
fn records_ardb_writes_but_redcodec_does_not_read() {
    let c = codec();
    // APPEND merge operand ("x", op 100).
    assert_eq!(
        c.decode_meta(DataType::String, &unhex("1e 64 00 01 04 01 78")),
        Err(DecodeError::UnknownType {
            record: "ardb metadata value",
            tag: 0x1e
        })
    );
    // Stream metadata.
    assert!(matches!(
        c.decode_meta(DataType::String, &unhex("0c 00 00 00 00")),
        Err(DecodeError::UnknownType { tag: 12, .. })
    ));
    // A TTL_SORT key (other engines' __TTL_DB__) is ordered, but is not a key.
    let ttl_key = unhex("00 1d 03 01 80 a0 ab fe f9 62 04 01 30 04 01 6b");
    assert!(redcodec_ardb::comparator::is_well_formed(&ttl_key));
    assert_eq!(c.decode_meta_key(NS, &ttl_key), Ok(None));
    assert!(c.decode_meta_key(NS, &unhex("05 61")).is_err());
    assert_eq!(
        c.decode_meta_key(Place::new(0, 0), &unhex("01 61 01 00")),
        Ok(None)
    );
}

#[test]
fn float_values_written_by_incrbyfloat() {
    let c = codec();
    // 02 00 00 01 02 <varint of the bits of 2.5>
    let raw = unhex("02 00 00 01 02 80 80 80 80 80 80 80 84 80 01");
    let meta = c.decode_meta(DataType::String, &raw).unwrap();
    assert_eq!(meta.value, b"2.5");
    assert_eq!(meta.variant, VARIANT_FLOAT_VALUE);
    assert_eq!(c.encode_meta(&meta).unwrap(), raw);
}

#[test]
fn sparse_list_items_sort_numerically() {
    let c = codec();
    let meta = c.new_meta(DataType::List, 0);
    let at = |i| c.sub_key(SubKind::ListItem.of(b"l", &meta), SubIdRef::Sparse(i));
    let order = [
        at(SparseIndex::Int(i64::MIN + 1)),
        at(SparseIndex::Int(-2)),
        at(SparseIndex::Float(-1.5)),
        at(SparseIndex::Int(-1)),
        at(SparseIndex::Float(-0.5)),
        at(SparseIndex::Int(0)),
        at(SparseIndex::Float(0.25)),
        at(SparseIndex::Int(1)),
        at(SparseIndex::Int(1 << 40)),
    ];
    for w in order.windows(2) {
        assert_eq!(compare_keys(&w[0], &w[1]), Ordering::Less);
    }
    let range = c.sub_range(SubKind::ListItem.of(b"l", &meta));
    assert!(order.iter().all(|k| in_range(&c, &range, k)));
    assert_eq!(
        c.decode_sub_key(SubKind::ListItem.of(b"l", &meta), &order[2]),
        Ok(SubId::Sparse(SparseIndex::Float(-1.5)))
    );
}

#[test]
fn round_trips_of_every_record_kind() {
    let c = codec();
    let list = ListBounds::Sparse {
        min: SparseIndex::Int(-4),
        max: SparseIndex::Float(2.5),
        sequential: false,
    };
    for meta in filled_metas(&c, 0, 1_700_000_123_456, &list) {
        let raw = c.encode_meta(&meta).unwrap();
        assert_eq!(c.decode_meta(DataType::String, &raw).unwrap(), meta);
    }
    let key: &[u8] = b"key\0\xff";
    let meta = c.new_meta(DataType::ZSet, 0);
    let mut elements = edge_elements(
        f64::NEG_INFINITY,
        (
            SubId::Sparse(SparseIndex::Float(-0.75)),
            SubValue::Bytes(Vec::new()),
        ),
    );
    // Fields, values and members that read as integers.
    elements.extend([
        (
            SubKind::HashField,
            SubId::Name(b"-12".to_vec()),
            SubValue::Bytes(b"v\xff".to_vec()),
        ),
        (
            SubKind::HashField,
            SubId::Name(b"f\0".to_vec()),
            SubValue::Bytes(b"9223372036854775807".to_vec()),
        ),
        (
            SubKind::ZSetMember,
            SubId::Name(b"7".to_vec()),
            SubValue::Score(-0.0),
        ),
    ]);
    let whole = c.key_range(key).expect("ardb deletes by range");
    for element in &elements {
        let kind = element.0;
        let raw_key = assert_element(&c, key, &meta, element).key;
        assert!(in_range(&c, &whole, &raw_key), "{kind:?}");
        // No other kind's range holds it.
        for other in SubKind::ALL {
            if other != kind {
                assert!(!in_range(&c, &c.sub_range(other.of(key, &meta)), &raw_key));
            }
        }
        assert_eq!(c.decode_meta_key(NS, &raw_key), Ok(None));
        assert_eq!(c.gc_sub_owner(NS, &raw_key, &[]), None);
    }
    // Neighbouring user keys are outside the key's range.
    for neighbour in [&b"key\0"[..], b"key\0\xff\0", b"kez", b""] {
        let m = c.meta_record(neighbour, DataType::Hash).unwrap().key;
        assert!(!in_range(&c, &whole, &m));
    }
}

#[test]
fn gc_rules_through_the_codec() {
    let c = codec();
    let now = 1_700_000_000_000u64;
    let rec = c.meta_record(b"s", DataType::Set).unwrap();
    let mut meta = c.new_meta(DataType::Set, 0);
    meta.size = 2;
    meta.expire_ms = now - 1;
    let expired = c.encode_meta(&meta).unwrap();
    // Ardb keeps expired metadata (its cron deletes the key).
    assert_eq!(c.gc_meta(NS, &rec.key, &expired, now), GcDecision::Keep);
    assert_eq!(c.gc_meta(NS, &rec.key, b"", now), GcDecision::Drop);
    let sub = c.sub_key(SubKind::SetMember.of(b"s", &meta), SubIdRef::Name(b"m"));
    assert_eq!(c.gc_meta(NS, &sub, b"\x08\x00", now), GcDecision::Keep);
    assert_eq!(c.gc_meta(NS, &sub, b"", now), GcDecision::Drop);
    assert_eq!(c.gc_sub_owner(NS, &sub, &[]), None);
    assert_eq!(
        redcodec_ardb::gc::expired_meta_key(&rec.key, &expired, now),
        Some(&b"s"[..])
    );
}

#[test]
fn keys_longer_than_a_varuint32_are_refused_only_past_4_gib() {
    let c = codec();
    assert!(c.meta_record(&vec![b'k'; 70_000], DataType::Hash).is_ok());
    let rec = c.meta_record(&[b'k'; 300], DataType::List).unwrap();
    assert_eq!(&rec.key[..2], &[0xac, 0x02]);
    assert_eq!(c.decode_meta_key(NS, &rec.key), Ok(Some(vec![b'k'; 300])));
}

/// §14.8: merge operands and what `ardb.merger` makes of them, through the
/// operator spec the layout declares.
#[test]
fn merge_worked_examples() {
    let c = codec();
    let merger = c
        .layout()
        .cf(NS)
        .merge
        .expect("every ardb family has ardb.merger");
    assert_eq!(merger.name, "ardb.merger");
    let merge = |key: &[u8], base: Option<&str>, operands: &[&str]| {
        let base = base.map(unhex);
        let operands: Vec<Vec<u8>> = operands.iter().map(|o| unhex(o)).collect();
        (merger.full_merge)(
            key,
            base.as_deref(),
            &mut operands.iter().map(Vec::as_slice),
        )
        .expect("merged")
    };
    let meta_key = |k: &[u8]| c.meta_record(k, DataType::String).unwrap().key;

    // SET counter 10; INCRBY counter 5; INCR counter; DECRBY counter 2.
    assert_eq!(meta_key(b"counter"), unhex("07 63 6f 75 6e 74 65 72 01 00"));
    assert_eq!(
        merge(
            &meta_key(b"counter"),
            Some("02 00 00 01 01 14"),
            &[
                "1e 70 00 01 01 0a",
                "1e 6f 00 01 01 02",
                "1e 6b 00 01 01 04"
            ]
        ),
        unhex("02 00 00 01 01 1c")
    );
    // SET s hello; APPEND s " world".
    assert_eq!(
        merge(
            &meta_key(b"s"),
            Some("02 00 00 01 04 05 68 65 6c 6c 6f"),
            &["1e 64 00 01 04 06 20 77 6f 72 6c 64"]
        ),
        unhex("02 00 00 01 04 0b 68 65 6c 6c 6f 20 77 6f 72 6c 64")
    );
    // EXPIRE e 60 at 1700000000000, on a value and on a missing key.
    let expire = "1e 37 00 01 01 c0 c9 b2 fe f9 62";
    let merged = merge(
        &meta_key(b"e"),
        Some("02 00 00 01 04 05 76 61 6c 75 65"),
        &[expire],
    );
    assert_eq!(
        merged,
        unhex("02 00 c0 c9 b2 fe f9 62 01 04 05 76 61 6c 75 65")
    );
    assert_eq!(
        c.decode_meta(DataType::String, &merged).unwrap().expire_ms,
        1_700_000_060_000
    );
    let missing = merge(&meta_key(b"ghost"), None, &[expire]);
    assert!(missing.is_empty());
    let meta = c.decode_meta(DataType::String, &missing).unwrap();
    assert_eq!((meta.data_type, meta.size), (DataType::Hash, 0));
    assert!(c.encode_meta(&meta).is_err());
    // HINCRBY h f 3 on 5.
    let field = c.sub_key(
        SubKind::HashField.of(b"h", &c.new_meta(DataType::Hash, 0)),
        SubIdRef::Name(b"f"),
    );
    assert_eq!(field, unhex("01 68 04 01 04 01 66"));
    let merged = merge(&field, Some("04 01 01 0a"), &["1e 9a 00 01 01 06"]);
    assert_eq!(merged, unhex("04 01 01 10"));
    let meta = c.new_meta(DataType::Hash, 0);
    assert_eq!(
        c.decode_sub_value(SubKind::HashField.of(b"h", &meta), &merged),
        Ok(SubValue::Bytes(b"8".to_vec()))
    );
    // INCRBYFLOAT fl 0.1 on a missing key: a float64, printed as Ardb does.
    let merged = merge(
        &meta_key(b"fl"),
        None,
        &["1e 71 00 01 02 b4 e6 cc 99 b3 e6 cc b9 7f"],
    );
    assert_eq!(merged, unhex("02 00 00 01 02 b4 e6 cc 99 b3 e6 cc b9 7f"));
    let meta = c.decode_meta(DataType::String, &merged).unwrap();
    assert_eq!(meta.value, b"0.10000000000000001");
    assert_eq!(meta.variant, VARIANT_FLOAT_VALUE);
    // HSETNX h n new: the field operand, when the field is missing and
    // when it is present.
    let n = c.sub_key(
        SubKind::HashField.of(b"h", &c.new_meta(DataType::Hash, 0)),
        SubIdRef::Name(b"n"),
    );
    assert_eq!(n, unhex("01 68 04 01 04 01 6e"));
    let hsetnx = "1e a1 00 01 04 03 6e 65 77";
    assert_eq!(merge(&n, None, &[hsetnx]), unhex("04 01 04 03 6e 65 77"));
    assert_eq!(
        merge(&n, Some("04 01 04 01 78"), &[hsetnx]),
        unhex("04 01 04 01 78")
    );
    assert_eq!(
        merge(&meta_key(b"h"), None, &["1e a1 00 01 01 02"]),
        unhex("03 00 00 02 00")
    );
}
