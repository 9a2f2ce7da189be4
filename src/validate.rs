//! Checking an array's codecs against its data type and fill value.
//!
//! zarrs 0.23 creates codecs from their metadata alone: `Array::open` does not
//! tell a codec the array's data type. So the checks this crate can do early
//! (unknown keys, misspelt modes, `wrap` into a float, a `scalar_map` value
//! the target type cannot hold) happen when the array is opened, while the
//! checks that need the data type (an unsupported type, `offset` / `scale`
//! out of range, a fill value that does not survive `cast_value`) happen at
//! the first chunk read or write, or as soon as you call [`validate_codecs`].
//! [`open_array`] does both in one step, for reading.
//!
//! Both also refuse an array that zarrs' built-in `bytes` or `packbits`
//! would read wrong without a word (sub-byte types, signed integers through
//! `packbits`): [`register_overrides`](crate::register_overrides) installs
//! this crate's versions, which read them as their specs say.

use std::num::NonZeroU64;
use std::sync::Arc;

use zarrs::array::codec::api::{
    ArrayBytes, ArrayToBytesCodecTraits, CodecError, CodecMetadataOptions, CodecOptions,
};
use zarrs::array::{Array, ArrayCreateError, ArrayError, CodecChain, DataType, FillValue};
use zarrs::metadata_ext::codec::sharding::ShardingCodecConfiguration;
use zarrs::plugin::ExtensionName;
use zarrs::storage::ReadableStorageTraits;

use crate::codec::{bytes::BytesCodec, data_type_name, num_elements, packbits::PackBitsCodec};

/// What the checks are for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Purpose {
    /// Reading and writing: every check.
    Write,
    /// Reading only: a fill value the codecs cannot carry is accepted (see
    /// [`FILL_VALUE_CLAUSE`](crate::codec::FILL_VALUE_CLAUSE)).
    Read,
}

/// Run every codec's data-type-dependent checks for `array`, including the
/// codecs inside `sharding_indexed` (and nested shards), for reading and
/// writing.
///
/// It also refuses, with a message naming
/// [`register_overrides`](crate::register_overrides), an array that zarrs'
/// built-in `bytes` would decode wrong (a sub-byte data type: `int2`,
/// `int4`, `uint2`, `uint4`, `float4_e2m1fn`, `float6_*`) or whose built-in
/// `packbits` would lose the sign of a signed integer in a partial read.
///
/// # Errors
/// The first codec error, e.g. `cast_value: fill value 0.5 does not survive
/// encode then decode (0.5 -> 0 -> 0)`. A fill value that does not survive
/// the codecs is an error here, where writing is in view; [`open_array`]
/// accepts it for reading.
pub fn validate_codecs<TStorage: ?Sized>(array: &Array<TStorage>) -> Result<(), ArrayError> {
    validate(array, Purpose::Write).map(drop)
}

/// The checks for `purpose`; for reading, the fill-value error accepted
/// (the first, if any).
fn validate<TStorage: ?Sized>(
    array: &Array<TStorage>,
    purpose: Purpose,
) -> Result<Option<String>, ArrayError> {
    let origin = vec![0; array.dimensionality()];
    let chunk_shape = array.chunk_shape(&origin)?;
    validate_chain(
        &array.codecs(),
        &chunk_shape,
        array.data_type(),
        array.fill_value(),
        purpose,
    )
}

