//! Floats of at most 8 bits (`float4_e2m1fn` ... `float8_e8m0fnu`).
//!
//! zarrs 0.23 stores each of these as one byte holding the bits. Rather than
//! one code path per format, a [`MiniFloatFormat`] describes the bit layout and
//! which special values exist, and the conversions below are written once
//! against that description.

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
    pub const FLOAT4_E2M1FN: Self = Self::new("float4_e2m1fn", 2, 1, 1, MiniFloatSpecials::FiniteOnly);
    /// `float6_e2m3fn`
    pub const FLOAT6_E2M3FN: Self = Self::new("float6_e2m3fn", 2, 3, 1, MiniFloatSpecials::FiniteOnly);
    /// `float6_e3m2fn`
    pub const FLOAT6_E3M2FN: Self = Self::new("float6_e3m2fn", 3, 2, 3, MiniFloatSpecials::FiniteOnly);
    /// `float8_e3m4`
    pub const FLOAT8_E3M4: Self = Self::new("float8_e3m4", 3, 4, 3, MiniFloatSpecials::Ieee);
    /// `float8_e4m3`
    pub const FLOAT8_E4M3: Self = Self::new("float8_e4m3", 4, 3, 7, MiniFloatSpecials::Ieee);
    /// `float8_e4m3b11fnuz`
    pub const FLOAT8_E4M3B11FNUZ: Self =
        Self::new("float8_e4m3b11fnuz", 4, 3, 11, MiniFloatSpecials::FiniteUnsignedZero);
    /// `float8_e4m3fnuz`
    pub const FLOAT8_E4M3FNUZ: Self =
        Self::new("float8_e4m3fnuz", 4, 3, 8, MiniFloatSpecials::FiniteUnsignedZero);
    /// `float8_e5m2`
    pub const FLOAT8_E5M2: Self = Self::new("float8_e5m2", 5, 2, 15, MiniFloatSpecials::Ieee);
    /// `float8_e5m2fnuz`
    pub const FLOAT8_E5M2FNUZ: Self =
        Self::new("float8_e5m2fnuz", 5, 2, 16, MiniFloatSpecials::FiniteUnsignedZero);
    /// `float8_e8m0fnu`
    pub const FLOAT8_E8M0FNU: Self = Self::new("float8_e8m0fnu", 8, 0, 127, MiniFloatSpecials::ExponentOnly);

    const fn new(
        name: &'static str,
        exponent_bits: u32,
        mantissa_bits: u32,
        bias: i32,
        specials: MiniFloatSpecials,
    ) -> Self {
        Self { name, exponent_bits, mantissa_bits, bias, specials }
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
    #[must_use]
    pub fn to_f64(&self, bits: u8) -> f64 {
        let bits = u32::from(bits) & ((1u32 << self.bits()) - 1);
        let man_mask = (1u32 << self.mantissa_bits) - 1;
        let exp_mask = (1u32 << self.exponent_bits) - 1;
        let mantissa = bits & man_mask;
        let exponent = (bits >> self.mantissa_bits) & exp_mask;
        let negative = self.is_signed() && (bits >> (self.bits() - 1)) & 1 == 1;
        match self.specials {
            MiniFloatSpecials::ExponentOnly => {
                if exponent == exp_mask {
                    return f64::NAN;
                }
                return 2f64.powi(exponent as i32 - self.bias);
            }
            MiniFloatSpecials::FiniteUnsignedZero if negative && exponent == 0 && mantissa == 0 => {
                return f64::NAN;
            }
            MiniFloatSpecials::Ieee if exponent == exp_mask => {
                let v = if mantissa == 0 { f64::INFINITY } else { f64::NAN };
                return if negative { -v } else { v };
            }
            _ => {}
        }
        let magnitude = if exponent == 0 {
            f64::from(mantissa) * 2f64.powi(1 - self.bias - self.mantissa_bits as i32)
        } else {
            f64::from(mantissa | (1 << self.mantissa_bits))
                * 2f64.powi(exponent as i32 - self.bias - self.mantissa_bits as i32)
        };
        if negative { -magnitude } else { magnitude }
    }
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
    /// NaN or infinity into a format without them, or a negative value into an unsigned format.
    NotRepresentable,
}

impl MiniFloatFormat {
    /// Round `value` into this format with `rounding` (unbounded exponent, then a range check).
    #[must_use]
    pub fn round_from_f64(&self, value: f64, rounding: crate::kernels::rounding::RoundingMode) -> MiniRound {
        let _ = (value, rounding);
        todo!("minifloat rounding")
    }
}
