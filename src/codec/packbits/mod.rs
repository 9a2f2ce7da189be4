//! The `packbits` array to bytes codec.
//!
//! Packs each element into a fixed number of bits, `k`, with no gaps: element
//! `i` (in C order) is bits `[i * k, (i + 1) * k)` of the stream, least
//! significant bit of each byte first, padded with zero bits to a whole byte.
//! `k` is the number of components (2 for complex types, else 1) times the
//! number of bits kept of each, `last_bit - first_bit + 1`.
//!
//! ### Specification
//! - <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/packbits>
//!   (current text: `first_byte` / `last_byte`, `first_bit` / `last_bit`)
//! - the original text and the published JSON schema, which spell them
//!   `start_byte` / `end_byte` and `start_bit` / `end_bit`
//!
//! ### Codec `name` Aliases (Zarr V3)
//! - `packbits`
//!
//! zarrs 0.23 has a built-in codec of this name, so this one is installed
//! only by [`register_overrides`](crate::register_overrides), or used
//! directly as a [`PackBitsCodec`] object.
//!
//! ### Compatible implementations
//! - zarrs' built-in `packbits` (0.23.14): the same bytes for every data type
//!   and configuration both accept (whole components with a padding byte
//!   excepted, see below), and each decodes the other's output (tested
//!   through the codec API and arrays, also inside `sharding_indexed`, and
//!   against stores it wrote in `fixtures/zarrs-builtin/packbits/`). Where
//!   it departs from the specification this codec follows the
//!   specification.
//! - numcodecs' `packbits` (Zarr v2, `bool` only) matches
//!   `padding_encoding: "first_byte"`, per the specification.
//!
//! ### Data types
//! `bool` (1 bit); `int2`, `uint2` (2); `int4`, `uint4`, `float4_e2m1fn` (4);
//! `float6_e2m3fn`, `float6_e3m2fn` (6); `complex_float4_e2m1fn`,
//! `complex_float6_*` (two components); `int8`..`int64`, `uint8`..`uint64`,
//! `float16`, `bfloat16`, `float32`, `float64`, the `float8_*` types and the
//! complex floats (their little-endian representation, each component on
//! its own). Any other data type that declares `packbits` support to zarrs
//! (e.g. `numpy.datetime64`) is packed as it declares. Others are refused
//! when the codec first meets them (`encoded_representation`).
//!
//! ### Behaviour at the edges
//! - `padding_encoding` is read as `"none"` (default), `"first_byte"`,
//!   `"last_byte"`, `"start_byte"` or `"end_byte"`; the bit range as
//!   `first_bit` / `last_bit` or `start_bit` / `end_bit` (`null` = default).
//!   The metadata written back uses the current spelling, as zarrs'
//!   built-in writes it, so that the built-in can open the array.
//! - `last_bit < first_bit`, an index of 64 or more, or an unknown key is
//!   refused when the codec is created; an index not below the component's
//!   `N` bits when the codec meets the data type.
//! - Decoding puts the encoded bits back at `first_bit`, then sign-extends
//!   signed integers from `last_bit` (zero-extends everything else) over
//!   the whole in-memory value: `int2` / `int4` come back as sign-extended
//!   `i8`, `int32` with `last_bit = 11` as a sign-extended `i32`.
//! - A chunk of the wrong length, or a padding byte that disagrees with the
//!   number of padding bits the element count implies, is a decode error.
//! - Partial decoding reads only the bytes that hold the requested elements
//!   (plus the padding byte, which it checks); for whole components with a
//!   padding encoding it reads the whole chunk (see below).
//!
//! ### Departures of zarrs' built-in (0.23.14), which this codec does not copy
//! Each is stated by a named test in `tests/packbits_equivalence.rs`.
//! - It refuses `"start_byte"` / `"end_byte"` and `start_bit` / `end_bit`.
//! - Its partial decoder (used by arrays for any chunk read in part, edge
//!   chunks included) does not shift values back to `first_bit`, and does
//!   not sign-extend `int2` / `int4` into their in-memory byte: `int4` -1
//!   reads as 15.
//! - Its full decode sign-extends only within the byte holding `last_bit`:
//!   `int32` with `last_bit = 11` decodes -5 as 65531.
//! - For whole components (`bits % 8 == 0`, no bit range) it writes no
//!   padding byte even with `"first_byte"` / `"last_byte"` (though its
//!   `encoded_representation` counts one). This codec writes the byte, as
//!   the specification says, and also reads chunks without it (the length
//!   tells the two apart), so arrays the built-in wrote stay readable.
//!
//! ### Codec `configuration` Example - [`PackBitsCodecConfiguration`]:
//! ```rust
//! # let json = serde_json::json!(
//! {
//!     "padding_encoding": "first_byte",
//!     "first_bit": null,
//!     "last_bit": null
//! }
//! # );
//! # use zarrs_extension_codecs::codec::packbits::{PackBitsCodec, PaddingEncoding};
//! # let codec = PackBitsCodec::new_with_json(&json).unwrap();
//! # assert_eq!(codec.padding_encoding(), PaddingEncoding::FirstByte);
//! ```

mod packbits_codec;
mod packbits_configuration;
mod packbits_data_type;
mod packbits_partial_decoder;

use std::sync::Arc;

use zarrs::array::codec::api::{Codec, CodecTraitsV3};
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

use crate::codec::Override;

pub use packbits_codec::PackBitsCodec;
pub use packbits_configuration::{PackBitsCodecConfiguration, PaddingEncoding};

/// The codec name, used in error messages.
pub(crate) const PACKBITS: &str = "packbits";

zarrs::plugin::impl_extension_aliases!(PackBitsCodec, v3: "packbits");

/// Installed over zarrs' built-in by [`register_overrides`](crate::register_overrides):
/// the names zarrs' built-in `packbits` answers to.
pub(crate) const OVERRIDE: Override = Override {
    names: &["packbits"],
    create: <PackBitsCodec as CodecTraitsV3>::create,
};

// Not `inventory::submit!`: zarrs registers a built-in `packbits`, and two
// plugins for one name would race.
impl CodecTraitsV3 for PackBitsCodec {
    fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
        let codec = match metadata.configuration() {
            None => Self::default(),
            Some(configuration) => {
                Self::new_with_configuration(&PackBitsCodecConfiguration::parse(configuration)?)?
            }
        };
        Ok(Codec::ArrayToBytes(Arc::new(codec)))
    }
}

#[cfg(test)]
mod tests;
