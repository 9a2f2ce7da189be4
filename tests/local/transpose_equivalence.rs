//! This crate's `transpose` codec against zarrs' built-in `transpose` codec.
//!
//! For every data type and permutation both support: this crate's encoding
//! equals the built-in's byte for byte, and each decodes the other's output
//! to the same values, through the codec API and through whole arrays (plain
//! and inside `sharding_indexed`, with partial reads). The arrays are built
//! from explicit codec objects, so these tests do not depend on which codec
//! the registry would pick; only `register_overrides_reads_f_order_metadata`
//! touches the registry.
//!
//! Where the built-in departs from the specification, the specification
//! wins and a test below states the difference:
//! - `"order": "C"` / `"order": "F"` (transpose v1.0): the built-in refuses
//!   them; this crate reads them as the identity / the reversed axes.

use crate::common;

use common::nonzero;
use std::sync::Arc;

use common::store_contents;
use serde_json::json;
use zarrs::array::codec::api::{
    ArrayToArrayCodecTraits, ArrayToBytesCodecTraits, Codec, CodecMetadataOptions, CodecOptions,
    CodecTraitsV3,
};
use zarrs::array::codec::{
    TransposeCodec as BuiltinTranspose, TransposeCodecConfiguration as BuiltinConfiguration,
    TransposeOrder as BuiltinOrder,
};
use zarrs::array::{Array, ArrayBuilder, ArrayBytes, ArraySubset, DataType, FillValue, data_type};
use zarrs::metadata::v3::MetadataV3;
use zarrs::storage::store::MemoryStore;
use zarrs_extension_codecs::codec::transpose::{TransposeCodec as OurTranspose, TransposeOrder};
use zarrs_extension_codecs::codec::vlen::{
    VlenCodec as OurVlen, VlenCodecConfiguration as OurVlenConfiguration,
};

// --- test data ------------------------------------------------------------

/// splitmix64, so that every run sees the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The data types: transposition moves whole elements, so one of each
/// element size and kind is enough (any bit pattern is a valid element).
fn data_types() -> Vec<DataType> {
    vec![
        data_type::uint8(),
        data_type::int16(),
        data_type::float32(),
        data_type::float64(),
        data_type::complex64(),
        data_type::complex128(),
        data_type::string(),
    ]
}

/// `n` elements of `data_type`, each as its own bytes (strings of 0 to 6
/// ASCII letters for `string`).
fn elements(data_type: &DataType, n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| match data_type.fixed_size() {
            Some(size) => (0..size).map(|_| rng.next() as u8).collect(),
            None => {
                let len = (rng.next() % 7) as usize;
                (0..len).map(|_| b'a' + (rng.next() % 26) as u8).collect()
            }
        })
        .collect()
}

/// Elements as [`ArrayBytes`].
fn to_bytes(data_type: &DataType, elements: &[Vec<u8>]) -> ArrayBytes<'static> {
    let bytes = elements.concat();
    if data_type.fixed_size().is_some() {
        ArrayBytes::new_flen(bytes)
    } else {
        let mut offsets = vec![0];
        for e in elements {
            offsets.push(offsets.last().unwrap() + e.len());
        }
        ArrayBytes::new_vlen(bytes, offsets.try_into().unwrap()).unwrap()
    }
}

/// [`ArrayBytes`] as elements.
fn from_bytes(data_type: &DataType, bytes: ArrayBytes<'_>) -> Vec<Vec<u8>> {
    match data_type.fixed_size() {
        Some(size) => bytes
            .into_fixed()
            .unwrap()
            .chunks_exact(size)
            .map(<[u8]>::to_vec)
            .collect(),
        None => {
            let variable = bytes.into_variable().unwrap();
            variable
                .offsets()
                .windows(2)
                .map(|w| variable.bytes()[w[0]..w[1]].to_vec())
                .collect()
        }
    }
}

fn fill(data_type: &DataType) -> FillValue {
    match data_type.fixed_size() {
        Some(size) => FillValue::new(vec![0; size]),
        None => FillValue::from(""),
    }
}

/// Every permutation of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut all = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, n - 1);
            all.push(q);
        }
    }
    all
}

fn ours(order: &[usize]) -> Arc<dyn ArrayToArrayCodecTraits> {
    Arc::new(OurTranspose::new(order.to_vec()).unwrap())
}

fn builtin(order: &[usize]) -> Arc<dyn ArrayToArrayCodecTraits> {
    Arc::new(BuiltinTranspose::new(BuiltinOrder::new(order).unwrap()))
}

