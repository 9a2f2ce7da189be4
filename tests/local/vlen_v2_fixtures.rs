//! Stores written by zarr-python 3.4.2 with `vlen-utf8` and `vlen-bytes`
//! (fixtures/zarr-python-strings, made by
//! `scripts/python/make_fixtures_strings.py`), read through zarrs with this
//! crate's codecs installed by `register_overrides()`, and written again.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zarrs::array::{Array, ArraySubset};
use zarrs::filesystem::FilesystemStore;
use zarrs::storage::store::MemoryStore;
use zarrs_extension_codecs::codec::vlen_v2::VlenV2Codec;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/zarr-python-strings")
}

/// Every fixture: name and `expected.json`.
fn fixtures() -> Vec<(String, serde_json::Value)> {
    common::fixtures_with_json(&fixture_dir(), 5)
}

fn is_string(expected: &serde_json::Value) -> bool {
    expected["data_type"] == "string"
}

/// The expected element values as raw bytes.
fn values(expected: &serde_json::Value) -> Vec<Vec<u8>> {
    let values = expected["values"].as_array().unwrap();
    if is_string(expected) {
        values
            .iter()
            .map(|v| v.as_str().unwrap().as_bytes().to_vec())
            .collect()
    } else {
        values
            .iter()
            .map(|v| serde_json::from_value(v.clone()).unwrap())
            .collect()
    }
}

/// Read a subset as raw element bytes, as `Vec<String>` or `Vec<Vec<u8>>`.
fn read(array: &Array<FilesystemStore>, subset: &ArraySubset, string: bool) -> Vec<Vec<u8>> {
    if string {
        let strings: Vec<String> = array.retrieve_array_subset(subset).unwrap();
        strings.into_iter().map(String::into_bytes).collect()
    } else {
        array.retrieve_array_subset(subset).unwrap()
    }
}

/// The C-order elements of the region `start`/`size` of `all` (of `shape`).
fn region<T: Clone>(all: &[T], shape: &[u64], start: &[u64], size: &[u64]) -> Vec<T> {
    let n: u64 = size.iter().product();
    let mut index = vec![0u64; size.len()];
    let mut out = Vec::new();
    for _ in 0..n {
        let flat = (0..size.len()).fold(0, |f, d| f * shape[d] + start[d] + index[d]);
        out.push(all[flat as usize].clone());
        for d in (0..size.len()).rev() {
            index[d] += 1;
            if index[d] < size[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
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
        let string = is_string(&expected);
        if !name.contains("sharded") {
            let codecs = array.codecs();
            let codec = codecs.array_to_bytes_codec().as_any();
            assert!(
                codec.downcast_ref::<VlenV2Codec>().is_some(),
                "{name}: not this crate's codec"
            );
        }
        let shape = common::u64s(&expected["shape"]);
        let all = values(&expected);
        assert_eq!(read(&array, &array.subset_all(), string), all, "{name}");
        // Regions that cut through chunks (and, sharded, inner chunks).
        let start: Vec<u64> = shape.iter().map(|&s| s / 3).collect();
        let size: Vec<u64> = shape.iter().map(|&s| (s / 2).max(1)).collect();
        let subset = ArraySubset::new_with_start_shape(start.clone(), size.clone()).unwrap();
        assert_eq!(
            read(&array, &subset, string),
            region(&all, &shape, &start, &size),
            "{name} {subset:?}"
        );
    }
}

/// This crate's codecs, writing the same values with the fixture's metadata,
/// write the same chunk files as zarr-python did. Not the sharded one:
/// zarr-python orders the inner chunks in a shard otherwise than zarrs (whose
/// values are compared above).
#[test]
fn fixtures_are_rewritten_identically() {
    for (name, expected) in fixtures() {
        if name.contains("sharded") {
            continue;
        }
        let fixture = open(&name);
        let string = is_string(&expected);
        let store = Arc::new(MemoryStore::new());
        let array = Array::new_with_metadata(store.clone(), "/", fixture.metadata().clone())
            .unwrap()
            .with_codec_specific_options(&common::c_order());
        let all = array.subset_all();
        let data = read(&fixture, &all, string);
        if string {
            let strings: Vec<String> = data
                .into_iter()
                .map(|v| String::from_utf8(v).unwrap())
                .collect();
            array.store_array_subset(&all, strings).unwrap();
        } else {
            array.store_array_subset(&all, data).unwrap();
        }
        let dir = fixture_dir().join(format!("{name}.zarr"));
        assert_eq!(
            common::store_contents(&store),
            common::chunk_files(&dir),
            "{name}"
        );
    }
}
