use std::num::NonZeroU64;
use std::sync::Arc;

use serde_json::json;
use zarrs::array::codec::BytesCodec;
use zarrs::array::codec::api::{
    ArrayBytes, ArrayToArrayCodecTraits, ArrayToBytesCodecTraits, Codec, CodecMetadataOptions,
    CodecOptions,
};
use zarrs::array::{ArraySubset, DataType, FillValue, data_type};
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::ZarrVersion;

use super::CastValueCodec;

/// Create through the zarrs plugin registry, as `Array::open` does.
fn create(configuration: serde_json::Value) -> Result<Arc<dyn ArrayToArrayCodecTraits>, String> {
    let metadata: MetadataV3 =
        serde_json::from_value(json!({ "name": "cast_value", "configuration": configuration }))
            .unwrap();
    match Codec::from_metadata(&metadata).map_err(|e| e.to_string())? {
        Codec::ArrayToArray(codec) => Ok(codec),
        _ => panic!("cast_value is an array to array codec"),
    }
}

fn shape(n: usize) -> Vec<NonZeroU64> {
    vec![NonZeroU64::new(n as u64).unwrap()]
}

fn encode(
    codec: &dyn ArrayToArrayCodecTraits,
    data_type: &DataType,
    fill_value: &FillValue,
    bytes: Vec<u8>,
    n: usize,
) -> Result<Vec<u8>, String> {
    codec
        .encode(
            ArrayBytes::from(bytes),
            &shape(n),
            data_type,
            fill_value,
            &CodecOptions::default(),
        )
        .map(|b| b.into_fixed().unwrap().into_owned())
        .map_err(|e| e.to_string())
}

