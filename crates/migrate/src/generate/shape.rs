//! What each generated key is: its name, type, size, expiry and content,
//! drawn from a pseudo-random stream seeded by the run's seed and the
//! key's index alone — so the planning pass and the writing pass agree,
//! and a seed always gives the same dataset.
//!
//! # The distribution
//!
//! - **Type**: drawn by the weights of [`Mix`] (default: string 50 %,
//!   hash 20 %, list 10 %, set 10 %, zset 10 %).
//! - **Name**: `<app>:<type>:<index>`, `<app>` one of eight prefixes
//!   ([`APPS`]), the index zero-padded to ten digits: every key is
//!   distinct, and `analyze`'s per-prefix report has something to show.
//! - **Collection sizes** (hash, list, set, zset): 80 % of keys hold
//!   1–10 elements (uniform), 18 % hold 11–100 and 2 % hold 101–1,000
//!   (both log-uniform): mean about 19 elements.
//! - **Big keys**: record number `k × big_every − 1` (every 100,000th by
//!   default) is a collection of `big_elements` elements (100,000 by
//!   default), its type the collection types of the mix in turn.
//! - **String values**: 85 % are 8–64 bytes (uniform), 14 % 65 B–1 KiB
//!   and 1 % 1–16 KiB (log-uniform).
//! - **Elements**: hash fields `f:<n>`, set and zset members `m:<n>`,
//!   hash values and list items 4–64 random bytes (lowercase letters and
//!   digits), zset scores integers in [0, 1,000,000) halved.
//! - **Expiry**: `ttl_percent` % of keys (10 % by default; never a big
//!   key) expire between one hour and thirty days after the run's clock:
//!   nothing expires during a run.

use std::str::FromStr;

use redcodec_codec::DataType;
use redcodec_engine::value::Value;

/// The key-name prefixes keys are spread over.
pub const APPS: [&str; 8] = [
    "user", "session", "cache", "feed", "order", "metrics", "queue", "rank",
];

/// The five types in the order [`Mix`] weighs them.
const TYPES: [DataType; 5] = [
    DataType::String,
    DataType::Hash,
    DataType::List,
    DataType::Set,
    DataType::ZSet,
];

/// The relative weights of the types (`string=50,hash=20,…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mix {
    /// Weights of string, hash, list, set and zset, in that order.
    pub weights: [u32; 5],
}

impl Default for Mix {
    fn default() -> Self {
        Mix {
            weights: [50, 20, 10, 10, 10],
        }
    }
}

impl FromStr for Mix {
    type Err = String;

    /// Parses `type=weight` pairs separated by commas; types not named
    /// weigh 0. At least one weight must be positive.
    fn from_str(s: &str) -> Result<Mix, String> {
        let mut weights = [0u32; 5];
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let (name, weight) = part
                .split_once('=')
                .ok_or_else(|| format!("'{part}': expected type=weight"))?;
            let index = TYPES
                .iter()
                .position(|t| t.redis_name() == name.trim())
                .ok_or_else(|| {
                    format!("unknown type '{name}': expected string, hash, list, set or zset")
                })?;
            weights[index] = weight
                .trim()
                .parse()
                .map_err(|_| format!("'{weight}': the weight is not a whole number"))?;
        }
        if weights.iter().all(|w| *w == 0) {
            return Err("the mix has no type with a positive weight".into());
        }
        Ok(Mix { weights })
    }
}

impl Mix {
    /// The type a draw `r` in `[0, total)` picks.
    fn pick(&self, r: u64) -> DataType {
        let mut left = r;
        for (ty, w) in TYPES.iter().zip(self.weights) {
            if left < u64::from(w) {
                return *ty;
            }
            left -= u64::from(w);
        }
        DataType::String
    }

    fn total(&self) -> u64 {
        self.weights.iter().map(|w| u64::from(*w)).sum()
    }

    /// The types of positive weight, in order: the only ones drawn.
    fn drawn(&self) -> impl Iterator<Item = DataType> + '_ {
        TYPES
            .iter()
            .zip(self.weights)
            .filter(|(_, w)| *w > 0)
            .map(|(t, _)| *t)
    }

    /// The collection types of positive weight, in order.
    fn collections(&self) -> Vec<DataType> {
        self.drawn().filter(|t| t.is_collection()).collect()
    }
}

