//! The `scale_offset` array to array codec.
//!
//! Encodes `out = (x - offset) * scale` and decodes `out = x / scale + offset`,
//! in the arithmetic of the array's own data type (the data type does not
//! change). Typically followed by [`cast_value`](crate::codec::cast_value) to
//! store floats as small integers.
//!
//! ### Specification
//! - <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset>
//!
//! ### Codec `name` Aliases (Zarr V3)
//! - `scale_offset`
//!
//! ### Compatible implementations
//! - zarr-python >= 3.2 (`zarr.codecs.ScaleOffset`)
//!
//! ### Data types
//! `int2`..`int64`, `uint2`..`uint64`, `float16`, `bfloat16`, `float32`,
//! `float64` and the small floats zarrs 0.23 has (`float4_e2m1fn`,
//! `float6_*`, `float8_*`). Other data types are refused.
//!
//! ### Behaviour at the edges
//! - `offset` and `scale` use the fill-value JSON encoding of the array's data
//!   type (`1000`, `0.1`, `"NaN"`, `"0x3f800000"`, `"0.25"`). A value that is
//!   no scalar of any type, or an unknown configuration key, is refused when
//!   the codec is created; a value that does not fit the array's data type
//!   (e.g. `"offset": 256` for `uint8`) when the codec meets it, at the latest
//!   when the fill value is encoded. A scale of zero, and a NaN or infinite
//!   `offset` or `scale` (every value would encode to NaN or infinity, which
//!   decoding cannot invert), are refused at the same point.
//! - Integers use exact arithmetic: an intermediate or final value outside the
//!   type's range, or a decode where `x` is not a multiple of `scale`, is an
//!   error naming the element and the failing step.
//! - `float16` / `bfloat16` / small floats are rounded to the type after each
//!   operation (as numpy does for `float16`).
//! - A float result that overflows becomes ±infinity (NaN for `inf - inf`),
//!   as in zarr-python (numpy); the specification does not say whether that
//!   is an error. Small floats without infinity or NaN report it as an error
//!   instead. NaN and infinite inputs propagate, so a NaN fill value
//!   survives. See [`kernels::scale_offset`](crate::kernels::scale_offset).
//! - A chunk (or a partially decoded subset) of at least 2 MiB is split into
//!   parts of about 1 MiB or more on up to `CodecOptions::concurrent_target`
//!   threads, as zarrs passes it when it decodes a chunk alone (never on a
//!   thread of a rayon pool); results and errors are the same as in one
//!   piece.
//! - Without a configuration (or with `{}`) the codec is a no-op; the
//!   configuration is written back as read, and none as
//!   `{"name": "scale_offset"}` (the form zarr-python writes), so that a new
//!   array built with a no-op codec keeps it in its metadata.
//!
//! ### Codec `configuration` Example - [`ScaleOffsetCodecConfiguration`]:
//! ```rust
//! # let json = r#"
//! {
//!     "offset": 5,
//!     "scale": 0.1
//! }
//! # "#;
//! # use zarrs_extension_codecs::codec::scale_offset::{ScaleOffsetCodec, ScaleOffsetCodecConfiguration};
//! # let configuration: ScaleOffsetCodecConfiguration = serde_json::from_str(json).unwrap();
//! # let codec = ScaleOffsetCodec::new_with_configuration(&configuration).unwrap();
//! # assert_eq!(codec.scale(), Some(&serde_json::json!(0.1)));
//! ```

mod scale_offset_codec;
mod scale_offset_configuration;

use std::sync::Arc;

use zarrs::array::codec::api::{Codec, CodecPluginV3, CodecTraitsV3};
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

pub use scale_offset_codec::ScaleOffsetCodec;
pub use scale_offset_configuration::ScaleOffsetCodecConfiguration;

/// The codec name, used in error messages.
pub(crate) const SCALE_OFFSET: &str = "scale_offset";

zarrs::plugin::impl_extension_aliases!(ScaleOffsetCodec, v3: "scale_offset");

// zarrs 0.23 has no codec of this name, so registering it cannot race.
inventory::submit! {
    CodecPluginV3::new::<ScaleOffsetCodec>()
}

impl CodecTraitsV3 for ScaleOffsetCodec {
    fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
        let codec = match metadata.configuration() {
            None => Self::new(None, None)?,
            Some(configuration) => {
                Self::new_with_configuration(&ScaleOffsetCodecConfiguration::parse(configuration)?)?
            }
        };
        Ok(Codec::ArrayToArray(Arc::new(codec)))
    }
}

#[cfg(test)]
mod tests;