fn f64_bytes(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

fn u8_map_codec() -> Arc<dyn ArrayToArrayCodecTraits> {
    create(json!({
        "data_type": "uint8",
        "rounding": "nearest-even",
        "scalar_map": { "encode": [["NaN", 0]], "decode": [[0, "NaN"]] }
    }))
    .unwrap()
}

#[test]
fn registered_and_round_trips_the_spec_example() {
    let codec = u8_map_codec();
    let (dt, fv) = (data_type::float64(), FillValue::from(f64::NAN));
    assert_eq!(codec.encoded_data_type(&dt).unwrap(), data_type::uint8());
    // NaN -> 0 by the map; 2.5 -> 2 (ties to even); 254.5 -> 254; 1 -> 1.
    let encoded = encode(
        &*codec,
        &dt,
        &fv,
        f64_bytes(&[f64::NAN, 2.5, 254.5, 1.0]),
        4,
    )
    .unwrap();
    assert_eq!(encoded, [0, 2, 254, 1]);
    let decoded = codec
        .decode(
            ArrayBytes::from(encoded),
            &shape(4),
            &dt,
            &fv,
            &CodecOptions::default(),
        )
        .unwrap()
        .into_fixed()
        .unwrap()
        .into_owned();
    let decoded: Vec<f64> = decoded
        .chunks_exact(8)
        .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    assert!(decoded[0].is_nan());
    assert_eq!(&decoded[1..], &[2.0, 254.0, 1.0]);
    // The NaN fill value encodes to 0, through the map.
    assert_eq!(
        codec.encoded_fill_value(&dt, &fv).unwrap().as_ne_bytes(),
        &[0]
    );
}

#[test]
fn configuration_errors_name_codec_field_and_value() {
    let cases = [
        (
            json!({ "data_type": "uint8", "colour": 1 }),
            "cast_value: colour = 1: unknown configuration key",
        ),
        (json!({}), "cast_value: data_type = (missing)"),
        (
            json!({ "data_type": "bool" }),
            "cast_value: data_type = \"bool\"",
        ),
        (
            json!({ "data_type": "nonsense" }),
            "cast_value: data_type = \"nonsense\"",
        ),
        (
            json!({ "data_type": "uint8", "rounding": "up" }),
            "cast_value: rounding = \"up\"",
        ),
        (
            json!({ "data_type": "uint8", "rounding": 3 }),
            "cast_value: rounding = 3",
        ),
        (
            json!({ "data_type": "uint8", "out_of_range": "saturate" }),
            "cast_value: out_of_range = \"saturate\"",
        ),
        (
            json!({ "data_type": "float32", "out_of_range": "wrap" }),
            "cast_value: out_of_range = \"wrap\": wrap is only defined for integer data types, not float32",
        ),
        // 256 is not a uint8: a decode key is written in the target's encoding.
        (
            json!({ "data_type": "uint8", "scalar_map": { "decode": [[256, 0]] } }),
            "cast_value: scalar_map.decode = [256,0]: 256 is out of the range [0, 255] of uint8",
        ),
        // "NaN" is not a uint8 either: an encode value is in the target's encoding.
        (
            json!({ "data_type": "uint8", "scalar_map": { "encode": [[0, "NaN"]] } }),
            "cast_value: scalar_map.encode = [0,\"NaN\"]",
        ),
        (
            json!({ "data_type": "uint8", "scalar_map": { "encode": [[0]] } }),
            "cast_value: scalar_map = ",
        ),
        (
            json!({ "data_type": "uint8", "scalar_map": { "both": [] } }),
            "cast_value: scalar_map = ",
        ),
        (
            json!({ "data_type": "uint8", "scalar_map": { "encode": [[[1], 0]] } }),
            "cast_value: scalar_map.encode = [[1],0]: [1] is not a scalar",
        ),
    ];
    for (configuration, expected) in cases {
        let error = create(configuration.clone()).expect_err(&configuration.to_string());
        assert!(error.starts_with(expected), "{configuration}: {error}");
    }
    // A missing configuration.
    let metadata: MetadataV3 = serde_json::from_value(json!({ "name": "cast_value" })).unwrap();
    assert!(Codec::from_metadata(&metadata).is_err());
}

#[test]
fn data_type_errors_when_the_type_is_seen() {
    let codec = create(json!({ "data_type": "int16" })).unwrap();
    let error = codec
        .encoded_data_type(&data_type::complex64())
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("cast_value: data type complex64 is not supported"),
        "{error}"
    );
    // An encode key written in the array's type is checked against that type.
    let codec =
        create(json!({ "data_type": "int16", "scalar_map": { "encode": [[300, 0]] } })).unwrap();
    let error = codec
        .encoded_data_type(&data_type::uint8())
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("cast_value: scalar_map.encode = [300, 0]: 300 is out of the range"),
        "{error}"
    );
}

#[test]
fn fill_value_must_survive_encode_then_decode() {
    let codec = create(json!({ "data_type": "uint8" })).unwrap();
    let dt = data_type::float64();
    let check = |fill: f64| -> Result<Vec<u8>, String> {
        let fv = FillValue::from(fill);
        encode(&*codec, &dt, &fv, f64_bytes(&[1.0]), 1)
    };
    // 0.5 rounds to 0 (ties to even) and decodes as 0.0: not the fill value.
    let error = check(0.5).unwrap_err();
    assert!(
        error.contains("fill value 0.5 does not survive encode then decode (0.5 -> 0 -> 0.0)"),
        "{error}"
    );
    // NaN has no uint8 value and there is no map.
    let error = check(f64::NAN).unwrap_err();
    assert!(
        error.contains("fill value NaN cannot be encoded"),
        "{error}"
    );
    // 3.0 is exact.
    assert_eq!(check(3.0).unwrap(), [1]);
    // -0.0 encodes to 0 and decodes to +0.0, equal to -0.0: it survives (a
    // fill value of 0 behind a `scale_offset` with a negative scale is -0.0).
    assert_eq!(check(-0.0).unwrap(), [1]);
    // zarrs 0.23.14 passes a made-up zero fill value in
    // `recommended_concurrency`; that must not fail even if it cannot be cast.
    let codec =
        create(json!({ "data_type": "uint8", "scalar_map": { "decode": [[0, 5]] } })).unwrap();
    assert!(
        codec
            .encoded_fill_value(&data_type::int8(), &FillValue::from(0i8))
            .is_ok()
    );
}

