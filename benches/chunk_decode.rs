//! One 32 MiB chunk decoded into the caller's memory: 1024 x 4096 float64
//! stored as uint16 through `scale_offset` (offset 100, scale 10) +
//! `cast_value(uint16)` + `bytes`, no compressor (the chunks of issue 23's
//! 256 MiB store), on one thread unless a row says otherwise.
//!
//! - `zarrs_chain_copy`: zarrs' chain decode (`CodecChain::decode`, each
//!   array->array codec into a new chunk-sized buffer) and a copy into a
//!   fresh output, which is what zarrs' reads do with a chunk;
//! - `fused`: the crate's `ChunkDecoder` (the fused path) straight into a
//!   fresh output;
//! - `fused_reused`: the same into one output kept across iterations (no
//!   fresh pages: for scale);
//! - `zarrs_chain_copy_2_threads` / `fused_2_threads`: the same two with a
//!   `concurrent_target` of 2 (the chunk split into parts);
//! - `memcpy`: copying the 32 MiB of decoded values (for scale).
//!
//! A fresh output is `calloc`ed, so its pages are faulted in by the decode
//! itself, as in a read that returns a new vector.
//!
//! ```sh
//! cargo bench --bench chunk_decode
//! ```

mod common;

use std::borrow::Cow;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::Throughput;
use serde_json::json;
use zarrs::array::codec::api::ArrayToBytesCodecTraits;
use zarrs::array::{ArrayBuilder, ArrayBytes, CodecOptions, data_type};
use zarrs::storage::store::MemoryStore;
use zarrs_extension_codecs::codec::bytes::BytesCodec;
use zarrs_extension_codecs::codec::cast_value::CastValueCodec;
use zarrs_extension_codecs::codec::scale_offset::ScaleOffsetCodec;
use zarrs_extension_codecs::read::chunk_decode::ExposedChunkDecoder;

use common::Rng;

const CHUNK: [u64; 2] = [1024, 4096];

fn main() {
    let store = Arc::new(MemoryStore::new());
    let array = ArrayBuilder::new(
        CHUNK.to_vec(),
        CHUNK.to_vec(),
        data_type::float64(),
        100.0f64,
    )
    .array_to_array_codecs(vec![
        Arc::new(ScaleOffsetCodec::new(Some(json!(100)), Some(json!(10))).expect("codec")),
        Arc::new(
            CastValueCodec::new_with_json(&json!({"data_type": "uint16", "out_of_range": "clamp"}))
                .expect("codec"),
        ),
    ])
    .array_to_bytes_codec(Arc::new(BytesCodec::little()))
    .build(store, "/")
    .expect("array");
    let n = (CHUNK[0] * CHUNK[1]) as usize;
    let mut rng = Rng(23);
    // uint16 values decoded: 100 + k / 10.
    #[allow(clippy::cast_precision_loss)]
    let values: Vec<f64> = (0..n)
        .map(|_| 100.0 + (rng.next_u64() % 65536) as f64 / 10.0)
        .collect();
    array
        .store_chunk(&[0, 0], values.clone())
        .expect("store the chunk");
    let encoded = array
        .retrieve_encoded_chunk(&[0, 0])
        .expect("read")
        .expect("the chunk");
    let decoder = ExposedChunkDecoder::new(&array, &[0, 0]).expect("chunk [0, 0]");
    assert!(decoder.is_fused(), "the chain takes the fused path");
    let options = CodecOptions::default().with_concurrent_target(1);
    let codecs = array.codecs();
    let shape = array.chunk_shape(&[0, 0]).expect("shape");
    let (dt, fv) = (array.data_type().clone(), array.fill_value().clone());

    // Both sides give the same values (the tests check every bit; this
    // checks the bench's setup).
    let mut check = vec![0.0f64; n];
    decoder
        .decode_whole_into(&encoded, bytemuck::cast_slice_mut(&mut check), &options)
        .expect("decode");
    let zarrs = codecs
        .decode(Cow::Borrowed(&encoded), &shape, &dt, &fv, &options)
        .expect("zarrs decode");
    assert_eq!(
        bytemuck::cast_slice::<f64, u8>(&check),
        &*zarrs.into_fixed().expect("fixed")
    );

    let mut criterion = common::config(Duration::from_secs(5)).configure_from_args();
    let mut group = criterion.benchmark_group("chunk_decode/32MiB_f64_from_uint16");
    group.throughput(Throughput::Bytes((n * 8) as u64));
    // Each on one thread and on two (the codecs, and the fused path, split
    // one chunk into parts on the crate's pool).
    let options_2 = CodecOptions::default().with_concurrent_target(2);
    for (suffix, options) in [("", &options), ("_2_threads", &options_2)] {
        group.bench_function(format!("zarrs_chain_copy{suffix}"), |b| {
            b.iter(|| {
                let decoded = codecs
                    .decode(Cow::Borrowed(&encoded), &shape, &dt, &fv, options)
                    .expect("zarrs decode");
                let mut out = bytemuck::zeroed_vec::<f64>(n);
                match &decoded {
                    ArrayBytes::Fixed(bytes) => {
                        bytemuck::cast_slice_mut::<f64, u8>(&mut out).copy_from_slice(bytes);
                    }
                    _ => unreachable!("fixed-size data"),
                }
                black_box(out)
            });
        });
        group.bench_function(format!("fused{suffix}"), |b| {
            b.iter(|| {
                let mut out = bytemuck::zeroed_vec::<f64>(n);
                decoder
                    .decode_whole_into(&encoded, bytemuck::cast_slice_mut(&mut out), options)
                    .expect("decode");
                black_box(out)
            });
        });
    }
    // The first read of a chunk: the decoder (its plan, and the lookup
    // table a two-byte stored type gets) made inside the timed loop, as a
    // reader that builds one per chunk or per read pays it. The engine
    // keeps one per array (`src/read/engine/plan.rs`), so only an array's
    // first read pays this.
    group.bench_function("fused_first_read", |b| {
        b.iter(|| {
            let decoder = ExposedChunkDecoder::new(&array, &[0, 0]).expect("chunk [0, 0]");
            let mut out = bytemuck::zeroed_vec::<f64>(n);
            decoder
                .decode_whole_into(&encoded, bytemuck::cast_slice_mut(&mut out), &options)
                .expect("decode");
            black_box(out)
        });
    });
    let mut reused = vec![0.0f64; n];
    group.bench_function("fused_reused", |b| {
        b.iter(|| {
            decoder
                .decode_whole_into(&encoded, bytemuck::cast_slice_mut(&mut reused), &options)
                .expect("decode");
            black_box(&reused);
        });
    });
    common::memcpy(&mut group, bytemuck::cast_slice(&values));
    group.finish();
    criterion.final_summary();
}
