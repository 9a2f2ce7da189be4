//! Installing this crate's `bytes`, `transpose`, `packbits`, `zarrs.vlen`,
//! `vlen-utf8` and `vlen-bytes` over zarrs' built-in codecs of the same
//! names.
//!
//! zarrs 0.23 registers codecs with these names itself. Registering a second
//! `inventory` plugin for a name would leave the winner unspecified (it
//! changes with LTO), so these codecs are installed only on request, through
//! zarrs' runtime registry, which zarrs consults before any `inventory`
//! plugin.

use std::sync::OnceLock;

use zarrs::array::codec::api::{
    CodecRuntimePluginV3, CodecRuntimeRegistryHandleV3, register_codec_v3,
};

use crate::codec::{Override, bytes, packbits, transpose, vlen, vlen_v2};

/// The overrides, in registration order.
const OVERRIDES: [Override; 6] = [
    bytes::OVERRIDE,
    transpose::OVERRIDE,
    packbits::OVERRIDE,
    vlen::OVERRIDE,
    vlen_v2::OVERRIDE_UTF8,
    vlen_v2::OVERRIDE_BYTES,
];

/// Whether `name` is installed by [`register_overrides`] (zarrs has a
/// built-in of that name) rather than registered on linking.
pub(crate) fn is_override_name(name: &str) -> bool {
    OVERRIDES.iter().any(|o| o.names.contains(&name))
}

/// Every name [`register_overrides`] installs.
#[cfg(test)]
pub(crate) fn override_names() -> impl Iterator<Item = &'static str> {
    OVERRIDES.iter().flat_map(|o| o.names.iter().copied())
}

static HANDLES: OnceLock<Vec<CodecRuntimeRegistryHandleV3>> = OnceLock::new();

/// Install this crate's `bytes`, `transpose`, `packbits`, `zarrs.vlen`,
/// `vlen-utf8` and `vlen-bytes` codecs in place of zarrs' built-ins, for
/// every array opened or created afterwards.
///
/// Call it once, early (e.g. at the start of `main`), when you need what
/// they add over the built-ins: reading `packbits` written with the original
/// spelling (`"start_byte"` / `"end_byte"`), `transpose` with `"C"` / `"F"`,
/// sub-byte types decoded as their specs say, corrupt `vlen-utf8` /
/// `vlen-bytes` chunks (e.g. zarr-python's strings) refused with an error
/// where zarrs' built-ins panic, or their speed. It is
/// idempotent and safe to call from several threads: only the first call
/// registers anything.
///
/// ```
/// zarrs_extension_codecs::register_overrides();
/// zarrs_extension_codecs::register_overrides(); // no effect
/// ```
pub fn register_overrides() {
    HANDLES.get_or_init(|| {
        OVERRIDES
            .iter()
            .filter(|o| !o.names.is_empty())
            .map(|o| {
                let (names, create) = (o.names, o.create);
                register_codec_v3(CodecRuntimePluginV3::new(
                    move |name| names.contains(&name),
                    create,
                ))
            })
            .collect()
    });
}