/// The checks of [`validate_codecs`] for one codec chain and the chunks it
/// encodes, then for the chain inside its `sharding_indexed` codec, if any;
/// for reading, the first fill-value error accepted.
fn validate_chain(
    codecs: &CodecChain,
    chunk_shape: &[NonZeroU64],
    data_type: &DataType,
    fill_value: &FillValue,
    purpose: Purpose,
) -> Result<Option<String>, ArrayError> {
    codecs.encoded_representation(chunk_shape, data_type, fill_value)?;
    let a2b = codecs.array_to_bytes_codec();
    // Checked: a plain product of a huge chunk shape would panic in debug builds.
    let chunk_elements = num_elements("validate_codecs", chunk_shape)?;
    // A chunk of fill value through the whole chain and back: every codec
    // checks the array's real fill value on this path. A chain that is
    // `sharding_indexed` alone stores no inner chunk of fill value, so a
    // whole shard would reach only the sharding codec and its index codecs,
    // at the cost of allocating and comparing the shard (27 ms for the
    // Sentinel-2 layout's 32 MiB, at every open of the Python pipeline): a
    // shard of one inner chunk reaches them as well, once its shape is
    // checked to be a whole number of inner chunks (which the sharding
    // codec checks only when its inner codecs bound their size). Its inner
    // chain is checked below.
    let sharding = sharding_configuration(a2b.as_ref());
    let sharding_alone = sharding.as_ref().filter(|_| {
        codecs.array_to_array_codecs().is_empty() && codecs.bytes_to_bytes_codecs().is_empty()
    });
    let (round_trip_shape, num_elements) = match sharding_alone {
        Some(configuration) => {
            let inner = configuration.chunk_shape.as_slice();
            crate::read::engine::plan::inner_chunks_per_shard(chunk_shape, inner)
                .map_err(ArrayError::Other)?;
            (inner, num_elements("validate_codecs", inner)?)
        }
        None => (chunk_shape, chunk_elements),
    };
    let fill = ArrayBytes::new_fill_value(data_type, num_elements, fill_value)
        .map_err(|e| CodecError::Other(e.to_string()))?;
    let options = CodecOptions::default();
    let round_trip = codecs
        .encode(fill, round_trip_shape, data_type, fill_value, &options)
        .and_then(|encoded| {
            codecs.decode(encoded, round_trip_shape, data_type, fill_value, &options)
        });
    let accepted = match round_trip {
        Err(e) if purpose == Purpose::Read && crate::codec::is_fill_value_error(&e.to_string()) => {
            Some(e.to_string())
        }
        Err(e) => return Err(e.into()),
        Ok(_) => None,
    };

    // The data type reaching the array -> bytes codec, and its fill value.
    let (mut data_type, mut fill_value) = (data_type.clone(), fill_value.clone());
    for codec in codecs.array_to_array_codecs() {
        let next = codec.encoded_data_type(&data_type)?;
        fill_value = codec.encoded_fill_value(&data_type, &fill_value)?;
        data_type = next;
    }
    check_builtin(a2b.as_ref(), &data_type)?;

    // `sharding_indexed` leaves out inner chunks that are all fill value,
    // so the encoding above never reached the codecs inside a shard: check
    // its inner chain on one inner chunk, with the data type and fill value
    // that the array -> array codecs before it hand on.
    let Some(configuration) = sharding else {
        return Ok(accepted);
    };
    let inner = CodecChain::from_metadata(&configuration.codecs)
        .map_err(|e| CodecError::Other(e.to_string()))?;
    let inner_accepted = validate_chain(
        &inner,
        &configuration.chunk_shape,
        &data_type,
        &fill_value,
        purpose,
    )?;
    Ok(accepted.or(inner_accepted))
}

/// The configuration of `codec` if it is `sharding_indexed`.
fn sharding_configuration(
    codec: &dyn ArrayToBytesCodecTraits,
) -> Option<zarrs::metadata_ext::codec::sharding::ShardingCodecConfigurationV1> {
    if codec.name_v3().as_deref() != Some("sharding_indexed") {
        return None;
    }
    let configuration = codec
        .configuration_v3(&CodecMetadataOptions::default())
        .and_then(|c| serde_json::to_value(c).ok())
        .and_then(|c| serde_json::from_value::<ShardingCodecConfiguration>(c).ok());
    // zarrs created the codec from such a configuration, so this holds.
    match configuration {
        Some(ShardingCodecConfiguration::V1(configuration)) => Some(configuration),
        _ => None,
    }
}

/// The data types zarrs' built-in `bytes` decodes wrong: one value per byte
/// in the low bits, upper bits kept (tensorstore writes `int4` -1 as `0x0f`,
/// which the built-in reads as 15).
fn is_sub_byte(name: &str) -> bool {
    matches!(
        name,
        "int2"
            | "int4"
            | "uint2"
            | "uint4"
            | "float4_e2m1fn"
            | "float6_e2m3fn"
            | "float6_e3m2fn"
            | "complex_float4_e2m1fn"
            | "complex_float6_e2m3fn"
            | "complex_float6_e3m2fn"
    )
}

/// The signed integer types, whose sign zarrs' built-in `packbits` loses
/// in a partial read.
fn is_signed_integer(name: &str) -> bool {
    matches!(name, "int2" | "int4" | "int8" | "int16" | "int32" | "int64")
}