fn encode(
    codec: &dyn ArrayToArrayCodecTraits,
    dt: &DataType,
    dims: &[u64],
    data: &[Vec<u8>],
) -> Vec<Vec<u8>> {
    let encoded = codec
        .encode(
            to_bytes(dt, data),
            &nonzero(dims),
            dt,
            &fill(dt),
            &CodecOptions::default(),
        )
        .unwrap();
    from_bytes(dt, encoded)
}

fn decode(
    codec: &dyn ArrayToArrayCodecTraits,
    dt: &DataType,
    dims: &[u64],
    data: &[Vec<u8>],
) -> Vec<Vec<u8>> {
    let decoded = codec
        .decode(
            to_bytes(dt, data),
            &nonzero(dims),
            dt,
            &fill(dt),
            &CodecOptions::default(),
        )
        .unwrap();
    from_bytes(dt, decoded)
}

// --- the codec API ----------------------------------------------------------

#[test]
fn codec_api_encodings_are_identical_and_cross_decode() {
    for dims in [
        &[4u64, 5][..],
        &[3, 4, 5],
        &[2, 3, 4, 5],
        &[1, 6],
        &[3, 1, 4],
    ] {
        let n = dims.iter().product::<u64>() as usize;
        for dt in data_types() {
            let data = elements(&dt, n, n as u64);
            for order in permutations(dims.len()) {
                let what = format!("{dt} {dims:?} order {order:?}");
                let (ours, builtin) = (ours(&order), builtin(&order));
                let by_ours = encode(&*ours, &dt, dims, &data);
                let by_builtin = encode(&*builtin, &dt, dims, &data);
                assert_eq!(by_ours, by_builtin, "{what}");
                assert_eq!(decode(&*ours, &dt, dims, &by_builtin), data, "{what}");
                assert_eq!(decode(&*builtin, &dt, dims, &by_ours), data, "{what}");
                let encoded_shape = ours.encoded_shape(&nonzero(dims)).unwrap();
                assert_eq!(
                    encoded_shape,
                    builtin.encoded_shape(&nonzero(dims)).unwrap(),
                    "{what}"
                );
                assert_eq!(
                    ours.decoded_shape(&encoded_shape).unwrap(),
                    builtin.decoded_shape(&encoded_shape).unwrap(),
                    "{what}"
                );
            }
        }
    }
}

#[test]
fn both_write_the_same_configuration() {
    for order in [vec![1, 0], vec![2, 0, 1], vec![3, 1, 0, 2]] {
        let options = CodecMetadataOptions::default();
        let version = zarrs::plugin::ZarrVersion::V3;
        assert_eq!(
            ours(&order).configuration(version, &options),
            builtin(&order).configuration(version, &options)
        );
    }
}

// --- "C" and "F" -------------------------------------------------------------

fn metadata(order: serde_json::Value) -> MetadataV3 {
    serde_json::from_value(json!({"name": "transpose", "configuration": {"order": order}})).unwrap()
}

fn array_to_array(codec: Codec) -> Arc<dyn ArrayToArrayCodecTraits> {
    match codec {
        Codec::ArrayToArray(codec) => codec,
        _ => panic!("not an array to array codec"),
    }
}

#[test]
fn spec_departure_c_and_f_orders() {
    // The built-in refuses the v1.0 strings...
    for order in ["C", "F"] {
        assert!(
            BuiltinTranspose::create(&metadata(json!(order))).is_err(),
            "{order}"
        );
        assert!(serde_json::from_value::<BuiltinConfiguration>(json!({"order": order})).is_err());
    }
    // ...which this crate reads as the identity and the reversed axes.
    let c = array_to_array(OurTranspose::create(&metadata(json!("C"))).unwrap());
    let f = array_to_array(OurTranspose::create(&metadata(json!("F"))).unwrap());
    for dims in [&[4u64, 5][..], &[3, 4, 5], &[2, 3, 4, 5]] {
        let n = dims.iter().product::<u64>() as usize;
        let identity: Vec<usize> = (0..dims.len()).collect();
        let reversed: Vec<usize> = (0..dims.len()).rev().collect();
        for dt in data_types() {
            let data = elements(&dt, n, 7);
            let what = format!("{dt} {dims:?}");
            assert_eq!(encode(&*c, &dt, dims, &data), data, "{what}");
            assert_eq!(
                encode(&*c, &dt, dims, &data),
                encode(&*builtin(&identity), &dt, dims, &data),
                "{what}"
            );
            let by_f = encode(&*f, &dt, dims, &data);
            assert_eq!(
                by_f,
                encode(&*builtin(&reversed), &dt, dims, &data),
                "{what}"
            );
            assert_eq!(
                decode(&*builtin(&reversed), &dt, dims, &by_f),
                data,
                "{what}"
            );
            assert_eq!(decode(&*f, &dt, dims, &by_f), data, "{what}");
        }
    }
}

