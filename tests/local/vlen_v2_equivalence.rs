//! `vlen-utf8` / `vlen-bytes`: this crate's codecs against zarrs' built-in
//! `VlenUtf8Codec` / `VlenBytesCodec`.
//!
//! On random strings and byte strings (empty ones included): the same
//! encoded bytes, each decodes the other's chunks to the same values, the
//! same configuration metadata; through the codec API and through whole
//! arrays (also inside `sharding_indexed`). Where the two differ on purpose
//! (corrupt chunks), a test below says how.

use crate::common;

use common::nonzero;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use zarrs::array::codec::api::{
    ArrayBytes, ArrayBytesOffsets, ArrayToBytesCodecTraits, CodecMetadataOptions, CodecOptions,
};
use zarrs::array::codec::{ShardingCodecBuilder, VlenBytesCodec, VlenUtf8Codec};
use zarrs::array::{Array, ArrayBuilder, ArraySubset, DataType, FillValue, data_type};
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::ExtensionName;
use zarrs::storage::store::MemoryStore;
use zarrs_extension_codecs::codec::vlen_v2::{VlenV2Codec, VlenV2Kind};

use common::{Rng, vlen};

const CHARS: [char; 10] = ['a', 'Z', '0', ' ', 'é', 'ß', '日', '本', '😀', '\u{0}'];

fn random_string(rng: &mut Rng) -> String {
    // About one in five empty.
    let len = if rng.below(5) == 0 { 0 } else { rng.below(20) };
    (0..len)
        .map(|_| CHARS[rng.below(CHARS.len() as u64) as usize])
        .collect()
}

fn random_bytes(rng: &mut Rng) -> Vec<u8> {
    let len = if rng.below(5) == 0 { 0 } else { rng.below(20) };
    (0..len).map(|_| rng.next() as u8).collect()
}

/// The two codecs (ours, zarrs'), the data type each is made for, its fill
/// value, and random element values of it.
struct Case {
    kind: VlenV2Kind,
    builtin: Arc<dyn ArrayToBytesCodecTraits>,
    data_type: DataType,
    fill: FillValue,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            kind: VlenV2Kind::Utf8,
            builtin: Arc::new(VlenUtf8Codec::new()),
            data_type: data_type::string(),
            fill: FillValue::from(""),
        },
        Case {
            kind: VlenV2Kind::Bytes,
            builtin: Arc::new(VlenBytesCodec::new()),
            data_type: data_type::bytes(),
            fill: FillValue::new(vec![]),
        },
    ]
}

impl Case {
    fn ours(&self) -> Arc<dyn ArrayToBytesCodecTraits> {
        Arc::new(VlenV2Codec::new(self.kind))
    }

    fn random(&self, rng: &mut Rng) -> Vec<u8> {
        match self.kind {
            VlenV2Kind::Utf8 => random_string(rng).into_bytes(),
            VlenV2Kind::Bytes => random_bytes(rng),
        }
    }

    /// Data sets: all empty, one element, one empty element, and random ones.
    fn data_sets(&self, rng: &mut Rng) -> Vec<(Vec<u64>, Vec<Vec<u8>>)> {
        let mut sets = vec![
            (vec![3], vec![vec![]; 3]),
            (vec![1], vec![b"only".to_vec()]),
            (vec![1], vec![vec![]]),
        ];
        for dims in [vec![7], vec![4, 5], vec![2, 3, 4], vec![300]] {
            let n: u64 = dims.iter().product();
            sets.push((dims, (0..n).map(|_| self.random(rng)).collect()));
        }
        sets
    }
}

