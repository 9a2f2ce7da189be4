"""What the zarr-python sides of the benchmarks share (read_stores.py, remote_stores.py).

The chain zarr-python writes for Sentinel-2-like products, the window offsets
(the same SplitMix64 rule as benches/read.rs and benches/remote.rs, so both
sides of a benchmark read the same windows), writing a store checked by
reading it back, and timing whole reads.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import zarr
from zarr.codecs import CastValue, ScaleOffset


def require_release_build() -> None:
    """Exit unless the installed package is a release build: a debug
    build (the tests' `maturin build --profile dev`) is several times
    slower, and its numbers would be taken for the package's."""
    from zarrs_extension_codecs import _native

    if getattr(_native, "_debug_build", False):
        sys.exit(
            "zarrs_extension_codecs in this venv is a debug build; install a release one:\n"
            "  (cd python && ../.venv/bin/maturin build --release --out ../target/wheels-release)\n"
            "  .venv/bin/python -m pip install --no-deps --force-reinstall "
            "target/wheels-release/*.whl"
        )


def chain(offset: float, scale: float, data_type: str) -> list:
    """scale_offset + cast_value to `data_type`, NaN <-> 0."""
    return [
        ScaleOffset(offset=offset, scale=scale),
        CastValue(
            data_type=data_type,
            rounding="nearest-even",
            scalar_map={"encode": [["NaN", 0]], "decode": [[0, "NaN"]]},
        ),
    ]


def window_offsets(
    shape: tuple[int, int], window: int, n_windows: int, aligned: bool
) -> list[tuple[int, int]]:
    """Top-left corners of `n_windows` square windows of side `window`."""
    # SplitMix64, as in benches/read.rs and benches/remote.rs.
    state = 0x5EED_0000 + (1 if aligned else 2)
    mask = (1 << 64) - 1

    def nxt() -> int:
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    out = []
    for _ in range(n_windows):
        if aligned:
            y = (nxt() % (shape[0] // window)) * window
            x = (nxt() % (shape[1] // window)) * window
        else:
            y = nxt() % (shape[0] - window + 1)
            x = nxt() % (shape[1] - window + 1)
        out.append((y, x))
    return out


def write_checked(path: Path, data: np.ndarray, **layout) -> None:
    """Write `data` as a float64 store (fill NaN, no compressors unless the
    layout's serializer has them) and check it reads back as written."""
    arr = zarr.create_array(
        store=str(path),
        shape=data.shape,
        dtype="float64",
        fill_value=np.nan,
        compressors=None,
        overwrite=True,
        **layout,
    )
    arr[...] = data
    np.testing.assert_array_equal(arr[...], data)


def timed_whole_reads(arr, reps: int) -> list[float]:
    """Seconds of each of `reps` whole reads of `arr`, each into a fresh
    output (dropped before the next read); the caller warms up first."""
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        data = arr[...]
        times.append(time.perf_counter() - t)
        del data
    return times
