"""zarr-python's scale_offset / cast_value classes and zarrs_extension_codecs', side by side.

A benchmark, not a test: it prints a markdown report (and writes it with ``--markdown``) with
medians of several warm runs, each call's output dropped before the next (as zarr's pipelines
drop them), and the ratio zarr's / ours from the same run. Sections:

* codecs: each codec's ``_encode_sync`` / ``_decode_sync`` on one chunk of 256 x 256,
  1024 x 1024 and 2048 x 2048 (float64 decoded), into new memory, on all cores and pinned to
  one core;
* eopf: ``arr[...]`` of EOPF-like bands (4096 x 4096 and 1024 x 1024, uint16 in shards of
  256 x 256 inner chunks, blosc zstd), both pipelines, one core and all; ours also with every
  async call on a worker thread;
* whole read: ``arr[...]`` of a 256 MiB (decoded float64) scale_offset + cast_value(uint16)
  store on local disk, warm page cache, BatchedCodecPipeline (zarr's default) and
  FusedCodecPipeline (``codec_pipeline.path``), on one core and on all;
* scaling: the same store read one chunk per call (as dask tasks do) by 1 and 2 (and all)
  threads, by dask's threaded scheduler with 1 and 2 (and all) workers, and by a dask.distributed
  LocalCluster with 1 and 2 (and all) single-threaded worker processes;
* async: each codec's async batch call (``decode`` / ``encode`` of one chunk, what zarr's
  default pipeline calls), zarr's class against ours, and ours against its own sync call;
* GIL probe: a pure-Python thread counts loop iterations while another thread decodes chunks;
  its rate, CPU share and longest stall tell whether the decode holds the GIL.

The codec configuration is EOPF Sentinel-2 reflectance: scale 10000, offset -0.1, cast to uint16
rounding half to even, clamping, NaN <-> 0 in the scalar map; 2 % of the values are NaN.

Run from the repository root after building the package into the venv::

    .venv/bin/pip install ./python
    .venv/bin/python python/benchmarks/bench_codecs.py --markdown /tmp/bench.md

``--quick`` runs small sizes and few repeats to check the script works (numbers meaningless);
``--ours MODULE`` names the module with the ``ScaleOffset`` / ``CastValue`` classes to compare
against zarr's (default ``zarrs_extension_codecs``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import importlib.metadata
import logging
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import zarr
from zarr.codecs import BloscCodec, CastValue, ScaleOffset
from zarr.core.array_spec import ArrayConfig, ArraySpec
from zarr.core.buffer import default_buffer_prototype
from zarr.core.dtype import Float64
from zarr.registry import fully_qualified_name

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

SCALE = 10000
OFFSET = -0.1
CAST = {
    "data_type": "uint16",
    "rounding": "nearest-even",
    "out_of_range": "clamp",
    "scalar_map": {"encode": [("NaN", 0)], "decode": [(0, "NaN")]},
}
BATCHED = "zarr.core.codec_pipeline.BatchedCodecPipeline"
FUSED = "zarr.core.codec_pipeline.FusedCodecPipeline"
PIPELINES = {"BatchedCodecPipeline (default)": BATCHED, "FusedCodecPipeline": FUSED}
MIB = 1 << 20
# distributed starts its workers with MALLOC_TRIM_THRESHOLD_=65536 (its default
# distributed.nanny.pre-spawn-environ). Setting any glibc malloc threshold turns off glibc's
# adaptive mmap threshold, so every chunk-sized array is a fresh mmap whose pages the kernel
# must zero on first touch. The second setting keeps such arrays on the heap instead.
CLUSTER_ENVIRON = {
    "distributed's default worker environment": {
        "MALLOC_TRIM_THRESHOLD_": 65536,
        "OMP_NUM_THREADS": 1,
        "MKL_NUM_THREADS": 1,
        "OPENBLAS_NUM_THREADS": 1,
    },
    "MALLOC_MMAP_THRESHOLD_=32 MiB, MALLOC_TRIM_THRESHOLD_=1 GiB": {
        "MALLOC_MMAP_THRESHOLD_": 32 << 20,
        "MALLOC_TRIM_THRESHOLD_": 1 << 30,
        "OMP_NUM_THREADS": 1,
        "MKL_NUM_THREADS": 1,
        "OPENBLAS_NUM_THREADS": 1,
    },
}
STALL = 0.002  # s: a longer gap between two GIL-probe ticks counts as a stall
ALL_CPUS = sorted(os.sched_getaffinity(0))


@dataclass(frozen=True)
class Impl:
    """One implementation of the two codecs: its classes and the zarr config selecting them."""

    label: str
    scale_offset: type[ScaleOffset]
    cast_value: type[CastValue]

    @property
    def config(self) -> dict[str, str]:
        return {
            "codecs.scale_offset": fully_qualified_name(self.scale_offset),
            "codecs.cast_value": fully_qualified_name(self.cast_value),
        }

    def codecs(self) -> tuple[ScaleOffset, CastValue]:
        return self.scale_offset(offset=OFFSET, scale=SCALE), self.cast_value(**CAST)


@dataclass
class Sizes:
    chunk_shape: tuple[int, int]  # the GIL probe's chunk
    store_shape: tuple[int, int]
    store_chunks: tuple[int, int]
    repeats: int
    probe_seconds: float
    codec_shapes: tuple[tuple[int, int], ...] = ((256, 256), (1024, 1024), (2048, 2048))


FULL = Sizes((2048, 2048), (8192, 4096), (1024, 1024), repeats=9, probe_seconds=2.0)
QUICK = Sizes(
    (256, 256), (1024, 512), (256, 256), repeats=3, probe_seconds=0.3, codec_shapes=((256, 256),)
)


# --- helpers -----------------------------------------------------------------------------------


def set_cores(n: int) -> None:
    """Restrict every thread of this process (and threads started later) to the first n CPUs.

    os.sched_setaffinity(0, ...) would set only the calling thread; zarr's event-loop thread and
    any thread pool already started must be moved too.
    """
    cpus = set(ALL_CPUS[:n])
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(int(tid), cpus)


@contextlib.contextmanager
def cores(n: int) -> Iterator[None]:
    set_cores(n)
    try:
        yield
    finally:
        set_cores(len(ALL_CPUS))


def samples(fns: list[Callable[[], object]], repeats: int, warmup: int = 1) -> list[list[float]]:
    """Seconds of each run of each of ``fns``, timed in turn (zarr's, ours, zarr's, ...), so
    that a change in the machine's load falls on all of them alike."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, t in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            t.append(time.perf_counter() - start)
    return times


