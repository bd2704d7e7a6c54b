//! What the benchmarks share.

use std::time::Duration;

use criterion::Criterion;

/// Criterion as the benchmarks of many short operations run it: 10 samples
/// after 100 ms of warm-up, each group measured for `measurement`.
pub fn quick(measurement: Duration) -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(measurement)
}
