//! Zarr V3 extension codecs for [zarrs](https://zarrs.dev).
//!
//! Add the crate and link it; its codecs register themselves with zarrs
//! through `inventory`, so arrays that use them open like any other.
//! [`open_array`] is the way in: it installs the overrides below
//! ([`register_overrides`]), opens the array, runs the codecs' checks, and
//! says what is missing when an array cannot be opened (a zarrs cargo
//! feature, see [`open_error_hint`]):
//!
//! ```no_run
//! use std::sync::Arc;
//! use zarrs_extension_codecs::{ArrayReadExt, open_array};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Arc::new(zarrs::filesystem::FilesystemStore::new("reflectance.zarr")?);
//! let array = open_array(store, "/")?;
//! let data: Vec<f64> = array.retrieve_array_subset_vec(&array.subset_all())?;
//! # Ok(()) }
//! ```
//!
//! | codec | kind | registered |
//! | --- | --- | --- |
//! | [`scale_offset`](codec::scale_offset) | array -> array | automatically |
//! | [`cast_value`](codec::cast_value) | array -> array | automatically |
//! | [`bytes`](codec::bytes) | array -> bytes | by [`register_overrides`] |
//! | [`transpose`](codec::transpose) | array -> array | by [`register_overrides`] |
//! | [`packbits`](codec::packbits) | array -> bytes | by [`register_overrides`] |
//! | [`zarrs.vlen`](codec::vlen) | array -> bytes | by [`register_overrides`] |
//! | [`vlen-utf8`](codec::vlen_v2) | array -> bytes | by [`register_overrides`] |
//! | [`vlen-bytes`](codec::vlen_v2) | array -> bytes | by [`register_overrides`] |
//!
//! zarrs 0.23 has built-in codecs of the last six names; two `inventory`
//! plugins for one name would race, so this crate's versions are installed
//! only by [`register_overrides`], through zarrs' runtime registry
//! ([`open_array`] calls it). Where zarrs' built-ins would read wrong values
//! without a word (`bytes` on sub-byte types, `packbits` on signed
//! integers), [`validate_codecs`] and [`ArrayReadExt`] refuse with an error
//! naming [`register_overrides`].
//!
//! An array whose fill value does not survive its codecs (zarr-python
//! writes them) is read as zarr-python reads it; writing it is refused, as
//! the `cast_value` spec requires ([`fill_value_warning`]).
//!
//! zarrs creates a codec from its metadata before it knows the array's data
//! type, so checks that need the data type run at the first chunk access;
//! [`validate_codecs`] or [`open_array`] run them straight away.
//!
//! The per-element arithmetic lives in [`kernels`], apart from the zarrs
//! glue in [`codec`], so that it can be tested and benchmarked on its own.
//! [`slices`] runs them over buffers of the caller's own (one chunk from one
//! buffer into another, split across threads as the codecs do): the entry
//! points of the Python package in `python/`.
//!
//! Feature `remote` adds `remote`: stores at `http(s)://` and `s3://` URLs
//! through object_store, for zarrs' sync and async APIs.
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod codec;
mod error_chain;
mod hints;
pub mod kernels;
pub mod numeric;
mod overrides;
pub mod read;
// Used by `remote`; its `redact_url` is public whatever the features.
#[cfg_attr(not(feature = "remote"), allow(dead_code))]
mod redact;
mod registered;
#[cfg(feature = "remote")]
#[cfg_attr(docsrs, doc(cfg(feature = "remote")))]
pub mod remote;
pub mod scalar;
pub mod slices;
#[cfg(test)]
mod test_rng;
#[cfg(test)]
mod test_support;
mod validate;
pub mod write;

pub use error_chain::error_chain;
pub use hints::{open_error_hint, zarrs_feature_of_codec};
pub use overrides::register_overrides;
#[cfg(feature = "async")]
pub use read::AsyncArrayReadExt;
pub use read::{ArrayReadExt, ObjectChanged, OsReadError, WindowAt};
pub use redact::redact_url;
pub use registered::{CodecRegistration, registered_codecs};
pub use validate::{
    OpenArrayError, fill_value_warning, open_array, validate_codecs, validate_codecs_for_reading,
    validate_codecs_for_reading_with_warning,
};
pub use write::ArrayWriteExt;
#[cfg(feature = "async")]
pub use write::AsyncArrayWriteExt;

/// The Rust blocks of the README and of `docs/` as doc tests: `cargo test
/// --doc` compiles them, and runs those not marked `no_run`. Pages with a
/// block that needs feature `remote` are tested with it on (as the test
/// command does). `tests/local/docs.rs` fails when a page with a Rust block is
/// missing here.
#[cfg(doctest)]
mod docs {
    #[cfg(feature = "remote")]
    #[doc = include_str!("../README.md")]
    mod readme {}
    #[cfg(feature = "remote")]
    #[doc = include_str!("../docs/stores-and-remote.md")]
    mod stores_and_remote {}
    #[doc = include_str!("../docs/errors.md")]
    mod errors {}
    #[doc = include_str!("../docs/overrides.md")]
    mod overrides {}
    #[doc = include_str!("../docs/reading-fast.md")]
    mod reading_fast {}
}
