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

use std::sync::Arc;

use zarrs::array::codec::api::{ArrayBytes, ArrayToBytesCodecTraits, CodecError, CodecOptions};
use zarrs::array::{Array, ArrayCreateError, ArrayError};
use zarrs::storage::ReadableStorageTraits;

use crate::codec::num_elements;

/// Run every codec's data-type-dependent checks for `array`.
///
/// # Errors
/// The first codec error, e.g. `cast_value: fill value 0.5 does not survive
/// encode then decode (0.5 -> 0 -> 0)`.
pub fn validate_codecs<TStorage: ?Sized>(array: &Array<TStorage>) -> Result<(), ArrayError> {
    let origin = vec![0; array.dimensionality()];
    let chunk_shape = array.chunk_shape(&origin)?;
    let (data_type, fill_value) = (array.data_type(), array.fill_value());
    let codecs = array.codecs();
    codecs.encoded_representation(&chunk_shape, data_type, fill_value)?;
    // A chunk of fill value through the whole chain and back: every codec
    // checks the array's real fill value on this path.
    // Checked: a plain product of a huge chunk shape would panic in debug builds.
    let num_elements = num_elements("validate_codecs", &chunk_shape)?;
    let fill = ArrayBytes::new_fill_value(data_type, num_elements, fill_value)
        .map_err(|e| CodecError::Other(e.to_string()))?;
    let options = CodecOptions::default();
    let encoded = codecs.encode(fill, &chunk_shape, data_type, fill_value, &options)?;
    codecs.decode(encoded, &chunk_shape, data_type, fill_value, &options)?;
    Ok(())
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
}
