//! This crate's `bytes` codec against zarrs' built-in `bytes` codec.
//!
//! For every data type and configuration both support: this crate's encoding
//! equals the built-in's byte for byte, and each decodes the other's output
//! to the same values, through the codec API and through whole arrays (plain
//! and inside `sharding_indexed`, with partial reads). The arrays are built
//! from explicit codec objects, so these tests do not depend on which codec
//! the registry would pick; only `register_overrides_installs_this_codec`
//! touches the registry.
//!
//! Where the built-in departs from the specifications, the specification
//! wins and a test below states the difference:
//! - `int2` / `int4`: the built-in keeps the upper bits of each byte on
//!   decode (tensorstore's `int4` -1, `0x0f`, becomes 15); the data-type
//!   specifications say they are ignored, so this crate sign-extends (-1).
//! - `uint2` / `uint4` / `float4_e2m1fn` / `float6_*`: likewise the built-in
//!   keeps the upper bits; this crate clears them.
//! - `bool`: the built-in passes any byte through; this crate refuses bytes
//!   other than `0x00` / `0x01`, the only ones the specification defines.
//! - `endian` missing for a multi-byte type: the built-in accepts it until
//!   the first encode or decode; this crate refuses it as soon as the codec
//!   meets the data type (`encoded_representation`).
//! - `"endian": null`: the built-in reads it as absent; the specification
//!   allows only `"big"` or `"little"` when present, and this crate refuses it.

use crate::common;

use common::{nonzero, zero_fill};
use std::any::TypeId;
use std::borrow::Cow;
use std::num::{NonZeroU32, NonZeroU64};
use std::sync::Arc;

use common::store_contents;
use zarrs::array::codec::api::{
    ArrayToBytesCodecTraits, BytesRepresentation, Codec, CodecOptions, CodecTraitsV3,
};
use zarrs::array::codec::{
    BytesCodec as BuiltinBytes, BytesCodecEndiannessMissingError, BytesDataTypePlugin,
    BytesDataTypeTraits, ShardingCodecBuilder,
};
use zarrs::array::{
    Array, ArrayBuilder, ArrayBytes, ArraySubset, DataType, DataTypeSize, DataTypeTraits,
    Endianness, FillValue, FillValueMetadata, data_type,
};
use zarrs::metadata::Configuration;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::ZarrVersion;
use zarrs::storage::store::MemoryStore;
use zarrs::storage::{ListableStorageTraits, ReadableStorageTraits, WritableStorageTraits};
use zarrs_extension_codecs::codec::bytes::BytesCodec as OurBytes;

// --- test data ------------------------------------------------------------

/// Which in-memory bytes are valid elements of a data type.
#[derive(Clone, Copy, Debug)]
enum Values {
    /// Every byte pattern.
    Any,
    /// `0x00` or `0x01`.
    Bool,
    /// A two's complement value of this many bits, sign-extended to 8 bits.
    Signed(u32),
    /// A value of this many bits, zero-extended to 8 bits.
    Unsigned(u32),
}

/// A data type, its valid values, and whether its elements are multi-byte
/// (then `endian` is required).
struct Case {
    data_type: DataType,
    values: Values,
    multi_byte: bool,
}

fn case(data_type: DataType, values: Values, multi_byte: bool) -> Case {
    Case {
        data_type,
        values,
        multi_byte,
    }
}

