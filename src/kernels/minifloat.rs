//! Floats of at most 8 bits (`float4_e2m1fn` ... `float8_e8m0fnu`).
//!
//! zarrs 0.23 stores each of these as one byte holding the bits. Rather than
//! one code path per format, a [`MiniFloatFormat`] describes the bit layout and
//! which special values exist, and the conversions below are written once
//! against that description.

use crate::kernels::rounding::RoundingMode;

/// Which special values a small float format has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MiniFloatSpecials {
    /// IEEE 754 style: the all-ones exponent holds ±infinity and NaNs.
    Ieee,
    /// Finite only ("fn"): no infinity, no NaN; the all-ones exponent is normal.
    FiniteOnly,
    /// "fnuz": no infinity, no negative zero; the only NaN is `0x80`.
    FiniteUnsignedZero,
    /// `float8_e8m0fnu`: unsigned, exponent only, no zero; the only NaN is `0xff`.
    ExponentOnly,
}

/// The layout of a float of at most 8 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MiniFloatFormat {
    /// The Zarr V3 data type name.
    pub name: &'static str,
    /// Exponent bits.
    pub exponent_bits: u32,
    /// Explicit mantissa bits.
    pub mantissa_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Special values of the format.
    pub specials: MiniFloatSpecials,
}

impl MiniFloatFormat {
    /// `float4_e2m1fn`
    pub const FLOAT4_E2M1FN: Self =
        Self::new("float4_e2m1fn", 2, 1, 1, MiniFloatSpecials::FiniteOnly);
    /// `float6_e2m3fn`
    pub const FLOAT6_E2M3FN: Self =
        Self::new("float6_e2m3fn", 2, 3, 1, MiniFloatSpecials::FiniteOnly);
    /// `float6_e3m2fn`
    pub const FLOAT6_E3M2FN: Self =
        Self::new("float6_e3m2fn", 3, 2, 3, MiniFloatSpecials::FiniteOnly);
    /// `float8_e3m4`
    pub const FLOAT8_E3M4: Self = Self::new("float8_e3m4", 3, 4, 3, MiniFloatSpecials::Ieee);
    /// `float8_e4m3`
    pub const FLOAT8_E4M3: Self = Self::new("float8_e4m3", 4, 3, 7, MiniFloatSpecials::Ieee);
    /// `float8_e4m3b11fnuz`
    pub const FLOAT8_E4M3B11FNUZ: Self = Self::new(
        "float8_e4m3b11fnuz",
        4,
        3,
        11,
        MiniFloatSpecials::FiniteUnsignedZero,
    );
    /// `float8_e4m3fnuz`
    pub const FLOAT8_E4M3FNUZ: Self = Self::new(
        "float8_e4m3fnuz",
        4,
        3,
        8,
        MiniFloatSpecials::FiniteUnsignedZero,
    );
    /// `float8_e5m2`
    pub const FLOAT8_E5M2: Self = Self::new("float8_e5m2", 5, 2, 15, MiniFloatSpecials::Ieee);
    /// `float8_e5m2fnuz`
    pub const FLOAT8_E5M2FNUZ: Self = Self::new(
        "float8_e5m2fnuz",
        5,
        2,
        16,
        MiniFloatSpecials::FiniteUnsignedZero,
    );
    /// `float8_e8m0fnu`
    pub const FLOAT8_E8M0FNU: Self =
        Self::new("float8_e8m0fnu", 8, 0, 127, MiniFloatSpecials::ExponentOnly);

    const fn new(
        name: &'static str,
        exponent_bits: u32,
        mantissa_bits: u32,
        bias: i32,
        specials: MiniFloatSpecials,
    ) -> Self {
        Self {
            name,
            exponent_bits,
            mantissa_bits,
            bias,
            specials,
        }
    }

    /// `true` if the format has a sign bit.
    #[must_use]
    pub const fn is_signed(&self) -> bool {
        !matches!(self.specials, MiniFloatSpecials::ExponentOnly)
    }

    /// Total number of bits in the encoding.
    #[must_use]
    pub const fn bits(&self) -> u32 {
        self.exponent_bits + self.mantissa_bits + if self.is_signed() { 1 } else { 0 }
    }

    /// Decode the bits of one element (upper unused bits are ignored) to `f64`, exactly.
    ///
    /// NaN encodings decode to a NaN with the encoding's sign (IEEE formats have
    /// negative NaNs; the fnuz NaN `0x80` and the `float8_e8m0fnu` NaN `0xff`
    /// decode to a positive NaN).
    #[must_use]
    pub fn to_f64(&self, bits: u8) -> f64 {
        let bits = u32::from(bits) & self.bit_mask();
        let exp_mask = self.exponent_mask();
        let mantissa = bits & self.mantissa_mask();
        let exponent = (bits >> self.mantissa_bits) & exp_mask;
        let negative = self.is_signed() && (bits >> (self.bits() - 1)) & 1 == 1;
        #[allow(clippy::cast_possible_wrap)]
        let (exponent_i, mantissa_bits_i) = (exponent as i32, self.mantissa_bits as i32);
        match self.specials {
            MiniFloatSpecials::ExponentOnly => {
                if exponent == exp_mask {
                    return f64::NAN;
                }
                return pow2(exponent_i - self.bias);
            }
            MiniFloatSpecials::FiniteUnsignedZero if negative && exponent == 0 && mantissa == 0 => {
                return f64::NAN;
            }
            MiniFloatSpecials::Ieee if exponent == exp_mask => {
                let v = if mantissa == 0 {
                    f64::INFINITY
                } else {
                    f64::NAN
                };
                return if negative { -v } else { v };
            }
            _ => {}
        }
        // value = significand * 2^(e - bias - mantissa_bits), with the hidden
        // bit for normals; subnormals use the exponent of the smallest normal.
        let magnitude = if exponent == 0 {
            f64::from(mantissa) * pow2(1 - self.bias - mantissa_bits_i)
        } else {
            f64::from(mantissa | (1 << self.mantissa_bits))
                * pow2(exponent_i - self.bias - mantissa_bits_i)
        };
        if negative { -magnitude } else { magnitude }
    }

    /// The exact `f32` value of every byte (index = byte; upper unused bits
    /// ignored, so the table repeats every `2^bits()` entries). Every value of
    /// these formats is exact in `f32` (the extremes, `2^-127` and `2^127` of
    /// `float8_e8m0fnu`, included), so widening through the table is exact.
    #[must_use]
    pub fn decode_table(&self) -> [f32; 256] {
        let mut table = [0f32; 256];
        for (byte, slot) in (0u8..=255).zip(table.iter_mut()) {
            #[allow(clippy::cast_possible_truncation)]
            {
                *slot = self.to_f64(byte) as f32;
            }
        }
        table
    }

    /// The exponent field's bits, shifted down to bit 0.
    const fn exponent_mask(&self) -> u32 {
        (1u32 << self.exponent_bits) - 1
    }

