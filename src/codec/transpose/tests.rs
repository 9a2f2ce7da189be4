//! Tests of the `transpose` codec glue: configuration, shapes, whole chunks
//! and partial decoding. Expected values are worked out from the spec's
//! definition, `B[B_pos] = A[A_pos]` with `B_pos[i] = A_pos[order[i]]`.

use std::num::NonZeroU64;
use std::sync::{Arc, Mutex};

use serde_json::json;
use zarrs::array::codec::api::{
    ArrayBytes, ArrayPartialDecoderTraits, ArrayToArrayCodecTraits, CodecError,
    CodecMetadataOptions, CodecOptions, CodecTraits, CodecTraitsV3,
};
use zarrs::array::{ArrayIndices, ArraySubset, DataType, FillValue, Indexer, data_type};
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::ZarrVersion;
use zarrs::storage::StorageError;

use super::{TransposeCodec, TransposeCodecConfiguration, TransposeOrder};

fn shape(dims: &[u64]) -> Vec<NonZeroU64> {
    dims.iter().map(|&d| NonZeroU64::new(d).unwrap()).collect()
}

/// Create from metadata, as `register_overrides` does.
fn create(configuration: serde_json::Value) -> Result<Arc<TransposeCodec>, String> {
    let metadata: MetadataV3 =
        serde_json::from_value(json!({"name": "transpose", "configuration": configuration}))
            .unwrap();
    match TransposeCodec::create(&metadata).map_err(|e| e.to_string())? {
        zarrs::array::codec::api::Codec::ArrayToArray(codec) => Ok(Arc::new(
            codec
                .as_any()
                .downcast_ref::<TransposeCodec>()
                .unwrap()
                .clone(),
        )),
        _ => panic!("not an array to array codec"),
    }
}

fn written_order(codec: &TransposeCodec) -> serde_json::Value {
    let configuration = codec
        .configuration(ZarrVersion::V3, &CodecMetadataOptions::default())
        .unwrap();
    serde_json::Value::Object(configuration.into())["order"].clone()
}

fn encode(
    codec: &TransposeCodec,
    bytes: ArrayBytes<'_>,
    dims: &[u64],
    dt: &DataType,
) -> Result<ArrayBytes<'static>, CodecError> {
    let fill = FillValue::new(vec![0; dt.fixed_size().unwrap_or(0)]);
    codec
        .encode(bytes, &shape(dims), dt, &fill, &CodecOptions::default())
        .map(ArrayBytes::into_owned)
}

fn decode(
    codec: &TransposeCodec,
    bytes: ArrayBytes<'_>,
    dims: &[u64],
    dt: &DataType,
) -> Result<ArrayBytes<'static>, CodecError> {
    let fill = FillValue::new(vec![0; dt.fixed_size().unwrap_or(0)]);
    codec
        .decode(bytes, &shape(dims), dt, &fill, &CodecOptions::default())
        .map(ArrayBytes::into_owned)
}

#[test]
fn accepts_every_published_form() {
    assert_eq!(
        create(json!({"order": [2, 0, 1]})).unwrap().order(),
        &TransposeOrder::Permutation(vec![2, 0, 1])
    );
    assert_eq!(
        create(json!({"order": "C"})).unwrap().order(),
        &TransposeOrder::C
    );
    assert_eq!(
        create(json!({"order": "F"})).unwrap().order(),
        &TransposeOrder::F
    );
    // A 0-dimensional chunk has the empty permutation.
    assert_eq!(
        create(json!({"order": []}))
            .unwrap()
            .permutation(0)
            .unwrap(),
        Vec::<usize>::new()
    );
}

