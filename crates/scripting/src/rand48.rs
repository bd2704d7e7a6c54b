//! The generator behind scripts' `math.random`: the 48-bit linear
//! congruential generator of POSIX `lrand48`, which Redis ships as
//! `redisLrand48` so every platform gives the same sequence for a seed.
//! Redis 7.0 seeds it once at start (the POSIX default state) and again
//! only when a script calls `math.randomseed`.

/// `REDIS_LRAND48_MAX`: `INT32_MAX`.
pub const LRAND48_MAX: i32 = i32::MAX;

const A: u64 = 0x5_DEEC_E66D;
const C: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;
/// The state before any seed: `0x1234ABCD330E`.
const DEFAULT_STATE: u64 = 0x1234_ABCD_330E;

/// A generator's 48-bit state.
#[derive(Clone, Debug)]
pub struct Rand48 {
    x: u64,
}

impl Default for Rand48 {
    fn default() -> Self {
        Rand48 { x: DEFAULT_STATE }
    }
}

impl Rand48 {
    /// `redisSrand48(seed)`: the seed's 32 bits above `0x330E`.
    pub fn seed(&mut self, seed: i32) {
        self.x = ((u64::from(seed as u32)) << 16) | 0x330E;
    }

    /// `redisLrand48()`: the next value, in `0..2^31`.
    pub fn next_i32(&mut self) -> i32 {
        self.x = (A.wrapping_mul(self.x).wrapping_add(C)) & MASK;
        (self.x >> 17) as i32
    }

    /// What Redis' `math.random()` computes before scaling: a number in
    /// `[0, 1)`.
    pub fn next_unit(&mut self) -> f64 {
        f64::from(self.next_i32() % LRAND48_MAX) / f64::from(LRAND48_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::Rand48;

    #[test]
    fn default_sequence_is_posix_lrand48() {
        // Redis 7.0.15 answered 0.39646477363839 to the first
        // `tostring(math.random())` after start: 851401618 / (2^31 - 1).
        let mut r = Rand48::default();
        assert_eq!(r.next_i32(), 851_401_618);
        assert_eq!(r.next_i32(), 1_804_928_587);
        assert_eq!(r.next_i32(), 758_783_491);
    }

    #[test]
    fn seeding_restarts_the_sequence() {
        let mut a = Rand48::default();
        let mut b = Rand48::default();
        a.seed(10);
        b.next_i32();
        b.seed(10);
        assert_eq!(a.next_i32(), b.next_i32());
    }
}