    /// The mantissa field's bits (the low bits of the encoding).
    const fn mantissa_mask(&self) -> u32 {
        (1u32 << self.mantissa_bits) - 1
    }

    /// The mask of the format's own bits within the byte.
    const fn bit_mask(&self) -> u32 {
        (1u32 << self.bits()) - 1
    }

    /// The sign bit (0 for the unsigned `float8_e8m0fnu`).
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // at most 8 bits
    pub const fn sign_mask(&self) -> u8 {
        if self.is_signed() {
            (1u32 << (self.bits() - 1)) as u8
        } else {
            0
        }
    }

    /// `true` if the format has a NaN encoding (all but the "fn" formats).
    #[must_use]
    pub const fn has_nan(&self) -> bool {
        !matches!(self.specials, MiniFloatSpecials::FiniteOnly)
    }

    /// `true` if the format has ±infinity (the IEEE-like formats
    /// `float8_e3m4`, `float8_e4m3`, `float8_e5m2`).
    #[must_use]
    pub const fn has_infinity(&self) -> bool {
        matches!(self.specials, MiniFloatSpecials::Ieee)
    }

    /// `true` if the format has a zero (all but `float8_e8m0fnu`).
    #[must_use]
    pub const fn has_zero(&self) -> bool {
        !matches!(self.specials, MiniFloatSpecials::ExponentOnly)
    }

    /// `true` if the format has a negative zero distinct from `+0` (IEEE and "fn").
    #[must_use]
    pub const fn has_negative_zero(&self) -> bool {
        matches!(
            self.specials,
            MiniFloatSpecials::Ieee | MiniFloatSpecials::FiniteOnly
        )
    }

    /// Bits of the largest finite positive value, e.g. `0x77` (240) for
    /// `float8_e4m3`, `0x7f` (240) for `float8_e4m3fnuz`, `0x07` (6) for
    /// `float4_e2m1fn`, `0xfe` (2^127) for `float8_e8m0fnu`.
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // at most 8 bits
    pub const fn max_finite(&self) -> u8 {
        let (exp_mask, man_mask) = (self.exponent_mask(), self.mantissa_mask());
        let bits = match self.specials {
            // The all-ones exponent holds inf / NaN.
            MiniFloatSpecials::Ieee => ((exp_mask - 1) << self.mantissa_bits) | man_mask,
            // The all-ones exponent is an ordinary binade.
            MiniFloatSpecials::FiniteOnly | MiniFloatSpecials::FiniteUnsignedZero => {
                (exp_mask << self.mantissa_bits) | man_mask
            }
            // 0xff is NaN.
            MiniFloatSpecials::ExponentOnly => exp_mask - 1,
        };
        bits as u8
    }

    /// Bits of the finite value of largest magnitude with the given sign: what
    /// `out_of_range: "clamp"` produces for formats without infinity. `None`
    /// for a negative bound of the unsigned `float8_e8m0fnu`.
    #[must_use]
    pub const fn max_finite_signed(&self, negative: bool) -> Option<u8> {
        if !negative {
            Some(self.max_finite())
        } else if self.is_signed() {
            Some(self.sign_mask() | self.max_finite())
        } else {
            None
        }
    }

    /// The canonical NaN encoding, or `None` for the "fn" formats: sign 0,
    /// all-ones exponent and the mantissa's top bit set for the IEEE formats
    /// (`0x78` e3m4, `0x7c` e4m3, `0x7e` e5m2, as the Zarr specs write "NaN"),
    /// `0x80` for the fnuz formats and `0xff` for `float8_e8m0fnu`.
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // at most 8 bits
    pub const fn nan_bits(&self) -> Option<u8> {
        match self.specials {
            MiniFloatSpecials::Ieee => Some(
                ((self.exponent_mask() << self.mantissa_bits) | (1u32 << (self.mantissa_bits - 1)))
                    as u8,
            ),
            MiniFloatSpecials::FiniteOnly => None,
            MiniFloatSpecials::FiniteUnsignedZero => Some(0x80),
            MiniFloatSpecials::ExponentOnly => Some(0xff),
        }
    }

    /// The encoding of `+inf` / `-inf`, or `None` for formats without infinity.
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // at most 8 bits
    pub const fn infinity_bits(&self, negative: bool) -> Option<u8> {
        if let MiniFloatSpecials::Ieee = self.specials {
            let inf = (self.exponent_mask() << self.mantissa_bits) as u8;
            Some(if negative {
                inf | self.sign_mask()
            } else {
                inf
            })
        } else {
            None
        }
    }

    /// The unbiased exponent of the smallest normal value (`float8_e8m0fnu`,
    /// which has no subnormals, uses its smallest value `2^-127`).
    const fn min_exponent(&self) -> i32 {
        if let MiniFloatSpecials::ExponentOnly = self.specials {
            -self.bias
        } else {
            1 - self.bias
        }
    }
}

/// `2^e` for `e` in the normal range of `f64` (all exponents used here are).
fn pow2(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    #[allow(clippy::cast_sign_loss)]
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// The result of rounding an `f64` into a [`MiniFloatFormat`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MiniRound {
    /// The bits of the rounded value.
    Value(u8),
    /// A finite value whose rounded magnitude exceeds the largest finite value.
    Overflow {
        /// The sign of the value.
        negative: bool,
    },
    /// No value of the format corresponds: NaN or infinity into a format
    /// without them; for the unsigned, zero-less `float8_e8m0fnu`, a negative
    /// value, ±0, or a positive value below `2^-127` rounded downwards
    /// (`towards-zero` / `towards-negative`).
    NotRepresentable,
}

/// Which way a magnitude is rounded, once the sign is taken into account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MagnitudeRounding {
    /// Truncate (towards zero).
    Down,
    /// Away from zero.
    Up,
    /// To nearest, ties to an even integer significand.
    NearestEven,
    /// To nearest, ties away from zero.
    NearestAway,
}

impl MagnitudeRounding {
    const fn new(rounding: RoundingMode, negative: bool) -> Self {
        match rounding {
            RoundingMode::NearestEven => Self::NearestEven,
            RoundingMode::NearestAway => Self::NearestAway,
            RoundingMode::TowardsZero => Self::Down,
            RoundingMode::TowardsPositive => {
                if negative {
                    Self::Down
                } else {
                    Self::Up
                }
            }
            RoundingMode::TowardsNegative => {
                if negative {
                    Self::Up
                } else {
                    Self::Down
                }
            }
        }
    }

