//! The codecs, one module each, and the glue they share.
//!
//! Error messages follow one shape so that a user can find the offending
//! metadata: `<codec>: <field> = <value>: <reason>` for configuration, and
//! `<codec>: <data type> ...` for data-type problems.

pub mod bytes;
pub mod cast_value;
mod elementwise_partial_decoder;
pub mod packbits;
pub(crate) mod parallel;
pub mod scale_offset;
mod slab;
pub mod transpose;
pub mod vlen;
pub mod vlen_v2;

pub(crate) use elementwise_partial_decoder::{ElementwiseDecode, ElementwisePartialDecoder};

use std::fmt::Display;
use std::num::NonZeroU64;

use zarrs::array::codec::api::{Codec, CodecError};
use zarrs::array::{DataType, FillValue};
use zarrs::metadata::Configuration;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

use crate::numeric::NumericType;

/// A configuration error naming the codec, the field and the value.
pub(crate) fn config_error(
    codec: &str,
    field: &str,
    value: impl Display,
    reason: impl Display,
) -> PluginCreateError {
    PluginCreateError::Other(format!("{codec}: {field} = {value}: {reason}"))
}

/// Refuse configuration keys other than `allowed` (the specs reserve them).
pub(crate) fn reject_unknown_keys(
    codec: &str,
    configuration: &Configuration,
    allowed: &[&str],
) -> Result<(), PluginCreateError> {
    for (key, value) in configuration.iter() {
        if !allowed.contains(&key.as_str()) {
            let expected = allowed.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>();
            let reason = if expected.is_empty() {
                "unknown configuration key (the codec takes no configuration)".to_string()
            } else {
                format!(
                    "unknown configuration key (expected {})",
                    expected.join(", ")
                )
            };
            return Err(config_error(codec, key, value, reason));
        }
    }
    Ok(())
}

/// A configuration map from JSON that must be an object, for the codecs'
/// `new_with_json` constructors.
pub(crate) fn configuration_from_json(
    codec: &str,
    json: &serde_json::Value,
) -> Result<Configuration, PluginCreateError> {
    json.as_object()
        .map(|map| Configuration::from(map.clone()))
        .ok_or_else(|| config_error(codec, "configuration", json, "expected an object"))
}

/// The Zarr V3 name of a data type, for messages (zarrs' `Display` adds the
/// V2 name too).
pub(crate) fn data_type_name(data_type: &DataType) -> String {
    use zarrs::plugin::{ExtensionName, ZarrVersion};
    data_type
        .name(ZarrVersion::V3)
        .map_or_else(|| data_type.to_string(), |name| name.into_owned())
}

/// Refuse the data types that a variable-length codec (`zarrs.vlen`,
/// `vlen-utf8`, `vlen-bytes`) does not encode: optional ones, which need the
/// `optional` codec around it, and fixed-size ones.
pub(crate) fn check_variable_data_type(
    codec: &str,
    data_type: &DataType,
) -> Result<(), CodecError> {
    use zarrs::array::DataTypeSize;
    let name = data_type_name(data_type);
    if data_type.is_optional() {
        return Err(CodecError::Other(format!(
            "{codec}: data type {name} is optional; wrap this codec in the `optional` codec"
        )));
    }
    match data_type.size() {
        DataTypeSize::Variable => Ok(()),
        DataTypeSize::Fixed(size) => Err(CodecError::Other(format!(
            "{codec}: data type {name} has a fixed size ({size} bytes); this codec encodes \
             variable-length data types such as `string` and `bytes` (use `bytes` for fixed-size \
             types)"
        ))),
    }
}

/// The [`NumericType`] of `data_type`, or an error naming the codec.
pub(crate) fn numeric_type(codec: &str, data_type: &DataType) -> Result<NumericType, CodecError> {
    NumericType::from_data_type(data_type).ok_or_else(|| {
        CodecError::Other(format!(
            "{codec}: data type {} is not supported (only integer and floating-point types are)",
            data_type_name(data_type)
        ))
    })
}

