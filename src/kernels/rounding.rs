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
    /// Every mode, in the order the `cast_value` spec lists them.
    pub const ALL: [Self; 5] = [
        Self::NearestEven,
        Self::TowardsZero,
        Self::TowardsPositive,
        Self::TowardsNegative,
        Self::NearestAway,
    ];

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
    /// Every rule, in the order the `cast_value` spec lists them.
    pub const ALL: [Self; 2] = [Self::Clamp, Self::Wrap];

    /// The spelling used in codec metadata.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Clamp => "clamp",
            Self::Wrap => "wrap",
        }
    }
}

/// A spelling that is not one of a `cast_value` field's modes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {field} {value:?}: expected one of {expected}")]
pub struct UnknownModeError {
    /// `"rounding"` or `"out_of_range"`.
    pub field: &'static str,
    /// The spelling given.
    pub value: String,
    /// The spellings allowed, quoted and separated by commas.
    pub expected: String,
}

/// `spellings` quoted and separated by commas: `"a", "b"`.
pub(crate) fn quoted(spellings: impl IntoIterator<Item = &'static str>) -> String {
    spellings
        .into_iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The one of `modes` spelled `s`, or the error for `field`.
fn parse_mode<M: Copy>(
    modes: &[M],
    spelling: fn(M) -> &'static str,
    field: &'static str,
    s: &str,
) -> Result<M, UnknownModeError> {
    modes
        .iter()
        .copied()
        .find(|&mode| spelling(mode) == s)
        .ok_or_else(|| UnknownModeError {
            field,
            value: s.to_owned(),
            expected: quoted(modes.iter().map(|&mode| spelling(mode))),
        })
}

impl std::str::FromStr for RoundingMode {
    type Err = UnknownModeError;

    /// The mode spelled `s` as in codec metadata (`"nearest-even"`, ...).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_mode(&Self::ALL, Self::as_str, "rounding", s)
    }
}

impl std::str::FromStr for OutOfRangeMode {
    type Err = UnknownModeError;

    /// The rule spelled `s` as in codec metadata (`"clamp"`, `"wrap"`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_mode(&Self::ALL, Self::as_str, "out_of_range", s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spellings are the spec's (worked out from its text, not from
    /// `as_str`), each parses back, and serde agrees.
    #[test]
    fn spellings_parse_back() {
        let spec = [
            "nearest-even",
            "towards-zero",
            "towards-positive",
            "towards-negative",
            "nearest-away",
        ];
        for (mode, spelling) in RoundingMode::ALL.into_iter().zip(spec) {
            assert_eq!(mode.as_str(), spelling);
            assert_eq!(spelling.parse::<RoundingMode>(), Ok(mode));
            assert_eq!(
                serde_json::from_value::<RoundingMode>(spelling.into()).unwrap(),
                mode
            );
        }
        for (mode, spelling) in OutOfRangeMode::ALL.into_iter().zip(["clamp", "wrap"]) {
            assert_eq!(spelling.parse::<OutOfRangeMode>(), Ok(mode));
            assert_eq!(
                serde_json::from_value::<OutOfRangeMode>(spelling.into()).unwrap(),
                mode
            );
        }
    }

    #[test]
    fn unknown_spellings_name_field_value_and_choices() {
        let e = "nearest".parse::<RoundingMode>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown rounding \"nearest\": expected one of \"nearest-even\", \"towards-zero\", \
             \"towards-positive\", \"towards-negative\", \"nearest-away\""
        );
        let e = "Clamp".parse::<OutOfRangeMode>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown out_of_range \"Clamp\": expected one of \"clamp\", \"wrap\""
        );
    }
}