    /// Round `sig / 2^shift` to an integer.
    fn shift_right(self, sig: u64, shift: i32) -> u64 {
        if shift <= 0 {
            // Exact (does not happen for the formats defined here, whose
            // precision is far below f64's; kept panic-free for any descriptor).
            let left = shift.unsigned_abs();
            return if left < sig.leading_zeros() {
                sig << left
            } else {
                u64::MAX
            };
        }
        let (quotient, remainder, half) = if shift >= 64 {
            // sig < 2^53 <= 2^(shift - 1): a nonzero remainder below one half.
            (0, sig, u64::MAX)
        } else {
            let shift = shift.unsigned_abs();
            (
                sig >> shift,
                sig & ((1u64 << shift) - 1),
                1u64 << (shift - 1),
            )
        };
        let round_up = match self {
            Self::Down => false,
            Self::Up => remainder != 0,
            Self::NearestEven => remainder > half || (remainder == half && quotient & 1 == 1),
            Self::NearestAway => remainder >= half,
        };
        quotient + u64::from(round_up)
    }
}

impl MiniFloatFormat {
    /// Round `value` into this format with `rounding`.
    ///
    /// - NaN gives the canonical NaN ([`nan_bits`](Self::nan_bits)) whatever
    ///   its sign and payload, or [`MiniRound::NotRepresentable`] for the "fn"
    ///   formats; ±infinity gives ±infinity in the IEEE formats and
    ///   `NotRepresentable` otherwise.
    /// - A finite value is rounded to the format's precision as if the
    ///   exponent range were unbounded above (below the smallest normal the
    ///   spacing is the subnormal spacing, down to zero), with `rounding`; if
    ///   the rounded magnitude exceeds [`max_finite`](Self::max_finite) the
    ///   result is [`MiniRound::Overflow`], for the caller's `out_of_range`
    ///   rule to resolve. The next value above the largest finite one in the
    ///   unbounded format is the power of two `2^(emax + 1)` (`256` for
    ///   `float8_e4m3`), so with `nearest-even` values from the midpoint
    ///   `(max + 2^(emax + 1)) / 2` up overflow, while `towards-zero` keeps
    ///   values below `2^(emax + 1)` finite (`250.0` -> `240.0`) but still
    ///   overflows at and beyond it (`1e300` is `Overflow`, unlike IEEE 754's
    ///   round-toward-zero, because the range check comes after rounding).
    /// - Zeros keep their sign where the format has `-0` (fnuz: `-0.0` gives
    ///   `0x00`), and so do values that round to zero.
    /// - `float8_e8m0fnu` (powers of two `2^-127 ..= 2^127`, no zero, no sign):
    ///   negative values and ±0 are `NotRepresentable`. A positive value is
    ///   rounded to a power of two; the midpoint `1.5 * 2^k` counts as a tie
    ///   and `nearest-even` rounds it up, as `nearest-away` does (there is no
    ///   even significand to choose: both neighbours have significand 1; this
    ///   matches `ml_dtypes` and LLVM `APFloat`). Positive values below `2^-127`
    ///   have no neighbour below, so the nearest modes and `towards-positive`
    ///   give `2^-127` (`0x00`, as `ml_dtypes` does for nearest-even) and
    ///   `towards-zero` / `towards-negative` are `NotRepresentable`.
    ///
    /// Pure integer arithmetic on the bits of `value`; never panics.
    #[must_use]
    pub fn round_from_f64(&self, value: f64, rounding: RoundingMode) -> MiniRound {
        let raw = value.to_bits();
        let negative = raw >> 63 != 0;
        #[allow(clippy::cast_possible_truncation)]
        let biased = ((raw >> 52) & 0x7ff) as i32;
        let fraction = raw & ((1u64 << 52) - 1);

        if biased == 0x7ff {
            let bits = if fraction != 0 {
                self.nan_bits()
            } else {
                self.infinity_bits(negative)
            };
            return bits.map_or(MiniRound::NotRepresentable, MiniRound::Value);
        }
        let exponent_only = matches!(self.specials, MiniFloatSpecials::ExponentOnly);
        if exponent_only && negative {
            return MiniRound::NotRepresentable; // includes -0.0
        }
        if biased == 0 && fraction == 0 {
            return match self.specials {
                MiniFloatSpecials::ExponentOnly => MiniRound::NotRepresentable,
                MiniFloatSpecials::FiniteUnsignedZero => MiniRound::Value(0),
                _ => MiniRound::Value(if negative { self.sign_mask() } else { 0 }),
            };
        }

        // |value| = sig * 2^q exactly, and 2^e <= |value| < 2^(e + 1).
        let (sig, q) = if biased == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1u64 << 52), biased - 1075)
        };
        #[allow(clippy::cast_possible_wrap)]
        let e = q + (63 - sig.leading_zeros() as i32);
        let direction = MagnitudeRounding::new(rounding, negative);
        let min_exponent = self.min_exponent();
        if exponent_only && e < min_exponent {
            return match direction {
                MagnitudeRounding::Down => MiniRound::NotRepresentable,
                _ => MiniRound::Value(0),
            };
        }

        // The spacing of the format's values around |value| is 2^(e_t - M):
        // the binade's own spacing, or the subnormal spacing below the
        // smallest normal. n is |value| / 2^(e_t - M) rounded to an integer.
        #[allow(clippy::cast_possible_wrap)]
        let mantissa_bits = self.mantissa_bits as i32;
        let e_t = e.max(min_exponent);
        let n = direction.shift_right(sig, e_t - mantissa_bits - q);

        // Magnitude bits: the biased exponent field of 2^e_t is
        // e_t - min_exponent + 1 (+ 0 for e8m0, whose field 0 is normal), and
        // n in [2^M, 2^(M+1)] (or [0, 2^M) for subnormals) carries into it.
        // Monotonic in the value, so the range check is an integer compare.
        let field = i64::from(e_t - min_exponent) + i64::from(!exponent_only);
        let magnitude = (field << mantissa_bits)
            .saturating_add(i64::try_from(n).unwrap_or(i64::MAX))
            .saturating_sub(1i64 << mantissa_bits);
        if magnitude > i64::from(self.max_finite()) {
            return MiniRound::Overflow { negative };
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let magnitude = magnitude as u8;
        if negative && (magnitude != 0 || self.has_negative_zero()) {
            MiniRound::Value(self.sign_mask() | magnitude)
        } else {
            MiniRound::Value(magnitude)
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::float_cmp,
    clippy::too_many_lines,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::match_same_arms,
    clippy::items_after_statements
)]
mod tests {
    use super::*;
    use crate::test_support::{self, floor_log2, pow2};
    use RoundingMode::{NearestAway, NearestEven, TowardsNegative, TowardsPositive, TowardsZero};

    const ALL: [MiniFloatFormat; 10] = [
        MiniFloatFormat::FLOAT4_E2M1FN,
        MiniFloatFormat::FLOAT6_E2M3FN,
        MiniFloatFormat::FLOAT6_E3M2FN,
        MiniFloatFormat::FLOAT8_E3M4,
        MiniFloatFormat::FLOAT8_E4M3,
        MiniFloatFormat::FLOAT8_E4M3B11FNUZ,
        MiniFloatFormat::FLOAT8_E4M3FNUZ,
        MiniFloatFormat::FLOAT8_E5M2,
        MiniFloatFormat::FLOAT8_E5M2FNUZ,
        MiniFloatFormat::FLOAT8_E8M0FNU,
    ];
    const MODES: [RoundingMode; 5] = [
        NearestEven,
        TowardsZero,
        TowardsPositive,
        TowardsNegative,
        NearestAway,
    ];