#[test]
fn element_errors_name_the_element() {
    let codec = create(json!({ "data_type": "int8" })).unwrap();
    let (dt, fv) = (data_type::float32(), FillValue::from(0f32));
    let src: Vec<u8> = [1.0f32, 200.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let error = encode(&*codec, &dt, &fv, src, 2).unwrap_err();
    assert_eq!(
        error,
        "cast_value: encode: element 1 (200.0) of float32 is out of the range of int8"
    );
}

/// A chunk of several MiB is split into parts on up to `concurrent_target`
/// threads: every element is cast as the spec says (checked against std's
/// rounding), and an error names the first bad element by its index in the
/// whole chunk.
#[test]
#[cfg_attr(
    miri,
    ignore = "megabytes through the codec; codec::parallel's tests split buffers across threads under Miri"
)]
fn large_chunks_split_across_threads() {
    let options = CodecOptions::default().with_concurrent_target(4);
    let codec = create(json!({
        "data_type": "uint8",
        "rounding": "nearest-even",
        "out_of_range": "clamp",
        "scalar_map": { "encode": [["NaN", 0]], "decode": [[0, "NaN"]] }
    }))
    .unwrap();
    let (dt, fv) = (data_type::float64(), FillValue::from(f64::NAN));
    // 4 MiB of float64: four parts. Values in [-20, 280) in steps of 0.25
    // (ties included), and a NaN every 1000 elements.
    let n = 1 << 19;
    let values: Vec<f64> = (0..n)
        .map(|i| {
            if i % 1000 == 7 {
                f64::NAN
            } else {
                f64::from(u32::try_from(i % 1200).unwrap()) / 4.0 - 20.0
            }
        })
        .collect();
    let expected: Vec<u8> = values
        .iter()
        .map(|x| {
            if x.is_nan() {
                0
            } else {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let r = x.round_ties_even().clamp(0.0, 255.0) as u8;
                r
            }
        })
        .collect();
    let bytes = f64_bytes(&values);
    let encoded = codec
        .encode(ArrayBytes::from(&bytes[..]), &shape(n), &dt, &fv, &options)
        .unwrap()
        .into_fixed()
        .unwrap()
        .into_owned();
    assert_eq!(encoded, expected);
    let decoded = codec
        .decode(ArrayBytes::from(encoded), &shape(n), &dt, &fv, &options)
        .unwrap()
        .into_fixed()
        .unwrap()
        .into_owned();
    for (y, &e) in decoded.chunks_exact(8).zip(&expected) {
        let y = f64::from_ne_bytes(y.try_into().unwrap());
        if e == 0 {
            assert!(y.is_nan());
        } else {
            assert_eq!(y, f64::from(e));
        }
    }

    // 4 MiB of float32 into int8: bad elements in the second and the
    // fourth part; the first is named.
    let codec = create(json!({ "data_type": "int8" })).unwrap();
    let (dt, fv) = (data_type::float32(), FillValue::from(0f32));
    let n = 1 << 20;
    let mut values = vec![1.0f32; n];
    values[300_001] = 200.0;
    values[900_000] = f32::NAN;
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let error = codec
        .encode(ArrayBytes::from(bytes), &shape(n), &dt, &fv, &options)
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "cast_value: encode: element 300001 (200.0) of float32 is out of the range of int8"
    );
}

#[test]
fn wrong_chunk_length_is_an_error() {
    let codec = u8_map_codec();
    let (dt, fv) = (data_type::float64(), FillValue::from(f64::NAN));
    let error = encode(&*codec, &dt, &fv, vec![0; 12], 2).unwrap_err();
    assert!(
        error.starts_with("cast_value: chunk has 12 bytes, expected 2 float64 elements"),
        "{error}"
    );
}

