//! The cardinality of a register histogram: Ertl's improved estimator,
//! as Redis 7.0's `hllCount` computes it, in the same order of floating
//! point operations.

use super::layout::{Q, REGISTERS};

/// `0.5 / ln(2)`.
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// Ertl's sigma.
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let z_prime = z;
        z += x * y;
        y += y;
        if z_prime == z {
            return z;
        }
    }
}

/// Ertl's tau.
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let z_prime = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if z_prime == z {
            return z / 3.0;
        }
    }
}

/// The estimate from how many registers hold each value.
pub(crate) fn count_histogram(histogram: &[u32; 64]) -> u64 {
    let m = REGISTERS as f64;
    let q = Q as usize;
    let mut z = m * tau((m - f64::from(histogram[q + 1])) / m);
    for j in (1..=q).rev() {
        z += f64::from(histogram[j]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(histogram[0]) / m);
    // `llroundl`: half away from zero.
    (ALPHA_INF * m * m / z).round() as u64
}
