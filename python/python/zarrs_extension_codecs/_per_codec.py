"""What a codec works out once for each data type, kept beside the codec.

zarr's codec classes are frozen dataclasses holding dicts (`scalar_map`),
so they cannot be keys of a cache, and their configuration values cannot
either: `0.0` and `-0.0` are equal keys that must give different bits.
Values are kept per codec object instead, and dropped with it.
"""

from __future__ import annotations

import weakref
from typing import Any

_memos: dict[int, dict[Any, Any]] = {}


def memo(codec: object) -> dict[Any, Any]:
    """A dict that lives as long as `codec`, for values derived from it."""
    found = _memos.get(id(codec))
    if found is None:
        found = _memos[id(codec)] = {}
        # Runs when `codec` is freed, before its id can be reused.
        weakref.finalize(codec, _memos.pop, id(codec), None)
    return found