/// The knobs of the distribution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Distribution {
    /// Type weights.
    pub mix: Mix,
    /// The seed of every draw.
    pub seed: u64,
    /// One key in this many is big (0: none).
    pub big_every: u64,
    /// Elements of a big key.
    pub big_elements: u64,
    /// Percentage of keys (0–100) with an expiry.
    pub ttl_percent: u8,
}

impl Default for Distribution {
    fn default() -> Self {
        Distribution {
            mix: Mix::default(),
            seed: 1,
            big_every: 100_000,
            big_elements: 100_000,
            ttl_percent: 10,
        }
    }
}

/// SplitMix64: small, fast and good enough for test data (and for the
/// keys `compare --scale` draws from a generated dataset).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng(u64);

impl Rng {
    /// A stream that starts from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next draw.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `[lo, hi]`.
    fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// Log-uniform in `[lo, hi]` (`lo` ≥ 1).
    fn log_between(&mut self, lo: u64, hi: u64) -> u64 {
        let (a, b) = ((lo as f64).ln(), ((hi + 1) as f64).ln());
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        ((a + u * (b - a)).exp() as u64).clamp(lo, hi)
    }

    /// `len` bytes of lowercase letters and digits.
    fn text(&mut self, len: usize, out: &mut Vec<u8>) {
        const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let mut left = len;
        while left > 0 {
            let mut bits = self.next_u64();
            for _ in 0..left.min(10) {
                out.push(ALPHABET[(bits % 36) as usize]);
                bits /= 36;
            }
            left -= left.min(10);
        }
    }
}

/// One generated key, before its content.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// Its name.
    pub key: Vec<u8>,
    /// Its type.
    pub data_type: DataType,
    /// Elements (1 for a string).
    pub elements: u64,
    /// Milliseconds after the run's clock when it expires (`None`: never).
    pub ttl_ms: Option<u64>,
    /// Whether it is one of the big keys.
    pub big: bool,
    /// The stream its content is drawn from.
    pub(crate) content: Rng,
}

/// Shortest and longest expiry, in milliseconds from now.
const TTL_MIN_MS: u64 = 3_600_000;
const TTL_MAX_MS: u64 = 30 * 86_400_000;

impl Distribution {
    /// The first draws of the key of index `index`: its app (an index
    /// of [`APPS`]), its type and whether it is big; `rng` is left where
    /// the rest of its shape is drawn from.
    fn head(&self, index: u64, collections: &[DataType]) -> (Rng, usize, DataType, bool) {
        let mut rng = Rng::new(self.seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let app = rng.below(APPS.len() as u64) as usize;
        let big = self.big_every > 0
            && index % self.big_every == self.big_every - 1
            && !collections.is_empty();
        let data_type = if big {
            collections[((index / self.big_every) % collections.len() as u64) as usize]
        } else {
            self.mix.pick(rng.below(self.mix.total()))
        };
        (rng, app, data_type, big)
    }

    /// The indexes `0..records` in the order of their keys' names
    /// (bytewise): an app and a type at a time, both in name order, and
    /// the indexes of that pair ascending, which their ten zero-padded
    /// digits keep in name order. A store written in this order gets
    /// its keys sorted, as a migration from another store writes them:
    /// each flush of its memtables holds its own range of keys, which
    /// RocksDB moves down the levels instead of merging it into them.
    /// The pairs are found by drawing every key's app and type once per
    /// pair (a pass of two draws each, no memory); a type the mix weighs
    /// 0 is never drawn, so it takes no pass.
    pub fn in_name_order(&self, records: u64) -> impl Iterator<Item = u64> + '_ {
        let collections = self.mix.collections();
        let mut pairs: Vec<(usize, DataType)> = (0..APPS.len())
            .flat_map(|app| self.mix.drawn().map(move |ty| (app, ty)))
            .collect();
        pairs.sort_by_key(|(app, ty)| (APPS[*app], ty.redis_name()));
        pairs.into_iter().flat_map(move |(app, ty)| {
            let collections = collections.clone();
            (0..records).filter(move |index| {
                let (_, a, t, _) = self.head(*index, &collections);
                a == app && t == ty
            })
        })
    }

