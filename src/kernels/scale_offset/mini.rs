//! Floats of at most 8 bits: computed in `f64`, rounded back after each operation.

use super::*;

/// Round `value` into `format` (nearest-even); an overflow becomes ±infinity
/// where the format has it (IEEE, as for the other float types); `None` if
/// the value has no representation.
pub(super) fn mini_round(format: MiniFloatFormat, value: f64) -> Option<u8> {
    match format.round_from_f64(value, RoundingMode::NearestEven) {
        MiniRound::Value(bits) => Some(bits),
        MiniRound::Overflow { negative } => format.infinity_bits(negative),
        MiniRound::NotRepresentable => None,
    }
}

/// One small-float element: `second(round(first(x)))`, rounded, in `f64`.
#[inline(always)]
pub(super) fn mini_step(
    format: MiniFloatFormat,
    bits: u8,
    first: impl Fn(f64) -> f64,
    second: impl Fn(f64) -> f64,
) -> (u8, bool) {
    let x = format.to_f64(bits);
    let Some(d) = mini_round(format, first(x)) else {
        return (bits, true);
    };
    let Some(r) = mini_round(format, second(format.to_f64(d))) else {
        return (bits, true);
    };
    (r, false)
}