/// Every fixed-size data type zarrs 0.23 has.
fn cases() -> Vec<Case> {
    use Values::{Any, Bool, Signed, Unsigned};
    let day = zarrs::array::data_type::NumpyTimeUnit::Day;
    let one = NonZeroU32::new(1).unwrap();
    vec![
        case(data_type::bool(), Bool, false),
        case(data_type::int2(), Signed(2), false),
        case(data_type::int4(), Signed(4), false),
        case(data_type::int8(), Any, false),
        case(data_type::int16(), Any, true),
        case(data_type::int32(), Any, true),
        case(data_type::int64(), Any, true),
        case(data_type::uint2(), Unsigned(2), false),
        case(data_type::uint4(), Unsigned(4), false),
        case(data_type::uint8(), Any, false),
        case(data_type::uint16(), Any, true),
        case(data_type::uint32(), Any, true),
        case(data_type::uint64(), Any, true),
        case(data_type::float16(), Any, true),
        case(data_type::bfloat16(), Any, true),
        case(data_type::float32(), Any, true),
        case(data_type::float64(), Any, true),
        case(data_type::float4_e2m1fn(), Unsigned(4), false),
        case(data_type::float6_e2m3fn(), Unsigned(6), false),
        case(data_type::float6_e3m2fn(), Unsigned(6), false),
        case(data_type::float8_e3m4(), Any, false),
        case(data_type::float8_e4m3(), Any, false),
        case(data_type::float8_e4m3b11fnuz(), Any, false),
        case(data_type::float8_e4m3fnuz(), Any, false),
        case(data_type::float8_e5m2(), Any, false),
        case(data_type::float8_e5m2fnuz(), Any, false),
        case(data_type::float8_e8m0fnu(), Any, false),
        case(data_type::complex64(), Any, true),
        case(data_type::complex128(), Any, true),
        case(data_type::complex_bfloat16(), Any, true),
        case(data_type::complex_float16(), Any, true),
        case(data_type::complex_float32(), Any, true),
        case(data_type::complex_float64(), Any, true),
        case(data_type::complex_float4_e2m1fn(), Unsigned(4), false),
        case(data_type::complex_float6_e2m3fn(), Unsigned(6), false),
        case(data_type::complex_float6_e3m2fn(), Unsigned(6), false),
        case(data_type::complex_float8_e3m4(), Any, false),
        case(data_type::complex_float8_e4m3(), Any, false),
        case(data_type::complex_float8_e4m3b11fnuz(), Any, false),
        case(data_type::complex_float8_e4m3fnuz(), Any, false),
        case(data_type::complex_float8_e5m2(), Any, false),
        case(data_type::complex_float8_e5m2fnuz(), Any, false),
        case(data_type::complex_float8_e8m0fnu(), Any, false),
        case(data_type::raw_bits(1), Any, false),
        case(data_type::raw_bits(3), Any, false),
        case(data_type::raw_bits(8), Any, false),
        case(data_type::numpy_datetime64(day, one), Any, true),
        case(data_type::numpy_timedelta64(day, one), Any, true),
        case(
            data_type::fixed_length_utf32(NonZeroU64::new(12).unwrap()).unwrap(),
            Any,
            true,
        ),
    ]
}

/// The configurations to try: without `endian` only for single-byte types.
fn configs(case: &Case) -> Vec<Option<Endianness>> {
    let mut configs = vec![Some(Endianness::Little), Some(Endianness::Big)];
    if !case.multi_byte {
        configs.insert(0, None);
    }
    configs
}

/// `num_elements` valid in-memory elements of `case`.
fn valid_bytes(case: &Case, num_elements: usize, seed: u64) -> Vec<u8> {
    let size = case.data_type.fixed_size().unwrap();
    let mut rng = common::Rng(seed | 1);
    (0..num_elements * size)
        .map(|_| {
            let r = rng.byte();
            match case.values {
                Values::Any => r,
                Values::Bool => r & 1,
                // A value in [-2^(bits-1), 2^(bits-1)) as an i8.
                Values::Signed(bits) => {
                    let span = 1i16 << bits;
                    (i16::from(r) % span - span / 2) as i8 as u8
                }
                Values::Unsigned(bits) => r % (1u8 << bits),
            }
        })
        .collect()
}

fn ours(endian: Option<Endianness>) -> Arc<dyn ArrayToBytesCodecTraits> {
    Arc::new(OurBytes::new(endian))
}

fn builtin(endian: Option<Endianness>) -> Arc<dyn ArrayToBytesCodecTraits> {
    Arc::new(BuiltinBytes::new(endian))
}

fn encode(
    codec: &dyn ArrayToBytesCodecTraits,
    bytes: &[u8],
    dims: &[u64],
    data_type: &DataType,
) -> Result<Vec<u8>, String> {
    codec
        .encode(
            ArrayBytes::new_flen(bytes),
            &nonzero(dims),
            data_type,
            &zero_fill(data_type),
            &CodecOptions::default(),
        )
        .map(Cow::into_owned)
        .map_err(|e| e.to_string())
}

