//! `float64` decoding (`x / scale + offset`) on CPUs with AVX2 and FMA,
//! half through the divider and half through fused multiply-adds, with the
//! same correctly rounded results as plain division.
//!
//! # Why
//!
//! Decoding float64 is bound by `vdivpd`: about 0.36 ns per element on the
//! machine in `docs/performance.md`, whether the chunk is in L2 or not, which
//! is most of the time of the `scale_offset` + `cast_value` decode chain.
//! Multiplying by `1 / scale` instead would not give the correctly rounded
//! quotient, and would differ from zarr-python (numpy divides). The method
//! below computes the correctly rounded quotient from the reciprocal with
//! fused multiply-adds. On its own it is no faster there (0.37 ns per
//! element: it keeps the two FMA pipes as busy as the divider is), but the
//! divider and the FMA pipes are separate units: sending every other vector
//! of four through each gives 0.27 ns per element.
//!
//! # How, and why it is exact
//!
//! With `y = RN(1/b)` (relative error at most 2^-53) and `a`, `b` normal:
//!
//! 1. `q0 = RN(a·y)` is within about 2^-52 (relative) of `a/b`.
//! 2. `r0 = RN(a - b·q0)` (one FMA) and `q1 = RN(q0 + r0·y)` (one FMA). Writing
//!    `q0 = (a/b)(1 + η)` and `y = (1/b)(1 + ε)`, the exact sum
//!    `q0 + r0·y` is `(a/b)(1 - η(ε + δ + εδ))` with `|δ| <= 2^-53` the
//!    rounding error of `r0`: a relative error of about 2^-104, so `q1` is a
//!    faithful rounding of `a/b` (within one ulp).
//! 3. `r1 = a - b·q1` is then exactly representable and the FMA computes it
//!    exactly, and `q2 = RN(q1 + r1·y)` is exactly `RN(a/b)`: Markstein's
//!    theorem (y within half an ulp of `1/b`, `q1` faithful, no underflow or
//!    overflow; Markstein 1990, also in Muller et al., *Handbook of
//!    Floating-Point Arithmetic*, the chapter on division with an FMA).
//!
//! The conditions hold when `2^-100 <= |b| <= 2^100` (checked once per
//! chunk) and `2^-900 <= |a| <= 2^900` (cautious bounds, not the exact
//! limits): then `y`, `q0`, `q1` and the quotient are normal, and each
//! residual `a - b·q` is zero or a multiple of about `2^(e_a - 106)` (`e_a`
//! the exponent of `a`), so it is normal too and nothing underflows. A vector of four
//! elements with any other `a` (zero, subnormal, huge, infinite or NaN) is
//! divided with `vdivpd`, so such values keep the exact IEEE behaviour,
//! signed zeros and NaN propagation included. `+ offset` is a separate,
//! rounded addition, as before. The tests compare every element with plain
//! division, on random bit patterns, special values and quotients that lie
//! close to a rounding midpoint.

use std::arch::x86_64::{
    __m256d, _CMP_GE_OQ, _CMP_LE_OQ, _mm256_add_pd, _mm256_and_pd, _mm256_cmp_pd, _mm256_div_pd,
    _mm256_fmadd_pd, _mm256_fnmadd_pd, _mm256_loadu_pd, _mm256_movemask_pd, _mm256_mul_pd,
    _mm256_set1_pd, _mm256_storeu_pd,
};

/// `2^e` for a normal exponent `e`.
const fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

/// Smallest and largest `|scale|` for which exactness is proven here.
const SCALE_RANGE: (f64, f64) = (pow2(-100), pow2(100));
/// Smallest and largest `|x|` for which exactness is proven here.
const VALUE_RANGE: (f64, f64) = (pow2(-900), pow2(900));

/// Whether [`decode`] may be used for this `scale` on this CPU.
pub(super) fn usable(scale: f64) -> bool {
    let s = scale.abs();
    crate::kernels::simd::fma_enabled() && s >= SCALE_RANGE.0 && s <= SCALE_RANGE.1
}

