//! [`ChunkDecoder`] against zarrs' own chain decode (`retrieve_chunk_subset`
//! of an array built with zarrs' built-ins and this crate's codecs): random
//! chains, data types, byte orders, compressors, chunk shapes, chunk
//! subsets and output windows; values bitwise equal, nothing written
//! outside the window.

use std::sync::Arc;

use serde_json::json;
use zarrs::array::codec::api::{
    ArrayToArrayCodecTraits, ArrayToBytesCodecTraits, BytesToBytesCodecTraits, CodecOptions,
};
use zarrs::array::codec::{CodecChain, Crc32cCodec, GzipCodec, ZstdCodec};
use zarrs::array::{Array, ArrayBuilder, ArrayBytes, ArraySubset, DataType, FillValue, data_type};
use zarrs::metadata::v3::MetadataV3;
use zarrs::storage::WritableStorageTraits;
use zarrs::storage::store::MemoryStore;

use super::*;
use crate::codec::bytes::BytesCodec;
use crate::codec::cast_value::CastValueCodec;
use crate::codec::scale_offset::ScaleOffsetCodec;
use crate::test_rng::SplitMix64;

/// The bytes that stand for "not written" around each window.
const GUARD: u8 = 0xa5;

/// One chain to test: the array's data type and fill value, its codecs,
/// and how to make a value that the codecs encode (from a random number).
struct Chain {
    name: &'static str,
    data_type: DataType,
    fill_value: FillValue,
    array_to_array: Vec<Arc<dyn ArrayToArrayCodecTraits>>,
    /// Whether the fused path must take it.
    fused: bool,
    value: fn(&mut SplitMix64) -> Vec<u8>,
}

fn scale_offset(offset: serde_json::Value, scale: serde_json::Value) -> Arc<ScaleOffsetCodec> {
    Arc::new(ScaleOffsetCodec::new(Some(offset), Some(scale)).unwrap())
}

fn cast_value(configuration: serde_json::Value) -> Arc<CastValueCodec> {
    Arc::new(CastValueCodec::new_with_json(&configuration).unwrap())
}

/// A float in `lo..hi`, in steps of 1/64 (so that some land on ties of
/// the rounding modes), sometimes outside (to be clamped or wrapped).
fn float_in(rng: &mut SplitMix64, lo: f64, hi: f64) -> f64 {
    let steps = ((hi - lo) * 64.0) as usize;
    let x = lo + rng.below(steps.max(1)) as f64 / 64.0;
    if rng.below(50) == 0 { x * 3.0 } else { x }
}

fn chains() -> Vec<Chain> {
    vec![
        Chain {
            name: "uint16 bytes alone (a copy)",
            data_type: data_type::uint16(),
            fill_value: FillValue::from(7u16),
            array_to_array: vec![],
            fused: true,
            value: |rng| (rng.next() as u16).to_ne_bytes().to_vec(),
        },
        Chain {
            name: "float64 bytes alone (a copy)",
            data_type: data_type::float64(),
            fill_value: FillValue::from(f64::NAN),
            array_to_array: vec![],
            fused: true,
            value: |rng| float_in(rng, -1e300, 1e300).to_ne_bytes().to_vec(),
        },
        Chain {
            name: "int8 bytes alone (a copy)",
            data_type: data_type::int8(),
            fill_value: FillValue::from(-1i8),
            array_to_array: vec![],
            fused: true,
            value: |rng| vec![rng.next() as u8],
        },
        Chain {
            name: "float64 scale_offset(10, 100) + cast_value(uint16)",
            data_type: data_type::float64(),
            fill_value: FillValue::from(10.0f64),
            array_to_array: vec![
                scale_offset(json!(10), json!(100)),
                cast_value(json!({"data_type": "uint16", "out_of_range": "clamp"})),
            ],
            fused: true,
            value: |rng| float_in(rng, 10.0, 10.0 + 655.35).to_ne_bytes().to_vec(),
        },
        Chain {
            name: "float64 scale_offset + cast_value(uint8, towards-zero, wrap, scalar_map NaN)",
            data_type: data_type::float64(),
            fill_value: FillValue::from(f64::NAN),
            array_to_array: vec![
                scale_offset(json!(-1.5), json!(0.25)),
                cast_value(json!({
                    "data_type": "uint8", "rounding": "towards-zero", "out_of_range": "wrap",
                    "scalar_map": {"encode": [["NaN", 255]], "decode": [[255, "NaN"]]}
                })),
            ],
            fused: true,
            value: |rng| {
                let x = if rng.below(10) == 0 {
                    f64::NAN
                } else {
                    float_in(rng, -1.5, -1.5 + 254.0 / 0.25)
                };
                x.to_ne_bytes().to_vec()
            },
        },
        Chain {
            name: "float32 scale_offset(0.5, 4) + cast_value(int16, nearest-away)",
            data_type: data_type::float32(),
            fill_value: FillValue::from(0.5f32),
            array_to_array: vec![
                scale_offset(json!(0.5), json!(4)),
                cast_value(json!({"data_type": "int16", "rounding": "nearest-away",
                                  "out_of_range": "clamp"})),
            ],
            fused: true,
            value: |rng| (float_in(rng, -100.0, 100.0) as f32).to_ne_bytes().to_vec(),
        },
        Chain {
            name: "float32 cast_value(float16)",
            data_type: data_type::float32(),
            fill_value: FillValue::from(-0.0f32),
            array_to_array: vec![cast_value(json!({"data_type": "float16"}))],
            fused: true,
            value: |rng| {
                (float_in(rng, -20000.0, 20000.0) as f32)
                    .to_ne_bytes()
                    .to_vec()
            },
        },
        Chain {
            name: "float64 scale_offset(-2, 3) alone",
            data_type: data_type::float64(),
            fill_value: FillValue::from(0.0f64),
            array_to_array: vec![scale_offset(json!(-2), json!(3))],
            fused: true,
            value: |rng| float_in(rng, -1e6, 1e6).to_ne_bytes().to_vec(),
        },
        Chain {
            name: "int32 scale_offset(3, 2) + cast_value(int16)",
            data_type: data_type::int32(),
            fill_value: FillValue::from(3i32),
            array_to_array: vec![
                scale_offset(json!(3), json!(2)),
                cast_value(json!({"data_type": "int16"})),
            ],
            fused: true,
            value: |rng| (rng.below(2001) as i32 - 1000).to_ne_bytes().to_vec(),
        },
        Chain {
            name: "uint16 cast_value(uint8, clamp)",
            data_type: data_type::uint16(),
            fill_value: FillValue::from(7u16),
            array_to_array: vec![cast_value(
                json!({"data_type": "uint8", "out_of_range": "clamp"}),
            )],
            fused: true,
            value: |rng| (rng.below(1000) as u16).to_ne_bytes().to_vec(),
        },
        Chain {
            name: "int64 scale_offset(-7, -3)",
            data_type: data_type::int64(),
            fill_value: FillValue::from(-7i64),
            array_to_array: vec![scale_offset(json!(-7), json!(-3))],
            fused: true,
            value: |rng| (rng.next() as i64 >> 8).to_ne_bytes().to_vec(),
        },
        Chain {
            name: "float64 cast_value(int4): a sub-byte stored type (fallback)",
            data_type: data_type::float64(),
            fill_value: FillValue::from(0.0f64),
            array_to_array: vec![cast_value(
                json!({"data_type": "int4", "out_of_range": "clamp"}),
            )],
            fused: false,
            value: |rng| float_in(rng, -8.0, 7.0).to_ne_bytes().to_vec(),
        },
        Chain {
            name: "float64 cast_value(uint16) then scale_offset: the other order (fallback)",
            data_type: data_type::float64(),
            fill_value: FillValue::from(1.0f64),
            array_to_array: vec![
                cast_value(json!({"data_type": "uint16", "out_of_range": "clamp"})),
                scale_offset(json!(1), json!(2)),
            ],
            fused: false,
            value: |rng| float_in(rng, 1.0, 1000.0).to_ne_bytes().to_vec(),
        },
    ]
}

