//! `transpose`: this crate's codec vs zarrs' built-in `TransposeCodec` vs a
//! plain memcpy, on the same data in one run.
//!
//! Cases (`float32` chunks of several MiB, the shapes of the issue):
//! - `2d_f32`: 2048 x 2048 (16 MiB), order `[1, 0]`;
//! - `3d_f32`: 128 x 128 x 128 (8 MiB), order `[2, 0, 1]`;
//! - `2d_f32_odd`: 2000 x 2100 (16 MiB), order `[1, 0]`: rows that are not a
//!   power of two bytes apart;
//! - `2d_u8`: 4096 x 4096 (16 MiB), order `[1, 0]` (one-byte elements, the
//!   hardest case for a blocked copy).
//!
//! Each is measured encoding and decoding through zarrs' codec API
//! (`ArrayToArrayCodecTraits::encode` / `decode`, which allocate the output):
//! - `ours`: this crate's [`TransposeCodec`](OurTranspose);
//! - `builtin`: zarrs' `TransposeCodec` (the `transpose` feature);
//! - `memcpy`: `copy_from_slice` of the same decoded bytes into a
//!   preallocated buffer, the reference.
//!
//! Two more contenders show where the time goes:
//! - `kernel`: this crate's kernel (`permute_bytes`) into a preallocated
//!   buffer, i.e. the codec without its allocation;
//! - `to_vec`: the same bytes copied into a fresh allocation, the floor for
//!   any codec that allocates its output.
//!
//! Throughput is in decoded bytes. Run with
//! `cargo bench --bench transpose -- --noplot`.

mod common;

use std::hint::black_box;
use std::num::NonZeroU64;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zarrs::array::codec::api::{ArrayBytes, ArrayToArrayCodecTraits, CodecOptions};
use zarrs::array::codec::{TransposeCodec as BuiltinTranspose, TransposeOrder};
use zarrs::array::{DataType, FillValue, data_type};
use zarrs_extension_codecs::codec::transpose::TransposeCodec as OurTranspose;
use zarrs_extension_codecs::kernels::transpose::{inverse_permutation, permute_bytes};

use common::{Rng, memcpy};

/// Deterministic bytes, the same every run.
fn bytes(len: usize) -> Vec<u8> {
    let mut rng = Rng(0x5eed);
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// One case: encode and decode groups, each with `ours`, `builtin` and
/// `memcpy`.
fn bench_case(c: &mut Criterion, name: &str, dt: &DataType, dims: &[u64], order: &[usize]) {
    let shape: Vec<NonZeroU64> = dims.iter().map(|&d| NonZeroU64::new(d).unwrap()).collect();
    let size = dt.fixed_size().unwrap();
    let len = dims.iter().product::<u64>() as usize * size;
    let decoded = bytes(len);
    let fill = FillValue::new(vec![0; size]);
    let options = CodecOptions::default();
    let ours = OurTranspose::new(order.to_vec()).unwrap();
    let builtin = BuiltinTranspose::new(TransposeOrder::new(order).unwrap());
    let codecs: [(&str, &dyn ArrayToArrayCodecTraits); 2] =
        [("ours", &ours), ("builtin", &builtin)];

    let encoded = ours
        .encode(ArrayBytes::from(&decoded[..]), &shape, dt, &fill, &options)
        .unwrap()
        .into_fixed()
        .unwrap()
        .into_owned();
    let by_builtin = builtin
        .encode(ArrayBytes::from(&decoded[..]), &shape, dt, &fill, &options)
        .unwrap();
    assert_eq!(
        ArrayBytes::from(&encoded[..]),
        by_builtin,
        "{name}: encodings differ"
    );

    let mut kernel_out = vec![0u8; len];
    let encoded_dims: Vec<usize> = order.iter().map(|&a| dims[a] as usize).collect();
    let decoded_dims: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    let inverse = inverse_permutation(order).unwrap();
    for (direction, input) in [("encode", &decoded), ("decode", &encoded)] {
        // The kernel's view of this direction: input shape and permutation.
        let (kernel_shape, kernel_perm) = if direction == "encode" {
            (&decoded_dims, order)
        } else {
            (&encoded_dims, &inverse[..])
        };
        let mut group = c.benchmark_group(format!("transpose/{name}_{direction}"));
        group.throughput(Throughput::Bytes(len as u64));
        for (label, codec) in codecs {
            group.bench_function(label, |b| {
                b.iter(|| {
                    let input = ArrayBytes::from(black_box(&input[..]));
                    let output = if direction == "encode" {
                        codec.encode(input, &shape, dt, &fill, &options)
                    } else {
                        codec.decode(input, &shape, dt, &fill, &options)
                    };
                    black_box(output.unwrap());
                });
            });
        }
        group.bench_function("kernel", |b| {
            b.iter(|| {
                permute_bytes(
                    black_box(&input[..]),
                    &mut kernel_out,
                    kernel_shape,
                    kernel_perm,
                    size,
                )
                .unwrap();
                black_box(&mut kernel_out);
            });
        });
        memcpy(&mut group, input);
        group.bench_function("to_vec", |b| {
            b.iter(|| black_box(black_box(&input[..]).to_vec()));
        });
        group.finish();
    }
}

fn cases(c: &mut Criterion) {
    let f32 = data_type::float32();
    bench_case(c, "2d_f32", &f32, &[2048, 2048], &[1, 0]);
    bench_case(c, "3d_f32", &f32, &[128, 128, 128], &[2, 0, 1]);
    bench_case(c, "2d_f32_odd", &f32, &[2000, 2100], &[1, 0]);
    bench_case(c, "2d_u8", &data_type::uint8(), &[4096, 4096], &[1, 0]);
}

criterion_group! {
    name = benches;
    config = common::config(Duration::from_secs(2));
    targets = cases
}
criterion_main!(benches);
