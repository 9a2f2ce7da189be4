//! Unit tests of the `packbits` codec: configuration spellings and errors,
//! bit layouts worked out by hand from the specification, padding bytes,
//! corrupt chunks and partial decoding.

use std::num::NonZeroU64;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use zarrs::array::codec::api::{
    ArrayBytes, ArrayToBytesCodecTraits, BytesPartialDecoderTraits, BytesRepresentation,
    CodecError, CodecMetadataOptions, CodecOptions, CodecTraits,
};
use zarrs::array::{ArraySubset, DataType, FillValue, data_type};
use zarrs::plugin::ZarrVersion;
use zarrs::storage::StorageError;
use zarrs::storage::byte_range::ByteRangeIterator;

use super::{PackBitsCodec, PackBitsCodecConfiguration, PaddingEncoding};

fn codec(json: serde_json::Value) -> Arc<PackBitsCodec> {
    Arc::new(PackBitsCodec::new_with_json(&json).unwrap())
}

fn shape(dims: &[u64]) -> Vec<NonZeroU64> {
    dims.iter().map(|&d| NonZeroU64::new(d).unwrap()).collect()
}

fn zero_fill(data_type: &DataType) -> FillValue {
    FillValue::new(vec![0; data_type.fixed_size().unwrap()])
}

fn encode(codec: &PackBitsCodec, data_type: &DataType, dims: &[u64], decoded: &[u8]) -> Vec<u8> {
    codec
        .encode(
            ArrayBytes::new_flen(decoded.to_vec()),
            &shape(dims),
            data_type,
            &zero_fill(data_type),
            &CodecOptions::default(),
        )
        .unwrap()
        .into_owned()
}

fn decode(
    codec: &PackBitsCodec,
    data_type: &DataType,
    dims: &[u64],
    encoded: &[u8],
) -> Result<Vec<u8>, CodecError> {
    Ok(codec
        .decode(
            encoded.to_vec().into(),
            &shape(dims),
            data_type,
            &zero_fill(data_type),
            &CodecOptions::default(),
        )?
        .into_fixed()?
        .into_owned())
}

fn written(codec: &PackBitsCodec) -> serde_json::Value {
    serde_json::Value::Object(
        codec
            .configuration(ZarrVersion::V3, &CodecMetadataOptions::default())
            .unwrap()
            .into(),
    )
}

fn error_of(json: serde_json::Value) -> String {
    PackBitsCodec::new_with_json(&json).unwrap_err().to_string()
}

/// The 1-D subset `start..end`.
fn range_1d(start: u64, end: u64) -> ArraySubset {
    ArraySubset::new_with_start_shape(vec![start], vec![end - start]).unwrap()
}

fn i8s(values: &[i8]) -> Vec<u8> {
    values.iter().map(|&v| v as u8).collect()
}

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

#[test]
fn every_published_spelling_is_read_and_the_current_one_written() {
    use serde_json::json;
    for (json, padding) in [
        (json!({}), PaddingEncoding::None),
        (json!({"padding_encoding": null}), PaddingEncoding::None),
        (json!({"padding_encoding": "none"}), PaddingEncoding::None),
        (
            json!({"padding_encoding": "first_byte"}),
            PaddingEncoding::FirstByte,
        ),
        (
            json!({"padding_encoding": "start_byte"}),
            PaddingEncoding::FirstByte,
        ),
        (
            json!({"padding_encoding": "last_byte"}),
            PaddingEncoding::LastByte,
        ),
        (
            json!({"padding_encoding": "end_byte"}),
            PaddingEncoding::LastByte,
        ),
    ] {
        assert_eq!(codec(json.clone()).padding_encoding(), padding, "{json}");
    }
    assert_eq!(
        written(&codec(json!({"padding_encoding": "none"}))),
        json!({})
    );
    assert_eq!(
        written(&codec(json!({"padding_encoding": "start_byte"}))),
        json!({"padding_encoding": "first_byte"})
    );
    assert_eq!(
        written(&codec(json!({"padding_encoding": "end_byte"}))),
        json!({"padding_encoding": "last_byte"})
    );

    let aliased = codec(json!({"start_bit": 1, "end_bit": 2}));
    assert_eq!(
        (aliased.first_bit(), aliased.last_bit()),
        (Some(1), Some(2))
    );
    assert_eq!(written(&aliased), json!({"first_bit": 1, "last_bit": 2}));
    let current = codec(json!({"first_bit": 3, "last_bit": null}));
    assert_eq!((current.first_bit(), current.last_bit()), (Some(3), None));
    assert_eq!(written(&current), json!({"first_bit": 3}));
    // The same value under both names is not a contradiction.
    assert_eq!(
        codec(json!({"first_bit": 2, "start_bit": 2})).first_bit(),
        Some(2)
    );
}

