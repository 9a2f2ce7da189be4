//! Setup shared by the benchmarks: deterministic data, the criterion
//! configuration and the `memcpy` reference row.
// Each bench includes this module and uses only part of it.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use zarrs::array::CodecOptions;

/// A small deterministic generator (splitmix64), so that every run and every
/// contender sees the same data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    #[allow(clippy::cast_precision_loss)]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` decoded `scale_offset` values: [-10, 2540) with ~1% NaN (offset -10,
/// scale 0.1 then maps them onto uint8, NaN mapped separately).
pub fn scale_offset_values(seed: u64, n: usize) -> Vec<f64> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            if rng.unit() < 0.01 {
                f64::NAN
            } else {
                -10.0 + rng.unit() * 2550.0
            }
        })
        .collect()
}

/// The criterion settings every bench uses; only the measurement time
/// differs (longer where one iteration is slow).
pub fn config(measurement: Duration) -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(measurement)
}

/// The reference row `memcpy`: `copy_from_slice` of `input` into a
/// preallocated buffer.
pub fn memcpy(group: &mut BenchmarkGroup<'_, WallTime>, input: &[u8]) {
    let mut copy = vec![0u8; input.len()];
    group.bench_function("memcpy", |b| {
        b.iter(|| {
            copy.copy_from_slice(black_box(input));
            black_box(&mut copy);
        });
    });
}

/// Threads: `(label, options, pool)`; `/1` runs inside a one-thread pool.
pub fn thread_modes() -> Vec<(&'static str, CodecOptions, Option<rayon::ThreadPool>)> {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    vec![
        (
            "1",
            CodecOptions::default().with_concurrent_target(1),
            Some(one),
        ),
        ("all", CodecOptions::default(), None),
    ]
}

/// `f` inside `pool` when there is one (the `/1` rows), else as it is.
pub fn run<R>(pool: Option<&rayon::ThreadPool>, f: impl FnOnce() -> R + Send) -> R
where
    R: Send,
{
    match pool {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// The size of the largest file under `dir`, in bytes.
pub fn largest_file(dir: &std::path::Path) -> u64 {
    let mut largest = 0;
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let entry = entry.expect("entry");
        let meta = entry.metadata().expect("metadata");
        largest = largest.max(if meta.is_dir() {
            largest_file(&entry.path())
        } else {
            meta.len()
        });
    }
    largest
}
