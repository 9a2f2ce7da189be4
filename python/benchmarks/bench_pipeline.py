"""zarrs_extension_codecs.CodecPipeline against zarr-python's own pipelines, side by side.

A benchmark, not a test: it prints a markdown table (and writes it with ``--markdown``) of
median seconds over several warm runs, each read into a fresh output (``arr[...]`` allocates
one, as users' reads do), timed in turn so that a change in the machine's load falls on all
alike, with the ratios from the same run. Readers:

* zarr: zarr's default ``BatchedCodecPipeline`` with zarr's own ``ScaleOffset`` / ``CastValue``;
* Batched + ours, Fused + ours: zarr's two pipelines with this package's classes (the better
  of the two is the one the goals compare with);
* CodecPipeline: ``codec_pipeline.path = "zarrs_extension_codecs.CodecPipeline"``.

Stores (local disk, warm page cache):

* EOPF-like band: float64 4096 x 4096 stored as uint16 (scale_offset 10000 / offset -0.1,
  cast_value rounding half to even, clamping, NaN <-> 0), blosc zstd level 3 with shuffle,
  shards of 2048 x 2048 holding 256 x 256 inner chunks;
* 256 MiB store: float64 8192 x 4096 (256 MiB decoded) in 1024 x 1024 chunks, the same
  scale_offset + cast_value(uint16), no compressor (the store of bench_codecs.py).

Cases: the whole array on one core (every thread of the process pinned to the first CPU) and
on all cores; 64 windows of 256 x 256 at random places in the band, one after the other, on one
core. Run from the repository root after building the package (release) into the venv::

    .venv/bin/python python/benchmarks/bench_pipeline.py --markdown /tmp/bench_pipeline.md

``--quick`` runs small sizes and few repeats to check the script works (numbers meaningless).
On a shared machine the numbers are indicative only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import zarr
from eopf_band import BLOSC, FILTERS, OFFSET, SCALE

import zarrs_extension_codecs

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

ZARRS_CLASSES = {
    "codecs.scale_offset": "zarr.codecs.scale_offset.ScaleOffset",
    "codecs.cast_value": "zarr.codecs.cast_value.CastValue",
}
OUR_CLASSES = {
    "codecs.scale_offset": "zarrs_extension_codecs.ScaleOffset",
    "codecs.cast_value": "zarrs_extension_codecs.CastValue",
}
BATCHED = "zarr.core.codec_pipeline.BatchedCodecPipeline"
FUSED = "zarr.core.codec_pipeline.FusedCodecPipeline"
READERS = {
    "zarr": {**ZARRS_CLASSES, "codec_pipeline.path": BATCHED},
    "Batched + ours": {**OUR_CLASSES, "codec_pipeline.path": BATCHED},
    "Fused + ours": {**OUR_CLASSES, "codec_pipeline.path": FUSED},
    "CodecPipeline": {**OUR_CLASSES, "codec_pipeline.path": "zarrs_extension_codecs.CodecPipeline"},
}
ALL_CPUS = sorted(os.sched_getaffinity(0))


@dataclass
class Sizes:
    band: tuple[int, int]
    shard: tuple[int, int]
    inner: tuple[int, int]
    big: tuple[int, int]
    big_chunks: tuple[int, int]
    windows: int
    repeats: int


FULL = Sizes((4096, 4096), (2048, 2048), (256, 256), (8192, 4096), (1024, 1024), 64, 7)
QUICK = Sizes((1024, 1024), (512, 512), (128, 128), (1024, 512), (256, 256), 8, 2)


def set_cores(n: int) -> None:
    """Every thread of this process (and those started later) on the first n CPUs
    (``os.sched_setaffinity(0, ...)`` alone moves only the calling thread)."""
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


def reflectance(shape: tuple[int, int], seed: int) -> np.ndarray:
    """Smooth reflectance-like values (compressible, as real bands are) with 2 % NaN."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0 : shape[0], 0 : shape[1]]
    values = 0.3 + 0.2 * np.sin(x / 97.0) * np.cos(y / 61.0) + rng.normal(0, 0.01, shape)
    values = np.round(values * SCALE) / SCALE + OFFSET
    values[rng.random(shape) < 0.02] = np.nan
    return values


