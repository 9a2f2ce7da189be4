//! `packbits` configuration: every published spelling is read, the current
//! one is written.

use zarrs::metadata::Configuration;
use zarrs::plugin::PluginCreateError;

use super::PACKBITS;
use crate::codec::{config_error, reject_unknown_keys};

/// How the number of padding bits is recorded in the encoded bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PaddingEncoding {
    /// Not recorded (`"none"`, the default).
    #[default]
    None,
    /// A byte before the packed bits (`"first_byte"`, originally `"start_byte"`).
    FirstByte,
    /// A byte after the packed bits (`"last_byte"`, originally `"end_byte"`).
    LastByte,
}

impl PaddingEncoding {
    /// The spelling of the current specification, which zarrs' built-in
    /// `packbits` reads too.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::FirstByte => "first_byte",
            Self::LastByte => "last_byte",
        }
    }

    /// Read any published spelling: `"none"`, `"first_byte"` / `"last_byte"`
    /// (current text), `"start_byte"` / `"end_byte"` (original text and the
    /// published JSON schema).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "none" => Some(Self::None),
            "first_byte" | "start_byte" => Some(Self::FirstByte),
            "last_byte" | "end_byte" => Some(Self::LastByte),
            _ => None,
        }
    }

    /// The number of bytes it adds to the packed bits.
    #[must_use]
    pub fn extra_bytes(self) -> u64 {
        match self {
            Self::None => 0,
            Self::FirstByte | Self::LastByte => 1,
        }
    }
}

/// The configuration of the `packbits` codec.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PackBitsCodecConfiguration {
    /// How the number of padding bits is recorded.
    pub padding_encoding: PaddingEncoding,
    /// The first encoded bit of each component (`0` when `None`).
    pub first_bit: Option<u64>,
    /// The last encoded bit of each component, inclusive (`N - 1` when
    /// `None`, where `N` is the number of bits of a component).
    pub last_bit: Option<u64>,
}

/// Every configuration key that has been published.
const FIELDS: [&str; 5] = [
    "padding_encoding",
    "first_bit",
    "last_bit",
    "start_bit",
    "end_bit",
];

/// No data type has components of more than 64 bits.
const MAX_COMPONENT_BITS: u64 = 64;

impl PackBitsCodecConfiguration {
    /// Parse and check codec configuration metadata.
    ///
    /// Reads `padding_encoding` as `"none"`, `"first_byte"`, `"last_byte"`,
    /// `"start_byte"` or `"end_byte"` (`null` or absent: `"none"`), and the
    /// bit range as `first_bit` / `last_bit` or `start_bit` / `end_bit`
    /// (`null` or absent: the whole component).
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] naming the codec, the field and the value
    /// for an unknown key, an unknown `padding_encoding`, a bit index that is
    /// not a non-negative integer below 64, a field given under both spellings
    /// with different values, or `last_bit < first_bit`.
    pub fn parse(configuration: &Configuration) -> Result<Self, PluginCreateError> {
        reject_unknown_keys(PACKBITS, configuration, &FIELDS)?;
        let padding_encoding = match configuration.get("padding_encoding") {
            None | Some(serde_json::Value::Null) => PaddingEncoding::None,
            Some(value) => value
                .as_str()
                .and_then(PaddingEncoding::from_name)
                .ok_or_else(|| {
                    config_error(
                        PACKBITS,
                        "padding_encoding",
                        value,
                        "expected \"none\", \"first_byte\", \"last_byte\", \"start_byte\" or \"end_byte\"",
                    )
                })?,
        };
        let configuration = Self {
            padding_encoding,
            first_bit: bit_field(configuration, "first_bit", "start_bit")?,
            last_bit: bit_field(configuration, "last_bit", "end_bit")?,
        };
        configuration.validate()?;
        Ok(configuration)
    }

    /// Check the bit range: each index below 64 and `last_bit >= first_bit`.
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] naming the codec, the field and the value.
    pub fn validate(&self) -> Result<(), PluginCreateError> {
        for (field, value) in [("first_bit", self.first_bit), ("last_bit", self.last_bit)] {
            if let Some(value) = value
                && value >= MAX_COMPONENT_BITS
            {
                return Err(config_error(
                    PACKBITS,
                    field,
                    value,
                    "must be less than 64 (no data type has larger components)",
                ));
            }
        }
        if let (Some(first), Some(last)) = (self.first_bit, self.last_bit)
            && last < first
        {
            return Err(config_error(
                PACKBITS,
                "last_bit",
                last,
                format!("must not be less than first_bit ({first})"),
            ));
        }
        Ok(())
    }

    /// The configuration metadata in the current spelling, with what zarrs'
    /// built-in `packbits` writes: `padding_encoding` unless `"none"`, and
    /// `first_bit` / `last_bit` when set.
    #[must_use]
    pub fn to_configuration(&self) -> Configuration {
        let mut map = serde_json::Map::new();
        if self.padding_encoding != PaddingEncoding::None {
            map.insert(
                "padding_encoding".to_string(),
                self.padding_encoding.name().into(),
            );
        }
        if let Some(first_bit) = self.first_bit {
            map.insert("first_bit".to_string(), first_bit.into());
        }
        if let Some(last_bit) = self.last_bit {
            map.insert("last_bit".to_string(), last_bit.into());
        }
        Configuration::from(map)
    }
}

/// A bit index under its current name or its schema alias: `null` or absent
/// is `None`; both names with different values is an error.
fn bit_field(
    configuration: &Configuration,
    name: &str,
    alias: &str,
) -> Result<Option<u64>, PluginCreateError> {
    let parse = |field: &str| -> Result<Option<u64>, PluginCreateError> {
        match configuration.get(field) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(value) => value.as_u64().map(Some).ok_or_else(|| {
                config_error(
                    PACKBITS,
                    field,
                    value,
                    "expected null or a non-negative integer",
                )
            }),
        }
    };
    let (value, alias_value) = (parse(name)?, parse(alias)?);
    match (value, alias_value) {
        (Some(v), Some(a)) if v != a => Err(config_error(
            PACKBITS,
            alias,
            a,
            format!("contradicts {name} = {v} (the two names mean the same field)"),
        )),
        _ => Ok(value.or(alias_value)),
    }
}
