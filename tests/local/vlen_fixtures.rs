//! Stores written by zarrs' built-in `zarrs.vlen` (fixtures/zarrs-builtin/vlen,
//! made by `examples/make_vlen_fixtures.rs`), read through zarrs with this
//! crate's codec installed by `register_overrides()`.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zarrs::array::codec::api::CodecMetadataOptions;
use zarrs::array::{Array, ArraySubset};
use zarrs::filesystem::FilesystemStore;
use zarrs::storage::ReadableStorageTraits;
use zarrs::storage::store::MemoryStore;
use zarrs_extension_codecs::codec::vlen::{VlenCodec, VlenIndexLocation};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/zarrs-builtin/vlen")
}

/// Every fixture: name and `expected.json`.
fn fixtures() -> Vec<(String, serde_json::Value)> {
    common::fixtures_with_json(&fixture_dir(), 8)
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// Expected element values as raw bytes.
fn values(expected: &serde_json::Value, values: &serde_json::Value) -> Vec<Vec<u8>> {
    let hex = expected["value_encoding"] == "hex";
    values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let v = v.as_str().unwrap();
            if hex { unhex(v) } else { v.as_bytes().to_vec() }
        })
        .collect()
}

fn shape(json: &serde_json::Value) -> Vec<u64> {
    serde_json::from_value(json.clone()).unwrap()
}

/// Read a subset as raw element bytes, as `Vec<String>` or `Vec<Vec<u8>>`.
fn read<T: ?Sized + ReadableStorageTraits + 'static>(
    array: &Array<T>,
    subset: &ArraySubset,
    hex: bool,
) -> Vec<Vec<u8>> {
    if hex {
        array.retrieve_array_subset(subset).unwrap()
    } else {
        let strings: Vec<String> = array.retrieve_array_subset(subset).unwrap();
        strings.into_iter().map(String::into_bytes).collect()
    }
}

fn open(name: &str) -> Array<FilesystemStore> {
    zarrs_extension_codecs::register_overrides();
    let store = Arc::new(FilesystemStore::new(fixture_dir().join(format!("{name}.zarr"))).unwrap());
    Array::open(store, "/").unwrap()
}

#[test]
fn fixtures_decode_to_the_written_values() {
    for (name, expected) in fixtures() {
        let array = open(&name);
        let hex = expected["value_encoding"] == "hex";
        // Not sharded: the codec really is this crate's.
        if expected["inner_chunk_shape"].is_null() {
            let codecs = array.codecs();
            let codec = codecs.array_to_bytes_codec().as_any();
            let ours = codec.downcast_ref::<VlenCodec>();
            assert!(ours.is_some(), "{name}: not this crate's codec");
            if expected["old_form"] == true {
                assert_eq!(ours.unwrap().index_location(), VlenIndexLocation::Start);
            }
        }
        let all = ArraySubset::new_with_shape(shape(&expected["shape"]));
        assert_eq!(
            read(&array, &all, hex),
            values(&expected, &expected["values"]),
            "{name}"
        );
        for subset in expected["subsets"].as_array().unwrap() {
            let region =
                ArraySubset::new_with_start_shape(shape(&subset["start"]), shape(&subset["shape"]))
                    .unwrap();
            assert_eq!(
                read(&array, &region, hex),
                values(&expected, &subset["values"]),
                "{name} {subset}"
            );
        }
    }
}

/// This crate's codec, writing the same values with the fixture's metadata,
/// writes the same chunks as zarrs' built-in did, and the same codec
/// metadata (the older form is written in the current form, as zarrs does).
#[test]
fn fixtures_are_rewritten_identically() {
    for (name, expected) in fixtures() {
        let fixture = open(&name);
        let hex = expected["value_encoding"] == "hex";
        let store = Arc::new(MemoryStore::new());
        let array =
            Array::new_with_metadata(store.clone(), "/", fixture.metadata().clone()).unwrap();
        let written = &expected["written_region"];
        let region =
            ArraySubset::new_with_start_shape(shape(&written["start"]), shape(&written["shape"]))
                .unwrap();
        let data = read(&fixture, &region, hex);
        if hex {
            array.store_array_subset(&region, data).unwrap();
        } else {
            let strings: Vec<String> = data
                .into_iter()
                .map(|v| String::from_utf8(v).unwrap())
                .collect();
            array.store_array_subset(&region, strings).unwrap();
        }
        let ours = common::store_contents(&store);
        let dir = fixture_dir().join(format!("{name}.zarr"));
        assert_eq!(ours, common::chunk_files(&dir), "{name}");

        let zarr_json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("zarr.json")).unwrap()).unwrap();
        let mut codecs = zarr_json["codecs"].clone();
        if expected["old_form"] == true {
            codecs[0]["configuration"]["index_location"] = "start".into();
        }
        // The codec metadata the codecs write (zarrs keeps the metadata as
        // read in `Array::metadata`).
        let written = array
            .codecs()
            .create_metadatas(&CodecMetadataOptions::default());
        assert_eq!(serde_json::to_value(written).unwrap(), codecs, "{name}");
    }
}