    /// The key of index `index` (0-based) of the dataset.
    pub fn shape(&self, index: u64) -> Shape {
        let (mut rng, app, data_type, big) = self.head(index, &self.mix.collections());
        let app = APPS[app];
        let elements = if big {
            self.big_elements.max(1)
        } else if data_type == DataType::String {
            1
        } else {
            match rng.below(100) {
                0..80 => rng.between(1, 10),
                80..98 => rng.log_between(11, 100),
                _ => rng.log_between(101, 1000),
            }
        };
        let ttl_ms = (!big && rng.below(100) < u64::from(self.ttl_percent))
            .then(|| rng.between(TTL_MIN_MS, TTL_MAX_MS));
        let key = format!("{app}:{}:{index:010}", data_type.redis_name()).into_bytes();
        Shape {
            key,
            data_type,
            elements,
            ttl_ms,
            big,
            content: Rng::new(rng.next_u64()),
        }
    }
}

impl Shape {
    /// A string's value.
    pub(crate) fn string_value(&mut self) -> Vec<u8> {
        let len = match self.content.below(100) {
            0..85 => self.content.between(8, 64),
            85..99 => self.content.log_between(65, 1024),
            _ => self.content.log_between(1025, 16 * 1024),
        };
        let mut out = Vec::with_capacity(len as usize);
        self.content.text(len as usize, &mut out);
        out
    }

    /// Elements `from..from + len` of a collection, as one chunk.
    pub(crate) fn chunk(&mut self, from: u64, len: u64) -> Value {
        let mut value = Value::empty(self.data_type);
        let rng = &mut self.content;
        for n in from..from + len {
            match &mut value {
                Value::Hash(pairs) => {
                    let mut v = Vec::new();
                    let len = rng.between(4, 64) as usize;
                    rng.text(len, &mut v);
                    pairs.push((format!("f:{n}").into_bytes(), v));
                }
                Value::List(items) => {
                    let mut v = Vec::new();
                    let len = rng.between(4, 64) as usize;
                    rng.text(len, &mut v);
                    items.push(v);
                }
                Value::Set(members) => members.push(format!("m:{n}").into_bytes()),
                Value::ZSet(members) => {
                    let score = rng.below(1_000_000) as f64 / 2.0;
                    members.push((format!("m:{n}").into_bytes(), score));
                }
                Value::String(_) => {}
            }
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_parses_and_refuses_nonsense() {
        let mix: Mix = "string=1,zset=3".parse().unwrap();
        assert_eq!(mix.weights, [1, 0, 0, 0, 3]);
        assert!("string=0".parse::<Mix>().is_err());
        assert!("stream=1".parse::<Mix>().is_err());
        assert!("hash".parse::<Mix>().is_err());
    }

    #[test]
    fn shapes_follow_the_seed_and_the_distribution() {
        let d = Distribution::default();
        assert_eq!(d.shape(7), d.shape(7));
        let other = Distribution {
            seed: 2,
            ..Distribution::default()
        };
        assert_ne!(d.shape(7).key, other.shape(7).key);
        let shapes: Vec<Shape> = (0..20_000).map(|i| d.shape(i)).collect();
        let strings = shapes
            .iter()
            .filter(|s| s.data_type == DataType::String)
            .count();
        assert!((9_000..11_000).contains(&strings), "{strings} strings");
        let ttl = shapes.iter().filter(|s| s.ttl_ms.is_some()).count();
        assert!((1_600..2_400).contains(&ttl), "{ttl} with a TTL");
        assert!(shapes.iter().all(|s| !s.big && s.elements <= 1000));
        let big = d.shape(99_999);
        assert!(big.big && big.elements == 100_000 && big.data_type.is_collection());
    }

    #[test]
    fn keys_come_in_name_order_each_once() {
        for d in [
            Distribution::default(),
            Distribution {
                mix: "hash=1,zset=2".parse().unwrap(),
                seed: 9,
                big_every: 50,
                ..Distribution::default()
            },
        ] {
            let order: Vec<u64> = d.in_name_order(5_000).collect();
            let mut seen = order.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..5_000).collect::<Vec<u64>>());
            let keys: Vec<Vec<u8>> = order.iter().map(|i| d.shape(*i).key).collect();
            assert!(keys.windows(2).all(|w| w[0] < w[1]), "not in name order");
            assert!(keys.iter().any(|k| k.starts_with(b"cache:")));
        }
    }
}
