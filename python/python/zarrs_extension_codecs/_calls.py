"""Where a codec call runs: on the calling thread, and with the crate's
kernels or zarr's own arithmetic.

zarr's default pipeline calls a codec's async methods (`_decode_single`,
`_encode_single`, through `decode` / `encode` over a batch of chunks) on
its event loop, once per chunk and codec; zarr's own classes compute right
there. These do too: every call runs on the calling thread, with the GIL
released in the kernels, and a chunk of 2 MiB or more is split across the
crate's threads. Handing calls to worker threads (`asyncio.to_thread`, as
this package did before) was slower at every size measured, on one core
and on two, through zarr's default pipeline: EOPF-like bands of 256 x 256
inner chunks and stores of 1024 x 1024 and 2048 x 2048 chunks read 1.4-1.9x
slower with the hop than without (`python/benchmarks/bench_codecs.py`,
section `eopf`; the per-call hop costs about 40 µs of CPU, more than the
kernels take for a 128 x 128 chunk, and outputs allocated on many threads
are more often fresh memory the operating system must zero first).

A batch (`decode` / `encode`; one chunk each by default,
`codec_pipeline.batch_size`) is run as one loop over its chunks, in order,
instead of zarr's one asyncio task per chunk.

A chunk that is not a numpy array (CuPy's, with `zarr.config.enable_gpu()`)
goes to zarr's own class, whose arithmetic works on the array libraries
zarr supports.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer

# Off: async calls run inline. The benchmark turns it on to measure calls on
# a worker thread against them.
ON_WORKER_THREAD = False


def numpy_chunk(chunk_array: NDBuffer) -> np.ndarray[Any, Any] | None:
    """The chunk's array if it is a numpy array (the kernels' input), else
    `None` (zarr's own arithmetic takes it)."""
    arr = chunk_array.as_ndarray_like()
    return arr if isinstance(arr, np.ndarray) else None


async def run[R](
    sync: Callable[[NDBuffer, ArraySpec], R], chunk_array: NDBuffer, chunk_spec: ArraySpec
) -> R:
    """`sync(chunk_array, chunk_spec)`, for an async method."""
    if ON_WORKER_THREAD:
        return await asyncio.to_thread(sync, chunk_array, chunk_spec)
    return sync(chunk_array, chunk_spec)


class SyncCalls:
    """zarr's async codec methods (`_decode_single`, `_encode_single`,
    `decode`, `encode`) as calls of the class's own `_decode_sync` /
    `_encode_sync`: a batch in one loop over its chunks, in order (`None`
    for a missing chunk stays `None`).

    First among a codec class's bases, before zarr's class: `super()` here
    is then zarr's class, whose batching (one task per chunk) the
    benchmark's `ON_WORKER_THREAD` falls back on.
    """

    _decode_sync: Callable[..., Any]
    _encode_sync: Callable[..., Any]

    async def _decode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        return await run(self._decode_sync, chunk_array, chunk_spec)

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        return await run(self._encode_sync, chunk_array, chunk_spec)

    # The loop is written out in each method rather than awaited from a
    # helper: a batch of one small chunk is zarr's default, and a coroutine
    # more per call is a few microseconds of a 256 x 256 chunk's 40-90
    # (`bench_codecs.py`, section `async`).
    async def decode(
        self, chunks_and_specs: Iterable[tuple[NDBuffer | None, ArraySpec]]
    ) -> Iterable[NDBuffer | None]:
        if ON_WORKER_THREAD:
            return await super().decode(chunks_and_specs)  # type: ignore[misc]
        sync = self._decode_sync
        return [None if chunk is None else sync(chunk, spec) for chunk, spec in chunks_and_specs]

    async def encode(
        self, chunks_and_specs: Iterable[tuple[NDBuffer | None, ArraySpec]]
    ) -> Iterable[NDBuffer | None]:
        if ON_WORKER_THREAD:
            return await super().encode(chunks_and_specs)  # type: ignore[misc]
        sync = self._encode_sync
        return [None if chunk is None else sync(chunk, spec) for chunk, spec in chunks_and_specs]
