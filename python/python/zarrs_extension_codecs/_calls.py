"""Where a codec call runs: on the calling thread or on a worker thread,
and with the crate's kernels or zarr's own arithmetic.

zarr's pipelines call a codec's async methods (`_decode_single`,
`_encode_single`) on their event loop, once per chunk and codec. zarr's own
classes compute there, inline. Ours could too, as the kernels release the
GIL; but a call computing on the event loop keeps the loop from starting
other chunks' I/O and decodes meanwhile, so a large chunk goes to a worker
thread (`asyncio.to_thread`), where calls for several chunks run at once.
That hop costs tens of microseconds (a thread wakes up, the loop is woken
when it is done): about what the kernels save over zarr's numpy arithmetic
on a chunk of 256 x 256 float64 values. Below `INLINE_BELOW` bytes a call
runs inline, above it on a worker thread (measured:
`python/benchmarks/bench_codecs.py`, section `hop`).

A chunk that is not a numpy array (CuPy's, with
`zarr.config.enable_gpu()`) goes to zarr's own class, whose arithmetic works
on any array library zarr supports; it runs inline, as zarr's does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer

# Bytes of the wider of a call's input and output from which the call runs
# on a worker thread; below, on the calling thread (zarr's event loop).
INLINE_BELOW = 1 << 20


def numpy_chunk(chunk_array: NDBuffer) -> np.ndarray[Any, Any] | None:
    """The chunk's array if it is a numpy array (the kernels' input), else
    `None` (zarr's own arithmetic takes it)."""
    arr = chunk_array.as_ndarray_like()
    return arr if isinstance(arr, np.ndarray) else None


async def run[R](
    sync: Callable[[NDBuffer, ArraySpec], R],
    chunk_array: NDBuffer,
    chunk_spec: ArraySpec,
    itemsize: int,
) -> R:
    """`sync(chunk_array, chunk_spec)`, inline or on a worker thread by the
    size of the call: the chunk's elements times `itemsize`, the wider of
    the input's and the output's element sizes."""
    arr = numpy_chunk(chunk_array)
    if arr is None or arr.size * itemsize < INLINE_BELOW:
        return sync(chunk_array, chunk_spec)
    return await asyncio.to_thread(sync, chunk_array, chunk_spec)