/// `a / b` in each lane, correctly rounded, from `y = RN(1/b)`: one
/// multiplication and two correction steps (see the module doc). Only for
/// `b` and lanes of `a` within [`SCALE_RANGE`] and [`VALUE_RANGE`].
#[inline]
#[target_feature(enable = "avx2,fma")]
fn markstein(a: __m256d, b: __m256d, y: __m256d) -> __m256d {
    let q0 = _mm256_mul_pd(a, y);
    let r0 = _mm256_fnmadd_pd(b, q0, a); // a - b·q0, rounded
    let q1 = _mm256_fmadd_pd(r0, y, q0); // faithful
    let r1 = _mm256_fnmadd_pd(b, q1, a); // a - b·q1, exact
    _mm256_fmadd_pd(r1, y, q1)
}

/// `dst[i] = src[i] / scale + offset` for `n` elements; `src` and `dst` may
/// be the same buffer (each vector is read before it is written), and need
/// not be aligned.
///
/// # Safety
/// The CPU must support AVX2 and FMA ([`usable`] checks it), `src` must be
/// valid for reading and `dst` for writing `n` elements, and
/// `2^-100 <= |scale| <= 2^100` ([`usable`] checks that too).
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn decode(src: *const f64, dst: *mut f64, n: usize, scale: f64, offset: f64) {
    let b = _mm256_set1_pd(scale);
    let y = _mm256_set1_pd(1.0 / scale);
    let off = _mm256_set1_pd(offset);
    let abs_mask = _mm256_set1_pd(f64::from_bits(!(1 << 63)));
    let (lo, hi) = (_mm256_set1_pd(VALUE_RANGE.0), _mm256_set1_pd(VALUE_RANGE.1));
    // Two vectors per step: one through the divider, one through the FMA
    // pipes, so that both units work at once.
    let step = |a| {
        let magnitude = _mm256_and_pd(a, abs_mask);
        // Ordered compares: false for NaN, which takes the division.
        let in_range = _mm256_and_pd(
            _mm256_cmp_pd::<_CMP_GE_OQ>(magnitude, lo),
            _mm256_cmp_pd::<_CMP_LE_OQ>(magnitude, hi),
        );
        if _mm256_movemask_pd(in_range) == 0b1111 {
            markstein(a, b, y)
        } else {
            _mm256_div_pd(a, b)
        }
    };
    let pairs = n / 8 * 8;
    for i in (0..pairs).step_by(8) {
        // SAFETY: `i + 8 <= n`, within what the caller guarantees.
        let (a, c) = unsafe { (_mm256_loadu_pd(src.add(i)), _mm256_loadu_pd(src.add(i + 4))) };
        let qa = _mm256_div_pd(a, b);
        let qc = step(c);
        // SAFETY: as for the loads.
        unsafe {
            _mm256_storeu_pd(dst.add(i), _mm256_add_pd(qa, off));
            _mm256_storeu_pd(dst.add(i + 4), _mm256_add_pd(qc, off));
        }
    }
    for i in pairs..n {
        // SAFETY: `i < n`; unaligned access is allowed for.
        unsafe {
            dst.add(i)
                .write_unaligned(src.add(i).read_unaligned() / scale + offset)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_rng::SplitMix64 as Rng;

    /// Random normal floats for these tests.
    trait NormalFloats {
        /// A normal float with a random significand and sign, and an
        /// exponent in `[lo, hi]`.
        fn normal(&mut self, lo: i32, hi: i32) -> f64;
    }

    impl NormalFloats for Rng {
        #[allow(clippy::cast_possible_wrap, clippy::cast_sign_loss)]
        fn normal(&mut self, lo: i32, hi: i32) -> f64 {
            let r = self.next();
            let span = (hi - lo + 1) as u64;
            let e = lo + (r % span) as i32;
            let bits = ((r >> 12) & ((1 << 52) - 1)) | (((1023 + e) as u64) << 52);
            let x = f64::from_bits(bits);
            if self.next() & 1 == 0 { x } else { -x }
        }
    }

    /// `decode` gives exactly `x / b + (-0.0)`, i.e. the IEEE quotient (the
    /// offset -0.0 leaves every quotient, signed zeros included, as it is).
    fn check(a: &[f64], b: f64) {
        let mut out = vec![0.0; a.len()];
        // SAFETY: the callers checked `usable(b)`; both buffers hold
        // `a.len()` elements.
        unsafe { decode(a.as_ptr(), out.as_mut_ptr(), a.len(), b, -0.0) };
        for (x, y) in a.iter().zip(&out) {
            let want = x / b;
            assert!(
                want.to_bits() == y.to_bits() || (want.is_nan() && y.is_nan()),
                "{x:e} / {b:e}: {y:e}, expected {want:e}"
            );
        }
    }

    /// Divisors at the ends of the allowed range, with all-ones and
    /// single-bit significands, and ordinary ones.
    fn scales(rng: &mut Rng) -> Vec<f64> {
        let mut s = vec![
            0.1,
            -3.0,
            1.0 / 3.0,
            1.0,
            f64::from_bits(0x3fff_ffff_ffff_ffff), // 2 - 2^-52
            f64::from_bits(0x3ff0_0000_0000_0001), // 1 + 2^-52
            pow2(-100),
            -pow2(100),
            pow2(100) * (1.0 - f64::EPSILON / 2.0),
            1e-30,
            1e30,
        ];
        s.extend((0..8).map(|_| rng.normal(-100, 99)));
        s
    }

    #[test]
    fn quotients_are_correctly_rounded() {
        if !usable(1.0) {
            eprintln!("this CPU has no AVX2 + FMA: the method is not used here");
            return;
        }
        let mut rng = Rng(0x5eed);
        for b in scales(&mut rng) {
            assert!(usable(b), "{b:e}");
            // Random bit patterns (every exponent, zeros, subnormals,
            // infinities and NaN included), and normal values in range.
            let mut a: Vec<f64> = (0..20_000).map(|_| f64::from_bits(rng.next())).collect();
            a.extend((0..20_000).map(|_| rng.normal(-900, 900)));
            a.extend([
                0.0,
                -0.0,
                f64::INFINITY,
                f64::NAN,
                pow2(-900),
                -pow2(900),
                5e-324,
            ]);
            check(&a, b);

            // Quotients near a rounding midpoint: for a random q, about
            // b * (q + ulp(q) / 2) (rounded twice), and its neighbours.
            let mut hard = Vec::new();
            for _ in 0..10_000 {
                let q = rng.normal(-700, 700);
                let half_ulp = (q.next_up() - q) / 2.0;
                let a0 = b * q + b * half_ulp;
                let mut x = a0;
                for _ in 0..3 {
                    x = x.next_down();
                }
                for _ in 0..7 {
                    hard.push(x);
                    x = x.next_up();
                }
            }
            check(&hard, b);
        }
    }

    /// `B^-1 mod 2^64` of an odd `B` (Newton's iteration doubles the correct
    /// low bits each step: 1, 2, 4, ..., 64).
    fn inverse_mod_2_64(b: u64) -> u64 {
        let mut x = b; // correct to 3 bits for odd b
        for _ in 0..5 {
            x = x.wrapping_mul(2u64.wrapping_sub(b.wrapping_mul(x)));
        }
        assert_eq!(x.wrapping_mul(b), 1);
        x
    }

    /// The hardest quotients to round: `a / b` within about 2^-105
    /// (relative) of a midpoint between two floats. (Even here one
    /// correction step happens to suffice, because `q0` is already
    /// faithful; the second step rests on the proof in the module doc.)
    ///
    /// For an odd 53-bit `B` and a 54-bit odd `K` with `K·B ≡ ±1 (mod 2^54)`,
    /// `K·B = M·2^54 ± 1` with `M <= 2^53`, so `a = M·2^54` and `b = B` are
    /// floats and `a / b = K ∓ 1/B`: next to the midpoint `K` of the floats
    /// `K - 1` and `K + 1`. Scaled by powers of two to spread the exponents.
    #[test]
    #[allow(clippy::cast_precision_loss)]
    fn quotients_next_to_a_midpoint_are_correctly_rounded() {
        if !usable(1.0) {
            return;
        }
        let mut rng = Rng(0xd1ff);
        let mut tested = 0;
        while tested < 4000 {
            let big = (rng.next() >> 11) | (1 << 52) | 1; // odd, 53 bits
            // Keep divisors whose reciprocal is rounded by nearly half an ulp
            // (1 - B·RN(1/B), exact with an FMA, near 2^-53 in magnitude),
            // where the intermediate errors are largest.
            let bf = big as f64;
            if bf.mul_add(-(1.0 / bf), 1.0).abs() < 0.8 * pow2(-53) {
                continue;
            }
            for sign in [1u64, u64::MAX] {
                let k = inverse_mod_2_64(big).wrapping_mul(sign) & ((1 << 54) - 1);
                if k < 1 << 53 {
                    continue; // K must have exactly 54 bits
                }
                // K·B = M·2^54 + 1, or (M + 1)·2^54 - 1 with M = K·B >> 54.
                let product = u128::from(k) * u128::from(big);
                let m = u64::try_from(product >> 54).unwrap() + u64::from(sign != 1);
                assert!(m <= 1 << 53);
                // Both exact: M and B have at most 53 bits.
                let (a, b) = (m as f64 * pow2(54), big as f64);
                // a / b = K - 1/B (or K + 1/B): the nearest float is K - 1
                // (or K + 1), both even and so exact in f64.
                let nearest = if sign == 1 { k - 1 } else { k + 1 };
                assert_eq!(a / b, nearest as f64);
                let shift_b = i32::try_from(rng.next() % 160).unwrap() - 80 - 52;
                let shift_a = i32::try_from(rng.next() % 1200).unwrap() - 600 - 106;
                let (a, b) = (a * pow2(shift_a), b * pow2(shift_b));
                // Eight elements: the second four take the FMA steps.
                check(&[a, -a, a, -a, a, -a, a, -a], b);
                tested += 1;
            }
        }
    }

    /// The FMA steps themselves, lane by lane, on dividends at and near the
    /// ends of the accepted range and random ones (the loop decides per
    /// vector which path to take, so this checks the arithmetic directly).
    #[test]
    fn markstein_steps_match_division() {
        if !usable(1.0) {
            return;
        }
        let mut rng = Rng(0xfa57);
        let ends = [
            pow2(-900),
            pow2(900),
            pow2(-900).next_up(),
            pow2(900).next_down(),
        ];
        for b in scales(&mut rng) {
            let mut a: Vec<f64> = ends.iter().flat_map(|&x| [x, -x]).collect();
            a.extend((0..4000).map(|_| rng.normal(-900, 899)));
            for lanes in a.chunks_exact(4) {
                let mut q = [0.0; 4];
                // SAFETY: `usable` checked AVX2 and FMA; the arrays hold 4.
                unsafe {
                    use std::arch::x86_64::{_mm256_loadu_pd, _mm256_storeu_pd};
                    let v = markstein(
                        _mm256_loadu_pd(lanes.as_ptr()),
                        _mm256_set1_pd(b),
                        _mm256_set1_pd(1.0 / b),
                    );
                    _mm256_storeu_pd(q.as_mut_ptr(), v);
                }
                for (x, got) in lanes.iter().zip(q) {
                    assert_eq!(got.to_bits(), (x / b).to_bits(), "{x:e} / {b:e}");
                }
            }
        }
    }

    /// In place and at every alignment, as the codec calls it.
    #[test]
    fn in_place_and_unaligned() {
        if !usable(1.0) {
            return;
        }
        let values: Vec<f64> = (0..37).map(|i| f64::from(i) * 1.5 - 7.0).collect();
        for shift in 0..8 {
            let mut bytes = vec![0u8; shift + values.len() * 8];
            bytes[shift..].copy_from_slice(bytemuck::cast_slice(&values));
            let p = bytes[shift..].as_mut_ptr().cast::<f64>();
            // SAFETY: `usable` checked above; `p` covers `values.len()`
            // (unaligned) elements.
            unsafe { decode(p, p, values.len(), 0.1, 2.5) };
            for (i, x) in values.iter().enumerate() {
                let got = f64::from_ne_bytes(bytes[shift + 8 * i..][..8].try_into().unwrap());
                assert_eq!(
                    got.to_bits(),
                    (x / 0.1 + 2.5).to_bits(),
                    "shift {shift}, {i}"
                );
            }
        }
    }
}
