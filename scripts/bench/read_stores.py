"""Whole-array and window reads: zarr-python's side of `scripts/bench/read.sh`.

    python read_stores.py write DIR        # write the two stores with zarr-python
    python read_stores.py bench DIR OUT    # time zarr-python's reads, write OUT (JSON)

Stores (the chain zarr-python writes for Sentinel-2-like products: float64
stored as uint8 through scale_offset + cast_value, NaN <-> 0):
  whole.zarr    4096 x 8192 float64, 32 chunks of 1024 x 1024 (8 MiB decoded each)
  sharded.zarr  the same values, shards 2048 x 2048 of 256 x 256 inner chunks
  big.zarr      8192 x 4096 float64 in 8 chunks of 1024 x 4096 (32 MiB decoded
                each), stored as uint16 through scale_offset (offset 100,
                scale 10) + cast_value, no compressor

Every read allocates a fresh output (numpy, as a user's `arr[...]` does).
Readers: zarr's FusedCodecPipeline and BatchedCodecPipeline (zarr's own
classes), and this package's `zarrs_extension_codecs.CodecPipeline` (its
wheel installed in the venv; the crate's read engine behind zarr's API).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import bench_stores
import numpy as np
import zarr
from zarr.codecs import BytesCodec, ShardingCodec

SHAPE = (4096, 8192)
CHUNKS = (1024, 1024)
SHARDS = (2048, 2048)
INNER = (256, 256)
WINDOW = 256
# Window offsets: the same seed and rule as benches/read.rs, so both sides
# read the same windows.
N_WINDOWS = 256


def chain():
    return bench_stores.chain(offset=-10, scale=0.1, data_type="uint8")


def values() -> np.ndarray:
    rng = np.random.default_rng(20261123)
    q = rng.integers(1, 256, size=SHAPE, dtype=np.uint16)
    x = q.astype(np.float64) / 0.1 - 10.0  # exactly what decoding q gives
    x[rng.random(SHAPE) < 0.05] = np.nan
    return x


BIG_SHAPE = (8192, 4096)
BIG_CHUNKS = (1024, 4096)


def big_values() -> np.ndarray:
    rng = np.random.default_rng(20261126)
    q = rng.integers(1, 65536, size=BIG_SHAPE, dtype=np.uint16)
    x = q.astype(np.float64) / 10.0 + 100.0  # what decoding q gives
    x[rng.random(BIG_SHAPE) < 0.01] = np.nan
    return x


def write(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    data = values()
    layouts = {
        "whole.zarr": {"chunks": CHUNKS, "filters": chain(), "serializer": BytesCodec()},
        "sharded.zarr": {
            "chunks": SHARDS,
            "serializer": ShardingCodec(chunk_shape=INNER, codecs=[*chain(), BytesCodec()]),
        },
    }
    for name, layout in layouts.items():
        bench_stores.write_checked(root / name, data, **layout)
    big = bench_stores.chain(offset=100, scale=10, data_type="uint16")
    bench_stores.write_checked(
        root / "big.zarr", big_values(), chunks=BIG_CHUNKS, filters=big, serializer=BytesCodec()
    )
    print(f"wrote whole.zarr, sharded.zarr and big.zarr in {root} with zarr {zarr.__version__}")


def window_offsets(aligned: bool) -> list[tuple[int, int]]:
    return bench_stores.window_offsets(SHAPE, WINDOW, N_WINDOWS, aligned)


def configure(pipeline: str, workers: int) -> None:
    path = {
        "fused": "zarr.core.codec_pipeline.FusedCodecPipeline",
        "batched": "zarr.core.codec_pipeline.BatchedCodecPipeline",
        # This package's pipeline (the Rust read engine behind zarr's API).
        "codecpipeline": "zarrs_extension_codecs.CodecPipeline",
    }[pipeline]
    zarr.config.set(
        {
            "codec_pipeline.path": path,
            "codec_pipeline.max_workers": workers,
            "threading.max_workers": workers,
        }
    )


def time_whole(arr, reps: int) -> float:
    arr[...]  # warm: page cache, pools
    return statistics.median(bench_stores.timed_whole_reads(arr, reps))


def time_windows(arr, offsets, reps: int) -> float:
    """Median seconds per window over `reps` passes over all offsets."""
    for y, x in offsets[:8]:
        arr[y : y + WINDOW, x : x + WINDOW]
    per_pass = []
    for _ in range(reps):
        t = time.perf_counter()
        for y, x in offsets:
            arr[y : y + WINDOW, x : x + WINDOW]
        per_pass.append((time.perf_counter() - t) / len(offsets))
    return statistics.median(per_pass)


def bench(root: Path, out: Path, reps: int) -> None:
    cpus = os.cpu_count() or 1
    results = []
    reference = values()
    for pipeline in ("fused", "batched", "codecpipeline"):
        for workers in sorted({1, cpus}):
            configure(pipeline, workers)
            whole = zarr.open_array(str(root / "whole.zarr"), mode="r")
            np.testing.assert_array_equal(whole[...], reference)
            s = time_whole(whole, reps)
            results.append(
                {
                    "side": f"zarr-python {pipeline}",
                    "workers": workers,
                    "case": "whole",
                    "seconds": s,
                    "bytes": reference.nbytes,
                }
            )
            print(
                f"{pipeline:8} workers={workers} whole    {reference.nbytes / s / 1e9:6.2f} GB/s",
                file=sys.stderr,
            )
            big = zarr.open_array(str(root / "big.zarr"), mode="r")
            big_reference = big_values()
            np.testing.assert_array_equal(big[...], big_reference)
            s = time_whole(big, reps)
            results.append(
                {
                    "side": f"zarr-python {pipeline}",
                    "workers": workers,
                    "case": "whole big",
                    "seconds": s,
                    "bytes": big_reference.nbytes,
                }
            )
            del big_reference
            sharded = zarr.open_array(str(root / "sharded.zarr"), mode="r")
            for aligned in (True, False):
                offsets = window_offsets(aligned)
                y, x = offsets[0]
                np.testing.assert_array_equal(
                    sharded[y : y + WINDOW, x : x + WINDOW],
                    reference[y : y + WINDOW, x : x + WINDOW],
                )
                s = time_windows(sharded, offsets, max(1, reps // 2))
                case = "windows aligned" if aligned else "windows unaligned"
                results.append(
                    {
                        "side": f"zarr-python {pipeline}",
                        "workers": workers,
                        "case": case,
                        "seconds": s,
                        "bytes": WINDOW * WINDOW * 8,
                    }
                )
                print(
                    f"{pipeline:8} workers={workers} {case:17} {1 / s:8.0f} windows/s",
                    file=sys.stderr,
                )
    out.write_text(
        json.dumps(
            {"zarr": zarr.__version__, "numpy": np.__version__, "results": results}, indent=1
        )
    )


def main() -> None:
    cmd, root = sys.argv[1], Path(sys.argv[2])
    if cmd == "write":
        write(root)
    elif cmd == "bench":
        bench_stores.require_release_build()
        bench(root, Path(sys.argv[3]), int(os.environ.get("BENCH_REPS", "7")))
    else:
        raise SystemExit(f"unknown command {cmd!r}: use write or bench")


if __name__ == "__main__":
    main()