#[test]
fn bad_configurations_are_refused_naming_field_and_value() {
    use serde_json::json;
    for (json, expected) in [
        (
            json!({"padding_encoding": "middle_byte"}),
            "packbits: padding_encoding = \"middle_byte\": expected",
        ),
        (
            json!({"padding_encoding": 1}),
            "packbits: padding_encoding = 1:",
        ),
        (
            json!({"first_bit": -1}),
            "packbits: first_bit = -1: expected null or a non-negative",
        ),
        (json!({"end_bit": 1.5}), "packbits: end_bit = 1.5:"),
        (json!({"last_bit": "3"}), "packbits: last_bit = \"3\":"),
        (
            json!({"first_bit": 64}),
            "packbits: first_bit = 64: must be less than 64",
        ),
        (
            json!({"first_bit": 3, "last_bit": 2}),
            "packbits: last_bit = 2: must not be less than first_bit (3)",
        ),
        (
            json!({"first_bit": 1, "start_bit": 2}),
            "packbits: start_bit = 2: contradicts first_bit = 1",
        ),
        (
            json!({"bits": 4}),
            "packbits: bits = 4: unknown configuration key",
        ),
        (
            json!([1]),
            "packbits: configuration = [1]: expected an object",
        ),
    ] {
        let error = error_of(json.clone());
        assert!(error.contains(expected), "{json}: {error}");
    }
    assert!(
        PackBitsCodec::new_with_configuration(&PackBitsCodecConfiguration {
            padding_encoding: PaddingEncoding::None,
            first_bit: Some(5),
            last_bit: Some(4),
        })
        .is_err()
    );
}

#[test]
fn bit_range_beyond_the_data_type_is_refused_with_the_data_type() {
    let uint4 = data_type::uint4();
    let error = codec(serde_json::json!({"last_bit": 4}))
        .encoded_representation(&shape(&[4]), &uint4, &zero_fill(&uint4))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(
            "packbits: last_bit = 4: must be less than 4, the bits per component of uint4"
        ),
        "{error}"
    );
    // first_bit alone past the default last_bit (N - 1 = 0 for bool).
    let bool_dt = data_type::bool();
    let error = codec(serde_json::json!({"first_bit": 1}))
        .encoded_representation(&shape(&[4]), &bool_dt, &zero_fill(&bool_dt))
        .unwrap_err()
        .to_string();
    assert!(error.contains("packbits: first_bit = 1:"), "{error}");
}

#[test]
fn unsupported_data_types_are_refused() {
    let string = data_type::string();
    let error = PackBitsCodec::default()
        .encoded_representation(&shape(&[4]), &string, &FillValue::from(""))
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("packbits: data type string"), "{error}");
    assert!(error.contains("is not supported"), "{error}");
}

// ---------------------------------------------------------------------------
// Bit layouts worked out from the specification
// ---------------------------------------------------------------------------

