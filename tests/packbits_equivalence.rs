//! Equivalence of this crate's `packbits` with zarrs' built-in
//! `PackBitsCodec` (zarrs 0.23.14).
//!
//! For every data type both support and every configuration (each padding
//! encoding, whole components and several bit ranges):
//! - both encode the same values to the same bytes, and report the same size;
//! - each decodes the other's output: this crate always to the values the
//!   specification gives, the built-in to the same values except in its
//!   known departures, which are stated in the named `builtin_*` tests below
//!   rather than copied;
//! - the same holds through whole arrays, plain and inside `sharding_indexed`
//!   (the stores the two write are identical, `zarr.json` included), and an
//!   array written by this crate opens with the built-in.
//!
//! The values the specification gives are computed from the spec's rule
//! (`tests/common/packbits.rs`), written out independently of the crate:
//! take bits `first_bit..=last_bit` of each component, put them back at
//! `first_bit`, sign-extend signed integers from `last_bit`, zero-extend the
//! rest.
//!
//! This process never calls `register_overrides()`, so an array opened from
//! its metadata gets zarrs' built-in codec.

mod common;

use common::{nonzero, zero_fill};
use std::num::NonZeroU32;
use std::sync::Arc;

use common::packbits::{component_to_ne, mask, spec_round_trip};
use zarrs::array::codec::api::{
    ArrayBytes, ArrayToBytesCodecTraits, CodecMetadataOptions, CodecOptions, CodecTraits,
    CodecTraitsV3,
};
use zarrs::array::codec::{PackBitsCodec as Builtin, ShardingCodecBuilder};
use zarrs::array::{Array, ArrayBuilder, ArraySubset, DataType, data_type};
use zarrs::metadata::v3::MetadataV3;
use zarrs::metadata_ext::codec::packbits::PackBitsPaddingEncoding;
use zarrs::plugin::ZarrVersion;
use zarrs::storage::store::MemoryStore;
use zarrs::storage::{ReadableStorageTraits, StoreKey};
use zarrs_extension_codecs::codec::packbits::{PackBitsCodec, PaddingEncoding};

// ---------------------------------------------------------------------------
// Data types and the specification's decode rule
// ---------------------------------------------------------------------------

/// A data type as the specification describes it for `packbits`.
#[derive(Clone)]
struct TypeCase {
    data_type: DataType,
    /// `N`, bits per component.
    bits: u64,
    /// Components per element.
    count: usize,
    signed: bool,
}

impl TypeCase {
    fn new(data_type: DataType, bits: u64, count: usize, signed: bool) -> Self {
        Self {
            data_type,
            bits,
            count,
            signed,
        }
    }

    /// Bytes per component in memory.
    fn component_bytes(&self) -> usize {
        self.bits.div_ceil(8) as usize
    }

    fn element_bytes(&self) -> usize {
        self.count * self.component_bytes()
    }

    /// Random valid in-memory elements: each component holds an `N`-bit
    /// value, sign-extended to its byte for `int2` / `int4` (as zarrs holds
    /// them), zero-extended otherwise.
    fn values(&self, elements: usize, seed: u64) -> Vec<u8> {
        let mut rng = Rng(seed | 1);
        let width = 8 * self.component_bytes() as u64;
        (0..elements * self.count)
            .flat_map(|_| {
                let mut v = rng.next() & mask(self.bits);
                if self.signed && (v >> (self.bits - 1)) & 1 == 1 {
                    v |= mask(width) & !mask(self.bits);
                }
                component_to_ne(v, self.component_bytes())
            })
            .collect()
    }

    /// What the specification decodes `decoded` to after encoding it with
    /// bits `first..=last`.
    fn spec_round_trip(&self, decoded: &[u8], first: u64, last: u64) -> Vec<u8> {
        spec_round_trip(decoded, self.bits, self.signed, first, last)
    }

    /// The bit ranges to test: whole components written both ways, then
    /// ranges that cut bits off either end, the middle, and a single bit.
    fn bit_ranges(&self) -> Vec<(Option<u64>, Option<u64>)> {
        let n = self.bits;
        let mut ranges = vec![(None, None), (Some(0), Some(n - 1))];
        if n > 1 {
            ranges.extend([(Some(1), None), (None, Some(n - 2))]);
        }
        if n > 2 {
            ranges.extend([(Some(1), Some(n - 2)), (Some(n / 2), Some(n / 2))]);
        }
        if n > 8 {
            // A range inside the lowest byte of a multi-byte component.
            ranges.push((Some(0), Some(5)));
        }
        ranges
    }
}

