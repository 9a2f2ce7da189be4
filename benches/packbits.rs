//! `packbits` codec: this crate vs zarrs' built-in vs a plain memcpy.
//!
//! Every group runs on the same 4 MiB decoded chunk (4 Mi one-byte
//! elements) of `bool`, `uint4` or `int2`, with `padding_encoding` `"none"`
//! and no bit range, through each codec's `ArrayToBytesCodecTraits` API:
//!
//! - `encode`: decoded elements (borrowed) to packed bytes;
//! - `decode`: packed bytes (borrowed, as both codecs encode them) to
//!   elements;
//! - `memcpy`: `copy_from_slice` of the decoded bytes into a preallocated
//!   buffer, the reference.
//!
//! Throughput is decoded bytes per second in every row.
//!
//! Run with `cargo bench --bench packbits -- --noplot`.

mod common;

use std::borrow::Cow;
use std::hint::black_box;
use std::num::NonZeroU64;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zarrs::array::codec::PackBitsCodec as Builtin;
use zarrs::array::codec::api::{ArrayBytes, ArrayToBytesCodecTraits, CodecOptions};
use zarrs::array::{DataType, FillValue, data_type};
use zarrs_extension_codecs::codec::packbits::PackBitsCodec as Ours;

use common::memcpy;

/// Elements (and decoded bytes) per chunk.
const ELEMENTS: usize = 4 << 20;

/// Deterministic elements: `bits`-bit values, sign-extended if `signed`.
fn elements(bits: u32, signed: bool) -> Vec<u8> {
    let mut state = 0x1234_5678_u64;
    (0..ELEMENTS)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = (state >> 32) as u8 & ((1 << bits) - 1);
            if signed && v >> (bits - 1) == 1 {
                v | !((1 << bits) - 1)
            } else {
                v
            }
        })
        .collect()
}

fn bench_data_type(c: &mut Criterion, name: &str, data_type: DataType, bits: u32, signed: bool) {
    let decoded = elements(bits, signed);
    let shape = [NonZeroU64::new(ELEMENTS as u64).unwrap()];
    let fill = FillValue::new(vec![0]);
    let options = CodecOptions::default();
    let codecs: [(&str, Box<dyn ArrayToBytesCodecTraits>); 2] = [
        ("ours", Box::new(Ours::default())),
        ("builtin", Box::new(Builtin::default())),
    ];
    let encoded = codecs[1]
        .1
        .encode(
            ArrayBytes::new_flen(&decoded[..]),
            &shape,
            &data_type,
            &fill,
            &options,
        )
        .unwrap()
        .into_owned();

    let mut group = c.benchmark_group(format!("packbits/{name}_encode"));
    group.throughput(Throughput::Bytes(decoded.len() as u64));
    for (codec_name, codec) in &codecs {
        group.bench_function(*codec_name, |b| {
            b.iter(|| {
                let encoded = codec
                    .encode(
                        ArrayBytes::new_flen(black_box(&decoded[..])),
                        &shape,
                        &data_type,
                        &fill,
                        &options,
                    )
                    .unwrap();
                black_box(encoded);
            });
        });
    }
    memcpy(&mut group, &decoded);
    group.finish();

    let mut group = c.benchmark_group(format!("packbits/{name}_decode"));
    group.throughput(Throughput::Bytes(decoded.len() as u64));
    for (codec_name, codec) in &codecs {
        group.bench_function(*codec_name, |b| {
            b.iter(|| {
                let decoded = codec
                    .decode(
                        Cow::Borrowed(black_box(&encoded[..])),
                        &shape,
                        &data_type,
                        &fill,
                        &options,
                    )
                    .unwrap();
                black_box(decoded);
            });
        });
    }
    memcpy(&mut group, &decoded);
    group.finish();
}

fn bool_chunk(c: &mut Criterion) {
    bench_data_type(c, "bool", data_type::bool(), 1, false);
}

fn uint4_chunk(c: &mut Criterion) {
    bench_data_type(c, "uint4", data_type::uint4(), 4, false);
}

fn int2_chunk(c: &mut Criterion) {
    bench_data_type(c, "int2", data_type::int2(), 2, true);
}

criterion_group! {
    name = benches;
    config = common::config(Duration::from_secs(2));
    targets = bool_chunk, uint4_chunk, int2_chunk
}
criterion_main!(benches);
