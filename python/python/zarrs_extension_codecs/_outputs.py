"""The arrays the codecs return: new ones, recycled ones, and ones the next
decode may take over.

A codec returns a new array for every chunk, and the first touch of new
memory (the operating system zeroing each new page) costs more than the
arithmetic: for a chunk of 32 MiB, 2.5 ms of zeroing against 1.4 ms of
`scale_offset`. zarr's pipelines drop these arrays as soon as the next step
has read them, so this module keeps the last few (`_recent`) and hands one
out again once nothing but `_recent` refers to it, and lets `ScaleOffset`'s
decode work in place in the array `CastValue`'s decode has just returned.

Both rest on reference counts: an array may be reused or overwritten only
while no name, view, memoryview, buffer or weak reference outside this
module refers to it (each of those holds a reference to the array, or a
weak one). The counts are compared with counts measured the same way at
import (`_ONLY_LISTED`, `_ONLY_BUFFER`), so that what the interpreter adds
for the call itself cancels out; an import-time self-check turns both off
on an interpreter where one more name does not count one more (anything
but CPython with its GIL). What counts cannot see:

- a caller who keeps the buffer a `CastValue` decode returned and passes it
  to a `ScaleOffset` decode: that buffer is consumed (documented on both
  classes);
- raw pointers taken from an array (`__array_interface__`, ctypes) by code
  that then drops every reference to it.

At most `MAX_ARRAYS` arrays of `max_bytes` together are kept (128 MiB, or
`ZARRS_EXTENSION_CODECS_KEEP_MIB`; 0 turns recycling off); only arrays of at
least `MIN_BYTES` are reused (below that, numpy and the C allocator reuse
memory well on their own), smaller ones are kept only to be taken over.
"""

from __future__ import annotations

import os
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
MIN_BYTES = 1 << 20


def _max_bytes_from_environment() -> int:
    value = os.environ.get("ZARRS_EXTENSION_CODECS_KEEP_MIB", "").strip()
    try:
        return max(int(value), 0) << 20 if value else 128 << 20
    except ValueError:
        return 128 << 20


max_bytes = _max_bytes_from_environment()

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


def _calibrate() -> tuple[int, int] | None:
    """The counts for an array that only one list (or only one buffer)
    refers to, or `None` if counts here do not rise by one with one more
    name (then nothing is reused or taken over)."""
    if sys.implementation.name != "cpython" or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None
    listed = [np.empty(1)]
    buffer = _CpuNDBuffer.from_ndarray_like(np.empty(1))
    only_listed, only_buffer = _references_in_list(listed, 0), _references_in_buffer(buffer)
    # Twice, as the interpreter may count differently once code is warm.
    for _ in range(2):
        if (
            _references_in_list(listed, 0) != only_listed
            or _references_in_buffer(buffer) != only_buffer
        ):
            return None
        extra = (listed[0], buffer.as_ndarray_like())
        if (
            _references_in_list(listed, 0) != only_listed + 1
            or _references_in_buffer(buffer) != only_buffer + 1
        ):
            return None
        del extra
    return only_listed, only_buffer


_COUNTS = _calibrate()
_ONLY_LISTED, _ONLY_BUFFER = _COUNTS or (0, 0)


def _writable_here(array: Array) -> bool:
    """Whether the kernels may write `array` whole: it owns its memory, may
    be written, and is C-contiguous in native byte order."""
    flags = array.flags
    return bool(flags.owndata and flags.writeable and flags.c_contiguous and array.dtype.isnative)


def new_output(shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    """An array of `shape` and `dtype` to write a whole chunk into: one kept
    in `_recent` that nothing else refers to any more, else a new one. Its
    contents are undefined, as with `np.empty`."""
    nbytes = int(np.prod(shape)) * dtype.itemsize
    if _COUNTS is not None and MIN_BYTES <= nbytes <= max_bytes:
        with _lock:
            # By index, so that no name here refers to the arrays counted.
            for i in range(len(_recent)):
                if (
                    _recent[i].shape == shape
                    and _recent[i].dtype == dtype
                    and _references_in_list(_recent, i) == _ONLY_LISTED
                    # A weak reference may still be used to reach it; the
                    # one `_consumable` holds is this module's own.
                    and weakref.getweakrefcount(_recent[i]) == (id(_recent[i]) in _consumable)
                    # Its last holder may have made it read-only.
                    and _writable_here(_recent[i])
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
    if _COUNTS is None or not _writable_here(array):
        return
    with _lock:
        if consumable:
            _consumable[id(array)] = array
        if not MIN_BYTES <= array.nbytes <= max_bytes:
            return
        for kept in _recent:
            if kept is array:
                return
        _recent.append(array)
        while len(_recent) > MAX_ARRAYS or sum(a.nbytes for a in _recent) > max_bytes:
            del _recent[0]


def take_over(chunk_array: NDBuffer) -> Array | None:
    """The array of `chunk_array` if a `CastValue` decode returned it (as
    `consumable`) and nothing but `chunk_array` (and `_recent`) refers to
    it; else `None`.

    An array is taken over once: a later call with the same buffer gets
    `None`. Call it before holding the array in a name of your own.
    """
    if _COUNTS is None:
        return None
    with _lock:
        references = _references_in_buffer(chunk_array)
        arr = chunk_array.as_ndarray_like()
        if _consumable.get(id(arr)) is not arr:
            return None
        listed = 0
        for kept in _recent:
            if kept is arr:
                listed = 1
                break
        if (
            references != _ONLY_BUFFER + listed
            # Only `_consumable`'s own weak reference.
            or weakref.getweakrefcount(arr) != 1
            or not _writable_here(arr)
        ):
            return None
        del _consumable[id(arr)]
    return arr


def forget_all() -> None:
    """Drop every kept array (`zarrs_extension_codecs.release_memory`)."""
    with _lock:
        _recent.clear()
        _consumable.clear()


def _after_fork_in_child() -> None:
    # Another thread may have held the lock when the process forked: the
    # child would wait for it for ever. The kept arrays stay the parent's.
    global _lock
    _lock = threading.Lock()
    _recent.clear()
    _consumable.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
