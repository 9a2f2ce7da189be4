//! Which of this crate's codec names zarrs resolves to this crate's codecs
//! right now, asked of zarrs' own registry.
//!
//! zarrs reports a codec it cannot find only as "codec NAME is not
//! supported", which is also what it says when this crate is a dependency but
//! was never linked (nothing names it, so the linker drops it and its
//! `inventory` registrations with it). [`registered_codecs`] lets a program
//! check at start-up instead of at the first array it opens.

use std::any::Any;

use serde_json::json;
use zarrs::array::codec::api::Codec;
use zarrs::metadata::v3::MetadataV3;

use crate::codec::{
    bytes::BytesCodec, cast_value::CastValueCodec, packbits::PackBitsCodec,
    scale_offset::ScaleOffsetCodec, transpose::TransposeCodec, vlen::VlenCodec,
    vlen_v2::VlenV2Codec,
};

/// One name this crate's codecs answer to, and what zarrs makes of it now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodecRegistration {
    /// The codec name (or alias) as it appears in array metadata.
    pub name: &'static str,
    /// Whether zarrs, asked to create a codec of this name, creates this
    /// crate's codec.
    pub registered: bool,
    /// Whether the name is installed by
    /// [`register_overrides`](crate::register_overrides) (zarrs has a
    /// built-in of the same name) rather than automatically on linking.
    pub needs_overrides: bool,
}

/// A name, a minimal valid configuration, and whether a created codec is
/// this crate's.
struct Probe {
    name: &'static str,
    configuration: fn() -> serde_json::Value,
    is_ours: fn(&dyn Any) -> bool,
}

fn empty() -> serde_json::Value {
    json!({})
}

fn vlen_configuration() -> serde_json::Value {
    json!({
        "data_codecs": [{"name": "bytes"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_data_type": "uint32",
    })
}

const PROBES: [Probe; 10] = [
    Probe {
        name: "scale_offset",
        configuration: empty,
        is_ours: |c| c.is::<ScaleOffsetCodec>(),
    },
    Probe {
        name: "cast_value",
        configuration: || json!({"data_type": "uint8"}),
        is_ours: |c| c.is::<CastValueCodec>(),
    },
    Probe {
        name: "bytes",
        configuration: || json!({"endian": "little"}),
        is_ours: |c| c.is::<BytesCodec>(),
    },
    Probe {
        name: "endian",
        configuration: || json!({"endian": "little"}),
        is_ours: |c| c.is::<BytesCodec>(),
    },
    Probe {
        name: "transpose",
        configuration: || json!({"order": [0]}),
        is_ours: |c| c.is::<TransposeCodec>(),
    },
    Probe {
        name: "packbits",
        configuration: empty,
        is_ours: |c| c.is::<PackBitsCodec>(),
    },
    Probe {
        name: "zarrs.vlen",
        configuration: vlen_configuration,
        is_ours: |c| c.is::<VlenCodec>(),
    },
    Probe {
        name: "https://codec.zarrs.dev/array_to_bytes/vlen",
        configuration: vlen_configuration,
        is_ours: |c| c.is::<VlenCodec>(),
    },
    Probe {
        name: "vlen-utf8",
        configuration: empty,
        is_ours: |c| c.is::<VlenV2Codec>(),
    },
    Probe {
        name: "vlen-bytes",
        configuration: empty,
        is_ours: |c| c.is::<VlenV2Codec>(),
    },
];

/// Every name this crate's codecs answer to, each with whether zarrs creates
/// this crate's codec for it right now.
///
/// Each name is resolved the way zarrs resolves codecs in array metadata
/// (its runtime registry, then its `inventory` plugins), with a minimal
/// valid configuration, and the created codec's type is checked. So
/// `scale_offset` and `cast_value` show `registered: true` once the crate is
/// linked, and the override names once
/// [`register_overrides`](crate::register_overrides) has run (before that,
/// zarrs' built-ins answer to them).
///
/// ```
/// use zarrs_extension_codecs::registered_codecs;
///
/// let missing: Vec<_> = registered_codecs()
///     .into_iter()
///     .filter(|c| !c.needs_overrides && !c.registered)
///     .map(|c| c.name)
///     .collect();
/// assert!(missing.is_empty(), "not registered with zarrs: {missing:?}");
/// ```
#[must_use]
pub fn registered_codecs() -> Vec<CodecRegistration> {
    PROBES
        .iter()
        .map(|probe| CodecRegistration {
            name: probe.name,
            registered: creates_ours(probe),
            needs_overrides: crate::overrides::is_override_name(probe.name),
        })
        .collect()
}

/// Whether zarrs creates this crate's codec for `probe`'s name. A creation
/// error (no codec of that name, or a codec that refuses the configuration)
/// counts as not ours.
fn creates_ours(probe: &Probe) -> bool {
    let Ok(metadata) = serde_json::from_value::<MetadataV3>(
        json!({"name": probe.name, "configuration": (probe.configuration)()}),
    ) else {
        return false;
    };
    match Codec::from_metadata(&metadata) {
        Ok(Codec::ArrayToArray(codec)) => (probe.is_ours)(codec.as_any()),
        Ok(Codec::ArrayToBytes(codec)) => (probe.is_ours)(codec.as_any()),
        Ok(Codec::BytesToBytes(codec)) => (probe.is_ours)(codec.as_any()),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name `register_overrides` installs is probed, so a new override
    /// cannot be left out of `registered_codecs`.
    #[test]
    fn every_override_is_probed() {
        for name in crate::overrides::override_names() {
            assert!(PROBES.iter().any(|p| p.name == name), "{name} not probed");
        }
    }
}