// --- whole arrays -----------------------------------------------------------

/// An array shape, its chunk (or shard) shape, and the subchunk shape used
/// when sharded.
struct Layout {
    shape: Vec<u64>,
    chunk: Vec<u64>,
    shard: Vec<u64>,
}

fn layouts() -> Vec<(Layout, Vec<Vec<usize>>)> {
    vec![
        (
            Layout {
                shape: vec![13, 7],
                chunk: vec![4, 4],
                shard: vec![8, 8],
            },
            vec![vec![1, 0]],
        ),
        (
            Layout {
                shape: vec![9, 6, 5],
                chunk: vec![4, 3, 5],
                shard: vec![8, 6, 5],
            },
            permutations(3),
        ),
        (
            Layout {
                shape: vec![5, 4, 3, 6],
                chunk: vec![3, 2, 3, 4],
                shard: vec![6, 4, 3, 8],
            },
            vec![vec![3, 1, 0, 2], vec![1, 0, 3, 2], vec![3, 2, 1, 0]],
        ),
    ]
}

/// An array on `store` with `codec` (inside the shards if `sharded`).
fn array(
    store: &Arc<MemoryStore>,
    dt: &DataType,
    layout: &Layout,
    codec: Arc<dyn ArrayToArrayCodecTraits>,
    sharded: bool,
) -> Array<MemoryStore> {
    let chunk = if sharded {
        &layout.shard
    } else {
        &layout.chunk
    };
    let mut builder = ArrayBuilder::new(layout.shape.clone(), chunk.clone(), dt.clone(), fill(dt));
    builder.array_to_array_codecs(vec![codec]);
    if sharded {
        builder.subchunk_shape(layout.chunk.clone());
    }
    builder.codec_specific_options(common::c_order());
    builder.build(store.clone(), "/").unwrap()
}

fn read(array: &Array<MemoryStore>, subset: &ArraySubset) -> Vec<Vec<u8>> {
    let bytes: ArrayBytes<'static> = array.retrieve_array_subset(subset).unwrap();
    from_bytes(array.data_type(), bytes)
}

/// The elements of `subset` of the C-order array `data` of `shape`, with
/// the fill value (all zero bytes, or the empty string) outside the array.
fn slice(data: &[Vec<u8>], shape: &[u64], subset: &ArraySubset, fill: &[u8]) -> Vec<Vec<u8>> {
    subset
        .indices()
        .into_iter()
        .map(|index| {
            if index.iter().zip(shape).any(|(&i, &d)| i >= d) {
                return fill.to_vec();
            }
            let linear = index.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i);
            data[linear as usize].clone()
        })
        .collect()
}

/// Check every chunk (or shard), decoded whole.
fn check_chunks(array: &Array<MemoryStore>, data: &[Vec<u8>], what: &str) {
    let fill = array.fill_value().as_ne_bytes().to_vec();
    let grid = ArraySubset::new_with_shape(array.chunk_grid_shape().to_vec());
    for chunk in grid.indices() {
        let bytes: ArrayBytes<'static> = array.retrieve_chunk(&chunk).unwrap();
        let expected = slice(
            data,
            array.shape(),
            &array.chunk_subset(&chunk).unwrap(),
            &fill,
        );
        assert_eq!(
            from_bytes(array.data_type(), bytes),
            expected,
            "{what} chunk {chunk:?}"
        );
    }
}

/// The whole array, a region across chunk boundaries, and one element.
fn subsets(shape: &[u64]) -> Vec<ArraySubset> {
    let all: Vec<_> = shape.iter().map(|&d| 0..d).collect();
    let middle: Vec<_> = shape.iter().map(|&d| 1..d - 1).collect();
    let one: Vec<_> = shape.iter().map(|&d| d / 2..d / 2 + 1).collect();
    vec![
        ArraySubset::new_with_ranges(&all),
        ArraySubset::new_with_ranges(&middle),
        ArraySubset::new_with_ranges(&one),
    ]
}