/// xorshift64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Every data type the specification lists, and the ones zarrs adds.
fn type_cases() -> Vec<TypeCase> {
    use data_type as d;
    let mut cases = vec![
        TypeCase::new(d::bool(), 1, 1, false),
        TypeCase::new(d::int2(), 2, 1, true),
        TypeCase::new(d::uint2(), 2, 1, false),
        TypeCase::new(d::int4(), 4, 1, true),
        TypeCase::new(d::uint4(), 4, 1, false),
        TypeCase::new(d::float4_e2m1fn(), 4, 1, false),
        TypeCase::new(d::float6_e2m3fn(), 6, 1, false),
        TypeCase::new(d::float6_e3m2fn(), 6, 1, false),
        TypeCase::new(d::complex_float4_e2m1fn(), 4, 2, false),
        TypeCase::new(d::complex_float6_e2m3fn(), 6, 2, false),
        TypeCase::new(d::complex_float6_e3m2fn(), 6, 2, false),
        TypeCase::new(d::int8(), 8, 1, true),
        TypeCase::new(d::uint8(), 8, 1, false),
        TypeCase::new(d::int16(), 16, 1, true),
        TypeCase::new(d::uint16(), 16, 1, false),
        TypeCase::new(d::int32(), 32, 1, true),
        TypeCase::new(d::uint32(), 32, 1, false),
        TypeCase::new(d::int64(), 64, 1, true),
        TypeCase::new(d::uint64(), 64, 1, false),
        TypeCase::new(d::float16(), 16, 1, false),
        TypeCase::new(d::bfloat16(), 16, 1, false),
        TypeCase::new(d::float32(), 32, 1, false),
        TypeCase::new(d::float64(), 64, 1, false),
        TypeCase::new(d::complex_bfloat16(), 16, 2, false),
        TypeCase::new(d::complex_float16(), 16, 2, false),
        TypeCase::new(d::complex_float32(), 32, 2, false),
        TypeCase::new(d::complex_float64(), 64, 2, false),
        TypeCase::new(d::complex64(), 32, 2, false),
        TypeCase::new(d::complex128(), 64, 2, false),
        // Declared to zarrs as a signed 64-bit component.
        TypeCase::new(
            d::numpy_datetime64(d::NumpyTimeUnit::Second, NonZeroU32::MIN),
            64,
            1,
            true,
        ),
    ];
    for (real, complex) in [
        (d::float8_e3m4(), d::complex_float8_e3m4()),
        (d::float8_e4m3(), d::complex_float8_e4m3()),
        (d::float8_e4m3b11fnuz(), d::complex_float8_e4m3b11fnuz()),
        (d::float8_e4m3fnuz(), d::complex_float8_e4m3fnuz()),
        (d::float8_e5m2(), d::complex_float8_e5m2()),
        (d::float8_e5m2fnuz(), d::complex_float8_e5m2fnuz()),
        (d::float8_e8m0fnu(), d::complex_float8_e8m0fnu()),
    ] {
        cases.push(TypeCase::new(real, 8, 1, false));
        cases.push(TypeCase::new(complex, 8, 2, false));
    }
    cases
}

const PADDINGS: [(PaddingEncoding, PackBitsPaddingEncoding); 3] = [
    (PaddingEncoding::None, PackBitsPaddingEncoding::None),
    (
        PaddingEncoding::FirstByte,
        PackBitsPaddingEncoding::FirstByte,
    ),
    (PaddingEncoding::LastByte, PackBitsPaddingEncoding::LastByte),
];

/// One configuration of one data type, with both codecs.
struct Case {
    ty: TypeCase,
    first: Option<u64>,
    last: Option<u64>,
    ours: Arc<PackBitsCodec>,
    builtin: Arc<Builtin>,
}

impl Case {
    fn first_bit(&self) -> u64 {
        self.first.unwrap_or(0)
    }

    fn last_bit(&self) -> u64 {
        self.last.unwrap_or(self.ty.bits - 1)
    }

