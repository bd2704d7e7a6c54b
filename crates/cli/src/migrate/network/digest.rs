//! A key's content summarized the same way whether it is read from a store
//! or from a server, chunk by chunk: the engine's
//! [`ContentDigest`](redcodec_migrate::ContentDigest), which this
//! module's tests check for the server side's needs (chunking and order of
//! unordered types, the sign of zero, printed doubles).

pub use redcodec_migrate::ContentDigest;

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_engine::value::Value;
    use redcodec_migrate::KeyDigest;

    fn digest(chunks: &[Value]) -> KeyDigest {
        let mut d = ContentDigest::new(chunks[0].data_type());
        for c in chunks {
            d.add(c);
        }
        d.finish(0)
    }

    #[test]
    fn chunking_and_order_of_unordered_types_do_not_matter() {
        let a = digest(&[Value::Set(vec![b"x".to_vec(), b"y".to_vec()])]);
        let b = digest(&[
            Value::Set(vec![b"y".to_vec()]),
            Value::Set(vec![b"x".to_vec()]),
        ]);
        assert_eq!(a, b);
        let l1 = digest(&[Value::List(vec![b"x".to_vec(), b"y".to_vec()])]);
        let l2 = digest(&[Value::List(vec![b"y".to_vec(), b"x".to_vec()])]);
        assert_ne!(l1.content, l2.content);
        let z1 = digest(&[Value::ZSet(vec![(b"m".to_vec(), 0.1)])]);
        // Redis 7.0 prints 0.1 with 17 digits: the same double.
        let printed: f64 = "0.10000000000000001".parse().unwrap();
        let z2 = digest(&[Value::ZSet(vec![(b"m".to_vec(), printed)])]);
        let next = f64::from_bits(0.1f64.to_bits() + 1);
        let z3 = digest(&[Value::ZSet(vec![(b"m".to_vec(), next)])]);
        assert_eq!(z1, z2, "the same double");
        let zero = digest(&[Value::ZSet(vec![(b"m".to_vec(), 0.0)])]);
        let negative_zero = digest(&[Value::ZSet(vec![(b"m".to_vec(), -0.0)])]);
        assert_eq!(zero, negative_zero);
        assert_ne!(z1, z3);
        assert_eq!(z1.elements, 1);
    }
}
