//! The `scale_offset` + `cast_value` + `bytes` chain through zarrs' codec API.
//!
//! A float64 chunk (values in [-10, 2540) with ~1% NaN, fill value NaN) is
//! packed into uint8 by
//!
//! ```json
//! [{"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.1}},
//!  {"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "nearest-even",
//!   "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}},
//!  {"name": "bytes"}]
//! ```
//!
//! - `encode` / `decode`: [`CodecChain`] through [`ArrayToBytesCodecTraits`]
//!   (each call allocates its output, as in zarrs) with
//!   `CodecOptions::default()`, as `Array::retrieve_chunk` passes them: a
//!   `concurrent_target` of every core, so the codecs split a chunk this
//!   large across the cores;
//! - `encode_1_thread` / `decode_1_thread`: the same with a
//!   `concurrent_target` of 1, as when zarrs gives every thread a chunk of
//!   its own (many chunks at once);
//! - `memcpy`: `copy_from_slice` of the decoded float64 bytes into a
//!   preallocated buffer, the reference;
//! - `to_vec`: the same copy into a fresh allocation, for scale (what a copy
//!   costs when, like the codec chain, it has to allocate its output).
//!
//! Throughput is the size of the decoded chunk everywhere.
//!
//! Two chunk sizes, one group each:
//!
//! - 1024 x 1024 (8 MiB), a typical chunk. glibc serves it from the heap once
//!   its dynamic mmap threshold has grown past 8 MiB (after the first free),
//!   so freed outputs are reused;
//! - 2048 x 2048 (32 MiB), at glibc's 32 MiB maximum mmap threshold: every
//!   output is a fresh `mmap`, faulted in page by page on first write.
//!
//! Run with `cargo bench --bench chain -- --noplot`.

mod common;

use std::borrow::Cow;
use std::hint::black_box;
use std::num::NonZeroU64;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zarrs::array::{
    ArrayBytes, ArrayToBytesCodecTraits, CodecChain, CodecOptions, FillValue, data_type,
};
use zarrs::metadata::v3::MetadataV3;
// Link the crate so that its codecs register with zarrs.
use zarrs_extension_codecs as _;

use common::{memcpy, scale_offset_values};

/// The chain, shared with the large-chunk test in
/// `tests/local/zarr_python_reads_ours.rs`.
const CODECS: &str = include_str!("../tests/data/scale_offset_cast_u8_codecs.json");

/// Chunk sides: 8 MiB and 32 MiB of float64.
const SIDES: [u64; 2] = [1024, 2048];

fn chain(c: &mut Criterion) {
    for side in SIDES {
        chain_case(c, side);
    }
}

/// One group: the chain on a `side` x `side` float64 chunk vs memcpy / to_vec.
fn chain_case(c: &mut Criterion, side: u64) {
    let metadata: Vec<MetadataV3> = serde_json::from_str(CODECS).expect("codec metadata");
    let chain = CodecChain::from_metadata(&metadata).expect("codec chain");
    let shape = [
        NonZeroU64::new(side).unwrap(),
        NonZeroU64::new(side).unwrap(),
    ];
    let data_type = data_type::float64();
    let fill_value = FillValue::from(f64::NAN);
    let options = CodecOptions::default();
    let one_thread = CodecOptions::default().with_concurrent_target(1);

    #[allow(clippy::cast_possible_truncation)]
    let n = (side * side) as usize;
    let values = scale_offset_values(7, n);
    let decoded: Vec<u8> = bytemuck::cast_slice(&values).to_vec();

    let encode = |options: &CodecOptions| {
        chain
            .encode(
                ArrayBytes::new_flen(Cow::Borrowed(&decoded[..])),
                &shape,
                &data_type,
                &fill_value,
                options,
            )
            .expect("encode")
    };
    let encoded: Vec<u8> = encode(&options).into_owned();
    assert_eq!(encoded.len(), n);
    assert_eq!(encode(&one_thread).as_ref(), &encoded[..]);
    let decode = |options: &CodecOptions| {
        chain
            .decode(
                Cow::Borrowed(black_box(&encoded[..])),
                &shape,
                &data_type,
                &fill_value,
                options,
            )
            .expect("decode")
    };
    // Check the round trip once: within half a quantisation step, NaN kept.
    let round_trip = decode(&options).into_fixed().expect("fixed").into_owned();
    let one_thread_round_trip = decode(&one_thread)
        .into_fixed()
        .expect("fixed")
        .into_owned();
    assert_eq!(round_trip, one_thread_round_trip);
    for (i, (x, y)) in values.iter().zip(round_trip.chunks_exact(8)).enumerate() {
        let y = f64::from_ne_bytes(y.try_into().unwrap());
        let ok = if x.is_nan() {
            y.is_nan()
        } else {
            (x - y).abs() <= 5.0 + 1e-9 || (*x + 10.0 <= 5.0 + 1e-9 && y.is_nan())
        };
        assert!(ok, "element {i}: {x} -> {y}");
    }

    // The 32 MiB group keeps its original name, so criterion compares with
    // earlier runs.
    let name = if side == 2048 {
        "chain/f64_scale_offset_cast_u8".to_string()
    } else {
        format!("chain/f64_scale_offset_cast_u8_{side}x{side}")
    };
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(decoded.len() as u64));
    group.bench_function("encode", |b| b.iter(|| black_box(encode(&options))));
    group.bench_function("decode", |b| b.iter(|| black_box(decode(&options))));
    group.bench_function("encode_1_thread", |b| {
        b.iter(|| black_box(encode(&one_thread)))
    });
    group.bench_function("decode_1_thread", |b| {
        b.iter(|| black_box(decode(&one_thread)))
    });
    memcpy(&mut group, &decoded);
    group.bench_function("to_vec", |b| {
        b.iter(|| black_box(black_box(&decoded[..]).to_vec()))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::config(Duration::from_millis(3000));
    targets = chain
}
criterion_main!(benches);
