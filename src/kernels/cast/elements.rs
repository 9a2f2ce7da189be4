//! What the cast kernels need to know about each element type.
//!
//! Source floats are widened to a [`WideFloat`] (`f32` or `f64`) without loss
//! before anything else happens: rounding a value is a function of its exact
//! value, so working on the exact widened value is rounding "in the source
//! precision", and it halves the number of kernels.

use half::{bf16, f16};

/// An element that can be viewed in a byte buffer.
pub(crate) trait Elem: bytemuck::Pod + Copy + PartialEq + Send + Sync + 'static {}
impl<T: bytemuck::Pod + Copy + PartialEq + Send + Sync + 'static> Elem for T {}

/// `f32` or `f64`: what source floats are widened to.
pub(crate) trait WideFloat: Elem + PartialOrd + MapKey {
    fn is_finite(self) -> bool;
    fn to_f64(self) -> f64;
    /// Round to an integral value in this type with rounding mode `MODE`.
    fn round_mode<const MODE: u8>(self) -> Self;
    /// `2^exp` (saturating to infinity).
    fn pow2(exp: i32) -> Self;
    /// `self % modulus` (for an integral `self` and a power of two
    /// `modulus`, exact).
    fn rem(self, modulus: Self) -> Self;
    /// `self` as `i128` (saturating; exact for integral values below 2^127).
    fn to_i128(self) -> i128;
    /// From `f64`, exact for the values it is used with (integers that are
    /// small or powers of two).
    fn from_f64_exact(x: f64) -> Self;
    /// Saturating conversion to an integer (`as` semantics: NaN -> 0).
    fn to_int_saturating<D: IntElem>(self) -> D;
    /// `self` rounded with mode `MODE` to an `i32`, for a small value that a
    /// caller has already clamped.
    ///
    /// Unlike `as`, whose saturation and NaN rule LLVM scalarises, this is a
    /// plain truncating conversion (`cvttps2dq` / `cvttpd2dq`) plus a few
    /// compares, and vectorises on SSE2 and AVX2 alike.
    ///
    /// # Safety
    /// `self` must not be NaN and its magnitude must be at most 2^21 (so the
    /// rounding below is exact and the conversion cannot overflow).
    unsafe fn round_small_to_i32<const MODE: u8>(self) -> i32;

    /// Nearest (ties to even) value in a float type, correctly rounded.
    fn narrow_nearest<D: FloatElem>(self) -> D;
}

