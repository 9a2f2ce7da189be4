"""`cast_value` on the crate's kernels."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.codecs.cast_value import CastValue as _ZarrCastValue

from zarrs_extension_codecs import _calls, _native
from zarrs_extension_codecs import _per_codec as per_codec
from zarrs_extension_codecs._arrays import Array, elementwise, native

if TYPE_CHECKING:
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer

ScalarMapping = Mapping[str | float | int, str | float | int]


def _element(value: int | float, dtype: np.dtype[Any], side: str) -> bytes:
    """One `scalar_map` key or value as a native-endian element of `dtype`.

    zarr's `CastValue` hands its backend (cast-value-rs) the entries as
    Python ints (integer types) or floats (float types); this converts them
    as that backend does, so that the same elements match and the same bits
    are written: integers must fit the type, floats are rounded to the
    nearest element (to `float16` through `float32`, as cast-value-rs
    rounds), overflowing to infinity.
    """
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        if isinstance(value, bool | float) or not info.min <= value <= info.max:
            raise TypeError(
                f"scalar_map {side} value {value!r}: expected a value convertible to "
                f"{side} dtype {dtype}"
            )
        return np.asarray(value, dtype=dtype).tobytes()
    with np.errstate(over="ignore"):
        x = np.float64(value)
        if dtype.itemsize == 2:
            x = np.float32(x)
        return np.asarray(x, dtype=dtype).tobytes()


def _plan(
    source: np.dtype[Any],
    target: np.dtype[Any],
    rounding: str,
    out_of_range: str | None,
    scalar_map: ScalarMapping | None,
) -> _native.CastPlan:
    """The plan casting `source` to `target`, with the `scalar_map` entries
    of one direction."""
    entries = []
    if scalar_map is not None:
        # Parsed as zarr parses them before its backend sees them.
        to_src = int if np.issubdtype(source, np.integer) else float
        to_tgt = int if np.issubdtype(target, np.integer) else float
        entries = [
            (_element(to_src(k), source, "source"), _element(to_tgt(v), target, "target"))
            for k, v in scalar_map.items()
        ]
    return _native.CastPlan(source, target, rounding, out_of_range, entries)


class CastValue(_calls.SyncCalls, _ZarrCastValue):
    """zarr-python's `cast_value` codec, computed by zarrs_extension_codecs.

    A drop-in subclass of `zarr.codecs.CastValue`: the same constructor,
    attributes, `to_dict` and validation (inherited), and bit-identical
    chunks and fill values, without needing cast-value-rs. Casting runs the
    crate's kernels with the GIL released, into one new array; the chunk
    given is never written. A large chunk is split across cores. The async
    methods run on the calling thread, as zarr's do (see `_calls`). A chunk
    that is not a numpy array goes to zarr's own `_encode_sync` /
    `_decode_sync`.
    """

    def _cast(self, arr: Array, target: np.dtype[Any], direction: str) -> Array:
        """`arr` cast to `target` with the `scalar_map` entries of `direction`
        (`"encode"` or `"decode"`); zarr's `_do_cast` on the crate's kernels."""
        arr = np.asarray(arr)
        source, target_native = native(arr.dtype), native(target)
        # Made once per direction and pair of dtypes, not once per chunk.
        memo = per_codec.memo(self)
        key = (direction, source, target_native)
        plan = memo.get(key)
        if plan is None:
            plan = memo[key] = _plan(
                source,
                target_native,
                self.rounding,
                self.out_of_range,
                self._get_scalar_map(direction),
            )
        return elementwise(arr, target, lambda src, out: plan.cast(src, out), in_place_ok=False)

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        target = self.dtype.to_native_dtype()
        fill = np.array([chunk_spec.fill_value], dtype=chunk_spec.dtype.to_native_dtype())
        cast_fill = self._cast(fill, target, "encode")
        return replace(chunk_spec, dtype=self.dtype, fill_value=target.type(cast_fill[0]))

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        arr = _calls.numpy_chunk(chunk_array)
        if arr is None:
            return super()._encode_sync(chunk_array, chunk_spec)
        result = self._cast(arr, self.dtype.to_native_dtype(), "encode")
        return chunk_array.__class__.from_ndarray_like(result)

    def _decode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        arr = _calls.numpy_chunk(chunk_array)
        if arr is None:
            return super()._decode_sync(chunk_array, chunk_spec)
        result = self._cast(arr, chunk_spec.dtype.to_native_dtype(), "decode")
        return chunk_array.__class__.from_ndarray_like(result)