#[test]
fn refuses_bad_configurations_naming_codec_field_and_value() {
    for (configuration, value, reason) in [
        (json!({"order": [0, 0]}), "[0,0]", "axis 0 appears twice"),
        (
            json!({"order": [0, 2]}),
            "[0,2]",
            "axis 2 is out of range for 2 dimensions",
        ),
        (json!({"order": [1, -1]}), "[1,-1]", "-1 is not an axis"),
        (json!({"order": [0, 1.5]}), "[0,1.5]", "1.5 is not an axis"),
        (json!({"order": [0, 1.0]}), "[0,1.0]", "1.0 is not an axis"),
        (
            json!({"order": ["0", 1]}),
            "[\"0\",1]",
            "\"0\" is not an axis",
        ),
        (json!({"order": "c"}), "\"c\"", "or \"C\" or \"F\""),
        (json!({"order": "A"}), "\"A\"", "or \"C\" or \"F\""),
        (json!({"order": 3}), "3", "or \"C\" or \"F\""),
        (json!({"order": null}), "null", "or \"C\" or \"F\""),
        (json!({"order": {"0": 1}}), "{\"0\":1}", "or \"C\" or \"F\""),
        (json!({}), "(missing)", "the field is required"),
    ] {
        let error = create(configuration.clone()).unwrap_err();
        let field = if configuration.get("order").is_some() || value == "(missing)" {
            "order"
        } else {
            ""
        };
        assert!(
            error.contains(&format!("transpose: {field} = {value}: ")) && error.contains(reason),
            "{configuration}: {error}"
        );
    }
    let error = create(json!({"order": [0], "axes": 1})).unwrap_err();
    assert!(
        error.contains("transpose: axes = 1: unknown configuration key"),
        "{error}"
    );
    let error = TransposeCodec::create(&MetadataV3::new("transpose"))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("transpose: configuration = (missing)"),
        "{error}"
    );
    assert!(TransposeCodec::new(vec![1, 1]).is_err());
    let configuration = TransposeCodecConfiguration {
        order: TransposeOrder::Permutation(vec![3]),
    };
    assert!(TransposeCodec::new_with_configuration(&configuration).is_err());
}

#[test]
fn refuses_a_permutation_of_the_wrong_length_when_the_shape_is_seen() {
    let codec = create(json!({"order": [2, 0, 1]})).unwrap();
    for error in [
        codec.encoded_shape(&shape(&[2, 3])).unwrap_err(),
        codec.decoded_shape(&shape(&[2, 3, 4, 5])).unwrap_err(),
        encode(
            &codec,
            ArrayBytes::from(vec![0u8; 6]),
            &[2, 3],
            &data_type::uint8(),
        )
        .unwrap_err(),
        decode(
            &codec,
            ArrayBytes::from(vec![0u8; 6]),
            &[2, 3],
            &data_type::uint8(),
        )
        .unwrap_err(),
    ] {
        let error = error.to_string();
        assert!(
            error.contains("transpose: order = [2,0,1]: has 3 axes but the chunk has"),
            "{error}"
        );
    }
}

#[test]
fn shapes_are_permuted() {
    let codec = create(json!({"order": [2, 0, 1]})).unwrap();
    // B_shape[i] = A_shape[order[i]]: (2, 3, 4) -> (4, 2, 3).
    assert_eq!(
        codec.encoded_shape(&shape(&[2, 3, 4])).unwrap(),
        shape(&[4, 2, 3])
    );
    assert_eq!(
        codec.decoded_shape(&shape(&[4, 2, 3])).unwrap(),
        Some(shape(&[2, 3, 4]))
    );
    let f = create(json!({"order": "F"})).unwrap();
    assert_eq!(
        f.encoded_shape(&shape(&[2, 3, 4, 5])).unwrap(),
        shape(&[5, 4, 3, 2])
    );
    let c = create(json!({"order": "C"})).unwrap();
    assert_eq!(c.encoded_shape(&shape(&[2, 3])).unwrap(), shape(&[2, 3]));
}