/// Refuse zarrs' built-in `bytes` / `packbits` where they would read wrong
/// values without an error.
fn check_builtin(
    codec: &dyn ArrayToBytesCodecTraits,
    data_type: &DataType,
) -> Result<(), ArrayError> {
    let Some(name) = codec.name_v3() else {
        return Ok(());
    };
    let any = codec.as_any();
    let type_name = data_type_name(data_type);
    let wrong = match name.as_ref() {
        "bytes" => !any.is::<BytesCodec>() && is_sub_byte(&type_name),
        "packbits" => !any.is::<PackBitsCodec>() && is_signed_integer(&type_name),
        _ => false,
    };
    if wrong {
        return Err(ArrayError::Other(format!(
            "{name}: data type {type_name} through zarrs' built-in {name} codec would read wrong \
             values (see the README's \"Overriding zarrs' bytes, ...\"): call \
             zarrs_extension_codecs::register_overrides() before opening the array \
             (zarrs_extension_codecs::open_array does)"
        )));
    }
    Ok(())
}

/// The override check of [`validate_codecs`] alone, for the read paths of
/// [`ArrayReadExt`](crate::ArrayReadExt). A chain that passed is
/// remembered (see [`PASSED`]), so a read costs a lookup, not a walk of the
/// chain (which creates the codecs inside a shard anew).
pub(crate) fn check_overrides<TStorage: ?Sized>(array: &Array<TStorage>) -> Result<(), ArrayError> {
    let codecs = array.codecs();
    let a2b = codecs.array_to_bytes_codec();
    let is_candidate = matches!(
        a2b.name_v3().as_deref(),
        Some("bytes" | "packbits" | "sharding_indexed")
    );
    if !is_candidate || passed(&codecs) {
        return Ok(());
    }
    check_chain_overrides(&codecs, array.data_type())?;
    remember(&codecs);
    Ok(())
}

/// Codec chains that passed [`check_chain_overrides`], held weakly: while
/// one is alive (`strong_count() > 0`) no other chain can have its address,
/// so a match by address is that chain. An array's codecs and data type are
/// fixed once it is opened, so the result holds for its life.
static PASSED: std::sync::Mutex<Vec<std::sync::Weak<CodecChain>>> =
    std::sync::Mutex::new(Vec::new());

/// How many chains [`PASSED`] holds at most.
const PASSED_CAPACITY: usize = 64;

fn passed(codecs: &Arc<CodecChain>) -> bool {
    let Ok(passed) = PASSED.lock() else {
        return false;
    };
    passed
        .iter()
        .any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(codecs)) && w.strong_count() > 0)
}

fn remember(codecs: &Arc<CodecChain>) {
    let Ok(mut passed) = PASSED.lock() else {
        return;
    };
    passed.retain(|w| w.strong_count() > 0);
    if passed.len() >= PASSED_CAPACITY {
        passed.remove(0);
    }
    passed.push(Arc::downgrade(codecs));
}

fn check_chain_overrides(codecs: &CodecChain, data_type: &DataType) -> Result<(), ArrayError> {
    let mut data_type = data_type.clone();
    for codec in codecs.array_to_array_codecs() {
        data_type = codec.encoded_data_type(&data_type)?;
    }
    let a2b = codecs.array_to_bytes_codec();
    check_builtin(a2b.as_ref(), &data_type)?;
    if let Some(configuration) = sharding_configuration(a2b.as_ref()) {
        let inner = CodecChain::from_metadata(&configuration.codecs)
            .map_err(|e| CodecError::Other(e.to_string()))?;
        check_chain_overrides(&inner, &data_type)?;
    }
    Ok(())
}

/// The checks of [`validate_codecs`] that reading needs: a fill value that
/// does not survive the codecs is accepted (see [`open_array`]).
///
/// # Errors
/// As [`validate_codecs`], but for a fill value that the codecs cannot
/// carry.
pub fn validate_codecs_for_reading<TStorage: ?Sized>(
    array: &Array<TStorage>,
) -> Result<(), ArrayError> {
    validate(array, Purpose::Read).map(drop)
}

/// [`validate_codecs_for_reading`] and [`fill_value_warning`] in one pass
/// (one chunk of fill value through the codecs, not one for each): the
/// warning, for an array that can be read but not written.
///
/// # Errors
/// As [`validate_codecs_for_reading`].
pub fn validate_codecs_for_reading_with_warning<TStorage: ?Sized>(
    array: &Array<TStorage>,
) -> Result<Option<String>, ArrayError> {
    validate(array, Purpose::Read)
}

