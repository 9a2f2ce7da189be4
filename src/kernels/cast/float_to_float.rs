//! float -> float: exact widening, or narrowing with rounding and overflow.

use std::mem::MaybeUninit;

use super::driver::{Entry, run};
use super::elements::{
    FloatElem, MapKey, NEAREST_AWAY, NEAREST_EVEN, TOWARDS_NEGATIVE, TOWARDS_POSITIVE,
    TOWARDS_ZERO, WideFloat,
};
use super::{OutOfRangeMode, with_rounding};
use crate::kernels::rounding::RoundingMode;

/// `true` if every value of `S` is a value of `D`.
const fn widens<S: FloatElem, D: FloatElem>() -> bool {
    D::PRECISION >= S::PRECISION
        && D::OVERFLOW_LIMIT >= S::OVERFLOW_LIMIT
        && D::MIN_SUBNORMAL_EXP <= S::MIN_SUBNORMAL_EXP
}

/// Convert floats to floats.
pub(crate) fn float_to_float<S: FloatElem + MapKey, D: FloatElem>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    entries: &[Entry<S, D>],
    rounding: RoundingMode,
    out_of_range: Option<OutOfRangeMode>,
) -> Result<(), usize> {
    if widens::<S, D>() {
        return run(src, dst, entries, move |x| {
            (x.widen().narrow_nearest::<D>(), false)
        });
    }
    let clamp = out_of_range == Some(OutOfRangeMode::Clamp);
    with_rounding!(rounding, MODE => run(src, dst, entries, move |x| narrow::<S::Wide, D, MODE>(x.widen(), clamp)))
}

/// Round `x` to `D` with mode `MODE`; returns the value and whether it overflowed
/// (unless `clamp`, which maps overflow to ±infinity).
#[inline(always)]
pub(crate) fn narrow<W: WideFloat, D: FloatElem, const MODE: u8>(x: W, clamp: bool) -> (D, bool) {
    let nearest: D = x.narrow_nearest();
    let exact = x.to_f64();
    let near = nearest.to_f64();
    // Comparisons with NaN are false, so NaN passes through unchanged.
    let result = match MODE {
        NEAREST_EVEN => nearest,
        TOWARDS_ZERO => {
            if near.abs() > exact.abs() {
                if exact > 0.0 {
                    nearest.next_down()
                } else {
                    nearest.next_up()
                }
            } else {
                nearest
            }
        }
        TOWARDS_POSITIVE => {
            if near < exact {
                nearest.next_up()
            } else {
                nearest
            }
        }
        TOWARDS_NEGATIVE => {
            if near > exact {
                nearest.next_down()
            } else {
                nearest
            }
        }
        _ => {
            debug_assert_eq!(MODE, NEAREST_AWAY);
            // Nearest-away differs from nearest-even only on an exact tie,
            // where the midpoint of the two neighbours (exact in f64) is `x`.
            // Not for NaN (`near != exact` holds for it) nor infinity.
            if near != exact && near.is_finite() {
                let other = if exact > near {
                    nearest.next_up()
                } else {
                    nearest.next_down()
                };
                let midpoint = (near + other.to_f64()) / 2.0;
                if midpoint == exact && other.to_f64().abs() > near.abs() {
                    other
                } else {
                    nearest
                }
            } else {
                nearest
            }
        }
    };
    // With an unbounded exponent the rounded value exceeds the largest
    // finite value iff the result is infinite, or nearest overflowed and a
    // step towards zero came back to MAX although |x| >= 2^(emax+1).
    let overflow = x.is_finite()
        & (result.is_infinite() | (nearest.is_infinite() & (exact.abs() >= D::OVERFLOW_LIMIT)));
    overflow_rule(result, overflow, exact < 0.0, clamp)
}

/// The `out_of_range` rule for a float target, given the rounded `result`
/// and whether the value overflowed the target's finite range: with
/// `clamp` an overflow becomes ±infinity (by the sign of the value), and
/// without it the element fails. Shared with `int_to_float`.
#[inline(always)]
pub(crate) fn overflow_rule<D: FloatElem>(
    result: D,
    overflow: bool,
    negative: bool,
    clamp: bool,
) -> (D, bool) {
    match (overflow, clamp) {
        (false, _) => (result, false),
        (true, true) => (D::infinity(negative), false),
        (true, false) => (result, true),
    }
}
