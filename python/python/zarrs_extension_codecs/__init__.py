"""zarr-python's `scale_offset` and `cast_value` codecs on the kernels of
the Rust crate zarrs_extension_codecs: bit-identical to zarr's own classes,
several times faster, and free of the GIL.

Select them for every array zarr opens with::

    import zarrs_extension_codecs

    zarrs_extension_codecs.enable()

or with zarr's own configuration (also through the environment variables
``ZARR_CODECS__SCALE_OFFSET`` / ``ZARR_CODECS__CAST_VALUE``, for worker
processes)::

    zarr.config.set({
        "codecs.scale_offset": "zarrs_extension_codecs.ScaleOffset",
        "codecs.cast_value": "zarrs_extension_codecs.CastValue",
    })

Installing the package alone changes nothing: zarr keeps its own classes
until one of these selects the ones here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import zarr
from zarr.registry import register_codec, register_pipeline

from zarrs_extension_codecs._cast_value import CastValue
from zarrs_extension_codecs._native import __version__
from zarrs_extension_codecs._pipeline import CodecPipeline, FallbackError, enable_pipeline
from zarrs_extension_codecs._remote import clear_remote_stores
from zarrs_extension_codecs._scale_offset import ScaleOffset

if TYPE_CHECKING:
    from donfig.config_obj import ConfigSet

__all__ = [
    "CastValue",
    "CodecPipeline",
    "FallbackError",
    "ScaleOffset",
    "__version__",
    "clear_remote_stores",
    "disable",
    "enable",
    "enable_pipeline",
]

# zarr names an implementation by its class's module and qualified name; these
# are the names the documentation gives (and that pickles refer to).
ScaleOffset.__module__ = __name__
CastValue.__module__ = __name__
CodecPipeline.__module__ = __name__
register_pipeline(CodecPipeline)

_OURS = {
    "scale_offset": f"{__name__}.ScaleOffset",
    "cast_value": f"{__name__}.CastValue",
}
_ZARRS = {
    "scale_offset": "zarr.codecs.scale_offset.ScaleOffset",
    "cast_value": "zarr.codecs.cast_value.CastValue",
}

# Registered here as well as through the `zarr.codecs` entry points, so that
# `enable()` works in a process that imported the package before zarr
# loaded its entry points.
register_codec("scale_offset", ScaleOffset)
register_codec("cast_value", CastValue)

# With two implementations of a codec registered and none configured, zarr
# warns at every array it opens. Name zarr's own as the default: what zarr
# would pick anyway. A value already set (by `zarr.config.set` or
# ZARR_CODECS__* variables) is kept, and the default survives
# `zarr.config.reset()`.
zarr.config.update_defaults({"codecs": dict(_ZARRS)})


def enable() -> ConfigSet:
    """Select this package's `ScaleOffset` and `CastValue` for every array
    zarr opens or creates from now on.

    Sets zarr's configuration keys ``codecs.scale_offset`` and
    ``codecs.cast_value``. The result may be used as a context manager, to
    select them for a block only::

        with zarrs_extension_codecs.enable():
            data = zarr.open_array("product.zarr")[:]
    """
    return zarr.config.set({f"codecs.{name}": cls for name, cls in _OURS.items()})


def disable() -> ConfigSet:
    """Select zarr's own `ScaleOffset` and `CastValue` again."""
    return zarr.config.set({f"codecs.{name}": cls for name, cls in _ZARRS.items()})
