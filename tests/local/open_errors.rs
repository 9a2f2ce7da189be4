//! What a user sees when an array's codec metadata is wrong: configuration
//! errors from `Array::open`, data-type-dependent ones from `open_array`
//! (zarrs 0.23 does not show codecs the data type when it opens an array).

use std::sync::Arc;

use serde_json::json;
use zarrs::array::Array;
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::{open_array, validate_codecs};

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
fn fill_value_that_does_not_round_trip_refuses_writes_not_reads() {
    let codecs =
        json!([{ "name": "cast_value", "configuration": { "data_type": "uint8" } }, "bytes"]);
    let (_dir, store) = make_store("float64", json!(0.5), codecs);
    // zarrs itself opens it ...
    let array = Array::open(store.clone(), "/").unwrap();
    // ... `validate_codecs` (reading and writing) says why it cannot be
    // written, quoting the spec ...
    let error = validate_codecs(&array).unwrap_err().to_string();
    assert!(
        error.contains("cast_value: fill value 0.5 does not survive encode then decode")
            && error.contains("MUST treat this as an error"),
        "{error}"
    );
    // ... `open_array` (reading) opens it: a missing chunk reads as the
    // fill value, as in zarr-python ...
    let array = open_array(store, "/").unwrap();
    let values: Vec<f64> = array.retrieve_array_subset(&array.subset_all()).unwrap();
    assert_eq!(values, [0.5; 10]);
    // ... and the first chunk written says it.
    let error = array
        .store_chunk(&[0], vec![1.0f64; 5])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("fill value 0.5") && error.contains("writing is refused"),
        "{error}"
    );
}

/// `open_array`'s errors name the array's path, and what to do where the
/// crate knows: the zarrs feature of a codec, `register_overrides()`, or
/// (only for a name nobody implements) whether the crate is linked.
#[test]
fn open_array_errors_say_what_to_do() {
    let (_dir, store) = make_store(
        "float64",
        json!(0.0),
        json!([{ "name": "bytes", "configuration": { "endian": "little" } }, { "name": "lz5" }]),
    );
    let error = open_array(store, "/").unwrap_err().to_string();
    assert!(
        error.starts_with("cannot open array /: ")
            && error.contains("codec lz5 is not supported")
            && error.contains("lz5 is a codec neither zarrs")
            && error.contains("is zarrs_extension_codecs linked?"),
        "{error}"
    );

    // A codec zarrs has behind a feature (all on in this build, so the
    // error zarrs gives without it is made by hand).
    use zarrs::array::ArrayCreateError;
    use zarrs::plugin::{PluginCreateError, PluginUnsupportedError};
    for (name, feature) in [
        ("zstd", "zstd"),
        ("blosc", "blosc"),
        ("gzip", "gzip"),
        ("crc32c", "crc32c"),
        ("sharding_indexed", "sharding"),
    ] {
        let error = ArrayCreateError::CodecsCreateError(PluginCreateError::Unsupported(
            PluginUnsupportedError::new(name.to_string(), "codec".to_string()),
        ));
        let hint = zarrs_extension_codecs::open_error_hint(&error).unwrap();
        assert_eq!(
            hint,
            format!(
                "codec {name} needs zarrs' `{feature}` feature: add it to zarrs' features in Cargo.toml"
            ),
        );
        assert!(!hint.contains("linked"), "{hint}");
    }
    // A small float's fill value without zarrs' `microfloat` feature.
    let error = ArrayCreateError::InvalidFillValueMetadata {
        data_type_name: "float8_e4m3".to_string(),
        fill_value_metadata: serde_json::from_value(json!(0.0)).unwrap(),
    };
    let hint = zarrs_extension_codecs::open_error_hint(&error).unwrap();
    assert!(hint.contains("zarrs' `microfloat` feature"), "{hint}");
    // transpose "C" / "F" without the overrides: tests/first_day.rs.
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

/// The names `zarrs_feature_of_codec` maps to a feature this test build
/// turns on are names zarrs knows (spelt as zarrs spells them); a name
/// without a feature is not in the table.
#[test]
fn feature_table_names_are_zarrs_names() {
    use zarrs::array::codec::api::Codec;
    use zarrs::metadata::v3::MetadataV3;
    for name in [
        "blosc",
        "zstd",
        "gzip",
        "crc32c",
        "sharding_indexed",
        "transpose",
    ] {
        assert!(
            zarrs_extension_codecs::zarrs_feature_of_codec(name).is_some(),
            "{name}"
        );
        let metadata: MetadataV3 =
            serde_json::from_value(json!({ "name": name, "configuration": {} })).unwrap();
        if let Err(e) = Codec::from_metadata(&metadata) {
            assert!(!e.to_string().contains("is not supported"), "{name}: {e}");
        }
    }
    for name in ["bytes", "scale_offset", "packbits", "lz5"] {
        assert_eq!(zarrs_extension_codecs::zarrs_feature_of_codec(name), None);
    }
}