/// A random `bytes` codec: this crate's or zarrs', little or big endian.
fn random_bytes_codec(rng: &mut SplitMix64) -> (Arc<dyn ArrayToBytesCodecTraits>, &'static str) {
    match rng.below(4) {
        0 => (Arc::new(BytesCodec::little()), "bytes(little)"),
        1 => (Arc::new(BytesCodec::big()), "bytes(big)"),
        2 => (
            Arc::new(zarrs::array::codec::BytesCodec::little()),
            "zarrs bytes(little)",
        ),
        _ => (
            Arc::new(zarrs::array::codec::BytesCodec::big()),
            "zarrs bytes(big)",
        ),
    }
}

/// A codec from metadata (for those whose constructors take zarrs'
/// configuration types).
fn bytes_to_bytes_from(
    name: &str,
    configuration: serde_json::Value,
) -> Arc<dyn BytesToBytesCodecTraits> {
    let configuration: zarrs::metadata::Configuration =
        serde_json::from_value(configuration).unwrap();
    let chain = CodecChain::from_metadata(&[
        MetadataV3::new_with_configuration(
            "bytes",
            serde_json::from_value::<zarrs::metadata::Configuration>(json!({"endian": "little"}))
                .unwrap(),
        ),
        MetadataV3::new_with_configuration(name, configuration),
    ])
    .unwrap();
    chain.bytes_to_bytes_codecs()[0].clone()
}

/// Random bytes->bytes codecs: none, or one or two of gzip, zstd, blosc,
/// crc32c.
fn random_compressors(rng: &mut SplitMix64) -> (Vec<Arc<dyn BytesToBytesCodecTraits>>, String) {
    let mut codecs: Vec<Arc<dyn BytesToBytesCodecTraits>> = Vec::new();
    let mut names = Vec::new();
    for _ in 0..rng.below(3) {
        let (codec, name): (Arc<dyn BytesToBytesCodecTraits>, _) = match rng.below(4) {
            0 => (Arc::new(GzipCodec::new(1).unwrap()), "gzip"),
            1 => (Arc::new(ZstdCodec::new(1, rng.below(2) == 0)), "zstd"),
            2 => (
                bytes_to_bytes_from(
                    "blosc",
                    json!({"cname": "lz4", "clevel": 1, "shuffle": "shuffle", "typesize": 2,
                           "blocksize": 0}),
                ),
                "blosc",
            ),
            _ => (Arc::new(Crc32cCodec::new()), "crc32c"),
        };
        codecs.push(codec);
        names.push(name);
    }
    (codecs, names.join("+"))
}

/// A random shape of `ndim` dimensions, each in `1..=max`.
fn random_shape(rng: &mut SplitMix64, ndim: usize, max: usize) -> Vec<u64> {
    (0..ndim).map(|_| 1 + rng.below(max) as u64).collect()
}