#[test]
fn configuration_is_written_back_as_read() {
    for configuration in [
        json!({ "data_type": "uint8" }),
        json!({ "data_type": "int16", "rounding": "towards-zero", "out_of_range": "clamp" }),
        json!({ "data_type": "uint8", "scalar_map": { "encode": [["NaN", 0], ["+Infinity", 0]], "decode": [[0, "NaN"]] } }),
        json!({ "data_type": "uint8", "rounding": "nearest-even", "scalar_map": { "decode": [[0, "NaN"]] } }),
    ] {
        let codec = create(configuration.clone()).unwrap();
        let written = codec
            .configuration(ZarrVersion::V3, &CodecMetadataOptions::default())
            .unwrap();
        assert_eq!(serde_json::Value::Object(written.into()), configuration);
    }
}

#[test]
fn partial_decode_decodes_only_the_subset() {
    let codec = u8_map_codec();
    let (dt, fv) = (data_type::float64(), FillValue::from(f64::NAN));
    let values: Vec<f64> = (0..32).map(f64::from).collect();
    let encoded = encode(&*codec, &dt, &fv, f64_bytes(&values), 32).unwrap();
    let (encoded_dt, encoded_fv) = (data_type::uint8(), FillValue::from(0u8));
    let bytes_codec = Arc::new(BytesCodec::default());
    let input = bytes_codec
        .partial_decoder(
            Arc::new(encoded),
            &shape(32),
            &encoded_dt,
            &encoded_fv,
            &CodecOptions::default(),
        )
        .unwrap();
    let partial = codec
        .partial_decoder(input, &shape(32), &dt, &fv, &CodecOptions::default())
        .unwrap();
    assert_eq!(partial.data_type(), &dt);
    let subset = ArraySubset::new_with_start_shape(vec![3], vec![3]).unwrap();
    let decoded = partial
        .partial_decode(&subset, &CodecOptions::default())
        .unwrap();
    let decoded = decoded.into_fixed().unwrap();
    assert_eq!(decoded.len(), 3 * 8);
    // 0 decodes to NaN by the map; 3, 4, 5 are exact.
    let got: Vec<f64> = decoded
        .chunks_exact(8)
        .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(got, [3.0, 4.0, 5.0]);
}

#[test]
fn constructed_directly() {
    let codec = CastValueCodec::new_with_json(&json!({ "data_type": "float16" })).unwrap();
    assert_eq!(codec.configuration().data_type.name(), "float16");
    assert!(CastValueCodec::new_with_json(&json!(["float16"])).is_err());
}

/// A chunk shape whose element count overflows `u64` is an error naming the
/// codec, not a panic (a plain `product()` overflows).
#[test]
fn overflowing_chunk_shape_is_an_error() {
    let codec = u8_map_codec();
    let (dt, fv) = (data_type::float64(), FillValue::from(f64::NAN));
    // 2^32 x 2^32 = 2^64 elements.
    let huge = [NonZeroU64::new(1 << 32).unwrap(); 2];
    for decoding in [false, true] {
        let bytes = ArrayBytes::from(vec![0u8; 8]);
        let options = CodecOptions::default();
        let result = if decoding {
            codec.decode(bytes, &huge, &dt, &fv, &options)
        } else {
            codec.encode(bytes, &huge, &dt, &fv, &options)
        };
        let error = result.unwrap_err().to_string();
        assert!(error.starts_with("cast_value: chunk shape"), "{error}");
    }
}

/// A chunk's bytes that count the byte ranges asked of them.
struct CountingBytes {
    bytes: Vec<u8>,
    ranges: std::sync::Mutex<Vec<zarrs::storage::byte_range::ByteRange>>,
}

impl zarrs::array::codec::api::BytesPartialDecoderTraits for CountingBytes {
    fn exists(&self) -> Result<bool, zarrs::storage::StorageError> {
        Ok(true)
    }

