//! The HLL bytes against values Redis 7.0.15 wrote (the corpus,
//! `scenarios/hyperloglog.txt`, compares every command with redis-server).

use super::*;

#[test]
fn murmur_and_the_pattern_are_redis() {
    // `PFADD hll a b c d e f g` on redis-server 7.0.15: the sparse bytes.
    let mut value = new_sparse();
    assert_eq!(value.len(), HDR + 2);
    for e in [b"a", b"b", b"c", b"d", b"e", b"f", b"g"] {
        assert!(add(&mut value, e).unwrap());
    }
    invalidate_cache(&mut value);
    let want: &[u8] = b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80Fm\x80V\x0c\x80D<\x848\x80P\xb1\x84I\x8c\x80Bm\x80BZ";
    assert_eq!(value, want);
    assert_eq!(count(&value), Ok(7));
}

#[test]
fn a_sparse_hll_becomes_dense_and_counts_the_same() {
    let mut value = new_sparse();
    for i in 0..5000u32 {
        add(&mut value, format!("e{i}").as_bytes()).unwrap();
    }
    assert!(is_dense(&value));
    assert_eq!(value.len(), DENSE_SIZE);
    let mut sparse = new_sparse();
    for i in 0..100u32 {
        add(&mut sparse, format!("e{i}").as_bytes()).unwrap();
    }
    assert!(!is_dense(&sparse));
    let promoted = sparse::to_dense(&sparse).unwrap();
    assert_eq!(count(&promoted), count(&sparse));
    let mut max = [0u8; REGISTERS];
    merge_into(&mut max, &value).unwrap();
    assert_eq!(count_raw(&max), count(&value).unwrap());
}

#[test]
fn bad_bytes_are_errors_never_panics() {
    assert_eq!(check(b"HYLL"), Err(HllError::NotHll));
    assert_eq!(
        check(b"HYLL\x02\0\0\0\0\0\0\0\0\0\0\x80"),
        Err(HllError::NotHll)
    );
    assert_eq!(
        check(b"HYLL\x00\0\0\0\0\0\0\0\0\0\0\x80\x00"),
        Err(HllError::NotHll)
    );
    // Every sparse byte sequence of up to two opcode bytes: an answer each.
    for a in 0..=255u8 {
        for b in [None, Some(0u8), Some(0x7f), Some(0x80), Some(0xff)] {
            let mut value = new_sparse();
            value.truncate(HDR);
            value.push(a);
            value.extend(b);
            let _ = count(&value);
            let mut max = [0u8; REGISTERS];
            let _ = merge_into(&mut max, &value);
            for e in [&b"a"[..], b"zz", b"0123456789"] {
                let _ = add(&mut value, e);
            }
        }
    }
}

#[test]
fn random_registers_are_errors_never_panics() {
    // A fixed linear congruential sequence: the same bytes every run.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as u8
    };
    for round in 0..3000 {
        let mut value = new_sparse();
        value.truncate(HDR);
        let dense = round % 10 == 0;
        let len = if dense {
            DENSE_SIZE - HDR
        } else {
            usize::from(next()) % 48
        };
        value[4] = u8::from(!dense);
        value.extend((0..len).map(|_| next()));
        assert_eq!(check(&value), Ok(()));
        let _ = count(&value);
        let mut max = [0u8; REGISTERS];
        let _ = merge_into(&mut max, &value);
        for e in 0..8u8 {
            if add(&mut value, &[e, next()]).is_err() {
                break;
            }
        }
        let _ = merge_from(&mut value, &max, round % 3 == 0);
    }
}