#[test]
fn codec_api_same_bytes_and_cross_decoding() {
    let options = CodecOptions::default();
    let mut rng = Rng(0x5eed_1234);
    let mut checked = 0;
    for case in cases() {
        let (ours, builtin, dt, fill) = (case.ours(), &case.builtin, &case.data_type, &case.fill);
        assert_eq!(ours.name_v3(), builtin.name_v3());
        assert_eq!(ours.name_v2(), builtin.name_v2());
        let metadata_options = CodecMetadataOptions::default();
        assert_eq!(
            ours.configuration_v3(&metadata_options),
            builtin.configuration_v3(&metadata_options)
        );
        for _round in 0..20 {
            for (dims, values) in case.data_sets(&mut rng) {
                let shape = nonzero(&dims);
                let input = vlen(&values);
                let a = ours
                    .encode(input.clone(), &shape, dt, fill, &options)
                    .unwrap()
                    .into_owned();
                let b = builtin
                    .encode(input.clone(), &shape, dt, fill, &options)
                    .unwrap()
                    .into_owned();
                assert_eq!(a, b, "{:?} {dims:?}", case.kind);
                let decoded = ours.decode(b.into(), &shape, dt, fill, &options).unwrap();
                assert_eq!(decoded, input, "{:?} {dims:?}", case.kind);
                let decoded = builtin
                    .decode(a.into(), &shape, dt, fill, &options)
                    .unwrap();
                assert_eq!(decoded, input, "{:?} {dims:?}", case.kind);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 2 * 20 * 7);
}

/// zarrs' variable-length arrays may start with unused bytes
/// (`offsets[0] > 0`): both write only the elements.
#[test]
fn input_with_leading_unused_bytes() {
    let options = CodecOptions::default();
    for case in cases() {
        let padded = ArrayBytes::new_vlen(
            b"xxab".to_vec(),
            ArrayBytesOffsets::new(vec![2, 3, 4]).unwrap(),
        )
        .unwrap();
        let (dt, fill, shape) = (&case.data_type, &case.fill, nonzero(&[2]));
        let a = case
            .ours()
            .encode(padded.clone(), &shape, dt, fill, &options)
            .unwrap();
        let b = case
            .builtin
            .encode(padded, &shape, dt, fill, &options)
            .unwrap();
        // By hand: count 2, then 1 "a", then 1 "b".
        assert_eq!(&*a, &[2, 0, 0, 0, 1, 0, 0, 0, b'a', 1, 0, 0, 0, b'b']);
        assert_eq!(a, b);
    }
}

fn build_array(
    store: &Arc<MemoryStore>,
    case: &Case,
    codec: Arc<dyn ArrayToBytesCodecTraits>,
    sharded: bool,
) -> Array<MemoryStore> {
    let (chunk_shape, codec): (Vec<u64>, Arc<dyn ArrayToBytesCodecTraits>) = if sharded {
        let sharding = ShardingCodecBuilder::new(nonzero(&[2, 2]), &case.data_type)
            .array_to_bytes_codec(codec)
            .build_arc();
        (vec![4, 4], sharding)
    } else {
        (vec![3, 2], codec)
    };
    ArrayBuilder::new(
        vec![7, 5],
        chunk_shape,
        case.data_type.clone(),
        case.fill.clone(),
    )
    .array_to_bytes_codec(codec)
    .codec_specific_options(common::c_order())
    .build(store.clone(), "/")
    .unwrap()
}

fn store_values(array: &Array<MemoryStore>, case: &Case, subset: &ArraySubset, values: &[Vec<u8>]) {
    match case.kind {
        VlenV2Kind::Utf8 => {
            let strings: Vec<String> = values
                .iter()
                .map(|v| String::from_utf8(v.clone()).unwrap())
                .collect();
            array.store_array_subset(subset, strings).unwrap();
        }
        VlenV2Kind::Bytes => array.store_array_subset(subset, values.to_vec()).unwrap(),
    }
}

fn read_values(array: &Array<MemoryStore>, case: &Case, subset: &ArraySubset) -> Vec<Vec<u8>> {
    match case.kind {
        VlenV2Kind::Utf8 => {
            let strings: Vec<String> = array.retrieve_array_subset(subset).unwrap();
            strings.into_iter().map(String::into_bytes).collect()
        }
        VlenV2Kind::Bytes => array.retrieve_array_subset(subset).unwrap(),
    }
}

#[test]
fn whole_arrays_same_stores_and_cross_reading() {
    let mut rng = Rng(99);
    let all = ArraySubset::new_with_ranges(&[0..7, 0..5]);
    let part = ArraySubset::new_with_ranges(&[1..6, 1..4]);
    for case in cases() {
        // No element is the fill value (empty): zarrs skips a chunk whose
        // concatenated bytes equal the fill value's, whichever codec.
        let values: Vec<Vec<u8>> = (0..35)
            .map(|i| {
                let mut v = case.random(&mut rng);
                v.push(b'a' + (i % 26) as u8);
                v
            })
            .collect();
        let expected_part: Vec<Vec<u8>> = (1..6)
            .flat_map(|r| (1..4).map(move |c| r * 5 + c))
            .map(|i| values[i].clone())
            .collect();
        for sharded in [false, true] {
            let (store_a, store_b) = (Arc::new(MemoryStore::new()), Arc::new(MemoryStore::new()));
            let array_a = build_array(&store_a, &case, case.ours(), sharded);
            let array_b = build_array(&store_b, &case, case.builtin.clone(), sharded);
            for array in [&array_a, &array_b] {
                array.store_metadata().unwrap();
                store_values(array, &case, &all, &values);
            }
            assert_eq!(
                common::store_contents(&store_a),
                common::store_contents(&store_b),
                "{:?} sharded={sharded}",
                case.kind
            );
            for (store, codec) in [(&store_a, case.builtin.clone()), (&store_b, case.ours())] {
                let array = build_array(store, &case, codec, sharded);
                assert_eq!(read_values(&array, &case, &all), values);
                assert_eq!(read_values(&array, &case, &part), expected_part);
            }
        }
    }
}

/// After `register_overrides()`, arrays whose metadata names `vlen-utf8` or
/// `vlen-bytes` use this crate's codecs.
#[test]
fn overrides_install_these_codecs() {
    zarrs_extension_codecs::register_overrides();
    for (name, data_type, fill) in [
        ("vlen-utf8", "string", serde_json::json!("")),
        ("vlen-bytes", "bytes", serde_json::json!([])),
    ] {
        let metadata = serde_json::json!({
            "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": data_type,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
            "codecs": [{"name": name}],
        });
        let store = Arc::new(MemoryStore::new());
        let array = Array::new_with_metadata(
            store,
            "/",
            serde_json::from_value::<zarrs::array::ArrayMetadata>(metadata).unwrap(),
        )
        .unwrap();
        let codecs = array.codecs();
        let codec = codecs.array_to_bytes_codec().as_any();
        let ours = codec.downcast_ref::<VlenV2Codec>();
        assert_eq!(
            ours.map(VlenV2Codec::kind).map(VlenV2Kind::name),
            Some(name)
        );
        // Written back as zarrs' built-in writes it.
        let written = array
            .codecs()
            .create_metadatas(&CodecMetadataOptions::default());
        let expected: MetadataV3 =
            serde_json::from_value(serde_json::json!({"name": name, "configuration": {}})).unwrap();
        assert_eq!(written, vec![expected]);
    }
}

/// Corrupt chunks where zarrs' built-in departs: it panics on a length past
/// the end, and passes trailing bytes and (for `vlen-utf8`) invalid UTF-8
/// on; this crate's codecs return errors naming the codec and the value.
#[test]
fn corrupt_chunks_where_the_builtin_departs() {
    let options = CodecOptions::default();
    for case in cases() {
        let (ours, builtin) = (case.ours(), &case.builtin);
        let (dt, fill, shape) = (&case.data_type, &case.fill, nonzero(&[2]));
        let name = case.kind.name();

        // Element 1's length (1000) runs past the end.
        let past_end = vec![2, 0, 0, 0, 1, 0, 0, 0, b'a', 0xe8, 3, 0, 0, b'b'];
        let panicked = catch_unwind(AssertUnwindSafe(|| {
            let _ = builtin.decode(past_end.clone().into(), &shape, dt, fill, &options);
        }))
        .is_err();
        assert!(
            panicked,
            "zarrs' built-in no longer panics: update this test"
        );
        let err = ours
            .decode(past_end.into(), &shape, dt, fill, &options)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("{name}: length of element 1 is 1000")),
            "{err}"
        );

        // One byte after the last element.
        let trailing = vec![2, 0, 0, 0, 1, 0, 0, 0, b'a', 1, 0, 0, 0, b'b', 7];
        assert!(
            builtin
                .decode(trailing.clone().into(), &shape, dt, fill, &options)
                .is_ok()
        );
        let err = ours
            .decode(trailing.into(), &shape, dt, fill, &options)
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("{name}: 1 trailing bytes")), "{err}");

        // 0xff is never UTF-8.
        let invalid = vec![2, 0, 0, 0, 1, 0, 0, 0, 0xff, 1, 0, 0, 0, b'b'];
        assert!(
            builtin
                .decode(invalid.clone().into(), &shape, dt, fill, &options)
                .is_ok()
        );
        let decoded = ours.decode(invalid.into(), &shape, dt, fill, &options);
        match case.kind {
            VlenV2Kind::Utf8 => {
                let err = decoded.unwrap_err().to_string();
                assert!(
                    err.contains("vlen-utf8: element 0 is not valid UTF-8"),
                    "{err}"
                );
            }
            VlenV2Kind::Bytes => assert!(decoded.is_ok()),
        }
    }
}