#[test]
fn writes_back_an_explicit_permutation_once_the_dimensionality_is_known() {
    let explicit = create(json!({"order": [1, 0]})).unwrap();
    assert_eq!(written_order(&explicit), json!([1, 0]));

    let f = create(json!({"order": "F"})).unwrap();
    // Before any shape the dimensionality is unknown: written as read.
    assert_eq!(written_order(&f), json!("F"));
    f.encoded_shape(&shape(&[2, 3, 4])).unwrap();
    assert_eq!(written_order(&f), json!([2, 1, 0]));
    // A clone keeps what was learnt.
    assert_eq!(written_order(&f.as_ref().clone()), json!([2, 1, 0]));
    // Met with another dimensionality, no single permutation is right.
    f.encoded_shape(&shape(&[2, 3])).unwrap();
    assert_eq!(written_order(&f), json!("F"));

    let c = create(json!({"order": "C"})).unwrap();
    decode(
        &c,
        ArrayBytes::from(vec![0u8; 6]),
        &[2, 3],
        &data_type::uint8(),
    )
    .unwrap();
    assert_eq!(written_order(&c), json!([0, 1]));
}

#[test]
fn transposes_a_matrix_by_hand() {
    // [[0, 1, 2], [3, 4, 5]] with order [1, 0] is [[0, 3], [1, 4], [2, 5]].
    let codec = create(json!({"order": [1, 0]})).unwrap();
    let dt = data_type::uint8();
    let encoded = encode(
        &codec,
        ArrayBytes::from(vec![0u8, 1, 2, 3, 4, 5]),
        &[2, 3],
        &dt,
    )
    .unwrap();
    assert_eq!(encoded, ArrayBytes::from(vec![0u8, 3, 1, 4, 2, 5]));
    let decoded = decode(&codec, encoded, &[2, 3], &dt).unwrap();
    assert_eq!(decoded, ArrayBytes::from(vec![0u8, 1, 2, 3, 4, 5]));
}

#[test]
fn follows_the_spec_definition_in_3d() {
    // A of shape (2, 3, 4) holds its linear index a0 * 12 + a1 * 4 + a2.
    // With order [2, 0, 1], B has shape (4, 2, 3) and B[b0, b1, b2] = A[a]
    // where b_i = a_order[i]: a2 = b0, a0 = b1, a1 = b2.
    let codec = create(json!({"order": [2, 0, 1]})).unwrap();
    let dt = data_type::uint16();
    let a: Vec<u16> = (0..24).collect();
    let mut expected = Vec::new();
    for b0 in 0..4u16 {
        for b1 in 0..2u16 {
            for b2 in 0..3u16 {
                expected.push(b1 * 12 + b2 * 4 + b0);
            }
        }
    }
    let bytes = ArrayBytes::from(bytemuck::cast_slice::<u16, u8>(&a).to_vec());
    let encoded = encode(&codec, bytes.clone(), &[2, 3, 4], &dt).unwrap();
    assert_eq!(
        encoded,
        ArrayBytes::from(bytemuck::cast_slice::<u16, u8>(&expected).to_vec())
    );
    assert_eq!(decode(&codec, encoded, &[2, 3, 4], &dt).unwrap(), bytes);
}

#[test]
fn c_and_f_are_identity_and_reverse() {
    let dt = data_type::uint8();
    let a: Vec<u8> = (0..24).collect();
    let c = create(json!({"order": "C"})).unwrap();
    let f = create(json!({"order": "F"})).unwrap();
    let explicit = create(json!({"order": [2, 1, 0]})).unwrap();
    let input = ArrayBytes::from(a.as_slice());
    // "C" needs no copy: the output borrows the input.
    let output = c
        .encode(
            input,
            &shape(&[2, 3, 4]),
            &dt,
            &FillValue::from(0u8),
            &CodecOptions::default(),
        )
        .unwrap();
    assert_eq!(output.clone().into_fixed().unwrap().as_ptr(), a.as_ptr());
    assert_eq!(output, ArrayBytes::from(a.clone()));
    assert_eq!(
        encode(&f, ArrayBytes::from(a.clone()), &[2, 3, 4], &dt).unwrap(),
        encode(&explicit, ArrayBytes::from(a.clone()), &[2, 3, 4], &dt).unwrap()
    );
}

