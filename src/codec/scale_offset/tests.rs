use std::num::NonZeroU64;
use std::sync::Arc;

use serde_json::json;
use zarrs::array::codec::BytesCodec;
use zarrs::array::codec::api::{
    ArrayBytes, ArrayToArrayCodecTraits, ArrayToBytesCodecTraits, Codec, CodecMetadataOptions,
    CodecOptions, CodecTraits,
};
use zarrs::array::{ArraySubset, DataType, FillValue, data_type};
use zarrs::metadata::Configuration;
use zarrs::metadata::v3::MetadataV3;

use super::{ScaleOffsetCodec, ScaleOffsetCodecConfiguration};
use crate::test_support::elements;

fn codec(configuration: serde_json::Value) -> ScaleOffsetCodec {
    let configuration: ScaleOffsetCodecConfiguration =
        serde_json::from_value(configuration).unwrap();
    ScaleOffsetCodec::new_with_configuration(&configuration).unwrap()
}

/// Create through the zarrs plugin registry, as an array would.
fn from_metadata(metadata: serde_json::Value) -> Result<Codec, String> {
    let metadata: MetadataV3 = serde_json::from_value(metadata).unwrap();
    Codec::from_metadata(&metadata).map_err(|e| e.to_string())
}

fn shape(n: u64) -> Vec<NonZeroU64> {
    vec![NonZeroU64::new(n).unwrap()]
}

/// `encode` (or, with `decoding`, `decode`) a one-dimensional chunk of `values`.
fn apply<T: bytemuck::Pod>(
    codec: &ScaleOffsetCodec,
    data_type: &DataType,
    fill_value: &FillValue,
    values: &[T],
    decoding: bool,
) -> Result<Vec<T>, String> {
    let bytes = ArrayBytes::from(bytemuck::cast_slice::<T, u8>(values));
    let (shape, options) = (shape(values.len() as u64), CodecOptions::default());
    let output = if decoding {
        codec.decode(bytes, &shape, data_type, fill_value, &options)
    } else {
        codec.encode(bytes, &shape, data_type, fill_value, &options)
    };
    Ok(elements(
        &output.map_err(|e| e.to_string())?.into_fixed().unwrap(),
    ))
}

fn encode<T: bytemuck::Pod>(
    codec: &ScaleOffsetCodec,
    data_type: &DataType,
    fill_value: &FillValue,
    values: &[T],
) -> Result<Vec<T>, String> {
    apply(codec, data_type, fill_value, values, false)
}

fn decode<T: bytemuck::Pod>(
    codec: &ScaleOffsetCodec,
    data_type: &DataType,
    fill_value: &FillValue,
    values: &[T],
) -> Result<Vec<T>, String> {
    apply(codec, data_type, fill_value, values, true)
}

#[test]
fn uint16_range_reduction() {
    // The spec's example: [1000, 1255] shifted to [0, 255].
    let codec = codec(json!({ "offset": 1000 }));
    let (dt, fv) = (data_type::uint16(), FillValue::from(1000u16));
    let values = [1000u16, 1001, 1255];
    let encoded = encode(&codec, &dt, &fv, &values).unwrap();
    assert_eq!(encoded, [0, 1, 255]);
    assert_eq!(decode(&codec, &dt, &fv, &encoded).unwrap(), values);
    let encoded_fill = codec.encoded_fill_value(&dt, &fv).unwrap();
    assert_eq!(encoded_fill.as_ne_bytes(), 0u16.to_ne_bytes());
    // 999 - 1000 is not a uint16.
    let e = encode(&codec, &dt, &fv, &[1000u16, 999]).unwrap_err();
    assert_eq!(
        e,
        "scale_offset: encoding uint16: element 1 = 999: x - offset = -1 is outside the range [0, 65535] of uint16"
    );
}