def write_stores(root: Path, sizes: Sizes) -> dict[str, Path]:
    band = root / "band.zarr"
    big = root / "big.zarr"
    with zarr.config.set(ZARRS_CLASSES):
        arr = zarr.create_array(
            band,
            shape=sizes.band,
            chunks=sizes.inner,
            shards=sizes.shard,
            dtype="float64",
            fill_value=np.nan,
            filters=FILTERS,
            compressors=[BLOSC],
        )
        rows = sizes.shard[0]
        for start in range(0, sizes.band[0], rows):
            arr[start : start + rows] = reflectance((rows, sizes.band[1]), seed=start)
        arr = zarr.create_array(
            big,
            shape=sizes.big,
            chunks=sizes.big_chunks,
            dtype="float64",
            fill_value=np.nan,
            filters=FILTERS,
            compressors=None,
        )
        rows = sizes.big_chunks[0]
        for start in range(0, sizes.big[0], rows):
            arr[start : start + rows] = reflectance((rows, sizes.big[1]), seed=start)
    return {"EOPF-like band": band, "256 MiB store": big}


def reader(path: Path, config: dict[str, str]) -> Callable[[Any], np.ndarray]:
    with zarr.config.set(config):
        arr = zarr.open_array(path, mode="r")

    def read(selection: Any) -> np.ndarray:
        # Sharding's inner pipeline is chosen at read time: keep the configuration.
        with zarr.config.set(config):
            return arr[selection]

    return read


def medians(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def check_equal(readers: dict[str, Callable[[Any], np.ndarray]], selection: Any) -> None:
    results = [np.asarray(r(selection)) for r in readers.values()]
    for other in results[1:]:
        assert other.tobytes() == results[0].tobytes(), "readers disagree"


def run(sizes: Sizes) -> list[tuple[str, dict[str, float]]]:
    rows: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        stores = write_stores(Path(tmp), sizes)
        for store_name, path in stores.items():
            readers = {name: reader(path, cfg) for name, cfg in READERS.items()}
            check_equal(readers, ...)
            for n, label in ((1, "one core"), (len(ALL_CPUS), f"{len(ALL_CPUS)} cores")):
                with cores(n):
                    fns = {name: (lambda r=r: r(...)) for name, r in readers.items()}
                    rows.append((f"{store_name}, whole read, {label}", medians(fns, sizes.repeats)))
        readers = {name: reader(stores["EOPF-like band"], cfg) for name, cfg in READERS.items()}
        rng = np.random.default_rng(1)
        corners = [
            (int(rng.integers(0, sizes.band[0] - 256)), int(rng.integers(0, sizes.band[1] - 256)))
            for _ in range(sizes.windows)
        ]
        windows = [(slice(y, y + 256), slice(x, x + 256)) for y, x in corners]
        check_equal(readers, windows[0])

        def all_windows(r: Callable[[Any], np.ndarray]) -> None:
            for w in windows:
                r(w)

        with cores(1):
            fns = {name: (lambda r=r: all_windows(r)) for name, r in readers.items()}
            rows.append(
                (
                    f"EOPF-like band, {sizes.windows} windows of 256 x 256, one core",
                    medians(fns, sizes.repeats),
                )
            )
    return rows


def report(rows: list[tuple[str, dict[str, float]]]) -> str:
    lines = [
        f"zarrs_extension_codecs {zarrs_extension_codecs.__version__}, zarr {zarr.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}, {len(ALL_CPUS)} CPUs "
        "(a shared machine: indicative only)",
        "",
        "| case | zarr (ms) | Batched + ours (ms) | Fused + ours (ms) | CodecPipeline (ms) "
        "| zarr / CodecPipeline | best ours-classes / CodecPipeline |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for case, t in rows:
        ours = t["CodecPipeline"]
        best = min(t["Batched + ours"], t["Fused + ours"])
        lines.append(
            f"| {case} | {t['zarr'] * 1e3:.1f} | {t['Batched + ours'] * 1e3:.1f} "
            f"| {t['Fused + ours'] * 1e3:.1f} | {ours * 1e3:.1f} | {t['zarr'] / ours:.2f}x "
            f"| {best / ours:.2f}x |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    parser.add_argument("--markdown", type=Path, help="also write the report here")
    args = parser.parse_args()
    # --quick only checks that the script runs.
    if getattr(zarrs_extension_codecs._native, "_debug_build", False) and not args.quick:
        sys.exit("zarrs_extension_codecs is a debug build: install a release build to time it")
    text = report(run(QUICK if args.quick else FULL))
    print(text)
    if args.markdown:
        args.markdown.write_text(text)


if __name__ == "__main__":
    main()