#[test]
fn uint2_layout_and_padding_bytes() {
    // uint2 [1, 2, 3, 0, 1]: element i is bits [2i, 2i + 2), LSB first.
    // byte 0 = 1 (bit 0) + 8 (bit 3) + 16 + 32 (bits 4, 5) = 57 = 0x39;
    // byte 1 = 1 (bit 8). 10 bits used of 16: 6 padding bits.
    let uint2 = data_type::uint2();
    let values = [1u8, 2, 3, 0, 1];
    for (padding, expected) in [
        ("none", vec![0x39, 0x01]),
        ("first_byte", vec![6, 0x39, 0x01]),
        ("start_byte", vec![6, 0x39, 0x01]),
        ("last_byte", vec![0x39, 0x01, 6]),
        ("end_byte", vec![0x39, 0x01, 6]),
    ] {
        let c = codec(serde_json::json!({"padding_encoding": padding}));
        assert_eq!(encode(&c, &uint2, &[5], &values), expected, "{padding}");
        assert_eq!(
            decode(&c, &uint2, &[5], &expected).unwrap(),
            values,
            "{padding}"
        );
        assert_eq!(
            c.encoded_representation(&shape(&[5]), &uint2, &zero_fill(&uint2))
                .unwrap(),
            BytesRepresentation::FixedSize(expected.len() as u64)
        );
    }
}

#[test]
fn bool_with_first_byte_padding() {
    // [T, F, F, T, F, F, T, F, T]: bits 0, 3, 6 of byte 0 = 1 + 8 + 64 = 0x49,
    // bit 8 = byte 1 0x01; 9 bits used of 16, so the first byte is 7.
    let bool_dt = data_type::bool();
    let c = codec(serde_json::json!({"padding_encoding": "first_byte"}));
    let values = [1u8, 0, 0, 1, 0, 0, 1, 0, 1];
    assert_eq!(encode(&c, &bool_dt, &[3, 3], &values), [7, 0x49, 0x01]);
    assert_eq!(
        decode(&c, &bool_dt, &[3, 3], &[7, 0x49, 0x01]).unwrap(),
        values
    );
}

#[test]
fn no_padding_byte_value_when_bits_fill_the_bytes() {
    // 8 bools fill one byte exactly: the padding byte records 0.
    let bool_dt = data_type::bool();
    let c = codec(serde_json::json!({"padding_encoding": "last_byte"}));
    assert_eq!(
        encode(&c, &bool_dt, &[8], &[1, 1, 1, 1, 0, 0, 0, 0]),
        [0x0F, 0]
    );
}

#[test]
fn int4_with_first_bit_1_last_bit_2() {
    // b = 2: fields are bits 2..1 of each value:
    //   6 = 0b0110 -> 11;  -3 = 0b1101 -> 10;  2 = 0b0010 -> 01;  -8 = 0b1000 -> 00
    // stream 0b00_01_10_11 = 0x1B. Decoding shifts back to bit 1 and
    // sign-extends from bit 2: 0b110 -> -2, 0b100 -> -4, 0b010 -> 2, 0 -> 0.
    let int4 = data_type::int4();
    let c = codec(serde_json::json!({"first_bit": 1, "last_bit": 2}));
    assert_eq!(encode(&c, &int4, &[4], &i8s(&[6, -3, 2, -8])), [0x1B]);
    assert_eq!(
        decode(&c, &int4, &[4], &[0x1B]).unwrap(),
        i8s(&[-2, -4, 2, 0])
    );
}

#[test]
fn int2_and_int4_decode_sign_extended() {
    // int2 [-2, -1, 0, 1]: fields 10, 11, 00, 01 -> 0b01_00_11_10 = 0x4E.
    let int2 = data_type::int2();
    let c = PackBitsCodec::default();
    assert_eq!(encode(&c, &int2, &[4], &i8s(&[-2, -1, 0, 1])), [0x4E]);
    assert_eq!(
        decode(&c, &int2, &[4], &[0x4E]).unwrap(),
        i8s(&[-2, -1, 0, 1])
    );
    // int4 [-8, -1, 0, 7]: nibbles 8, F, 0, 7 -> bytes 0xF8, 0x70.
    let int4 = data_type::int4();
    assert_eq!(encode(&c, &int4, &[4], &i8s(&[-8, -1, 0, 7])), [0xF8, 0x70]);
    assert_eq!(
        decode(&c, &int4, &[4], &[0xF8, 0x70]).unwrap(),
        i8s(&[-8, -1, 0, 7])
    );
}