#[test]
fn float64_with_nan_fill_value() {
    // The spec's example: offset -10, scale 0.1, fill value NaN.
    let codec = codec(json!({ "offset": -10, "scale": 0.1 }));
    let (dt, fv) = (data_type::float64(), FillValue::from(f64::NAN));
    let values = [0.0f64, 2540.0, 100.0];
    let encoded = encode(&codec, &dt, &fv, &values).unwrap();
    let expected: Vec<f64> = values.iter().map(|x| (x + 10.0) * 0.1).collect();
    assert_eq!(encoded, expected);
    let decoded = decode(&codec, &dt, &fv, &encoded).unwrap();
    let expected: Vec<f64> = expected.iter().map(|x| x / 0.1 - 10.0).collect();
    assert_eq!(decoded, expected);
    let encoded_fill = codec.encoded_fill_value(&dt, &fv).unwrap();
    assert!(f64::from_ne_bytes(encoded_fill.as_ne_bytes().try_into().unwrap()).is_nan());
}

#[test]
fn float32_scale_written_as_string() {
    let codec = codec(json!({ "offset": "0.5", "scale": "0x40000000" })); // scale 2.0f32
    let (dt, fv) = (data_type::float32(), FillValue::from(0.0f32));
    let encoded = encode(&codec, &dt, &fv, &[0.5f32, 1.5, -0.25]).unwrap();
    assert_eq!(encoded, [0.0, 2.0, -1.5]);
    assert_eq!(
        decode(&codec, &dt, &fv, &encoded).unwrap(),
        [0.5, 1.5, -0.25]
    );
    // (3e38 - 0.5) * 2 overflows float32 to +inf, as zarr-python (numpy) stores it.
    assert_eq!(
        encode(&codec, &dt, &fv, &[3e38f32]).unwrap(),
        [f32::INFINITY]
    );
}

#[test]
fn int4_and_float16() {
    let codec = codec(json!({ "offset": -1, "scale": 2 }));
    let (dt, fv) = (data_type::int4(), FillValue::from(-1i8));
    assert_eq!(encode(&codec, &dt, &fv, &[-1i8, 0, 2]).unwrap(), [0, 2, 6]);
    assert_eq!(decode(&codec, &dt, &fv, &[0i8, 2, 6]).unwrap(), [-1, 0, 2]);
    assert!(encode(&codec, &dt, &fv, &[3i8]).is_err()); // (3 + 1) * 2 = 8 > 7
    assert!(decode(&codec, &dt, &fv, &[3i8]).is_err()); // 3 / 2 is not exact

    let (dt, fv) = (data_type::float16(), FillValue::from(half::f16::ZERO));
    let values = [half::f16::from_f32(2048.0)];
    // (2048 + 1) rounds to 2048 in float16 before the multiplication.
    let encoded = encode(&codec, &dt, &fv, &values).unwrap();
    assert_eq!(encoded[0].to_f32(), 4096.0);
}

#[test]
fn unsupported_data_types() {
    let codec = codec(json!({ "scale": 2 }));
    for dt in [
        data_type::bool(),
        data_type::complex64(),
        data_type::string(),
    ] {
        let e = codec.encoded_data_type(&dt).unwrap_err().to_string();
        assert!(e.starts_with("scale_offset: data type "), "{e}");
        assert!(e.contains("is not supported"), "{e}");
    }
    assert_eq!(
        codec.encoded_data_type(&data_type::uint8()).unwrap(),
        data_type::uint8()
    );
}