/// A random subset of a shape (non-empty), the whole of it one time in three.
fn random_subset(rng: &mut SplitMix64, shape: &[u64]) -> ArraySubset {
    if rng.below(3) == 0 {
        return ArraySubset::new_with_shape(shape.to_vec());
    }
    let ranges: Vec<_> = shape
        .iter()
        .map(|&n| {
            let a = rng.below(n as usize) as u64;
            let b = a + 1 + rng.below((n - a) as usize) as u64;
            a..b
        })
        .collect();
    ArraySubset::new_with_ranges(&ranges)
}

/// The [`ChunkDecoder`] of chunk `indices` of `array`, made from the array's
/// own codecs, data type and fill value (as the read engine makes it).
fn decoder_for<S: ?Sized>(array: &Array<S>, indices: &[u64]) -> ChunkDecoder {
    ChunkDecoder::new(
        array.codecs(),
        array.chunk_shape(indices).unwrap().to_vec(),
        array.data_type().clone(),
        array.fill_value().clone(),
    )
}

/// Decode `subset` of chunk `indices` of `array` with a [`ChunkDecoder`]
/// into a window at a random place of a larger output, and check it
/// against zarrs' `retrieve_chunk_subset`. Returns whether both failed.
fn check_chunk(
    rng: &mut SplitMix64,
    array: &Array<MemoryStore>,
    decoder: &ChunkDecoder,
    indices: &[u64],
    subset: &ArraySubset,
    options: &CodecOptions,
    what: &str,
) -> bool {
    let size = array.data_type().fixed_size().unwrap();
    let mut expected =
        array.retrieve_chunk_subset_opt::<ArrayBytes<'static>>(indices, subset, options);
    if expected.is_err() {
        // zarrs 0.23.14's blosc partial decoder reads ranges with
        // `blosc_getitem` in items of the blosc typesize, and fails
        // ("incomplete frame" from a compressor before it) when the
        // decoded length is not a multiple of it (blosc after zstd or
        // gzip): take the part from zarrs' whole-chunk decode then.
        let chunk_shape: Vec<u64> = array
            .chunk_shape(indices)
            .unwrap()
            .iter()
            .map(|n| n.get())
            .collect();
        if let Ok(whole) = array.retrieve_chunk_opt::<ArrayBytes<'static>>(indices, options) {
            expected = Ok(whole
                .extract_array_subset(subset, &chunk_shape, array.data_type())
                .unwrap()
                .into_owned());
        }
    }
    let encoded = array.retrieve_encoded_chunk(indices).unwrap();
    // An output larger than the window, the window somewhere inside.
    let margin_before: Vec<u64> = subset.shape().iter().map(|_| rng.below(3) as u64).collect();
    let out_shape: Vec<u64> = subset
        .shape()
        .iter()
        .zip(&margin_before)
        .map(|(&n, &m)| n + m + rng.below(3) as u64)
        .collect();
    let window = ArraySubset::new_with_start_shape(margin_before, subset.shape().to_vec()).unwrap();
    let len = out_shape.iter().product::<u64>() as usize * size;
    let mut out = vec![GUARD; len];
    let cells = unsafe_cell_slice::UnsafeCellSlice::new(out.as_mut_slice());
    // SAFETY: the only window over `out` in this test.
    let mut target = unsafe { OutputWindow::new(cells, size, &out_shape, window.clone()) }.unwrap();
    let got = decoder.decode_into(encoded.as_deref(), subset, &mut target, options);
    drop(target);
    match (expected, got) {
        (Ok(expected), Ok(())) => {
            let expected = expected.into_fixed().unwrap();
            let runs = window::Runs::new(window.start(), window.shape(), &out_shape);
            let mut inside = vec![false; len / size];
            let mut got = Vec::with_capacity(expected.len());
            for start in runs.starts() {
                for i in start..start + runs.len {
                    inside[i] = true;
                    got.extend_from_slice(&out[i * size..(i + 1) * size]);
                }
            }
            assert!(got == *expected, "{what}: values differ");
            for (i, inside) in inside.iter().enumerate() {
                if !inside {
                    assert!(
                        out[i * size..(i + 1) * size].iter().all(|&b| b == GUARD),
                        "{what}: element {i} outside the window was written"
                    );
                }
            }
            false
        }
        (Err(_), Err(_)) => true,
        (Ok(_), Err(e)) => panic!("{what}: zarrs decodes, ChunkDecoder fails: {e}"),
        (Err(e), Ok(())) => panic!("{what}: zarrs fails ({e}), ChunkDecoder decodes"),
    }
}

