//! int -> int: exact when in range; otherwise an error, a clamp or a wrap.

use std::mem::MaybeUninit;

use super::driver::{Entry, run};
use super::elements::{IntElem, MapKey};
use super::{IntTarget, OutOfRangeMode};

/// Reduce `v` modulo `2^bits` into the range of a `bits`-wide integer.
#[inline(always)]
pub(crate) fn wrap_to_bits(v: i128, bits: u32, signed: bool) -> i128 {
    let modulus = 1i128 << bits;
    let residue = v & (modulus - 1);
    if signed && residue >= modulus >> 1 {
        residue - modulus
    } else {
        residue
    }
}

/// Convert integers to integers.
pub(crate) fn int_to_int<S: IntElem + MapKey, D: IntElem>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    entries: &[Entry<S, D>],
    out_of_range: Option<OutOfRangeMode>,
    target: IntTarget,
) -> Result<(), usize> {
    if target.lo <= S::MIN && S::MAX <= target.hi {
        // Every source value is in range (e.g. uint8 -> uint16), so no rule
        // applies: a plain widening, without the compares and clamp below.
        return run(src, dst, entries, move |x| {
            (D::from_i128_wrapping(x.to_i128()), false)
        });
    }
    if out_of_range == Some(OutOfRangeMode::Wrap) {
        return run(src, dst, entries, move |x| {
            let v = wrap_to_bits(x.to_i128(), target.bits, target.signed);
            (D::from_i128_wrapping(v), false)
        });
    }
    let clamp = out_of_range == Some(OutOfRangeMode::Clamp);
    // The target range intersected with the source's: both contain 0, so
    // the intersection is never empty, and comparisons stay in `S`.
    let lo = S::from_i128_wrapping(target.lo.max(S::MIN));
    let hi = S::from_i128_wrapping(target.hi.min(S::MAX));
    run(src, dst, entries, move |x| {
        let in_range = (x >= lo) & (x <= hi);
        let v = D::from_i128_wrapping(x.clamp_to(lo, hi).to_i128());
        (v, !in_range & !clamp)
    })
}
