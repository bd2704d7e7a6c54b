//! A command's or a value's elements each once, in first-seen order: the
//! fields of an HSET, the members of an SADD, a ZADD, a ZREM or a sorted
//! set written whole.
//!
//! Most such lists are short (one field, the five members of a small
//! set), and hashing each element costs more there than comparing it with
//! the few kept so far: up to [`LINEAR_MAX`] distinct elements are found
//! by a scan, more through a hash map built then. The map keeps the
//! standard library's keyed hash: the elements come from clients, and a
//! hash they could predict would let them make every insert collide.

use std::collections::HashMap;
use std::hash::Hash;

/// Distinct elements found by a scan before a hash map takes over.
const LINEAR_MAX: usize = 16;

/// Keys each once, in the order they were first given: a key is found
/// again by a scan while at most [`LINEAR_MAX`] are kept, through a hash
/// map beyond.
pub(crate) struct FirstSeen<K> {
    keys: Vec<K>,
    map: Option<HashMap<K, usize>>,
}

impl<K> Default for FirstSeen<K> {
    fn default() -> Self {
        FirstSeen {
            keys: Vec::new(),
            map: None,
        }
    }
}

impl<K: Eq + Hash + Copy> FirstSeen<K> {
    /// The position of `key`, if it was given before.
    pub(crate) fn find(&self, key: K) -> Option<usize> {
        match &self.map {
            Some(map) => map.get(&key).copied(),
            None => self.keys.iter().position(|k| *k == key),
        }
    }

    /// Keeps `key`, not given before ([`FirstSeen::find`] found nothing),
    /// and returns its position.
    pub(crate) fn push(&mut self, key: K) -> usize {
        let at = self.keys.len();
        match &mut self.map {
            Some(map) => {
                map.insert(key, at);
            }
            None if at == LINEAR_MAX => {
                let mut map = HashMap::with_capacity(2 * LINEAR_MAX);
                map.extend(self.keys.iter().enumerate().map(|(i, k)| (*k, i)));
                map.insert(key, at);
                self.map = Some(map);
            }
            None => {}
        }
        self.keys.push(key);
        at
    }

    /// The keys, in first-seen order.
    pub(crate) fn into_keys(self) -> Vec<K> {
        self.keys
    }
}

/// `pairs` with each key once, holding the key's last value, in the order
/// the keys were first given.
pub(crate) fn last_wins<K: Eq + Hash + Copy, V>(
    pairs: impl IntoIterator<Item = (K, V)>,
) -> Vec<(K, V)> {
    let mut seen = FirstSeen::default();
    let mut values = Vec::new();
    for (key, value) in pairs {
        match seen.find(key) {
            Some(at) => values[at] = value,
            None => {
                seen.push(key);
                values.push(value);
            }
        }
    }
    seen.into_keys().into_iter().zip(values).collect()
}

/// `items` each once, in first-seen order.
pub(crate) fn distinct<K: Eq + Hash + Copy>(items: impl IntoIterator<Item = K>) -> Vec<K> {
    let mut seen = FirstSeen::default();
    for item in items {
        if seen.find(item).is_none() {
            seen.push(item);
        }
    }
    seen.into_keys()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The plain definition: a map from each key to its last value, the
    /// keys in first-seen order.
    fn expected(pairs: &[(u8, u32)]) -> Vec<(u8, u32)> {
        let mut order = Vec::new();
        let mut last = HashMap::new();
        for &(k, v) in pairs {
            if last.insert(k, v).is_none() {
                order.push(k);
            }
        }
        order.into_iter().map(|k| (k, last[&k])).collect()
    }

    proptest! {
        /// Below, at and past the scan's limit (keys drawn from 40
        /// values, lists up to 100 long), with repeats before and after
        /// the map takes over.
        #[test]
        fn last_wins_keeps_first_seen_order_and_last_values(
            pairs in prop::collection::vec((0u8..40, any::<u32>()), 0..100)
        ) {
            prop_assert_eq!(last_wins(pairs.iter().copied()), expected(&pairs));
            let keys: Vec<u8> = pairs.iter().map(|(k, _)| *k).collect();
            let firsts: Vec<u8> = expected(&pairs).into_iter().map(|(k, _)| k).collect();
            prop_assert_eq!(distinct(keys), firsts);
        }
    }

    #[test]
    fn a_repeat_of_an_early_key_after_the_map_takes_over_keeps_its_place() {
        let mut pairs: Vec<(&[u8], u32)> = Vec::new();
        let names: Vec<String> = (0..=LINEAR_MAX + 3).map(|i| format!("f{i}")).collect();
        for (i, name) in names.iter().enumerate() {
            pairs.push((name.as_bytes(), i as u32));
        }
        pairs.push((b"f0", 99));
        let out = last_wins(pairs);
        assert_eq!(out.len(), LINEAR_MAX + 4);
        assert_eq!(out[0], (&b"f0"[..], 99));
        assert_eq!(
            out[LINEAR_MAX],
            (names[LINEAR_MAX].as_bytes(), LINEAR_MAX as u32)
        );
    }
}
