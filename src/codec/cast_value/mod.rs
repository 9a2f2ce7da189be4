//! The `cast_value` codec.
