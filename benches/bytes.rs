//! `bytes` codec: this crate vs zarrs' built-in vs a plain memcpy.
//!
//! Every group runs on the same 8 MiB chunk of `float32`, `uint16` or
//! `float64` values, through each codec's `ArrayToBytesCodecTraits` API:
//!
//! - `le_decode`: little endian (the machine's order), input borrowed. No
//!   byte changes, so a codec should hand the input back without a copy;
//! - `be_encode`: big endian, input borrowed (as from `store_array_subset`
//!   with a slice): the codec must produce a new, swapped buffer;
//! - `be_decode`: big endian, input owned (as read from a store): the codec
//!   may swap in place. The buffer a call returns is the next call's input,
//!   so nothing is copied outside the timed call;
//! - `memcpy`: `copy_from_slice` of the same number of bytes into a
//!   preallocated buffer, the reference.
//!
//! Run with `cargo bench --bench bytes -- --noplot`.

mod common;

use std::borrow::Cow;
use std::hint::black_box;
use std::num::NonZeroU64;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zarrs::array::codec::BytesCodec as BuiltinBytes;
use zarrs::array::codec::api::{ArrayBytes, ArrayToBytesCodecTraits, CodecOptions};
use zarrs::array::{DataType, Endianness, FillValue, data_type};
use zarrs_extension_codecs::codec::bytes::BytesCodec as OurBytes;

use common::{Rng, memcpy};

/// Bytes per chunk.
const CHUNK_BYTES: usize = 8 << 20;

/// Deterministic, incompressible chunk bytes.
fn chunk_bytes() -> Vec<u8> {
    let mut rng = Rng(0x1234_5678);
    (0..CHUNK_BYTES / 8)
        .flat_map(|_| rng.next_u64().to_ne_bytes())
        .collect()
}

/// The codecs under test, by name.
fn codecs(endian: Endianness) -> [(&'static str, Box<dyn ArrayToBytesCodecTraits>); 2] {
    [
        ("ours", Box::new(OurBytes::new(Some(endian)))),
        ("builtin", Box::new(BuiltinBytes::new(Some(endian)))),
    ]
}

/// A chunk of `data_type` holding `CHUNK_BYTES`.
struct Chunk {
    data_type: DataType,
    shape: Vec<NonZeroU64>,
    fill: FillValue,
}

impl Chunk {
    fn new(data_type: DataType) -> Self {
        let size = data_type.fixed_size().unwrap();
        Self {
            shape: vec![NonZeroU64::new((CHUNK_BYTES / size) as u64).unwrap()],
            fill: FillValue::new(vec![0; size]),
            data_type,
        }
    }
}

fn bench_data_type(c: &mut Criterion, name: &str, data_type: DataType) {
    let chunk = Chunk::new(data_type);
    let input = chunk_bytes();
    let options = CodecOptions::default();
    let native = Endianness::native();
    let swapped = match native {
        Endianness::Little => Endianness::Big,
        Endianness::Big => Endianness::Little,
    };

    let mut group = c.benchmark_group(format!("bytes/{name}_le_decode"));
    group.throughput(Throughput::Bytes(input.len() as u64));
    for (codec_name, codec) in codecs(native) {
        group.bench_function(codec_name, |b| {
            b.iter(|| {
                let decoded = codec
                    .decode(
                        Cow::Borrowed(black_box(&input[..])),
                        &chunk.shape,
                        &chunk.data_type,
                        &chunk.fill,
                        &options,
                    )
                    .unwrap();
                black_box(decoded);
            });
        });
    }
    memcpy(&mut group, &input);
    group.finish();

    let mut group = c.benchmark_group(format!("bytes/{name}_be_encode"));
    group.throughput(Throughput::Bytes(input.len() as u64));
    for (codec_name, codec) in codecs(swapped) {
        group.bench_function(codec_name, |b| {
            b.iter(|| {
                let encoded = codec
                    .encode(
                        ArrayBytes::new_flen(black_box(&input[..])),
                        &chunk.shape,
                        &chunk.data_type,
                        &chunk.fill,
                        &options,
                    )
                    .unwrap();
                black_box(encoded);
            });
        });
    }
    memcpy(&mut group, &input);
    group.finish();

    let mut group = c.benchmark_group(format!("bytes/{name}_be_decode"));
    group.throughput(Throughput::Bytes(input.len() as u64));
    for (codec_name, codec) in codecs(swapped) {
        group.bench_function(codec_name, |b| {
            let mut buffer = input.clone();
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let owned = std::mem::take(&mut buffer);
                    let start = Instant::now();
                    let decoded = codec
                        .decode(
                            Cow::Owned(black_box(owned)),
                            &chunk.shape,
                            &chunk.data_type,
                            &chunk.fill,
                            &options,
                        )
                        .unwrap();
                    let decoded = decoded.into_fixed().unwrap().into_owned();
                    total += start.elapsed();
                    buffer = black_box(decoded);
                }
                total
            });
        });
    }
    memcpy(&mut group, &input);
    group.finish();
}

fn float32(c: &mut Criterion) {
    bench_data_type(c, "float32", data_type::float32());
}

fn uint16(c: &mut Criterion) {
    bench_data_type(c, "uint16", data_type::uint16());
}

fn float64(c: &mut Criterion) {
    bench_data_type(c, "float64", data_type::float64());
}

criterion_group! {
    name = benches;
    config = common::config(Duration::from_secs(2));
    targets = float32, uint16, float64
}
criterion_main!(benches);
