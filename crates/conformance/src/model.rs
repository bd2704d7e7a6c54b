//! An in-memory reference model of Redis semantics for the commands the
//! property tests generate. It is deliberately simple — plain collections,
//! no encodings — so that it is easy to check by reading.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use redcodec_codec::{RelativeExpiry, TtlResolution};
use redcodec_engine::internals::number::{format_score, parse_i64};
use redcodec_engine::Reply;

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// A value in the model.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Str(Vec<u8>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
    List(VecDeque<Vec<u8>>),
    Set(BTreeSet<Vec<u8>>),
    ZSet(BTreeMap<Vec<u8>, f64>),
}

#[derive(Clone, Debug)]
struct Entry {
    value: Value,
    /// Absolute expiry in ms; 0: none.
    expire_ms: u64,
}

/// The model: keys with values and expiries, and a clock.
#[derive(Debug)]
pub struct Model {
    keys: BTreeMap<Vec<u8>, Entry>,
    now_ms: u64,
    /// Expiries are stored in multiples of this many ms (1: Redis).
    expiry_unit_ms: u64,
    /// How TTLs (relative expiries) are stored.
    relative_expiry: RelativeExpiry,
}

impl Model {
    /// An empty model of Redis (millisecond expiries) whose clock reads
    /// `now_ms`.
    pub fn new(now_ms: u64) -> Model {
        Model::with_ttl_resolution(now_ms, TtlResolution::Millis)
    }

    /// An empty model whose expiries have the resolution a format declares:
    /// with [`TtlResolution::Seconds`] an absolute expiry is rounded up to a
    /// whole second, as the engine stores it (`Ctx::set_expire`).
    pub fn with_ttl_resolution(now_ms: u64, ttl: TtlResolution) -> Model {
        Model::with_expiry_rules(now_ms, ttl, RelativeExpiry::Exact)
    }

    /// An empty model storing expiries as a format declares them: with
    /// [`RelativeExpiry::SecondsMinusOne`] a TTL of `ttl_ms` set at
    /// `now_ms` keeps the key live through the last millisecond of second
    /// `now_ms / 1000 + ceil(ttl_ms / 1000) - 1`, as the engine stores it
    /// (`stored_expiry_at`).
    pub fn with_expiry_rules(now_ms: u64, ttl: TtlResolution, relative: RelativeExpiry) -> Model {
        Model {
            keys: BTreeMap::new(),
            now_ms,
            expiry_unit_ms: match ttl {
                TtlResolution::Millis => 1,
                TtlResolution::Seconds => 1000,
            },
            relative_expiry: relative,
        }
    }

    /// The absolute expiry stored for a TTL of `ttl_ms` (> 0) set now.
    fn stored_expiry(&self, ttl_ms: u64) -> u64 {
        match self.relative_expiry {
            RelativeExpiry::Exact => {
                let at_ms = self.now_ms + ttl_ms;
                at_ms.div_ceil(self.expiry_unit_ms) * self.expiry_unit_ms
            }
            RelativeExpiry::SecondsMinusOne => {
                (self.now_ms / 1000 + ttl_ms.div_ceil(1000) - 1) * 1000 + 999
            }
        }
    }

    /// Lets time pass.
    pub fn advance_ms(&mut self, ms: u64) {
        self.now_ms += ms;
    }

    fn live(&mut self, key: &[u8]) -> Option<&mut Entry> {
        let now = self.now_ms;
        if self
            .keys
            .get(key)
            .is_some_and(|e| e.expire_ms != 0 && e.expire_ms < now)
        {
            self.keys.remove(key);
        }
        self.keys.get_mut(key)
    }

    /// Runs `change` on the value of `key` when it has the variant `pick`
    /// accepts, then drops the key if that emptied it; `Ok(None)` when the
    /// key is missing, `Err(WRONGTYPE)` for another type.
    fn change<T, R>(
        &mut self,
        key: &[u8],
        pick: impl FnOnce(&mut Value) -> Option<&mut T>,
        change: impl FnOnce(&mut T) -> R,
    ) -> Result<Option<R>, Reply> {
        let out = self.typed(key, pick)?.map(change);
        self.tidy(key);
        Ok(out)
    }

    /// The members of the sorted set `key` in Redis order (none when the
    /// key is missing), or `Err(WRONGTYPE)`.
    fn members(&mut self, key: &[u8]) -> Result<Vec<(Vec<u8>, f64)>, Reply> {
        Ok(self
            .typed(key, as_zset)?
            .map(|z| ordered(z))
            .unwrap_or_default())
    }

