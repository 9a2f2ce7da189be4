//! Helpers for the unit tests: smaller sweeps under Miri, and exact powers
//! of two.
//!
//! # Sweeps under Miri
//!
//! Miri interprets a test thousands of times slower than native code, so the
//! sweeps that give the vectorised loops every length, alignment and type
//! would take hours there. Under `cfg(miri)` a sweep keeps its first cases
//! (the short lengths, where the scalar tails and misaligned starts are) and
//! a count shrinks. Miri reports no AVX2, so it runs the portable copies of
//! the kernels only, whose loops need no long buffers to reach every branch.

/// `cases` natively; under Miri its first `keep`.
pub(crate) fn first<T: Clone>(cases: &[T], keep: usize) -> Vec<T> {
    let n = if cfg!(miri) {
        keep.min(cases.len())
    } else {
        cases.len()
    };
    cases[..n].to_vec()
}

/// `native` natively, `miri` under Miri.
pub(crate) const fn size(native: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { native }
}

/// Native-endian element bytes (possibly unaligned) to elements.
pub(crate) fn elements<T: bytemuck::Pod>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(size_of::<T>())
        .map(bytemuck::pod_read_unaligned)
        .collect()
}

/// `2^exp` as an `f64`, exact, for `-1022 <= exp <= 1023`: test values and
/// goldens are built with it rather than with std's `powi`, whose precision
/// is unspecified (Miri perturbs it, and a golden `2^-6` then misses by an
/// ulp).
#[allow(clippy::cast_sign_loss)]
pub(crate) fn pow2(exp: i32) -> f64 {
    assert!((-1022..=1023).contains(&exp), "2^{exp} is not a normal f64");
    f64::from_bits(((exp + 1023) as u64) << 52)
}

/// `2^exp` as an `f32`, exact, for `-126 <= exp <= 127`.
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn pow2_f32(exp: i32) -> f32 {
    assert!((-126..=127).contains(&exp), "2^{exp} is not a normal f32");
    pow2(exp) as f32
}

/// `floor(log2(x))` for a positive normal `x`, exact (from the exponent
/// bits; std's `log2` has unspecified precision too).
#[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
pub(crate) fn floor_log2(x: f64) -> i32 {
    assert!(x.is_normal() && x > 0.0, "floor_log2({x})");
    ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_by_hand() {
        assert_eq!(pow2(0), 1.0);
        assert_eq!(pow2(-6), 0.015_625);
        assert_eq!(pow2(10), 1024.0);
        assert_eq!(pow2(-1022), f64::MIN_POSITIVE);
        assert_eq!(pow2_f32(-126), f32::MIN_POSITIVE);
        assert_eq!(pow2_f32(-11), 1.0 / 2048.0);
        assert_eq!(floor_log2(240.0), 7);
        assert_eq!(floor_log2(256.0), 8);
        assert_eq!(floor_log2(0.75), -1);
    }
}