    /// zarrs' built-in full decode sign-extends only within the byte that
    /// holds `last_bit` (see `builtin_full_decode_sign_extends_only_within_a_byte`).
    fn builtin_decode_conforms(&self) -> bool {
        !self.ty.signed || self.last_bit() / 8 == self.ty.component_bytes() as u64 - 1
    }

    /// zarrs' built-in partial decoder neither shifts back to `first_bit`
    /// nor sign-extends past `N` bits (see the `builtin_partial_*` tests).
    fn builtin_partial_conforms(&self) -> bool {
        self.first_bit() == 0
            && !(self.ty.signed && self.ty.bits < 8 * self.ty.component_bytes() as u64)
    }

    /// zarrs' built-in writes whole components with a padding encoding as
    /// plain bytes, without the padding byte (see
    /// `builtin_whole_components_omit_the_padding_byte`).
    fn builtin_omits_padding_byte(&self) -> bool {
        self.first_bit() == 0
            && self.last_bit() == self.ty.bits - 1
            && self.ty.bits.is_multiple_of(8)
            && self.ours.padding_encoding() != PaddingEncoding::None
    }

    /// `encoded` (this crate's, per the specification) without its padding byte.
    fn without_padding_byte(&self, encoded: &[u8]) -> Vec<u8> {
        match self.ours.padding_encoding() {
            PaddingEncoding::None => encoded.to_vec(),
            PaddingEncoding::FirstByte => encoded[1..].to_vec(),
            PaddingEncoding::LastByte => encoded[..encoded.len() - 1].to_vec(),
        }
    }

    fn name(&self) -> String {
        format!(
            "{} padding={:?} first_bit={:?} last_bit={:?}",
            self.ty.data_type,
            self.ours.padding_encoding(),
            self.first,
            self.last
        )
    }
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for ty in type_cases() {
        for (first, last) in ty.bit_ranges() {
            for (ours, builtin) in PADDINGS {
                cases.push(Case {
                    ty: ty.clone(),
                    first,
                    last,
                    ours: Arc::new(PackBitsCodec::new(ours, first, last).unwrap()),
                    builtin: Arc::new(Builtin::new(builtin, first, last).unwrap()),
                });
            }
        }
    }
    cases
}

fn fixed(bytes: ArrayBytes<'_>) -> Vec<u8> {
    bytes.into_fixed().unwrap().into_owned()
}

// ---------------------------------------------------------------------------
// Through the codec API
// ---------------------------------------------------------------------------

#[test]
fn codec_api_same_bytes_and_cross_decoding() {
    let options = CodecOptions::default();
    let mut checked = 0;
    for case in cases() {
        let dt = &case.ty.data_type;
        let fill = zero_fill(dt);
        // 91 elements (odd: padding bits) and 1320 (table paths, tails).
        for (dims, seed) in [([7u64, 13], 1u64), ([33, 40], 2)] {
            let name = format!("{} shape {dims:?}", case.name());
            let chunk = nonzero(&dims);
            let n = (dims[0] * dims[1]) as usize;
            let decoded = case.ty.values(n, seed + case.ty.bits);
            let spec = case
                .ty
                .spec_round_trip(&decoded, case.first_bit(), case.last_bit());

            let ours = case
                .ours
                .encode(
                    ArrayBytes::new_flen(decoded.clone()),
                    &chunk,
                    dt,
                    &fill,
                    &options,
                )
                .unwrap()
                .into_owned();
            let builtin = case
                .builtin
                .encode(
                    ArrayBytes::new_flen(decoded.clone()),
                    &chunk,
                    dt,
                    &fill,
                    &options,
                )
                .unwrap()
                .into_owned();
            if case.builtin_omits_padding_byte() {
                // The specification's padding byte (0: whole bytes need no
                // padding bits) is the only difference.
                assert_eq!(case.without_padding_byte(&ours), builtin, "{name}");
                assert_eq!(ours.len(), builtin.len() + 1, "{name}");
                assert!(
                    case.builtin
                        .decode(ours.clone().into(), &chunk, dt, &fill, &options)
                        .is_err(),
                    "{name}"
                );
            } else {
                assert_eq!(ours, builtin, "encoded bytes: {name}");
            }
            assert_eq!(
                case.ours.encoded_representation(&chunk, dt, &fill).unwrap(),
                case.builtin
                    .encoded_representation(&chunk, dt, &fill)
                    .unwrap(),
                "{name}"
            );

            // Ours decodes the built-in's bytes to the specification's values.
            let ours_decoded = fixed(
                case.ours
                    .decode(builtin.clone().into(), &chunk, dt, &fill, &options)
                    .unwrap(),
            );
            assert_eq!(ours_decoded, spec, "ours decoding built-in: {name}");
            // The built-in decodes ours (where it follows the specification).
            if case.builtin_decode_conforms() && !case.builtin_omits_padding_byte() {
                let builtin_decoded = fixed(
                    case.builtin
                        .decode(ours.clone().into(), &chunk, dt, &fill, &options)
                        .unwrap(),
                );
                assert_eq!(builtin_decoded, spec, "built-in decoding ours: {name}");
            }

            // Partial decoding of a block that starts mid-byte.
            let (start, size) = ([2, 3], [3, 8]);
            let subset = ArraySubset::new_with_start_shape(start.to_vec(), size.to_vec()).unwrap();
            let spec_part = common::slice(&spec, &dims, &start, &size, case.ty.element_bytes());
            let ours_partial = case
                .ours
                .clone()
                .partial_decoder(Arc::new(builtin.clone()), &chunk, dt, &fill, &options)
                .unwrap();
            let ours_part = fixed(ours_partial.partial_decode(&subset, &options).unwrap());
            assert_eq!(
                ours_part, spec_part,
                "ours partially decoding built-in: {name}"
            );
            if case.builtin_partial_conforms() && !case.builtin_omits_padding_byte() {
                let builtin_partial = case
                    .builtin
                    .clone()
                    .partial_decoder(Arc::new(ours.clone()), &chunk, dt, &fill, &options)
                    .unwrap();
                let builtin_part =
                    fixed(builtin_partial.partial_decode(&subset, &options).unwrap());
                assert_eq!(
                    builtin_part, spec_part,
                    "built-in partially decoding ours: {name}"
                );
            }
            checked += 1;
        }
    }
    // 37 data types, each with at least 2 bit ranges, 3 paddings, 2 shapes.
    assert!(checked >= 37 * 2 * 3 * 2, "{checked}");
}