    /// Drops an emptied collection.
    fn tidy(&mut self, key: &[u8]) {
        let empty = match self.keys.get(key).map(|e| &e.value) {
            Some(Value::Hash(h)) => h.is_empty(),
            Some(Value::List(l)) => l.is_empty(),
            Some(Value::Set(s)) => s.is_empty(),
            Some(Value::ZSet(z)) => z.is_empty(),
            _ => false,
        };
        if empty {
            self.keys.remove(key);
        }
    }

    /// The live value of `key` if it has the variant `pick` accepts;
    /// `Err(WRONGTYPE)` for another type; `Ok(None)` when missing.
    fn typed<T>(
        &mut self,
        key: &[u8],
        pick: impl FnOnce(&mut Value) -> Option<&mut T>,
    ) -> Result<Option<&mut T>, Reply> {
        match self.live(key) {
            None => Ok(None),
            Some(e) => pick(&mut e.value).map(Some).ok_or(Reply::error(WRONGTYPE)),
        }
    }

    /// The value of `key`, created empty with `make` when missing.
    fn typed_or_new<T>(
        &mut self,
        key: &[u8],
        make: fn() -> Value,
        pick: fn(&mut Value) -> Option<&mut T>,
    ) -> Result<&mut T, Reply> {
        if self.live(key).is_none() {
            self.keys.insert(
                key.to_vec(),
                Entry {
                    value: make(),
                    expire_ms: 0,
                },
            );
        }
        let e = self.keys.get_mut(key).expect("just inserted");
        pick(&mut e.value).ok_or(Reply::error(WRONGTYPE))
    }

    /// Runs one command (name upper-case, as generated) and returns Redis'
    /// reply.
    pub fn execute(&mut self, args: &[Vec<u8>]) -> Reply {
        match self.run(args) {
            Ok(r) | Err(r) => r,
        }
    }

