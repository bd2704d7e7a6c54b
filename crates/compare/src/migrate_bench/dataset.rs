//! The benchmark's dataset, generated the same way every time from its
//! size in elements: a fifth strings; a fifth each of hashes, lists, sets
//! and sorted sets, half of it in keys of 50 elements and half in one big
//! key. It comes as pieces of at most [`PIECE`] elements of one key, a big
//! key's pieces one after the other.

use redcodec_engine::value::Value;

/// Most elements in one piece.
pub const PIECE: usize = 1000;

/// Elements of each small collection.
const SMALL: usize = 50;

/// Bytes of every value.
const VALUE_SIZE: usize = 16;

fn value(i: usize) -> Vec<u8> {
    let mut v = format!("{i:0VALUE_SIZE$}").into_bytes();
    v.truncate(VALUE_SIZE);
    v
}

/// Calls `piece(key, value)` for every piece of the dataset of `elements`
/// elements.
pub fn for_each_piece(elements: usize, mut piece: impl FnMut(&[u8], Value)) {
    let per_type = elements / 5;
    let strings = elements - 4 * per_type;
    for i in 0..strings {
        piece(format!("str:{i:09}").as_bytes(), Value::String(value(i)));
    }
    for kind in ["hash", "list", "set", "zset"] {
        let small_part = per_type / 2;
        let big_part = per_type - small_part;
        let mut start = 0;
        let mut n = 0;
        while start < small_part {
            let len = SMALL.min(small_part - start);
            let key = format!("{kind}:{n:07}");
            piece(key.as_bytes(), collection(kind, start, len));
            start += len;
            n += 1;
        }
        let key = format!("{kind}:big");
        let mut done = 0;
        while done < big_part {
            let len = PIECE.min(big_part - done);
            piece(key.as_bytes(), collection(kind, done, len));
            done += len;
        }
    }
}

/// `len` elements of a collection of `kind`, numbered from `from`.
fn collection(kind: &str, from: usize, len: usize) -> Value {
    let range = from..from + len;
    match kind {
        "hash" => Value::Hash(
            range
                .map(|i| (format!("field:{i:09}").into_bytes(), value(i)))
                .collect(),
        ),
        "list" => Value::List(range.map(value).collect()),
        "set" => Value::Set(
            range
                .map(|i| format!("member:{i:09}").into_bytes())
                .collect(),
        ),
        _ => Value::ZSet(
            range
                .map(|i| (format!("member:{i:09}").into_bytes(), i as f64 * 0.5))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn the_dataset_has_the_asked_number_of_elements_in_bounded_pieces() {
        for size in [0, 7, 1000, 12_345] {
            let mut total = 0;
            let mut keys = HashSet::new();
            for_each_piece(size, |key, v| {
                let n = match &v {
                    Value::String(_) => 1,
                    Value::Hash(x) => x.len(),
                    Value::List(x) | Value::Set(x) => x.len(),
                    Value::ZSet(x) => x.len(),
                };
                assert!(n <= PIECE);
                total += n;
                keys.insert(key.to_vec());
            });
            assert_eq!(total, size);
            if size >= 1000 {
                assert!(keys.contains(b"hash:big".as_slice()));
            }
        }
    }
}