#[test]
#[cfg_attr(miri, ignore)] // compressors are C code
fn matches_zarrs_chain_decode() {
    let mut rng = SplitMix64(0x5eed_c0de);
    for round in 0..6 {
        for chain in chains() {
            let ndim = 1 + rng.below(3);
            let chunk_shape = random_shape(&mut rng, ndim, 7);
            let shape: Vec<u64> = chunk_shape
                .iter()
                .map(|&c| c * (1 + rng.below(2) as u64) + rng.below(c as usize) as u64)
                .collect();
            let (bytes, bytes_name) = random_bytes_codec(&mut rng);
            let (compressors, compressors_name) = random_compressors(&mut rng);
            let store = Arc::new(MemoryStore::new());
            let array = ArrayBuilder::new(
                shape.clone(),
                chunk_shape.clone(),
                chain.data_type.clone(),
                chain.fill_value.clone(),
            )
            .array_to_array_codecs(chain.array_to_array.clone())
            .array_to_bytes_codec(bytes)
            .bytes_to_bytes_codecs(compressors)
            .build(store, "/")
            .unwrap();
            let n = shape.iter().product::<u64>() as usize;
            let values: Vec<u8> = (0..n).flat_map(|_| (chain.value)(&mut rng)).collect();
            array
                .store_array_subset(&array.subset_all(), ArrayBytes::new_flen(values))
                .unwrap();
            let grid = array.chunk_grid_shape().to_vec();
            // Some chunks missing.
            let all_chunks = ArraySubset::new_with_shape(grid.clone());
            for indices in all_chunks.indices() {
                if rng.below(5) == 0 {
                    array.erase_chunk(&indices).unwrap();
                }
            }
            let what_chain = format!(
                "round {round}: {} / {bytes_name} / [{compressors_name}] / shape {shape:?} \
                 chunks {chunk_shape:?}",
                chain.name
            );
            for indices in all_chunks.indices() {
                let this_chunk: Vec<u64> = array
                    .chunk_shape(&indices)
                    .unwrap()
                    .iter()
                    .map(|n| n.get())
                    .collect();
                let decoder = decoder_for(&array, &indices);
                assert_eq!(decoder.is_fused(), chain.fused, "{what_chain}");
                for _ in 0..2 {
                    let subset = random_subset(&mut rng, &this_chunk);
                    let options = CodecOptions::default().with_concurrent_target(1 + rng.below(2));
                    let what = format!("{what_chain}: chunk {indices:?} subset {subset}");
                    let failed = check_chunk(
                        &mut rng, &array, &decoder, &indices, &subset, &options, &what,
                    );
                    assert!(!failed, "{what}: both fail on values that encoded");
                }
            }
        }
    }
}

/// A 512 x 512 float64 chunk (2 MiB decoded), large enough to be split over
/// two threads, decoded whole and in part.
#[test]
#[cfg_attr(miri, ignore)] // megabytes of data
fn large_chunk_split_over_threads() {
    let mut rng = SplitMix64(42);
    let chain = &chains()[0];
    let store = Arc::new(MemoryStore::new());
    let array = ArrayBuilder::new(
        vec![512, 700],
        vec![512, 512],
        chain.data_type.clone(),
        chain.fill_value.clone(),
    )
    .array_to_array_codecs(chain.array_to_array.clone())
    .array_to_bytes_codec(Arc::new(BytesCodec::big()))
    .build(store, "/")
    .unwrap();
    let n = 512 * 700;
    let values: Vec<u8> = (0..n).flat_map(|_| (chain.value)(&mut rng)).collect();
    array
        .store_array_subset(&array.subset_all(), ArrayBytes::new_flen(values))
        .unwrap();
    let decoder = decoder_for(&array, &[0, 0]);
    assert!(decoder.is_fused());
    let options = CodecOptions::default().with_concurrent_target(2);
    for subset in [
        ArraySubset::new_with_shape(vec![512, 512]),
        ArraySubset::new_with_ranges(&[3..509, 1..500]),
    ] {
        for indices in [[0u64, 0], [0, 1]] {
            let what = format!("chunk {indices:?} subset {subset}");
            assert!(!check_chunk(
                &mut rng, &array, &decoder, &indices, &subset, &options, &what
            ));
        }
    }
}

/// An array of one chunk of `shape` in `store`, through `chain` and
/// little-endian `bytes`, nothing written.
fn one_chunk_array(chain: &Chain, shape: &[u64], store: Arc<MemoryStore>) -> Array<MemoryStore> {
    ArrayBuilder::new(
        shape.to_vec(),
        shape.to_vec(),
        chain.data_type.clone(),
        chain.fill_value.clone(),
    )
    .array_to_array_codecs(chain.array_to_array.clone())
    .array_to_bytes_codec(Arc::new(BytesCodec::little()))
    .build(store, "/")
    .unwrap()
}

/// [`one_chunk_array`] filled with `chain`'s random values.
fn one_chunk_of(chain: &Chain, shape: &[u64], rng: &mut SplitMix64) -> Array<MemoryStore> {
    let array = one_chunk_array(chain, shape, Arc::new(MemoryStore::new()));
    let values: Vec<u8> = (0..shape.iter().product::<u64>())
        .flat_map(|_| (chain.value)(rng))
        .collect();
    array
        .store_array_subset(&array.subset_all(), ArrayBytes::new_flen(values))
        .unwrap();
    array
}

/// Every fused chain over a chunk of 327,680 elements, decoded whole twice
/// by one decoder: one-byte stored types through their lookup table from
/// the start, two-byte ones through the kernels until
/// [`table::TWO_BYTE_AFTER`] elements and through their table after (the
/// second decode all of it), each against zarrs' chain decode.
#[test]
#[cfg_attr(miri, ignore)] // megabytes of data
fn lookup_tables_match_zarrs() {
    let mut rng = SplitMix64(7);
    let shape = vec![640u64, 512];
    const { assert!(640 * 512 > super::table::TWO_BYTE_AFTER) };
    for chain in chains().iter().filter(|c| c.fused) {
        let array = one_chunk_of(chain, &shape, &mut rng);
        let decoder = decoder_for(&array, &[0, 0]);
        assert!(decoder.is_fused(), "{}", chain.name);
        let options = CodecOptions::default().with_concurrent_target(1);
        let whole = ArraySubset::new_with_shape(shape.clone());
        for pass in 0..2 {
            let what = format!("{}: pass {pass}", chain.name);
            assert!(
                !check_chunk(&mut rng, &array, &decoder, &[0, 0], &whole, &options, &what),
                "{what}: both failed"
            );
        }
    }
}