#[test]
fn written_configuration_is_what_the_builtin_writes() {
    for case in cases() {
        let metadata = CodecMetadataOptions::default();
        assert_eq!(
            case.ours.configuration(ZarrVersion::V3, &metadata),
            case.builtin.configuration(ZarrVersion::V3, &metadata),
            "{}",
            case.name()
        );
    }
}

// ---------------------------------------------------------------------------
// Through arrays
// ---------------------------------------------------------------------------

/// A 2-D array `[20, 30]` with chunks `[8, 16]` (edge chunks included),
/// optionally sharded into `[4, 8]` subchunks, over `store`, through `codec`.
fn array(
    ty: &TypeCase,
    codec: Arc<dyn ArrayToBytesCodecTraits>,
    sharded: bool,
    store: Arc<MemoryStore>,
) -> Array<MemoryStore> {
    let mut builder = ArrayBuilder::new(
        vec![20, 30],
        vec![8, 16],
        ty.data_type.clone(),
        zero_fill(&ty.data_type),
    );
    if sharded {
        let sharding = ShardingCodecBuilder::new(nonzero(&[4, 8]), &ty.data_type)
            .array_to_bytes_codec(codec)
            .build_arc();
        builder.array_to_bytes_codec(sharding);
    } else {
        builder.array_to_bytes_codec(codec);
    }
    builder.codec_specific_options(common::c_order());
    builder.build(store, "/").unwrap()
}

/// Write `decoded` (the whole array) into a new store through `codec`.
fn write_array(
    ty: &TypeCase,
    codec: Arc<dyn ArrayToBytesCodecTraits>,
    sharded: bool,
    decoded: &[u8],
) -> (Arc<MemoryStore>, Array<MemoryStore>) {
    let store = Arc::new(MemoryStore::new());
    let array = array(ty, codec, sharded, store.clone());
    array.store_metadata().unwrap();
    array
        .store_array_subset(&array.subset_all(), ArrayBytes::new_flen(decoded.to_vec()))
        .unwrap();
    (store, array)
}

/// Every key of a store with its bytes (`zarr.json` parsed as JSON).
fn contents(store: &MemoryStore) -> Vec<(String, Vec<u8>)> {
    common::store_contents(store)
        .into_iter()
        .map(|(key, bytes)| {
            if key.ends_with("zarr.json") {
                let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                (key, serde_json::to_vec(&json).unwrap())
            } else {
                (key, bytes)
            }
        })
        .collect()
}

