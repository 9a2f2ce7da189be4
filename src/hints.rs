//! What to do about an array zarrs cannot open: the cargo feature a codec or
//! data type needs, or the call that installs a codec.
//!
//! zarrs 0.23 says "codec blosc is not supported" alike for a codec it has
//! behind a cargo feature that is off, for a codec nobody registered, and for
//! this crate's codecs when the crate is not linked. [`open_error_hint`]
//! tells them apart, so that [`open_array`](crate::open_array), the examples
//! and users' own programs give the same advice.

use zarrs::array::ArrayCreateError;

/// Codec names (and aliases) zarrs 0.23.14 implements behind a cargo
/// feature, with that feature.
const FEATURE_CODECS: &[(&str, &str)] = &[
    ("blosc", "blosc"),
    ("zstd", "zstd"),
    ("gzip", "gzip"),
    ("crc32c", "crc32c"),
    ("numcodecs.crc32c", "crc32c"),
    ("sharding_indexed", "sharding"),
    ("transpose", "transpose"),
    ("bitround", "bitround"),
    ("numcodecs.bitround", "bitround"),
    ("numcodecs.adler32", "adler32"),
    ("numcodecs.bz2", "bz2"),
    ("numcodecs.fletcher32", "fletcher32"),
    ("zarrs.gdeflate", "gdeflate"),
    ("numcodecs.zlib", "zlib"),
    ("numcodecs.pcodec", "pcodec"),
    ("zfp", "zfp"),
    ("zarrs.zfp", "zfp"),
    ("numcodecs.zfpy", "zfp"),
];

/// The cargo feature of zarrs 0.23 that provides the codec `name`, for the
/// codecs zarrs builds only with a feature (`blosc`, `zstd`, `gzip`,
/// `crc32c`, `sharding_indexed`, `transpose`, ...).
///
/// ```
/// use zarrs_extension_codecs::zarrs_feature_of_codec;
///
/// assert_eq!(zarrs_feature_of_codec("zstd"), Some("zstd"));
/// assert_eq!(zarrs_feature_of_codec("sharding_indexed"), Some("sharding"));
/// assert_eq!(zarrs_feature_of_codec("scale_offset"), None);
/// ```
#[must_use]
pub fn zarrs_feature_of_codec(name: &str) -> Option<&'static str> {
    FEATURE_CODECS
        .iter()
        .find(|(codec, _)| *codec == name)
        .map(|(_, feature)| *feature)
}

/// The small float data types, whose fill values zarrs 0.23 reads only with
/// its `microfloat` feature.
fn is_microfloat(data_type: &str) -> bool {
    [
        "float4_",
        "float6_",
        "float8_",
        "complex_float4_",
        "complex_float6_",
    ]
    .iter()
    .any(|prefix| data_type.starts_with(prefix))
}

/// The name in a zarrs message "codec NAME is not supported".
fn unsupported_codec(message: &str) -> Option<&str> {
    let start = message.find("codec ")? + "codec ".len();
    let rest = &message[start..];
    let end = rest.find(" is not supported")?;
    let name = &rest[..end];
    // A name holds no spaces; anything else is another sentence.
    (!name.is_empty() && !name.contains(' ')).then_some(name)
}

/// Advice for an error from zarrs' `Array::open` (or [`open_array`](crate::open_array)),
/// when this crate knows the cause:
///
/// - a codec zarrs has behind a cargo feature that is off: "codec zstd needs
///   zarrs' `zstd` feature" (see the README's feature list);
/// - `transpose` with order `"C"` / `"F"`, or `packbits` written with the
///   original spellings, which zarrs' built-ins refuse: call
///   [`register_overrides`](crate::register_overrides) before opening;
/// - a small float data type (`float8_*`, `float4_e2m1fn`, ...) whose fill
///   value zarrs reads only with its `microfloat` feature;
/// - a codec name neither zarrs nor this crate has: if it is `scale_offset`
///   or `cast_value`, this crate is not linked into the program.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use zarrs::array::Array;
/// use zarrs::storage::store::MemoryStore;
///
/// let store = Arc::new(MemoryStore::new());
/// let metadata = serde_json::json!({
///     "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
///     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
///     "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
///     "codecs": [{"name": "bytes"}, {"name": "lz5"}]
/// });
/// let error = Array::new_with_metadata(store, "/", serde_json::from_value(metadata)?)
///     .unwrap_err();
/// let hint = zarrs_extension_codecs::open_error_hint(&error).unwrap();
/// assert!(hint.contains("lz5 is a codec neither zarrs"), "{hint}");
/// # Ok(()) }
/// ```
#[must_use]
pub fn open_error_hint(error: &ArrayCreateError) -> Option<String> {
    if let ArrayCreateError::InvalidFillValueMetadata { data_type_name, .. } = error
        && is_microfloat(data_type_name)
    {
        return Some(format!(
            "data type {data_type_name} needs zarrs' `microfloat` feature (without it zarrs \
             reads its fill value only as hex bytes)"
        ));
    }
    let message = error.to_string();
    if message.contains("TransposeCodecConfiguration") {
        return Some(
            "zarrs' built-in transpose takes only a permutation; transpose with order \"C\" / \
             \"F\" needs zarrs_extension_codecs::register_overrides() before the array is \
             opened (open_array calls it)"
                .to_string(),
        );
    }
    if message.contains("PackBitsCodecConfiguration")
        || message.contains("start_byte")
        || message.contains("end_byte")
    {
        return Some(
            "packbits written with the original spellings (start_byte / end_byte / start_bit / \
             end_bit) needs zarrs_extension_codecs::register_overrides() before the array is \
             opened (open_array calls it)"
                .to_string(),
        );
    }
    let name = unsupported_codec(&message)?;
    if let Some(feature) = zarrs_feature_of_codec(name) {
        let also = if name == "transpose" {
            ", or zarrs_extension_codecs::register_overrides() (whose transpose needs no feature)"
        } else {
            ""
        };
        return Some(format!(
            "codec {name} needs zarrs' `{feature}` feature: add it to zarrs' features in \
             Cargo.toml{also}"
        ));
    }
    if crate::overrides::is_override_name(name) {
        return Some(format!(
            "codec {name} is installed by zarrs_extension_codecs::register_overrides(): call it \
             before the array is opened (open_array does)"
        ));
    }
    Some(format!(
        "{name} is a codec neither zarrs 0.23 nor zarrs_extension_codecs implements (if it is \
         scale_offset or cast_value: is zarrs_extension_codecs linked? see the README's \
         Troubleshooting)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codec_name_is_found_in_zarrs_message() {
        assert_eq!(
            unsupported_codec("codec blosc is not supported"),
            Some("blosc")
        );
        assert_eq!(
            unsupported_codec("sharding: codec numcodecs.zlib is not supported"),
            Some("numcodecs.zlib")
        );
        assert_eq!(unsupported_codec("data type int3 is not supported"), None);
        assert_eq!(unsupported_codec("codec  is not supported"), None);
    }

    #[test]
    fn microfloat_names() {
        assert!(is_microfloat("float8_e4m3"));
        assert!(is_microfloat("float4_e2m1fn"));
        assert!(!is_microfloat("float16"));
    }
}
