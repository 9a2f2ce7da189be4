//! The codecs, one module each.

pub mod cast_value;
pub mod scale_offset;