/// Into an output of [`table::STREAM_FROM_BYTES`] or more, one- and
/// two-byte stored types decode to float64 through non-temporal stores
/// (on x86-64): a chunk decoded into a window of a 16 MiB output gives
/// zarrs' values there and leaves the rest alone.
#[test]
#[cfg_attr(miri, ignore)] // 16 MiB output
fn large_outputs_take_streaming_stores() {
    let mut rng = SplitMix64(11);
    let out_shape = [2048u64, 1024];
    let size = 8;
    let len = (out_shape[0] * out_shape[1]) as usize * size;
    assert!(len >= super::table::STREAM_FROM_BYTES);
    for chain in chains()
        .iter()
        .filter(|c| c.fused && c.data_type == data_type::float64())
    {
        let array = one_chunk_of(chain, &[600, 500], &mut rng);
        let decoder = decoder_for(&array, &[0, 0]);
        let options = CodecOptions::default().with_concurrent_target(1);
        let part = ArraySubset::new_with_ranges(&[3..597, 1..499]);
        let expected = array
            .retrieve_chunk_subset_opt::<ArrayBytes<'static>>(&[0, 0], &part, &options)
            .unwrap()
            .into_fixed()
            .unwrap()
            .into_owned();
        let encoded = array.retrieve_encoded_chunk(&[0, 0]).unwrap().unwrap();
        // `u64`s underneath: aligned, as a float64 output is.
        let mut backing = vec![u64::from_ne_bytes([GUARD; 8]); len / 8];
        let out: &mut [u8] = bytemuck::cast_slice_mut(&mut backing);
        let place =
            ArraySubset::new_with_start_shape(vec![1000, 300], part.shape().to_vec()).unwrap();
        let cells = unsafe_cell_slice::UnsafeCellSlice::new(&mut *out);
        // SAFETY: the only window over `out` in this test.
        let mut target =
            unsafe { OutputWindow::new(cells, size, &out_shape, place.clone()) }.unwrap();
        decoder
            .decode_into(Some(&encoded), &part, &mut target, &options)
            .unwrap();
        drop(target);
        let row = |r: u64| (r * out_shape[1]) as usize * size;
        let mut got = Vec::with_capacity(expected.len());
        for r in 1000..1000 + 594 {
            got.extend_from_slice(&out[row(r) + 300 * size..row(r) + (300 + 498) * size]);
            assert!(out[row(r)..row(r) + 300 * size].iter().all(|&b| b == GUARD));
        }
        assert!(got == expected, "{}: values differ", chain.name);
        assert!(
            out[..row(1000)].iter().all(|&b| b == GUARD),
            "{}",
            chain.name
        );
    }
}

/// Stored integers that `scale_offset` cannot decode (not a multiple of
/// the scale) fail in both decoders, and the error names the codec.
#[test]
fn undecodable_chunk_fails_in_both() {
    let mut rng = SplitMix64(7);
    let chain = chains()
        .into_iter()
        .find(|c| c.name.starts_with("int32"))
        .unwrap();
    let store = Arc::new(MemoryStore::new());
    let array = one_chunk_array(&chain, &[4, 4], store.clone());
    // int16 stored values; 5 is odd, and the scale is 2.
    let stored: Vec<u8> = (0..16i16)
        .flat_map(|i| (i * 2 + i16::from(i == 9)).to_le_bytes())
        .collect();
    store.set(&array.chunk_key(&[0, 0]), stored.into()).unwrap();
    let decoder = decoder_for(&array, &[0, 0]);
    let options = CodecOptions::default();
    let whole = ArraySubset::new_with_shape(vec![4, 4]);
    assert!(check_chunk(
        &mut rng,
        &array,
        &decoder,
        &[0, 0],
        &whole,
        &options,
        "whole"
    ));
    // A part without the bad element decodes in both.
    let part = ArraySubset::new_with_ranges(&[0..2, 0..4]);
    assert!(!check_chunk(
        &mut rng,
        &array,
        &decoder,
        &[0, 0],
        &part,
        &options,
        "part"
    ));
    // The error says which codec and element.
    let encoded = array.retrieve_encoded_chunk(&[0, 0]).unwrap().unwrap();
    let mut out = vec![0u8; 16 * 4];
    let shape = [4u64, 4];
    let mut target = OutputWindow::whole(&mut out, 4, &shape).unwrap();
    let e = decoder
        .decode_into(Some(&encoded), &whole, &mut target, &options)
        .unwrap_err()
        .to_string();
    assert!(e.contains("scale_offset") && e.contains("element 9"), "{e}");
}