/// Valid chunks with random damage (a byte changed, bytes cut off or
/// appended): this crate's codecs never panic, and whatever they decode,
/// zarrs' built-ins decode alike.
#[test]
fn damaged_chunks_never_panic_and_agree_when_accepted() {
    let options = CodecOptions::default();
    let mut rng = Rng(0xdead_beef);
    let (mut accepted, mut refused) = (0, 0);
    for case in cases() {
        let (ours, builtin, dt, fill) = (case.ours(), &case.builtin, &case.data_type, &case.fill);
        for _ in 0..1000 {
            let n = 1 + rng.below(6);
            let values: Vec<Vec<u8>> = (0..n).map(|_| case.random(&mut rng)).collect();
            let shape = nonzero(&[n]);
            let mut chunk = ours
                .encode(vlen(&values), &shape, dt, fill, &options)
                .unwrap()
                .into_owned();
            match rng.below(3) {
                0 => {
                    let at = rng.below(chunk.len() as u64) as usize;
                    chunk[at] = rng.byte();
                }
                1 => chunk.truncate(rng.below(chunk.len() as u64) as usize),
                _ => chunk.extend((0..1 + rng.below(4)).map(|_| rng.byte())),
            }
            let decoded = catch_unwind(AssertUnwindSafe(|| {
                ours.decode(chunk.clone().into(), &shape, dt, fill, &options)
            }))
            .unwrap_or_else(|_| panic!("{:?} panicked on {chunk:?}", case.kind));
            match decoded {
                Ok(decoded) => {
                    accepted += 1;
                    let theirs = builtin
                        .decode(chunk.clone().into(), &shape, dt, fill, &options)
                        .unwrap();
                    assert_eq!(decoded, theirs, "{:?} {chunk:?}", case.kind);
                }
                Err(e) => {
                    refused += 1;
                    assert!(e.to_string().starts_with(case.kind.name()), "{e}");
                }
            }
        }
    }
    // Both outcomes happen (a changed byte inside an element keeps the
    // chunk valid, for `vlen-bytes` at least).
    assert!(
        accepted > 0 && refused > 0,
        "{accepted} accepted, {refused} refused"
    );
}