#[test]
fn configuration_errors() {
    let e = from_metadata(
        json!({ "name": "scale_offset", "configuration": { "offset": 1, "scal": 2 } }),
    )
    .unwrap_err();
    assert!(
        e.starts_with("scale_offset: scal = 2: unknown configuration key"),
        "{e}"
    );
    let e = from_metadata(json!({ "name": "scale_offset", "configuration": { "offset": true } }))
        .unwrap_err();
    assert!(
        e.starts_with("scale_offset: offset = true: not a scalar"),
        "{e}"
    );
    let e = from_metadata(json!({ "name": "scale_offset", "configuration": { "scale": "abc" } }))
        .unwrap_err();
    assert!(
        e.starts_with("scale_offset: scale = \"abc\": not a scalar"),
        "{e}"
    );
    let e = from_metadata(json!({ "name": "scale_offset", "configuration": { "scale": null } }))
        .unwrap_err();
    assert!(
        e.starts_with("scale_offset: scale = null: not a scalar"),
        "{e}"
    );
    assert!(ScaleOffsetCodec::new(Some(json!([1])), None).is_err());
    // Every spelling of the fill-value encoding is accepted at creation.
    for value in [
        json!(1),
        json!(-2.5),
        json!("NaN"),
        json!("Infinity"),
        json!("+Infinity"),
        json!("-Infinity"),
        json!("0x7e"),
        json!("0x3c00"),
        json!("0x3f800000"),
        json!("0x3ff0000000000000"),
        json!("1000"),
        json!("1e-3"),
    ] {
        ScaleOffsetCodec::new(Some(value.clone()), Some(value.clone()))
            .unwrap_or_else(|e| panic!("{value}: {e}"));
    }
}

/// The error `encode` gives for a one-element chunk of fill value: where the
/// real fill value is checked (`encoded_fill_value` must tolerate the dummy
/// zero fill value zarrs 0.23 passes in `recommended_concurrency`).
fn fill_error(codec: &ScaleOffsetCodec, dt: &zarrs::array::DataType, fv: &FillValue) -> String {
    assert!(codec.encoded_fill_value(dt, fv).is_ok());
    codec
        .encode(
            ArrayBytes::new_fill_value(dt, 1, fv).unwrap(),
            &shape(1),
            dt,
            fv,
            &CodecOptions::default(),
        )
        .unwrap_err()
        .to_string()
}

#[test]
fn values_checked_against_the_data_type() {
    // 256 is a scalar, but not a uint8: found when the fill value is encoded.
    let codec = ScaleOffsetCodec::new(Some(json!(256)), None).unwrap();
    let e = fill_error(&codec, &data_type::uint8(), &FillValue::from(0u8));
    assert_eq!(
        e,
        "scale_offset: offset = 256: 256 is out of the range [0, 255] of uint8"
    );
    // 0.5 is not an integer.
    let codec = ScaleOffsetCodec::new(None, Some(json!(0.5))).unwrap();
    let e = fill_error(&codec, &data_type::int32(), &FillValue::from(0i32));
    assert!(e.starts_with("scale_offset: scale = 0.5: "), "{e}");
    // A zero scale.
    let codec = ScaleOffsetCodec::new(None, Some(json!(0))).unwrap();
    let e = fill_error(&codec, &data_type::float32(), &FillValue::from(0f32));
    assert_eq!(e, "scale_offset: scale = 0: the scale must not be zero");
    // A fill value that does not survive encoding.
    let codec = ScaleOffsetCodec::new(Some(json!(10)), None).unwrap();
    let e = fill_error(&codec, &data_type::uint8(), &FillValue::from(5u8));
    assert!(
        e.starts_with(
            "scale_offset: fill value 5 of uint8: x - offset = -5 is outside the range [0, 255] of uint8: writing is refused"
        ),
        "{e}"
    );
}

