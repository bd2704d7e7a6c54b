//! No decoder and no comparison panics: every prefix of valid records,
//! every single-byte corruption of them, and deterministic random bytes go
//! through every decoding entry point and through `ardb.comparator`, which
//! must also stay antisymmetric on them. Errors are fine, panics are not.

use std::cmp::Ordering;

use redcodec_ardb::comparator::compare_keys;
use redcodec_ardb::gc::expired_meta_key;
use redcodec_ardb::ArdbCodec;
use redcodec_codec::{
    Codec, DataType, ListBounds, Meta, SparseIndex, SubId, SubIdRef, SubKind, SubValue,
};
use redcodec_testkit::{feed_decoders, prefixes_and_flips, XorShift};

fn metas(c: &ArdbCodec) -> Vec<Meta> {
    let mut out = Vec::new();
    for data_type in DataType::ALL {
        for variant in [0, 1, 2] {
            let mut m = c.new_meta(data_type, 0);
            m.variant = variant;
            m.expire_ms = 1_700_000_000_000;
            m.size = 2;
            if data_type == DataType::String {
                m.value = if variant == 2 {
                    b"2.5".to_vec()
                } else {
                    b"-42".to_vec()
                };
            }
            if data_type == DataType::List {
                m.list = ListBounds::Sparse {
                    min: SparseIndex::Int(-5),
                    max: SparseIndex::Float(7.5),
                    sequential: variant == 0,
                };
            }
            out.push(m);
        }
    }
    out
}

/// Anchors the comparator checks: well-formed keys of every shape.
fn anchors(c: &ArdbCodec) -> Vec<Vec<u8>> {
    let meta = c.new_meta(DataType::Hash, 0);
    let mut out = vec![
        Vec::new(),
        vec![0],
        c.meta_record(b"k", DataType::Hash).unwrap().key,
        c.key_range(b"k").expect("ardb deletes by range").upper,
    ];
    for kind in SubKind::ALL {
        let r = c.sub_range(kind.of(b"k", &meta));
        out.push(r.lower);
        out.push(r.upper);
    }
    out
}

/// Feeds `bytes` to every decoder of `c` and compares it with `anchors`.
fn feed(c: &ArdbCodec, meta: &Meta, anchors: &[Vec<u8>], bytes: &[u8]) {
    feed_decoders(c, meta, bytes, &[], &[0, 1_700_000_000_000, u64::MAX]);
    let _ = expired_meta_key(bytes, bytes, u64::MAX);
    for a in anchors {
        let ab = compare_keys(a, bytes);
        assert_eq!(
            ab,
            compare_keys(bytes, a).reverse(),
            "{a:02x?} vs {bytes:02x?}"
        );
    }
    assert_eq!(compare_keys(bytes, bytes), Ordering::Equal);
}

fn valid_records(c: &ArdbCodec) -> Vec<Vec<u8>> {
    let metas = metas(c);
    let mut out = redcodec_testkit::valid_records(
        c,
        &metas,
        &[
            (SubKind::ListItem, SubId::Sparse(SparseIndex::Int(6))),
            (SubKind::ListItem, SubId::Sparse(SparseIndex::Float(0.5))),
        ],
    );
    for m in &metas {
        out.push(c.encode_sub_value(
            SubKind::HashField.of(b"k", m),
            SubValue::Bytes(b"12345".to_vec()).view(),
        ));
    }
    out
}

#[test]
fn prefixes_and_corruptions_of_valid_records() {
    let c = ArdbCodec::default();
    let meta = c.new_meta(DataType::Hash, 0);
    let anchors = anchors(&c);
    for record in valid_records(&c) {
        prefixes_and_flips(&record, |bytes| feed(&c, &meta, &anchors, bytes));
    }
}

