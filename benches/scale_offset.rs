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

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytemuck::Pod;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zarrs_extension_codecs::kernels::scale_offset::{decode_bytes, encode_bytes};
use zarrs_extension_codecs::numeric::NumericType;

use common::{memcpy, scale_offset_values};

/// Elements per chunk.
const N: usize = 4 << 20;

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
    memcpy(&mut group, input);
    group.finish();
}

/// The groups `{prefix}_encode` (of `decoded`) and `{prefix}_decode` (of its
/// encoding).
fn encode_and_decode<T: Pod>(
    c: &mut Criterion,
    prefix: &str,
    data_type: NumericType,
    decoded: &[T],
    offset: T,
    scale: T,
) {
    let mut encoded = decoded.to_vec();
    encode_bytes(
        data_type,
        bytemuck::cast_slice_mut(&mut encoded),
        bytemuck::bytes_of(&offset),
        bytemuck::bytes_of(&scale),
    )
    .unwrap();
    let name = |direction| format!("{prefix}_{direction}");
    bench_case(
        c,
        &name("encode"),
        data_type,
        decoded,
        offset,
        scale,
        encode_bytes,
    );
    bench_case(
        c,
        &name("decode"),
        data_type,
        &encoded,
        offset,
        scale,
        decode_bytes,
    );
}

fn f32_cases(c: &mut Criterion) {
    #[allow(clippy::cast_possible_truncation)]
    let decoded: Vec<f32> = scale_offset_values(1, N)
        .into_iter()
        .map(|v| v as f32)
        .collect();
    encode_and_decode(c, "f32", NumericType::Float32, &decoded, -10.0, 0.1);
}

fn f64_cases(c: &mut Criterion) {
    let decoded = scale_offset_values(2, N);
    encode_and_decode(c, "f64", NumericType::Float64, &decoded, -10.0, 0.1);
}

criterion_group! {
    name = benches;
    config = common::config(Duration::from_millis(2500));
    targets = f32_cases, f64_cases
}
criterion_main!(benches);