#[test]
fn wrong_chunk_length() {
    let codec = codec(json!({ "offset": 1 }));
    let bytes = ArrayBytes::from(vec![0u8; 6]);
    let e = codec
        .encode(
            bytes,
            &shape(4),
            &data_type::uint16(),
            &FillValue::from(1u16),
            &CodecOptions::default(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("scale_offset: chunk has 6 bytes"), "{e}");
}

#[test]
fn configuration_round_trips() {
    let options = CodecMetadataOptions::default();
    let configuration_of = |metadata: serde_json::Value| -> Option<Configuration> {
        let Codec::ArrayToArray(codec) = from_metadata(metadata).unwrap() else {
            panic!("not an array to array codec")
        };
        codec.configuration_v3(&options)
    };
    // No configuration: an empty one, which zarrs writes as
    // `{"name": "scale_offset"}` (with `None` it would leave the codec out).
    let empty = Some(Configuration::default());
    assert_eq!(configuration_of(json!({ "name": "scale_offset" })), empty);
    assert_eq!(configuration_of(json!("scale_offset")), empty);
    let written = json!({ "offset": 1000, "scale": "0.25" });
    let configuration =
        configuration_of(json!({ "name": "scale_offset", "configuration": written }));
    assert_eq!(
        serde_json::to_value(configuration.unwrap()).unwrap(),
        written
    );
    let configuration = configuration_of(json!({ "name": "scale_offset", "configuration": {} }));
    assert_eq!(configuration, Some(Configuration::default()));
    assert_eq!(
        ScaleOffsetCodec::new(None, None)
            .unwrap()
            .configuration_v3(&options),
        empty
    );
}

/// A new array built with a no-op `scale_offset` keeps it in its metadata,
/// in the form zarr-python writes.
#[test]
fn no_op_codec_stays_in_new_array_metadata() {
    let store = Arc::new(zarrs::storage::store::MemoryStore::new());
    let array = zarrs::array::ArrayBuilder::new(vec![4], vec![4], data_type::float64(), 0.0f64)
        .array_to_array_codecs(vec![Arc::new(ScaleOffsetCodec::new(None, None).unwrap())])
        .array_to_bytes_codec(Arc::new(BytesCodec::default()))
        .build(store, "/")
        .unwrap();
    let metadata = serde_json::to_value(array.metadata()).unwrap();
    assert_eq!(metadata["codecs"][0], json!({ "name": "scale_offset" }));
}

#[test]
fn no_op_configuration() {
    let codec = ScaleOffsetCodec::new(None, None).unwrap();
    let (dt, fv) = (data_type::float32(), FillValue::from(-0.0f32));
    let values = [-0.0f32, f32::NAN, 1.0];
    let encoded = encode(&codec, &dt, &fv, &values).unwrap();
    assert_eq!(
        bytemuck::cast_slice::<f32, u8>(&encoded),
        bytemuck::cast_slice::<f32, u8>(&values)
    );
    assert_eq!(codec.encoded_fill_value(&dt, &fv).unwrap(), fv);
}

#[allow(clippy::single_range_in_vec_init)]
#[test]
fn partial_decode() {
    let codec = Arc::new(codec(json!({ "offset": 100, "scale": -2 })));
    let values: Vec<i32> = (0..32).map(|i| 100 + i).collect();
    let (dt, fv) = (data_type::int32(), FillValue::from(100i32));
    let chunk_shape = shape(32);
    let encoded = codec
        .encode(
            ArrayBytes::from(bytemuck::cast_slice::<i32, u8>(&values)),
            &chunk_shape,
            &dt,
            &fv,
            &CodecOptions::default(),
        )
        .unwrap()
        .into_owned();
    let encoded_fill = codec.encoded_fill_value(&dt, &fv).unwrap();
    let input_handle = Arc::new(encoded.into_fixed().unwrap());
    let bytes_codec = Arc::new(BytesCodec::default());
    let input_handle = bytes_codec
        .partial_decoder(
            input_handle,
            &chunk_shape,
            &dt,
            &encoded_fill,
            &CodecOptions::default(),
        )
        .unwrap();
    let partial_decoder = codec
        .clone()
        .partial_decoder(
            input_handle.clone(),
            &chunk_shape,
            &dt,
            &fv,
            &CodecOptions::default(),
        )
        .unwrap();
    assert_eq!(partial_decoder.size_held(), input_handle.size_held());
    for (range, expected) in [
        (3..5u64, vec![103, 104]),
        (17..21, vec![117, 118, 119, 120]),
    ] {
        let subset = ArraySubset::new_with_ranges(&[range]);
        let decoded = partial_decoder
            .partial_decode(&subset, &CodecOptions::default())
            .unwrap();
        let decoded: Vec<i32> = elements(&decoded.into_fixed().unwrap());
        assert_eq!(decoded, expected);
    }
    assert_eq!(
        codec.partial_decoder_capability(),
        zarrs::array::codec::api::PartialDecoderCapability {
            partial_read: true,
            partial_decode: true
        }
    );
}

#[test]
fn array_round_trip_through_a_store() {
    use zarrs::array::{Array, ArrayMetadata};
    use zarrs::storage::store::MemoryStore;

    let metadata: ArrayMetadata = serde_json::from_value(json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": [6],
        "data_type": "float32",
        "chunk_grid": { "name": "regular", "configuration": { "chunk_shape": [4] } },
        "chunk_key_encoding": { "name": "default" },
        "fill_value": "NaN",
        "codecs": [
            { "name": "scale_offset", "configuration": { "offset": 5, "scale": 0.5 } },
            { "name": "bytes", "configuration": { "endian": "little" } }
        ]
    }))
    .unwrap();
    let store = Arc::new(MemoryStore::new());
    let array = Array::new_with_metadata(store.clone(), "/", metadata).unwrap();
    array.store_metadata().unwrap();
    array
        .store_chunk(&[0], &[5.0f32, 7.0, -1.0, f32::NAN])
        .unwrap();
    // Stored (little-endian): (x - 5) * 0.5.
    let stored = zarrs::storage::ReadableStorageTraits::get(&*store, &"c/0".try_into().unwrap())
        .unwrap()
        .unwrap();
    let stored: Vec<f32> = stored
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(&stored[..3], &[0.0, 1.0, -3.0]);
    assert!(stored[3].is_nan());
    let read: Vec<f32> = array.retrieve_array_subset(&array.subset_all()).unwrap();
    assert_eq!(&read[..3], &[5.0, 7.0, -1.0]);
    assert!(read[3..].iter().all(|v| v.is_nan())); // NaN, then the NaN fill value
    // The codec metadata is written back as read.
    let reopened = Array::open(store, "/").unwrap();
    let written = serde_json::to_value(reopened.metadata()).unwrap();
    assert_eq!(
        written["codecs"][0],
        json!({ "name": "scale_offset", "configuration": { "offset": 5, "scale": 0.5 } })
    );
}