fn read_all(array: &Array<MemoryStore>) -> Vec<u8> {
    fixed(
        array
            .retrieve_array_subset::<ArrayBytes<'static>>(&array.subset_all())
            .unwrap(),
    )
}

#[test]
fn arrays_identical_stores_and_cross_reading() {
    for sharded in [false, true] {
        for case in cases() {
            let name = format!("{} sharded={sharded}", case.name());
            let decoded = case.ty.values(600, 3 + case.ty.bits);
            let spec = case
                .ty
                .spec_round_trip(&decoded, case.first_bit(), case.last_bit());
            let (ours_store, _) = write_array(&case.ty, case.ours.clone(), sharded, &decoded);
            let (builtin_store, _) = write_array(&case.ty, case.builtin.clone(), sharded, &decoded);
            if !case.builtin_omits_padding_byte() {
                assert_eq!(
                    contents(&ours_store),
                    contents(&builtin_store),
                    "stores: {name}"
                );
            }

            // Read each store through an array with the other codec.
            let ours_reader = array(&case.ty, case.ours.clone(), sharded, builtin_store.clone());
            assert_eq!(
                read_all(&ours_reader),
                spec,
                "ours reading built-in: {name}"
            );
            let builtin_reader = array(&case.ty, case.builtin.clone(), sharded, ours_store.clone());
            // Whole chunks are decoded fully, the edge chunks (and sharded
            // inner chunks) through the partial decoder.
            let conforms = case.builtin_decode_conforms()
                && case.builtin_partial_conforms()
                && !case.builtin_omits_padding_byte();
            if conforms {
                assert_eq!(
                    read_all(&builtin_reader),
                    spec,
                    "built-in reading ours: {name}"
                );
            }
        }
    }
}

#[test]
fn array_written_by_this_crate_opens_with_the_builtin() {
    // Configured in the original spelling; written in the current one.
    let ours = PackBitsCodec::new_with_json(&serde_json::json!({
        "padding_encoding": "start_byte",
        "start_bit": 1,
        "end_bit": 3
    }))
    .unwrap();
    let ty = TypeCase::new(data_type::int4(), 4, 1, true);
    let decoded = ty.values(600, 11);
    let (store, _) = write_array(&ty, Arc::new(ours), false, &decoded);

    let zarr_json: serde_json::Value = serde_json::from_slice(
        &store
            .get(&StoreKey::new("zarr.json").unwrap())
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        zarr_json["codecs"][0],
        serde_json::json!({
            "name": "packbits",
            "configuration": {"padding_encoding": "first_byte", "first_bit": 1, "last_bit": 3}
        })
    );

    let array = Array::open(store, "/").unwrap();
    let codecs = array.codecs();
    assert!(
        codecs.array_to_bytes_codec().as_any().is::<Builtin>(),
        "opened with the built-in"
    );
    // Bits 1..=3 kept. Whole chunks (the built-in's full decode follows the
    // spec here) rather than the edge chunks (its partial decoder does not).
    let whole_chunks = ArraySubset::new_with_ranges(&[0..16, 0..16]);
    let got = fixed(
        array
            .retrieve_array_subset::<ArrayBytes<'static>>(&whole_chunks)
            .unwrap(),
    );
    let spec = ty.spec_round_trip(&decoded, 1, 3);
    assert_eq!(got, common::slice(&spec, &[20, 30], &[0, 0], &[16, 16], 1));
}

// ---------------------------------------------------------------------------
// The built-in's departures from the specification, stated
// ---------------------------------------------------------------------------

fn i8s(values: &[i8]) -> Vec<u8> {
    values.iter().map(|&v| v as u8).collect()
}

/// All `n` elements of `encoded` through `codec`'s partial decoder.
fn partial<C: ArrayToBytesCodecTraits>(
    codec: C,
    data_type: &DataType,
    encoded: Vec<u8>,
    n: u64,
) -> Vec<u8> {
    let options = CodecOptions::default();
    fixed(
        Arc::new(codec)
            .partial_decoder(
                Arc::new(encoded),
                &nonzero(&[n]),
                data_type,
                &zero_fill(data_type),
                &options,
            )
            .unwrap()
            .partial_decode(&ArraySubset::new_with_shape(vec![n]), &options)
            .unwrap(),
    )
}