/// Why `array` can be read but not written, if its fill value does not
/// survive its codecs: e.g. zarr-python 3.4.2's default fill value 0.0 in
/// front of `scale_offset(offset=100, scale=10)` + `cast_value(uint16)`
/// (`0.0 -> -1000 -> 0 -> 100.0`). The message quotes the spec's clause.
/// `None` when the fill value survives, or when another check fails first
/// (see [`validate_codecs`]).
#[must_use]
pub fn fill_value_warning<TStorage: ?Sized>(array: &Array<TStorage>) -> Option<String> {
    match validate(array, Purpose::Write) {
        Err(e) if crate::codec::is_fill_value_error(&e.to_string()) => Some(e.to_string()),
        _ => None,
    }
}

/// Error from [`open_array`]: what failed, for which array, and, where this
/// crate knows the cause, what to do ([`open_error_hint`](crate::open_error_hint)).
#[derive(Debug, thiserror::Error)]
pub enum OpenArrayError {
    /// The array could not be opened.
    #[error("cannot open array {path}: {source}{}", hint.as_deref().map(|h| format!(" ({h})")).unwrap_or_default())]
    Create {
        /// The array's path in the store.
        path: String,
        /// zarrs' error.
        source: Box<ArrayCreateError>,
        /// What to do about it, if this crate knows
        /// ([`open_error_hint`](crate::open_error_hint)).
        hint: Option<String>,
    },
    /// A codec refused the array's data type or fill value.
    #[error("array {path}: {source}")]
    Codecs {
        /// The array's path in the store.
        path: String,
        /// The codec's error.
        source: Box<ArrayError>,
    },
}