    fn run(&mut self, a: &[Vec<u8>]) -> Result<Reply, Reply> {
        let name = String::from_utf8_lossy(&a[0]).to_ascii_uppercase();
        let k = a.get(1).cloned().unwrap_or_default();
        let k = k.as_slice();
        Ok(match name.as_str() {
            "GET" => match self.typed(k, as_str)? {
                Some(v) => Reply::bulk(v.clone()),
                None => Reply::Nil,
            },
            "SET" => {
                let expire = match a.get(3) {
                    Some(_) => self.stored_expiry(int(&a[4]) as u64),
                    None => 0,
                };
                self.keys.insert(
                    k.to_vec(),
                    Entry {
                        value: Value::Str(a[2].clone()),
                        expire_ms: expire,
                    },
                );
                Reply::ok()
            }
            "APPEND" => {
                let v = self.typed_or_new(k, || Value::Str(Vec::new()), as_str)?;
                v.extend_from_slice(&a[2]);
                Reply::Integer(v.len() as i64)
            }
            "STRLEN" => Reply::Integer(self.typed(k, as_str)?.map_or(0, |v| v.len() as i64)),
            "INCR" => {
                let current = match self.typed(k, as_str)? {
                    Some(v) => parse_i64(v)
                        .ok_or(Reply::error("ERR value is not an integer or out of range"))?,
                    None => 0,
                };
                let next = current
                    .checked_add(1)
                    .ok_or(Reply::error("ERR increment or decrement would overflow"))?;
                let v = self.typed_or_new(k, || Value::Str(Vec::new()), as_str)?;
                *v = next.to_string().into_bytes();
                Reply::Integer(next)
            }
            "DEL" => Reply::Integer(i64::from(
                self.live(k).is_some() && self.keys.remove(k).is_some(),
            )),
            "EXISTS" => Reply::Integer(i64::from(self.live(k).is_some())),
            "TYPE" => Reply::Status(
                match self.live(k).map(|e| &e.value) {
                    None => "none",
                    Some(Value::Str(_)) => "string",
                    Some(Value::Hash(_)) => "hash",
                    Some(Value::List(_)) => "list",
                    Some(Value::Set(_)) => "set",
                    Some(Value::ZSet(_)) => "zset",
                }
                .into(),
            ),
            "PEXPIRE" => {
                let ms = int(&a[2]);
                let at = self.stored_expiry(ms.max(1) as u64);
                match self.live(k) {
                    None => Reply::Integer(0),
                    Some(_) if ms <= 0 => {
                        self.keys.remove(k);
                        Reply::Integer(1)
                    }
                    Some(e) => {
                        e.expire_ms = at;
                        Reply::Integer(1)
                    }
                }
            }
            "PTTL" => {
                let now = self.now_ms;
                Reply::Integer(match self.live(k) {
                    None => -2,
                    Some(e) if e.expire_ms == 0 => -1,
                    Some(e) => (e.expire_ms - now) as i64,
                })
            }
            "PERSIST" => match self.live(k) {
                Some(e) if e.expire_ms != 0 => {
                    e.expire_ms = 0;
                    Reply::Integer(1)
                }
                _ => Reply::Integer(0),
            },
            "RENAME" => {
                let Some(e) = self.live(k).cloned() else {
                    return Err(Reply::error("ERR no such key"));
                };
                self.keys.remove(k);
                self.keys.insert(a[2].clone(), e);
                Reply::ok()
            }
            "HSET" => {
                let h = self.typed_or_new(k, || Value::Hash(BTreeMap::new()), as_hash)?;
                Reply::Integer(i64::from(h.insert(a[2].clone(), a[3].clone()).is_none()))
            }
            "HDEL" => Reply::Integer(
                self.change(k, as_hash, |h| i64::from(h.remove(&a[2]).is_some()))?
                    .unwrap_or(0),
            ),
            "HGET" => Reply::opt_bulk(self.typed(k, as_hash)?.and_then(|h| h.get(&a[2]).cloned())),
            "HLEN" => Reply::Integer(self.typed(k, as_hash)?.map_or(0, |h| h.len() as i64)),
            "HGETALL" => Reply::bulks(
                self.typed(k, as_hash)?
                    .map(|h| {
                        h.iter()
                            .flat_map(|(f, v)| [f.clone(), v.clone()])
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default(),
            ),
            "LPUSH" | "RPUSH" => {
                let l = self.typed_or_new(k, || Value::List(VecDeque::new()), as_list)?;
                if name == "LPUSH" {
                    l.push_front(a[2].clone());
                } else {
                    l.push_back(a[2].clone());
                }
                Reply::Integer(l.len() as i64)
            }
            "LPOP" | "RPOP" => Reply::opt_bulk(
                self.change(k, as_list, |l| {
                    if name == "LPOP" {
                        l.pop_front()
                    } else {
                        l.pop_back()
                    }
                })?
                .flatten(),
            ),
            "LLEN" => Reply::Integer(self.typed(k, as_list)?.map_or(0, |l| l.len() as i64)),
            "LRANGE" => {
                let (start, stop) = (int(&a[2]), int(&a[3]));
                let items: Vec<Vec<u8>> = self
                    .typed(k, as_list)?
                    .map(|l| l.iter().cloned().collect())
                    .unwrap_or_default();
                Reply::bulks(slice(&items, start, stop))
            }
            "LINDEX" => {
                let i = int(&a[2]);
                let v = self
                    .typed(k, as_list)?
                    .and_then(|l| Some(l[position(i, l.len())?].clone()));
                Reply::opt_bulk(v)
            }
            "LSET" => {
                let i = int(&a[2]);
                match self.typed(k, as_list)? {
                    None => return Err(Reply::error("ERR no such key")),
                    Some(l) => {
                        let Some(i) = position(i, l.len()) else {
                            return Err(Reply::error("ERR index out of range"));
                        };
                        l[i] = a[3].clone();
                        Reply::ok()
                    }
                }
            }
            "LREM" => {
                let count = int(&a[2]);
                Reply::Integer(
                    self.change(k, as_list, |l| lrem(l, count, &a[3]))?
                        .unwrap_or(0),
                )
            }
            "LINSERT" => {
                let before = a[2].eq_ignore_ascii_case(b"BEFORE");
                match self.typed(k, as_list)? {
                    None => Reply::Integer(0),
                    Some(l) => match l.iter().position(|v| *v == a[3]) {
                        None => Reply::Integer(-1),
                        Some(p) => {
                            l.insert(if before { p } else { p + 1 }, a[4].clone());
                            Reply::Integer(l.len() as i64)
                        }
                    },
                }
            }
            "LTRIM" => {
                let (start, stop) = (int(&a[2]), int(&a[3]));
                self.change(k, as_list, |l| {
                    let items: Vec<Vec<u8>> = l.iter().cloned().collect();
                    *l = slice(&items, start, stop).into();
                })?;
                Reply::ok()
            }
            "SADD" => {
                let s = self.typed_or_new(k, || Value::Set(BTreeSet::new()), as_set)?;
                Reply::Integer(i64::from(s.insert(a[2].clone())))
            }
            "SREM" => Reply::Integer(
                self.change(k, as_set, |s| i64::from(s.remove(&a[2])))?
                    .unwrap_or(0),
            ),
            "SCARD" => Reply::Integer(self.typed(k, as_set)?.map_or(0, |s| s.len() as i64)),
            "SISMEMBER" => Reply::Integer(i64::from(
                self.typed(k, as_set)?.is_some_and(|s| s.contains(&a[2])),
            )),
            "SMEMBERS" => Reply::bulks(
                self.typed(k, as_set)?
                    .map(|s| s.iter().cloned().collect::<Vec<_>>())
                    .unwrap_or_default(),
            ),
            "ZADD" => {
                let score = float(&a[2]);
                let z = self.typed_or_new(k, || Value::ZSet(BTreeMap::new()), as_zset)?;
                Reply::Integer(i64::from(z.insert(a[3].clone(), score).is_none()))
            }
            "ZINCRBY" => {
                let by = float(&a[2]);
                let z = self.typed_or_new(k, || Value::ZSet(BTreeMap::new()), as_zset)?;
                let s = z.entry(a[3].clone()).or_insert(0.0);
                *s += by;
                Reply::bulk(format_score(*s))
            }
            "ZREM" => Reply::Integer(
                self.change(k, as_zset, |z| i64::from(z.remove(&a[2]).is_some()))?
                    .unwrap_or(0),
            ),
            "ZCARD" => Reply::Integer(self.typed(k, as_zset)?.map_or(0, |z| z.len() as i64)),
            "ZSCORE" => Reply::opt_bulk(
                self.typed(k, as_zset)?
                    .and_then(|z| z.get(&a[2]).map(|s| format_score(*s).into_bytes())),
            ),
            "ZRANK" => {
                let rank = self.members(k)?.iter().position(|(m, _)| *m == a[2]);
                rank.map_or(Reply::Nil, |r| Reply::Integer(r as i64))
            }
            "ZRANGE" => {
                let (start, stop) = (int(&a[2]), int(&a[3]));
                let picked = slice(&self.members(k)?, start, stop);
                Reply::bulks(
                    picked
                        .into_iter()
                        .flat_map(|(m, s)| [m, format_score(s).into_bytes()]),
                )
            }
            "ZRANGEBYSCORE" => {
                let (min, max) = (float(&a[2]), float(&a[3]));
                Reply::bulks(
                    self.members(k)?
                        .into_iter()
                        .filter(|(_, s)| *s >= min && *s <= max)
                        .map(|(m, _)| m),
                )
            }
            other => panic!("the model does not know {other}"),
        })
    }
}

fn int(b: &[u8]) -> i64 {
    parse_i64(b).expect("generated integers are valid")
}

fn float(b: &[u8]) -> f64 {
    std::str::from_utf8(b)
        .ok()
        .and_then(|s| s.parse().ok())
        .expect("generated floats are valid")
}

fn as_str(v: &mut Value) -> Option<&mut Vec<u8>> {
    match v {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

fn as_hash(v: &mut Value) -> Option<&mut BTreeMap<Vec<u8>, Vec<u8>>> {
    match v {
        Value::Hash(h) => Some(h),
        _ => None,
    }
}

fn as_list(v: &mut Value) -> Option<&mut VecDeque<Vec<u8>>> {
    match v {
        Value::List(l) => Some(l),
        _ => None,
    }
}

fn as_set(v: &mut Value) -> Option<&mut BTreeSet<Vec<u8>>> {
    match v {
        Value::Set(s) => Some(s),
        _ => None,
    }
}

fn as_zset(v: &mut Value) -> Option<&mut BTreeMap<Vec<u8>, f64>> {
    match v {
        Value::ZSet(z) => Some(z),
        _ => None,
    }
}

/// Members in Redis order: by score, then member bytes.
fn ordered(z: &BTreeMap<Vec<u8>, f64>) -> Vec<(Vec<u8>, f64)> {
    let mut v: Vec<(Vec<u8>, f64)> = z.iter().map(|(m, s)| (m.clone(), *s)).collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// Redis' list index `i` into `len` items (negative counts from the end),
/// or `None` when it falls outside.
fn position(i: i64, len: usize) -> Option<usize> {
    let len = len as i64;
    let i = if i < 0 { len + i } else { i };
    (0..len).contains(&i).then_some(i as usize)
}

/// Redis' `start..=stop` with negative indexes: both counted from the
/// front, then clamped to the items.
fn slice<T: Clone>(items: &[T], start: i64, stop: i64) -> Vec<T> {
    let len = items.len() as i64;
    let from_front = |i: i64| if i < 0 { len + i } else { i };
    let (start, stop) = (from_front(start).max(0), from_front(stop).min(len - 1));
    if start > stop {
        return Vec::new();
    }
    items[start as usize..=stop as usize].to_vec()
}

fn lrem(l: &mut VecDeque<Vec<u8>>, count: i64, v: &[u8]) -> i64 {
    let limit = if count == 0 {
        usize::MAX
    } else {
        count.unsigned_abs() as usize
    };
    let mut removed = 0;
    let mut items: Vec<Vec<u8>> = l.iter().cloned().collect();
    if count < 0 {
        items.reverse();
    }
    items.retain(|x| {
        if removed < limit && x == v {
            removed += 1;
            false
        } else {
            true
        }
    });
    if count < 0 {
        items.reverse();
    }
    *l = items.into();
    removed as i64
}