#[test]
fn builtin_refuses_start_byte_end_byte_start_bit_end_bit() {
    for configuration in [
        serde_json::json!({"padding_encoding": "start_byte"}),
        serde_json::json!({"padding_encoding": "end_byte"}),
        serde_json::json!({"start_bit": 1}),
        serde_json::json!({"end_bit": 2}),
    ] {
        let metadata: MetadataV3 = serde_json::from_value(
            serde_json::json!({"name": "packbits", "configuration": configuration}),
        )
        .unwrap();
        assert!(
            <Builtin as CodecTraitsV3>::create(&metadata).is_err(),
            "built-in accepts {configuration}"
        );
        // The spec (original text, published schema) allows them; so do we.
        assert!(
            <PackBitsCodec as CodecTraitsV3>::create(&metadata).is_ok(),
            "{configuration}"
        );
    }
}

#[test]
fn builtin_partial_decode_does_not_sign_extend_int2_int4() {
    // int4 [-8, -1, 0, 7] packs to nibbles 8, F, 0, 7 = bytes F8 70. The spec
    // sign-extends on decode: zarrs holds int4 as i8, so -8 is 0xF8. The
    // built-in's partial decoder extends only to N = 4 bits: 0x08 = 8.
    let int4 = data_type::int4();
    let encoded = vec![0xF8, 0x70];
    let spec = i8s(&[-8, -1, 0, 7]);
    assert_eq!(
        partial(Builtin::default(), &int4, encoded.clone(), 4),
        [8, 15, 0, 7]
    );
    assert_eq!(partial(PackBitsCodec::default(), &int4, encoded, 4), spec);
    // int2 [-2, -1, 0, 1] = 0x4E: the built-in reads 2, 3, 0, 1.
    let int2 = data_type::int2();
    assert_eq!(
        partial(Builtin::default(), &int2, vec![0x4E], 4),
        [2, 3, 0, 1]
    );
    assert_eq!(
        partial(PackBitsCodec::default(), &int2, vec![0x4E], 4),
        i8s(&[-2, -1, 0, 1])
    );
}

#[test]
fn builtin_partial_decode_does_not_shift_back_to_first_bit() {
    // uint16 0xABCD with bits 4..=11: field 0xBC. The spec decodes it at
    // bit 4: 0x0BC0. The built-in's partial decoder leaves it at bit 0.
    let uint16 = data_type::uint16();
    let builtin = Builtin::new(PackBitsPaddingEncoding::None, Some(4), Some(11)).unwrap();
    let ours = PackBitsCodec::new(PaddingEncoding::None, Some(4), Some(11)).unwrap();
    assert_eq!(
        partial(builtin, &uint16, vec![0xBC], 1),
        0x00BCu16.to_ne_bytes()
    );
    assert_eq!(
        partial(ours, &uint16, vec![0xBC], 1),
        0x0BC0u16.to_ne_bytes()
    );
    // int4 with bits 1..=2: [6, -3] packs to 11, 10 = 0x0B; the spec gives
    // 0b110 -> -2 and 0b100 -> -4; the built-in sign-extends the unshifted
    // 2-bit field: 0b11 -> 0x0F, 0b10 -> 0x0E.
    let int4 = data_type::int4();
    let builtin = Builtin::new(PackBitsPaddingEncoding::None, Some(1), Some(2)).unwrap();
    let ours = PackBitsCodec::new(PaddingEncoding::None, Some(1), Some(2)).unwrap();
    assert_eq!(partial(builtin, &int4, vec![0x0B], 2), [0x0F, 0x0E]);
    assert_eq!(partial(ours, &int4, vec![0x0B], 2), i8s(&[-2, -4]));
}