macro_rules! impl_wide_float {
    ($t:ty, $sat:ident, $narrow:ident, $big:expr) => {
        impl WideFloat for $t {
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.into()
            }
            #[inline(always)]
            fn round_mode<const MODE: u8>(self) -> Self {
                // Baseline x86-64 (SSE2) has no rounding instruction, so
                // `round_ties_even` / `trunc` / ... become libm calls and the
                // loop stops vectorising. Adding and subtracting 2^(p-1)
                // rounds a magnitude below 2^(p-1) to an integer, ties to
                // even, exactly; larger magnitudes are integral already. The
                // other modes follow from that value with exact compares.
                const BIG: $t = $big;
                let a = self.abs();
                let nearest = (a + BIG) - BIG;
                // Selects, not `+ 0.0`, which would turn -0.0 into +0.0.
                let truncated = if nearest > a { nearest - 1.0 } else { nearest };
                let magnitude = match MODE {
                    NEAREST_EVEN => nearest,
                    NEAREST_AWAY => {
                        if a - truncated >= 0.5 {
                            truncated + 1.0
                        } else {
                            truncated
                        }
                    }
                    _ => truncated,
                };
                let signed = magnitude.copysign(self);
                let rounded = match MODE {
                    TOWARDS_POSITIVE => {
                        if signed < self {
                            signed + 1.0
                        } else {
                            signed
                        }
                    }
                    TOWARDS_NEGATIVE => {
                        if signed > self {
                            signed - 1.0
                        } else {
                            signed
                        }
                    }
                    _ => signed,
                };
                // NaN fails `a < BIG` and is returned as it is.
                if a < BIG { rounded } else { self }
            }
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            fn pow2(exp: i32) -> Self {
                // Built from the bits of an f64, so exact (and the narrowing
                // `as` of a power of two is exact, or saturates). Not
                // `powi`: its precision is unspecified, and Miri perturbs
                // it (2^8 stopped being 256 and broke `wrap`).
                let x = if exp > 1023 {
                    f64::INFINITY
                } else if exp >= -1022 {
                    f64::from_bits(((exp + 1023) as u64) << 52)
                } else if exp >= -1074 {
                    f64::from_bits(1u64 << (exp + 1074)) // subnormal
                } else {
                    0.0
                };
                x as $t
            }
            #[inline(always)]
            fn rem(self, modulus: Self) -> Self {
                self % modulus
            }
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation)]
            fn to_i128(self) -> i128 {
                self as i128
            }
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation)]
            fn from_f64_exact(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn to_int_saturating<D: IntElem>(self) -> D {
                D::$sat(self)
            }
            #[inline(always)]
            #[allow(clippy::cast_precision_loss)]
            unsafe fn round_small_to_i32<const MODE: u8>(self) -> i32 {
                debug_assert!(self.abs() <= 2_097_152.0); // 2^21, also false for NaN
                // Adding 1.5 * 2^(p-1) moves a magnitude below 2^(p-2) into
                // [2^(p-1), 2^p), where the spacing is 1: the sum is rounded
                // to an integer, ties to even, and subtracting gives that
                // integer back exactly, for either sign (no `abs` needed).
                const MAGIC: $t = 1.5 * $big;
                // SAFETY (all `to_int_unchecked` below): the caller guarantees
                // a finite value of magnitude <= 2^21, and rounding it to an
                // integer keeps it within 2^21 + 1, far inside `i32`.
                let truncated = || unsafe { self.to_int_unchecked::<i32>() };
                match MODE {
                    TOWARDS_ZERO => truncated(),
                    NEAREST_AWAY => {
                        let t = truncated();
                        // Exact: `self` and `t` share their integer bits.
                        let fraction = self - t as $t;
                        t + i32::from(fraction >= 0.5) - i32::from(fraction <= -0.5)
                    }
                    _ => {
                        let nearest = (self + MAGIC) - MAGIC;
                        // SAFETY: as for `truncated` above.
                        let n = unsafe { nearest.to_int_unchecked::<i32>() };
                        match MODE {
                            TOWARDS_NEGATIVE => n - i32::from(nearest > self),
                            TOWARDS_POSITIVE => n + i32::from(nearest < self),
                            _ => n,
                        }
                    }
                }
            }
            #[inline(always)]
            fn narrow_nearest<D: FloatElem>(self) -> D {
                D::$narrow(self)
            }
        }
    };
}
impl_wide_float!(f32, from_f32_saturating, from_f32_nearest, 8_388_608.0); // 2^23
impl_wide_float!(
    f64,
    from_f64_saturating,
    from_f64_nearest,
    4_503_599_627_370_496.0
); // 2^52

/// Rounding modes as const generic parameters, so that each kernel is
/// monomorphised per mode and the mode never costs a branch per element.
pub(crate) const NEAREST_EVEN: u8 = 0;
pub(crate) const TOWARDS_ZERO: u8 = 1;
pub(crate) const TOWARDS_POSITIVE: u8 = 2;
pub(crate) const TOWARDS_NEGATIVE: u8 = 3;
pub(crate) const NEAREST_AWAY: u8 = 4;

