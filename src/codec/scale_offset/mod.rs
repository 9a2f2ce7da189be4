//! The `scale_offset` codec.
