//! Checking an array's codecs against its data type and fill value.
//!
//! zarrs 0.23 creates codecs from their metadata alone: `Array::open` does not
//! tell a codec the array's data type. So the checks this crate can do early
//! (unknown keys, misspelt modes, `wrap` into a float, a `scalar_map` value
//! the target type cannot hold) happen when the array is opened, while the
//! checks that need the data type (an unsupported type, `offset` / `scale`
//! out of range, a fill value that does not survive `cast_value`) happen at
//! the first chunk read or write, or as soon as you call [`validate_codecs`].
//! [`open_array`] does both in one step.

use std::num::NonZeroU64;
use std::sync::Arc;

use zarrs::array::codec::api::{
    ArrayBytes, ArrayToBytesCodecTraits, CodecError, CodecMetadataOptions, CodecOptions,
};
use zarrs::array::{Array, ArrayCreateError, ArrayError, CodecChain, DataType, FillValue};
use zarrs::metadata_ext::codec::sharding::ShardingCodecConfiguration;
use zarrs::plugin::ExtensionName;
use zarrs::storage::ReadableStorageTraits;

use crate::codec::num_elements;

/// Run every codec's data-type-dependent checks for `array`, including the
/// codecs inside `sharding_indexed` (and nested shards).
///
/// # Errors
/// The first codec error, e.g. `cast_value: fill value 0.5 does not survive
/// encode then decode (0.5 -> 0 -> 0)`.
pub fn validate_codecs<TStorage: ?Sized>(array: &Array<TStorage>) -> Result<(), ArrayError> {
    let origin = vec![0; array.dimensionality()];
    let chunk_shape = array.chunk_shape(&origin)?;
    validate_chain(
        &array.codecs(),
        &chunk_shape,
        array.data_type(),
        array.fill_value(),
    )
}

/// The checks of [`validate_codecs`] for one codec chain and the chunks it
/// encodes, then for the chain inside its `sharding_indexed` codec, if any.
fn validate_chain(
    codecs: &CodecChain,
    chunk_shape: &[NonZeroU64],
    data_type: &DataType,
    fill_value: &FillValue,
) -> Result<(), ArrayError> {
    codecs.encoded_representation(chunk_shape, data_type, fill_value)?;
    // A chunk of fill value through the whole chain and back: every codec
    // checks the array's real fill value on this path.
    // Checked: a plain product of a huge chunk shape would panic in debug builds.
    let num_elements = num_elements("validate_codecs", chunk_shape)?;
    let fill = ArrayBytes::new_fill_value(data_type, num_elements, fill_value)
        .map_err(|e| CodecError::Other(e.to_string()))?;
    let options = CodecOptions::default();
    let encoded = codecs.encode(fill, chunk_shape, data_type, fill_value, &options)?;
    codecs.decode(encoded, chunk_shape, data_type, fill_value, &options)?;

    // `sharding_indexed` leaves out inner chunks that are all fill value,
    // so the encoding above never reached the codecs inside a shard: check
    // its inner chain on one inner chunk, with the data type and fill value
    // that the array -> array codecs before it hand on.
    let a2b = codecs.array_to_bytes_codec();
    if a2b.name_v3().as_deref() != Some("sharding_indexed") {
        return Ok(());
    }
    let configuration = a2b
        .configuration_v3(&CodecMetadataOptions::default())
        .and_then(|c| serde_json::to_value(c).ok())
        .and_then(|c| serde_json::from_value::<ShardingCodecConfiguration>(c).ok());
    // zarrs created the codec from such a configuration, so this holds.
    let Some(ShardingCodecConfiguration::V1(configuration)) = configuration else {
        return Ok(());
    };
    let (mut data_type, mut fill_value) = (data_type.clone(), fill_value.clone());
    for codec in codecs.array_to_array_codecs() {
        let next = codec.encoded_data_type(&data_type)?;
        fill_value = codec.encoded_fill_value(&data_type, &fill_value)?;
        data_type = next;
    }
    let inner = CodecChain::from_metadata(&configuration.codecs)
        .map_err(|e| CodecError::Other(e.to_string()))?;
    validate_chain(&inner, &configuration.chunk_shape, &data_type, &fill_value)
}

/// Error from [`open_array`].
#[derive(Debug, thiserror::Error)]
pub enum OpenArrayError {
    /// The array could not be opened.
    #[error(transparent)]
    Create(#[from] ArrayCreateError),
    /// A codec refused the array's data type or fill value.
    #[error(transparent)]
    Codecs(#[from] ArrayError),
}

/// [`Array::open`] followed by [`validate_codecs`].
///
/// # Errors
/// If the array cannot be opened or its codecs refuse its data type or fill value.
pub fn open_array<TStorage: ?Sized + ReadableStorageTraits + 'static>(
    storage: Arc<TStorage>,
    path: &str,
) -> Result<Array<TStorage>, OpenArrayError> {
    let array = Array::open(storage, path)?;
    validate_codecs(&array)?;
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
