"""`scale_offset` on the crate's kernels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.codecs.scale_offset import ScaleOffset as _ZarrScaleOffset

from zarrs_extension_codecs import _calls, _native
from zarrs_extension_codecs import _per_codec as per_codec
from zarrs_extension_codecs._arrays import Array, elementwise, native

if TYPE_CHECKING:
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer
    from zarr.core.dtype.wrapper import TBaseDType, TBaseScalar, ZDType


class ScaleOffset(_calls.SyncCalls, _ZarrScaleOffset):
    """zarr-python's `scale_offset` codec, computed by zarrs_extension_codecs.

    A drop-in subclass of `zarr.codecs.ScaleOffset`: the same constructor,
    attributes, `to_dict`, validation and fill value handling (inherited),
    and bit-identical chunks. Encoding and decoding run the crate's kernels
    in one pass, with the GIL released, into one new array; the chunk given
    is never written. A large chunk is split across cores. The async
    methods run on the calling thread, as zarr's do (see `_calls`). A chunk
    that is not a numpy array goes to zarr's own arithmetic.
    """

    def _scalars(self, zdtype: ZDType[TBaseDType, TBaseScalar], arr: Array) -> tuple[bytes, bytes]:
        """`offset` and `scale` as one native-endian element each, parsed by
        the chunk's data type exactly as zarr parses them."""
        # Parsed once per data type, not once per chunk: for a chunk of a few
        # KiB, parsing takes longer than the kernels.
        memo = per_codec.memo(self)
        found = memo.get(zdtype)
        if found is None:
            found = memo[zdtype] = self._parse_scalars(zdtype)
        dtype, offset, scale = found
        if native(arr.dtype) != dtype:
            raise ValueError(
                f"scale_offset: the chunk holds {arr.dtype} elements, but the array's "
                f"data type is {dtype}."
            )
        return offset, scale

    def _parse_scalars(
        self, zdtype: ZDType[TBaseDType, TBaseScalar]
    ) -> tuple[np.dtype[Any], bytes, bytes]:
        dtype = native(np.dtype(zdtype.to_native_dtype()))
        return (
            dtype,
            np.asarray(zdtype.from_json_scalar(self.offset, zarr_format=3), dtype=dtype).tobytes(),
            np.asarray(zdtype.from_json_scalar(self.scale, zarr_format=3), dtype=dtype).tobytes(),
        )

    def _apply(self, encode: bool, arr: Array, chunk_spec: ArraySpec) -> NDBuffer:
        arr = np.asarray(arr)
        offset, scale = self._scalars(chunk_spec.dtype, arr)

        def run(src: Array, out: Array) -> None:
            _native.scale_offset(encode, src, out, offset, scale)

        result = elementwise(arr, arr.dtype, run, in_place_ok=True)
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(result)

    def _decode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        arr = _calls.numpy_chunk(chunk_array)
        if arr is None:
            return super()._decode_sync(chunk_array, chunk_spec)
        return self._apply(False, arr, chunk_spec)

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        arr = _calls.numpy_chunk(chunk_array)
        if arr is None:
            return super()._encode_sync(chunk_array, chunk_spec)
        return self._apply(True, arr, chunk_spec)
