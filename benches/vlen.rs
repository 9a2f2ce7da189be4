//! `zarrs.vlen`: this crate's codec vs zarrs' built-in `VlenCodec` vs memcpy.
//!
//! Every group runs on the same chunk of 2^20 short strings (4 to 16 bytes,
//! deterministic), about 10 MiB of element bytes and 8 MiB of offsets, with
//! both chains a lone `bytes` codec (zarrs' default for this codec):
//!
//! - `ours` / `builtin`: `ArrayToBytesCodecTraits::encode` / `decode` of the
//!   chunk through the codec API, including dropping the result. `encode`
//!   and `decode` get their input borrowed (as zarrs passes the inner chunks
//!   of a shard to `decode`); `encode_owned` / `decode_owned` get owned
//!   buffers (as zarrs passes the elements of a chunk to `encode` and a
//!   chunk read from a store to `decode`; the copy that makes that buffer is
//!   not timed);
//! - `memcpy`: `copy_from_slice` of the decoded bytes (element bytes and
//!   offsets) into preallocated buffers, the reference.
//!
//! Throughput is in decoded bytes (element bytes + 8 bytes per offset).
//!
//! Run with `cargo bench --bench vlen -- --noplot`.

mod common;

use std::borrow::Cow;
use std::hint::black_box;
use std::num::NonZeroU64;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use zarrs::array::codec::api::{
    ArrayBytes, ArrayBytesOffsets, ArrayToBytesCodecTraits, CodecOptions,
};
use zarrs::array::codec::{VlenCodec as BuiltinVlen, VlenCodecConfiguration as BuiltinConfig};
use zarrs::array::{FillValue, data_type};
use zarrs_extension_codecs::codec::vlen::{VlenCodec, VlenCodecConfiguration};

use common::Rng;

/// Elements per chunk.
const N: usize = 1 << 20;

/// `N` strings of 4 to 16 lowercase letters: element bytes and offsets.
fn strings() -> (Vec<u8>, Vec<usize>) {
    let mut rng = Rng(7);
    let mut data = Vec::new();
    let mut offsets = Vec::with_capacity(N + 1);
    offsets.push(0);
    for _ in 0..N {
        let len = 4 + (rng.next_u64() % 13) as usize;
        data.extend((0..len).map(|_| b'a' + (rng.next_u64() % 26) as u8));
        offsets.push(data.len());
    }
    (data, offsets)
}

fn bench_configuration(c: &mut Criterion, name: &str, configuration: &serde_json::Value) {
    let ours: VlenCodecConfiguration = serde_json::from_value(configuration.clone()).unwrap();
    let ours = VlenCodec::new_with_configuration(&ours).unwrap();
    let builtin: BuiltinConfig = serde_json::from_value(configuration.clone()).unwrap();
    let builtin = BuiltinVlen::new_with_configuration(&builtin).unwrap();
    let codecs: [(&str, &dyn ArrayToBytesCodecTraits); 2] =
        [("ours", &ours), ("builtin", &builtin)];

    let (data, offsets) = strings();
    let input =
        ArrayBytes::new_vlen(&data[..], ArrayBytesOffsets::new(&offsets[..]).unwrap()).unwrap();
    let shape = [NonZeroU64::new(N as u64).unwrap()];
    let (data_type, fill) = (data_type::string(), FillValue::from(""));
    let options = CodecOptions::default();
    let encoded = ours
        .encode(input.clone(), &shape, &data_type, &fill, &options)
        .unwrap()
        .into_owned();
    let offsets_bytes: &[u8] = bytemuck::cast_slice(&offsets);
    let decoded_len = (data.len() + offsets_bytes.len()) as u64;
    let (mut data_copy, mut offsets_copy) = (vec![0u8; data.len()], vec![0u8; offsets_bytes.len()]);
    let mut memcpy = |b: &mut criterion::Bencher| {
        b.iter(|| {
            data_copy.copy_from_slice(black_box(&data));
            offsets_copy.copy_from_slice(black_box(offsets_bytes));
            black_box((&mut data_copy, &mut offsets_copy));
        });
    };

    let mut group = c.benchmark_group(format!("vlen/{name}_encode"));
    group.throughput(Throughput::Bytes(decoded_len));
    for (label, codec) in codecs {
        group.bench_function(label, |b| {
            b.iter(|| {
                codec
                    .encode(
                        black_box(input.clone()),
                        &shape,
                        &data_type,
                        &fill,
                        &options,
                    )
                    .unwrap()
            });
        });
    }
    group.bench_function("memcpy", &mut memcpy);
    group.finish();

    let owned_input = input.clone().into_owned();
    let mut group = c.benchmark_group(format!("vlen/{name}_encode_owned"));
    group.throughput(Throughput::Bytes(decoded_len));
    for (label, codec) in codecs {
        group.bench_function(label, |b| {
            b.iter_batched(
                || owned_input.clone(),
                |input| {
                    codec
                        .encode(input, &shape, &data_type, &fill, &options)
                        .unwrap()
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.bench_function("memcpy", &mut memcpy);
    group.finish();

    let mut group = c.benchmark_group(format!("vlen/{name}_decode"));
    group.throughput(Throughput::Bytes(decoded_len));
    for (label, codec) in codecs {
        group.bench_function(label, |b| {
            b.iter(|| {
                let chunk = Cow::Borrowed(black_box(&encoded[..]));
                codec
                    .decode(chunk, &shape, &data_type, &fill, &options)
                    .unwrap()
            });
        });
    }
    group.bench_function("memcpy", &mut memcpy);
    group.finish();

    let mut group = c.benchmark_group(format!("vlen/{name}_decode_owned"));
    group.throughput(Throughput::Bytes(decoded_len));
    for (label, codec) in codecs {
        group.bench_function(label, |b| {
            b.iter_batched(
                || encoded.clone(),
                |chunk| {
                    codec
                        .decode(Cow::Owned(chunk), &shape, &data_type, &fill, &options)
                        .unwrap()
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.bench_function("memcpy", &mut memcpy);
    group.finish();
}

fn cases(c: &mut Criterion) {
    let bytes_le = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    for (name, index_data_type, location) in [
        ("u64_start", "uint64", "start"),
        ("u32_end", "uint32", "end"),
    ] {
        let configuration = json!({
            "index_codecs": bytes_le,
            "data_codecs": [{"name": "bytes"}],
            "index_data_type": index_data_type,
            "index_location": location,
        });
        bench_configuration(c, name, &configuration);
    }
}

criterion_group! {
    name = benches;
    config = common::config(Duration::from_secs(2));
    targets = cases
}
criterion_main!(benches);
