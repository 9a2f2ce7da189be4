//! The codecs through a real async store: zarrs' `AsyncObjectStore` over
//! object_store's `LocalFileSystem`, reading every fixture store (zarr-python,
//! tensorstore and zarrs' built-ins as writers). Whole arrays and windows
//! (the fixtures' subsets, which cut shards and inner chunks, so the async
//! partial decoders of `scale_offset`, `cast_value`, `bytes`, `transpose`,
//! `packbits` and `zarrs.vlen` run) must equal what the sync
//! `FilesystemStore` path reads, and for zarr-python's stores what
//! zarr-python decoded.
//!
//! `register_overrides()` is called first, so the `bytes` / `transpose` /
//! `packbits` / `zarrs.vlen` fixtures go through this crate's codecs.
#![cfg(feature = "async")]

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{compare, fixture_names, le_to_ne, u64s, zarr_python_fixtures};
use object_store::local::LocalFileSystem;
use zarrs::array::{Array, ArrayBytes, ArraySubset};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::numeric::NumericType;
use zarrs_object_store::AsyncObjectStore;

/// The fixture directories: (directory, whether its `NAME.expected.bin` is
/// the whole array as another implementation decoded it: zarr-python or
/// tensorstore, in little-endian element bytes). `zarrs-builtin` holds the
/// values written instead, which `packbits` bit ranges do not keep.
fn fixture_dirs() -> Vec<(PathBuf, bool)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    vec![
        (zarr_python_fixtures(), true),
        (root.join("zarr-python-core"), true),
        (root.join("tensorstore"), true),
        (root.join("zarrs-builtin/packbits"), false),
        (root.join("zarrs-builtin/vlen"), false),
    ]
}

/// Stores zarrs 0.23.14 cannot read in part, sync or async, whichever
/// `transpose` is in use: its codec chain puts a cache before `transpose`
/// built with the decoded shape when the array -> bytes codec (`vlen-utf8`)
/// cannot decode partially (see `KNOWN_ZARRS_CACHE_BUG` in
/// `tests/local/core_fixtures.rs`). Checked to still fail, so that a zarrs fix is
/// noticed.
const ZARRS_ASYNC_BUG: [&str; 1] = ["transpose_10_string"];

/// The whole array, then each subset in `NAME.expected.json` (or, without
/// any, the array minus a border of a third in each dimension).
fn subsets(meta: &serde_json::Value, shape: &[u64]) -> Vec<ArraySubset> {
    let mut out = vec![ArraySubset::new_with_shape(shape.to_vec())];
    let listed = meta["subsets"].as_array().cloned().unwrap_or_default();
    for subset in &listed {
        out.push(
            ArraySubset::new_with_start_shape(u64s(&subset["start"]), u64s(&subset["shape"]))
                .unwrap(),
        );
    }
    if listed.is_empty() {
        let ranges: Vec<_> = shape.iter().map(|&d| d / 3..d - d / 3).collect();
        out.push(ArraySubset::new_with_ranges(&ranges));
    }
    out
}

fn sync_read(store: &Path, subset: &ArraySubset) -> ArrayBytes<'static> {
    let array = Array::open(Arc::new(FilesystemStore::new(store).unwrap()), "/").unwrap();
    array
        .retrieve_array_subset(subset)
        .unwrap_or_else(|e| panic!("{}: sync {subset:?}: {e}", store.display()))
}

#[tokio::test(flavor = "current_thread")]
async fn fixture_stores_read_the_same_through_an_async_object_store() {
    zarrs_extension_codecs::register_overrides();
    let mut checked = 0;
    let mut partial_reads = 0;
    let mut with_expected = 0;
    for (dir, has_expected) in fixture_dirs() {
        for name in fixture_names(&dir) {
            let path = dir.join(format!("{name}.zarr"));
            let meta: serde_json::Value = serde_json::from_slice(
                &std::fs::read(dir.join(format!("{name}.expected.json"))).unwrap(),
            )
            .unwrap();
            let object_store = LocalFileSystem::new_with_prefix(&path).unwrap();
            let store = Arc::new(AsyncObjectStore::new(object_store));
            let Ok(array) = Array::async_open(store, "/").await else {
                // Stores that the sync path refuses too (e.g. zarr-python's
                // decode-error fixtures live in a subdirectory and are not
                // listed; tensorstore's `"C"` / `"F"` stores open here).
                assert!(
                    Array::open(Arc::new(FilesystemStore::new(&path).unwrap()), "/").is_err(),
                    "{name}: opens sync but not async"
                );
                continue;
            };
            let shape = array.shape().to_vec();
            if ZARRS_ASYNC_BUG.contains(&name.as_str()) {
                let all = ArraySubset::new_with_shape(shape.clone());
                let read = array.async_retrieve_array_subset::<ArrayBytes<'static>>(&all);
                assert!(read.await.is_err(), "{name}: zarrs' bug is fixed");
                continue;
            }
            for (i, subset) in subsets(&meta, &shape).iter().enumerate() {
                let by_async: ArrayBytes<'static> = array
                    .async_retrieve_array_subset(subset)
                    .await
                    .unwrap_or_else(|e| panic!("{name}: async {subset:?}: {e}"));
                assert_eq!(by_async, sync_read(&path, subset), "{name}: {subset:?}");
                let numeric = NumericType::from_data_type(array.data_type());
                if let (0, true, Some(data_type)) = (i, has_expected, numeric) {
                    let expected = std::fs::read(dir.join(format!("{name}.expected.bin"))).unwrap();
                    let expected = le_to_ne(&expected, data_type.size());
                    let actual = by_async.into_fixed().unwrap();
                    compare(data_type, &actual, &expected)
                        .unwrap_or_else(|e| panic!("{name}: async vs its writer: {e}"));
                    with_expected += 1;
                }
                partial_reads += usize::from(i > 0);
            }
            checked += 1;
        }
    }
    // The five directories hold over a hundred stores; a glob gone wrong
    // must not pass silently.
    assert!(checked >= 100, "only {checked} fixture stores read");
    assert!(partial_reads >= 150, "only {partial_reads} partial reads");
    // zarr-python's and tensorstore's numeric stores.
    assert!(
        with_expected >= 60,
        "only {with_expected} compared with their writer"
    );
}

