//! `bytes` configuration: `endian`, checked when the codec is created.

use serde::{Deserialize, Serialize};
use zarrs::array::Endianness;
use zarrs::metadata::{Configuration, ConfigurationSerialize};
use zarrs::plugin::PluginCreateError;

use super::BYTES;
use crate::codec::{config_error, reject_unknown_keys};

/// The configuration of the `bytes` codec.
///
/// `endian` is required for data types with multi-byte elements (checked
/// once the data type is known) and ignored for the others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BytesCodecConfiguration {
    /// The byte order of multi-byte elements: `"little"` or `"big"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endian: Option<Endianness>,
}

impl ConfigurationSerialize for BytesCodecConfiguration {}

/// The configuration keys defined by the specification.
const FIELDS: [&str; 1] = ["endian"];

impl BytesCodecConfiguration {
    /// Parse and check codec configuration metadata.
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] naming the codec, the field and the value
    /// for an unknown key or an `endian` that is not `"little"` or `"big"`
    /// (`null` included: the specification allows the key to be absent, not
    /// empty).
    pub fn parse(configuration: &Configuration) -> Result<Self, PluginCreateError> {
        reject_unknown_keys(BYTES, configuration, &FIELDS)?;
        let endian = match configuration.get("endian") {
            None => None,
            Some(serde_json::Value::String(s)) if s == "little" => Some(Endianness::Little),
            Some(serde_json::Value::String(s)) if s == "big" => Some(Endianness::Big),
            Some(value) => {
                return Err(config_error(
                    BYTES,
                    "endian",
                    value,
                    "expected \"little\" or \"big\"",
                ));
            }
        };
        Ok(Self { endian })
    }

    /// The configuration metadata: `{"endian": ...}`, or `{}` without
    /// `endian` (which zarrs writes as the bare name `"bytes"`).
    #[must_use]
    pub fn to_configuration(&self) -> Configuration {
        Configuration::from(*self)
    }
}
