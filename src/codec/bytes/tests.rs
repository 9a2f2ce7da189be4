//! Unit tests of the `bytes` codec: configuration, data types, chunk
//! lengths, buffers, partial decoding. Expected bytes are worked out by hand
//! from the specification or with the standard library's `to_be_bytes`.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::{Arc, Mutex};

use zarrs::array::codec::api::{
    ArrayBytes, ArrayToBytesCodecTraits, BytesPartialDecoderTraits, BytesRepresentation, Codec,
    CodecError, CodecMetadataOptions, CodecOptions, CodecTraitsV3,
};
use zarrs::array::{ArraySubset, DataType, FillValue, data_type};
use zarrs::metadata::v3::MetadataV3;
use zarrs::storage::StorageError;
use zarrs::storage::byte_range::{ByteRange, ByteRangeIterator};

use super::{BytesCodec, BytesCodecConfiguration};

fn shape(dims: &[u64]) -> Vec<NonZeroU64> {
    dims.iter().map(|&d| NonZeroU64::new(d).unwrap()).collect()
}

/// A one-dimensional subset.
fn subset_1d(range: std::ops::Range<u64>) -> ArraySubset {
    ArraySubset::new_with_start_shape(vec![range.start], vec![range.end - range.start]).unwrap()
}

fn create(json: &str) -> Result<Codec, String> {
    let metadata: MetadataV3 = serde_json::from_str(json).unwrap();
    BytesCodec::create(&metadata).map_err(|e| e.to_string())
}

fn array_to_bytes(codec: Codec) -> Arc<dyn ArrayToBytesCodecTraits> {
    match codec {
        Codec::ArrayToBytes(codec) => codec,
        _ => panic!("bytes is an array to bytes codec"),
    }
}

fn encode(
    codec: &BytesCodec,
    bytes: &[u8],
    dims: &[u64],
    dt: &DataType,
) -> Result<Vec<u8>, CodecError> {
    let fill = FillValue::new(vec![0; dt.fixed_size().unwrap_or(1)]);
    codec
        .encode(
            ArrayBytes::new_flen(bytes),
            &shape(dims),
            dt,
            &fill,
            &CodecOptions::default(),
        )
        .map(Cow::into_owned)
}

fn decode(
    codec: &BytesCodec,
    bytes: &[u8],
    dims: &[u64],
    dt: &DataType,
) -> Result<Vec<u8>, CodecError> {
    let fill = FillValue::new(vec![0; dt.fixed_size().unwrap_or(1)]);
    let decoded = codec.decode(
        Cow::Borrowed(bytes),
        &shape(dims),
        dt,
        &fill,
        &CodecOptions::default(),
    )?;
    Ok(decoded.into_fixed().unwrap().into_owned())
}

// --- configuration -------------------------------------------------------