/// A missing chunk reads as the array's fill value, in a window as in a
/// whole read, although decoding the encoded fill value does not give it
/// back: by hand, 0 encodes to (0 - -3) * 0.1 = 0.30000000000000004, which
/// decodes to 0.30000000000000004 / 0.1 - 3 = 4.440892098500626e-16 (found
/// by the `round_trip` fuzz target). A written chunk beside it still decodes.
#[test]
fn missing_chunks_read_as_the_fill_value_in_windows() {
    use zarrs::array::{Array, ArrayMetadata};
    use zarrs::storage::store::MemoryStore;

    assert_eq!(
        (0.0f64 - -3.0) * 0.1 / 0.1 + -3.0,
        4.440_892_098_500_626e-16
    );
    let metadata: ArrayMetadata = serde_json::from_value(json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": [8, 10],
        "data_type": "float64",
        "chunk_grid": { "name": "regular", "configuration": { "chunk_shape": [2, 6] } },
        "chunk_key_encoding": { "name": "default" },
        "fill_value": 0.0,
        "codecs": [
            { "name": "scale_offset", "configuration": { "offset": -3.0, "scale": 0.1 } },
            { "name": "bytes", "configuration": { "endian": "little" } }
        ]
    }))
    .unwrap();
    let array = Array::new_with_metadata(Arc::new(MemoryStore::new()), "/", metadata).unwrap();
    array.store_chunk(&[0, 0], &[1.5f64; 12]).unwrap();
    let whole: Vec<f64> = array.retrieve_array_subset(&array.subset_all()).unwrap();
    // Rows 1..5, columns 3..8: chunks (0, 0) (written), (0, 1), (1, 0),
    // (1, 1), (2, 0), (2, 1) (missing), each cut by the window.
    let window = ArraySubset::new_with_ranges(&[1..5, 3..8]);
    let part: Vec<f64> = array.retrieve_array_subset(&window).unwrap();
    for (i, &v) in part.iter().enumerate() {
        let (row, column) = (1 + i / 5, 3 + i % 5);
        assert_eq!(
            v.to_bits(),
            whole[row * 10 + column].to_bits(),
            "({row}, {column})"
        );
        let written = row < 2 && column < 6;
        assert_eq!(v, if written { 1.5 } else { 0.0 }, "({row}, {column})");
    }
}

