//! The rounding and out-of-range rules of `cast_value`.

use serde::{Deserialize, Serialize};

/// How a value that the target type cannot hold exactly is rounded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoundingMode {
    /// Nearest, ties to even (IEEE 754 `roundTiesToEven`); the default.
    #[default]
    NearestEven,
    /// Towards zero (truncation).
    TowardsZero,
    /// Towards +infinity (ceiling).
    TowardsPositive,
    /// Towards -infinity (floor).
    TowardsNegative,
    /// Nearest, ties away from zero.
    NearestAway,
}

impl RoundingMode {
    /// The spelling used in codec metadata.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NearestEven => "nearest-even",
            Self::TowardsZero => "towards-zero",
            Self::TowardsPositive => "towards-positive",
            Self::TowardsNegative => "towards-negative",
            Self::NearestAway => "nearest-away",
        }
    }
}

/// What happens to a value outside the range of the target type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutOfRangeMode {
    /// Clamp to the target's minimum / maximum (±infinity for IEEE floats).
    Clamp,
    /// Reduce modulo 2^N (two's complement integer targets only).
    Wrap,
}

impl OutOfRangeMode {
    /// The spelling used in codec metadata.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Clamp => "clamp",
            Self::Wrap => "wrap",
        }
    }
}