#[test]
fn builtin_full_decode_sign_extends_only_within_a_byte() {
    // int32 [-5, 7] with last_bit = 11: fields 0xFFB, 0x007 -> FB 7F 00.
    // The spec sign-extends bit 11 to all 32 bits: -5. The built-in's full
    // decode fills only bits 12..15: 0x0000FFFB = 65531.
    let int32 = data_type::int32();
    let options = CodecOptions::default();
    let chunk = nonzero(&[2]);
    let fill = zero_fill(&int32);
    let builtin = Builtin::new(PackBitsPaddingEncoding::None, None, Some(11)).unwrap();
    let ours = PackBitsCodec::new(PaddingEncoding::None, None, Some(11)).unwrap();
    let encoded = vec![0xFB, 0x7F, 0x00];
    let as_i32 = |bytes: Vec<u8>| -> Vec<i32> {
        bytes
            .chunks_exact(4)
            .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    };
    let builtin_values = as_i32(fixed(
        builtin
            .decode(encoded.clone().into(), &chunk, &int32, &fill, &options)
            .unwrap(),
    ));
    let ours_values = as_i32(fixed(
        ours.decode(encoded.into(), &chunk, &int32, &fill, &options)
            .unwrap(),
    ));
    assert_eq!(builtin_values, [65531, 7]);
    assert_eq!(ours_values, [-5, 7]);
}

#[test]
fn builtin_array_subset_reads_int4_without_sign_extension() {
    // What the partial-decoder departure means for a user: reading part of a
    // chunk of an int4 array through the built-in loses the sign, reading
    // the whole chunk does not. This crate gives the written values both ways.
    let ty = TypeCase::new(data_type::int4(), 4, 1, true);
    let decoded = ty.values(600, 5);
    let (store, ours_array) = write_array(&ty, Arc::new(PackBitsCodec::default()), false, &decoded);
    let builtin_array = Array::open(store, "/").unwrap();
    let subset = ArraySubset::new_with_ranges(&[1..3, 2..5]);
    let written = common::slice(&decoded, &[20, 30], &[1, 2], &[2, 3], 1);
    let ours: Vec<i8> = ours_array.retrieve_array_subset(&subset).unwrap();
    let builtin: Vec<i8> = builtin_array.retrieve_array_subset(&subset).unwrap();
    let written: Vec<i8> = written.iter().map(|&b| b as i8).collect();
    assert_eq!(ours, written);
    assert!(
        written.iter().any(|&v| v < 0),
        "the data has negative values"
    );
    let unsigned: Vec<i8> = written.iter().map(|&v| v & 0x0F).collect();
    assert_eq!(builtin, unsigned);
    let whole_chunks = ArraySubset::new_with_ranges(&[0..16, 0..16]);
    let got = fixed(
        builtin_array
            .retrieve_array_subset::<ArrayBytes<'static>>(&whole_chunks)
            .unwrap(),
    );
    assert_eq!(
        got,
        common::slice(&decoded, &[20, 30], &[0, 0], &[16, 16], 1),
        "whole chunks keep the sign"
    );
}

#[test]
fn builtin_whole_components_omit_the_padding_byte() {
    // float32 [1.5] with "first_byte": 32 bits, no padding bits, so the
    // specification prepends a byte 0: 00 | 00 00 C0 3F. The built-in
    // writes the bare little-endian bytes, though its encoded_representation
    // counts the byte. This crate writes the spec's form and reads both.
    let float32 = data_type::float32();
    let options = CodecOptions::default();
    let chunk = nonzero(&[1]);
    let fill = zero_fill(&float32);
    let builtin = Builtin::new(PackBitsPaddingEncoding::FirstByte, None, None).unwrap();
    let ours = PackBitsCodec::new(PaddingEncoding::FirstByte, None, None).unwrap();
    let value = ArrayBytes::new_flen(1.5f32.to_ne_bytes().to_vec());
    let builtin_bytes = builtin
        .encode(value.clone(), &chunk, &float32, &fill, &options)
        .unwrap();
    let ours_bytes = ours
        .encode(value, &chunk, &float32, &fill, &options)
        .unwrap();
    assert_eq!(builtin_bytes.as_ref(), [0x00, 0x00, 0xC0, 0x3F]);
    assert_eq!(ours_bytes.as_ref(), [0x00, 0x00, 0x00, 0xC0, 0x3F]);
    assert_eq!(
        builtin
            .encoded_representation(&chunk, &float32, &fill)
            .unwrap(),
        zarrs::array::codec::api::BytesRepresentation::FixedSize(5)
    );
    for bytes in [builtin_bytes.clone(), ours_bytes.clone()] {
        let decoded = fixed(
            ours.decode(bytes, &chunk, &float32, &fill, &options)
                .unwrap(),
        );
        assert_eq!(decoded, 1.5f32.to_ne_bytes());
    }
    assert!(
        builtin
            .decode(ours_bytes, &chunk, &float32, &fill, &options)
            .is_err()
    );
}
