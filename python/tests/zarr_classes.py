"""zarr's own `ScaleOffset` and `CastValue`, found through this package's
subclasses rather than zarr's modules: ``zarr_upstream/conftest.py`` puts
the subclasses in zarr's module attributes for the session it runs in."""

from __future__ import annotations

import zarrs_extension_codecs as zec


def zarrs_own(cls: type) -> type:
    """The first class of zarr's among `cls`'s bases, in method order."""
    return next(c for c in cls.__mro__ if c.__module__.startswith("zarr."))


ZarrScaleOffset = zarrs_own(zec.ScaleOffset)
ZarrCastValue = zarrs_own(zec.CastValue)
