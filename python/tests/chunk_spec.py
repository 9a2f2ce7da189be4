"""The `ArraySpec` a codec method is given for a chunk, for tests that call
the codecs' methods directly (as zarr's pipelines do)."""

from __future__ import annotations

from typing import Any

import numpy as np
from zarr.core.array_spec import ArrayConfig, ArraySpec
from zarr.core.buffer import default_buffer_prototype
from zarr.core.dtype import get_data_type_from_native_dtype


def spec(shape: tuple[int, ...], dtype: str, fill: Any = 0) -> ArraySpec:
    """A C-ordered chunk of `shape` and numpy `dtype` with fill value `fill`."""
    zdtype = get_data_type_from_native_dtype(np.dtype(dtype))
    return ArraySpec(
        shape=shape,
        dtype=zdtype,
        fill_value=zdtype.cast_scalar(fill),
        config=ArrayConfig(order="C", write_empty_chunks=True),
        prototype=default_buffer_prototype(),
    )
