//! What a user sees when an array's codec metadata is wrong: configuration
//! errors from `Array::open`, data-type-dependent ones from `open_array`
//! (zarrs 0.23 does not show codecs the data type when it opens an array).

use std::sync::Arc;

use serde_json::json;
use zarrs::array::Array;
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::open_array;

/// A one-dimensional array store with the given data type, fill value and codecs.
fn make_store(
    data_type: &str,
    fill_value: serde_json::Value,
    codecs: serde_json::Value,
) -> (tempfile::TempDir, Arc<FilesystemStore>) {
    let dir = tempfile::tempdir().unwrap();
    let metadata = json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": [10],
        "data_type": data_type,
        "chunk_grid": { "name": "regular", "configuration": { "chunk_shape": [5] } },
        "chunk_key_encoding": { "name": "default" },
        "fill_value": fill_value,
        "codecs": codecs,
    });
    std::fs::write(dir.path().join("zarr.json"), metadata.to_string()).unwrap();
    let store = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    (dir, store)
}

#[test]
fn configuration_errors_fail_array_open() {
    let (_dir, store) = make_store(
        "float64",
        json!(0.0),
        json!([{ "name": "cast_value", "configuration": { "data_type": "uint8", "rounding": "up" } }, "bytes"]),
    );
    let error = Array::open(store, "/").unwrap_err().to_string();
    assert!(error.contains("cast_value: rounding = \"up\""), "{error}");

    let (_dir, store) = make_store(
        "float64",
        json!(0.0),
        json!([{ "name": "scale_offset", "configuration": { "offset": 1, "factor": 2 } }, "bytes"]),
    );
    let error = Array::open(store, "/").unwrap_err().to_string();
    assert!(
        error.contains("scale_offset: factor = 2: unknown configuration key"),
        "{error}"
    );
}

#[test]
fn fill_value_that_does_not_round_trip_fails_open_array() {
    let codecs =
        json!([{ "name": "cast_value", "configuration": { "data_type": "uint8" } }, "bytes"]);
    let (_dir, store) = make_store("float64", json!(0.5), codecs);
    // zarrs itself opens it ...
    Array::open(store.clone(), "/").unwrap();
    // ... `open_array` runs the codecs' checks at once.
    let error = open_array(store.clone(), "/").unwrap_err().to_string();
    assert!(
        error.contains("cast_value: fill value 0.5 does not survive encode then decode"),
        "{error}"
    );
    // Without `open_array`, zarrs reads a missing chunk as the fill value
    // without consulting the codecs; the first chunk written says it.
    let array = Array::open(store, "/").unwrap();
    let error = array
        .store_chunk(&[0], vec![1.0f64; 5])
        .unwrap_err()
        .to_string();
    assert!(error.contains("fill value 0.5"), "{error}");
}

#[test]
fn unsupported_data_type_fails_open_array() {
    let codecs = json!([{ "name": "scale_offset", "configuration": { "offset": 1 } }, { "name": "bytes", "configuration": { "endian": "little" } }]);
    let (_dir, store) = make_store("complex64", json!([0.0, 0.0]), codecs);
    let error = open_array(store, "/").unwrap_err().to_string();
    assert!(
        error.contains("scale_offset: data type complex64 is not supported"),
        "{error}"
    );
}

#[test]
fn offset_out_of_range_fails_open_array() {
    let codecs = json!([{ "name": "scale_offset", "configuration": { "offset": 300 } }, "bytes"]);
    let (_dir, store) = make_store("uint8", json!(0), codecs);
    let error = open_array(store, "/").unwrap_err().to_string();
    assert!(error.contains("scale_offset: offset = 300"), "{error}");
}

#[test]
fn a_valid_array_opens() {
    let codecs = json!([
        { "name": "scale_offset", "configuration": { "offset": -10, "scale": 0.1 } },
        { "name": "cast_value", "configuration": { "data_type": "uint8", "scalar_map": { "encode": [["NaN", 0]], "decode": [[0, "NaN"]] } } },
        "bytes"
    ]);
    let (_dir, store) = make_store("float64", json!("NaN"), codecs);
    let array = open_array(store, "/").unwrap();
    let values: Vec<f64> = array.retrieve_array_subset(&array.subset_all()).unwrap();
    assert!(values.iter().all(|v| v.is_nan()));
}
