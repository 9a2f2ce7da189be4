//! `zarrs.vlen`: this crate's codec against zarrs' built-in `VlenCodec`.
//!
//! For every configuration both support: the same encoded bytes, each
//! decodes the other's chunks to the same values, and the same configuration
//! metadata; through the codec API and through whole arrays (also inside
//! `sharding_indexed`), with arrays built from explicit codec objects.
//! Where the two differ on purpose, a test below says how.

mod common;

use common::nonzero;
use common::vlen;

use std::sync::Arc;

use serde_json::json;
use zarrs::array::codec::api::{
    ArrayBytes, ArrayBytesOffsets, ArrayToBytesCodecTraits, CodecMetadataOptions, CodecOptions,
};
use zarrs::array::codec::{
    ShardingCodecBuilder, VlenCodec as BuiltinVlen, VlenCodecConfiguration as BuiltinConfiguration,
};
use zarrs::array::{Array, ArrayBuilder, ArraySubset, DataType, FillValue, data_type};
use zarrs::storage::store::MemoryStore;
use zarrs_extension_codecs::codec::vlen::{VlenCodec, VlenCodecConfiguration};

/// The index chains tried: `bytes` in both orders, with a checksum, with a
/// byte shuffle, and with this crate's `scale_offset` (auto-registered, so
/// zarrs' built-in resolves it too).
fn index_chains(index_data_type: &str) -> Vec<serde_json::Value> {
    let size = if index_data_type == "uint32" { 4 } else { 8 };
    vec![
        json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
        json!([{"name": "bytes", "configuration": {"endian": "big"}}]),
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]),
        json!([{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "numcodecs.shuffle", "configuration": {"elementsize": size}}]),
        json!([{"name": "scale_offset", "configuration": {"offset": 0, "scale": 3}},
               {"name": "bytes", "configuration": {"endian": "big"}}]),
    ]
}

fn data_chains() -> Vec<serde_json::Value> {
    vec![
        json!([{"name": "bytes"}]),
        json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
        json!([{"name": "bytes"}, {"name": "crc32c"}]),
        json!([{"name": "bytes"}, {"name": "numcodecs.shuffle", "configuration": {"elementsize": 1}},
               {"name": "crc32c"}]),
    ]
}

/// Every configuration both implementations read, with a label.
fn configurations() -> Vec<(String, serde_json::Value)> {
    let mut all = vec![];
    for index_data_type in ["uint32", "uint64"] {
        for index in index_chains(index_data_type) {
            for data in data_chains() {
                for location in [None, Some("start"), Some("end")] {
                    let mut configuration = json!({
                        "index_codecs": index,
                        "data_codecs": data,
                        "index_data_type": index_data_type,
                    });
                    if let Some(location) = location {
                        configuration["index_location"] = json!(location);
                    }
                    all.push((configuration.to_string(), configuration));
                }
            }
        }
    }
    all
}

fn ours(configuration: &serde_json::Value) -> VlenCodec {
    let configuration: VlenCodecConfiguration =
        serde_json::from_value(configuration.clone()).unwrap();
    VlenCodec::new_with_configuration(&configuration).unwrap()
}

fn builtin(configuration: &serde_json::Value) -> BuiltinVlen {
    let configuration: BuiltinConfiguration =
        serde_json::from_value(configuration.clone()).unwrap();
    BuiltinVlen::new_with_configuration(&configuration).unwrap()
}

