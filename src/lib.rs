//! Zarr V3 extension codecs for [zarrs](https://zarrs.dev).
#![warn(missing_docs)]

pub mod codec;
pub mod kernels;
pub mod numeric;
pub mod scalar;