#[test]
fn random_bytes() {
    let mut rng = XorShift::new(0x2545_F491_4F6C_DD1D);
    let mut next = move || rng.next();
    let c = ArdbCodec::default();
    let anchors = anchors(&c);
    let mut previous: Vec<Vec<u8>> = Vec::new();
    for round in 0..20_000 {
        let len = (next() % 48) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        // Often start like a real key or value.
        match round % 4 {
            0 => {
                let mut k = vec![1, b'k', (next() % 32) as u8, (next() % 4) as u8];
                k.extend_from_slice(&bytes);
                bytes = k;
            }
            1 if !bytes.is_empty() => bytes[0] = [2u8, 3, 5, 7, 9][round % 5],
            _ => {}
        }
        let meta = c.new_meta(DataType::ALL[round % 5], 0);
        feed(&c, &meta, &anchors, &bytes);
        // Antisymmetry among random keys too.
        for p in previous.iter().rev().take(8) {
            assert_eq!(compare_keys(p, &bytes), compare_keys(&bytes, p).reverse());
        }
        previous.push(bytes);
    }
}

/// Operands of every kind the merge handles.
fn valid_operands() -> Vec<Vec<u8>> {
    use redcodec_ardb::merge::{encode_operand, op, Scalar};
    let s = |v: &str| Scalar::Str(v.as_bytes().to_vec());
    vec![
        encode_operand(op::APPEND, &[s("x")]),
        encode_operand(op::INCR, &[Scalar::Int(1)]),
        encode_operand(op::DECRBY2, &[Scalar::Int(-7)]),
        encode_operand(op::INCRBYFLOAT, &[Scalar::Float(1.5)]),
        encode_operand(op::SETNX, &[Scalar::Int(5)]),
        encode_operand(op::SETXX, &[s("v")]),
        encode_operand(op::PSETEX, &[s("v"), Scalar::Int(1_700_000_000_000)]),
        encode_operand(op::SETRANGE, &[Scalar::Int(3), s("ab")]),
        encode_operand(op::SETBIT, &[Scalar::Int(9), Scalar::Int(1)]),
        encode_operand(op::PFADD, &[s("a")]),
        encode_operand(op::PFADD, &[]),
        encode_operand(op::PEXPIREAT, &[Scalar::Int(1_700_000_000_000)]),
        encode_operand(op::HSETNX, &[Scalar::Int(1)]),
        encode_operand(op::HSET2, &[s("v")]),
        encode_operand(op::HINCR, &[Scalar::Int(5)]),
        encode_operand(op::HINCRBYFLOAT, &[Scalar::Float(-0.5)]),
    ]
}

/// Runs `ardb.merger` on `bytes` as key, base and operand, beside valid
/// operands and bases.
fn feed_merge(bytes: &[u8], keys: &[Vec<u8>], bases: &[Vec<u8>], operands: &[Vec<u8>]) {
    use redcodec_ardb::merge::full_merge;
    let _ = full_merge(bytes, Some(bytes), &mut [bytes, bytes].into_iter());
    for key in keys {
        let _ = full_merge(key, Some(bytes), &mut operands.iter().map(Vec::as_slice));
        let _ = full_merge(key, None, &mut [bytes].into_iter());
        for base in bases {
            let _ = full_merge(key, Some(base), &mut [bytes, bytes].into_iter());
        }
    }
}

#[test]
fn merge_never_panics() {
    let c = ArdbCodec::default();
    let meta = c.new_meta(DataType::Hash, 0);
    let keys = vec![
        c.meta_record(b"k", DataType::String).unwrap().key,
        c.sub_key(SubKind::HashField.of(b"k", &meta), SubIdRef::Name(b"f")),
    ];
    let mut bases: Vec<Vec<u8>> = metas(&c)
        .iter()
        .map(|m| c.encode_meta(m).unwrap())
        .collect();
    bases.push(c.encode_sub_value(
        SubKind::HashField.of(b"k", &meta),
        SubValue::Bytes(b"12".to_vec()).view(),
    ));
    let operands = valid_operands();
    for record in operands.iter().chain(&bases) {
        prefixes_and_flips(record, |bytes| feed_merge(bytes, &keys, &bases, &operands));
    }
    let mut rng = XorShift::new(0x9E37_79B9_7F4A_7C15);
    for round in 0..5_000 {
        let mut bytes = rng.bytes(40);
        // Often an operand of a known op with random arguments.
        if round % 2 == 0 {
            let op = operands[round % operands.len()].clone();
            bytes.splice(0..0, op[..4].iter().copied());
        }
        feed_merge(&bytes, &keys, &bases, &operands);
    }
}