/// Data sets: mixed lengths with empty and non-ASCII elements, all empty,
/// a single element, and a larger deterministic set.
fn data_sets() -> Vec<(Vec<u64>, Vec<Vec<u8>>)> {
    let mixed: Vec<Vec<u8>> = [
        "",
        "a",
        "héllo",
        "",
        "日本語のテキスト",
        "z",
        "0123456789abcdef",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let many: Vec<Vec<u8>> = (0..1000u32)
        .map(|i| (0..(i * 7919 % 23)).map(|j| (i + j) as u8).collect())
        .collect();
    vec![
        (vec![7], mixed.clone()),
        (vec![3], vec![vec![], vec![], vec![]]),
        (vec![1], vec![b"only".to_vec()]),
        (vec![1], vec![vec![]]),
        (vec![10, 100], many),
        (vec![1, 7], mixed),
    ]
}

#[test]
fn codec_api_same_bytes_and_cross_decoding() {
    let options = CodecOptions::default();
    let mut checked = 0;
    for (label, configuration) in configurations() {
        let (ours, builtin) = (ours(&configuration), builtin(&configuration));
        for data_type in [data_type::string(), data_type::bytes()] {
            let fill = FillValue::new(vec![]);
            for (dims, values) in data_sets() {
                let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
                let shape = nonzero(&dims);
                let input = vlen(&refs);
                let a = ours
                    .encode(input.clone(), &shape, &data_type, &fill, &options)
                    .unwrap()
                    .into_owned();
                let b = builtin
                    .encode(input.clone(), &shape, &data_type, &fill, &options)
                    .unwrap()
                    .into_owned();
                assert_eq!(a, b, "{label} {dims:?}");
                // A borrowed input (whose buffer cannot be reused) too.
                let (data, offsets) = input.clone().into_variable().unwrap().into_parts();
                let borrowed =
                    ArrayBytes::new_vlen(&data[..], ArrayBytesOffsets::new(&offsets[..]).unwrap())
                        .unwrap();
                let c = ours
                    .encode(borrowed, &shape, &data_type, &fill, &options)
                    .unwrap();
                assert_eq!(&*c, &a[..], "{label} {dims:?}");
                // Each decodes the other's chunk (borrowed and owned input).
                for chunk in [std::borrow::Cow::Borrowed(&b[..]), a.clone().into()] {
                    let decoded = ours
                        .decode(chunk, &shape, &data_type, &fill, &options)
                        .unwrap();
                    assert_eq!(decoded, input, "{label}");
                }
                let decoded = builtin
                    .decode(a.into(), &shape, &data_type, &fill, &options)
                    .unwrap();
                assert_eq!(decoded, input, "{label}");
                checked += 1;
            }
        }
        // The same configuration metadata, also for the older form (both
        // write `index_location`).
        let metadata_options = CodecMetadataOptions::default();
        use zarrs::array::codec::api::CodecTraits;
        assert_eq!(
            ours.configuration_v3(&metadata_options),
            builtin.configuration_v3(&metadata_options),
            "{label}"
        );
    }
    // index types x index chains x data chains x locations x data types x sets
    assert_eq!(checked, 2 * 5 * 4 * 3 * 2 * data_sets().len());
}

/// The built-in writes an input that starts with unused bytes
/// (`offsets[0] > 0`, which zarrs' `ArrayBytes` allows) as it is, with a
/// non-zero first offset; this crate writes only the elements, so its chunk
/// differs, and the built-in still reads it. This crate refuses the
/// built-in's chunk: the first offset must be 0.
#[test]
fn input_with_leading_unused_bytes_differs_on_purpose() {
    let configuration = json!({
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "data_codecs": [{"name": "bytes"}],
        "index_data_type": "uint32",
    });
    let (ours, builtin) = (ours(&configuration), builtin(&configuration));
    let options = CodecOptions::default();
    let (data_type, fill, shape) = (data_type::string(), FillValue::from(""), nonzero(&[2]));
    let padded = ArrayBytes::new_vlen(
        b"xxab".to_vec(),
        ArrayBytesOffsets::new(vec![2, 3, 4]).unwrap(),
    )
    .unwrap();
    let expected = vlen(&[b"a", b"b"]);
    let a = ours
        .encode(padded.clone(), &shape, &data_type, &fill, &options)
        .unwrap();
    let b = builtin
        .encode(padded, &shape, &data_type, &fill, &options)
        .unwrap();
    // By hand: ours is len 12 | 0, 1, 2 | "ab"; the built-in's is
    // len 12 | 2, 3, 4 | "xxab".
    let mut by_hand = 12u64.to_le_bytes().to_vec();
    [0u32, 1, 2]
        .iter()
        .for_each(|o| by_hand.extend(o.to_le_bytes()));
    by_hand.extend(b"ab");
    assert_eq!(&*a, &by_hand[..]);
    assert_ne!(a, b);
    let decoded = builtin
        .decode(a, &shape, &data_type, &fill, &options)
        .unwrap();
    assert_eq!(decoded, expected);
    let err = ours
        .decode(b, &shape, &data_type, &fill, &options)
        .unwrap_err();
    assert!(err.to_string().contains("first offset must be 0"), "{err}");
}

/// A 7 x 5 array of strings (with empty ones and fill values), in chunks of
/// 3 x 2 (partial edge chunks).
///
/// No chunk holds only `""` and `"fill"`: zarrs 0.23.14 decides that a
/// variable-length chunk is all fill value by comparing its concatenated
/// bytes alone, so it would not store `["", "fill"]` (which then reads back
/// as `["fill", "fill"]`), whichever codec is used.
fn array_values() -> Vec<String> {
    (0..35)
        .map(|i| match i % 6 {
            3 => String::new(),
            1 => "fill".to_string(),
            _ => format!("{i}-{}", "é".repeat(i % 5)),
        })
        .collect()
}

fn build_array(
    store: &Arc<MemoryStore>,
    codec: Arc<dyn ArrayToBytesCodecTraits>,
    sharded: bool,
) -> Array<MemoryStore> {
    let data_type: DataType = data_type::string();
    let (chunk_shape, codec): (Vec<u64>, Arc<dyn ArrayToBytesCodecTraits>) = if sharded {
        let sharding = ShardingCodecBuilder::new(nonzero(&[2, 2]), &data_type)
            .array_to_bytes_codec(codec)
            .build_arc();
        (vec![4, 4], sharding)
    } else {
        (vec![3, 2], codec)
    };
    ArrayBuilder::new(vec![7, 5], chunk_shape, data_type, "fill")
        .array_to_bytes_codec(codec)
        .codec_specific_options(common::c_order())
        .build(store.clone(), "/")
        .unwrap()
}

#[test]
fn whole_arrays_same_stores_and_cross_reading() {
    let values = array_values();
    let all = ArraySubset::new_with_ranges(&[0..7, 0..5]);
    let part = ArraySubset::new_with_ranges(&[1..6, 1..4]);
    let expected_part: Vec<String> = (1..6)
        .flat_map(|r| (1..4).map(move |c| r * 5 + c))
        .map(|i| values[i].clone())
        .collect();
    for (label, configuration) in configurations() {
        for sharded in [false, true] {
            let ours = || Arc::new(self::ours(&configuration)) as Arc<dyn ArrayToBytesCodecTraits>;
            let builtin =
                || Arc::new(self::builtin(&configuration)) as Arc<dyn ArrayToBytesCodecTraits>;
            let (store_a, store_b) = (Arc::new(MemoryStore::new()), Arc::new(MemoryStore::new()));
            let array_a = build_array(&store_a, ours(), sharded);
            let array_b = build_array(&store_b, builtin(), sharded);
            for array in [&array_a, &array_b] {
                array.store_metadata().unwrap();
                array.store_array_subset(&all, values.clone()).unwrap();
            }
            // The same metadata and chunks.
            assert_eq!(
                common::store_contents(&store_a),
                common::store_contents(&store_b),
                "{label} sharded={sharded}"
            );
            // Each reads the other's store, whole and in part.
            for (store, codec) in [(&store_a, builtin()), (&store_b, ours())] {
                let array = build_array(store, codec, sharded);
                let read: Vec<String> = array.retrieve_array_subset(&all).unwrap();
                assert_eq!(read, values, "{label} sharded={sharded}");
                let read: Vec<String> = array.retrieve_array_subset(&part).unwrap();
                assert_eq!(read, expected_part, "{label} sharded={sharded}");
            }
        }
    }
}

/// Corrupt chunks: where zarrs' built-in departs from the layout, this crate
/// follows it (an error, never a panic).
#[test]
fn corrupt_chunks_where_the_builtin_departs() {
    let configuration = json!({
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "data_codecs": [{"name": "bytes"}],
        "index_data_type": "uint32",
        "index_location": "start",
    });
    let (ours, builtin) = (ours(&configuration), builtin(&configuration));
    let options = CodecOptions::default();
    let (data_type, fill, shape) = (data_type::string(), FillValue::from(""), nonzero(&[2]));
    let chunk = |len_field: u64, offsets: [u32; 3], data: &[u8]| {
        let mut chunk = len_field.to_le_bytes().to_vec();
        offsets.iter().for_each(|o| chunk.extend(o.to_le_bytes()));
        chunk.extend(data);
        chunk
    };

    // A first offset of 1: the built-in reads elements "b" and "c" and
    // ignores the byte before them; the layout has offset 0 first.
    let shifted = chunk(12, [1, 2, 3], b"abc");
    let decoded = builtin
        .decode(shifted.clone().into(), &shape, &data_type, &fill, &options)
        .unwrap();
    let (data, offsets) = decoded.into_variable().unwrap().into_parts();
    assert_eq!((&*data, &*offsets), (&b"abc"[..], &[1usize, 2, 3][..]));
    let err = ours
        .decode(shifted.into(), &shape, &data_type, &fill, &options)
        .unwrap_err();
    assert!(err.to_string().contains("first offset must be 0"), "{err}");

    // An index length beyond the chunk: the built-in panics (slicing out of
    // range); this crate returns an error.
    let long = chunk(1 << 20, [0, 1, 2], b"ab");
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = builtin.decode(long.clone().into(), &shape, &data_type, &fill, &options);
    }))
    .is_err();
    assert!(
        panicked,
        "zarrs' built-in no longer panics: update this test"
    );
    let err = ours
        .decode(long.into(), &shape, &data_type, &fill, &options)
        .unwrap_err();
    assert!(
        err.to_string().contains("index length field is 1048576"),
        "{err}"
    );
}
