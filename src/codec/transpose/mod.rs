//! The `transpose` array to array codec.
//!
//! Permutes the axes of a chunk: with `order` a permutation, axis `i` of the
//! encoded chunk is axis `order[i]` of the decoded chunk (so the encoded
//! shape is `shape[order[i]]`), both in C order.
//!
//! zarrs has a built-in codec of this name, so this one is installed only by
//! [`register_overrides`](crate::register_overrides) (or used directly as a
//! codec object, e.g. in an `ArrayBuilder`).
//!
//! ### Specification
//! - <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/transpose/index.html>
//!   (v1.0, which also allows `"C"` and `"F"`)
//! - <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/transpose>
//!   (the current schema: a permutation only)
//!
//! ### Codec `name` Aliases (Zarr V3)
//! - `transpose`
//!
//! ### Compatible implementations
//! - zarrs (built-in `TransposeCodec`): identical bytes for every permutation
//!   and data type both support (tested); it refuses `"C"` / `"F"`.
//! - zarr-python (`TransposeCodec`), which also refuses `"C"` / `"F"`.
//! - tensorstore, which reads `"C"` / `"F"`.
//!
//! ### Data types
//! Every data type: fixed-size (any element size), variable-length (`string`,
//! `bytes`: elements are permuted and the offsets rebuilt) and zarrs'
//! optional types (data and validity mask permuted alike).
//!
//! ### Behaviour at the edges
//! - `order` may be a permutation of `0..n`, or `"C"` (the identity) or
//!   `"F"` (reversed axes), the v1.0 forms. A duplicate, an axis out of
//!   range, a negative or non-integer item, another string or another type
//!   is refused when the codec is created, naming the value. An explicit
//!   permutation whose length differs from the chunk's dimensionality is
//!   refused when the codec meets the chunk shape (at the latest at the
//!   first chunk access, or by [`validate_codecs`](crate::validate_codecs)).
//! - The configuration written back always holds an explicit permutation
//!   when the dimensionality is known, so that zarrs' and zarr-python's
//!   built-ins can read it. `"C"` / `"F"` need the dimensionality, which
//!   zarrs does not pass when it asks for a configuration: it is known once
//!   the codec has met a chunk shape (see
//!   [`TransposeCodec`]'s `configuration`). Before that, the string is
//!   written as read. Note that zarrs' `Array::store_metadata` writes back
//!   the metadata an array was opened with, without asking the codec.
//! - The copy is tiled for the cache (see
//!   [`kernels::transpose`](crate::kernels::transpose)); a permutation that
//!   keeps the layout (`"C"`, or moving axes of extent 1) costs no copy.
//! - A partial decode requests only the permuted region from the codec
//!   below, and transposes that.
//!
//! ### Codec `configuration` Example - [`TransposeCodecConfiguration`]:
//! ```rust
//! # let json = r#"
//! {
//!     "order": [2, 0, 1]
//! }
//! # "#;
//! # use zarrs_extension_codecs::codec::transpose::{TransposeCodec, TransposeCodecConfiguration};
//! # let configuration: TransposeCodecConfiguration = serde_json::from_str(json).unwrap();
//! # let codec = TransposeCodec::new_with_configuration(&configuration).unwrap();
//! # assert_eq!(codec.permutation(3).unwrap(), [2, 0, 1]);
//! ```

mod transpose_codec;
mod transpose_configuration;
mod transpose_partial_decoder;

use std::sync::Arc;

use zarrs::array::codec::api::{Codec, CodecTraitsV3};
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

pub use transpose_codec::TransposeCodec;
pub use transpose_configuration::{TransposeCodecConfiguration, TransposeOrder};

use crate::codec::{Override, config_error};

/// The codec name, used in error messages.
pub(crate) const TRANSPOSE: &str = "transpose";

zarrs::plugin::impl_extension_aliases!(TransposeCodec, v3: "transpose");

/// Installed over zarrs' built-in by [`register_overrides`](crate::register_overrides),
/// under the names zarrs' built-in answers to.
pub(crate) const OVERRIDE: Override = Override {
    names: &[TRANSPOSE],
    create: <TransposeCodec as CodecTraitsV3>::create,
};

impl CodecTraitsV3 for TransposeCodec {
    fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
        let configuration = metadata.configuration().ok_or_else(|| {
            config_error(
                TRANSPOSE,
                "configuration",
                "(missing)",
                "`order` is required",
            )
        })?;
        let configuration = TransposeCodecConfiguration::parse(configuration)?;
        let codec = Self::new_with_configuration(&configuration)?;
        Ok(Codec::ArrayToArray(Arc::new(codec)))
    }
}

#[cfg(test)]
mod tests;
