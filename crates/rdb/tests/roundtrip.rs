//! Encode → decode gives the value back, for every type and on both sides
//! of every encoding threshold; decode → encode → decode is stable.

use proptest::collection::{btree_map, btree_set, vec};
use proptest::prelude::*;
use redcodec_rdb::{decode_payload, encode_payload, EncodeOptions, Value};

fn bytes_of(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // integers, the canonical text and not
        any::<i64>().prop_map(|v| v.to_string().into_bytes()),
        (-200i64..200).prop_map(|v| v.to_string().into_bytes()),
        Just(b"007".to_vec()),
        // binary
        vec(any::<u8>(), 0..max),
        // compressible
        (1usize..max.max(2), 1u8..4)
            .prop_map(|(n, k)| (0..n).map(|i| b'a' + (i % usize::from(k)) as u8).collect()),
    ]
}

fn score() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-1000i64..1000).prop_map(|v| v as f64),
        any::<f64>().prop_filter("not NaN", |f| !f.is_nan()),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(4.611_686_018_427_388e18),
        Just(0.1),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        bytes_of(300).prop_map(Value::String),
        vec(bytes_of(40), 1..40).prop_map(Value::List),
        // past an 8 KiB node
        vec(bytes_of(400), 30..80).prop_map(Value::List),
        btree_set(any::<i64>(), 1..40)
            .prop_map(|s| Value::Set(s.iter().map(|v| v.to_string().into_bytes()).collect())),
        // around the 512-integer intset limit
        (505usize..520)
            .prop_map(|n| Value::Set((0..n).map(|v| v.to_string().into_bytes()).collect())),
        btree_set(bytes_of(70), 1..40).prop_map(|s| Value::Set(s.into_iter().collect())),
        btree_map(bytes_of(70), score(), 1..40).prop_map(|m| Value::ZSet(m.into_iter().collect())),
        // around the 128-member listpack limit
        (120usize..136, score()).prop_map(|(n, s)| Value::ZSet(
            (0..n)
                .map(|i| (format!("m{i}").into_bytes(), s + i as f64))
                .collect()
        )),
        btree_map(bytes_of(70), bytes_of(70), 1..40)
            .prop_map(|m| Value::Hash(m.into_iter().collect())),
        (120usize..136).prop_map(|n| Value::Hash(
            (0..n)
                .map(|i| (format!("f{i}").into_bytes(), i.to_string().into_bytes()))
                .collect()
        )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn encode_then_decode_gives_the_value(v in value(), compression: bool) {
        let opts = EncodeOptions { compression };
        let payload = encode_payload(&v, opts);
        let back = decode_payload(&payload).expect("our payload decodes");
        prop_assert_eq!(back.canonical(), v.canonical());
        if matches!(v, Value::String(_) | Value::List(_) | Value::Hash(_)) {
            prop_assert_eq!(&back, &v, "order is kept");
        }
        // decode → encode → decode is stable, and so are the bytes.
        let again = encode_payload(&back, opts);
        prop_assert_eq!(decode_payload(&again).expect("decodes"), back.clone());
        prop_assert_eq!(encode_payload(&decode_payload(&again).unwrap(), opts), again);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in vec(any::<u8>(), 0..200)) {
        let _ = decode_payload(&bytes);
        let _ = redcodec_rdb::decode_object(&bytes);
    }

    #[test]
    fn every_truncation_is_refused(v in value()) {
        let payload = encode_payload(&v, EncodeOptions::default());
        let body = &payload[..payload.len() - 10];
        for cut in 0..body.len() {
            let sealed = redcodec_rdb::seal(body[..cut].to_vec());
            // Read from the whole payload, a cut body may take footer
            // bytes; it never panics, and gives the original value back
            // only where the footer happens to hold the missing bytes
            // (e.g. the integer 10 cut before its byte 0x0a, which is
            // also the RDB version's first byte).
            if let Ok(back) = decode_payload(&sealed) {
                if back.canonical() == v.canonical() {
                    prop_assert!(sealed.starts_with(body), "{:02x?}", &body[..cut]);
                }
            }
        }
    }
}

/// The case that made the truncation property precise: the integer 10 cut
/// before its byte reads the RDB version's first byte (0x0a) in its place.
#[test]
fn a_cut_integer_may_be_completed_by_the_footer() {
    let v = Value::String(b"10".to_vec());
    let payload = encode_payload(&v, EncodeOptions::default());
    let body = &payload[..payload.len() - 10];
    let sealed = redcodec_rdb::seal(body[..body.len() - 1].to_vec());
    assert!(sealed.starts_with(body));
    assert_eq!(decode_payload(&sealed).expect("decodes"), v);
}
