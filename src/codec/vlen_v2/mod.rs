//! The `vlen-utf8` and `vlen-bytes` array to bytes codecs.
//!
//! The variable-length layout of numcodecs (Zarr V2's `VLenUTF8` and
//! `VLenBytes`), which zarr-python 3 writes by default for `string` (and
//! `bytes`) arrays: a little-endian `u32` item count, then for each element a
//! little-endian `u32` byte length and the element's bytes.
//!
//! This crate's implementations are not registered automatically (zarrs has
//! built-in codecs of the same names): call
//! [`register_overrides`](crate::register_overrides), or build a chain with
//! [`VlenV2Codec`] directly.
//!
//! ### Specification
//! - <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/vlen-utf8>
//! - <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/vlen-bytes>
//!
//! ### Codec `name` Aliases (Zarr V3)
//! - `vlen-utf8`
//! - `vlen-bytes`
//!
//! (the names zarrs 0.23 registers for its built-ins.)
//!
//! ### Compatible implementations
//! - zarrs' built-in `VlenUtf8Codec` / `VlenBytesCodec` (0.23): the same
//!   bytes for every input both accept, and each reads the other's chunks
//!   (tested).
//! - zarr-python 3 / numcodecs: this codec reads zarr-python's chunks
//!   (tested with fixtures written by zarr-python 3.4.2).
//!
//! ### Data types
//! Every variable-length data type (`string`, `bytes`), as zarrs' built-ins.
//! Fixed-size and optional data types are refused with an error naming the
//! data type.
//!
//! ### Behaviour at the edges
//! - The configuration is empty or absent; any key is refused, naming it.
//! - Decoding checks the chunk before using it: a chunk shorter than the
//!   item count, an item count other than the chunk's element count, a
//!   length field or element past the end of the chunk, and bytes after the
//!   last element are errors naming the codec, the field and its value,
//!   never a panic. zarrs' built-in (0.23) panics on a length past the end
//!   of the chunk and ignores trailing bytes; numcodecs ignores them too.
//!   No writer produces trailing bytes, so this codec refuses them rather
//!   than guess which part of the chunk is wrong.
//! - `vlen-utf8` checks that every element is UTF-8, when encoding and when
//!   decoding (numcodecs fails to decode such an element too; zarrs'
//!   built-in passes the bytes on, and fails only when they are read as
//!   strings).
//! - More than `u32::MAX` elements, or an element longer than `u32::MAX`
//!   bytes, is an encode error (zarrs' built-in panics on the latter).
//! - zarrs' variable-length arrays may carry unused bytes before the first
//!   element; only the elements are written, as zarrs' built-in does.
//! - The format has no index to find an element by, so a partial decode
//!   reads and decodes the whole chunk (zarrs caches it) and copies out the
//!   requested elements, as zarrs' built-in does.
//!
//! ### Codec `configuration` Example
//! ```json
//! {}
//! ```

mod vlen_v2_codec;
mod vlen_v2_partial_decoder;

use std::sync::Arc;

use zarrs::array::codec::api::Codec;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

use crate::codec::{Override, reject_unknown_keys};

pub use vlen_v2_codec::{VlenV2Codec, VlenV2Kind};

/// Create the codec of `kind` from its metadata.
fn create(metadata: &MetadataV3, kind: VlenV2Kind) -> Result<Codec, PluginCreateError> {
    if let Some(configuration) = metadata.configuration() {
        reject_unknown_keys(kind.name(), configuration, &[])?;
    }
    Ok(Codec::ArrayToBytes(Arc::new(VlenV2Codec::new(kind))))
}

/// `vlen-utf8`, installed over zarrs' built-in by
/// [`register_overrides`](crate::register_overrides).
pub(crate) const OVERRIDE_UTF8: Override = Override {
    names: &["vlen-utf8"],
    create: |metadata| create(metadata, VlenV2Kind::Utf8),
};

/// `vlen-bytes`, installed over zarrs' built-in by
/// [`register_overrides`](crate::register_overrides).
pub(crate) const OVERRIDE_BYTES: Override = Override {
    names: &["vlen-bytes"],
    create: |metadata| create(metadata, VlenV2Kind::Bytes),
};

#[cfg(test)]
mod tests;
