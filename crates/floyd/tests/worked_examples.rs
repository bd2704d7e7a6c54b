//! The worked examples of `formats-spec/floyd.md` §9 (T = 1700000000000
//! ms), byte for byte, through the public [`Codec`] interface; the
//! escaping examples of Pika's `src/storage/tests/kv_format_test.cc`; GC
//! of a deleted hash.

use std::cmp::Ordering::Less;

use redcodec_codec::{Codec, DataType, GcDecision, Meta, SubId, SubIdRef, SubKind, SubValue};
use redcodec_floyd::comparator::{lists_data_key_compare, zsets_score_key_compare};
use redcodec_floyd::{keys, FloydCodec};
use redcodec_testkit::{
    assert_element_bytes, assert_meta_bytes, assert_meta_record, field_f_v, member_m_1_5,
    place_names, unhex,
};

const T_MS: u64 = 1_700_000_000_000;
const T_US: u64 = T_MS * 1000;
/// `T` as a version, little-endian.
const V: &str = "0068e5cf8b010000";
/// `T` as a stored time (bit 63 set).
const C: &str = "0068e5cf8b010080";
const Z8: &str = "0000000000000000";
const Z16: &str = "00000000000000000000000000000000";

fn codec() -> FloydCodec {
    FloydCodec::default()
}

fn hx(parts: &[&str]) -> Vec<u8> {
    unhex(&parts.join(" "))
}

fn one_element(c: &FloydCodec, ty: DataType) -> Meta {
    let mut m = c.new_meta(ty, c.next_version(T_US, 0, None));
    m.size = 1;
    m
}

#[test]
fn version_is_the_clock_in_ms() {
    let c = codec();
    assert_eq!(c.next_version(T_US, 0, None), T_MS);
    assert_eq!(c.next_version(T_US, 99, Some(T_MS)), T_MS + 1);
}

#[test]
fn set_foo_bar() {
    let c = codec();
    let rec = assert_meta_record(
        &c,
        b"foo",
        DataType::String,
        &hx(&[Z8, "66 6f 6f 00 00", Z16]),
    );
    assert_eq!(place_names(&c, rec.place), ("1", "default"));
    // The engine stamps a new string with next_version (string_version).
    let mut meta = Meta::string(b"bar".to_vec(), 0);
    meta.version = c.next_version(T_US, 0, None);
    assert_meta_bytes(
        &c,
        DataType::Hash,
        &meta,
        &hx(&["00", "62 61 72", Z16, C, Z8]),
    );
}

#[test]
fn hset_h_f_v() {
    let c = codec();
    let meta = one_element(&c, DataType::Hash);
    let rec = assert_meta_record(&c, b"h", DataType::Hash, &hx(&[Z8, "68 00 00", Z16]));
    assert_eq!(place_names(&c, rec.place), ("2", "default"));
    let meta_bytes = hx(&["01", "01000000", V, Z16, C, Z8]);
    assert_meta_bytes(&c, DataType::String, &meta, &meta_bytes);
    let place = c.sub_place(SubKind::HashField, b"h");
    assert_eq!(place_names(&c, place), ("2", "hash_data_cf"));
    let field = field_f_v();
    let key = hx(&[Z8, "68 00 00", V, "66", Z16]);
    let value = hx(&["76", Z16, C]);
    let range = assert_element_bytes(&c, b"h", &meta, &field, &key, &value).range;
    assert_eq!(range.lower, hx(&[Z8, "68 00 00", V]));
    assert_eq!(range.upper, hx(&[Z8, "68 00 00", "0068e5cf8b010001"]));
}

#[test]
fn zadd_z_1_5_m() {
    let c = codec();
    let meta = one_element(&c, DataType::ZSet);
    let rec = c.meta_record(b"z", DataType::ZSet).unwrap();
    assert_eq!(place_names(&c, rec.place), ("1", "default"));
    let meta_bytes = hx(&["04", "01000000", V, Z16, C, Z8]);
    assert_meta_bytes(&c, DataType::ZSet, &meta, &meta_bytes);
    assert_eq!(
        place_names(&c, c.sub_place(SubKind::ZSetMember, b"z")),
        ("1", "zset_data_cf")
    );
    let [member, scored] = member_m_1_5();
    let member_key = hx(&[Z8, "7a 00 00", V, "6d", Z16]);
    let member_value = hx(&["000000000000f83f", Z16, C]);
    assert_element_bytes(&c, b"z", &meta, &member, &member_key, &member_value);
    assert_eq!(
        place_names(&c, c.sub_place(SubKind::ZSetScore, b"z")),
        ("1", "zset_score_cf")
    );
    let key = hx(&[Z8, "7a 00 00", V, "000000000000f83f", "6d", Z16]);
    let range = assert_element_bytes(&c, b"z", &meta, &scored, &key, &hx(&[Z16, C])).range;
    assert_eq!(range.lower, hx(&[Z8, "7a 00 00", V, "000000000000f0ff"]));
    assert_eq!(zsets_score_key_compare(&range.lower, &key), Less);
    assert_eq!(zsets_score_key_compare(&key, &range.upper), Less);
}