#[test]
fn int32_last_bit_11_sign_extends_to_32_bits() {
    // -5 = 0x...FFFB: bits 0..=11 = 0xFFB; 7 -> 0x007. Stream 0x007FFB ->
    // bytes FB 7F 00. Decoding sign-extends bit 11 through bit 31.
    let int32 = data_type::int32();
    let c = codec(serde_json::json!({"last_bit": 11}));
    let values: Vec<u8> = [-5i32, 7].iter().flat_map(|v| v.to_ne_bytes()).collect();
    assert_eq!(encode(&c, &int32, &[2], &values), [0xFB, 0x7F, 0x00]);
    assert_eq!(
        decode(&c, &int32, &[2], &[0xFB, 0x7F, 0x00]).unwrap(),
        values
    );
}

#[test]
fn int16_middle_bits_shift_back_and_sign_extend() {
    // -1 = 0xFFFF, bits 4..=11 -> 0xFF; decoded 0xFF << 4 = 0x0FF0, bit 11
    // set, so sign-extended to 0xFFF0 = -16.
    let int16 = data_type::int16();
    let c = codec(serde_json::json!({"first_bit": 4, "last_bit": 11}));
    assert_eq!(encode(&c, &int16, &[1], &(-1i16).to_ne_bytes()), [0xFF]);
    assert_eq!(
        decode(&c, &int16, &[1], &[0xFF]).unwrap(),
        (-16i16).to_ne_bytes()
    );
}

#[test]
fn complex_float4_packs_both_components() {
    // Two elements (re, im) = (0x1, 0x2), (0x3, 0xF): components in order
    // re0, im0, re1, im1 at 4 bits each -> bytes 0x21, 0xF3.
    let complex = data_type::complex_float4_e2m1fn();
    let c = PackBitsCodec::default();
    let values = [0x1, 0x2, 0x3, 0xF];
    assert_eq!(encode(&c, &complex, &[2], &values), [0x21, 0xF3]);
    assert_eq!(decode(&c, &complex, &[2], &[0x21, 0xF3]).unwrap(), values);
}

#[test]
fn float6_packs_six_bits() {
    // 0x3F at bits 0-5, 0x01 at 6-11, 0x2A at 12-17: 0x3F + 0x01 << 6 +
    // 0x2A << 12 = 0x2A07F -> bytes 7F A0 02 (18 bits, 6 padding bits).
    let float6 = data_type::float6_e2m3fn();
    let c = codec(serde_json::json!({"padding_encoding": "last_byte"}));
    let values = [0x3F, 0x01, 0x2A];
    assert_eq!(encode(&c, &float6, &[3], &values), [0x7F, 0xA0, 0x02, 6]);
    assert_eq!(
        decode(&c, &float6, &[3], &[0x7F, 0xA0, 0x02, 6]).unwrap(),
        values
    );
}

#[test]
fn float32_is_its_little_endian_bytes() {
    let float32 = data_type::float32();
    let c = codec(serde_json::json!({"padding_encoding": "first_byte"}));
    let values: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let le: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let encoded = encode(&c, &float32, &[2], &values);
    assert_eq!(encoded[0], 0);
    assert_eq!(encoded[1..], le);
    assert_eq!(decode(&c, &float32, &[2], &encoded).unwrap(), values);
}

// ---------------------------------------------------------------------------
// Corrupt chunks
// ---------------------------------------------------------------------------

