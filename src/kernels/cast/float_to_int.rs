//! float -> int: round in the source precision, then range-check, clamp or wrap.

use std::mem::MaybeUninit;

use super::driver::{Entry, run, run_fallible};
use super::elements::{FloatElem, IntElem, MapKey, WideFloat};
use super::float_to_small_int::float_to_small_int;
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
        #[allow(clippy::cast_possible_wrap)] // bits <= 64
        let modulus = S::Wide::pow2(target.bits as i32);
        return run_fallible(src, dst, entries, move |x| {
            let w = x.widen();
            // NaN and infinity have no residue modulo 2^N.
            w.is_finite().then(|| {
                // The remainder of an integral float by 2^N is exact and
                // below 2^64 in magnitude, so it fits i128 exactly.
                let residue = w.round_mode::<MODE>().rem(modulus).to_i128();
                D::from_i128_wrapping(wrap_to_bits(residue, target.bits, target.signed))
            })
        });
    }
    let clamp = out_of_range == Some(OutOfRangeMode::Clamp);
    if target.bits <= 16 {
        return float_to_small_int::<S, D, MODE>(src, dst, entries, clamp, target);
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