    fn size_held(&self) -> usize {
        0
    }

    fn partial_decode_many(
        &self,
        decoded_regions: zarrs::storage::byte_range::ByteRangeIterator,
        _options: &CodecOptions,
    ) -> Result<Option<Vec<zarrs::array::ArrayBytesRaw<'_>>>, zarrs::array::codec::api::CodecError>
    {
        let mut out = Vec::new();
        for range in decoded_regions {
            self.ranges.lock().unwrap().push(range);
            let r = range.to_range_usize(self.bytes.len() as u64);
            out.push(self.bytes[r].to_vec().into());
        }
        Ok(Some(out))
    }

    fn supports_partial_decode(&self) -> bool {
        true
    }
}

/// `codec`'s partial decoder over `bytes`, a `side` x `side` uint8 chunk
/// that counts the ranges read, decoding to float64.
fn counting_partial(
    codec: &Arc<dyn ArrayToArrayCodecTraits>,
    side: u64,
    bytes: Vec<u8>,
) -> (
    Arc<CountingBytes>,
    Arc<dyn zarrs::array::codec::api::ArrayPartialDecoderTraits>,
) {
    let chunk: Vec<NonZeroU64> = vec![NonZeroU64::new(side).unwrap(); 2];
    let source = Arc::new(CountingBytes {
        bytes,
        ranges: std::sync::Mutex::new(Vec::new()),
    });
    let options = CodecOptions::default();
    let input = Arc::new(BytesCodec::default())
        .partial_decoder(
            source.clone(),
            &chunk,
            &data_type::uint8(),
            &FillValue::from(0u8),
            &options,
        )
        .unwrap();
    let (dt, fv) = (data_type::float64(), FillValue::from(0f64));
    let partial = codec
        .clone()
        .partial_decoder(input, &chunk, &dt, &fv, &options)
        .unwrap();
    (source, partial)
}

/// A window that cuts the rows of a 64 x 64 uint8 chunk is read as one
/// range of whole rows (not one per row), and decodes to the window's
/// values: element (y, x) was written as (y * 64 + x) % 251.
#[test]
#[cfg_attr(
    miri,
    ignore = "a 16 MiB chunk; the slab choice is unit tested in codec::slab"
)]
fn partial_decode_of_a_window_reads_one_range() {
    let codec = create(json!({ "data_type": "uint8" })).unwrap();
    let bytes = (0..64 * 64).map(|i| (i % 251) as u8).collect();
    let (source, partial) = counting_partial(&codec, 64, bytes);
    let window = ArraySubset::new_with_ranges(&[10..30, 5..17]);
    let decoded = partial
        .partial_decode(&window, &CodecOptions::default())
        .unwrap()
        .into_fixed()
        .unwrap();
    let got: Vec<f64> = decoded
        .chunks_exact(8)
        .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    let want: Vec<f64> = (10..30u32)
        .flat_map(|y| (5..17u32).map(move |x| f64::from((y * 64 + x) % 251)))
        .collect();
    assert_eq!(got, want);
    let ranges = source.ranges.lock().unwrap().clone();
    assert_eq!(ranges.len(), 1, "{ranges:?}");
    assert_eq!(ranges[0].to_range(64 * 64), 10 * 64..30 * 64);

    // A thin column of a large chunk still reads only its own bytes: one
    // range per row (a whole-row slab would be 16 MiB for 4 KiB).
    let (source, partial) = counting_partial(&codec, 4096, vec![7u8; 4096 * 4096]);
    let column = ArraySubset::new_with_ranges(&[0..4096, 9..10]);
    let decoded = partial
        .partial_decode(&column, &CodecOptions::default())
        .unwrap()
        .into_fixed()
        .unwrap();
    assert_eq!(decoded.len(), 4096 * 8);
    assert_eq!(source.ranges.lock().unwrap().len(), 4096);
}
