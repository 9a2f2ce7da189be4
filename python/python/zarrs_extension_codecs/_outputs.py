"""The arrays the codecs return: new ones, recycled ones, and ones the next
decode may take over.

A codec returns a new array for every chunk, and the first touch of new
memory (the kernel zeroing each new page) costs more than the arithmetic:
for a chunk of 32 MiB, 2.5 ms of zeroing against 1.4 ms of `scale_offset`.
zarr's pipelines drop these arrays as soon as the next step has read them,
so this module keeps the last few (`_recent`) and hands one out again once
nothing but `_recent` refers to it, and lets `ScaleOffset`'s decode work in
place in the array `CastValue`'s decode has just returned.

Both rest on reference counts: an array may be reused or overwritten only
while no name, view, memoryview or buffer outside this module refers to it
(each of those holds a reference to the array). The counts are compared
with counts measured the same way at import (`_ONLY_LISTED`, `_ONLY_BUFFER`),
so that what the interpreter adds for the call itself cancels out. The one
case they cannot see, a caller who keeps the buffer a `CastValue` decode
returned and passes it to a `ScaleOffset` decode, is documented on
`ScaleOffset`: that buffer is consumed.

At most `MAX_ARRAYS` arrays of `MAX_BYTES` together are kept; only arrays
of at least `MIN_BYTES` are reused (below that, numpy and the C allocator
reuse memory well on their own), smaller ones are kept only to be taken
over.
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

MAX_ARRAYS = 4
MAX_BYTES = 128 << 20
MIN_BYTES = 1 << 20

# Outputs kept for reuse, oldest first (strong references: they outlive
# their callers' use on purpose).
_recent: list[Array] = []
# Outputs of `CastValue` decodes that the next decode may take over, by id.
# Held weakly: an array nobody takes over goes when its buffer goes. A
# batched pipeline casts every chunk of a batch before it decodes any of
# them with `ScaleOffset`, so these are not limited to `MAX_ARRAYS`.
_consumable: weakref.WeakValueDictionary[int, Array] = weakref.WeakValueDictionary()
_lock = threading.Lock()


def _references_in_list(arrays: list[Array], i: int) -> int:
    return sys.getrefcount(arrays[i])


def _references_in_buffer(chunk_array: NDBuffer) -> int:
    arr = chunk_array.as_ndarray_like()
    return sys.getrefcount(arr)


# Counts for an array that only one list (or only one buffer) refers to.
_ONLY_LISTED = _references_in_list([np.empty(1)], 0)
_ONLY_BUFFER = _references_in_buffer(_CpuNDBuffer.from_ndarray_like(np.empty(1)))


def new_output(shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    """An array of `shape` and `dtype` to write a whole chunk into: one kept
    in `_recent` that nothing else refers to any more, else a new one. Its
    contents are undefined, as with `np.empty`."""
    nbytes = int(np.prod(shape)) * dtype.itemsize
    if MIN_BYTES <= nbytes <= MAX_BYTES:
        with _lock:
            # By index, so that no name here refers to the arrays counted.
            for i in range(len(_recent)):
                if (
                    _recent[i].shape == shape
                    and _recent[i].dtype == dtype
                    and _references_in_list(_recent, i) == _ONLY_LISTED
                ):
                    # Nobody else can reach it: it leaves `_recent` here, and
                    # is no longer another decode's to take over.
                    found = _recent.pop(i)
                    _consumable.pop(id(found), None)
                    return found
    return np.empty(shape, dtype=dtype)


def returned(array: Array, *, consumable: bool = False) -> None:
    """Keep `array`, an output from `new_output` the codec is returning, for
    reuse once its caller is done with it. `consumable`: the next decode
    may take it over (see `take_over`)."""
    flags = array.flags
    if not (flags.owndata and flags.writeable and flags.c_contiguous and array.dtype.isnative):
        return
    with _lock:
        if consumable:
            _consumable[id(array)] = array
        if not MIN_BYTES <= array.nbytes <= MAX_BYTES:
            return
        for kept in _recent:
            if kept is array:
                return
        _recent.append(array)
        while len(_recent) > MAX_ARRAYS or sum(a.nbytes for a in _recent) > MAX_BYTES:
            del _recent[0]


def take_over(chunk_array: NDBuffer) -> Array | None:
    """The array of `chunk_array` if a `CastValue` decode returned it (as
    `consumable`) and nothing but `chunk_array` (and `_recent`) refers to
    it; else `None`.

    An array is taken over once: a later call with the same buffer gets
    `None`. Call it before holding the array in a name of your own.
    """
    references = _references_in_buffer(chunk_array)
    arr = chunk_array.as_ndarray_like()
    with _lock:
        if _consumable.get(id(arr)) is not arr:
            return None
        listed = 0
        for kept in _recent:
            if kept is arr:
                listed = 1
                break
        if references != _ONLY_BUFFER + listed:
            return None
        del _consumable[id(arr)]
    return arr


def forget_all() -> None:
    """Drop every kept array (`zarrs_extension_codecs.release_memory`)."""
    with _lock:
        _recent.clear()
        _consumable.clear()