def medians(fns: list[Callable[[], object]], repeats: int, warmup: int = 1) -> list[float]:
    """Median seconds of each of ``fns`` (``samples``)."""
    return [statistics.median(t) for t in samples(fns, repeats, warmup)]


@contextlib.contextmanager
def codec_time(impl: Impl) -> Iterator[list[float]]:
    """Sum the CPU seconds of the threads calling the two codecs' ``_decode_sync`` while the
    block runs (both pipelines end up there: zarr's ``_decode_single`` calls it inline, ours
    on a thread). Whole only on one core, where ours does not split a call across threads."""
    spent = [0.0]
    lock = threading.Lock()
    saved = []
    for cls in (impl.scale_offset, impl.cast_value):
        original = cls.__dict__["_decode_sync"]

        def timed(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return _original(self, *args, **kwargs)
            finally:
                with lock:
                    spent[0] += time.thread_time() - start

        saved.append((cls, original))
        cls._decode_sync = timed  # type: ignore[method-assign]
    try:
        yield spent
    finally:
        for cls, original in saved:
            cls._decode_sync = original  # type: ignore[method-assign]


def identical(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def reflectance(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = rng.uniform(-0.05, 1.0, size=shape)
    values[rng.random(shape) < 0.02] = np.nan
    return values


def spec(shape: tuple[int, ...]) -> ArraySpec:
    """The chunk spec the pipeline hands both codecs: the decoded (float64) side."""
    return ArraySpec(
        shape=shape,
        dtype=Float64(),
        fill_value=np.nan,
        config=ArrayConfig(order="C", write_empty_chunks=False),
        prototype=default_buffer_prototype(),
    )


def nd(array: np.ndarray) -> Any:
    return default_buffer_prototype().nd_buffer.from_numpy_array(array)


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}"


def fmt_rate(nbytes: int, seconds: float) -> str:
    return f"{nbytes / seconds / 1e9:.2f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


class Report:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.goals: list[list[str]] = []

    def add(self, text: str) -> None:
        print(text + "\n", flush=True)
        self.parts.append(text)

    def goal(self, name: str, target: str, measured: str, met: bool) -> None:
        self.goals.append([name, target, measured, "met" if met else "**missed**"])

    def text(self) -> str:
        return "\n\n".join(self.parts) + "\n"


# --- sections ----------------------------------------------------------------------------------


@dataclass
class ChunkData:
    """One chunk of reflectances at each stage of the chain, and its spec."""

    decoded: np.ndarray
    scaled: np.ndarray  # what scale_offset hands cast_value on encode
    codes: np.ndarray  # stored uint16
    codes_f64: np.ndarray  # what cast_value hands scale_offset on decode
    chunk_spec: ArraySpec

    @classmethod
    def of(cls, shape: tuple[int, ...]) -> ChunkData:
        decoded = reflectance(shape)
        with np.errstate(invalid="ignore"):
            scaled = (decoded - OFFSET) * SCALE
            codes = np.where(np.isnan(scaled), 0, np.clip(np.rint(scaled), 0, 65535))
            codes = codes.astype(np.uint16)
        codes_f64 = np.where(codes == 0, np.nan, codes.astype(np.float64))
        return cls(decoded, scaled, codes, codes_f64, spec(shape))


def sync_calls(impl: Impl, d: ChunkData) -> dict[str, Callable[[], Any]]:
    """Each codec's `_encode_sync` / `_decode_sync` on `d`, by operation."""
    so, cv = impl.codecs()
    return {
        "cast_value encode f64 -> u16": lambda: cv._encode_sync(nd(d.scaled), d.chunk_spec),
        "cast_value decode u16 -> f64": lambda: cv._decode_sync(nd(d.codes), d.chunk_spec),
        "scale_offset decode f64": lambda: so._decode_sync(nd(d.codes_f64), d.chunk_spec),
        "scale_offset encode f64": lambda: so._encode_sync(nd(d.decoded), d.chunk_spec),
    }


def async_calls(
    impl: Impl, d: ChunkData, loop: asyncio.AbstractEventLoop
) -> dict[str, Callable[[], Any]]:
    """Each codec's async batch call (`decode` / `encode` of `d` alone, what zarr's default
    pipeline awaits) run to its end on `loop`, by operation."""
    so, cv = impl.codecs()

    def run(call: Callable[[list[tuple[Any, ArraySpec]]], Any], chunk: np.ndarray) -> Any:
        async def first() -> Any:
            return next(iter(await call([(nd(chunk), d.chunk_spec)])))

        return loop.run_until_complete(first())

    return {
        "cast_value encode f64 -> u16": lambda: run(cv.encode, d.scaled),
        "cast_value decode u16 -> f64": lambda: run(cv.decode, d.codes),
        "scale_offset decode f64": lambda: run(so.decode, d.codes_f64),
        "scale_offset encode f64": lambda: run(so.encode, d.decoded),
    }


def bench_codecs(impls: tuple[Impl, Impl], sizes: Sizes, report: Report) -> None:
    rows = []
    ratios: dict[tuple[str, tuple[int, int]], tuple[float, float]] = {}
    for shape in sizes.codec_shapes:
        d = ChunkData.of(shape)
        nbytes = d.decoded.nbytes
        zarr_ops, our_ops = sync_calls(impls[0], d), sync_calls(impls[1], d)
        for name in zarr_ops:
            same = identical(
                zarr_ops[name]().as_numpy_array(), our_ops[name]().as_numpy_array()
            )  # outputs compared once, bit for bit
            t = {}
            for n in (len(ALL_CPUS), 1):
                with cores(n):
                    t["zarr", n], t["ours", n] = medians(
                        [zarr_ops[name], our_ops[name]], sizes.repeats, warmup=2
                    )
            all_n = len(ALL_CPUS)
            ratios[name, shape] = (
                t["zarr", all_n] / t["ours", all_n],
                t["zarr", 1] / t["ours", 1],
            )
            rows.append(
                [
                    f"{shape[0]} x {shape[1]} ({nbytes / MIB:g} MiB)",
                    name,
                    f"{fmt_ms(t['zarr', all_n])} ({fmt_rate(nbytes, t['zarr', all_n])})",
                    f"{fmt_ms(t['ours', all_n])} ({fmt_rate(nbytes, t['ours', all_n])})",
                    f"**{ratios[name, shape][0]:.2f}x**",
                    f"{fmt_ms(t['zarr', 1])} / {fmt_ms(t['ours', 1])}",
                    f"{ratios[name, shape][1]:.2f}x",
                    "yes" if same else "**NO**",
                ]
            )
    report.add(
        "#### Per codec, into new memory\n\n"
        "`_encode_sync` / `_decode_sync` called directly on one chunk (float64 decoded), each "
        "call's output dropped before the next, as zarr's pipelines drop them: both write every "
        f"output into a new array. ms median of {sizes.repeats} (GB/s of float64 data). "
        "Ratio = zarr's time / ours.\n\n"
        + table(
            [
                "chunk",
                "operation",
                f"zarr's, {len(ALL_CPUS)} cores: ms (GB/s)",
                f"ours, {len(ALL_CPUS)} cores: ms (GB/s)",
                "ratio",
                "1 core: zarr's / ours ms",
                "ratio, 1 core",
                "bit-identical",
            ],
            rows,
        )
    )
    bench_scale_offset_kernels(impls, d.codes_f64, sizes, report)
    goal_targets = {
        "cast_value encode f64 -> u16": 3.0,
        "cast_value decode u16 -> f64": 1.0,
        "scale_offset decode f64": 1.5,
        "scale_offset encode f64": 1.5,
    }
    for shape in sizes.codec_shapes:
        for name, target in goal_targets.items():
            r_all, r_one = ratios[name, shape]
            report.goal(
                f"{name}, {shape[0]} x {shape[1]}",
                f">= {target:g}x zarr's",
                f"{r_all:.2f}x ({r_one:.2f}x on 1 core)",
                r_all >= target,
            )


def on_loop(loop: asyncio.AbstractEventLoop, call: Callable[[], Any]) -> Callable[[], Any]:
    """`call` inside a coroutine run to its end on `loop`."""

    async def inside() -> Any:
        return call()

    return lambda: loop.run_until_complete(inside())


def bench_async(impls: tuple[Impl, Impl], sizes: Sizes, report: Report) -> None:
    """The async batch calls: zarr's class against ours, and ours against its sync call."""
    loop = asyncio.new_event_loop()
    rows = []
    try:
        for shape in sizes.codec_shapes:
            d = ChunkData.of(shape)
            zarr_async, our_async = async_calls(impls[0], d, loop), async_calls(impls[1], d, loop)
            # The sync call too is run on the loop, so that both pay the loop's own cost
            # (tens of microseconds) and only the async machinery tells them apart.
            our_sync = {name: on_loop(loop, call) for name, call in sync_calls(impls[1], d).items()}
            for name in zarr_async:
                same = identical(
                    zarr_async[name]().as_numpy_array(), our_async[name]().as_numpy_array()
                )
                # Two sets of turns: a call right after zarr's pays for the
                # threads zarr's call leaves busy (about a millisecond of a
                # 32 MiB chunk on two cores), so ours against its own sync
                # call are timed apart from zarr's.
                t = {}
                for n in (len(ALL_CPUS), 1):
                    with cores(n):
                        t[n] = medians(
                            [zarr_async[name], our_async[name]], sizes.repeats, warmup=2
                        ) + medians([our_async[name], our_sync[name]], sizes.repeats, warmup=2)
                for n in (len(ALL_CPUS), 1):
                    zarr_t, ours_t, alone_t, sync_t = t[n]
                    where = f"{shape[0]} x {shape[1]}, {n} core{'s' if n > 1 else ''}"
                    rows.append(
                        [
                            where,
                            name,
                            fmt_ms(zarr_t),
                            fmt_ms(ours_t),
                            f"{fmt_ms(alone_t)} / {fmt_ms(sync_t)}",
                            f"**{zarr_t / ours_t:.2f}x**",
                            f"{sync_t / alone_t:.2f}x",
                            "yes" if same else "**NO**",
                        ]
                    )
                    if "decode" in name:
                        report.goal(
                            f"{name}, async, {where}",
                            ">= 1.2x zarr's async; async as fast as sync",
                            f"{zarr_t / ours_t:.2f}x zarr's; sync / async {sync_t / alone_t:.2f}x",
                            zarr_t / ours_t >= 1.2 and sync_t / alone_t >= 0.95,
                        )
    finally:
        loop.close()
    report.add(
        "#### Async calls\n\n"
        "Each codec's async batch call, `decode` / `encode` of one chunk (what zarr's default "
        "pipeline awaits), run to its end on one event loop; zarr's class, ours, and ours "
        "through `_decode_sync` / `_encode_sync` called in a coroutine on the same loop (so "
        f"that both pay the loop's own cost). ms median of {sizes.repeats}, timed in "
        "turns: zarr's and ours, then ours async and sync apart (a call right after zarr's "
        "pays for the threads zarr's leaves busy). Ratios: zarr's async / ours async, ours "
        "sync / ours async (1.00x: no cost for the async call; 0.95x or more counts as as "
        "fast).\n\n"
        + table(
            [
                "chunk, cores",
                "operation",
                "zarr's async (ms)",
                "ours async (ms)",
                "ours async / sync, timed apart (ms)",
                "zarr / ours",
                "sync / async",
                "bit-identical",
            ],
            rows,
        )
    )


def bench_scale_offset_kernels(
    impls: tuple[Impl, Impl], src: np.ndarray, sizes: Sizes, report: Report
) -> None:
    """Where scale_offset's time goes: the arithmetic against the first touch of a fresh output.

    zarr's decode is numpy's ``a / scale + offset``: two passes, but numpy reuses the first
    pass's temporary for the second, so there is one new array, as in ours. Into an output
    that is already there, the two passes and the one pass compare directly.
    """
    native = getattr(sys.modules.get(impls[1].scale_offset.__module__), "_native", None)
    if native is None or not hasattr(native, "scale_offset"):
        return
    scale, offset = np.float64(SCALE), np.float64(OFFSET)
    out = np.empty_like(src)
    scalars = (offset.tobytes(), scale.tobytes())

    def numpy_two_passes() -> None:
        np.divide(src, scale, out=out)
        np.add(out, offset, out=out)

    rows = []
    for n in (len(ALL_CPUS), 1):
        with cores(n):
            fresh, numpy_reused, ours_reused, ours_one_thread = medians(
                [
                    lambda: np.copy(src),
                    numpy_two_passes,
                    lambda: native.scale_offset(False, src, out, *scalars),
                    lambda: native.scale_offset(False, src, out, *scalars, threads=1),
                ],
                sizes.repeats,
                warmup=2,
            )
        rows.append(
            [
                f"{n}",
                fmt_ms(fresh),
                fmt_ms(numpy_reused),
                fmt_ms(ours_reused),
                fmt_ms(ours_one_thread),
                f"**{numpy_reused / ours_reused:.2f}x**",
            ]
        )
    report.add(
        "Where scale_offset's time goes (decode, same chunk, ms median of "
        f"{sizes.repeats}): a plain numpy copy into a fresh array (what any fresh output "
        "costs: the operating system zeroes each new page on first touch), and the arithmetic "
        "alone into an output reused from call to call: numpy's two passes (`np.divide(a, scale, "
        "out=o)`, `np.add(o, offset, out=o)`) against ours (`_native.scale_offset`, on the "
        "default threads and on one).\n\n"
        + table(
            [
                "cores",
                "numpy copy, fresh output",
                "numpy, 2 passes, output reused",
                "ours, output reused",
                "ours, 1 thread, output reused",
                "ratio (reused)",
            ],
            rows,
        )
    )


def write_store(path: Path, sizes: Sizes) -> None:
    """The 256 MiB store, written by zarr-python with zarr's own classes, no compressor."""
    with zarr.config.set(
        {
            "codecs.scale_offset": "zarr.codecs.scale_offset.ScaleOffset",
            "codecs.cast_value": "zarr.codecs.cast_value.CastValue",
        }
    ):
        arr = zarr.create_array(
            path,
            shape=sizes.store_shape,
            chunks=sizes.store_chunks,
            dtype="float64",
            fill_value=np.nan,
            filters=[ScaleOffset(offset=OFFSET, scale=SCALE), CastValue(**CAST)],
            compressors=None,
            overwrite=True,
        )
        rows = sizes.store_chunks[0]
        for start in range(0, sizes.store_shape[0], rows):
            arr[start : start + rows] = reflectance((rows, sizes.store_shape[1]), seed=start)


def write_floor_store(path: Path, source: Path) -> None:
    """The decoded values of the store at `source` as a plain float64 array (no filters, no
    compressor): what zarr reads when there is no codec work at all."""
    with zarr.config.set(
        {
            "codecs.scale_offset": "zarr.codecs.scale_offset.ScaleOffset",
            "codecs.cast_value": "zarr.codecs.cast_value.CastValue",
        }
    ):
        src = zarr.open_array(source, mode="r")
        plain = zarr.create_array(
            path,
            shape=src.shape,
            chunks=src.chunks,
            dtype="float64",
            fill_value=np.nan,
            compressors=None,
            overwrite=True,
        )
        for sl in chunk_slices(src):
            plain[sl] = src[sl]


def open_array(path: Path, impl: Impl, pipeline: str = BATCHED) -> zarr.Array:
    with zarr.config.set({**impl.config, "codec_pipeline.path": pipeline}):
        arr = zarr.open_array(path, mode="r")
    codecs = list(arr.metadata.codecs)
    for codec in list(codecs):
        codecs += getattr(codec, "codecs", ())  # inside sharding_indexed
    classes = {type(c) for c in codecs}
    assert {impl.scale_offset, impl.cast_value} <= classes, classes
    return arr


def chunk_slices(arr: zarr.Array) -> list[tuple[slice, ...]]:
    (rows, cols), (crow, ccol) = arr.shape, arr.chunks
    return [
        (slice(r, r + crow), slice(c, c + ccol))
        for r in range(0, rows, crow)
        for c in range(0, cols, ccol)
    ]


def bench_whole_read(impls: tuple[Impl, Impl], path: Path, sizes: Sizes, report: Report) -> None:
    rows = []
    nbytes = int(np.prod(sizes.store_shape)) * 8
    for pipe_label, pipeline in PIPELINES.items():
        arrays = [open_array(path, impl, pipeline) for impl in impls]
        same = identical(arrays[0][...], arrays[1][...])
        fns: list[Callable[[], object]] = [lambda a=a: a[...] for a in arrays]
        calls = getattr(sys.modules.get(impls[1].scale_offset.__module__), "_calls", None)
        if calls is not None and pipeline == BATCHED:

            def hop(a: zarr.Array = arrays[1], calls: Any = calls) -> object:
                with on_worker_thread(calls):
                    return a[...]

            fns.append(hop)
        for n in sorted({1, len(ALL_CPUS)}):
            with cores(n):
                t = medians(fns, sizes.repeats)
                inside = ["", ""]
                for i, (impl, a) in enumerate(zip(impls, arrays, strict=True)):
                    if n > 1:
                        continue
                    with codec_time(impl) as spent:
                        start = time.perf_counter()
                        a[...]
                        wall = time.perf_counter() - start
                    inside[i] = f"{fmt_ms(spent[0])} of {fmt_ms(wall)}"
            ratio = t[0] / t[1]
            rows.append(
                [
                    pipe_label,
                    f"{n}",
                    f"{fmt_ms(t[0])} ({fmt_rate(nbytes, t[0])})",
                    f"{fmt_ms(t[1])} ({fmt_rate(nbytes, t[1])})",
                    f"**{ratio:.2f}x**",
                    f"{fmt_ms(t[2])} ({t[0] / t[2]:.2f}x)" if len(t) > 2 else "",
                    inside[0],
                    inside[1],
                    "yes" if same else "**NO**",
                ]
            )
            if pipeline == BATCHED:
                if n == len(ALL_CPUS):
                    default_ratio = ratio
                else:
                    one_core_ratio = ratio
    report.add(
        f"#### Whole read, {nbytes // MIB} MiB store\n\n"
        f"`arr[...]` of a {sizes.store_shape[0]} x {sizes.store_shape[1]} float64 array in "
        f"{sizes.store_chunks[0]} x {sizes.store_chunks[1]} chunks (scale_offset, cast_value "
        "uint16, bytes; no compressor) on local disk, page cache warm; one calling thread; "
        f"ms median of {sizes.repeats} (GB/s decoded). In the codecs (one core only): the CPU "
        "time of the two codecs' decode calls during one more read, of that read's time; the "
        "rest is zarr's pipeline (store reads, the bytes codec, copying each chunk into the "
        "output, Python). Ours on worker threads: every async call through "
        "`asyncio.to_thread`, as before issue 24.\n\n"
        + table(
            [
                "pipeline",
                "cores",
                "zarr's: ms (GB/s)",
                "ours: ms (GB/s)",
                "ratio",
                "ours on worker threads: ms (ratio)",
                "zarr's: in the codecs, ms",
                "ours: in the codecs, ms",
                "bit-identical",
            ],
            rows,
        )
    )
    report.goal(
        "whole read, one worker (default pipeline)",
        ">= 1.5x zarr's",
        f"{default_ratio:.2f}x ({one_core_ratio:.2f}x on 1 core)",
        default_ratio >= 1.5,
    )


# EOPF-like bands: (array shape, shard shape), inner chunks of EOPF_INNER, blosc zstd level 3
# with byte shuffle, as Sentinel-2 EOPF products store reflectance.
EOPF_BANDS = {
    "4096 x 4096": ((4096, 4096), (2048, 2048)),
    "1024 x 1024 (scaled down)": ((1024, 1024), (512, 512)),
}
EOPF_INNER = (256, 256)


def write_eopf_store(path: Path, shape: tuple[int, int], shard: tuple[int, int]) -> None:
    """An EOPF-like band, written by zarr-python with zarr's own classes."""
    with zarr.config.set(
        {
            "codecs.scale_offset": "zarr.codecs.scale_offset.ScaleOffset",
            "codecs.cast_value": "zarr.codecs.cast_value.CastValue",
        }
    ):
        arr = zarr.create_array(
            path,
            shape=shape,
            chunks=EOPF_INNER,
            shards=shard,
            dtype="float64",
            fill_value=np.nan,
            filters=[ScaleOffset(offset=OFFSET, scale=SCALE), CastValue(**CAST)],
            compressors=BloscCodec(cname="zstd", clevel=3, shuffle="shuffle"),
            overwrite=True,
        )
        for start in range(0, shape[0], shard[0]):
            arr[start : start + shard[0]] = reflectance((shard[0], shape[1]), seed=start)


@contextlib.contextmanager
def on_worker_thread(module: Any) -> Iterator[None]:
    """Run the classes' async calls on a worker thread (``asyncio.to_thread``), as the package
    did before issue 24, instead of on the calling thread (``_calls``)."""
    saved = module.ON_WORKER_THREAD
    module.ON_WORKER_THREAD = True
    try:
        yield
    finally:
        module.ON_WORKER_THREAD = saved


def bench_eopf(impls: tuple[Impl, Impl], workdir: Path, sizes: Sizes, report: Report) -> None:
    calls = getattr(sys.modules.get(impls[1].scale_offset.__module__), "_calls", None)
    bands = dict(list(EOPF_BANDS.items())[-1:]) if sizes is QUICK else EOPF_BANDS
    rows = []
    for band, (shape, shard) in bands.items():
        path = workdir / f"eopf-{shape[0]}.zarr"
        write_eopf_store(path, shape, shard)
        for pipe_label, pipeline in PIPELINES.items():
            arrays = [open_array(path, impl, pipeline) for impl in impls]
            same = identical(arrays[0][...], arrays[1][...])
            fns: list[Callable[[], object]] = [lambda a=a: a[...] for a in arrays]
            if calls is not None and pipeline == BATCHED:

                def hop(a: zarr.Array = arrays[1]) -> object:
                    with on_worker_thread(calls):
                        return a[...]

                fns.append(hop)
            for n in sorted({1, len(ALL_CPUS)}):
                with cores(n):
                    runs = samples(fns, sizes.repeats)
                t = [statistics.median(r) for r in runs]
                best = [min(r) for r in runs]
                ratio = t[0] / t[1]
                variants = [
                    f"{fmt_ms(x)} / {fmt_ms(b)} ({t[0] / x:.2f}x / {best[0] / b:.2f}x)"
                    for x, b in zip(t[2:], best[2:], strict=True)
                ] or [""]
                rows.append(
                    [
                        band,
                        pipe_label,
                        f"{n}",
                        f"{fmt_ms(t[0])} / {fmt_ms(best[0])}",
                        f"{fmt_ms(t[1])} / {fmt_ms(best[1])}",
                        f"**{ratio:.2f}x** / {best[0] / best[1]:.2f}x",
                        *variants,
                        "yes" if same else "**NO**",
                    ]
                )
                report.goal(
                    f"EOPF-like band {band}, {pipe_label}, {n} core{'s' if n > 1 else ''}",
                    ">= 1.2x zarr's" if pipeline == BATCHED else ">= 1.0x zarr's",
                    f"{ratio:.2f}x (best of {sizes.repeats}: {best[0] / best[1]:.2f}x)",
                    ratio >= (1.2 if pipeline == BATCHED else 1.0),
                )
    report.add(
        "#### Whole read, EOPF-like band\n\n"
        "`arr[...]` of a float64 band stored as uint16 (scale_offset 10000 / offset -0.1, "
        "cast_value, bytes, blosc zstd level 3 with byte shuffle) in shards of 256 x 256 inner "
        "chunks (4096 x 4096: shards of 2048 x 2048; 1024 x 1024: shards of 512 x 512), "
        "written by zarr-python, on local disk, page cache warm; one calling thread; ms median "
        f"/ best of {sizes.repeats} (on a shared machine the best is the steadier figure: load "
        "only adds time). Ratio = zarr's time / ours. The column before the last: ours with "
        "every async call on a worker thread (`asyncio.to_thread`, as before issue 24) instead "
        "of on the calling thread (`_calls`).\n\n"
        + table(
            [
                "band",
                "pipeline",
                "cores",
                "zarr's ms",
                "ours ms",
                "ratio",
                "ours on worker threads: ms (ratios)",
                "bit-identical",
            ],
            rows,
        )
    )


def threads_on_cores(workers: int, ncores: int) -> str:
    return (
        f"{workers} thread{'s' if workers > 1 else ''} on {ncores} core{'s' if ncores > 1 else ''}"
    )


def read_chunks_threads(arr: zarr.Array, slices: list[tuple[slice, ...]], n: int) -> None:
    with ThreadPoolExecutor(n) as pool:
        for _ in pool.map(arr.__getitem__, slices):
            pass


def bench_scaling(impls: tuple[Impl, Impl], path: Path, sizes: Sizes, report: Report) -> None:
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    counts = sorted({1, 2, len(ALL_CPUS)})
    rows: list[list[str]] = []
    speedups: dict[tuple[str, str, int, int], float] = {}

    def add_rows(
        way: str, times: dict[tuple[int, int], list[float]], base: tuple[int, int]
    ) -> None:
        for (workers, ncores), t in times.items():
            s = [times[base][i] / t[i] for i in range(2)]
            label = f"{workers} ({ncores} core{'s' if ncores > 1 else ''})"
            rows.append(
                [
                    way,
                    label,
                    fmt_ms(t[0]),
                    f"{s[0]:.2f}x",
                    fmt_ms(t[1]),
                    f"{s[1]:.2f}x",
                    f"**{t[0] / t[1]:.2f}x**",
                ]
            )
            for i, who in enumerate(("zarr", "ours")):
                speedups[way, who, workers, ncores] = s[i]

    configs = [(1, 1), *[(c, len(ALL_CPUS)) for c in counts]]

    # The codecs alone, no zarr pipeline: each chunk's cast_value then scale_offset decode.
    chunk = sizes.store_chunks
    n_chunks = int(np.prod(sizes.store_shape)) // int(np.prod(chunk))
    codes = [
        np.nan_to_num(
            np.clip(np.rint((reflectance(chunk, seed=i) - OFFSET) * SCALE), 0, 65535)
        ).astype(np.uint16)
        for i in range(n_chunks)
    ]
    chunk_spec = spec(chunk)

    def decode_all(impl: Impl, workers: int) -> None:
        so, cv = impl.codecs()

        def one(c: np.ndarray) -> None:
            so._decode_sync(cv._decode_sync(nd(c), chunk_spec), chunk_spec)

        with ThreadPoolExecutor(workers) as pool:
            for _ in pool.map(one, codes):
                pass

    times: dict[tuple[int, int], list[float]] = {}
    for workers, ncores in configs:
        with cores(ncores):
            times[workers, ncores] = medians(
                [lambda i=i, w=workers: decode_all(i, w) for i in impls], sizes.repeats
            )
    add_rows("codecs alone: cast_value + scale_offset decode per chunk, no zarr", times, (1, 1))

    # For scale: what the machine's memory allows, a fresh copy of each decoded chunk.
    decoded = [np.asarray(c, dtype=np.float64) for c in codes]

    def copy_all(workers: int) -> None:
        with ThreadPoolExecutor(workers) as pool:
            for _ in pool.map(np.copy, decoded):
                pass

    copies = {}
    for workers, ncores in configs:
        with cores(ncores):
            copies[workers, ncores] = medians([lambda w=workers: copy_all(w)], sizes.repeats)[0]

    # What zarr's pipeline allows a codec at best: the same values read from a plain float64
    # store (no scale_offset, no cast_value), so that only zarr's own work per chunk is left.
    floor_path = path.parent / "float64.zarr"
    write_floor_store(floor_path, path)
    floors_by_pipeline: dict[str, dict[tuple[int, int], float]] = {}

    for pipe_label, pipeline in PIPELINES.items():
        with zarr.config.set({"codec_pipeline.path": pipeline}):
            plain = zarr.open_array(floor_path, mode="r")
        plain_slices = chunk_slices(plain)
        floors_by_pipeline[pipe_label] = {}
        for workers, ncores in configs:
            with cores(ncores):
                floors_by_pipeline[pipe_label][workers, ncores] = medians(
                    [lambda a=plain, s=plain_slices, w=workers: read_chunks_threads(a, s, w)],
                    sizes.repeats,
                )[0]
        arrays = [open_array(path, impl, pipeline) for impl in impls]
        slices = chunk_slices(arrays[0])
        times = {}
        for workers, ncores in configs:
            with cores(ncores):
                times[workers, ncores] = medians(
                    [lambda a=a, s=slices, w=workers: read_chunks_threads(a, s, w) for a in arrays],
                    sizes.repeats,
                )
        add_rows(f"threads, one chunk per call, {pipe_label}", times, (1, 1))

        xs = [da.from_zarr(a) for a in arrays]
        times = {}
        for workers, ncores in configs:
            with cores(ncores):
                times[workers, ncores] = medians(
                    [
                        lambda x=x, w=workers: x.sum().compute(scheduler="threads", num_workers=w)
                        for x in xs
                    ],
                    sizes.repeats,
                )
        add_rows(
            f"dask threaded scheduler, `from_zarr(...).sum()`, {pipe_label}",
            times,
            (1, 1),
        )

    xs = [da.from_zarr(open_array(path, impl)) for impl in impls]
    # The cluster's own cost: the same task graph on chunks made in the workers, no zarr.
    no_codecs = da.ones(sizes.store_shape, chunks=sizes.store_chunks, dtype=np.float64)
    floors: list[str] = []
    for environ_label, environ in CLUSTER_ENVIRON.items():
        times = {}
        for workers in counts:
            with (
                dask.config.set({"distributed.nanny.pre-spawn-environ": environ}),
                LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                ) as cluster,
                Client(cluster) as client,
            ):
                *times[workers, len(ALL_CPUS)], floor = medians(
                    [
                        *[lambda x=x: client.compute(x.sum()).result() for x in xs],
                        lambda: client.compute(no_codecs.sum()).result(),
                    ],
                    sizes.repeats,
                    2,
                )
                floors.append(
                    f"{fmt_ms(floor)} ms with {workers} worker{'s' if workers > 1 else ''} "
                    f"({environ_label})"
                )
        add_rows(
            "dask.distributed LocalCluster, worker processes x 1 thread, `sum()`, default "
            f"pipeline, {environ_label}",
            times,
            (1, len(ALL_CPUS)),
        )
    report.add(
        "#### Scaling: threads and dask workers\n\n"
        "The same store, every chunk read once. Workers = threads, dask workers or worker "
        "processes; cores = CPUs this process may use (the one-core rows pin every thread of "
        "the process to one CPU; worker processes are not pinned). Speed-up against the "
        f"implementation's own first row; ratio = zarr's time / ours; ms median of {sizes.repeats}."
        " For scale, a numpy copy of each decoded chunk into a fresh array (memory traffic "
        "alone) takes "
        + ", ".join(
            f"{fmt_ms(t)} ms with {w} thread{'s' if w > 1 else ''} on {c} "
            f"core{'s' if c > 1 else ''}"
            for (w, c), t in copies.items()
        )
        + ". The same values stored as plain float64 (no scale_offset, no cast_value, no "
        "compressor: zarr's own work per chunk with no codec to run, though reading four times "
        "the stored bytes), one chunk per call, take "
        + "; ".join(
            ", ".join(f"{fmt_ms(t)} ms ({threads_on_cores(w, c)})" for (w, c), t in floor.items())
            + f" with the {label}"
            for label, floor in floors_by_pipeline.items()
        )
        + ". On the LocalCluster, the same `sum()` over chunks the workers make with "
        "`da.ones` (no zarr, no codecs) takes "
        + "; ".join(floors)
        + ".\n\n"
        + table(
            [
                "how",
                "workers (cores)",
                "zarr's ms",
                "zarr's speed-up",
                "ours ms",
                "ours speed-up",
                "ratio",
            ],
            rows,
        )
    )
    two = len(ALL_CPUS)
    threads_way = f"threads, one chunk per call, {next(iter(PIPELINES))}"
    dask_way = f"dask threaded scheduler, `from_zarr(...).sum()`, {next(iter(PIPELINES))}"
    default_floor = floors_by_pipeline[next(iter(PIPELINES))]
    floor_speedup = default_floor[1, 1] / default_floor[2, two]
    for way in (threads_way, dask_way):
        ours = speedups[way, "ours", 2, two]
        theirs = speedups[way, "zarr", 2, two]
        report.goal(
            f"2 vs 1 {'threads' if way == threads_way else 'dask workers (threaded)'}",
            ">= 1.6x (zarr's about 1.1x)",
            f"ours {ours:.2f}x, zarr's {theirs:.2f}x (ours against 1 thread on all cores: "
            f"{speedups[way, 'ours', 2, two] / speedups[way, 'ours', 1, two]:.2f}x)"
            + (
                f"; zarr reading the values as plain float64, no codecs: {floor_speedup:.2f}x"
                if way == threads_way
                else ""
            ),
            ours >= 1.6,
        )
    alone_way = "codecs alone: cast_value + scale_offset decode per chunk, no zarr"
    report.goal(
        "2 vs 1 threads, the codecs alone (no zarr pipeline)",
        ">= 1.6x (zarr's about 1.1x)",
        f"ours {speedups[alone_way, 'ours', 2, two]:.2f}x, "
        f"zarr's {speedups[alone_way, 'zarr', 2, two]:.2f}x",
        speedups[alone_way, "ours", 2, two] >= 1.6,
    )
    cluster_way = next(r[0] for r in rows if r[0].endswith(next(iter(CLUSTER_ENVIRON))))
    ours = speedups[cluster_way, "ours", 2, two]
    report.goal(
        "2 vs 1 dask worker processes",
        ">= 1.6x",
        f"ours {ours:.2f}x, zarr's {speedups[cluster_way, 'zarr', 2, two]:.2f}x",
        ours >= 1.6,
    )


@dataclass
class Probe:
    rate: float  # probe iterations / s over the whole run
    cpu_share: float  # probe thread CPU time / wall time
    stalled: float  # share of the wall time in gaps longer than STALL between ticks
    stall_ms: float  # longest gap between two probe ticks
    calls_per_s: float


def probe(work: Callable[[], object] | None, seconds: float) -> Probe:
    """Count a pure-Python thread's loop iterations while ``work`` runs in a loop in another.

    The probe notes the time after every 1000 iterations (some 20 us). A call that holds the
    GIL stops it for the call's whole length; a GIL-free call leaves it running, slowed only
    by sharing the cores.
    """
    stop = threading.Event()
    started = threading.Event()
    calls: list[tuple[float, float]] = []

    def worker() -> None:
        started.set()
        while not stop.is_set():
            begin = time.perf_counter()
            work()
            calls.append((begin, time.perf_counter()))

    thread = threading.Thread(target=worker) if work is not None else None
    if thread is not None:
        thread.start()
        started.wait()
        time.sleep(0.05)
    ticks: list[float] = []
    cpu: list[float] = []

    def counter() -> None:
        cpu0 = time.thread_time()
        end = time.perf_counter() + seconds
        ticks.append(time.perf_counter())
        while ticks[-1] < end:
            for _ in range(1000):
                pass
            ticks.append(time.perf_counter())
        cpu.append(time.thread_time() - cpu0)

    probe_thread = threading.Thread(target=counter)
    probe_thread.start()
    probe_thread.join()
    stop.set()
    if thread is not None:
        thread.join()
    wall = ticks[-1] - ticks[0]
    gaps = np.diff(np.asarray(ticks))
    in_run = [c for c in calls if ticks[0] <= c[1] <= ticks[-1]]  # calls ending in the run
    return Probe(
        rate=len(gaps) * 1000 / wall,
        cpu_share=cpu[0] / wall,
        stalled=float(gaps[gaps > STALL].sum()) / wall,
        stall_ms=float(gaps.max()) * 1e3,
        calls_per_s=len(in_run) / wall,
    )


def bench_gil(impls: tuple[Impl, Impl], path: Path, sizes: Sizes, report: Report) -> None:
    shape = sizes.chunk_shape
    codes = np.clip(np.rint((reflectance(shape) - OFFSET) * SCALE), 0, 65535)
    codes = np.nan_to_num(codes).astype(np.uint16)
    codes_f64 = codes.astype(np.float64)
    scaled = codes_f64 + 0.25
    chunk_spec = spec(shape)
    mib = codes_f64.nbytes // MIB
    cases: list[tuple[str, Callable[[], object]]] = []
    per_codec: list[tuple[str, Callable[[Any, Any], Callable[[], object]]]] = [
        (
            "cast_value decode u16 -> f64",
            lambda so, cv: lambda: cv._decode_sync(nd(codes), chunk_spec),
        ),
        (
            "cast_value encode f64 -> u16",
            lambda so, cv: lambda: cv._encode_sync(nd(scaled), chunk_spec),
        ),
        (
            "scale_offset decode f64",
            lambda so, cv: lambda: so._decode_sync(nd(codes_f64), chunk_spec),
        ),
    ]
    for operation, call in per_codec:
        for impl in impls:
            cases.append((f"{impl.label}: {operation}, {mib} MiB chunk", call(*impl.codecs())))
    for impl in impls:
        arr = open_array(path, impl)
        cases.append((f"{impl.label}: whole read, default pipeline", lambda a=arr: a[...]))
    alone = probe(None, sizes.probe_seconds)
    rows = [
        [
            "nothing (the probe alone)",
            "100 %",
            f"{alone.cpu_share * 100:.0f} %",
            f"{alone.stalled * 100:.0f} %",
            f"{alone.stall_ms:.1f}",
            "",
        ]
    ]
    measured = {}
    for label, work in cases:
        p = probe(work, sizes.probe_seconds)
        measured[label] = p
        rows.append(
            [
                label,
                f"{p.rate / alone.rate * 100:.0f} %",
                f"{p.cpu_share * 100:.0f} %",
                f"{p.stalled * 100:.0f} %",
                f"{p.stall_ms:.1f}",
                f"{p.calls_per_s:.1f}",
            ]
        )
    report.add(
        "#### GIL probe\n\n"
        f"A pure-Python thread counts loop iterations for {sizes.probe_seconds:g} s while "
        "another thread runs a codec call in a loop. Probe rate = its iterations/s against "
        "the probe alone (same run); CPU = its CPU time / wall time; stalled = the share of "
        f"the time it made no progress for more than {STALL * 1e3:g} ms at a stretch. A call "
        "that holds the GIL stops the probe for the whole call: with Python's default 5 ms "
        "switch interval, a probe beside a loop of D-ms GIL-holding calls keeps about "
        "5 / (5 + D) of its rate. A GIL-free call slows it only by sharing the cores.\n\n"
        + table(
            [
                "running in the other thread",
                "probe rate",
                "probe CPU",
                "probe stalled",
                "longest stall ms",
                "calls/s",
            ],
            rows,
        )
    )
    zr, ours = impls[0].label, impls[1].label
    for op in ("decode u16 -> f64", "encode f64 -> u16"):
        held = measured[f"{zr}: cast_value {op}, {mib} MiB chunk"].rate / alone.rate
        free = measured[f"{ours}: cast_value {op}, {mib} MiB chunk"].rate / alone.rate
        report.goal(
            f"GIL probe: cast_value {op}",
            "probe runs beside ours; held by cast-value-rs",
            f"probe keeps {free * 100:.0f} % of its rate beside ours, "
            f"{held * 100:.0f} % beside cast-value-rs",
            free >= 0.7 and held <= free - 0.2,
        )


# --- main --------------------------------------------------------------------------------------


def machine() -> str:
    cpu = "unknown CPU"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)

    def ver(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    return (
        f"{cpu}, {len(ALL_CPUS)} CPUs usable, {mem:.0f} GiB; {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()}; zarr {ver('zarr')}, "
        f"numpy {ver('numpy')}, cast-value-rs {ver('cast-value-rs')}, dask {ver('dask')}, "
        f"zarrs-extension-codecs {ver('zarrs-extension-codecs')}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", default="zarrs_extension_codecs", help="module with the classes")
    parser.add_argument("--quick", action="store_true", help="small sizes: check the script runs")
    parser.add_argument("--markdown", type=Path, help="also write the report to this file")
    parser.add_argument("--workdir", type=Path, help="where to put the store (default: a tmpdir)")
    parser.add_argument(
        "--sections",
        default="codecs,async,eopf,read,scaling,gil",
        help="comma-separated subset of codecs,async,eopf,read,scaling,gil",
    )
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    sections = set(args.sections.split(","))

    module = importlib.import_module(args.ours)
    # --quick only checks that the script runs; a module of classes without
    # a native part of this package's has no build to check.
    native = getattr(module, "_native", None)
    if getattr(native, "_debug_build", False) and not args.quick:
        sys.exit(f"{args.ours} is a debug build: install a release build to time it")
    impls = (
        Impl("zarr's", ScaleOffset, CastValue),
        Impl("ours", module.ScaleOffset, module.CastValue),
    )
    # Any thread pool the classes start sizes itself from the CPUs allowed when it starts:
    # start them before any section pins the process to one CPU.
    for impl in impls:
        so, cv = impl.codecs()
        small = np.ones((64, 64), np.float64)
        cv._decode_sync(cv._encode_sync(nd(small), spec(small.shape)), spec(small.shape))
        so._decode_sync(so._encode_sync(nd(small), spec(small.shape)), spec(small.shape))
    report = Report()
    load0 = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    workdir = Path(tempfile.mkdtemp(prefix="bench_codecs_", dir=args.workdir))
    try:
        path = workdir / "store.zarr"
        if sections & {"read", "scaling", "gil"}:
            write_store(path, sizes)
        if "codecs" in sections:
            bench_codecs(impls, sizes, report)
        if "async" in sections:
            bench_async(impls, sizes, report)
        if "eopf" in sections:
            bench_eopf(impls, workdir, sizes, report)
        if "read" in sections:
            bench_whole_read(impls, path, sizes, report)
        if "scaling" in sections:
            bench_scaling(impls, path, sizes, report)
        if "gil" in sections:
            bench_gil(impls, path, sizes, report)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    load1 = os.getloadavg()
    header = (
        f"Run {started}{' (--quick: sizes too small to mean anything)' if args.quick else ''}; "
        f"{machine()}. Load average (1/5/15 min) {load0[0]:.2f}/{load0[1]:.2f}/{load0[2]:.2f} "
        f"at the start, {load1[0]:.2f}/{load1[1]:.2f}/{load1[2]:.2f} at the end. "
        f"ours = `{args.ours}`; command: `python {' '.join(sys.argv)}`."
    )
    goals = "#### Goals (issues 17, 24 and 34)\n\n" + table(
        ["goal", "target", "measured", ""], report.goals
    )
    text = header + "\n\n" + goals + "\n\n" + report.text()
    print(goals + "\n\n" + header)
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