/// Encode (or decode) `bytes` as a borrowed and as an owned chunk of `n`
/// elements with `options`; both must give the same result, which is returned.
fn borrowed_and_owned(
    codec: &ScaleOffsetCodec,
    (data_type, fill_value): (&DataType, &FillValue),
    bytes: &[u8],
    n: u64,
    decoding: bool,
    options: &CodecOptions,
) -> Result<Vec<u8>, String> {
    let apply = |input: ArrayBytes<'_>| {
        let output = if decoding {
            codec.decode(input, &shape(n), data_type, fill_value, options)
        } else {
            codec.encode(input, &shape(n), data_type, fill_value, options)
        };
        output
            .map(|b| b.into_fixed().unwrap().into_owned())
            .map_err(|e| e.to_string())
    };
    let borrowed = apply(ArrayBytes::new_flen(std::borrow::Cow::Borrowed(bytes)));
    let owned = apply(ArrayBytes::new_flen(std::borrow::Cow::Owned(
        bytes.to_vec(),
    )));
    assert_eq!(borrowed, owned);
    borrowed
}

/// `(x - -10) * 0.1` and back on `n` float64 elements, both ways, compared
/// with Rust's own arithmetic.
fn check_float64_round_trip(n: u32, options: &CodecOptions) {
    let codec64 = codec(json!({ "offset": -10, "scale": 0.1 }));
    let (dt, fv) = (data_type::float64(), FillValue::from(f64::NAN));
    let values: Vec<f64> = (0..n).map(|i| f64::from(i % 5000) * 1.7 - 10.0).collect();
    let encoded = borrowed_and_owned(
        &codec64,
        (&dt, &fv),
        bytemuck::cast_slice(&values),
        n.into(),
        false,
        options,
    )
    .unwrap();
    for (x, y) in values.iter().zip(elements::<f64>(&encoded)) {
        assert_eq!(y.to_bits(), ((x - -10.0) * 0.1f64).to_bits());
    }
    let decoded =
        borrowed_and_owned(&codec64, (&dt, &fv), &encoded, n.into(), true, options).unwrap();
    for (x, y) in elements::<f64>(&encoded)
        .iter()
        .zip(elements::<f64>(&decoded))
    {
        assert_eq!(y.to_bits(), (x / 0.1 + -10.0f64).to_bits());
    }
}

/// A uint16 chunk of `n` elements (offset 1000) with bad elements at `bad`;
/// the error of encoding it.
fn uint16_encode_error(n: usize, bad: &[(usize, u16)], options: &CodecOptions) -> String {
    let codec16 = codec(json!({ "offset": 1000 }));
    let (dt, fv) = (data_type::uint16(), FillValue::from(1000u16));
    let mut values: Vec<u16> = vec![1000; n];
    for &(i, v) in bad {
        values[i] = v;
    }
    let bytes = bytemuck::cast_slice(&values);
    borrowed_and_owned(&codec16, (&dt, &fv), bytes, n as u64, false, options).unwrap_err()
}

/// Borrowed input is transformed into a new buffer, owned input in place:
/// both give the same bytes, and the same error naming the same element.
#[test]
fn borrowed_and_owned_input_agree() {
    let options = CodecOptions::default();
    // float64 over more than one block.
    check_float64_round_trip(1500, &options);
    // uint16: the error names the first bad element, either way.
    assert_eq!(
        uint16_encode_error(1200, &[(700, 999), (900, 5)], &options),
        "scale_offset: encoding uint16: element 700 = 999: x - offset = -1 is outside the range [0, 65535] of uint16"
    );
}

