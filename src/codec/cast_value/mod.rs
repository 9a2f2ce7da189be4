//! The `cast_value` array to array codec.
//!
//! Converts the value of every element to another integer or floating-point
//! data type (a value conversion, not a reinterpretation of bits), with a
//! chosen rounding mode, an optional rule for out-of-range values, and an
//! optional `scalar_map` of explicit mappings such as `NaN -> 0`. Typically
//! follows [`scale_offset`](crate::codec::scale_offset) to store floats as
//! small integers.
//!
//! ### Specification
//! - <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value>
//!
//! ### Codec `name` Aliases (Zarr V3)
//! - `cast_value`
//!
//! ### Compatible implementations
//! - zarr-python >= 3.2 with the `cast-value-rs` package (which wraps the
//!   `zarr-cast-value` crate); tested against fixtures written by
//!   zarr-python 3.4.2 and differentially against `zarr-cast-value` 0.5.1.
//!
//! ### Data types
//! Every pair among `int2`..`int64`, `uint2`..`uint64`, `float16`,
//! `bfloat16`, `float32`, `float64` and the small floats zarrs 0.23 has
//! (`float4_e2m1fn`, `float6_*`, `float8_*`).
//!
//! ### Behaviour at the edges
//! - Rounding happens once, on the exact source value: `int64` / `uint64`
//!   values above 2^53 never pass through `f64`, and narrowing `float64` to
//!   `float16` / `bfloat16` does not round twice.
//! - NaN propagates between IEEE types and signed zero is kept. NaN or
//!   infinity into a type without them is an error unless `scalar_map` maps
//!   it (even with `out_of_range: "clamp"`).
//! - `clamp` maps finite values beyond a float type's range to ±infinity
//!   (to ±max for types without infinity); `wrap` is refused for float
//!   targets when the codec is created.
//! - `scalar_map` keys match numerically (`-0.0` matches `0`) and a NaN key
//!   matches every NaN; a repeated key keeps its first value.
//! - The fill value is cast like the elements and must survive
//!   encode-then-decode, or the codec reports an error naming it.
//! - A chunk (or a partially decoded subset) of at least 2 MiB of the wider
//!   type is split into parts of about 1 MiB or more on up to
//!   `CodecOptions::concurrent_target` threads, as zarrs passes it when it
//!   decodes a chunk alone (never on a thread of a rayon pool); results and
//!   errors (the first failing element of the chunk) are the same as in one
//!   piece.
//!
//! ### Codec `configuration` Example
//! ```rust
//! # let json = serde_json::json!(
//! {
//!     "data_type": "uint8",
//!     "rounding": "nearest-even",
//!     "out_of_range": "clamp",
//!     "scalar_map": {
//!         "encode": [["NaN", 0]],
//!         "decode": [[0, "NaN"]]
//!     }
//! }
//! # );
//! # let codec = zarrs_extension_codecs::codec::cast_value::CastValueCodec::new_with_json(&json).unwrap();
//! ```

mod cast_value_codec;
mod cast_value_configuration;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use zarrs::array::codec::api::{Codec, CodecPluginV3, CodecTraitsV3};
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

pub use cast_value_codec::CastValueCodec;
pub use cast_value_configuration::{CastValueCodecConfiguration, ScalarMap, ScalarMapEntry};

/// The codec name, used in error messages.
pub(crate) const CAST_VALUE: &str = "cast_value";

zarrs::plugin::impl_extension_aliases!(CastValueCodec, v3: "cast_value");

// zarrs 0.23 has no codec of this name, so registering it cannot race.
inventory::submit! {
    CodecPluginV3::new::<CastValueCodec>()
}

impl CodecTraitsV3 for CastValueCodec {
    fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
        let configuration = metadata.configuration().ok_or_else(|| {
            crate::codec::config_error(
                CAST_VALUE,
                "configuration",
                "(missing)",
                "`data_type` is required",
            )
        })?;
        let configuration = CastValueCodecConfiguration::parse(configuration)?;
        Ok(Codec::ArrayToArray(Arc::new(Self::new_with_configuration(
            &configuration,
        )?)))
    }
}
