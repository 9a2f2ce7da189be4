use std::num::NonZeroU64;

use zarrs::array::codec::api::CodecOptions;
use zarrs::array::codec::api::{ArrayBytes, ArrayBytesOffsets, ArrayToBytesCodecTraits};
use zarrs::array::{FillValue, data_type};
use zarrs::metadata::v3::MetadataV3;

use super::*;

fn shape(n: u64) -> Vec<NonZeroU64> {
    vec![NonZeroU64::new(n).unwrap()]
}

#[test]
fn configuration_keys_are_refused() {
    let metadata: MetadataV3 =
        serde_json::from_str(r#"{"name": "vlen-utf8", "configuration": {"x": 1}}"#).unwrap();
    let err = create(&metadata, VlenV2Kind::Utf8).unwrap_err().to_string();
    assert!(
        err.contains("vlen-utf8: x = 1: unknown configuration key"),
        "{err}"
    );
    let metadata: MetadataV3 = serde_json::from_str(r#"{"name": "vlen-bytes"}"#).unwrap();
    assert!(create(&metadata, VlenV2Kind::Bytes).is_ok());
}

#[test]
fn fixed_size_data_type_is_refused() {
    let codec = VlenV2Codec::new(VlenV2Kind::Bytes);
    let err = codec
        .encoded_representation(&shape(1), &data_type::uint8(), &FillValue::from(0u8))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("vlen-bytes: data type uint8 has a fixed size"),
        "{err}"
    );
}

#[test]
fn encode_decode_by_hand() {
    // ["ab", ""]: count 2, then 2 "ab", then 0 (worked out from the layout).
    let expected = [2, 0, 0, 0, 2, 0, 0, 0, b'a', b'b', 0, 0, 0, 0];
    let codec = VlenV2Codec::new(VlenV2Kind::Utf8);
    let input = ArrayBytes::new_vlen(
        b"ab".to_vec(),
        ArrayBytesOffsets::new(vec![0, 2, 2]).unwrap(),
    )
    .unwrap();
    let (dt, fill) = (data_type::string(), FillValue::from(""));
    let options = CodecOptions::default();
    let encoded = codec
        .encode(input.clone(), &shape(2), &dt, &fill, &options)
        .unwrap();
    assert_eq!(&encoded[..], &expected);
    let decoded = codec
        .decode(encoded, &shape(2), &dt, &fill, &options)
        .unwrap();
    assert_eq!(decoded, input);
}

#[test]
fn invalid_utf8_is_refused_by_vlen_utf8_only() {
    let chunk = [1, 0, 0, 0, 1, 0, 0, 0, 0xff];
    let (dt, fill) = (data_type::string(), FillValue::from(""));
    let options = CodecOptions::default();
    let err = VlenV2Codec::new(VlenV2Kind::Utf8)
        .decode(chunk[..].into(), &shape(1), &dt, &fill, &options)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("vlen-utf8: element 0 is not valid UTF-8"),
        "{err}"
    );
    let (dt, fill) = (data_type::bytes(), FillValue::from(Vec::<u8>::new()));
    assert!(
        VlenV2Codec::new(VlenV2Kind::Bytes)
            .decode(chunk[..].into(), &shape(1), &dt, &fill, &options)
            .is_ok()
    );
}