/// Truncated and oversized chunks are errors, not panics, on both paths.
#[test]
fn wrong_chunk_lengths_are_errors() {
    let chain = &chains()[0];
    let array = one_chunk_array(chain, &[3, 5], Arc::new(MemoryStore::new()));
    let decoder = decoder_for(&array, &[0, 0]);
    let options = CodecOptions::default();
    // The chunk holds 15 uint16: 30 bytes.
    for len in [0usize, 1, 29, 31, 60] {
        let encoded = vec![1u8; len];
        for subset in [
            ArraySubset::new_with_shape(vec![3, 5]),
            ArraySubset::new_with_ranges(&[1..2, 1..3]),
        ] {
            let mut out = [0u8; 15 * 8];
            let window_shape = subset.shape().to_vec();
            let mut target = OutputWindow::whole(
                &mut out[..window_shape.iter().product::<u64>() as usize * 8],
                8,
                &window_shape,
            )
            .unwrap();
            let e = decoder.decode_into(Some(&encoded), &subset, &mut target, &options);
            assert!(e.is_err(), "{len} bytes, subset {subset}");
        }
    }
}

/// A missing chunk reads as the fill value, also one the codecs cannot
/// carry (10.5 becomes 1050 in uint16 and decodes to 10.5; 0.001 does not
/// survive), as zarrs reads it.
#[test]
fn missing_chunks_read_as_the_fill_value() {
    let mut rng = SplitMix64(3);
    for fill in [10.5f64, 0.001, f64::NAN, -0.0] {
        let store = Arc::new(MemoryStore::new());
        let array = ArrayBuilder::new(
            vec![5, 6],
            vec![4, 4],
            data_type::float64(),
            FillValue::from(fill),
        )
        .array_to_array_codecs(vec![
            scale_offset(json!(10), json!(100)),
            cast_value(json!({"data_type": "uint16", "out_of_range": "clamp"})),
        ])
        .array_to_bytes_codec(Arc::new(BytesCodec::little()))
        .build(store, "/")
        .unwrap();
        let decoder = decoder_for(&array, &[1, 1]);
        let options = CodecOptions::default();
        for subset in [
            ArraySubset::new_with_shape(vec![4, 4]),
            ArraySubset::new_with_ranges(&[0..1, 2..4]),
        ] {
            let what = format!("fill {fill}, subset {subset}");
            assert!(!check_chunk(
                &mut rng,
                &array,
                &decoder,
                &[1, 1],
                &subset,
                &options,
                &what
            ));
        }
    }
}

/// A window whose shape is not the subset's, or a subset outside the
/// chunk, is refused.
#[test]
fn mismatched_windows_are_refused() {
    let chain = &chains()[0];
    let array = one_chunk_array(chain, &[4, 4], Arc::new(MemoryStore::new()));
    let decoder = decoder_for(&array, &[0, 0]);
    let options = CodecOptions::default();
    let shape = [2u64, 4];
    let mut out = vec![0u8; 8 * 8];
    let mut target = OutputWindow::whole(&mut out, 8, &shape).unwrap();
    for subset in [
        ArraySubset::new_with_ranges(&[0..4, 0..2]),
        ArraySubset::new_with_ranges(&[3..5, 0..4]),
    ] {
        let e = decoder
            .decode_into(None, &subset, &mut target, &options)
            .unwrap_err()
            .to_string();
        assert!(e.contains("shape") || e.contains("inside"), "{e}");
    }
    let mut out4 = vec![0u8; 8 * 4];
    let mut narrow = OutputWindow::whole(&mut out4, 4, &shape).unwrap();
    let e = decoder.decode_into(
        None,
        &ArraySubset::new_with_shape(vec![2, 4]),
        &mut narrow,
        &options,
    );
    assert!(e.is_err());
}

/// A sharded array (inner chunks through `scale_offset` + `cast_value` +
/// `bytes`, an absent inner chunk): the array's chain is `sharding_indexed`,
/// which the fallback decodes through zarrs, whole shards and parts.
#[test]
#[cfg_attr(miri, ignore)] // many small decodes
fn sharded_chain_falls_back_to_zarrs() {
    use zarrs::array::codec::ShardingCodecBuilder;
    let mut rng = SplitMix64(11);
    let chain = &chains()[0];
    let inner_shape = vec![
        std::num::NonZeroU64::new(3).unwrap(),
        std::num::NonZeroU64::new(4).unwrap(),
    ];
    let sharding = ShardingCodecBuilder::new(inner_shape, &chain.data_type)
        .array_to_array_codecs(chain.array_to_array.clone())
        .array_to_bytes_codec(Arc::new(BytesCodec::big()))
        .build_arc();
    let store = Arc::new(MemoryStore::new());
    let array = ArrayBuilder::new(
        vec![9, 8],
        vec![6, 8],
        chain.data_type.clone(),
        chain.fill_value.clone(),
    )
    .array_to_bytes_codec(sharding)
    .build(store, "/")
    .unwrap();
    let values: Vec<u8> = (0..72).flat_map(|_| (chain.value)(&mut rng)).collect();
    array
        .store_array_subset(&array.subset_all(), ArrayBytes::new_flen(values))
        .unwrap();
    // Rows 6..9, columns 4..8 (an inner chunk of shard [1, 0]) back to the
    // fill value: written as an absent inner chunk.
    let fill: Vec<u8> = (0..12)
        .flat_map(|_| chain.fill_value.as_ne_bytes().to_vec())
        .collect();
    array
        .store_array_subset(
            &ArraySubset::new_with_ranges(&[6..9, 4..8]),
            ArrayBytes::new_flen(fill),
        )
        .unwrap();
    let options = CodecOptions::default();
    for indices in [[0u64, 0], [1, 0]] {
        let decoder = decoder_for(&array, &indices);
        assert!(!decoder.is_fused());
        for subset in [
            ArraySubset::new_with_shape(vec![6, 8]),
            ArraySubset::new_with_ranges(&[1..5, 2..7]),
            ArraySubset::new_with_ranges(&[0..3, 4..8]),
        ] {
            let what = format!("shard {indices:?} subset {subset}");
            assert!(!check_chunk(
                &mut rng, &array, &decoder, &indices, &subset, &options, &what
            ));
        }
    }
}

