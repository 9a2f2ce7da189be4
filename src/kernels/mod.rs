//! Per-element arithmetic, independent of the zarrs glue.
//!
//! Everything here works on typed slices so that it can be unit tested and
//! benchmarked without building a codec. The codec modules pick one
//! monomorphised kernel per chunk and run it over the whole chunk.

pub mod bytes;
pub mod cast;
pub mod minifloat;
pub mod packbits;
pub mod rounding;
pub mod scale_offset;
pub(crate) mod simd;
pub mod transpose;
pub mod vlen;
pub mod vlen_v2;