#[test]
fn rpush_l_a() {
    let c = codec();
    let mut meta = c.new_meta(DataType::List, c.next_version(T_US, 0, None));
    // RPUSH writes at the right bound, then moves it.
    let redcodec_codec::ListBounds::Array { tail, .. } = meta.list else {
        panic!("array list");
    };
    assert_eq!(tail, 1 << 63);
    meta.list = redcodec_codec::ListBounds::Array {
        head: 1 << 63,
        tail: (1 << 63) + 1,
    };
    meta.size = 1;
    let rec = c.meta_record(b"l", DataType::List).unwrap();
    assert_eq!(place_names(&c, rec.place), ("1", "default"));
    let meta_bytes = hx(&[
        "03",
        "0100000000000000",
        V,
        "ffffffffffffff7f",
        Z8,
        "0100000000000080",
        Z8,
        Z16,
        C,
        Z8,
    ]);
    assert_eq!(meta_bytes.len(), 81);
    assert_meta_bytes(&c, DataType::List, &meta, &meta_bytes);
    assert_eq!(
        place_names(&c, c.sub_place(SubKind::ListItem, b"l")),
        ("1", "list_data_cf")
    );
    let item = (
        SubKind::ListItem,
        SubId::Index(1 << 63),
        SubValue::Bytes(b"a".to_vec()),
    );
    let key = hx(&[Z8, "6c 00 00", V, "0000000000000080", Z16]);
    let range = assert_element_bytes(&c, b"l", &meta, &item, &key, &hx(&["61", Z16, C])).range;
    assert_eq!(range.lower, hx(&[Z8, "6c 00 00", V]));
    assert_eq!(range.upper, hx(&[Z8, "6c 00 00", "0168e5cf8b010000"]));
    assert_eq!(lists_data_key_compare(&range.lower, &key), Less);
    assert_eq!(lists_data_key_compare(&key, &range.upper), Less);
}

#[test]
fn del_resets_and_gc_collects_the_old_field() {
    let c = codec();
    let meta = one_element(&c, DataType::Hash);
    let field = c.sub_key(SubKind::HashField.of(b"h", &meta), SubIdRef::Name(b"f"));
    // DEL in the same millisecond: count 0, version T+1, creation time 0
    // (Pika's InitialMetaValue).
    let reset = c.reset_meta(&meta, c.next_version(T_US, 0, Some(meta.version)));
    let raw = c.encode_meta(&reset).unwrap();
    assert_eq!(
        raw,
        hx(&["01", "00000000", "0168e5cf8b010000", Z16, Z8, Z8])
    );
    // Read back and written again (HSET re-using the record), the
    // creation time stays 0.
    let mut reused = c.decode_meta(DataType::Hash, &raw).unwrap();
    reused.size = 1;
    assert_eq!(
        c.encode_meta(&reused).unwrap(),
        hx(&["01", "01000000", "0168e5cf8b010000", Z16, Z8, Z8])
    );
    let place = c.sub_place(SubKind::HashField, b"h");
    let owner = c.gc_sub_owner(place, &field, &[]).unwrap();
    assert_eq!(owner.meta, c.meta_record(b"h", DataType::Hash).unwrap());
    assert_eq!(c.gc_sub(&owner, Some(&raw), T_MS), GcDecision::Drop);
    let live = c.encode_meta(&meta).unwrap();
    assert_eq!(c.gc_sub(&owner, Some(&live), T_MS), GcDecision::Keep);
    // The reset metadata stays until the clock passes its version.
    let meta_place = c.meta_record(b"h", DataType::Hash).unwrap().place;
    assert_eq!(c.gc_meta(meta_place, &[], &raw, T_MS + 1), GcDecision::Keep);
    assert_eq!(c.gc_meta(meta_place, &[], &raw, T_MS + 2), GcDecision::Drop);
}

/// `tests/kv_format_test.cc:36-59` (`BaseDataKeyFormat`) and `:94-115`
/// (`ListDataKeyFormat`): user keys with zero bytes.
#[test]
fn pikas_key_format_tests() {
    let key = b"\x00\x01base_data_key\x00";
    let data = b"\x00\x01data\x00";
    let version = 1_701_848_429u64;
    let enc_key = "00 01 01 62 61 73 65 5f 64 61 74 61 5f 6b 65 79 00 01 00 00";
    assert_eq!(
        keys::data_key(key, version, data),
        hx(&[Z8, enc_key, "6d25706500000000", "00 01 64 61 74 61 00", Z16])
    );
    let c = codec();
    let mut meta = c.new_meta(DataType::Hash, version);
    meta.size = 1;
    let raw = keys::data_key(key, version, data);
    assert_eq!(
        c.decode_sub_key(SubKind::HashField.of(key, &meta), &raw),
        Ok(SubId::Name(data.to_vec()))
    );
    let list_key = b"\x00\x01list_data_key\x00";
    assert_eq!(
        keys::list_key(list_key, version, 10),
        hx(&[
            Z8,
            "00 01 01 6c 69 73 74 5f 64 61 74 61 5f 6b 65 79 00 01 00 00",
            "6d25706500000000",
            "0a00000000000000",
            Z16
        ])
    );
    // ZsetsScoreKeyFormat (:61-92): score -3.5.
    assert_eq!(
        keys::score_key(key, version, -3.5, data),
        hx(&[
            Z8,
            enc_key,
            "6d25706500000000",
            "0000000000000cc0",
            "00 01 64 61 74 61 00",
            Z16
        ])
    );
}

/// Pika 4.0.0 wrote seconds without the flag; they read as ms.
#[test]
fn pika_4_0_0_seconds() {
    let c = codec();
    let secs = 1_700_000_000u64.to_le_bytes();
    let mut raw = hx(&["01", "02000000", "00f1536500000000", Z16]);
    raw.extend_from_slice(&secs);
    raw.extend_from_slice(&(1_700_000_100u64).to_le_bytes());
    let m = c.decode_meta(DataType::Hash, &raw).unwrap();
    assert_eq!(m.version, 1_700_000_000);
    assert_eq!(m.size, 2);
    assert_eq!(m.expire_ms, 1_700_000_100_000);
}