#[test]
fn wrong_padding_byte_is_an_error() {
    let uint2 = data_type::uint2();
    let c = codec(serde_json::json!({"padding_encoding": "first_byte"}));
    let error = decode(&c, &uint2, &[5], &[2, 0x39, 0x01])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("packbits: the first_byte padding byte is 2, but 5 elements of uint2 at 2 bits each leave 6 padding bits"),
        "{error}"
    );
    let c = codec(serde_json::json!({"padding_encoding": "last_byte"}));
    assert!(decode(&c, &uint2, &[5], &[0x39, 0x01, 0]).is_err());
}

#[test]
fn wrong_chunk_length_is_an_error() {
    let uint2 = data_type::uint2();
    for padding in ["none", "first_byte", "last_byte"] {
        let c = codec(serde_json::json!({"padding_encoding": padding}));
        let good = encode(&c, &uint2, &[5], &[1, 2, 3, 0, 1]);
        for len in [0, good.len() - 1, good.len() + 1] {
            let mut bytes = good.clone();
            bytes.resize(len, 0);
            let error = decode(&c, &uint2, &[5], &bytes).unwrap_err().to_string();
            assert!(error.contains("packbits: the encoded chunk has"), "{error}");
        }
    }
    // Decoded input of the wrong length for the shape.
    let error = PackBitsCodec::default()
        .encode(
            ArrayBytes::new_flen(vec![0u8; 3]),
            &shape(&[4]),
            &uint2,
            &zero_fill(&uint2),
            &CodecOptions::default(),
        )
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("packbits: the chunk has 3 bytes, expected 4"),
        "{error}"
    );
}

// ---------------------------------------------------------------------------
// Partial decoding
// ---------------------------------------------------------------------------

/// An in-memory encoded chunk that records the byte ranges read from it.
struct Recorder {
    bytes: Vec<u8>,
    reads: Mutex<Vec<Range<u64>>>,
}

impl Recorder {
    fn new(bytes: Vec<u8>) -> Arc<Self> {
        Arc::new(Self {
            bytes,
            reads: Mutex::new(Vec::new()),
        })
    }

    fn take_reads(&self) -> Vec<Range<u64>> {
        std::mem::take(&mut self.reads.lock().unwrap())
    }
}

impl BytesPartialDecoderTraits for Recorder {
    fn exists(&self) -> Result<bool, StorageError> {
        Ok(true)
    }

    fn size_held(&self) -> usize {
        0
    }

    fn partial_decode_many(
        &self,
        decoded_regions: ByteRangeIterator,
        options: &CodecOptions,
    ) -> Result<Option<Vec<zarrs::array::codec::api::ArrayBytesRaw<'_>>>, CodecError> {
        let ranges: Vec<_> = decoded_regions.collect();
        let len = self.bytes.len() as u64;
        self.reads
            .lock()
            .unwrap()
            .extend(ranges.iter().map(|r| r.to_range(len)));
        self.bytes
            .partial_decode_many(Box::new(ranges.into_iter()), options)
    }

    fn supports_partial_decode(&self) -> bool {
        true
    }
}

fn partial(
    c: &Arc<PackBitsCodec>,
    data_type: &DataType,
    dims: &[u64],
    handle: Arc<dyn BytesPartialDecoderTraits>,
    subset: &ArraySubset,
) -> Result<Vec<u8>, CodecError> {
    let decoder = c.clone().partial_decoder(
        handle,
        &shape(dims),
        data_type,
        &zero_fill(data_type),
        &CodecOptions::default(),
    )?;
    Ok(decoder
        .partial_decode(subset, &CodecOptions::default())?
        .into_fixed()?
        .into_owned())
}