/// Stored bytes at an odd address (an inner chunk of an uncompressed shard
/// can start anywhere) decode to zarrs' values, for every fused chain: a
/// plain copy takes them where they lie, the kernels get an aligned copy.
#[test]
fn unaligned_stored_bytes_decode_alike() {
    let mut rng = SplitMix64(0x0dd_a11);
    let shape = [5u64, 7];
    for chain in chains().iter().filter(|c| c.fused) {
        let array = one_chunk_of(chain, &shape, &mut rng);
        let decoder = decoder_for(&array, &[0, 0]);
        let encoded = array.retrieve_encoded_chunk(&[0, 0]).unwrap().unwrap();
        let mut shifted = vec![0u8; encoded.len() + 1];
        shifted[1..].copy_from_slice(&encoded);
        let size = array.data_type().fixed_size().unwrap();
        let whole = ArraySubset::new_with_shape(shape.to_vec());
        let decode = |bytes: &[u8]| {
            let mut out = vec![GUARD; 35 * size];
            let cells = unsafe_cell_slice::UnsafeCellSlice::new(out.as_mut_slice());
            // SAFETY: the only window over `out` here.
            let mut target =
                unsafe { OutputWindow::new(cells, size, &shape, whole.clone()) }.unwrap();
            decoder
                .decode_into(Some(bytes), &whole, &mut target, &CodecOptions::default())
                .unwrap();
            drop(target);
            out
        };
        let zarrs = zarrs_chunk(&array);
        assert_eq!(decode(&shifted[1..]), zarrs, "{}", chain.name);
    }
}

/// `bytes` + `zstd` chains (of every byte order and kernel: with feature
/// `zstd` the read engine decompresses these itself, straight into the
/// output where the chunk is one run of it) give zarrs' values: whole
/// chunks into outputs of their own shape, into a run of a larger output
/// (rows of a taller one) and into a window that is not one run (columns of
/// a wider one), and parts; frames that decompress to the wrong size, are
/// cut short or carry a bad checksum are errors on every path.
#[test]
fn zstd_chunks_decode_as_zarrs_decodes_them() {
    let mut rng = SplitMix64(31);
    for chain in chains().iter().filter(|c| c.fused) {
        for endian in ["little", "big"] {
            let store = Arc::new(MemoryStore::new());
            let shape = [6u64, 10];
            let mut codecs: Vec<Arc<dyn ArrayToArrayCodecTraits>> = chain.array_to_array.clone();
            let array = ArrayBuilder::new(
                shape.to_vec(),
                shape.to_vec(),
                chain.data_type.clone(),
                chain.fill_value.clone(),
            )
            .array_to_array_codecs(std::mem::take(&mut codecs))
            .array_to_bytes_codec(Arc::new(BytesCodec::new(Some(if endian == "big" {
                zarrs::array::Endianness::Big
            } else {
                zarrs::array::Endianness::Little
            }))))
            .bytes_to_bytes_codecs(vec![Arc::new(ZstdCodec::new(3, true))])
            .build(store.clone(), "/")
            .unwrap();
            let elements = shape.iter().product::<u64>() as usize;
            let values: Vec<u8> = (0..elements)
                .flat_map(|_| (chain.value)(&mut rng))
                .collect();
            array
                .store_chunk(&[0, 0], ArrayBytes::new_flen(values))
                .unwrap();
            let decoder = decoder_for(&array, &[0, 0]);
            let options = CodecOptions::default();
            let what = format!("{} ({endian}) + zstd", chain.name);
            let whole = ArraySubset::new_with_shape(shape.to_vec());
            // `check_chunk` puts the window at a random place of a larger
            // output: some runs, some not.
            let check = |rng: &mut SplitMix64, subset: &ArraySubset| {
                assert!(!check_chunk(
                    rng,
                    &array,
                    &decoder,
                    &[0, 0],
                    subset,
                    &options,
                    &what
                ));
            };
            for _ in 0..12 {
                check(&mut rng, &whole);
                let part = random_subset(&mut rng, &shape);
                check(&mut rng, &part);
            }
            // Into an output of the chunk's own shape.
            let size = chain.data_type.fixed_size().unwrap();
            let expected = zarrs_chunk(&array);
            let encoded = array.retrieve_encoded_chunk(&[0, 0]).unwrap().unwrap();
            let mut out = vec![GUARD; elements * size];
            let mut target = OutputWindow::whole(&mut out, size, &shape).unwrap();
            decoder
                .decode_into(Some(&encoded), &whole, &mut target, &options)
                .unwrap();
            assert!(out == expected, "{what}: whole chunk into its own output");
            // Damaged frames.
            let content = zarrs::array::codec::api::BytesToBytesCodecTraits::decode(
                &ZstdCodec::new(3, true),
                std::borrow::Cow::Borrowed(&encoded[..]),
                &zarrs::array::codec::api::BytesRepresentation::UnboundedSize,
                &options,
            )
            .unwrap()
            .into_owned();
            let mut longer = content.clone();
            longer.extend_from_slice(&content[..size]);
            let mut flipped = encoded.to_vec();
            let last = flipped.len() - 1;
            flipped[last] ^= 0xff; // the checksum's last byte
            for (damage, bytes) in [
                ("shorter", zstd_frame(&content[..content.len() - size])),
                ("longer", zstd_frame(&longer)),
                ("cut short", encoded[..encoded.len() / 2].to_vec()),
                ("bad checksum", flipped),
            ] {
                for subset in [whole.clone(), ArraySubset::new_with_ranges(&[1..3, 2..5])] {
                    let mut out = vec![0u8; elements * size];
                    let window = subset.shape().to_vec();
                    let n = window.iter().product::<u64>() as usize * size;
                    let mut target = OutputWindow::whole(&mut out[..n], size, &window).unwrap();
                    let got = decoder.decode_into(Some(&bytes), &subset, &mut target, &options);
                    assert!(got.is_err(), "{what}: {damage} frame, subset {subset}");
                }
            }
        }
    }
}

