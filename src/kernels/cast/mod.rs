//! `cast_value` conversions.
