//! `cast_value` configuration: parsed once, written back as read.

use serde::{Deserialize, Serialize};
use zarrs::array::DataType;
use zarrs::metadata::Configuration;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

use super::CAST_VALUE;
use crate::codec::{config_error, reject_unknown_keys};
use crate::kernels::rounding::{OutOfRangeMode, RoundingMode, quoted};
use crate::numeric::NumericType;
use crate::scalar::parse_scalar;

/// One `scalar_map` entry as written: `[input, output]`.
pub type ScalarMapEntry = [serde_json::Value; 2];

/// The `scalar_map` field: explicit value mappings for each direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalarMap {
    /// Entries applied when encoding (array type -> `data_type`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encode: Option<Vec<ScalarMapEntry>>,
    /// Entries applied when decoding (`data_type` -> array type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode: Option<Vec<ScalarMapEntry>>,
}

/// The `cast_value` codec configuration.
///
/// Optional fields keep whether they were written, so that the metadata a
/// codec writes back is the metadata it read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CastValueCodecConfiguration {
    /// The encoded data type.
    pub data_type: MetadataV3,
    /// Rounding mode; `nearest-even` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding: Option<RoundingMode>,
    /// Out-of-range rule; out-of-range values are an error when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_range: Option<OutOfRangeMode>,
    /// Explicit mappings, applied before any other rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scalar_map: Option<ScalarMap>,
}

/// Field names, in the order the spec lists them.
const FIELDS: [&str; 4] = ["data_type", "rounding", "out_of_range", "scalar_map"];

impl CastValueCodecConfiguration {
    /// Parse and check a configuration, with errors that name the field and value.
    ///
    /// Everything that does not depend on the array's data type is checked
    /// here: unknown keys, the spelling of `rounding` / `out_of_range`, that
    /// `data_type` is a real-number type, `wrap` into a float, and the
    /// `scalar_map` entries that are written in `data_type`'s encoding.
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] naming the codec, the field and the value.
    pub fn parse(configuration: &Configuration) -> Result<Self, PluginCreateError> {
        reject_unknown_keys(CAST_VALUE, configuration, &FIELDS)?;
        let field = |name: &str| configuration.get(name);

        let data_type_json = field("data_type").ok_or_else(|| {
            config_error(
                CAST_VALUE,
                "data_type",
                "(missing)",
                "the field is required",
            )
        })?;
        let data_type: MetadataV3 =
            serde_json::from_value(data_type_json.clone()).map_err(|e| {
                config_error(
                    CAST_VALUE,
                    "data_type",
                    data_type_json,
                    format!("not data type metadata: {e}"),
                )
            })?;
        let (_, target) = resolve_target(&data_type, data_type_json)?;
        // An empty configuration is no configuration: written back as the
        // bare name, so that writing, reading and writing again agree
        // (`["float64", {}]` was written as `{"name": "float64"}`, which
        // reads back without one; found by the configuration fuzz target).
        let data_type = if data_type.configuration().is_some_and(|c| c.is_empty()) {
            MetadataV3::new(data_type.name().to_string())
        } else {
            data_type
        };

        let rounding = field("rounding")
            .map(|v| {
                serde_json::from_value::<RoundingMode>(v.clone()).map_err(|_| {
                    let expected = quoted(RoundingMode::ALL.map(RoundingMode::as_str));
                    config_error(
                        CAST_VALUE,
                        "rounding",
                        v,
                        format!("expected one of {expected}"),
                    )
                })
            })
            .transpose()?;
        let out_of_range = field("out_of_range")
            .map(|v| {
                serde_json::from_value::<OutOfRangeMode>(v.clone()).map_err(|_| {
                    config_error(
                        CAST_VALUE,
                        "out_of_range",
                        v,
                        "expected \"clamp\" or \"wrap\"",
                    )
                })
            })
            .transpose()?;
        if out_of_range == Some(OutOfRangeMode::Wrap) && target.is_float() {
            return Err(config_error(
                CAST_VALUE,
                "out_of_range",
                "\"wrap\"",
                format!("wrap is only defined for integer data types, not {target}"),
            ));
        }

        let scalar_map = field("scalar_map")
            .map(|v| parse_scalar_map(v, target))
            .transpose()?;

        Ok(Self {
            data_type,
            rounding,
            out_of_range,
            scalar_map,
        })
    }

    /// The configuration as JSON, as it was read.
    #[must_use]
    pub fn to_configuration(&self) -> Configuration {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => Configuration::from(map),
            _ => Configuration::default(),
        }
    }

    /// The encoded (target) type.
    ///
    /// # Errors
    /// If `data_type` is not a real-number type known to zarrs.
    pub fn target_type(&self) -> Result<(DataType, NumericType), PluginCreateError> {
        resolve_target(&self.data_type, &self.data_type)
    }
}

/// The zarrs data type and [`NumericType`] of the `data_type` field, whose
/// value is shown as `shown` in errors.
fn resolve_target(
    metadata: &MetadataV3,
    shown: impl std::fmt::Display,
) -> Result<(DataType, NumericType), PluginCreateError> {
    let data_type = DataType::from_metadata(metadata)
        .map_err(|e| config_error(CAST_VALUE, "data_type", &shown, e))?;
    let numeric = NumericType::from_data_type(&data_type).ok_or_else(|| {
        config_error(
            CAST_VALUE,
            "data_type",
            &shown,
            "cast_value casts between integer and floating-point types only",
        )
    })?;
    Ok((data_type, numeric))
}

/// Check the shape of `scalar_map` and parse the halves written in `target`'s
/// encoding (decode inputs, encode outputs). The other halves are in the
/// array's data type, which only the codec chain knows; they are parsed when
/// the codec first sees it.
fn parse_scalar_map(
    json: &serde_json::Value,
    target: NumericType,
) -> Result<ScalarMap, PluginCreateError> {
    let map: ScalarMap = serde_json::from_value(json.clone()).map_err(|e| {
        config_error(
            CAST_VALUE,
            "scalar_map",
            json,
            format!(
                "expected {{\"encode\": [[in, out], ...], \"decode\": [[in, out], ...]}} ({e})"
            ),
        )
    })?;
    for (direction, entries, target_index) in
        [("encode", &map.encode, 1), ("decode", &map.decode, 0)]
    {
        for entry in entries.iter().flatten() {
            let value = &entry[target_index];
            parse_scalar(value, target).map_err(|reason| {
                config_error(
                    CAST_VALUE,
                    &format!("scalar_map.{direction}"),
                    serde_json::Value::Array(entry.to_vec()),
                    reason,
                )
            })?;
            let other = &entry[1 - target_index];
            if !(other.is_number() || other.is_string()) {
                return Err(config_error(
                    CAST_VALUE,
                    &format!("scalar_map.{direction}"),
                    serde_json::Value::Array(entry.to_vec()),
                    format!("{other} is not a scalar"),
                ));
            }
        }
    }
    Ok(map)
}