/// `data` as one zstd frame with its content size and a checksum, as
/// zarrs' zstd codec writes it.
fn zstd_frame(data: &[u8]) -> Vec<u8> {
    let codec = ZstdCodec::new(3, true);
    zarrs::array::codec::api::BytesToBytesCodecTraits::encode(
        &codec,
        std::borrow::Cow::Borrowed(data),
        &CodecOptions::default(),
    )
    .unwrap()
    .into_owned()
}

/// zstd input of every shape zarrs' codec reads (several frames, a frame
/// without a content size, a skippable frame first) decodes to zarrs'
/// values into the whole output of a chunk, into a run of a taller output
/// and into a window of a wider one (not one run).
#[test]
fn zstd_frames_of_every_kind_decode_as_zarrs_decodes_them() {
    let chain = chains()
        .into_iter()
        .find(|c| c.name == "uint16 bytes alone (a copy)")
        .unwrap();
    let shape = [2u64, 10];
    let store = Arc::new(MemoryStore::new());
    let array = ArrayBuilder::new(
        shape.to_vec(),
        shape.to_vec(),
        chain.data_type.clone(),
        chain.fill_value.clone(),
    )
    .bytes_to_bytes_codecs(vec![Arc::new(ZstdCodec::new(3, false))])
    .build(store.clone(), "/")
    .unwrap();
    let values: Vec<u8> = (0..20u16).flat_map(|v| (v * 977).to_le_bytes()).collect();
    let frames = |parts: &[&[u8]]| -> Vec<u8> {
        parts
            .iter()
            .flat_map(|part| ::zstd::bulk::compress(part, 1).unwrap())
            .collect()
    };
    let mut skippable = 0x184D_2A50u32.to_le_bytes().to_vec();
    skippable.extend(3u32.to_le_bytes());
    skippable.extend([9, 9, 9]);
    skippable.extend(frames(&[&values]));
    let inputs = [
        ("one frame", frames(&[&values])),
        (
            "three frames",
            frames(&[&values[..6], &values[6..30], &values[30..]]),
        ),
        (
            "no content size",
            ::zstd::stream::encode_all(&values[..], 1).unwrap(),
        ),
        ("a skippable frame first", skippable),
    ];
    let options = CodecOptions::default();
    let decoder = decoder_for(&array, &[0, 0]);
    for (what, encoded) in inputs {
        let key = array.chunk_key(&[0, 0]);
        store.set(&key, encoded.clone().into()).unwrap();
        let expected = zarrs_chunk(&array);
        assert_eq!(&expected[..], &values[..], "{what}: zarrs");
        // (output shape, where the chunk goes): its own, rows 1..3 of a
        // taller one (one run), columns 2..12 of a wider one (two runs).
        for (out_shape, at) in [
            ([2u64, 10], [0u64, 0]),
            ([4, 10], [1, 0]),
            ([2, 14], [0, 2]),
        ] {
            let n = out_shape.iter().product::<u64>() as usize * 2;
            let mut out = vec![GUARD; n];
            let cells = unsafe_cell_slice::UnsafeCellSlice::new(out.as_mut_slice());
            let window = ArraySubset::new_with_start_shape(at.to_vec(), shape.to_vec()).unwrap();
            // SAFETY: the only window over `out` here.
            let mut target =
                unsafe { OutputWindow::new(cells, 2, &out_shape, window.clone()) }.unwrap();
            decoder
                .decode_into(
                    Some(&encoded),
                    &ArraySubset::new_with_shape(shape.to_vec()),
                    &mut target,
                    &options,
                )
                .unwrap();
            drop(target);
            let runs = window::Runs::new(window.start(), window.shape(), &out_shape);
            let mut got = Vec::new();
            for start in runs.starts() {
                got.extend_from_slice(&out[start * 2..(start + runs.len) * 2]);
            }
            assert_eq!(got, values, "{what}: into {out_shape:?} at {at:?}");
            let written: usize = runs.starts().count() * runs.len * 2;
            let guards = out.iter().filter(|&&b| b == GUARD).count();
            assert!(guards >= n - written, "{what}: written outside the window");
        }
    }
}

/// Chunk `[0, 0]` of `array` as zarrs' own chain decodes it.
fn zarrs_chunk(array: &Array<MemoryStore>) -> Vec<u8> {
    array
        .retrieve_chunk::<ArrayBytes<'static>>(&[0, 0])
        .unwrap()
        .into_fixed()
        .unwrap()
        .into_owned()
}