#[test]
fn whole_arrays_are_identical_and_cross_read() {
    for (layout, orders) in layouts() {
        let n = layout.shape.iter().product::<u64>() as usize;
        for dt in data_types() {
            let data = elements(&dt, n, 0xa11);
            for order in &orders {
                for sharded in [false, true] {
                    let what = format!("{dt} {:?} order {order:?} sharded {sharded}", layout.shape);
                    let (store_ours, store_builtin) =
                        (Arc::new(MemoryStore::new()), Arc::new(MemoryStore::new()));
                    let written_by_ours = array(&store_ours, &dt, &layout, ours(order), sharded);
                    let written_by_builtin =
                        array(&store_builtin, &dt, &layout, builtin(order), sharded);
                    let all = written_by_ours.subset_all();
                    written_by_ours
                        .store_array_subset(&all, to_bytes(&dt, &data))
                        .unwrap();
                    written_by_builtin
                        .store_array_subset(&all, to_bytes(&dt, &data))
                        .unwrap();
                    let (by_ours, by_builtin) =
                        (store_contents(&store_ours), store_contents(&store_builtin));
                    assert!(!by_ours.is_empty(), "{what}");
                    assert_eq!(by_ours, by_builtin, "{what}: stored chunks differ");
                    // Each reads what the other wrote, whole and in part.
                    let ours_reading_builtin =
                        array(&store_builtin, &dt, &layout, ours(order), sharded);
                    let builtin_reading_ours =
                        array(&store_ours, &dt, &layout, builtin(order), sharded);
                    check_chunks(&ours_reading_builtin, &data, &what);
                    check_chunks(&builtin_reading_ours, &data, &what);
                    if dt.is_variable() {
                        // See `variable_length_partial_reads`.
                        continue;
                    }
                    for subset in subsets(&layout.shape) {
                        let expected = slice(&data, &layout.shape, &subset, &[]);
                        assert_eq!(
                            read(&ours_reading_builtin, &subset),
                            expected,
                            "{what} {subset:?}"
                        );
                        assert_eq!(
                            read(&builtin_reading_ours, &subset),
                            expected,
                            "{what} {subset:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn f_order_arrays_match_the_builtin_with_reversed_axes() {
    let layout = Layout {
        shape: vec![9, 6, 5],
        chunk: vec![4, 3, 5],
        shard: vec![8, 6, 5],
    };
    let f = || array_to_array(OurTranspose::create(&metadata(json!("F"))).unwrap());
    for dt in [data_type::float32(), data_type::string()] {
        let data = elements(&dt, 270, 3);
        for sharded in [false, true] {
            let (store_ours, store_builtin) =
                (Arc::new(MemoryStore::new()), Arc::new(MemoryStore::new()));
            let by_ours = array(&store_ours, &dt, &layout, f(), sharded);
            let by_builtin = array(&store_builtin, &dt, &layout, builtin(&[2, 1, 0]), sharded);
            by_ours
                .store_array_subset(&by_ours.subset_all(), to_bytes(&dt, &data))
                .unwrap();
            by_builtin
                .store_array_subset(&by_builtin.subset_all(), to_bytes(&dt, &data))
                .unwrap();
            assert_eq!(
                store_contents(&store_ours),
                store_contents(&store_builtin),
                "{dt} sharded {sharded}"
            );
            check_chunks(&by_ours, &data, &format!("{dt} sharded {sharded}"));
            if dt.is_fixed() {
                for subset in subsets(&layout.shape) {
                    let expected = slice(&data, &layout.shape, &subset, &[]);
                    assert_eq!(read(&by_ours, &subset), expected);
                }
            }
        }
    }
}

/// zarrs 0.23.14's own variable-length codecs (`vlen-utf8`, `vlen-bytes`,
/// `zarrs.vlen`) cannot decode partially, and zarrs' codec chain then caches
/// the decoded chunk in front of the array->array codecs with the shape of
/// the wrong side of them: a partial read of a transposed string array fails
/// with `OutOfBounds` in zarrs, with the built-in `transpose` as with this
/// one. This crate's `zarrs.vlen` reads partially, so with it partial reads of
/// transposed strings work with both `transpose` codecs, and are compared
/// here.
#[test]
fn variable_length_partial_reads() {
    let vlen = json!({
        "data_codecs": [{"name": "bytes"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_data_type": "uint64"
    });
    let vlen = OurVlenConfiguration::parse(&serde_json::from_value(vlen).unwrap()).unwrap();
    let array_to_bytes = || -> Arc<dyn ArrayToBytesCodecTraits> {
        Arc::new(OurVlen::new_with_configuration(&vlen).unwrap())
    };
    let dt = data_type::string();
    for (layout, orders) in layouts() {
        let n = layout.shape.iter().product::<u64>() as usize;
        let data = elements(&dt, n, 0xb0b);
        for order in orders.iter().take(2) {
            for sharded in [false, true] {
                let what = format!("{:?} order {order:?} sharded {sharded}", layout.shape);
                let make = |store: &Arc<MemoryStore>, codec| {
                    let chunk = if sharded {
                        &layout.shard
                    } else {
                        &layout.chunk
                    };
                    let mut builder = ArrayBuilder::new(
                        layout.shape.clone(),
                        chunk.clone(),
                        dt.clone(),
                        fill(&dt),
                    );
                    builder
                        .array_to_array_codecs(vec![codec])
                        .array_to_bytes_codec(array_to_bytes());
                    if sharded {
                        builder.subchunk_shape(layout.chunk.clone());
                    }
                    builder.codec_specific_options(common::c_order());
                    builder.build(store.clone(), "/").unwrap()
                };
                let (store_ours, store_builtin) =
                    (Arc::new(MemoryStore::new()), Arc::new(MemoryStore::new()));
                let by_ours = make(&store_ours, ours(order));
                let by_builtin = make(&store_builtin, builtin(order));
                by_ours
                    .store_array_subset(&by_ours.subset_all(), to_bytes(&dt, &data))
                    .unwrap();
                by_builtin
                    .store_array_subset(&by_builtin.subset_all(), to_bytes(&dt, &data))
                    .unwrap();
                assert_eq!(
                    store_contents(&store_ours),
                    store_contents(&store_builtin),
                    "{what}"
                );
                let ours_reading_builtin = make(&store_builtin, ours(order));
                let builtin_reading_ours = make(&store_ours, builtin(order));
                for subset in subsets(&layout.shape) {
                    let expected = slice(&data, &layout.shape, &subset, &[]);
                    assert_eq!(read(&ours_reading_builtin, &subset), expected, "{what}");
                    assert_eq!(read(&builtin_reading_ours, &subset), expected, "{what}");
                }
            }
        }
    }
}

// --- register_overrides ----------------------------------------------------

#[test]
fn register_overrides_reads_f_order_metadata() {
    // A 4 x 6 uint16 array, one chunk, with A[i, j] = 100 * i + j, written by
    // hand: "F" on a 2-D chunk is the permutation [1, 0], so the stored chunk
    // is A transposed (shape 6 x 4, C order): B[j, i] = A[i, j], little
    // endian.
    let dir = tempfile::tempdir().unwrap();
    let zarr_json = json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": [4, 6],
        "data_type": "uint16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 6]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [
            {"name": "transpose", "configuration": {"order": "F"}},
            {"name": "bytes", "configuration": {"endian": "little"}}
        ]
    });
    std::fs::write(
        dir.path().join("zarr.json"),
        serde_json::to_vec_pretty(&zarr_json).unwrap(),
    )
    .unwrap();
    let mut chunk = Vec::new();
    for j in 0..6u16 {
        for i in 0..4u16 {
            chunk.extend_from_slice(&(100 * i + j).to_le_bytes());
        }
    }
    std::fs::create_dir_all(dir.path().join("c/0")).unwrap();
    std::fs::write(dir.path().join("c/0/0"), chunk).unwrap();

    zarrs_extension_codecs::register_overrides();
    let store = Arc::new(zarrs::filesystem::FilesystemStore::new(dir.path()).unwrap());
    let array = Array::open(store, "/").unwrap();
    // The registry created this crate's codec, not the built-in.
    let codecs = array.codecs();
    let codec = &codecs.array_to_array_codecs()[0];
    let codec = codec
        .as_any()
        .downcast_ref::<OurTranspose>()
        .expect("this crate's codec");
    assert_eq!(codec.order(), &TransposeOrder::F);

    let values: Vec<u16> = array.retrieve_array_subset(&array.subset_all()).unwrap();
    let expected: Vec<u16> = (0..4u16)
        .flat_map(|i| (0..6u16).map(move |j| 100 * i + j))
        .collect();
    assert_eq!(values, expected);
    let part: Vec<u16> = array
        .retrieve_array_subset(&ArraySubset::new_with_ranges(&[1..3, 2..5]))
        .unwrap();
    assert_eq!(part, [102, 103, 104, 202, 203, 204]);

    // Having met the chunk shape, the codec writes the explicit permutation,
    // which the built-in (and zarr-python) can read.
    let rebuilt = array.builder().build_metadata().unwrap();
    let written = serde_json::to_value(&rebuilt.codecs[0]).unwrap();
    assert_eq!(
        written,
        json!({"name": "transpose", "configuration": {"order": [1, 0]}})
    );
    assert!(BuiltinTranspose::create(&rebuilt.codecs[0]).is_ok());
}