/// A float element type (source or target).
pub(crate) trait FloatElem: Elem {
    /// The type this widens to without loss.
    type Wide: WideFloat;
    /// Significand bits including the implicit one.
    const PRECISION: u32;
    /// `2^(emax + 1)`, the magnitude from which a towards-zero result
    /// overflows, as `f64`.
    const OVERFLOW_LIMIT: f64;
    /// The exponent of the smallest subnormal (`2^MIN_SUBNORMAL_EXP`).
    const MIN_SUBNORMAL_EXP: i32;
    fn widen(self) -> Self::Wide;
    fn to_f64(self) -> f64;
    /// Nearest (ties to even) value of a `f64`, correctly rounded.
    fn from_f64_nearest(x: f64) -> Self;
    /// Nearest (ties to even) value of a `f32`, correctly rounded.
    fn from_f32_nearest(x: f32) -> Self;
    fn is_infinite(self) -> bool;
    /// The adjacent value towards +infinity (NaN: itself).
    fn next_up(self) -> Self;
    /// The adjacent value towards -infinity (NaN: itself).
    fn next_down(self) -> Self;
    fn infinity(negative: bool) -> Self;
}

/// Correctly rounded `f64 -> f32` with round-to-odd: an inexact result gets
/// its last significand bit set. A second, nearest-even rounding to a format
/// with at least two fewer significand bits is then correctly rounded, which
/// a plain `as f32` followed by a second rounding is not (double rounding).
#[inline(always)]
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn f64_to_f32_round_to_odd(x: f64) -> f32 {
    let nearest = x as f32;
    let back = f64::from(nearest);
    // Step towards zero if `as` went away from zero, then mark inexact as odd.
    let truncated = if back.abs() > x.abs() {
        f32::from_bits(nearest.to_bits() - 1)
    } else {
        nearest
    };
    if back == x || x.is_nan() {
        nearest
    } else {
        f32::from_bits(truncated.to_bits() | 1)
    }
}

/// The adjacent representable value of an IEEE float given by its bits,
/// towards +infinity (`up`) or -infinity.
macro_rules! ieee_next {
    ($bits:expr, $sign:expr, $infinity:expr, $up:expr) => {{
        let bits = $bits;
        let magnitude = bits & !$sign;
        if magnitude > $infinity {
            // NaN has no neighbours: itself (stepping its bits would wrap at
            // an all-ones payload, or turn the NaN into an infinity).
            bits
        } else if magnitude == 0 {
            // ±0: the smallest subnormal of the requested sign.
            if $up { 1 } else { $sign | 1 }
        } else if (bits & $sign == 0) == $up {
            bits + 1 // away from zero
        } else {
            bits - 1 // towards zero
        }
    }};
}

impl FloatElem for f64 {
    type Wide = f64;
    const PRECISION: u32 = 53;
    const OVERFLOW_LIMIT: f64 = f64::INFINITY;
    const MIN_SUBNORMAL_EXP: i32 = -1074;
    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64_nearest(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn from_f32_nearest(x: f32) -> Self {
        x.into()
    }
    #[inline(always)]
    fn is_infinite(self) -> bool {
        f64::is_infinite(self)
    }
    #[inline(always)]
    fn next_up(self) -> Self {
        f64::from_bits(ieee_next!(
            self.to_bits(),
            1u64 << 63,
            f64::INFINITY.to_bits(),
            true
        ))
    }
    #[inline(always)]
    fn next_down(self) -> Self {
        f64::from_bits(ieee_next!(
            self.to_bits(),
            1u64 << 63,
            f64::INFINITY.to_bits(),
            false
        ))
    }
    fn infinity(negative: bool) -> Self {
        if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }
    }
}

impl FloatElem for f32 {
    type Wide = f32;
    const PRECISION: u32 = 24;
    const OVERFLOW_LIMIT: f64 = 340_282_366_920_938_463_463_374_607_431_768_211_456.0; // 2^128
    const MIN_SUBNORMAL_EXP: i32 = -149;
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self.into()
    }
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)]
    fn from_f64_nearest(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn from_f32_nearest(x: f32) -> Self {
        x
    }
    #[inline(always)]
    fn is_infinite(self) -> bool {
        f32::is_infinite(self)
    }
    #[inline(always)]
    fn next_up(self) -> Self {
        f32::from_bits(ieee_next!(
            self.to_bits(),
            1u32 << 31,
            f32::INFINITY.to_bits(),
            true
        ))
    }
    #[inline(always)]
    fn next_down(self) -> Self {
        f32::from_bits(ieee_next!(
            self.to_bits(),
            1u32 << 31,
            f32::INFINITY.to_bits(),
            false
        ))
    }
    fn infinity(negative: bool) -> Self {
        if negative {
            f32::NEG_INFINITY
        } else {
            f32::INFINITY
        }
    }
}

