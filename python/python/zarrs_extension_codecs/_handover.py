"""Chunks one codec's decode makes and the next may decode in place.

Decoding `scale_offset` + `cast_value`, zarr's pipelines hand the array that
`CastValue`'s decode has just allocated straight to `ScaleOffset`'s decode
and then drop it. Decoding that array in place, instead of into a second
new array, saves an allocation whose first touch (the kernel zeroing each
new page) costs more than the arithmetic, and halves the memory a chunk
occupies while it is decoded.

That is only sound while nothing else can see the array. A decode
`hand_over`s the array it returns, and the next decode `take_over`s it only
if it is that very array (same object, still registered) and the buffer
passed in holds the only reference to it: no view, no memoryview, no other
name. The remaining case, a caller who keeps the returned buffer itself
and passes it on, is documented on the classes: a `ScaleOffset` decode
consumes the buffer a decode of this package returned.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.core.buffer.cpu import NDBuffer as _CpuNDBuffer

if TYPE_CHECKING:
    from zarr.core.buffer import NDBuffer

    from zarrs_extension_codecs._arrays import Array

# Held weakly: an array that nobody takes over disappears with its buffer.
_handed_over: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
_lock = threading.Lock()


def _references(chunk_array: NDBuffer) -> int:
    """References to the array `chunk_array` holds, as counted from here.

    Compared only with the count for a buffer known to hold the sole
    reference (`_SOLE`, measured the same way at import), so that what the
    interpreter adds for the call itself cancels out.
    """
    arr = chunk_array.as_ndarray_like()
    return sys.getrefcount(arr)


def _sole_reference_count() -> int:
    buffer = _CpuNDBuffer.from_ndarray_like(np.empty(1))
    return _references(buffer)


_SOLE = _sole_reference_count()


def hand_over(result: Array) -> None:
    """Let the next decode take over `result`, a new array a decode made.

    Only arrays the kernels can work on in place are registered: owning
    their memory, writable, C-contiguous, in native byte order.
    """
    flags = result.flags
    if flags.owndata and flags.writeable and flags.c_contiguous and result.dtype.isnative:
        with _lock:
            _handed_over[id(result)] = result


def take_over(chunk_array: NDBuffer) -> Array | None:
    """The array of `chunk_array` if a decode of this package made it and
    nothing but `chunk_array` refers to it; else `None`.

    An array is taken over once: a later call with the same buffer gets
    `None`.
    """
    if _references(chunk_array) != _SOLE:
        return None
    arr = chunk_array.as_ndarray_like()
    with _lock:
        registered = _handed_over.pop(id(arr), None)
    if registered is not arr:
        return None
    return arr
