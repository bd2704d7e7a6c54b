//! Random picks shared by SPOP, SRANDMEMBER, HRANDFIELD and ZRANDMEMBER:
//! a small per-command generator, Redis' count rules, and one uniformly
//! chosen element record of any collection.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::store::KvStore;
use redcodec_codec::{Codec, Meta, SubId, SubKind, SubValue};

use crate::error::{CmdError, CmdResult};
use crate::keyspace::{corrupt, Ctx};
use crate::number::parse_i64;

/// Most elements a random pick with repetitions may return. Redis has no
/// limit and would try to build a reply of up to 2^63 elements; past this
/// bound the engine answers `ERR value is out of range` instead.
pub(crate) const MAX_RANDOM_REPEATS: u64 = 1 << 24;

/// Picks made so far by this process, mixed into every seed so commands
/// run at the same millisecond still draw differently.
static DRAWS: AtomicU64 = AtomicU64::new(0);

/// A small xorshift64* generator: random enough for SPOP and friends,
/// cheap to seed per command.
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator seeded from the command's time and a process-wide counter.
    pub(crate) fn new(now_ms: u64) -> Rng {
        let draw = DRAWS.fetch_add(1, Ordering::Relaxed);
        // splitmix64 of the mixed inputs: a well spread, non-zero state.
        let mut z = now_ms ^ draw.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` > 0; 0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// Parses the count of SRANDMEMBER / HRANDFIELD / ZRANDMEMBER: an integer
/// in `-i64::MAX..=i64::MAX`, with Redis' two error texts.
pub(crate) fn random_count_arg(arg: &[u8]) -> CmdResult<i64> {
    let n = parse_i64(arg).ok_or(CmdError::NotInteger)?;
    if n == i64::MIN {
        return Err(CmdError::other(format!(
            "ERR value is out of range, value must between {} and {}",
            -i64::MAX,
            i64::MAX
        )));
    }
    Ok(n)
}

/// Redis' rules for a random pick of `count` among `items`: a positive
/// count picks distinct items, all of them (in their order) when `count`
/// is at least their number; a negative count picks `-count` items that
/// may repeat; zero picks nothing.
pub(crate) fn random_pick<T: Clone>(
    rng: &mut Rng,
    mut items: Vec<T>,
    count: i64,
) -> CmdResult<Vec<T>> {
    if items.is_empty() || count == 0 {
        return Ok(Vec::new());
    }
    let len = items.len() as u64;
    if count < 0 {
        let picks = count.unsigned_abs();
        if picks > MAX_RANDOM_REPEATS {
            return Err(CmdError::other("ERR value is out of range"));
        }
        return Ok((0..picks)
            .map(|_| items[rng.below(len) as usize].clone())
            .collect());
    }
    let picks = count as u64;
    if picks >= len {
        return Ok(items);
    }
    // Partial Fisher–Yates: the first `picks` slots become a uniform sample.
    for i in 0..picks {
        let j = i + rng.below(len - i);
        items.swap(i as usize, j as usize);
    }
    items.truncate(picks as usize);
    Ok(items)
}

/// One uniformly chosen element record of `kind` of the live collection
/// `meta` at `key`.
pub(crate) fn random_record<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    kind: SubKind,
    key: &[u8],
    meta: &Meta,
) -> CmdResult<(SubId, SubValue)> {
    let index = Rng::new(ctx.now_ms()).below(meta.size);
    let index = usize::try_from(index).unwrap_or(0);
    let chosen = match ctx.subs(kind, key, meta, None, false).nth(index) {
        Some(record) => record?,
        // The size overstates the records: take the first one.
        None => match ctx.subs(kind, key, meta, None, false).next() {
            Some(record) => record?,
            None => return Err(corrupt(key, "a collection without elements")),
        },
    };
    Ok(chosen)
}