#[test]
fn transposes_variable_length_and_optional_data() {
    // A 2 x 3 array of strings with order [1, 0].
    let strings = ["", "a", "bb", "ccc", "dddd", "eeeee"];
    let vlen = |order: &[usize]| {
        let mut bytes = Vec::new();
        let mut offsets = vec![0];
        for &i in order {
            bytes.extend_from_slice(strings[i].as_bytes());
            offsets.push(bytes.len());
        }
        ArrayBytes::new_vlen(bytes, offsets.try_into().unwrap()).unwrap()
    };
    let codec = create(json!({"order": [1, 0]})).unwrap();
    let dt = data_type::string();
    // Encoded element (r, c) is decoded element (c, r) = c * 3 + r.
    let encoded = encode(&codec, vlen(&[0, 1, 2, 3, 4, 5]), &[2, 3], &dt).unwrap();
    assert_eq!(encoded, vlen(&[0, 3, 1, 4, 2, 5]));
    assert_eq!(
        decode(&codec, encoded, &[2, 3], &dt).unwrap(),
        vlen(&[0, 1, 2, 3, 4, 5])
    );

    // Optional uint8: data and mask move together.
    let dt = data_type::optional(data_type::uint8());
    let bytes = ArrayBytes::from(vec![10u8, 11, 12, 13, 14, 15])
        .with_optional_mask(vec![1u8, 0, 1, 1, 0, 0]);
    let expected = ArrayBytes::from(vec![10u8, 13, 11, 14, 12, 15])
        .with_optional_mask(vec![1u8, 1, 0, 0, 1, 0]);
    let fill = FillValue::new(vec![0, 0]);
    let encoded = codec
        .encode(
            bytes.clone(),
            &shape(&[2, 3]),
            &dt,
            &fill,
            &CodecOptions::default(),
        )
        .unwrap();
    assert_eq!(encoded, expected);
    let decoded = codec
        .decode(
            encoded,
            &shape(&[2, 3]),
            &dt,
            &fill,
            &CodecOptions::default(),
        )
        .unwrap();
    assert_eq!(decoded, bytes);
}

#[test]
fn refuses_malformed_chunks_without_panicking() {
    let codec = create(json!({"order": [1, 0]})).unwrap();
    let too_short = encode(
        &codec,
        ArrayBytes::from(vec![0u8; 5]),
        &[2, 3],
        &data_type::uint8(),
    );
    assert!(
        too_short
            .unwrap_err()
            .to_string()
            .contains("transpose: chunk has 5 bytes, expected 6 elements of 1 bytes")
    );
    let too_long = decode(
        &codec,
        ArrayBytes::from(vec![0u8; 28]),
        &[2, 3],
        &data_type::float32(),
    );
    assert!(too_long.is_err());
    // Variable-length bytes with one offset too few.
    let vlen = ArrayBytes::new_vlen(vec![1u8, 2, 3], vec![0, 1, 2, 3].try_into().unwrap()).unwrap();
    let error = encode(&codec, vlen, &[2, 2], &data_type::string()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("transpose: invalid element offsets"),
        "{error}"
    );
    // Bytes of the wrong kind for the data type.
    let error = encode(
        &codec,
        ArrayBytes::from(vec![0u8; 4]),
        &[2, 2],
        &data_type::string(),
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("fixed-size chunk bytes for data type"),
        "{error}"
    );
}

/// A requested region (start, shape), or `None` for a list of elements.
type Request = Option<(Vec<u64>, Vec<u64>)>;

/// An input handle over a whole encoded chunk that records what it is asked
/// for, to check that a partial decode asks for no more than it needs.
struct Recording {
    chunk: ArrayBytes<'static>,
    shape: Vec<u64>,
    data_type: DataType,
    /// What was requested, in order.
    requests: Mutex<Vec<Request>>,
}

impl ArrayPartialDecoderTraits for Recording {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    fn exists(&self) -> Result<bool, StorageError> {
        Ok(true)
    }

    fn size_held(&self) -> usize {
        0
    }

    fn partial_decode(
        &self,
        indexer: &dyn Indexer,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'_>, CodecError> {
        let request = indexer
            .as_array_subset()
            .map(|s| (s.start().to_vec(), s.shape().to_vec()));
        self.requests.lock().unwrap().push(request);
        self.chunk
            .extract_array_subset(indexer, &self.shape, &self.data_type)
    }