#[test]
fn configuration_accepts_the_spec_forms_and_writes_them_back() {
    for (json, written) in [
        (
            r#"{"name":"bytes","configuration":{"endian":"little"}}"#,
            r#"{"endian":"little"}"#,
        ),
        (
            r#"{"name":"bytes","configuration":{"endian":"big"}}"#,
            r#"{"endian":"big"}"#,
        ),
        (r#"{"name":"bytes","configuration":{}}"#, "{}"),
        (r#""bytes""#, "{}"),
        // The codec's name before the specification renamed it.
        (
            r#"{"name":"endian","configuration":{"endian":"big"}}"#,
            r#"{"endian":"big"}"#,
        ),
    ] {
        let codec = create(json).unwrap_or_else(|e| panic!("{json}: {e}"));
        let configuration = codec
            .configuration_v3(&CodecMetadataOptions::default())
            .unwrap();
        assert_eq!(
            serde_json::to_string(&configuration).unwrap(),
            written,
            "{json}"
        );
        let codec = array_to_bytes(codec);
        assert_eq!(
            codec.name(zarrs::plugin::ZarrVersion::V3).as_deref(),
            Some("bytes")
        );
    }
}

#[test]
fn configuration_errors_name_codec_field_and_value() {
    for (json, needles) in [
        (
            r#"{"endian":"native"}"#,
            &["bytes", "endian", "\"native\"", "\"little\" or \"big\""][..],
        ),
        (r#"{"endian":"Big"}"#, &["bytes", "endian", "\"Big\""][..]),
        (r#"{"endian":null}"#, &["bytes", "endian", "null"][..]),
        (r#"{"endian":1}"#, &["bytes", "endian", "1"][..]),
        (
            r#"{"endian":"little","order":"C"}"#,
            &["bytes", "order", "\"C\"", "unknown"][..],
        ),
    ] {
        let metadata = format!(r#"{{"name":"bytes","configuration":{json}}}"#);
        let error = create(&metadata).expect_err(json);
        for needle in needles {
            assert!(error.contains(needle), "{json}: {error:?} lacks {needle}");
        }
    }
}

#[test]
fn configuration_struct_round_trip() {
    let configuration: BytesCodecConfiguration =
        serde_json::from_str(r#"{"endian":"big"}"#).unwrap();
    assert_eq!(
        BytesCodec::new_with_configuration(&configuration),
        BytesCodec::big()
    );
    assert!(serde_json::from_str::<BytesCodecConfiguration>(r#"{"endian":"middle"}"#).is_err());
}

// --- data types ----------------------------------------------------------

#[test]
fn missing_endian_is_refused_for_multi_byte_types_when_the_data_type_is_seen() {
    let codec = BytesCodec::new(None);
    let fill = FillValue::new(vec![0; 16]);
    for dt in [
        data_type::int16(),
        data_type::uint32(),
        data_type::float16(),
        data_type::bfloat16(),
        data_type::float64(),
        data_type::complex64(),
        data_type::complex_float16(),
    ] {
        let error = codec
            .encoded_representation(&shape(&[2]), &dt, &fill)
            .expect_err(&dt.to_string())
            .to_string();
        assert!(
            error.contains("bytes") && error.contains("endian"),
            "{error}"
        );
        assert!(error.contains(&dt.to_string()), "{error}");
        // And every later entry point refuses it too.
        assert!(encode(&codec, &[0; 64], &[2], &dt).is_err());
        assert!(decode(&codec, &[0; 64], &[2], &dt).is_err());
    }
}

#[test]
fn single_byte_types_need_no_endian() {
    let codec = BytesCodec::new(None);
    let fill = FillValue::new(vec![0; 2]);
    for dt in [
        data_type::bool(),
        data_type::int2(),
        data_type::int4(),
        data_type::int8(),
        data_type::uint2(),
        data_type::uint4(),
        data_type::uint8(),
        data_type::float4_e2m1fn(),
        data_type::float6_e2m3fn(),
        data_type::float8_e4m3(),
        data_type::float8_e8m0fnu(),
        data_type::complex_float8_e5m2(),
        data_type::raw_bits(3),
    ] {
        let size = dt.fixed_size().unwrap() as u64;
        assert_eq!(
            codec
                .encoded_representation(&shape(&[5, 2]), &dt, &fill)
                .unwrap(),
            BytesRepresentation::FixedSize(10 * size),
            "{dt}"
        );
    }
}

#[test]
fn variable_and_optional_types_are_refused() {
    let fill = FillValue::new(vec![]);
    for dt in [
        data_type::string(),
        data_type::bytes(),
        data_type::optional(data_type::uint8()),
    ] {
        let error = BytesCodec::little()
            .encoded_representation(&shape(&[2]), &dt, &fill)
            .expect_err(&dt.to_string());
        let name = crate::codec::data_type_name(&dt);
        assert!(
            error
                .to_string()
                .starts_with(&format!("bytes: data type {name} is not supported")),
            "{error}"
        );
    }
}

#[test]
fn multi_byte_values_in_each_byte_order() {
    let values = [0x0102u16, 0xa0b0];
    let ne: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let dt = data_type::uint16();
    assert_eq!(
        encode(&BytesCodec::big(), &ne, &[2], &dt).unwrap(),
        [1, 2, 0xa0, 0xb0]
    );
    assert_eq!(
        encode(&BytesCodec::little(), &ne, &[2], &dt).unwrap(),
        [2, 1, 0xb0, 0xa0]
    );
    assert_eq!(
        decode(&BytesCodec::big(), &[1, 2, 0xa0, 0xb0], &[2], &dt).unwrap(),
        ne
    );

    // complex64 (1.0, -2.0): two big-endian binary32 values, real first.
    // 1.0 = 0x3f800000, -2.0 = 0xc0000000.
    let ne: Vec<u8> = [1.0f32, -2.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    assert_eq!(
        encode(&BytesCodec::big(), &ne, &[1], &data_type::complex64()).unwrap(),
        [0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0]
    );
    // bfloat16 1.0 = 0x3f80; big endian: 3f 80.
    let ne = 0x3f80u16.to_ne_bytes();
    assert_eq!(
        encode(&BytesCodec::big(), &ne, &[1], &data_type::bfloat16()).unwrap(),
        [0x3f, 0x80]
    );
    // r16 raw bits are never swapped.
    assert_eq!(
        encode(&BytesCodec::big(), &[1, 2], &[1], &data_type::raw_bits(2)).unwrap(),
        [1, 2]
    );
}

#[test]
fn sub_byte_decode_ignores_upper_bits() {
    let none = BytesCodec::new(None);
    // int4: 0x0f is -1 (tensorstore), 0x08 is -8, 0xf7 is 7 (upper bits 1111 ignored),
    // 0x50 is 0 (upper bits 0101 ignored). In memory int4 is a sign-extended i8.
    let decoded = decode(&none, &[0x0f, 0x08, 0xf7, 0x50], &[4], &data_type::int4()).unwrap();
    assert_eq!(decoded, [(-1i8) as u8, (-8i8) as u8, 7, 0]);
    // int2: 0b11 is -1, 0b10 is -2, 0xfd = 0b...01 is 1.
    let decoded = decode(&none, &[0x03, 0x02, 0xfd], &[3], &data_type::int2()).unwrap();
    assert_eq!(decoded, [(-1i8) as u8, (-2i8) as u8, 1]);
    // uint4 / uint2 / float4 / float6: upper bits cleared.
    assert_eq!(
        decode(&none, &[0xff, 0x3a], &[2], &data_type::uint4()).unwrap(),
        [0x0f, 0x0a]
    );
    assert_eq!(
        decode(&none, &[0xff], &[1], &data_type::uint2()).unwrap(),
        [0x03]
    );
    assert_eq!(
        decode(&none, &[0xf9], &[1], &data_type::float4_e2m1fn()).unwrap(),
        [0x09]
    );
    assert_eq!(
        decode(&none, &[0xe5], &[1], &data_type::float6_e3m2fn()).unwrap(),
        [0x25]
    );
    // Complex float4: each component byte on its own.
    assert_eq!(
        decode(
            &none,
            &[0xf1, 0x2e],
            &[1],
            &data_type::complex_float4_e2m1fn()
        )
        .unwrap(),
        [0x01, 0x0e]
    );
}

#[test]
fn sub_byte_encode_writes_a_canonical_byte() {
    let none = BytesCodec::new(None);
    // In-memory int4 -1 is 0xff and is written as such (as zarrs' built-in does).
    assert_eq!(
        encode(&none, &[0xff, 0x07], &[2], &data_type::int4()).unwrap(),
        [0xff, 0x07]
    );
    // A stray in-memory byte keeps its low bits, with the consistent upper bits.
    assert_eq!(
        encode(&none, &[0x0f], &[1], &data_type::int4()).unwrap(),
        [0xff]
    );
    assert_eq!(
        encode(&none, &[0xf3], &[1], &data_type::uint4()).unwrap(),
        [0x03]
    );
}

#[test]
fn bool_bytes_other_than_0_and_1_are_errors() {
    let none = BytesCodec::new(None);
    let dt = data_type::bool();
    assert_eq!(decode(&none, &[0, 1, 1], &[3], &dt).unwrap(), [0, 1, 1]);
    let error = decode(&none, &[0, 1, 2], &[3], &dt)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("bytes") && error.contains("element 2") && error.contains("0x02"),
        "{error}"
    );
    assert!(encode(&none, &[0xff], &[1], &dt).is_err());
}

// --- chunk lengths and buffers ------------------------------------------

#[test]
fn wrong_chunk_lengths_are_errors() {
    let dt = data_type::uint16();
    for codec in [BytesCodec::little(), BytesCodec::big()] {
        for len in [0, 7, 9, 16] {
            let error = decode(&codec, &vec![0; len], &[4], &dt)
                .unwrap_err()
                .to_string();
            assert!(
                error.contains(&format!("has {len} bytes")) && error.contains("8 bytes"),
                "{error}"
            );
            assert!(encode(&codec, &vec![0; len], &[4], &dt).is_err());
        }
    }
    // Sub-byte and bool chunks are checked too.
    assert!(decode(&BytesCodec::new(None), &[0; 3], &[4], &data_type::int4()).is_err());
    assert!(decode(&BytesCodec::new(None), &[0; 5], &[4], &data_type::bool()).is_err());
}

#[test]
fn unaligned_buffers_decode_correctly() {
    let values: Vec<u64> = (0..1000u64)
        .map(|i| i.wrapping_mul(0x0123_4567_89ab_cdef))
        .collect();
    let be: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let expected: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    for offset in 0..8 {
        let mut buffer = vec![0u8; offset];
        buffer.extend_from_slice(&be);
        let decoded = decode(
            &BytesCodec::big(),
            &buffer[offset..],
            &[1000],
            &data_type::uint64(),
        )
        .unwrap();
        assert_eq!(decoded, expected, "offset {offset}");
    }
}

#[test]
fn native_order_returns_the_input_without_a_copy() {
    let native = if cfg!(target_endian = "little") {
        BytesCodec::little()
    } else {
        BytesCodec::big()
    };
    let dt = data_type::float32();
    let fill = FillValue::from(0f32);
    let options = CodecOptions::default();
    let data = vec![7u8; 4096];
    let decoded = native
        .decode(Cow::Borrowed(&data), &shape(&[1024]), &dt, &fill, &options)
        .unwrap()
        .into_fixed()
        .unwrap();
    assert!(matches!(decoded, Cow::Borrowed(_)));
    assert_eq!(decoded.as_ptr(), data.as_ptr());
    let pointer = data.as_ptr();
    let encoded = native
        .encode(
            ArrayBytes::new_flen(data),
            &shape(&[1024]),
            &dt,
            &fill,
            &options,
        )
        .unwrap();
    assert!(matches!(encoded, Cow::Owned(_)));
    assert_eq!(
        encoded.as_ptr(),
        pointer,
        "an owned buffer is moved through"
    );
    // Canonical sub-byte chunks are not copied either.
    let data = [0xffu8, 0x00, 0x07];
    let decoded = BytesCodec::new(None)
        .decode(
            Cow::Borrowed(&data),
            &shape(&[3]),
            &data_type::int4(),
            &FillValue::from(0i8),
            &options,
        )
        .unwrap()
        .into_fixed()
        .unwrap();
    assert!(matches!(decoded, Cow::Borrowed(_)));
}

// --- partial decoding ----------------------------------------------------

/// An encoded chunk that records the byte ranges asked of it, and can
/// pretend to be truncated.
struct Recorder {
    bytes: Option<Vec<u8>>,
    requests: Mutex<Vec<ByteRange>>,
    short: bool,
}

impl Recorder {
    fn new(bytes: Option<Vec<u8>>, short: bool) -> Arc<Self> {
        Arc::new(Self {
            bytes,
            requests: Mutex::new(Vec::new()),
            short,
        })
    }
}

impl BytesPartialDecoderTraits for Recorder {
    fn exists(&self) -> Result<bool, StorageError> {
        Ok(self.bytes.is_some())
    }

    fn size_held(&self) -> usize {
        0
    }

    fn partial_decode_many(
        &self,
        decoded_regions: ByteRangeIterator,
        _options: &CodecOptions,
    ) -> Result<Option<Vec<Cow<'_, [u8]>>>, CodecError> {
        let Some(bytes) = &self.bytes else {
            return Ok(None);
        };
        let mut parts = Vec::new();
        for range in decoded_regions {
            self.requests.lock().unwrap().push(range);
            let len = bytes.len() as u64;
            let (start, end) = (range.start(len) as usize, range.end(len) as usize);
            let end = if self.short { end - 1 } else { end };
            parts.push(Cow::Borrowed(&bytes[start..end]));
        }
        Ok(Some(parts))
    }

    fn supports_partial_decode(&self) -> bool {
        true
    }
}

#[test]
fn partial_decode_reads_only_the_requested_elements() {
    // A 4x4 uint16 chunk, big endian, element i = 0x1000 + i.
    let be: Vec<u8> = (0..16u16)
        .flat_map(|i| (0x1000 + i).to_be_bytes())
        .collect();
    let input = Recorder::new(Some(be), false);
    let decoder = Arc::new(BytesCodec::big())
        .partial_decoder(
            input.clone(),
            &shape(&[4, 4]),
            &data_type::uint16(),
            &FillValue::from(0u16),
            &CodecOptions::default(),
        )
        .unwrap();
    let subset = ArraySubset::new_with_ranges(&[1..3, 2..4]);
    let decoded = decoder
        .partial_decode(&subset, &CodecOptions::default())
        .unwrap();
    // Elements (1,2),(1,3),(2,2),(2,3) are 6, 7, 10, 11: bytes 12..16 and 20..24.
    let expected: Vec<u8> = [6u16, 7, 10, 11]
        .iter()
        .flat_map(|i| (0x1000 + i).to_ne_bytes())
        .collect();
    assert_eq!(decoded.into_fixed().unwrap().as_ref(), &expected[..]);
    assert_eq!(
        *input.requests.lock().unwrap(),
        [ByteRange::new(12..16), ByteRange::new(20..24)]
    );
}

#[test]
fn partial_decode_of_a_missing_chunk_is_the_fill_value() {
    let decoder = Arc::new(BytesCodec::little())
        .partial_decoder(
            Recorder::new(None, false),
            &shape(&[4]),
            &data_type::int16(),
            &FillValue::from(-3i16),
            &CodecOptions::default(),
        )
        .unwrap();
    let decoded = decoder
        .partial_decode(&subset_1d(1..3), &CodecOptions::default())
        .unwrap();
    let expected: Vec<u8> = [-3i16, -3].iter().flat_map(|v| v.to_ne_bytes()).collect();
    assert_eq!(decoded.into_fixed().unwrap().as_ref(), &expected[..]);
}

#[test]
fn partial_decode_of_a_truncated_run_is_an_error() {
    let decoder = Arc::new(BytesCodec::little())
        .partial_decoder(
            Recorder::new(Some(vec![0; 8]), true),
            &shape(&[4]),
            &data_type::int16(),
            &FillValue::from(0i16),
            &CodecOptions::default(),
        )
        .unwrap();
    let error = decoder
        .partial_decode(&subset_1d(1..3), &CodecOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("bytes") && error.contains("truncated"),
        "{error}"
    );
}

#[test]
fn partial_decoder_refuses_a_missing_endian() {
    let result = Arc::new(BytesCodec::new(None)).partial_decoder(
        Recorder::new(Some(vec![0; 8]), false),
        &shape(&[4]),
        &data_type::int16(),
        &FillValue::from(0i16),
        &CodecOptions::default(),
    );
    assert!(result.is_err());
}

#[test]
fn partial_decode_canonicalises_sub_byte_values() {
    let decoder = Arc::new(BytesCodec::new(None))
        .partial_decoder(
            Recorder::new(Some(vec![0x0f, 0x0e, 0x01, 0x08]), false),
            &shape(&[4]),
            &data_type::int4(),
            &FillValue::from(0i8),
            &CodecOptions::default(),
        )
        .unwrap();
    let decoded = decoder
        .partial_decode(&subset_1d(0..2), &CodecOptions::default())
        .unwrap();
    // 0x0f -> -1, 0x0e = 0b1110 -> -2.
    assert_eq!(decoded.into_fixed().unwrap().as_ref(), &[0xff, 0xfe]);
}