/// A chunk of several MiB is split into parts on up to `concurrent_target`
/// threads: the results are the same, and an error names the first bad
/// element by its index in the whole chunk, not in its part.
#[test]
#[cfg_attr(
    miri,
    ignore = "megabytes through the codec; codec::parallel's tests split buffers across threads under Miri"
)]
fn large_chunks_split_across_threads() {
    let options = CodecOptions::default().with_concurrent_target(4);
    // 4 MiB of float64: four parts of 1 MiB.
    check_float64_round_trip(1 << 19, &options);
    // 2 MiB of uint16: two parts of 2^19 elements. The first bad element is
    // in the second part, another one after it.
    assert_eq!(
        uint16_encode_error(1 << 20, &[(700_000, 999), (900_000, 5)], &options),
        "scale_offset: encoding uint16: element 700000 = 999: x - offset = -1 is outside the range [0, 65535] of uint16"
    );
    // Bad elements in both parts: the one in the first part is named.
    assert_eq!(
        uint16_encode_error(1 << 20, &[(600_000, 5), (3, 999)], &options),
        "scale_offset: encoding uint16: element 3 = 999: x - offset = -1 is outside the range [0, 65535] of uint16"
    );
}

/// A large subset read through the partial decoder is split across threads
/// too: the values are right, and an error names the element by its index in
/// the subset.
#[test]
#[cfg_attr(
    miri,
    ignore = "megabytes through the codec; codec::parallel's tests split buffers across threads under Miri"
)]
fn partial_decode_of_a_large_subset() {
    let options = CodecOptions::default().with_concurrent_target(4);
    let codec = Arc::new(codec(json!({ "offset": 100, "scale": -2 })));
    let n: u32 = 1 << 20; // 4 MiB of int32
    let (dt, fv) = (data_type::int32(), FillValue::from(100i32));
    let chunk_shape = shape(n.into());
    // Encoded by hand: (x - 100) * -2 with x = 100 + i % 1000.
    let mut encoded: Vec<i32> = (0..n)
        .map(|i| -2 * i32::try_from(i % 1000).unwrap())
        .collect();
    let decode_subset = |encoded: &[i32]| {
        let input_handle = Arc::new(
            ArrayBytes::from(bytemuck::cast_slice::<i32, u8>(encoded).to_vec())
                .into_fixed()
                .unwrap(),
        );
        let encoded_fill = codec.encoded_fill_value(&dt, &fv).unwrap();
        let input_handle = Arc::new(BytesCodec::default())
            .partial_decoder(input_handle, &chunk_shape, &dt, &encoded_fill, &options)
            .unwrap();
        let range = 100_000..900_000;
        let subset = ArraySubset::new_with_ranges(std::slice::from_ref(&range));
        codec
            .clone()
            .partial_decoder(input_handle, &chunk_shape, &dt, &fv, &options)
            .unwrap()
            .partial_decode(&subset, &options)
            .map(|decoded| elements::<i32>(&decoded.into_fixed().unwrap()))
            .map_err(|e| e.to_string())
    };
    let decoded = decode_subset(&encoded).unwrap();
    assert_eq!(decoded.len(), 800_000);
    for (i, y) in (100_000u32..).zip(decoded) {
        assert_eq!(y, 100 + i32::try_from(i % 1000).unwrap());
    }
    // An odd encoded value cannot be divided by -2: chunk element 700000 is
    // subset element 600000, in the third of three parts.
    encoded[700_000] = 3;
    assert_eq!(
        decode_subset(&encoded).unwrap_err(),
        "scale_offset: decoding int32: element 600000 = 3: x / scale = 3 / -2 is not an integer (decoding is not exact)"
    );
}

/// Decoding bytes that are not whole elements is an error, not a panic,
/// whether the bytes are borrowed or owned.
#[test]
fn partial_elements_are_an_error() {
    use crate::codec::ElementwiseDecode;
    let codec = codec(json!({ "offset": 1 }));
    let bytes = [1u8, 2, 3];
    for input in [
        ArrayBytes::new_flen(std::borrow::Cow::Borrowed(&bytes[..])),
        ArrayBytes::new_flen(std::borrow::Cow::Owned(bytes.to_vec())),
    ] {
        let e = codec
            .decode_elements(input, &data_type::uint16(), &CodecOptions::default())
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "scale_offset: decoding uint16: 3 bytes is not a whole number of uint16 elements"
        );
    }
}
