//! float -> int: round in the source precision, then range-check, clamp or wrap.

use std::mem::MaybeUninit;

use super::driver::{Entry, run, run_fallible};
use super::elements::{FloatElem, IntElem, MapKey, WideFloat};
use super::int_to_int::wrap_to_bits;
use super::{IntTarget, OutOfRangeMode, with_rounding};
use crate::kernels::rounding::RoundingMode;

/// Convert floats to integers.
pub(crate) fn float_to_int<S: FloatElem + MapKey, D: IntElem>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    entries: &[Entry<S, D>],
    rounding: RoundingMode,
    out_of_range: Option<OutOfRangeMode>,
    target: IntTarget,
) -> Result<(), usize> {
    with_rounding!(rounding, MODE => convert::<S, D, MODE>(src, dst, entries, out_of_range, target))
}

#[inline(always)]
fn convert<S: FloatElem + MapKey, D: IntElem, const MODE: u8>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    entries: &[Entry<S, D>],
    out_of_range: Option<OutOfRangeMode>,
    target: IntTarget,
) -> Result<(), usize> {
    if out_of_range == Some(OutOfRangeMode::Wrap) {
        return run_fallible(src, dst, entries, |x| {
            let w = x.widen();
            // NaN and infinity have no residue modulo 2^N.
            w.is_finite().then(|| {
                // The remainder of an integral float by 2^N is exact and
                // below 2^64 in magnitude, so it fits i128 exactly.
                let residue = w.round_mode::<MODE>().rem_pow2(target.bits).to_i128();
                D::from_i128_wrapping(wrap_to_bits(residue, target.bits, target.signed))
            })
        });
    }
    let clamp = out_of_range == Some(OutOfRangeMode::Clamp);
    if target.bits <= 16 {
        return if target.lo == D::MIN && target.hi == D::MAX {
            // The bounds are D's own: compile-time constants, so the
            // compiler can simplify the final clamp and narrowing.
            narrow::<S, D, MODE, true>(src, dst, entries, clamp, target)
        } else {
            narrow::<S, D, MODE, false>(src, dst, entries, clamp, target)
        };
    }
    // The bounds are powers of two (or one less): exact in f32 and f64.
    #[allow(clippy::cast_precision_loss)]
    let lo = S::Wide::from_f64_exact(target.lo as f64);
    #[allow(clippy::cast_precision_loss)]
    let hi_exclusive = S::Wide::from_f64_exact((target.hi + 1) as f64);
    let lo_d = D::from_i128_wrapping(target.lo);
    let hi_d = D::from_i128_wrapping(target.hi);
    run(src, dst, entries, move |x| {
        let w = x.widen();
        let r = w.round_mode::<MODE>();
        let in_range = (r >= lo) & (r < hi_exclusive); // false for NaN
        let v = r.to_int_saturating::<D>().clamp_to(lo_d, hi_d);
        // Clamping never applies to NaN or infinity (the spec requires a map).
        let failed = !in_range & (!clamp | !w.is_finite());
        (v, failed)
    })
}

/// Targets of at most 16 bits: clamp in the float domain to `[lo - 1, hi + 1]`
/// first, then round and convert.
///
/// Rounding is monotonic and maps `lo - 1` and `hi + 1` to themselves, so a
/// value rounds out of range exactly when its clamped value does, and the
/// error flag is unchanged. The clamped value is small, so it rounds with a
/// few exact float operations and converts with the truncating instruction
/// (see [`WideFloat::round_small_to_i32`]) instead of the general rounding
/// and a saturating `as`, which LLVM does not vectorise. The result is then
/// clamped to `[lo, hi]` as an integer.
///
/// `FULL`: the target has the whole range of `D` (not a sub-byte type).
#[inline(always)]
#[allow(clippy::cast_possible_truncation)]
fn narrow<S: FloatElem + MapKey, D: IntElem, const MODE: u8, const FULL: bool>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    entries: &[Entry<S, D>],
    clamp: bool,
    target: IntTarget,
) -> Result<(), usize> {
    // |bounds| <= 2^16: exact as i32, f32 and f64.
    let (lo, hi) = if FULL {
        (D::MIN as i32, D::MAX as i32)
    } else {
        (target.lo as i32, target.hi as i32)
    };
    let lo_outside = S::Wide::from_f64_exact(f64::from(lo - 1));
    let hi_outside = S::Wide::from_f64_exact(f64::from(hi + 1));
    run(src, dst, entries, move |x| {
        let w = x.widen();
        // NaN fails the first compare and becomes `lo - 1`: out of range,
        // so it fails below (or is mapped). Strict compares, so that each
        // select is one `maxps` / `minps` (which return the second operand
        // for NaN and for equal operands).
        let c = if w > lo_outside { w } else { lo_outside };
        let c = if c < hi_outside { c } else { hi_outside };
        // SAFETY: `c` is not NaN and within [lo - 1, hi + 1], so its
        // magnitude is at most 2^16 + 1 < 2^21.
        let r = unsafe { c.round_small_to_i32::<MODE>() };
        let in_range = (r >= lo) & (r <= hi);
        let v = D::from_i128_wrapping(i128::from(r.max(lo).min(hi)));
        // Clamping never applies to NaN or infinity (the spec requires a map).
        (v, !in_range & (!clamp | !w.is_finite()))
    })
}
