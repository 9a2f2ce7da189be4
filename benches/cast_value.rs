//! `cast_value` kernels: this crate vs `zarr-cast-value` vs a plain memcpy.
//!
//! Every group runs the three contenders on the same chunk of 4 Mi elements:
//!
//! - `ours`: [`CastPlan::cast_bytes`] into a preallocated output;
//! - `zarr-cast-value`: the peer crate's matching `convert_slice_*` function
//!   (the kernel zarr-python uses) into a preallocated output;
//! - `memcpy`: `copy_from_slice` of the *decoded* array (the float64 side of
//!   float64 <-> uint8, ...) into a preallocated buffer: the reference.
//!
//! Throughput is the size of the decoded array in all three, so the numbers
//! of one group compare directly.
//!
//! Run with `cargo bench --bench cast_value -- --noplot`.

mod common;

use std::hint::black_box;
use std::time::Duration;

use bytemuck::Pod;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zarr_cast_value as peer;
use zarrs_extension_codecs::kernels::cast::{CastPlan, OutOfRangeMode, RoundingMode};
use zarrs_extension_codecs::numeric::NumericType;

use common::{Rng, memcpy};

/// Elements per chunk.
const N: usize = 4 << 20;

/// Which side of the cast is the decoded array (the memcpy reference).
#[derive(Clone, Copy)]
enum Decoded {
    Source,
    Target,
}

/// One group: ours, the peer and memcpy on `src`.
fn bench_case<S: Pod, D: Pod + PartialEq + std::fmt::Debug>(
    c: &mut Criterion,
    name: &str,
    src: &[S],
    decoded: Decoded,
    plan: &CastPlan,
    peer_fn: impl Fn(&[S], &mut [D]),
    same: impl Fn(&D, &D) -> bool,
) {
    let mut ours_out = vec![D::zeroed(); src.len()];
    let mut peer_out = vec![D::zeroed(); src.len()];
    plan.cast_bytes(
        bytemuck::cast_slice(src),
        bytemuck::cast_slice_mut(&mut ours_out),
    )
    .expect("ours");
    peer_fn(src, &mut peer_out);
    // Both implement the same specification: check that they agree here.
    if let Some(i) = (0..src.len()).find(|&i| !same(&ours_out[i], &peer_out[i])) {
        panic!(
            "{name}: element {i}: ours {:?}, zarr-cast-value {:?}",
            ours_out[i], peer_out[i]
        );
    }

    let decoded_bytes: Vec<u8> = match decoded {
        Decoded::Source => bytemuck::cast_slice(src).to_vec(),
        Decoded::Target => bytemuck::cast_slice(&ours_out).to_vec(),
    };

    let mut group = c.benchmark_group(format!("cast_value/{name}"));
    group.throughput(Throughput::Bytes(decoded_bytes.len() as u64));
    group.bench_function("ours", |b| {
        b.iter(|| {
            plan.cast_bytes(
                bytemuck::cast_slice(black_box(src)),
                bytemuck::cast_slice_mut(&mut ours_out),
            )
            .unwrap();
            black_box(&mut ours_out);
        });
    });
    group.bench_function("zarr-cast-value", |b| {
        b.iter(|| {
            peer_fn(black_box(src), &mut peer_out);
            black_box(&mut peer_out);
        });
    });
    memcpy(&mut group, &decoded_bytes);
    group.finish();
}

fn exact<T: PartialEq>(a: &T, b: &T) -> bool {
    a == b
}

