//! Targets of at most 8 bits (`float8_e4m3`, `float4_e2m1fn`, ...).
//!
//! These are rare enough that a per-element call into the generic
//! [`MiniFloatFormat`] rounding is acceptable; the rounding itself is exact
//! because every source value is first made exact (floats) or rounded to odd
//! (integers above 2^53) in `f64`, which has far more than the two extra bits
//! a correct second rounding needs.

use std::mem::MaybeUninit;

use super::OutOfRangeMode;
use super::driver::{Entry, run_fallible};
use super::elements::{FloatElem, IntElem, MapKey};
use super::int_to_float::i128_to_f64_round_to_odd;
use crate::kernels::minifloat::{MiniFloatFormat, MiniRound};
use crate::kernels::rounding::RoundingMode;

/// Round an exact (or round-to-odd) `f64` into `format`, applying `out_of_range`.
fn round(
    x: f64,
    format: MiniFloatFormat,
    rounding: RoundingMode,
    out_of_range: Option<OutOfRangeMode>,
) -> Option<u8> {
    match format.round_from_f64(x, rounding) {
        MiniRound::Value(bits) => Some(bits),
        // Clamp goes to ±infinity where the format has it, else to ±max.
        MiniRound::Overflow { negative } if out_of_range == Some(OutOfRangeMode::Clamp) => format
            .infinity_bits(negative)
            .or_else(|| format.max_finite_signed(negative)),
        MiniRound::Overflow { .. } | MiniRound::NotRepresentable => None,
    }
}

/// Convert floats to a small float type.
pub(crate) fn from_float<S: FloatElem + MapKey>(
    src: &[S],
    dst: &mut [MaybeUninit<u8>],
    entries: &[Entry<S, u8>],
    format: MiniFloatFormat,
    rounding: RoundingMode,
    out_of_range: Option<OutOfRangeMode>,
) -> Result<(), usize> {
    run_fallible(src, dst, entries, |x| {
        round(x.to_f64(), format, rounding, out_of_range)
    })
}

/// Convert integers to a small float type.
pub(crate) fn from_int<S: IntElem + MapKey>(
    src: &[S],
    dst: &mut [MaybeUninit<u8>],
    entries: &[Entry<S, u8>],
    format: MiniFloatFormat,
    rounding: RoundingMode,
    out_of_range: Option<OutOfRangeMode>,
) -> Result<(), usize> {
    run_fallible(src, dst, entries, |x| {
        round(
            i128_to_f64_round_to_odd(x.to_i128()),
            format,
            rounding,
            out_of_range,
        )
    })
}