#[test]
fn partial_decode_reads_only_the_bytes_of_the_requested_elements() {
    // uint4 4x6 = 24 elements of 4 bits: element i in byte i / 2.
    let uint4 = data_type::uint4();
    let values: Vec<u8> = (0..24u8).map(|v| v % 16).collect();
    // Rows 1..3, columns 2..5: elements 8..11 and 14..17 -> bits 32..44
    // and 56..68 -> bytes 4..6 and 7..9 of the packed bits.
    let subset = ArraySubset::new_with_ranges(&[1..3, 2..5]);
    let expected = [8u8, 9, 10, 14, 15, 0];
    for (padding, reads) in [
        ("none", vec![4..6, 7..9]),
        ("first_byte", vec![5..7, 8..10, 0..1]),
        ("last_byte", vec![4..6, 7..9, 12..13]),
    ] {
        let c = codec(serde_json::json!({"padding_encoding": padding}));
        let recorder = Recorder::new(encode(&c, &uint4, &[4, 6], &values));
        let got = partial(&c, &uint4, &[4, 6], recorder.clone(), &subset).unwrap();
        assert_eq!(got, expected, "{padding}");
        assert_eq!(recorder.take_reads(), reads, "{padding}");
    }
}

#[test]
fn partial_decode_starting_mid_byte_matches_full_decode() {
    // Every subset start, for layouts on the fast and the bit-stream paths.
    for (data_type, json) in [
        (data_type::bool(), serde_json::json!({})),
        (
            data_type::int2(),
            serde_json::json!({"padding_encoding": "first_byte"}),
        ),
        (
            data_type::int4(),
            serde_json::json!({"first_bit": 1, "last_bit": 2}),
        ),
        (
            data_type::float6_e3m2fn(),
            serde_json::json!({"padding_encoding": "last_byte"}),
        ),
        (
            data_type::int16(),
            serde_json::json!({"first_bit": 2, "last_bit": 12}),
        ),
        (data_type::complex_float6_e2m3fn(), serde_json::json!({})),
    ] {
        let c = codec(json.clone());
        // Under Miri, 100 elements: still more than one byte group per start.
        let n = if cfg!(miri) { 100u64 } else { 1000 };
        let size = data_type.fixed_size().unwrap();
        let decoded: Vec<u8> = (0..n as usize * size)
            .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[0])
            .collect();
        let encoded = encode(&c, &data_type, &[n], &decoded);
        let full = decode(&c, &data_type, &[n], &encoded).unwrap();
        for start in 0..9 {
            let end = n - start * 7;
            let subset = range_1d(start, end);
            let got = partial(&c, &data_type, &[n], Arc::new(encoded.clone()), &subset).unwrap();
            let range = start as usize * size..end as usize * size;
            assert_eq!(got, full[range], "{data_type} {json} start {start}");
        }
    }
}

#[test]
fn partial_decode_checks_the_padding_byte_and_the_length() {
    let uint4 = data_type::uint4();
    let subset = range_1d(0, 2);
    let c = codec(serde_json::json!({"padding_encoding": "last_byte"}));
    // 5 elements: 20 bits, 4 padding bits; the chunk says 0.
    let error = partial(
        &c,
        &uint4,
        &[5],
        Arc::new(vec![0x10, 0x32, 0x04, 0]),
        &subset,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("padding byte is 0"), "{error}");
    // Truncated: the padding byte is past the end.
    assert!(partial(&c, &uint4, &[5], Arc::new(vec![0x10, 0x32]), &subset).is_err());
    // Truncated: the requested elements are past the end.
    let c = PackBitsCodec::default().into();
    let tail = range_1d(3, 5);
    assert!(partial(&c, &uint4, &[5], Arc::new(vec![0x10]), &tail).is_err());
}

/// A chunk that does not exist.
struct Missing;

impl BytesPartialDecoderTraits for Missing {
    fn exists(&self) -> Result<bool, StorageError> {
        Ok(false)
    }

    fn size_held(&self) -> usize {
        0
    }

    fn partial_decode_many(
        &self,
        _decoded_regions: ByteRangeIterator,
        _options: &CodecOptions,
    ) -> Result<Option<Vec<zarrs::array::codec::api::ArrayBytesRaw<'_>>>, CodecError> {
        Ok(None)
    }

    fn supports_partial_decode(&self) -> bool {
        true
    }
}