/// Open an array for reading: [`register_overrides`](crate::register_overrides),
/// then [`Array::open`], then the checks of [`validate_codecs`] that reading
/// needs.
///
/// Installing the overrides first means `int4`, `packbits` and `transpose`
/// with order `"C"` / `"F"` read as their specs say, whatever the program
/// did before. An array whose fill value does not survive its codecs (as
/// zarr-python 3.4.2 writes with its default fill value 0.0 in front of
/// `scale_offset` + `cast_value`) opens: its stored chunks decode as
/// stored and missing chunks read as the fill value, as zarr-python reads
/// them; writing to it stays refused (run [`validate_codecs`] to see why).
///
/// # Errors
/// If the array cannot be opened (the message says which zarrs feature or
/// call is missing, where this crate knows) or its codecs refuse its data
/// type; each names the array's path.
pub fn open_array<TStorage: ?Sized + ReadableStorageTraits + 'static>(
    storage: Arc<TStorage>,
    path: &str,
) -> Result<Array<TStorage>, OpenArrayError> {
    crate::register_overrides();
    let array = Array::open(storage, path).map_err(|source| OpenArrayError::Create {
        path: path.to_string(),
        hint: crate::open_error_hint(&source),
        source: Box::new(source),
    })?;
    validate_codecs_for_reading(&array).map_err(|source| OpenArrayError::Codecs {
        path: path.to_string(),
        source: Box::new(source),
    })?;
    Ok(array)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use zarrs::array::{Array, ArrayMetadata};
    use zarrs::storage::store::MemoryStore;

    /// A chunk shape whose element count overflows `u64`, with codecs that
    /// do not refuse it themselves (a variable-length chunk has no fixed
    /// size), is an error rather than a panic.
    #[test]
    fn overflowing_chunk_shape_is_an_error() {
        let metadata: ArrayMetadata = serde_json::from_value(json!({
            "zarr_format": 3,
            "node_type": "array",
            "shape": [4294967296u64, 4294967296u64],
            "data_type": "string",
            "chunk_grid": { "name": "regular",
                            "configuration": { "chunk_shape": [4294967296u64, 4294967296u64] } },
            "chunk_key_encoding": { "name": "default" },
            "fill_value": "",
            "codecs": [{ "name": "vlen-utf8" }]
        }))
        .unwrap();
        let array = Array::new_with_metadata(Arc::new(MemoryStore::new()), "/", metadata).unwrap();
        let error = super::validate_codecs(&array).unwrap_err().to_string();
        // Named by this guard, not by a codec further down.
        assert!(error.contains("validate_codecs: chunk shape"), "{error}");
    }

    /// A shard whose inner chunks are not checked in it whole (the round
    /// trip of a chain that is `sharding_indexed` alone is one inner chunk
    /// large) is still refused when its shape is not a whole number of
    /// inner chunks: inner codecs of unbounded size (strings), which zarrs'
    /// sharding codec does not check the shape for; and with a whole
    /// number, accepted. A shard of 2^64 elements is refused by the guard.
    #[test]
    fn a_shard_of_no_whole_number_of_inner_chunks_is_refused() {
        let array = |shard: u64, inner: u64| {
            let metadata: ArrayMetadata = serde_json::from_value(json!({
                "zarr_format": 3,
                "node_type": "array",
                "shape": [shard, shard],
                "data_type": "string",
                "chunk_grid": { "name": "regular",
                                "configuration": { "chunk_shape": [shard, shard] } },
                "chunk_key_encoding": { "name": "default" },
                "fill_value": "",
                "codecs": [{ "name": "sharding_indexed", "configuration": {
                    "chunk_shape": [inner, inner],
                    "codecs": [{ "name": "vlen-utf8" }],
                    "index_codecs": [{ "name": "bytes", "configuration": { "endian": "little" } }]
                }}]
            }))
            .unwrap();
            Array::new_with_metadata(Arc::new(MemoryStore::new()), "/", metadata).unwrap()
        };
        let error = super::validate_codecs(&array(10, 4))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("does not divide the shard shape [10, 10]"),
            "{error}"
        );
        super::validate_codecs(&array(12, 4)).unwrap();
        let error = super::validate_codecs(&array(1 << 32, 1 << 16))
            .unwrap_err()
            .to_string();
        assert!(error.contains("validate_codecs: chunk shape"), "{error}");
    }

    /// A fill value that the codecs inside a shard cannot encode is
    /// refused, although `sharding_indexed` never passes an all-fill inner
    /// chunk to them: by hand, (0 - 7.5) * -10.125 = 75.9375, which rounds
    /// to 76, outside uint4's [0, 15] (no `out_of_range` rule). Behind a
    /// `transpose`, in a nested shard, the same.
    #[test]
    fn fill_value_inside_a_shard_is_checked() {
        let inner = json!([
            { "name": "scale_offset", "configuration": { "offset": 7.5, "scale": -10.125 } },
            { "name": "cast_value", "configuration": { "data_type": "uint4" } },
            { "name": "packbits" }
        ]);
        let shard = |chunk_shape: serde_json::Value, codecs: serde_json::Value| {
            json!({ "name": "sharding_indexed", "configuration": {
                "chunk_shape": chunk_shape,
                "codecs": codecs,
                "index_codecs": [{ "name": "bytes", "configuration": { "endian": "little" } }]
            }})
        };
        let array = |codecs: serde_json::Value, fill_value: f64| {
            let metadata: ArrayMetadata = serde_json::from_value(json!({
                "zarr_format": 3,
                "node_type": "array",
                "shape": [8, 8],
                "data_type": "float32",
                "chunk_grid": { "name": "regular", "configuration": { "chunk_shape": [8, 8] } },
                "chunk_key_encoding": { "name": "default" },
                "fill_value": fill_value,
                "codecs": codecs
            }))
            .unwrap();
            Array::new_with_metadata(Arc::new(MemoryStore::new()), "/", metadata).unwrap()
        };
        crate::register_overrides();
        let transpose = json!({ "name": "transpose", "configuration": { "order": [1, 0] } });
        let chains = [
            json!([shard(json!([4, 4]), inner.clone())]),
            json!([transpose, shard(json!([4, 8]), inner.clone())]),
            json!([shard(
                json!([4, 8]),
                json!([shard(json!([2, 2]), inner.clone())])
            )]),
        ];
        for codecs in chains {
            let error = super::validate_codecs(&array(codecs.clone(), 0.0))
                .expect_err(&codecs.to_string())
                .to_string();
            assert!(error.contains("cast_value"), "{codecs}: {error}");
            // A fill value of 7.5 encodes to 0 and decodes back: accepted.
            super::validate_codecs(&array(codecs.clone(), 7.5))
                .unwrap_or_else(|e| panic!("{codecs}: {e}"));
        }
    }
}