fn decode(
    codec: &dyn ArrayToBytesCodecTraits,
    bytes: &[u8],
    dims: &[u64],
    data_type: &DataType,
) -> Result<Vec<u8>, String> {
    let decoded = codec
        .decode(
            Cow::Borrowed(bytes),
            &nonzero(dims),
            data_type,
            &zero_fill(data_type),
            &CodecOptions::default(),
        )
        .map_err(|e| e.to_string())?;
    Ok(decoded.into_fixed().unwrap().into_owned())
}

// --- the codec API ----------------------------------------------------------

#[test]
fn codec_api_encodings_are_identical_and_cross_decode() {
    let dims = [7, 5];
    for case in cases() {
        let dt = &case.data_type;
        let data = valid_bytes(&case, 35, 0x5eed);
        for endian in configs(&case) {
            let what = format!("{dt} endian {endian:?}");
            let (ours, builtin) = (ours(endian), builtin(endian));
            let by_ours =
                encode(&*ours, &data, &dims, dt).unwrap_or_else(|e| panic!("{what}: {e}"));
            let by_builtin = encode(&*builtin, &data, &dims, dt).unwrap();
            assert_eq!(by_ours, by_builtin, "{what}: encodings differ");
            assert_eq!(
                decode(&*ours, &by_builtin, &dims, dt).unwrap(),
                data,
                "{what}"
            );
            assert_eq!(
                decode(&*builtin, &by_ours, &dims, dt).unwrap(),
                data,
                "{what}"
            );
            // Same size as the built-in reports.
            let fill = zero_fill(dt);
            assert_eq!(
                ours.encoded_representation(&nonzero(&dims), dt, &fill)
                    .unwrap(),
                builtin
                    .encoded_representation(&nonzero(&dims), dt, &fill)
                    .unwrap(),
                "{what}"
            );
        }
    }
}

#[test]
fn big_endian_is_the_reverse_of_little_endian_per_component() {
    // Independent of both codecs' byte orders agreeing: for each multi-byte
    // type the big-endian encoding is the little-endian one with each
    // component (half an element for complex types, 4 bytes for UTF-32)
    // reversed.
    for case in cases().into_iter().filter(|c| c.multi_byte) {
        let dt = &case.data_type;
        let size = dt.fixed_size().unwrap();
        let component = if dt.to_string().contains("complex") {
            size / 2
        } else if dt.to_string().contains("utf32") {
            4
        } else {
            size
        };
        let data = valid_bytes(&case, 16, 7);
        let little = encode(&*ours(Some(Endianness::Little)), &data, &[16], dt).unwrap();
        let big = encode(&*ours(Some(Endianness::Big)), &data, &[16], dt).unwrap();
        let expected: Vec<u8> = little
            .chunks_exact(component)
            .flat_map(|c| c.iter().rev().copied())
            .collect();
        assert_eq!(big, expected, "{dt}");
    }
}

#[test]
fn missing_endian_is_refused_by_both_but_earlier_here() {
    for case in cases().into_iter().filter(|c| c.multi_byte) {
        let dt = &case.data_type;
        let fill = zero_fill(dt);
        let data = valid_bytes(&case, 4, 3);
        // This crate: as soon as the codec meets the data type.
        assert!(
            ours(None)
                .encoded_representation(&nonzero(&[4]), dt, &fill)
                .is_err(),
            "{dt}"
        );
        // Difference: the built-in accepts it here ...
        assert!(
            builtin(None)
                .encoded_representation(&nonzero(&[4]), dt, &fill)
                .is_ok(),
            "{dt}"
        );
        // ... and refuses it only at the first encode or decode, like this crate.
        assert!(encode(&*builtin(None), &data, &[4], dt).is_err(), "{dt}");
        assert!(encode(&*ours(None), &data, &[4], dt).is_err(), "{dt}");
        assert!(decode(&*builtin(None), &data, &[4], dt).is_err(), "{dt}");
        assert!(decode(&*ours(None), &data, &[4], dt).is_err(), "{dt}");
    }
}