/// What `encoded_fill_value` returns for `checked`, the strictly encoded fill
/// value of an array->array codec.
///
/// zarrs 0.23.14 also calls `encoded_fill_value` with a made-up all-zero fill
/// value (in `CodecChain::recommended_concurrency`), which need not be
/// encodable (`0 - 1000` in `uint16`), so a failure here yields zeros of
/// `encoded_size` bytes. The real fill value is checked strictly by `encode`,
/// `decode`, the partial decoder and `validate_codecs`
/// ([`ElementwiseDecode::checked_fill_value`]).
pub(crate) fn tolerant_fill_value(
    checked: Result<FillValue, CodecError>,
    encoded_size: usize,
) -> FillValue {
    checked.unwrap_or_else(|_| FillValue::new(vec![0; encoded_size]))
}

/// The clause every error about a fill value that the codecs cannot carry
/// ends with: such an array can be read (as zarr-python reads it) but not
/// written. [`is_fill_value_error`] finds it.
pub(crate) const FILL_VALUE_CLAUSE: &str = "writing is refused (cast_value spec, \"If the fill \
    value cannot survive a round-trip cast, implementations MUST treat this as an error\", so \
    that partial chunks decode right); reading is allowed: open_array and zarrs' own reads \
    return the stored chunks, and missing chunks as the fill value, as zarr-python does";

/// An error about the fill value, `detail` followed by [`FILL_VALUE_CLAUSE`].
pub(crate) fn fill_value_error(detail: String) -> CodecError {
    CodecError::Other(format!("{detail}: {FILL_VALUE_CLAUSE}"))
}

/// Whether `message` is an error of [`fill_value_error`].
///
/// By its text, because these errors reach `validate_codecs` through zarrs'
/// `CodecChain`, and zarrs 0.23's `CodecError` carries a codec's own error
/// only as `Other(String)`: no type survives the trip. The one clause, made
/// and recognised here, keeps the two sides from drifting apart.
pub(crate) fn is_fill_value_error(message: &str) -> bool {
    message.contains(FILL_VALUE_CLAUSE)
}

/// The number of elements of a chunk of `shape`, or an error naming the
/// codec if it does not fit in a `u64` (a plain `product()` would panic in
/// debug builds and wrap in release builds).
pub(crate) fn num_elements(codec: &str, shape: &[NonZeroU64]) -> Result<u64, CodecError> {
    shape
        .iter()
        .try_fold(1u64, |n, d| n.checked_mul(d.get()))
        .ok_or_else(|| {
            CodecError::Other(format!(
                "{codec}: chunk shape {shape:?} is too large: its element count overflows u64"
            ))
        })
}

/// Check that a chunk of `shape` holds its elements of `data_type`.
pub(crate) fn check_chunk_len(
    codec: &str,
    bytes: &[u8],
    shape: &[NonZeroU64],
    data_type: NumericType,
) -> Result<(), CodecError> {
    let num_elements = num_elements(codec, shape)?;
    let expected = num_elements.checked_mul(data_type.size() as u64);
    if expected != Some(bytes.len() as u64) {
        return Err(CodecError::Other(format!(
            "{codec}: chunk has {} bytes, expected {num_elements} {data_type} elements ({} bytes)",
            bytes.len(),
            expected.map_or_else(|| "overflow".to_string(), |e| e.to_string()),
        )));
    }
    Ok(())
}

/// Name the codec and the part of the chunk in the error of a partial
/// read: zarrs' stores report a byte range beyond a short chunk without
/// saying whose read it was.
pub(crate) fn read_error(
    codec: &'static str,
    what: impl Display,
) -> impl Fn(CodecError) -> CodecError {
    move |e| CodecError::Other(format!("{codec}: reading {what} of the chunk: {e}"))
}

/// A codec installed over a zarrs built-in of the same name by
/// [`register_overrides`](crate::register_overrides), never through
/// `inventory` (two `inventory` plugins for one name race).
#[derive(Clone, Copy)]
pub(crate) struct Override {
    /// The names (and aliases) the codec answers to.
    pub names: &'static [&'static str],
    /// Create the codec from its metadata.
    pub create: fn(&MetadataV3) -> Result<Codec, PluginCreateError>,
}