    fn supports_partial_decode(&self) -> bool {
        true
    }
}

#[test]
fn partial_decode_requests_only_the_permuted_region() {
    // Decoded A: shape (3, 4, 5), A[a0, a1, a2] = a0 * 20 + a1 * 5 + a2.
    let codec = create(json!({"order": [2, 0, 1]})).unwrap();
    let dt = data_type::uint8();
    let decoded: Vec<u8> = (0..60).collect();
    let encoded = encode(&codec, ArrayBytes::from(decoded.clone()), &[3, 4, 5], &dt).unwrap();
    let recording = Arc::new(Recording {
        chunk: encoded,
        shape: vec![5, 3, 4],
        data_type: dt.clone(),
        requests: Mutex::new(Vec::new()),
    });
    let partial = codec
        .clone()
        .partial_decoder(
            recording.clone(),
            &shape(&[3, 4, 5]),
            &dt,
            &FillValue::from(0u8),
            &CodecOptions::default(),
        )
        .unwrap();

    // The region a0 in 1..3, a1 in 0..2, a2 in 2..5.
    let region = ArraySubset::new_with_ranges(&[1..3, 0..2, 2..5]);
    let got = partial
        .partial_decode(&region, &CodecOptions::default())
        .unwrap();
    let mut expected = Vec::new();
    for a0 in 1..3u8 {
        for a1 in 0..2u8 {
            for a2 in 2..5u8 {
                expected.push(a0 * 20 + a1 * 5 + a2);
            }
        }
    }
    assert_eq!(got, ArrayBytes::from(expected));
    // Only the encoded region (start, shape permuted by [2, 0, 1]) was asked for.
    assert_eq!(
        recording.requests.lock().unwrap().as_slice(),
        [Some((vec![2, 1, 0], vec![3, 2, 2]))]
    );

    // Single elements come back in the requested order.
    let indices: Vec<ArrayIndices> = vec![vec![2, 3, 4], vec![0, 0, 1], vec![1, 2, 0]];
    let got = partial
        .partial_decode(&indices, &CodecOptions::default())
        .unwrap();
    assert_eq!(got, ArrayBytes::from(vec![59u8, 1, 30]));

    // A request of the wrong dimensionality is an error, not a panic.
    let error = partial.partial_decode(
        &ArraySubset::new_with_ranges(&[0..1, 0..1]),
        &CodecOptions::default(),
    );
    assert!(error.is_err());
}

#[test]
fn partial_decode_of_variable_length_data() {
    let codec = create(json!({"order": "F"})).unwrap();
    let dt = data_type::string();
    // A 2 x 3 array; element (r, c) is the string of r * 3 + c 'x's.
    let mut bytes = Vec::new();
    let mut offsets = vec![0];
    for i in 0..6 {
        bytes.extend(std::iter::repeat_n(b'x', i));
        offsets.push(bytes.len());
    }
    let decoded = ArrayBytes::new_vlen(bytes, offsets.try_into().unwrap()).unwrap();
    let encoded = encode(&codec, decoded.clone(), &[2, 3], &dt).unwrap();
    let recording = Arc::new(Recording {
        chunk: encoded,
        shape: vec![3, 2],
        data_type: dt.clone(),
        requests: Mutex::new(Vec::new()),
    });
    let partial = codec
        .clone()
        .partial_decoder(
            recording,
            &shape(&[2, 3]),
            &dt,
            &FillValue::from(""),
            &CodecOptions::default(),
        )
        .unwrap();
    let all = partial
        .partial_decode(
            &ArraySubset::new_with_ranges(&[0..2, 0..3]),
            &CodecOptions::default(),
        )
        .unwrap();
    assert_eq!(all, decoded);
    // Row 1, columns 1..3: 4 and 5 'x's.
    let part = partial
        .partial_decode(
            &ArraySubset::new_with_ranges(&[1..2, 1..3]),
            &CodecOptions::default(),
        )
        .unwrap();
    let expected = ArrayBytes::new_vlen(vec![b'x'; 9], vec![0, 4, 9].try_into().unwrap()).unwrap();
    assert_eq!(part, expected);
}