    fn format(name: &str) -> MiniFloatFormat {
        *ALL.iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("unknown format {name}"))
    }

    /// A golden-file number: a JSON number or "NaN" / "Infinity" / "-Infinity".
    fn golden_f64(v: &serde_json::Value) -> f64 {
        match v {
            serde_json::Value::Number(n) => n.as_f64().unwrap(),
            serde_json::Value::String(s) => match s.as_str() {
                "NaN" => f64::NAN,
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                other => panic!("bad golden value {other}"),
            },
            other => panic!("bad golden value {other}"),
        }
    }

    /// Same value, or both NaN; zeros must agree in sign.
    fn same(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }

    fn golden() -> serde_json::Value {
        serde_json::from_str(include_str!("../../tests/data/minifloat_golden.json")).unwrap()
    }

    /// Canonical form of a byte: upper unused bits cleared.
    fn canonical(f: &MiniFloatFormat, b: u8) -> u8 {
        (u32::from(b) & f.bit_mask()) as u8
    }

    // ---- decoding ------------------------------------------------------------

    #[test]
    fn minifloat_golden_decode_all_bytes() {
        let golden = golden();
        let formats = golden["formats"].as_object().unwrap();
        assert_eq!(formats.len(), ALL.len());
        // serde_json keeps the sign of "-0.0" (the comparisons below rely on it).
        assert!(golden_f64(&serde_json::json!(-0.0)).is_sign_negative());
        for (name, data) in formats {
            let f = format(name);
            assert_eq!(
                data["bits"].as_u64().unwrap(),
                u64::from(f.bits()),
                "{name}"
            );
            let decode = data["decode"].as_array().unwrap();
            assert_eq!(decode.len(), 256);
            let table = f.decode_table();
            for (b, expected) in (0u8..=255).zip(decode) {
                let expected = golden_f64(expected);
                let ours = f.to_f64(b);
                assert!(
                    same(ours, expected),
                    "{name} 0x{b:02x}: ours {ours:e}, ml_dtypes {expected:e}"
                );
                assert!(
                    same(f64::from(table[usize::from(b)]), ours),
                    "{name} table 0x{b:02x}"
                );
            }
        }
    }

    #[test]
    fn minifloat_descriptors() {
        // (format, max finite value, its bits, smallest positive value, nan bits, has inf)
        let cases: [(MiniFloatFormat, f64, u8, f64, Option<u8>, bool); 10] = [
            (MiniFloatFormat::FLOAT4_E2M1FN, 6.0, 0x07, 0.5, None, false),
            (
                MiniFloatFormat::FLOAT6_E2M3FN,
                7.5,
                0x1f,
                0.125,
                None,
                false,
            ),
            (
                MiniFloatFormat::FLOAT6_E3M2FN,
                28.0,
                0x1f,
                0.0625,
                None,
                false,
            ),
            (
                MiniFloatFormat::FLOAT8_E3M4,
                15.5,
                0x6f,
                pow2(-6),
                Some(0x78),
                true,
            ),
            (
                MiniFloatFormat::FLOAT8_E4M3,
                240.0,
                0x77,
                pow2(-9),
                Some(0x7c),
                true,
            ),
            (
                MiniFloatFormat::FLOAT8_E4M3B11FNUZ,
                30.0,
                0x7f,
                pow2(-13),
                Some(0x80),
                false,
            ),
            (
                MiniFloatFormat::FLOAT8_E4M3FNUZ,
                240.0,
                0x7f,
                pow2(-10),
                Some(0x80),
                false,
            ),
            (
                MiniFloatFormat::FLOAT8_E5M2,
                57344.0,
                0x7b,
                pow2(-16),
                Some(0x7e),
                true,
            ),
            (
                MiniFloatFormat::FLOAT8_E5M2FNUZ,
                57344.0,
                0x7f,
                pow2(-17),
                Some(0x80),
                false,
            ),
            (
                MiniFloatFormat::FLOAT8_E8M0FNU,
                pow2(127),
                0xfe,
                pow2(-127),
                Some(0xff),
                false,
            ),
        ];
        for (f, max, max_bits, min_positive, nan, inf) in cases {
            assert_eq!(f.max_finite(), max_bits, "{}", f.name);
            assert_eq!(f.to_f64(max_bits), max, "{}", f.name);
            assert_eq!(f.nan_bits(), nan, "{}", f.name);
            assert_eq!(f.has_nan(), nan.is_some(), "{}", f.name);
            assert!(
                f.nan_bits().is_none_or(|b| f.to_f64(b).is_nan()),
                "{}",
                f.name
            );
            assert_eq!(f.has_infinity(), inf, "{}", f.name);
            assert_eq!(
                f.infinity_bits(false).map(|b| f.to_f64(b)),
                inf.then_some(f64::INFINITY)
            );
            assert_eq!(
                f.infinity_bits(true).map(|b| f.to_f64(b)),
                inf.then_some(f64::NEG_INFINITY)
            );
            let smallest = (0u8..=255)
                .map(|b| f.to_f64(b))
                .filter(|v| *v > 0.0 && v.is_finite())
                .fold(f64::INFINITY, f64::min);
            assert_eq!(smallest, min_positive, "{}", f.name);
            let largest = (0u8..=255)
                .map(|b| f.to_f64(b))
                .filter(|v| v.is_finite())
                .fold(0.0, f64::max);
            assert_eq!(largest, max, "{}", f.name);
            assert_eq!(
                f.max_finite_signed(true).map(|b| f.to_f64(b)),
                f.is_signed().then_some(-max)
            );
        }
        // The Zarr specs' "NaN" fill values.
        assert_eq!(MiniFloatFormat::FLOAT8_E4M3.nan_bits(), Some(0x7c));
        assert_eq!(MiniFloatFormat::FLOAT8_E5M2.nan_bits(), Some(0x7e));
        // e4m3 is IEEE-like (unlike e4m3fn): 0x7f is NaN and 0x78 is +inf.
        assert!(MiniFloatFormat::FLOAT8_E4M3.to_f64(0x7f).is_nan());
        assert_eq!(MiniFloatFormat::FLOAT8_E4M3.to_f64(0xf8), f64::NEG_INFINITY);
        // fnuz: 0x80 is the only NaN, there is no -0.
        for f in [
            MiniFloatFormat::FLOAT8_E4M3FNUZ,
            MiniFloatFormat::FLOAT8_E4M3B11FNUZ,
            MiniFloatFormat::FLOAT8_E5M2FNUZ,
        ] {
            let nans: Vec<u8> = (0u8..=255).filter(|&b| f.to_f64(b).is_nan()).collect();
            assert_eq!(nans, [0x80], "{}", f.name);
            assert!((0u8..=255).all(|b| !(f.to_f64(b) == 0.0 && f.to_f64(b).is_sign_negative())));
        }
        // fn formats: no NaN or infinity; upper unused bits are ignored.
        let f = MiniFloatFormat::FLOAT4_E2M1FN;
        assert!((0u8..=255).all(|b| f.to_f64(b).is_finite()));
        assert_eq!(f.to_f64(0x12), 1.0); // 0x12 & 0xf = 0b0010 = +1.0 (ml_dtypes says -1.0)
        assert_eq!(f.to_f64(0xfa), -1.0);
        assert_eq!(MiniFloatFormat::FLOAT6_E2M3FN.to_f64(0xc8), 1.0);
    }

    // ---- encoding against ml_dtypes ------------------------------------------------

    #[test]
    fn minifloat_golden_encode_nearest_even() {
        let golden = golden();
        for (name, data) in golden["formats"].as_object().unwrap() {
            let f = format(name);
            let max = f.to_f64(f.max_finite());
            let (mut exact, mut quirks) = (0, 0);
            for pair in data["encode"].as_array().unwrap() {
                let x = golden_f64(&pair[0]);
                let ml = u8::try_from(pair[1].as_u64().unwrap()).unwrap();
                let ml_value = f.to_f64(ml);
                let ours = f.round_from_f64(x, NearestEven);
                let what = format!(
                    "{name}: {x:e} (0x{:016x}): ours {ours:?}, ml_dtypes 0x{ml:02x}",
                    x.to_bits()
                );
                match ours {
                    MiniRound::Value(b) if x.is_nan() => {
                        // ml_dtypes keeps the NaN's sign; we write the canonical NaN.
                        assert_eq!(Some(b), f.nan_bits(), "{what}");
                        assert!(ml_value.is_nan(), "{what}");
                    }
                    MiniRound::Value(0x00)
                        if f.specials == MiniFloatSpecials::ExponentOnly
                            && ml == 0x01
                            && x > pow2(-127)
                            && x < 1.5 * pow2(-127) =>
                    {
                        // ml_dtypes 0.6.0 rounds every value strictly between 2^-127
                        // and 2^-126 up to 2^-126 (its encoder treats exponent field 0
                        // as a subnormal binade); below the midpoint 1.5 * 2^-127 the
                        // nearest value is 2^-127 (0x00).
                        quirks += 1;
                    }
                    MiniRound::Value(b) => {
                        assert_eq!(b, ml, "{what}");
                        exact += 1;
                    }
                    MiniRound::Overflow { negative } => {
                        assert!(x.is_finite() && x.abs() > max, "{what}");
                        assert_eq!(negative, x < 0.0, "{what}");
                        // ml_dtypes: IEEE -> ±inf, fn -> saturate to ±max, fnuz / e8m0 -> NaN.
                        match f.specials {
                            MiniFloatSpecials::Ieee => {
                                assert_eq!(ml_value, x.signum() * f64::INFINITY, "{what}")
                            }
                            MiniFloatSpecials::FiniteOnly => {
                                assert_eq!(ml_value, x.signum() * max, "{what}")
                            }
                            _ => assert!(ml_value.is_nan(), "{what}"),
                        }
                    }
                    MiniRound::NotRepresentable => match f.specials {
                        // ml_dtypes: NaN -> ±0 and ±inf -> ±max.
                        MiniFloatSpecials::FiniteOnly => {
                            assert!(!x.is_finite(), "{what}");
                            if x.is_infinite() {
                                assert_eq!(ml_value, x.signum() * max, "{what}");
                            }
                        }
                        // ml_dtypes: ±inf -> NaN.
                        MiniFloatSpecials::FiniteUnsignedZero => {
                            assert!(x.is_infinite() && ml_value.is_nan(), "{what}");
                        }
                        // ml_dtypes: inf, ±0 and negatives -> NaN.
                        MiniFloatSpecials::ExponentOnly => {
                            assert!(x.is_infinite() || x <= 0.0, "{what}");
                            assert!(ml_value.is_nan(), "{what}");
                        }
                        MiniFloatSpecials::Ieee => panic!("{what}"),
                    },
                }
            }
            assert!(exact >= 140, "{name}: only {exact} byte-exact comparisons");
            assert!(
                quirks <= 3,
                "{name}: {quirks} inputs in e8m0's lowest binade"
            );
        }
    }

    // ---- an independent brute-force reference -----------------------------------

    /// Bits of the candidate above the largest finite value: the overflow.
    const OVER: u16 = 0x100;

    /// (magnitude, bits) of every finite non-negative value of `f`, ascending,
    /// then the next power of two above the largest as [`OVER`]: the
    /// candidates of [`reference`], built once per format.
    fn magnitudes(f: &MiniFloatFormat) -> Vec<(f64, u16)> {
        let mut values: Vec<(f64, u16)> = (0..(1u32 << f.bits()))
            .map(|b| (f.to_f64(b as u8), b as u16))
            .filter(|(v, _)| v.is_finite() && v.is_sign_positive())
            .collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let max = values.last().unwrap().0;
        values.push((pow2(floor_log2(max) + 1), OVER));
        values
    }

    /// Round `x` by searching the decoded values of the format (`candidates`
    /// from [`magnitudes`], whose last, the next power of two above the
    /// maximum, stands for "overflow"): the contract of `round_from_f64`,
    /// written without any bit arithmetic.
    fn reference(
        f: &MiniFloatFormat,
        candidates: &[(f64, u16)],
        x: f64,
        mode: RoundingMode,
    ) -> MiniRound {
        if x.is_nan() {
            return f
                .nan_bits()
                .map_or(MiniRound::NotRepresentable, MiniRound::Value);
        }
        if x.is_infinite() {
            return f
                .infinity_bits(x < 0.0)
                .map_or(MiniRound::NotRepresentable, MiniRound::Value);
        }
        let negative = x.is_sign_negative();
        if !f.is_signed() && (negative || x == 0.0) {
            return MiniRound::NotRepresentable;
        }
        let a = x.abs();
        if a >= candidates.last().unwrap().0 {
            return MiniRound::Overflow { negative };
        }
        let hi = candidates.iter().copied().find(|c| c.0 >= a).unwrap();
        let lo = candidates.iter().copied().rev().find(|c| c.0 <= a);
        let up = match (lo, MagnitudeRounding::new(mode, negative)) {
            (Some(lo), _) if lo.0 == a => false,
            (None, MagnitudeRounding::Down) => return MiniRound::NotRepresentable, // e8m0 below 2^-127
            (None, _) => true,
            (Some(_), MagnitudeRounding::Down) => false,
            (Some(_), MagnitudeRounding::Up) => true,
            (Some(lo), nearest) => {
                let (dl, dh) = (a - lo.0, hi.0 - a); // exact: all these values share few bits
                if dl != dh {
                    dh < dl
                } else if nearest == MagnitudeRounding::NearestAway || !f.has_zero() {
                    true // e8m0: both neighbours have significand 1; ties go up
                } else {
                    // The even significand is the even encoding (OVER = max + 1 is even).
                    let lo_bits = lo.1;
                    lo_bits & 1 == 1
                }
            }
        };
        let chosen = if up { hi } else { lo.unwrap() };
        if chosen.1 == OVER {
            return MiniRound::Overflow { negative };
        }
        let bits = chosen.1 as u8;
        if negative && (bits != 0 || f.has_negative_zero()) {
            MiniRound::Value(bits | f.sign_mask())
        } else {
            MiniRound::Value(bits)
        }
    }

    use crate::test_rng::SplitMix64 as Rng;

    #[test]
    fn minifloat_matches_brute_force_reference() {
        let mut rng = Rng(0x5eed);
        for f in ALL {
            let values = magnitudes(&f);
            let finite: Vec<f64> = (0u8..=255)
                .map(|b| f.to_f64(b))
                .filter(|v| v.is_finite())
                .collect();
            let mut inputs = vec![
                0.0,
                -0.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e300,
                -1e-300,
                5e-324,
            ];
            // Every value, every midpoint of neighbours, and the doubles either side of both.
            let mut sorted = finite.clone();
            sorted.push(pow2(floor_log2(f.to_f64(f.max_finite())) + 1));
            sorted.sort_by(f64::total_cmp);
            // Under Miri (where the brute-force reference costs minutes per
            // format), every 64th window and a handful of random values.
            for w in sorted.windows(2).step_by(test_support::size(1, 64)) {
                for v in [w[0], f64::midpoint(w[0], w[1]), (w[0] * 3.0 + w[1]) / 4.0] {
                    for v in [v, v.next_down(), v.next_up()] {
                        inputs.extend([v, -v]);
                    }
                }
            }
            // Random doubles around the format's range, with random low bits.
            let lo = f.to_f64(f.max_finite()).log2() - 40.0;
            for _ in 0..test_support::size(2000, 4) {
                let r = rng.next();
                let e = lo + (r % 4800) as f64 / 100.0;
                let v =
                    f64::from_bits((2f64.powf(e).to_bits() & !0xfffff) | (rng.next() & 0xfffff));
                inputs.push(if r >> 63 == 1 { -v } else { v });
            }
            for &x in &inputs {
                for mode in MODES {
                    assert_eq!(
                        f.round_from_f64(x, mode),
                        reference(&f, &values, x, mode),
                        "{} {x:e} (0x{:016x}) {mode:?}",
                        f.name,
                        x.to_bits()
                    );
                }
            }
        }
    }

    #[test]
    fn minifloat_round_trips_every_byte() {
        for f in ALL {
            let table = f.decode_table();
            for b in 0u8..=255 {
                let v = f.to_f64(b);
                for mode in MODES {
                    let expected = if v.is_nan() {
                        f.nan_bits().unwrap()
                    } else {
                        canonical(&f, b)
                    };
                    assert_eq!(
                        f.round_from_f64(v, mode),
                        MiniRound::Value(expected),
                        "{} 0x{b:02x} {mode:?}",
                        f.name
                    );
                    // Through f32 (the decode table) too.
                    let t = f64::from(table[usize::from(b)]);
                    assert_eq!(
                        f.round_from_f64(t, mode),
                        MiniRound::Value(expected),
                        "{} 0x{b:02x}",
                        f.name
                    );
                }
            }
        }
    }

    #[test]
    fn minifloat_never_panics() {
        // Every f64 exponent, with a few fractions and both signs.
        for f in ALL {
            // Under Miri every 89th exponent: 0x7ff = 23 * 89, so zero,
            // subnormals and infinity / NaN are all in.
            for exponent in (0u64..=0x7ff).step_by(test_support::size(1, 89)) {
                for fraction in [0, 1, 1 << 51, (1 << 52) - 1, 0x8_0000_0000_0001] {
                    for sign in [0, 1u64 << 63] {
                        let x = f64::from_bits(sign | exponent << 52 | fraction);
                        for mode in MODES {
                            let _ = f.round_from_f64(x, mode);
                        }
                    }
                }
            }
        }
    }

    // ---- hand-worked cases -----------------------------------------------------------

    /// Round `x` with all five modes, in the order
    /// [nearest-even, towards-zero, towards-positive, towards-negative, nearest-away].
    fn all_modes(f: MiniFloatFormat, x: f64) -> [MiniRound; 5] {
        MODES.map(|m| f.round_from_f64(x, m))
    }

    use MiniRound::{NotRepresentable as NR, Overflow, Value as V};
    const OVER_POS: MiniRound = Overflow { negative: false };
    const OVER_NEG: MiniRound = Overflow { negative: true };

    #[test]
    fn minifloat_hand_worked_float8_e4m3() {
        let f = MiniFloatFormat::FLOAT8_E4M3; // S EEEE MMM, bias 7; 1.0 = 0 0111 000 = 0x38
        // 1 + 2^-4 is halfway between 1.0 (0x38) and 1.125 = 1 + 2^-3 (0x39).
        // Nearest-even keeps mantissa 000 (even); away / up go to 0x39.
        assert_eq!(
            all_modes(f, 1.0625),
            [V(0x38), V(0x38), V(0x39), V(0x38), V(0x39)]
        );
        // Negative mirror: towards-positive is now towards zero, towards-negative away.
        assert_eq!(
            all_modes(f, -1.0625),
            [V(0xb8), V(0xb8), V(0xb8), V(0xb9), V(0xb9)]
        );
        // 1 + 3 * 2^-4 = 1.1875 is halfway between 1.125 (0x39, odd) and 1.25 (0x3a, even).
        assert_eq!(
            all_modes(f, 1.1875),
            [V(0x3a), V(0x39), V(0x3a), V(0x39), V(0x3a)]
        );
        // Not a tie: 1.1 is below the midpoint 1.0625 + ... -> nearest 1.125 (0x39).
        assert_eq!(
            all_modes(f, 1.1),
            [V(0x39), V(0x38), V(0x39), V(0x38), V(0x39)]
        );
        // Subnormals: spacing 2^(1-7-3) = 2^-9 (0x01). 2^-10 is halfway between 0 and 2^-9:
        // nearest-even gives 0 (even), away gives 0x01.
        assert_eq!(
            all_modes(f, pow2(-10)),
            [V(0x00), V(0x00), V(0x01), V(0x00), V(0x01)]
        );
        // -2^-10: zero keeps its sign (0x80), towards-negative goes to -2^-9 (0x81).
        assert_eq!(
            all_modes(f, -(pow2(-10))),
            [V(0x80), V(0x80), V(0x80), V(0x81), V(0x81)]
        );
        // 3 * 2^-10 = 1.5 * 2^-9 is halfway between 0x01 (odd) and 0x02 (even).
        assert_eq!(
            all_modes(f, 3.0 * pow2(-10)),
            [V(0x02), V(0x01), V(0x02), V(0x01), V(0x02)]
        );
        // 5 * 2^-11 = 1.25 * 2^-9: between subnormals 0x01 and 0x02, nearer 0x01.
        assert_eq!(
            all_modes(f, 5.0 * pow2(-11)),
            [V(0x01), V(0x01), V(0x02), V(0x01), V(0x01)]
        );
        // Subnormal to normal: 2^-6 - 2^-10 is halfway between 7 * 2^-9 (0x07) and 2^-6 (0x08).
        assert_eq!(f.round_from_f64(pow2(-6) - pow2(-10), NearestEven), V(0x08));
        // Max finite 240 = 1.875 * 2^7 (0x77); the next value above would be 256.
        // 241: towards-zero / -negative / nearest stay at 240, towards-positive overflows.
        assert_eq!(
            all_modes(f, 241.0),
            [V(0x77), V(0x77), OVER_POS, V(0x77), V(0x77)]
        );
        assert_eq!(
            all_modes(f, -241.0),
            [V(0xf7), V(0xf7), V(0xf7), OVER_NEG, V(0xf7)]
        );
        // 248 is halfway between 240 (mantissa 111, odd) and 256: nearest modes overflow.
        assert_eq!(
            all_modes(f, 248.0),
            [OVER_POS, V(0x77), OVER_POS, V(0x77), OVER_POS]
        );
        assert_eq!(f.round_from_f64(247.99, NearestEven), V(0x77));
        // 256 and beyond overflow in every mode (the range check comes after rounding).
        assert_eq!(all_modes(f, 256.0), [OVER_POS; 5]);
        assert_eq!(all_modes(f, -1e300), [OVER_NEG; 5]);
        // Specials.
        assert_eq!(all_modes(f, f64::INFINITY), [V(0x78); 5]);
        assert_eq!(all_modes(f, f64::NEG_INFINITY), [V(0xf8); 5]);
        assert_eq!(all_modes(f, f64::NAN), [V(0x7c); 5]);
        assert_eq!(all_modes(f, -f64::NAN), [V(0x7c); 5]); // canonical NaN, sign dropped
        assert_eq!(all_modes(f, -0.0), [V(0x80); 5]);
        assert_eq!(all_modes(f, 0.0), [V(0x00); 5]);
        // The smallest f64 subnormal rounds to zero or 2^-9.
        assert_eq!(
            all_modes(f, 5e-324),
            [V(0x00), V(0x00), V(0x01), V(0x00), V(0x00)]
        );
    }

    #[test]
    fn minifloat_hand_worked_other_ieee() {
        let f = MiniFloatFormat::FLOAT8_E3M4; // S EEE MMMM, bias 3; 1.0 = 0 011 0000 = 0x30
        // 1 + 2^-5 is halfway between 1.0 (0x30) and 1 + 2^-4 (0x31).
        assert_eq!(
            all_modes(f, 1.0 + pow2(-5)),
            [V(0x30), V(0x30), V(0x31), V(0x30), V(0x31)]
        );
        // Max 15.5 = 1.9375 * 2^3 (0x6f); 15.75 is halfway to 16.
        assert_eq!(
            all_modes(f, 15.75),
            [OVER_POS, V(0x6f), OVER_POS, V(0x6f), OVER_POS]
        );
        assert_eq!(all_modes(f, f64::NAN), [V(0x78); 5]);
        assert_eq!(all_modes(f, f64::NEG_INFINITY), [V(0xf0); 5]);
        // Smallest subnormal 2^(1-3-4) = 2^-6; 2^-7 is the tie with zero.
        assert_eq!(
            all_modes(f, -(pow2(-7))),
            [V(0x80), V(0x80), V(0x80), V(0x81), V(0x81)]
        );

        let f = MiniFloatFormat::FLOAT8_E5M2; // S EEEEE MM, bias 15; 1.0 = 0x3c
        // 1.125 is halfway between 1.0 (0x3c) and 1.25 (0x3d).
        assert_eq!(
            all_modes(f, 1.125),
            [V(0x3c), V(0x3c), V(0x3d), V(0x3c), V(0x3d)]
        );
        // Max 57344 = 1.75 * 2^15 (0x7b); 61440 is halfway to 65536.
        assert_eq!(
            all_modes(f, 61440.0),
            [OVER_POS, V(0x7b), OVER_POS, V(0x7b), OVER_POS]
        );
        assert_eq!(
            all_modes(f, -61439.0),
            [V(0xfb), V(0xfb), V(0xfb), OVER_NEG, V(0xfb)]
        );
        assert_eq!(all_modes(f, f64::NAN), [V(0x7e); 5]);
        assert_eq!(all_modes(f, f64::INFINITY), [V(0x7c); 5]);
    }

    #[test]
    fn minifloat_hand_worked_fnuz() {
        let f = MiniFloatFormat::FLOAT8_E4M3FNUZ; // S EEEE MMM, bias 8; 1.0 = 0 1000 000 = 0x40
        assert_eq!(
            all_modes(f, 1.0625),
            [V(0x40), V(0x40), V(0x41), V(0x40), V(0x41)]
        );
        // No -0: -0.0 and negatives that round to zero give 0x00.
        assert_eq!(all_modes(f, -0.0), [V(0x00); 5]);
        // Smallest subnormal 2^(1-8-3) = 2^-10; -2^-11 is the tie with zero.
        assert_eq!(
            all_modes(f, -(pow2(-11))),
            [V(0x00), V(0x00), V(0x00), V(0x81), V(0x81)]
        );
        // Max 240 = 1.875 * 2^7 (0x7f: the all-ones exponent is ordinary here).
        assert_eq!(
            all_modes(f, 241.0),
            [V(0x7f), V(0x7f), OVER_POS, V(0x7f), V(0x7f)]
        );
        assert_eq!(
            all_modes(f, -248.0),
            [OVER_NEG, V(0xff), V(0xff), OVER_NEG, OVER_NEG]
        );
        assert_eq!(all_modes(f, f64::NAN), [V(0x80); 5]);
        assert_eq!(all_modes(f, f64::INFINITY), [NR; 5]);

        let f = MiniFloatFormat::FLOAT8_E4M3B11FNUZ; // bias 11; 1.0 = 0 1011 000 = 0x58
        assert_eq!(f.round_from_f64(1.0, NearestEven), V(0x58));
        // Max 30 = 1.875 * 2^4 (0x7f); 31 is halfway to 32.
        assert_eq!(
            all_modes(f, 31.0),
            [OVER_POS, V(0x7f), OVER_POS, V(0x7f), OVER_POS]
        );
        assert_eq!(all_modes(f, f64::NEG_INFINITY), [NR; 5]);

        let f = MiniFloatFormat::FLOAT8_E5M2FNUZ; // S EEEEE MM, bias 16; 1.0 = 0 10000 00 = 0x40
        assert_eq!(
            all_modes(f, -1.125),
            [V(0xc0), V(0xc0), V(0xc0), V(0xc1), V(0xc1)]
        );
        // Smallest subnormal 2^(1-16-2) = 2^-17: 1.5 * 2^-17 ties 0x01 (odd) / 0x02 (even).
        assert_eq!(
            all_modes(f, 1.5 * pow2(-17)),
            [V(0x02), V(0x01), V(0x02), V(0x01), V(0x02)]
        );
        assert_eq!(f.round_from_f64(57344.0, TowardsPositive), V(0x7f));
    }

    #[test]
    fn minifloat_hand_worked_fn() {
        let f = MiniFloatFormat::FLOAT4_E2M1FN; // S EE M, bias 1: 0, .5, 1, 1.5, 2, 3, 4, 6
        // 2.5 is halfway between 2 (0x4, M=0) and 3 (0x5, M=1).
        assert_eq!(all_modes(f, 2.5), [V(0x4), V(0x4), V(0x5), V(0x4), V(0x5)]);
        // 5 is halfway between 4 (0x6, even) and 6 (0x7).
        assert_eq!(all_modes(f, -5.0), [V(0xe), V(0xe), V(0xe), V(0xf), V(0xf)]);
        // 0.25 is halfway between 0 and the subnormal 0.5 (0x1); -0.25 keeps -0 (0x8).
        assert_eq!(all_modes(f, 0.25), [V(0x0), V(0x0), V(0x1), V(0x0), V(0x1)]);
        assert_eq!(
            all_modes(f, -0.25),
            [V(0x8), V(0x8), V(0x8), V(0x9), V(0x9)]
        );
        // Max 6 (0x7, mantissa 1 = odd); 7 is halfway to 8: nearest overflows.
        assert_eq!(
            all_modes(f, 7.0),
            [OVER_POS, V(0x7), OVER_POS, V(0x7), OVER_POS]
        );
        assert_eq!(
            all_modes(f, 6.5),
            [V(0x7), V(0x7), OVER_POS, V(0x7), V(0x7)]
        );
        assert_eq!(all_modes(f, f64::NAN), [NR; 5]);
        assert_eq!(all_modes(f, f64::INFINITY), [NR; 5]);
        assert_eq!(all_modes(f, -0.0), [V(0x8); 5]);

        let f = MiniFloatFormat::FLOAT6_E2M3FN; // S EE MMM, bias 1; 1.0 = 0 01 000 = 0x08
        assert_eq!(
            all_modes(f, 1.0625),
            [V(0x08), V(0x08), V(0x09), V(0x08), V(0x09)]
        );
        // Max 7.5 = 1.875 * 2^2 (0x1f); 7.75 is halfway to 8.
        assert_eq!(
            all_modes(f, -7.75),
            [OVER_NEG, V(0x3f), V(0x3f), OVER_NEG, OVER_NEG]
        );
        assert_eq!(all_modes(f, -0.0), [V(0x20); 5]);

        let f = MiniFloatFormat::FLOAT6_E3M2FN; // S EEE MM, bias 3; 1.0 = 0 011 00 = 0x0c
        assert_eq!(
            all_modes(f, 1.125),
            [V(0x0c), V(0x0c), V(0x0d), V(0x0c), V(0x0d)]
        );
        // Max 28 = 1.75 * 2^4 (0x1f); 30 is halfway to 32.
        assert_eq!(
            all_modes(f, 30.0),
            [OVER_POS, V(0x1f), OVER_POS, V(0x1f), OVER_POS]
        );
        // Smallest subnormal 2^(1-3-2) = 0.0625; 0.03125 is the tie with zero.
        assert_eq!(
            all_modes(f, 0.03125),
            [V(0x00), V(0x00), V(0x01), V(0x00), V(0x01)]
        );
    }

    #[test]
    fn minifloat_hand_worked_e8m0() {
        let f = MiniFloatFormat::FLOAT8_E8M0FNU; // 2^(e - 127); 1.0 = 0x7f
        // 1.5 is halfway between 1 (0x7f) and 2 (0x80): ties go up (no even significand).
        assert_eq!(
            all_modes(f, 1.5),
            [V(0x80), V(0x7f), V(0x80), V(0x7f), V(0x80)]
        );
        // 3 is halfway between 2 (0x80) and 4 (0x81): up again, not to the even field 0x80.
        assert_eq!(
            all_modes(f, 3.0),
            [V(0x81), V(0x80), V(0x81), V(0x80), V(0x81)]
        );
        // 1.25 is nearer 1.
        assert_eq!(
            all_modes(f, 1.25),
            [V(0x7f), V(0x7f), V(0x80), V(0x7f), V(0x7f)]
        );
        // Max 2^127 (0xfe); 1.5 * 2^127 is halfway to 2^128.
        assert_eq!(
            all_modes(f, 1.5 * pow2(127)),
            [OVER_POS, V(0xfe), OVER_POS, V(0xfe), OVER_POS]
        );
        // Min 2^-127 (0x00). Below it there is no value: round up to 0x00 or refuse.
        assert_eq!(all_modes(f, pow2(-127)), [V(0x00); 5]);
        assert_eq!(
            all_modes(f, pow2(-128)),
            [V(0x00), NR, V(0x00), NR, V(0x00)]
        );
        assert_eq!(all_modes(f, 5e-324), [V(0x00), NR, V(0x00), NR, V(0x00)]);
        // 1.5 * 2^-128 is halfway between 2^-128 (not representable) and 2^-127.
        assert_eq!(f.round_from_f64(1.5 * pow2(-128), NearestEven), V(0x00));
        // 1.1 * 2^-127 is nearer 2^-127 (0x00) than 2^-126 (0x01) (ml_dtypes says 0x01).
        assert_eq!(
            all_modes(f, 1.1 * pow2(-127)),
            [V(0x00), V(0x00), V(0x01), V(0x00), V(0x00)]
        );
        // 1.5 * 2^-127 is the tie: up to 0x01 like every other e8m0 tie.
        assert_eq!(
            all_modes(f, 1.5 * pow2(-127)),
            [V(0x01), V(0x00), V(0x01), V(0x00), V(0x01)]
        );
        // No zero, no sign.
        assert_eq!(all_modes(f, 0.0), [NR; 5]);
        assert_eq!(all_modes(f, -0.0), [NR; 5]);
        assert_eq!(all_modes(f, -1.0), [NR; 5]);
        assert_eq!(all_modes(f, f64::INFINITY), [NR; 5]);
        assert_eq!(all_modes(f, f64::NAN), [V(0xff); 5]);
    }
}
