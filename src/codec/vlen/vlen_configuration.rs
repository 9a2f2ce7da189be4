//! `zarrs.vlen` configuration: both published forms read, the current one
//! written.

use serde::{Deserialize, Serialize};
use zarrs::metadata::v3::MetadataV3;
use zarrs::metadata::{Configuration, ConfigurationSerialize};
use zarrs::plugin::PluginCreateError;

use super::VLEN;
use crate::codec::{config_error, reject_unknown_keys};
use crate::kernels::vlen::{IndexLocation, IndexType};

/// `index_data_type`: the integer type of the offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VlenIndexDataType {
    /// `"uint32"`: chunks of up to 4 GiB of element bytes.
    UInt32,
    /// `"uint64"`.
    UInt64,
}

impl From<VlenIndexDataType> for IndexType {
    fn from(value: VlenIndexDataType) -> Self {
        match value {
            VlenIndexDataType::UInt32 => Self::U32,
            VlenIndexDataType::UInt64 => Self::U64,
        }
    }
}

/// `index_location`: where the index and its length are in a chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VlenIndexLocation {
    /// `"start"`: `length | index | data`; what the older configuration
    /// (without `index_location`) means.
    #[default]
    Start,
    /// `"end"`: `data | index | length`.
    End,
}

impl From<VlenIndexLocation> for IndexLocation {
    fn from(value: VlenIndexLocation) -> Self {
        match value {
            VlenIndexLocation::Start => Self::Start,
            VlenIndexLocation::End => Self::End,
        }
    }
}

/// The configuration of the `zarrs.vlen` codec.
///
/// Two forms are published: the current one with all four fields, and an
/// older one without `index_location` (read as `"start"`). Both are read; the
/// codec always writes the current form, as zarrs' built-in does, so that
/// every reader of either form can open what it writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VlenCodecConfiguration {
    /// The codecs of the index (`n + 1` offsets of `index_data_type`).
    pub index_codecs: Vec<MetadataV3>,
    /// The codecs of the element bytes (a `uint8` array).
    pub data_codecs: Vec<MetadataV3>,
    /// The integer type of the offsets.
    pub index_data_type: VlenIndexDataType,
    /// Where the index is; `None` in the older form, which means `start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_location: Option<VlenIndexLocation>,
}

impl ConfigurationSerialize for VlenCodecConfiguration {}

/// The configuration keys, in the order zarrs writes them.
const FIELDS: [&str; 4] = [
    "index_codecs",
    "data_codecs",
    "index_data_type",
    "index_location",
];

impl VlenCodecConfiguration {
    /// Parse configuration metadata, in either published form.
    ///
    /// The codec chains are only parsed as codec metadata here; they are
    /// resolved (and refused if unknown or unusable) by
    /// [`VlenCodec::new_with_configuration`](super::VlenCodec::new_with_configuration).
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] naming the codec, the field and the value
    /// for an unknown key, a missing required field, or a value of the wrong
    /// form.
    pub fn parse(configuration: &Configuration) -> Result<Self, PluginCreateError> {
        reject_unknown_keys(VLEN, configuration, &FIELDS)?;
        let required = |field: &str| {
            configuration
                .get(field)
                .ok_or_else(|| config_error(VLEN, field, "(missing)", "the field is required"))
        };
        let codecs = |field: &str| -> Result<Vec<MetadataV3>, PluginCreateError> {
            let value = required(field)?;
            serde_json::from_value(value.clone()).map_err(|e| {
                config_error(
                    VLEN,
                    field,
                    value,
                    format!("not a list of codec metadata: {e}"),
                )
            })
        };
        let index_data_type = {
            let value = required("index_data_type")?;
            serde_json::from_value(value.clone()).map_err(|_| {
                config_error(
                    VLEN,
                    "index_data_type",
                    value,
                    "expected \"uint32\" or \"uint64\"",
                )
            })?
        };
        let index_location = configuration
            .get("index_location")
            .map(|value| {
                serde_json::from_value(value.clone()).map_err(|_| {
                    config_error(
                        VLEN,
                        "index_location",
                        value,
                        "expected \"start\" or \"end\"",
                    )
                })
            })
            .transpose()?;
        Ok(Self {
            index_codecs: codecs("index_codecs")?,
            data_codecs: codecs("data_codecs")?,
            index_data_type,
            index_location,
        })
    }

    /// The index location, `start` for the older form.
    #[must_use]
    pub fn index_location(&self) -> VlenIndexLocation {
        self.index_location.unwrap_or_default()
    }

    /// The configuration metadata, in the form given.
    #[must_use]
    pub fn to_configuration(&self) -> Configuration {
        Configuration::from(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<VlenCodecConfiguration, String> {
        let configuration: Configuration = serde_json::from_str(json).unwrap();
        VlenCodecConfiguration::parse(&configuration).map_err(|e| e.to_string())
    }

    const BYTES: &str = r#"[{"name": "bytes", "configuration": {"endian": "little"}}]"#;

    #[test]
    fn both_forms() {
        let current = parse(&format!(
            r#"{{"index_codecs": {BYTES}, "data_codecs": [{{"name": "bytes"}}],
                "index_data_type": "uint32", "index_location": "end"}}"#
        ))
        .unwrap();
        assert_eq!(current.index_data_type, VlenIndexDataType::UInt32);
        assert_eq!(current.index_location(), VlenIndexLocation::End);
        assert_eq!(current.data_codecs[0].name(), "bytes");
        let old = parse(&format!(
            r#"{{"index_codecs": {BYTES}, "data_codecs": {BYTES}, "index_data_type": "uint64"}}"#
        ))
        .unwrap();
        assert_eq!(old.index_location, None);
        assert_eq!(old.index_location(), VlenIndexLocation::Start);
    }

    #[test]
    fn errors_name_field_and_value() {
        let cases = [
            (
                format!(
                    r#"{{"index_codecs": {BYTES}, "data_codecs": {BYTES}, "index_data_type": "uint16"}}"#
                ),
                ["index_data_type", "\"uint16\""],
            ),
            (
                format!(
                    r#"{{"index_codecs": {BYTES}, "data_codecs": {BYTES}, "index_data_type": "uint32", "index_location": "middle"}}"#
                ),
                ["index_location", "\"middle\""],
            ),
            (
                format!(
                    r#"{{"index_codecs": {BYTES}, "data_codecs": {BYTES}, "index_data_type": "uint32", "index_size": 4}}"#
                ),
                ["index_size", "4"],
            ),
            (
                format!(r#"{{"index_codecs": {BYTES}, "index_data_type": "uint32"}}"#),
                ["data_codecs", "(missing)"],
            ),
            (
                format!(
                    r#"{{"index_codecs": {BYTES}, "data_codecs": "bytes", "index_data_type": "uint32"}}"#
                ),
                ["data_codecs", "\"bytes\""],
            ),
            (
                format!(r#"{{"index_codecs": {BYTES}, "data_codecs": {BYTES}}}"#),
                ["index_data_type", "(missing)"],
            ),
        ];
        for (json, [field, value]) in cases {
            let err = parse(&json).unwrap_err();
            assert!(
                err.contains(&format!("zarrs.vlen: {field} = {value}")),
                "{json}: {err}"
            );
        }
    }

    #[test]
    fn written_as_given() {
        let json = format!(
            r#"{{"index_codecs": {BYTES}, "data_codecs": {BYTES}, "index_data_type": "uint64"}}"#
        );
        let configuration: Configuration = serde_json::from_str(&json).unwrap();
        let parsed = VlenCodecConfiguration::parse(&configuration).unwrap();
        assert_eq!(parsed.to_configuration(), configuration);
    }
}