#[test]
fn partial_decode_of_a_missing_chunk_is_the_fill_value() {
    let int4 = data_type::int4();
    let c = Arc::new(PackBitsCodec::default());
    let decoder = c
        .partial_decoder(
            Arc::new(Missing),
            &shape(&[8]),
            &int4,
            &FillValue::new(vec![(-3i8) as u8]),
            &CodecOptions::default(),
        )
        .unwrap();
    let got = decoder
        .partial_decode(&range_1d(2, 5), &CodecOptions::default())
        .unwrap()
        .into_fixed()
        .unwrap();
    assert_eq!(got.as_ref(), i8s(&[-3, -3, -3]));
}

#[test]
fn whole_components_are_read_with_or_without_the_padding_byte() {
    // uint16 [0x0102, 0x0304] with "last_byte": the spec's chunk is
    // 02 01 04 03 | 00; zarrs' built-in writes it without the final byte.
    let uint16 = data_type::uint16();
    let c = codec(serde_json::json!({"padding_encoding": "last_byte"}));
    let values: Vec<u8> = [0x0102u16, 0x0304]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let spec = [0x02, 0x01, 0x04, 0x03, 0x00];
    assert_eq!(encode(&c, &uint16, &[2], &values), spec);
    for chunk in [&spec[..], &spec[..4]] {
        assert_eq!(decode(&c, &uint16, &[2], chunk).unwrap(), values);
        let subset = range_1d(1, 2);
        let got = partial(&c, &uint16, &[2], Arc::new(chunk.to_vec()), &subset).unwrap();
        assert_eq!(got, 0x0304u16.to_ne_bytes());
    }
    // Any other length is still an error, as is a wrong padding byte.
    assert!(decode(&c, &uint16, &[2], &spec[..3]).is_err());
    assert!(decode(&c, &uint16, &[2], &[0x02, 0x01, 0x04, 0x03, 0x00, 0x00]).is_err());
    assert!(decode(&c, &uint16, &[2], &[0x02, 0x01, 0x04, 0x03, 0x08]).is_err());
    // Sub-byte types have no such form: one byte short is an error.
    let uint4 = data_type::uint4();
    assert!(decode(&c, &uint4, &[4], &[0x10, 0x32]).is_err());
}

#[cfg(feature = "async")]
#[test]
fn async_partial_decoder_matches_sync() {
    use std::task::{Context, Poll, Waker};
    use zarrs::array::codec::api::AsyncBytesPartialDecoderTraits;

    // uint4 4x6 as in `partial_decode_reads_only_the_bytes_of_the_requested_elements`.
    let uint4 = data_type::uint4();
    let values: Vec<u8> = (0..24u8).map(|v| v % 16).collect();
    let c = codec(serde_json::json!({"padding_encoding": "first_byte"}));
    let encoded: std::borrow::Cow<'static, [u8]> = encode(&c, &uint4, &[4, 6], &values).into();
    let subset = ArraySubset::new_with_ranges(&[1..3, 2..5]);
    let future = async {
        let handle: Arc<dyn AsyncBytesPartialDecoderTraits> = Arc::new(encoded);
        let decoder = c
            .clone()
            .async_partial_decoder(
                handle,
                &shape(&[4, 6]),
                &uint4,
                &zero_fill(&uint4),
                &CodecOptions::default(),
            )
            .await
            .unwrap();
        decoder
            .partial_decode(&subset, &CodecOptions::default())
            .await
            .unwrap()
            .into_fixed()
            .unwrap()
            .into_owned()
    };
    // In-memory bytes: the future completes on its first poll.
    let mut future = std::pin::pin!(future);
    let Poll::Ready(got) = future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    else {
        panic!("in-memory partial decode did not complete at once");
    };
    assert_eq!(got, [8, 9, 10, 14, 15, 0]);
}
