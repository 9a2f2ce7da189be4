//! `scale_offset` configuration: checked once, written back as read.

use serde::{Deserialize, Deserializer, Serialize};
use zarrs::metadata::{Configuration, ConfigurationSerialize};
use zarrs::plugin::PluginCreateError;

use super::SCALE_OFFSET;
use crate::codec::{config_error, reject_unknown_keys};
use crate::kernels::minifloat::MiniFloatFormat;
use crate::numeric::NumericType;
use crate::scalar::parse_scalar;

/// The configuration of the `scale_offset` codec.
///
/// Both fields keep their JSON exactly as written (e.g. `1000`, `0.1`,
/// `"NaN"`, `"0x3f800000"`), because their meaning depends on the data type of
/// the array, which is only known once the codec is part of a codec chain. The
/// metadata the codec writes back is therefore the metadata it read.
///
/// An absent field is the identity element of the data type (offset `0`,
/// scale `1`); with neither field the codec is a no-op.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleOffsetCodecConfiguration {
    /// The value subtracted when encoding, in the fill-value JSON encoding of
    /// the array's data type.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub offset: Option<serde_json::Value>,
    /// The value multiplied by when encoding (after subtracting `offset`), in
    /// the fill-value JSON encoding of the array's data type.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub scale: Option<serde_json::Value>,
}

impl ConfigurationSerialize for ScaleOffsetCodecConfiguration {}

/// A field that is present is `Some`, even if it is `null` (which
/// [`ScaleOffsetCodecConfiguration::validate`] then refuses).
fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
}

/// The configuration keys defined by the specification.
const FIELDS: [&str; 2] = ["offset", "scale"];

/// The types whose fill-value encodings together accept every scalar spelling:
/// any number or numeric string, `"NaN"`, `"Infinity"`, `"+Infinity"`,
/// `"-Infinity"`, and hex bit patterns of 16, 8, 4 or 2 digits.
const SPELLING_TYPES: [NumericType; 4] = [
    NumericType::Float64,
    NumericType::Float32,
    NumericType::Float16,
    NumericType::Mini(MiniFloatFormat::FLOAT8_E4M3),
];

impl ScaleOffsetCodecConfiguration {
    /// Parse and check codec configuration metadata.
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] naming the codec, the field and the value
    /// for an unknown key or a value that is not a scalar of any data type.
    pub fn parse(configuration: &Configuration) -> Result<Self, PluginCreateError> {
        reject_unknown_keys(SCALE_OFFSET, configuration, &FIELDS)?;
        let configuration = Self {
            offset: configuration.get("offset").cloned(),
            scale: configuration.get("scale").cloned(),
        };
        configuration.validate()?;
        Ok(configuration)
    }

    /// Check that `offset` and `scale` are scalars of *some* integer or
    /// floating-point data type (which one is only known later).
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] naming the codec, the field and the value.
    pub fn validate(&self) -> Result<(), PluginCreateError> {
        for (field, value) in self.fields() {
            if let Some(value) = value
                && !SPELLING_TYPES
                    .iter()
                    .any(|&data_type| parse_scalar(value, data_type).is_ok())
            {
                return Err(config_error(
                    SCALE_OFFSET,
                    field,
                    value,
                    "not a scalar of any numeric data type (expected a number, \"NaN\", \
                     \"Infinity\", \"-Infinity\", a hex bit pattern \"0x...\", or a number \
                     written as a string)",
                ));
            }
        }
        Ok(())
    }

    /// The configuration metadata, exactly as read.
    #[must_use]
    pub fn to_configuration(&self) -> Configuration {
        Configuration::from(self.clone())
    }

    /// `(name, value)` of both fields.
    pub(super) fn fields(&self) -> [(&'static str, Option<&serde_json::Value>); 2] {
        [
            ("offset", self.offset.as_ref()),
            ("scale", self.scale.as_ref()),
        ]
    }
}