#[test]
fn spec_departure_sub_byte_upper_bits_are_ignored_on_decode() {
    // Bytes as tensorstore writes them (value in the low bits, upper bits
    // zero) and with arbitrary upper bits, which the specs say to ignore.
    let none = None;
    // int4: 0x0f = 0b1111 = -1; 0x58 = 0b0101_1000 -> 0b1000 = -8;
    // 0xa7 -> 0b0111 = 7.
    let stored = [0x0f, 0x58, 0xa7];
    let spec = [(-1i8) as u8, (-8i8) as u8, 7];
    assert_eq!(
        decode(&*ours(none), &stored, &[3], &data_type::int4()).unwrap(),
        spec
    );
    // The built-in keeps the stored byte: 0x0f is read as 15, not -1.
    assert_eq!(
        decode(&*builtin(none), &stored, &[3], &data_type::int4()).unwrap(),
        stored
    );
    // int2: 0x03 = 0b11 = -1; 0x02 = 0b10 = -2; 0xf1 -> 0b01 = 1.
    let stored = [0x03, 0x02, 0xf1];
    let spec = [(-1i8) as u8, (-2i8) as u8, 1];
    assert_eq!(
        decode(&*ours(none), &stored, &[3], &data_type::int2()).unwrap(),
        spec
    );
    assert_eq!(
        decode(&*builtin(none), &stored, &[3], &data_type::int2()).unwrap(),
        stored
    );
    // uint4 0xf3 -> 3, uint2 0xfe -> 2, float4 0b1010_0110 -> 0b0110,
    // float6 0b1100_0001 -> 0b00_0001.
    for (dt, stored, spec) in [
        (data_type::uint4(), 0xf3u8, 0x03u8),
        (data_type::uint2(), 0xfe, 0x02),
        (data_type::float4_e2m1fn(), 0xa6, 0x06),
        (data_type::float6_e2m3fn(), 0xc1, 0x01),
        (data_type::float6_e3m2fn(), 0xc1, 0x01),
    ] {
        assert_eq!(
            decode(&*ours(none), &[stored], &[1], &dt).unwrap(),
            [spec],
            "{dt}"
        );
        assert_eq!(
            decode(&*builtin(none), &[stored], &[1], &dt).unwrap(),
            [stored],
            "{dt}"
        );
    }
}

#[test]
fn sub_byte_encode_matches_the_builtin_for_valid_values() {
    // In memory int4 -1 is the i8 -1 = 0xff. The spec leaves the upper bits
    // arbitrary but consistent; both write the sign extension, 0xff.
    let memory = [(-1i8) as u8, (-8i8) as u8, 7, 0];
    for endian in [None, Some(Endianness::Big)] {
        let by_ours = encode(&*ours(endian), &memory, &[4], &data_type::int4()).unwrap();
        assert_eq!(by_ours, [0xff, 0xf8, 0x07, 0x00]);
        assert_eq!(
            by_ours,
            encode(&*builtin(endian), &memory, &[4], &data_type::int4()).unwrap()
        );
    }
    // Difference, for in-memory bytes that are no valid int4 (15 is out of
    // range): the built-in writes the byte as it is, this crate keeps the
    // low 4 bits with the consistent upper-bit pattern (0b1111 -> -1 -> 0xff).
    assert_eq!(
        encode(&*builtin(None), &[0x0f], &[1], &data_type::int4()).unwrap(),
        [0x0f]
    );
    assert_eq!(
        encode(&*ours(None), &[0x0f], &[1], &data_type::int4()).unwrap(),
        [0xff]
    );
}

#[test]
fn spec_departure_bool_bytes_other_than_0_and_1() {
    let dt = data_type::bool();
    assert_eq!(decode(&*builtin(None), &[0, 2], &[2], &dt).unwrap(), [0, 2]);
    let error = decode(&*ours(None), &[0, 2], &[2], &dt).unwrap_err();
    assert!(
        error.contains("element 1") && error.contains("0x02"),
        "{error}"
    );
}

