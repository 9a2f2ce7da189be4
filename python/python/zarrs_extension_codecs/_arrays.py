"""Moving numpy arrays in and out of the native kernels.

The kernels read and write C-contiguous memory in native byte order. These
helpers bring any array zarr hands a codec into that shape with at most one
pass, and give the result the byte order zarr's own classes give it. The
input is only ever read: every result is a new array.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]


def native(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """`dtype` in the host byte order."""
    return dtype.newbyteorder("=")


def as_kernel_input(arr: Array) -> Array:
    """`arr` itself if the kernels can read it, else one C-contiguous copy
    in native byte order (strided views, byte-swapped data)."""
    if arr.flags.c_contiguous and arr.dtype.isnative:
        return arr
    return np.ascontiguousarray(arr, dtype=native(arr.dtype))


def to_byte_order(out: Array, dtype: np.dtype[Any]) -> Array:
    """`out` (native byte order, just written, the codec's own) as `dtype`,
    swapping its bytes in place if `dtype` is not native."""
    if dtype.isnative:
        return out
    return out.byteswap(inplace=True).view(dtype)


def elementwise(
    arr: Array,
    out_dtype: np.dtype[Any],
    run: Callable[[Array, Array], None],
    *,
    in_place_ok: bool,
) -> Array:
    """Run the elementwise kernel `run(src, out)` over `arr`, into one new
    array of `out_dtype` and `arr`'s shape, and return it.

    A Fortran-ordered array is processed as its (C-ordered) transpose and
    the result transposed back, so that no copy is needed. Otherwise an
    array the kernels cannot read directly is first copied into the new
    output (when `in_place_ok`, i.e. the types match; then the kernel runs
    in place there) or into one contiguous temporary. `arr` is never
    written.
    """
    if arr.ndim > 1 and arr.flags.f_contiguous and not arr.flags.c_contiguous:
        return elementwise(arr.T, out_dtype, run, in_place_ok=in_place_ok).T
    out = np.empty(arr.shape, dtype=native(out_dtype))
    if arr.flags.c_contiguous and arr.dtype.isnative:
        run(arr, out)
    elif in_place_ok:
        # One pass gathers the strides and swaps the bytes (numpy's copy).
        np.copyto(out, arr, casting="equiv")
        run(out, out)
    else:
        run(as_kernel_input(arr), out)
    return to_byte_order(out, out_dtype)