macro_rules! impl_half_float {
    ($t:ty, $precision:expr, $limit:expr, $min_exp:expr) => {
        impl FloatElem for $t {
            type Wide = f32;
            const PRECISION: u32 = $precision;
            const OVERFLOW_LIMIT: f64 = $limit;
            const MIN_SUBNORMAL_EXP: i32 = $min_exp;
            #[inline(always)]
            fn widen(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.to_f32().into()
            }
            #[inline(always)]
            fn from_f64_nearest(x: f64) -> Self {
                <$t>::from_f32(f64_to_f32_round_to_odd(x))
            }
            #[inline(always)]
            fn from_f32_nearest(x: f32) -> Self {
                <$t>::from_f32(x)
            }
            #[inline(always)]
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            #[inline(always)]
            fn next_up(self) -> Self {
                <$t>::from_bits(ieee_next!(
                    self.to_bits(),
                    1u16 << 15,
                    <$t>::INFINITY.to_bits(),
                    true
                ))
            }
            #[inline(always)]
            fn next_down(self) -> Self {
                <$t>::from_bits(ieee_next!(
                    self.to_bits(),
                    1u16 << 15,
                    <$t>::INFINITY.to_bits(),
                    false
                ))
            }
            fn infinity(negative: bool) -> Self {
                if negative {
                    <$t>::NEG_INFINITY
                } else {
                    <$t>::INFINITY
                }
            }
        }
    };
}
impl_half_float!(f16, 11, 65536.0, -24);
impl_half_float!(
    bf16,
    8,
    340_282_366_920_938_463_463_374_607_431_768_211_456.0,
    -133
);

/// An integer element type (source or target); sub-byte types use `i8`/`u8`
/// with a narrower range supplied at run time.
pub(crate) trait IntElem: Elem + PartialOrd {
    const MIN: i128;
    const MAX: i128;
    fn to_i128(self) -> i128;
    /// Two's complement truncation of an `i128` (the value must be in range
    /// for non-wrapping uses).
    fn from_i128_wrapping(v: i128) -> Self;
    /// Saturating conversion from a widened float (`as` semantics: NaN -> 0).
    fn from_f32_saturating(x: f32) -> Self;
    fn from_f64_saturating(x: f64) -> Self;
    /// Exact conversion to `f64` when `|self| <= 2^53`.
    fn to_f64(self) -> f64;
    /// Clamp into `[lo, hi]`.
    fn clamp_to(self, lo: Self, hi: Self) -> Self;
}

macro_rules! impl_int_elem {
    ($($t:ty),*) => {$(
        impl IntElem for $t {
            const MIN: i128 = <$t>::MIN as i128;
            const MAX: i128 = <$t>::MAX as i128;
            #[inline(always)]
            fn to_i128(self) -> i128 {
                self as i128
            }
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            fn from_i128_wrapping(v: i128) -> Self {
                v as $t
            }
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            fn from_f32_saturating(x: f32) -> Self {
                x as $t
            }
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            fn from_f64_saturating(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            #[allow(clippy::cast_precision_loss, clippy::cast_lossless)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn clamp_to(self, lo: Self, hi: Self) -> Self {
                // `max`/`min` rather than `clamp`, which asserts `lo <= hi`.
                let v = if self < lo { lo } else { self };
                if v > hi { hi } else { v }
            }
        }
    )*};
}
impl_int_elem!(i8, i16, i32, i64, u8, u16, u32, u64);

/// How a source value is compared with a `scalar_map` key.
pub(crate) trait MapKey: Copy {
    /// `true` if this key matches every NaN (a NaN key).
    fn is_nan_key(self) -> bool;
    /// Numeric equality (`-0.0 == 0.0`); NaN keys are handled by the caller.
    fn equals(self, other: Self) -> bool;
    /// `true` for NaN values.
    fn is_nan_value(self) -> bool;
}

