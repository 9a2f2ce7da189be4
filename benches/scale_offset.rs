//! `scale_offset` kernels vs a plain memcpy.
//!
//! Every group runs on the same chunk of 4 Mi elements (offset -10, scale
//! 0.1, values in [-10, 2540) with ~1% NaN, i.e. what a `scale_offset` +
//! `cast_value` to uint8 pipeline sees):
//!
//! - `ours`: [`encode_bytes`] / [`decode_bytes`] in place. The kernels work in
//!   place, so the buffer is refilled with the input before every call, and
//!   only the kernel is timed;
//! - `memcpy`: `copy_from_slice` of the same bytes into a preallocated buffer,
//!   the reference (it reads and writes as many bytes as the in-place kernel).
//!
//! There is no peer here: zarr-python does this with numpy.
//!
//! Run with `cargo bench --bench scale_offset -- --noplot`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytemuck::Pod;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zarrs_extension_codecs::kernels::scale_offset::{decode_bytes, encode_bytes};
use zarrs_extension_codecs::numeric::NumericType;

/// Elements per chunk.
const N: usize = 4 << 20;

/// splitmix64, so that every run sees the same data.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    #[allow(clippy::cast_precision_loss)]
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Decoded values: [-10, 2540) with ~1% NaN.
fn decoded_values(seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    (0..N)
        .map(|_| {
            if rng.unit() < 0.01 {
                f64::NAN
            } else {
                -10.0 + rng.unit() * 2550.0
            }
        })
        .collect()
}

type Kernel = fn(
    NumericType,
    &mut [u8],
    &[u8],
    &[u8],
) -> Result<(), zarrs_extension_codecs::kernels::scale_offset::ScaleOffsetError>;

/// One group: the in-place kernel on `input` vs memcpy of it.
fn bench_case<T: Pod>(
    c: &mut Criterion,
    name: &str,
    data_type: NumericType,
    input: &[T],
    offset: T,
    scale: T,
    kernel: Kernel,
) {
    let input: &[u8] = bytemuck::cast_slice(input);
    let (offset, scale) = (bytemuck::bytes_of(&offset), bytemuck::bytes_of(&scale));
    // An aligned buffer, refilled before every timed call.
    let mut buffer = vec![T::zeroed(); input.len() / size_of::<T>()];
    let mut copy = vec![0u8; input.len()];

    let mut group = c.benchmark_group(format!("scale_offset/{name}"));
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_function("ours", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buffer);
                bytes.copy_from_slice(input);
                let start = Instant::now();
                kernel(data_type, black_box(bytes), offset, scale).unwrap();
                total += start.elapsed();
                black_box(&mut buffer);
            }
            total
        });
    });
    group.bench_function("memcpy", |b| {
        b.iter(|| {
            copy.copy_from_slice(black_box(input));
            black_box(&mut copy);
        });
    });
    group.finish();
}

fn f32_cases(c: &mut Criterion) {
    #[allow(clippy::cast_possible_truncation)]
    let decoded: Vec<f32> = decoded_values(1).into_iter().map(|v| v as f32).collect();
    let (offset, scale) = (-10.0f32, 0.1f32);
    let mut encoded = decoded.clone();
    encode_bytes(
        NumericType::Float32,
        bytemuck::cast_slice_mut(&mut encoded),
        &offset.to_ne_bytes(),
        &scale.to_ne_bytes(),
    )
    .unwrap();
    bench_case(
        c,
        "f32_encode",
        NumericType::Float32,
        &decoded,
        offset,
        scale,
        encode_bytes,
    );
    bench_case(
        c,
        "f32_decode",
        NumericType::Float32,
        &encoded,
        offset,
        scale,
        decode_bytes,
    );
}

fn f64_cases(c: &mut Criterion) {
    let decoded = decoded_values(2);
    let (offset, scale) = (-10.0f64, 0.1f64);
    let mut encoded = decoded.clone();
    encode_bytes(
        NumericType::Float64,
        bytemuck::cast_slice_mut(&mut encoded),
        &offset.to_ne_bytes(),
        &scale.to_ne_bytes(),
    )
    .unwrap();
    bench_case(
        c,
        "f64_encode",
        NumericType::Float64,
        &decoded,
        offset,
        scale,
        encode_bytes,
    );
    bench_case(
        c,
        "f64_decode",
        NumericType::Float64,
        &encoded,
        offset,
        scale,
        decode_bytes,
    );
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(2500))
}

criterion_group! {
    name = benches;
    config = config();
    targets = f32_cases, f64_cases
}
criterion_main!(benches);