/// `AsyncArrayReadExt` over the async store gives what the sync
/// `ArrayReadExt` and zarrs' byte read give, for every float64 fixture store
/// (the zarr-python chains, sharded ones included), whole and in windows;
/// the slice form is filled with a pattern first.
#[tokio::test(flavor = "current_thread")]
async fn typed_async_reads_equal_the_sync_ones() {
    use zarrs_extension_codecs::AsyncArrayReadExt;
    // The same codecs whichever test of this file runs first.
    zarrs_extension_codecs::register_overrides();
    let mut checked = 0;
    for (dir, _) in fixture_dirs() {
        for name in fixture_names(&dir) {
            let path = dir.join(format!("{name}.zarr"));
            let sync = Array::open(Arc::new(FilesystemStore::new(&path).unwrap()), "/");
            let Ok(sync) = sync else { continue };
            if sync.data_type().to_string() != "float64 / <f8" {
                continue;
            }
            let meta: serde_json::Value = serde_json::from_slice(
                &std::fs::read(dir.join(format!("{name}.expected.json"))).unwrap(),
            )
            .unwrap();
            let object_store = LocalFileSystem::new_with_prefix(&path).unwrap();
            let array = Array::async_open(Arc::new(AsyncObjectStore::new(object_store)), "/")
                .await
                .unwrap();
            for subset in subsets(&meta, array.shape()) {
                // zarrs' own typed read over the filesystem store.
                let want: Vec<f64> = sync.retrieve_array_subset(&subset).unwrap();
                let got = array
                    .async_retrieve_array_subset_vec::<f64>(&subset)
                    .await
                    .unwrap();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "{name}: {subset:?}");
                let mut slice = vec![f64::from_bits(0xA5A5_A5A5_A5A5_A5A5); want.len()];
                array
                    .async_retrieve_array_subset_into_slice(&subset, &mut slice)
                    .await
                    .unwrap();
                assert_eq!(bits(&slice), bits(&want), "{name}: slice {subset:?}");
            }
            // The element type is checked as in the sync form.
            let err = array
                .async_retrieve_array_subset_vec::<f32>(&array.subset_all())
                .await
                .unwrap_err();
            assert!(err.to_string().contains("f32 (4 bytes)"), "{err}");
            checked += 1;
        }
    }
    assert!(checked >= 8, "only {checked} float64 stores");
}

/// A store whose chunks do not decode: the typed async read names the array
/// and a failing chunk, one of those zarr-python fails on too
/// (`failing_chunk_keys` in `fixtures/zarr-python/decode_errors`).
#[tokio::test(flavor = "current_thread")]
async fn typed_async_read_errors_name_a_failing_chunk() {
    use zarrs_extension_codecs::AsyncArrayReadExt;
    zarrs_extension_codecs::register_overrides();
    let dir = zarr_python_fixtures().join("decode_errors");
    for name in ["cv_u64_f16_clamp_inf", "so_nonexact_division"] {
        let meta: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.join(format!("{name}.expected.json"))).unwrap(),
        )
        .unwrap();
        let failing: Vec<&str> = meta["failing_chunk_keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|key| key.as_str().unwrap())
            .collect();
        assert!(!failing.is_empty(), "{name}");
        let object_store =
            LocalFileSystem::new_with_prefix(dir.join(format!("{name}.zarr"))).unwrap();
        let array = Array::async_open(Arc::new(AsyncObjectStore::new(object_store)), "/")
            .await
            .unwrap();
        let all = array.subset_all();
        let result = match meta["data_type"].as_str().unwrap() {
            "uint64" => array
                .async_retrieve_array_subset_vec::<u64>(&all)
                .await
                .map(drop),
            "int16" => array
                .async_retrieve_array_subset_vec::<i16>(&all)
                .await
                .map(drop),
            other => panic!("{name}: data type {other}"),
        };
        let error = result.unwrap_err().to_string();
        assert!(
            failing
                .iter()
                .any(|key| error.starts_with(&format!("array /: chunk {key}: "))),
            "{name}: {error} (zarr-python fails on {failing:?})"
        );
    }
}