macro_rules! impl_map_key_int {
    ($($t:ty),*) => {$(
        impl MapKey for $t {
            #[inline(always)]
            fn is_nan_key(self) -> bool { false }
            #[inline(always)]
            fn equals(self, other: Self) -> bool { self == other }
            #[inline(always)]
            fn is_nan_value(self) -> bool { false }
        }
    )*};
}
impl_map_key_int!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! impl_map_key_float {
    ($($t:ty),*) => {$(
        impl MapKey for $t {
            #[inline(always)]
            fn is_nan_key(self) -> bool { self.is_nan() }
            #[inline(always)]
            fn equals(self, other: Self) -> bool { self == other }
            #[inline(always)]
            fn is_nan_value(self) -> bool { self.is_nan() }
        }
    )*};
}
impl_map_key_float!(f16, bf16, f32, f64);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{pow2, pow2_f32};

    /// `pow2` is exact for every exponent: equal to 1 doubled or halved
    /// `|exp|` times (each step exact in binary floating point, down to the
    /// smallest subnormal), infinity above the largest finite power and
    /// zero below the smallest subnormal.
    #[test]
    fn pow2_is_exact() {
        let mut up = (1.0f64, 1.0f32);
        for exp in 0..=1024 {
            assert_eq!(<f64 as WideFloat>::pow2(exp), up.0, "f64 2^{exp}");
            assert_eq!(<f32 as WideFloat>::pow2(exp), up.1, "f32 2^{exp}");
            up = (up.0 * 2.0, up.1 * 2.0);
        }
        let mut down = (1.0f64, 1.0f32);
        for exp in 0..=1075 {
            assert_eq!(<f64 as WideFloat>::pow2(-exp), down.0, "f64 2^-{exp}");
            assert_eq!(<f32 as WideFloat>::pow2(-exp), down.1, "f32 2^-{exp}");
            down = (down.0 / 2.0, down.1 / 2.0);
        }
        assert_eq!(<f64 as WideFloat>::pow2(64), 18_446_744_073_709_551_616.0);
        assert_eq!(<f64 as WideFloat>::pow2(1024), f64::INFINITY);
        assert_eq!(<f64 as WideFloat>::pow2(-1074), f64::from_bits(1));
        assert_eq!(<f32 as WideFloat>::pow2(128), f32::INFINITY);
        assert_eq!(<f32 as WideFloat>::pow2(-149), f32::from_bits(1));
        assert_eq!(<f32 as WideFloat>::pow2(-150), 0.0);
        assert_eq!(<f64 as WideFloat>::pow2(i32::MAX), f64::INFINITY);
        assert_eq!(<f64 as WideFloat>::pow2(i32::MIN), 0.0);
    }

    /// NaN, whatever its sign and payload (all ones included, where a step
    /// of the bits would overflow), has no neighbours: itself.
    #[test]
    fn next_up_down_of_nan_is_nan() {
        macro_rules! check {
            ($t:ty, $($bits:expr),+) => {$(
                let x = <$t>::from_bits($bits);
                assert_eq!(FloatElem::next_up(x).to_bits(), $bits, "{}", stringify!($t));
                assert_eq!(FloatElem::next_down(x).to_bits(), $bits, "{}", stringify!($t));
            )+};
        }
        check!(
            f32,
            u32::MAX,
            0x7fff_ffff,
            0x7f80_0001,
            0xff80_0001,
            0x7fc0_0000
        );
        check!(f64, u64::MAX, 0x7ff0_0000_0000_0001, 0xfff0_0000_0000_0001);
        check!(f16, 0xffff, 0x7c01, 0xfc01);
        check!(bf16, 0xffff, 0x7f81, 0xff81);
    }

    #[test]
    fn next_up_down_ieee() {
        // Through the trait: std's inherent `f32::next_up` would shadow it.
        let (up, down) = (FloatElem::next_up, FloatElem::next_down);
        assert_eq!(up(0.0f32), f32::from_bits(1));
        assert_eq!(down(-0.0f32), -f32::from_bits(1));
        assert_eq!(up(1.0f32), 1.0 + f32::EPSILON);
        assert_eq!(up(-1.0f32), -(1.0 - f32::EPSILON / 2.0));
        assert_eq!(up(f32::MAX), f32::INFINITY);
        assert_eq!(down(f32::INFINITY), f32::MAX);
        assert_eq!(FloatElem::next_up(f64::MAX), f64::INFINITY);
        assert_eq!(FloatElem::next_down(-0.0f64), -f64::from_bits(1));
        assert_eq!(FloatElem::next_up(f16::MAX), f16::INFINITY);
        assert_eq!(FloatElem::next_down(f16::ONE).to_f32(), 1.0 - pow2_f32(-11));
    }

    /// The branch-free rounding equals the std (libm) functions, including
    /// ±0, ties, values next to integers and to 2^(p-1), and NaN.
    #[test]
    fn round_mode_matches_std() {
        let mut values = vec![
            0.0f64,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            1.0 - f64::EPSILON / 2.0,
            4_503_599_627_370_495.5,
            -4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9e15 + 1.0,
            1e300,
            -1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            3.7,
            -3.7,
        ];
        let mut state = 0x1234_5678_9abc_def0u64;
        for _ in 0..10_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = f64::from_bits(state);
            if v.is_finite() {
                values.push(v);
                values.push(v * 1e-300 * 1e-10); // small magnitudes with fractions
            }
        }
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        for &v in &values {
            assert!(
                same(v.round_mode::<NEAREST_EVEN>(), v.round_ties_even()),
                "{v:e}"
            );
            assert!(same(v.round_mode::<TOWARDS_ZERO>(), v.trunc()), "{v:e}");
            assert!(same(v.round_mode::<TOWARDS_POSITIVE>(), v.ceil()), "{v:e}");
            assert!(same(v.round_mode::<TOWARDS_NEGATIVE>(), v.floor()), "{v:e}");
            assert!(same(v.round_mode::<NEAREST_AWAY>(), v.round()), "{v:e}");
            #[allow(clippy::cast_possible_truncation)]
            let f = v as f32;
            assert!(
                same(
                    f.round_mode::<NEAREST_EVEN>().into(),
                    f.round_ties_even().into()
                ),
                "{f:e}"
            );
            assert!(
                same(f.round_mode::<TOWARDS_ZERO>().into(), f.trunc().into()),
                "{f:e}"
            );
            assert!(
                same(f.round_mode::<TOWARDS_POSITIVE>().into(), f.ceil().into()),
                "{f:e}"
            );
            assert!(
                same(f.round_mode::<TOWARDS_NEGATIVE>().into(), f.floor().into()),
                "{f:e}"
            );
            assert!(
                same(f.round_mode::<NEAREST_AWAY>().into(), f.round().into()),
                "{f:e}"
            );
        }
        assert!(f64::NAN.round_mode::<NEAREST_AWAY>().is_nan());
    }

    #[test]
    fn round_to_odd_avoids_double_rounding() {
        // 1 + 2^-11 + 2^-40 lies just above the float16 midpoint between 1 and
        // 1 + 2^-10, so float16 nearest is 1 + 2^-10. Through a plain f32
        // (`as f32` gives exactly the midpoint 1 + 2^-11), ties-to-even would
        // wrongly give 1.
        let x = 1.0 + pow2(-11) + pow2(-40);
        assert_eq!(f16::from_f64_nearest(x).to_f32(), 1.0 + pow2_f32(-10));
        // The same for bfloat16: 1 + 2^-8 is the midpoint of 1 and 1 + 2^-7.
        let y = 1.0 + pow2(-8) + pow2(-45);
        assert_eq!(bf16::from_f64_nearest(y).to_f32(), 1.0 + pow2_f32(-7));
        // An exact tie still goes to even.
        assert_eq!(f16::from_f64_nearest(1.0 + pow2(-11)).to_f32(), 1.0);
    }
}
