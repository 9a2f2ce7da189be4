//! `registered_codecs` from a user's crate: the two automatic codecs are
//! there as soon as the crate is linked, the overrides only after
//! `register_overrides`, and zarrs' error for a name nobody registered is the
//! one the README's troubleshooting section quotes.
//!
//! One test function, because `register_overrides` changes zarrs' registry
//! for the whole process (and the tests of one file share a process).

use zarrs::array::codec::api::Codec;
use zarrs::metadata::v3::MetadataV3;
use zarrs_extension_codecs::{CodecRegistration, register_overrides, registered_codecs};

fn state() -> Vec<(&'static str, bool)> {
    registered_codecs()
        .iter()
        .map(|c: &CodecRegistration| (c.name, c.registered))
        .collect()
}

#[test]
fn before_and_after_register_overrides() {
    let automatic = ["scale_offset", "cast_value"];
    let overrides = [
        "bytes",
        "endian",
        "transpose",
        "packbits",
        "zarrs.vlen",
        "https://codec.zarrs.dev/array_to_bytes/vlen",
        "vlen-utf8",
        "vlen-bytes",
    ];
    let names: Vec<&str> = registered_codecs().iter().map(|c| c.name).collect();
    assert_eq!(names, [&automatic[..], &overrides[..]].concat());
    for c in registered_codecs() {
        assert_eq!(c.needs_overrides, overrides.contains(&c.name), "{c:?}");
    }

    // Before: zarrs' built-ins answer to the override names.
    let before: Vec<_> = automatic
        .iter()
        .map(|&n| (n, true))
        .chain(overrides.iter().map(|&n| (n, false)))
        .collect();
    assert_eq!(state(), before);
    // ... and they are zarrs' codecs, not missing ones.
    let bytes: MetadataV3 = serde_json::from_str(r#"{"name": "bytes"}"#).unwrap();
    assert!(Codec::from_metadata(&bytes).is_ok());

    register_overrides();
    let after: Vec<_> = automatic
        .iter()
        .chain(overrides.iter())
        .map(|&n| (n, true))
        .collect();
    assert_eq!(state(), after);
}

/// The message a user sees when no codec answers to a name (as when this
/// crate is a dependency but never linked), quoted in the README.
#[test]
fn unsupported_codec_message() {
    let metadata: MetadataV3 =
        serde_json::from_str(r#"{"name": "scale_offset_typo", "configuration": {}}"#).unwrap();
    let error = Codec::from_metadata(&metadata).unwrap_err();
    assert_eq!(
        error.to_string(),
        "codec scale_offset_typo is not supported"
    );

    // What `Array::open` says, as a user sees it.
    use zarrs::storage::{WritableStorageTraits, store::MemoryStore};
    let store = std::sync::Arc::new(MemoryStore::new());
    let zarr_json = serde_json::json!({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0.0,
        "codecs": [{"name": "scale_offset_typo"}, {"name": "bytes"}],
    });
    store
        .set(
            &"zarr.json".try_into().unwrap(),
            serde_json::to_vec(&zarr_json).unwrap().into(),
        )
        .unwrap();
    let error = zarrs::array::Array::open(store, "/").unwrap_err();
    assert_eq!(
        error.to_string(),
        "codec scale_offset_typo is not supported"
    );
}
