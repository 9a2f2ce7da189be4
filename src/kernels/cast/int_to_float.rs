//! int -> float: exact when the significand is wide enough; otherwise rounded
//! once from the integer itself (never through a narrower float).

use std::mem::MaybeUninit;

use super::driver::{Entry, run};
use super::elements::{
    FloatElem, IntElem, MapKey, NEAREST_AWAY, NEAREST_EVEN, TOWARDS_NEGATIVE, TOWARDS_POSITIVE,
    TOWARDS_ZERO,
};
use super::float_to_float::overflow_rule;
use super::{OutOfRangeMode, with_rounding};
use crate::kernels::rounding::RoundingMode;

/// `v` as `f64` with round-to-odd (exact when `|v| <= 2^53`), so that one
/// more rounding to at most 51 significand bits is correctly rounded.
#[inline(always)]
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
pub(crate) fn i128_to_f64_round_to_odd(v: i128) -> f64 {
    let nearest = v as f64;
    let back = nearest as i128;
    if back == v {
        return nearest;
    }
    let truncated = if back.unsigned_abs() > v.unsigned_abs() {
        f64::from_bits(nearest.to_bits() - 1)
    } else {
        nearest
    };
    f64::from_bits(truncated.to_bits() | 1)
}

/// Convert integers to floats.
pub(crate) fn int_to_float<S: IntElem + MapKey, D: FloatElem>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    entries: &[Entry<S, D>],
    rounding: RoundingMode,
    out_of_range: Option<OutOfRangeMode>,
) -> Result<(), usize> {
    let magnitude = if S::MAX > -S::MIN { S::MAX } else { -S::MIN };
    if magnitude <= 1i128 << D::PRECISION {
        // Every source value is exact in D (e.g. uint8 -> float64).
        return run(src, dst, entries, move |x| {
            (D::from_f64_nearest(x.to_f64()), false)
        });
    }
    let clamp = out_of_range == Some(OutOfRangeMode::Clamp);
    with_rounding!(rounding, MODE => run(src, dst, entries, move |x| round::<D, MODE>(x.to_i128(), clamp)))
}

#[inline(always)]
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
fn round<D: FloatElem, const MODE: u8>(v: i128, clamp: bool) -> (D, bool) {
    let nearest: D = if D::PRECISION >= 53 {
        D::from_f64_nearest(v as f64) // `as` rounds an integer correctly
    } else {
        D::from_f64_nearest(i128_to_f64_round_to_odd(v))
    };
    // Integral floats convert to i128 exactly; ±infinity saturates, which
    // still compares correctly with any i64/u64 value.
    let near = nearest.to_f64() as i128;
    let step_up = nearest.next_up();
    let step_down = nearest.next_down();
    let result = match MODE {
        NEAREST_EVEN => nearest,
        TOWARDS_ZERO => {
            if near.unsigned_abs() > v.unsigned_abs() {
                if v > 0 { step_down } else { step_up }
            } else {
                nearest
            }
        }
        TOWARDS_POSITIVE => {
            if near < v {
                step_up
            } else {
                nearest
            }
        }
        TOWARDS_NEGATIVE => {
            if near > v {
                step_down
            } else {
                nearest
            }
        }
        _ => {
            debug_assert_eq!(MODE, NEAREST_AWAY);
            if near != v && !nearest.is_infinite() {
                let other = if v > near { step_up } else { step_down };
                let other_v = other.to_f64() as i128;
                let tie = !other.is_infinite() && 2 * v == near + other_v;
                if tie && other_v.unsigned_abs() > near.unsigned_abs() {
                    other
                } else {
                    nearest
                }
            } else {
                nearest
            }
        }
    };
    let overflow = result.is_infinite()
        | (nearest.is_infinite() & (v.unsigned_abs() as f64 >= D::OVERFLOW_LIMIT));
    overflow_rule(result, overflow, v < 0, clamp)
}