fn same_f64(a: &f64, b: &f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// float64 -> uint8, nearest-even, `scalar_map` NaN -> 0, no `out_of_range`.
/// Values in [0, 255) with fractional parts, ~1% NaN.
fn encode_f64_u8(c: &mut Criterion) {
    let mut rng = Rng(1);
    let src: Vec<f64> = (0..N)
        .map(|_| {
            if rng.unit() < 0.01 {
                f64::NAN
            } else {
                rng.unit() * 255.0
            }
        })
        .collect();
    let plan = CastPlan::new(
        NumericType::Float64,
        NumericType::UInt8,
        RoundingMode::NearestEven,
        None,
        vec![(f64::NAN.to_ne_bytes().to_vec(), vec![0u8])],
    )
    .expect("valid scalar_map");
    let config = peer::FloatToIntConfig {
        map_entries: vec![peer::MapEntry {
            src: f64::NAN,
            tgt: 0u8,
        }],
        rounding: peer::RoundingMode::NearestEven,
        out_of_range: None,
    };
    bench_case(
        c,
        "f64_to_u8_nearest_even_nan_map",
        &src,
        Decoded::Source,
        &plan,
        |s, d| peer::convert_slice_float_to_int(s, d, &config).unwrap(),
        exact,
    );
}

/// float32 -> int16, towards-zero, clamp; ~3.6% of the values out of range.
#[allow(clippy::cast_possible_truncation)]
fn encode_f32_i16(c: &mut Criterion) {
    let mut rng = Rng(2);
    let src: Vec<f32> = (0..N)
        .map(|_| ((rng.unit() * 2.0 - 1.0) * 34_000.0) as f32)
        .collect();
    let plan = CastPlan::new(
        NumericType::Float32,
        NumericType::Int16,
        RoundingMode::TowardsZero,
        Some(OutOfRangeMode::Clamp),
        vec![],
    )
    .expect("valid scalar_map");
    let config = peer::FloatToIntConfig {
        map_entries: vec![],
        rounding: peer::RoundingMode::TowardsZero,
        out_of_range: Some(peer::OutOfRangeMode::Clamp),
    };
    bench_case(
        c,
        "f32_to_i16_towards_zero_clamp",
        &src,
        Decoded::Source,
        &plan,
        |s, d: &mut [i16]| peer::convert_slice_float_to_int(s, d, &config).unwrap(),
        exact,
    );
}

/// uint16 -> uint8, all values in range, no `out_of_range`.
#[allow(clippy::cast_possible_truncation)]
fn encode_u16_u8(c: &mut Criterion) {
    let mut rng = Rng(3);
    let src: Vec<u16> = (0..N).map(|_| (rng.next_u64() % 256) as u16).collect();
    let plan = CastPlan::new(
        NumericType::UInt16,
        NumericType::UInt8,
        RoundingMode::NearestEven,
        None,
        vec![],
    )
    .expect("valid scalar_map");
    let config = peer::IntToIntConfig {
        map_entries: vec![],
        out_of_range: None,
    };
    bench_case(
        c,
        "u16_to_u8",
        &src,
        Decoded::Source,
        &plan,
        |s, d: &mut [u8]| peer::convert_slice_int_to_int(s, d, &config).unwrap(),
        exact,
    );
}

/// uint8 -> float64 with `scalar_map` 0 -> NaN (the decode of the first case).
#[allow(clippy::cast_possible_truncation)]
fn decode_u8_f64(c: &mut Criterion) {
    let mut rng = Rng(4);
    let src: Vec<u8> = (0..N).map(|_| rng.next_u64() as u8).collect();
    let plan = CastPlan::new(
        NumericType::UInt8,
        NumericType::Float64,
        RoundingMode::NearestEven,
        None,
        vec![(vec![0u8], f64::NAN.to_ne_bytes().to_vec())],
    )
    .expect("valid scalar_map");
    let config = peer::IntToFloatConfig {
        map_entries: vec![peer::MapEntry {
            src: 0u8,
            tgt: f64::NAN,
        }],
        rounding: peer::RoundingMode::NearestEven,
        out_of_range: None,
    };
    bench_case(
        c,
        "u8_to_f64_zero_map",
        &src,
        Decoded::Target,
        &plan,
        |s, d| peer::convert_slice_int_to_float(s, d, &config).unwrap(),
        same_f64,
    );
}

/// int16 -> float32 (exact).
#[allow(clippy::cast_possible_truncation)]
fn decode_i16_f32(c: &mut Criterion) {
    let mut rng = Rng(5);
    let src: Vec<i16> = (0..N).map(|_| rng.next_u64() as i16).collect();
    let plan = CastPlan::new(
        NumericType::Int16,
        NumericType::Float32,
        RoundingMode::NearestEven,
        None,
        vec![],
    )
    .expect("valid scalar_map");
    let config = peer::IntToFloatConfig {
        map_entries: vec![],
        rounding: peer::RoundingMode::NearestEven,
        out_of_range: None,
    };
    bench_case(
        c,
        "i16_to_f32",
        &src,
        Decoded::Target,
        &plan,
        |s, d| peer::convert_slice_int_to_float(s, d, &config).unwrap(),
        |a: &f32, b: &f32| a.to_bits() == b.to_bits(),
    );
}

/// uint8 -> uint16 (exact).
#[allow(clippy::cast_possible_truncation)]
fn decode_u8_u16(c: &mut Criterion) {
    let mut rng = Rng(6);
    let src: Vec<u8> = (0..N).map(|_| rng.next_u64() as u8).collect();
    let plan = CastPlan::new(
        NumericType::UInt8,
        NumericType::UInt16,
        RoundingMode::NearestEven,
        None,
        vec![],
    )
    .expect("valid scalar_map");
    let config = peer::IntToIntConfig {
        map_entries: vec![],
        out_of_range: None,
    };
    bench_case(
        c,
        "u8_to_u16",
        &src,
        Decoded::Target,
        &plan,
        |s, d: &mut [u16]| peer::convert_slice_int_to_int(s, d, &config).unwrap(),
        exact,
    );
}

criterion_group! {
    name = benches;
    config = common::config(Duration::from_millis(2500));
    targets = encode_f64_u8, encode_f32_i16, encode_u16_u8, decode_u8_f64, decode_i16_f32, decode_u8_u16
}
criterion_main!(benches);