#[test]
fn spec_departure_endian_null() {
    let metadata: MetadataV3 =
        serde_json::from_str(r#"{"name":"bytes","configuration":{"endian":null}}"#).unwrap();
    assert!(BuiltinBytes::create(&metadata).is_ok());
    let error = OurBytes::create(&metadata).unwrap_err().to_string();
    assert!(
        error.contains("bytes") && error.contains("endian") && error.contains("null"),
        "{error}"
    );
    // Both refuse other values.
    for json in [
        r#"{"endian":"Big"}"#,
        r#"{"endian":"native"}"#,
        r#"{"endian":"little","x":1}"#,
    ] {
        let metadata: MetadataV3 =
            serde_json::from_str(&format!(r#"{{"name":"bytes","configuration":{json}}}"#)).unwrap();
        assert!(BuiltinBytes::create(&metadata).is_err(), "{json}");
        assert!(OurBytes::create(&metadata).is_err(), "{json}");
    }
}

#[test]
fn both_write_the_same_metadata() {
    let options = Default::default();
    for endian in [None, Some(Endianness::Little), Some(Endianness::Big)] {
        let by_ours = Codec::ArrayToBytes(ours(endian)).configuration_v3(&options);
        let by_builtin = Codec::ArrayToBytes(builtin(endian)).configuration_v3(&options);
        assert_eq!(by_ours, by_builtin, "{endian:?}");
    }
}

#[test]
fn wrong_chunk_lengths_are_refused_by_both() {
    let dt = data_type::float32();
    for len in [0, 15, 17] {
        let bytes = vec![0u8; len];
        for endian in [Some(Endianness::Little), Some(Endianness::Big)] {
            assert!(decode(&*ours(endian), &bytes, &[4], &dt).is_err(), "{len}");
            assert!(
                decode(&*builtin(endian), &bytes, &[4], &dt).is_err(),
                "{len}"
            );
        }
    }
}

// --- a data type from another crate ---------------------------------------

/// A 16-bit data type unknown to this crate, with its own `bytes` support,
/// as a third-party data type plugin would provide it.
#[derive(Debug)]
struct Rgb565;

zarrs::plugin::impl_extension_aliases!(Rgb565, v3: "test.rgb565");

impl DataTypeTraits for Rgb565 {
    fn configuration(&self, _version: ZarrVersion) -> Configuration {
        Configuration::default()
    }

    fn size(&self) -> DataTypeSize {
        DataTypeSize::Fixed(2)
    }

    fn fill_value(
        &self,
        _metadata: &FillValueMetadata,
        _version: ZarrVersion,
    ) -> Result<FillValue, zarrs::array::data_type::api::DataTypeFillValueMetadataError> {
        Ok(FillValue::new(vec![0, 0]))
    }

    fn metadata_fill_value(
        &self,
        _fill_value: &FillValue,
    ) -> Result<FillValueMetadata, zarrs::array::data_type::api::DataTypeFillValueError> {
        Ok(FillValueMetadata::from(0u16))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl BytesDataTypeTraits for Rgb565 {
    fn encode<'a>(
        &self,
        bytes: Cow<'a, [u8]>,
        endianness: Option<Endianness>,
    ) -> Result<Cow<'a, [u8]>, BytesCodecEndiannessMissingError> {
        let endianness = endianness.ok_or(BytesCodecEndiannessMissingError)?;
        if endianness.is_native() {
            return Ok(bytes);
        }
        let mut bytes = bytes.into_owned();
        bytes.chunks_exact_mut(2).for_each(<[u8]>::reverse);
        Ok(Cow::Owned(bytes))
    }

    fn decode<'a>(
        &self,
        bytes: Cow<'a, [u8]>,
        endianness: Option<Endianness>,
    ) -> Result<Cow<'a, [u8]>, BytesCodecEndiannessMissingError> {
        self.encode(bytes, endianness)
    }
}

inventory::submit! {
    BytesDataTypePlugin {
        type_id: TypeId::of::<Rgb565>(),
        caster: |any| any.downcast_ref::<Rgb565>().map(|t| t as &dyn BytesDataTypeTraits),
    }
}

#[test]
fn data_types_from_other_crates_use_their_own_bytes_support() {
    let dt = DataType::new(Rgb565);
    let data: Vec<u8> = (0..32).collect();
    for endian in [Some(Endianness::Little), Some(Endianness::Big)] {
        let by_ours = encode(&*ours(endian), &data, &[16], &dt).unwrap();
        assert_eq!(
            by_ours,
            encode(&*builtin(endian), &data, &[16], &dt).unwrap()
        );
        assert_eq!(decode(&*ours(endian), &by_ours, &[16], &dt).unwrap(), data);
    }
    // Its hook refuses a missing `endian`, which this crate asks up front.
    let fill = FillValue::new(vec![0, 0]);
    assert!(
        ours(None)
            .encoded_representation(&nonzero(&[16]), &dt, &fill)
            .is_err()
    );
    assert_eq!(
        ours(Some(Endianness::Big))
            .encoded_representation(&nonzero(&[16]), &dt, &fill)
            .unwrap(),
        BytesRepresentation::FixedSize(32)
    );
}

// --- whole arrays -----------------------------------------------------------

const ARRAY_SHAPE: [u64; 2] = [13, 7];

/// A `bytes` codec of one implementation.
type Make = fn(Option<Endianness>) -> Arc<dyn ArrayToBytesCodecTraits>;

/// An array on `store` whose chunks (or the subchunks of its shards) are
/// encoded with `make(endian)`; shard indexes use `make(little)`.
fn array(
    store: &Arc<MemoryStore>,
    data_type: &DataType,
    make: Make,
    endian: Option<Endianness>,
    sharded: bool,
) -> Array<MemoryStore> {
    let fill = zero_fill(data_type);
    let (chunk, codec) = if sharded {
        let sharding = ShardingCodecBuilder::new(nonzero(&[4, 4]), data_type)
            .array_to_bytes_codec(make(endian))
            .index_array_to_bytes_codec(make(Some(Endianness::Little)))
            .build_arc();
        (vec![8, 8], sharding as Arc<dyn ArrayToBytesCodecTraits>)
    } else {
        (vec![4, 4], make(endian))
    };
    ArrayBuilder::new(ARRAY_SHAPE.to_vec(), chunk, data_type.clone(), fill)
        .array_to_bytes_codec(codec)
        .codec_specific_options(common::c_order())
        .build(store.clone(), "/")
        .unwrap()
}

fn read(array: &Array<MemoryStore>, subset: &ArraySubset) -> Vec<u8> {
    let bytes: ArrayBytes<'static> = array.retrieve_array_subset(subset).unwrap();
    bytes.into_fixed().unwrap().into_owned()
}

#[test]
fn whole_arrays_are_identical_and_cross_read() {
    let subsets = [
        ArraySubset::new_with_ranges(&[0..13, 0..7]),
        ArraySubset::new_with_ranges(&[2..11, 1..6]),
        ArraySubset::new_with_ranges(&[5..6, 3..4]),
    ];
    for case in cases() {
        let dt = &case.data_type;
        let size = dt.fixed_size().unwrap();
        let data = valid_bytes(&case, 13 * 7, 0xa11);
        for endian in configs(&case) {
            for sharded in [false, true] {
                let what = format!("{dt} endian {endian:?} sharded {sharded}");
                let (store_ours, store_builtin) =
                    (Arc::new(MemoryStore::new()), Arc::new(MemoryStore::new()));
                let written_by_ours = array(&store_ours, dt, ours, endian, sharded);
                let written_by_builtin = array(&store_builtin, dt, builtin, endian, sharded);
                let all = written_by_ours.subset_all();
                written_by_ours
                    .store_array_subset(&all, ArrayBytes::new_flen(&data[..]))
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                written_by_builtin
                    .store_array_subset(&all, ArrayBytes::new_flen(&data[..]))
                    .unwrap();
                let (by_ours, by_builtin) =
                    (store_contents(&store_ours), store_contents(&store_builtin));
                assert!(!by_ours.is_empty(), "{what}");
                assert_eq!(by_ours, by_builtin, "{what}: stored chunks differ");
                // Each reads what the other wrote, whole and in part.
                let ours_reading_builtin = array(&store_builtin, dt, ours, endian, sharded);
                let builtin_reading_ours = array(&store_ours, dt, builtin, endian, sharded);
                for subset in &subsets {
                    let expected =
                        common::slice(&data, &ARRAY_SHAPE, subset.start(), subset.shape(), size);
                    assert_eq!(
                        read(&ours_reading_builtin, subset),
                        expected,
                        "{what} {subset:?}"
                    );
                    assert_eq!(
                        read(&builtin_reading_ours, subset),
                        expected,
                        "{what} {subset:?}"
                    );
                    assert_eq!(
                        read(&written_by_ours, subset),
                        expected,
                        "{what} {subset:?}"
                    );
                }
            }
        }
    }
}

// --- register_overrides ----------------------------------------------------

#[test]
fn register_overrides_installs_this_codec() {
    // Arrays written by the built-in (explicit codec objects), then opened
    // from their metadata after `register_overrides()`.
    let store = Arc::new(MemoryStore::new());
    let plain = array(
        &store,
        &data_type::float32(),
        builtin,
        Some(Endianness::Big),
        false,
    );
    let plain_path = "/";
    plain.store_metadata().unwrap();
    let values: Vec<f32> = (0..13 * 7).map(|i| i as f32 * 0.5).collect();
    plain
        .store_array_subset(&plain.subset_all(), &values)
        .unwrap();

    // An int4 array in shards, all -1, as the built-in writes it (0xff) ...
    let int4_store = Arc::new(MemoryStore::new());
    let int4 = array(&int4_store, &data_type::int4(), builtin, None, true);
    int4.store_metadata().unwrap();
    int4.store_array_subset(&int4.subset_all(), vec![-1i8; 13 * 7])
        .unwrap();
    // ... then rewritten as tensorstore writes int4 -1: 0x0f. Subchunks are
    // stored first and the index (with its checksum) last, so the subchunk
    // bytes can be patched without touching the index.
    for key in int4_store.list().unwrap() {
        if key.as_str().ends_with("zarr.json") {
            continue;
        }
        let mut shard = int4_store.get(&key).unwrap().unwrap().to_vec();
        let index_len = 2 * 2 * 16 + 4; // 2x2 subchunks, (offset, length) u64s, crc32c
        let data_len = shard.len() - index_len;
        // Elements outside the array are the fill value 0 and stay 0.
        assert!(shard[..data_len].contains(&0xff));
        for byte in &mut shard[..data_len] {
            if *byte == 0xff {
                *byte = 0x0f;
            }
        }
        int4_store.set(&key, shard.into()).unwrap();
    }

    zarrs_extension_codecs::register_overrides();

    let opened = Array::open(store.clone(), plain_path).unwrap();
    let codec = opened.codecs().array_to_bytes_codec().clone();
    let ours = codec.as_any().downcast_ref::<OurBytes>();
    assert_eq!(ours, Some(&OurBytes::big()), "this crate's codec is in use");
    let read: Vec<f32> = opened.retrieve_array_subset(&opened.subset_all()).unwrap();
    assert_eq!(read, values);

    // The name the codec had before the specification renamed it.
    let metadata: MetadataV3 =
        serde_json::from_str(r#"{"name":"endian","configuration":{"endian":"little"}}"#).unwrap();
    let codec = Codec::from_metadata(&metadata).unwrap();
    let Codec::ArrayToBytes(codec) = codec else {
        panic!("array to bytes")
    };
    assert!(codec.as_any().downcast_ref::<OurBytes>().is_some());

    // Inside sharding too: the patched subchunks decode as the int4 spec
    // says (0x0f is -1); the built-in would read 15.
    let opened = Array::open(int4_store.clone(), "/").unwrap();
    let read: Vec<i8> = opened.retrieve_array_subset(&opened.subset_all()).unwrap();
    assert!(read.iter().all(|&v| v == -1), "{read:?}");
    let builtin_reading = array(&int4_store, &data_type::int4(), builtin, None, true);
    let read: Vec<i8> = builtin_reading
        .retrieve_array_subset(&builtin_reading.subset_all())
        .unwrap();
    assert!(
        read.iter().all(|&v| v == 15),
        "the built-in keeps the upper bits"
    );
}
