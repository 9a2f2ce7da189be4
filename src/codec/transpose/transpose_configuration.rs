//! `transpose` configuration: `order` as a permutation, or `"C"` / `"F"`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zarrs::metadata::{Configuration, ConfigurationSerialize};
use zarrs::plugin::PluginCreateError;

use super::TRANSPOSE;
use crate::codec::{config_error, reject_unknown_keys};

/// The `order` of the `transpose` codec.
///
/// The v1.0 text of the specification allows the strings `"C"` and `"F"`
/// besides an explicit permutation; the current schema (and zarrs' and
/// zarr-python's built-ins) only the permutation. Which permutation a string
/// stands for depends on the dimensionality of the chunk, known only when the
/// codec meets a chunk shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransposeOrder {
    /// An explicit permutation: axis `i` of the encoded chunk is axis
    /// `order[i]` of the decoded chunk.
    Permutation(Vec<usize>),
    /// `"C"`: the identity permutation `0, 1, ..., n-1` (a no-op).
    C,
    /// `"F"`: the reversed axes `n-1, ..., 1, 0`.
    F,
}

/// What a valid `order` is, for error messages.
const EXPECTED: &str = "expected a permutation of the axes 0, 1, ..., n-1, or \"C\" or \"F\"";

impl TransposeOrder {
    /// Parse the JSON value of `order`.
    ///
    /// # Errors
    /// [`PluginCreateError`] naming the codec, `order` and the value if it is
    /// not a permutation (duplicates, an axis out of range, a negative or
    /// non-integer item) nor `"C"` or `"F"`.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, PluginCreateError> {
        let error = |reason: String| config_error(TRANSPOSE, "order", value, reason);
        match value {
            serde_json::Value::String(s) if s == "C" => Ok(Self::C),
            serde_json::Value::String(s) if s == "F" => Ok(Self::F),
            serde_json::Value::Array(items) => {
                let order = items
                    .iter()
                    .map(|item| {
                        item.as_u64()
                            .and_then(|axis| usize::try_from(axis).ok())
                            .ok_or_else(|| {
                                error(format!("{item} is not an axis (a non-negative integer)"))
                            })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Self::new(order)
            }
            _ => Err(error(EXPECTED.to_string())),
        }
    }

    /// An explicit permutation, checked.
    ///
    /// # Errors
    /// [`PluginCreateError`] naming the codec, `order` and the value if
    /// `order` is not a permutation of `0..order.len()`.
    pub fn new(order: Vec<usize>) -> Result<Self, PluginCreateError> {
        check_permutation(&order)?;
        Ok(Self::Permutation(order))
    }

    /// The permutation for a chunk of `dimensionality` dimensions.
    ///
    /// # Errors
    /// A message (naming the codec, `order` and the value) if an explicit
    /// permutation has a different length or is not a permutation.
    pub fn permutation(&self, dimensionality: usize) -> Result<Vec<usize>, String> {
        match self {
            Self::C => Ok((0..dimensionality).collect()),
            Self::F => Ok((0..dimensionality).rev().collect()),
            Self::Permutation(order) => {
                check_permutation(order).map_err(|e| e.to_string())?;
                if order.len() == dimensionality {
                    Ok(order.clone())
                } else {
                    Err(config_error(
                        TRANSPOSE,
                        "order",
                        self.to_json(),
                        format!(
                            "has {} axes but the chunk has {dimensionality} dimensions",
                            order.len()
                        ),
                    )
                    .to_string())
                }
            }
        }
    }

    /// The JSON value of `order`, as read.
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Self::Permutation(order) => serde_json::Value::from(order.clone()),
            Self::C => "C".into(),
            Self::F => "F".into(),
        }
    }
}

/// Refuse duplicates and axes out of range, naming the first offender.
fn check_permutation(order: &[usize]) -> Result<(), PluginCreateError> {
    let mut seen = vec![false; order.len()];
    for &axis in order {
        let reason = match seen.get_mut(axis) {
            None => format!(
                "axis {axis} is out of range for {} dimensions; {EXPECTED}",
                order.len()
            ),
            Some(true) => format!("axis {axis} appears twice; {EXPECTED}"),
            Some(seen) => {
                *seen = true;
                continue;
            }
        };
        return Err(config_error(
            TRANSPOSE,
            "order",
            serde_json::Value::from(order.to_vec()),
            reason,
        ));
    }
    Ok(())
}

impl Serialize for TransposeOrder {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for TransposeOrder {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Self::from_json(&value).map_err(serde::de::Error::custom)
    }
}

/// The configuration of the `transpose` codec.
///
/// ```
/// # use zarrs_extension_codecs::codec::transpose::{TransposeCodecConfiguration, TransposeOrder};
/// let configuration: TransposeCodecConfiguration =
///     serde_json::from_str(r#"{"order": "F"}"#).unwrap();
/// assert_eq!(configuration.order, TransposeOrder::F);
/// assert!(serde_json::from_str::<TransposeCodecConfiguration>(r#"{"order": [0, 0]}"#).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransposeCodecConfiguration {
    /// The permutation of the axes.
    pub order: TransposeOrder,
}

impl ConfigurationSerialize for TransposeCodecConfiguration {}

impl TransposeCodecConfiguration {
    /// Parse and check codec configuration metadata.
    ///
    /// # Errors
    /// [`PluginCreateError`] naming the codec, the field and the value for an
    /// unknown key, a missing `order`, or an invalid `order`.
    pub fn parse(configuration: &Configuration) -> Result<Self, PluginCreateError> {
        reject_unknown_keys(TRANSPOSE, configuration, &["order"])?;
        let order = configuration.get("order").ok_or_else(|| {
            config_error(
                TRANSPOSE,
                "order",
                "(missing)",
                format!("the field is required; {EXPECTED}"),
            )
        })?;
        Ok(Self {
            order: TransposeOrder::from_json(order)?,
        })
    }

    /// The configuration metadata, with `order` as given here.
    #[must_use]
    pub fn to_configuration(&self) -> Configuration {
        Configuration::from(self.clone())
    }
}
