//! The `bytes` array to bytes codec.
//!
//! Stores each element as its fixed-size binary representation, in C order,
//! multi-byte components in the configured byte order. zarrs has a built-in
//! codec of the same name; this one replaces it after
//! [`register_overrides`](crate::register_overrides), or can be put in a
//! codec chain directly.
//!
//! ### Specification
//! - <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/bytes/v1.0.html>
//! - sub-byte and small-float types:
//!   <https://github.com/zarr-developers/zarr-extensions/tree/main/data-types>
//!
//! ### Codec `name` Aliases (Zarr V3)
//! - `bytes`
//! - `endian` (the codec's name before the specification renamed it)
//!
//! ### Compatible implementations
//! Every Zarr V3 implementation (this is a core codec): zarrs, zarr-python,
//! tensorstore, zarrita, ... Chunks written by this codec and by zarrs'
//! built-in are identical byte for byte.
//!
//! ### Data types
//! Every fixed-size data type zarrs 0.23 has:
//! - `int8`, `uint8`, the 8-bit floats, complex types of 8-bit floats and raw
//!   bits `r*`: stored as they are, whatever `endian` says;
//! - `bool`: one byte, `0x00` or `0x01`; any other byte is an error;
//! - `int2`, `int4`, `uint2`, `uint4`, `float4_e2m1fn`, `float6_e2m3fn`,
//!   `float6_e3m2fn` (and complex types of the 4- and 6-bit floats): one
//!   value per byte in the low bits. As their specifications say, the upper
//!   bits are ignored when reading: `int2` / `int4` are sign-extended from
//!   the low 2 / 4 bits (tensorstore writes `int4` -1 as `0x0f`, which
//!   decodes to -1), the others have their upper bits cleared. When writing,
//!   the upper bits are the sign extension for `int2` / `int4` (-1 is `0xff`,
//!   as zarrs' built-in writes it) and zero for the others;
//! - 16-, 32- and 64-bit integers and floats (`float16`, `bfloat16`
//!   included), `numpy.datetime64` / `numpy.timedelta64`,
//!   `fixed_length_utf32`, and complex types, whose real and imaginary
//!   components are each stored in the byte order `endian` gives;
//! - a data type from another crate that implements zarrs'
//!   `BytesDataTypeTraits` is handed to that implementation.
//!
//! Variable-sized (`string`, `bytes`) and optional data types are refused.
//!
//! ### Behaviour at the edges
//! - `endian` other than `"little"` or `"big"` (`null` included), or an
//!   unknown configuration key, is refused when the codec is created.
//! - `endian` missing for a data type with multi-byte elements is refused as
//!   soon as the codec meets the data type
//!   ([`encoded_representation`](zarrs::array::codec::api::ArrayToBytesCodecTraits::encoded_representation),
//!   called by [`validate_codecs`](crate::validate_codecs) and
//!   [`open_array`](crate::open_array)), before anything is read or written.
//! - A chunk whose length is not that of its elements is an error, as is a
//!   byte range the store returns short in a partial decode.
//! - Partial decoding reads only the bytes of the requested elements.
//!
//! ### Performance
//! When the stored byte order is the machine's, chunks pass through without
//! a copy. Byte swapping runs at about the speed of a `memcpy` (see
//! [`kernels::bytes`](crate::kernels::bytes)).
//!
//! ### Codec `configuration` Example - [`BytesCodecConfiguration`]:
//! ```rust
//! # let json = r#"
//! {
//!     "endian": "little"
//! }
//! # "#;
//! # use zarrs_extension_codecs::codec::bytes::{BytesCodec, BytesCodecConfiguration};
//! # let configuration: zarrs::metadata::Configuration = serde_json::from_str(json).unwrap();
//! # let configuration = BytesCodecConfiguration::parse(&configuration).unwrap();
//! # let codec = BytesCodec::new_with_configuration(&configuration);
//! # assert_eq!(codec, BytesCodec::little());
//! ```

mod bytes_codec;
mod bytes_configuration;
mod bytes_layout;
mod bytes_partial_decoder;

use std::sync::Arc;

use zarrs::array::codec::api::{Codec, CodecTraitsV3};
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

pub use bytes_codec::BytesCodec;
pub use bytes_configuration::BytesCodecConfiguration;

use crate::codec::Override;

/// The codec name, used in error messages.
pub(crate) const BYTES: &str = "bytes";

zarrs::plugin::impl_extension_aliases!(BytesCodec, v3: "bytes", ["endian"]);

/// Installed over zarrs' built-in by [`register_overrides`](crate::register_overrides),
/// for the same names the built-in answers to.
pub(crate) const OVERRIDE: Override = Override {
    names: &["bytes", "endian"],
    create: <BytesCodec as CodecTraitsV3>::create,
};

impl CodecTraitsV3 for BytesCodec {
    fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
        let configuration = match metadata.configuration() {
            None => BytesCodecConfiguration::default(),
            Some(configuration) => BytesCodecConfiguration::parse(configuration)?,
        };
        Ok(Codec::ArrayToBytes(Arc::new(Self::new_with_configuration(
            &configuration,
        ))))
    }
}

#[cfg(test)]
mod tests;
