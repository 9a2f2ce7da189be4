//! The `zarrs.vlen` array to bytes codec.
//!
//! Stores variable-length elements (`string`, `bytes`, ...) as an index of
//! `n + 1` offsets and the concatenated element bytes, each encoded by its
//! own codec chain (`index_codecs`, `data_codecs`), with an 8-byte
//! little-endian length of the encoded index at the start
//! (`length | index | data`) or at the end (`data | index | length`) of the
//! chunk. The offsets follow the Apache Arrow variable-size binary layout:
//! element `j` is `data[offsets[j]..offsets[j + 1]]`.
//!
//! This crate's implementation is not registered automatically (zarrs has a
//! built-in codec of the same name): call
//! [`register_overrides`](crate::register_overrides), or build a chain with
//! [`VlenCodec`] directly.
//!
//! ### Specification
//! - <https://codec.zarrs.dev/array_to_bytes/vlen> (as documented by zarrs
//!   0.23; based on a proposal by Jeremy Maitin-Shepard in
//!   <https://github.com/zarr-developers/zeps/pull/47#issuecomment-1710505141>)
//!
//! ### Codec `name` Aliases (Zarr V3)
//! - `zarrs.vlen`
//! - `https://codec.zarrs.dev/array_to_bytes/vlen`
//!
//! ### Compatible implementations
//! - zarrs' built-in `VlenCodec` (0.23.14): the same bytes for every
//!   configuration, and each reads the other's chunks (tested, also inside
//!   `sharding_indexed`), except as noted below.
//!
//! ### Data types
//! Every variable-length data type (`string`, `bytes`). Fixed-size and
//! optional data types are refused with an error naming the data type.
//!
//! ### Behaviour at the edges
//! - `index_codecs` and `data_codecs` are resolved through zarrs' codec
//!   registry, so they may hold any registered codec, this crate's included.
//!   An unknown codec, a chain without (or with two) array->bytes codecs, or
//!   a chain that cannot encode its input (e.g. `bytes` without `endian` for
//!   the index) is refused when the codec is created, naming the field.
//! - `index_data_type` is `"uint32"` or `"uint64"`; `index_location` is
//!   `"start"` or `"end"`, and may be absent (the older form), meaning
//!   `"start"`. Unknown keys are refused. The configuration is written back
//!   in the current form, with `index_location`, as zarrs writes it.
//! - Decoding checks the chunk before using it: a chunk shorter than the
//!   length field, an index length beyond the chunk, an index of the wrong
//!   size, a first offset other than 0, a decreasing offset, or a last offset
//!   other than the data length are errors naming the problem, never a panic
//!   or a read out of bounds. (zarrs' built-in panics on an index length
//!   beyond the chunk, and accepts a non-zero first offset.)
//! - Elements of zero bytes each are allowed; a chunk whose elements are all
//!   empty has no data section, as zarrs writes it, and any data bytes there
//!   are an error.
//! - zarrs' variable-length arrays may carry unused bytes before the first
//!   element (`offsets[0] > 0`); only the elements are encoded, with offsets
//!   starting at 0. zarrs' built-in writes such input as given, with a
//!   non-zero first offset, which this codec then refuses to read.
//! - `uint32` offsets address at most 4 GiB of element bytes per chunk; more
//!   is an encode error.
//! - Partial decoding reads the index and then only the requested elements'
//!   bytes when the data chain is `bytes` alone and the index is at the
//!   start (and its encoded size is bounded); otherwise the chunk is read
//!   and decoded whole. The index is read once per partial decoder, then
//!   the last byte it claims (so that a corrupt offset never becomes the
//!   length of a read, which zarrs' stores allocate up front). In a partial
//!   read the last offset can only be checked to lie within the stored
//!   bytes, not to end the chunk exactly: zarrs' partial-read interface does
//!   not give the chunk size.
//!
//! ### Performance
//! When both chains are a lone `bytes` codec, encoding writes the chunk into
//! one buffer (the offsets straight into place, no per-element allocation),
//! and decoding returns the element bytes without copying (borrowed from the
//! input, or in the input's own buffer) and, for `uint64` offsets on a
//! 64-bit little-endian machine, the offsets too when they are aligned. The
//! offsets are checked in one pass. `benches/vlen.rs` compares with zarrs'
//! built-in and memcpy.
//!
//! ### Codec `configuration` Example - [`VlenCodecConfiguration`]:
//! ```rust
//! # let json = r#"
//! {
//!     "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
//!     "data_codecs": [{"name": "bytes"}],
//!     "index_data_type": "uint32",
//!     "index_location": "end"
//! }
//! # "#;
//! # use zarrs_extension_codecs::codec::vlen::{VlenCodec, VlenCodecConfiguration, VlenIndexLocation};
//! # let configuration: VlenCodecConfiguration = serde_json::from_str(json).unwrap();
//! # let codec = VlenCodec::new_with_configuration(&configuration).unwrap();
//! # assert_eq!(codec.index_location(), VlenIndexLocation::End);
//! ```

mod vlen_codec;
mod vlen_configuration;
pub(crate) mod vlen_partial_decoder;

use std::sync::Arc;

use zarrs::array::codec::api::Codec;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

use crate::codec::{Override, config_error};

pub use vlen_codec::VlenCodec;
pub use vlen_configuration::{VlenCodecConfiguration, VlenIndexDataType, VlenIndexLocation};

/// The codec name, used in error messages.
pub(crate) const VLEN: &str = "zarrs.vlen";

zarrs::plugin::impl_extension_aliases!(VlenCodec,
    v3: "zarrs.vlen", ["https://codec.zarrs.dev/array_to_bytes/vlen"]
);

/// Create the codec from its metadata.
fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
    let configuration = metadata.configuration().ok_or_else(|| {
        config_error(
            VLEN,
            "configuration",
            "(missing)",
            "`index_codecs`, `data_codecs` and `index_data_type` are required",
        )
    })?;
    let configuration = VlenCodecConfiguration::parse(configuration)?;
    Ok(Codec::ArrayToBytes(Arc::new(
        VlenCodec::new_with_configuration(&configuration)?,
    )))
}

/// Installed over zarrs' built-in by [`register_overrides`](crate::register_overrides).
pub(crate) const OVERRIDE: Override = Override {
    names: &["zarrs.vlen", "https://codec.zarrs.dev/array_to_bytes/vlen"],
    create,
};

#[cfg(test)]
mod tests;
