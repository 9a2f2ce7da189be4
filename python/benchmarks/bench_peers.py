"""Zarr v3 readers and writers side by side, each measurement in a fresh process.

A benchmark, not a test: it prints markdown tables (and writes them with ``--markdown``) of
median milliseconds, with the ratios from the same run. Every measurement runs in a child
process of its own (this script with ``--child``), pinned before it imports anything heavy:
on one core (``os.sched_setaffinity`` to the first CPU, ``threading.max_workers = 1`` for
zarr, zarrs-python and this package's pipeline, ``ZARRS_EXTENSION_CODECS_THREADS``,
``RAYON_NUM_THREADS`` and ``OMP_NUM_THREADS`` = 1, tensorstore's ``data_copy_concurrency`` and
``file_io_concurrency`` limited to 1) or on all cores (no limits). The child opens the array
(timed: the "open" tables; before it, an empty array of the same codecs and half the shape
is opened and read from, so that no reader's first-use costs, zarr's lazy imports of its
codec classes among them, fall in the time, and no cache holds the timed array; this package
checks a codec configuration once in a process, and the warm-up array shares the timed one's,
as the bands of a product do), runs the case
once as a warm-up, then times ``--repeats`` runs, each into fresh memory, and prints the times
and a checksum of what it read; the parent checks every checksum against the one of the
reference array (read back by zarr's default pipeline right after writing it).

Readers (``--only`` takes these names):

* zarr: zarr-python 3.4.2's default ``BatchedCodecPipeline``;
* zarr-fused: zarr-python's ``FusedCodecPipeline``;
* zarrs: zarrs-python (``zarrs.ZarrsCodecPipeline``, with ``codec_pipeline.strict`` so that it
  raises rather than hand an array to zarr's pipeline);
* tensorstore: ``ts.open({"driver": "zarr3", ...})`` then ``.read().result()``;
* ours: ``zarrs_extension_codecs.CodecPipeline`` (with ``codec_pipeline.fallback = "raise"``);
* zarr-floor: zarr-python with a pipeline whose ``read`` returns at once, leaving zarr's output
  as zarr made it: what zarr itself costs around any pipeline (indexing, its event loop, the
  output's allocation), the floor of every ``CodecPipeline`` (reads only; its output is not
  the array's, so its checksum is not checked);
* limit: the lower bound, on one core only: each shard file read whole, its index parsed
  (``index_location`` end: 2 x uint64 little endian per inner chunk, then a crc32c, checked),
  each inner chunk decompressed by one reused ``zstandard.ZstdDecompressor`` and placed into a
  fresh output with numpy slicing, in a plain Python loop.

Layouts (on local disk, written once by zarr-python into ``--dir`` or a temporary directory,
warm page cache):

* zarr_benchmarks (the zarr_benchmarks project's, scaled down): uint16 512 x 512 x 512,
  ``sharding_indexed`` shards of 256^3 holding inner chunks of 64^3, inner codecs bytes +
  zstd level 0, data a smooth function plus Gaussian noise (deterministic). Cases: the whole
  array (``arr[...]``), 64 windows of one inner chunk each (aligned to the inner chunks, at
  deterministic random places, one after the other), and a whole write of the same array from
  memory into a new directory (array creation included, no fsync; each store written is read
  back by zarr's default pipeline, outside the timing, and compared).
* eopf_band (python/benchmarks/bench_pipeline.py's band): float64 4096 x 4096 stored as uint16
  through scale_offset + cast_value, blosc zstd, shards of 2048^2 holding 256^2 inner chunks;
  for zarr, zarr-fused and ours only (tensorstore and zarrs cannot read scale_offset: name them
  in ``--only`` to see their errors). Cases: opening the array and reading one 256 x 256
  window (one measurement per fresh process, ``--repeats`` processes, open cost included), the
  whole array, a whole write, and 64 inner chunks written one after the other into the
  array once it is written whole (a tile writer; the whole write not timed; the store read
  back and compared with zarr's result of the same writes).

Run from the repository root after ``bash scripts/bench/setup_peers.sh`` (a venv with zarr,
zarrs-python, tensorstore and the release wheel of this package)::

    .venv-peers/bin/python python/benchmarks/bench_peers.py --markdown /tmp/bench_peers.md

``--quick`` runs tiny shapes and one repeat to check the script works (numbers meaningless);
``--cases`` takes read_whole, read_windows, open_window, write_whole and write_windows,
``--layouts`` zarr_benchmarks and eopf_band. The measurements of a case run one after the
other, reader by reader; ``--rounds R`` runs that sequence R times and pools the times, so
that a change in the machine's load falls on all readers alike. On a shared machine the
numbers are indicative only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eopf_band import BLOSC, FILTERS, OFFSET, SCALE

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

# Only the standard library above: a child pins itself before it imports numpy, zarr and the
# readers (inside the functions below).

ALL_CPUS = sorted(os.sched_getaffinity(0))
READERS = ["zarr", "zarr-fused", "zarrs", "tensorstore", "ours", "zarr-floor", "limit"]
PEERS = ["zarr", "zarr-fused", "zarrs", "tensorstore"]
WRITERS = ["zarr", "zarr-fused", "zarrs", "tensorstore", "ours"]
LAYOUTS = ["zarr_benchmarks", "eopf_band"]
CASES = {
    "zarr_benchmarks": ["read_whole", "read_windows", "write_whole"],
    "eopf_band": ["open_window", "read_whole", "write_whole", "write_windows"],
}
WRITE_CASES = ("write_whole", "write_windows")
# The readers a layout is measured with when --only does not name them.
DEFAULT_READERS = {
    "zarr_benchmarks": READERS,
    "eopf_band": ["zarr", "zarr-fused", "ours", "zarr-floor"],
}
# Readers whose output is not the array's (their checksums are not checked).
UNCHECKED = ("zarr-floor",)
FLOOR = "bench_peers.FloorPipeline"
BATCHED = "zarr.core.codec_pipeline.BatchedCodecPipeline"
FUSED = "zarr.core.codec_pipeline.FusedCodecPipeline"
OURS = "zarrs_extension_codecs.CodecPipeline"
ZARRS_PYTHON = "zarrs.ZarrsCodecPipeline"
# Which classes zarr decodes scale_offset / cast_value with (both are registered once this
# package is installed): zarr's own for every reader but ours.
ZARR_CLASSES = {
    "codecs.scale_offset": "zarr.codecs.scale_offset.ScaleOffset",
    "codecs.cast_value": "zarr.codecs.cast_value.CastValue",
}
OUR_CLASSES = {
    "codecs.scale_offset": "zarrs_extension_codecs.ScaleOffset",
    "codecs.cast_value": "zarrs_extension_codecs.CastValue",
}
ONE_CORE_ENV = {
    "ZARRS_EXTENSION_CODECS_THREADS": "1",
    "RAYON_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
}
RESULT = "BENCH_PEERS_RESULT "
# Changed with the data's recipe, so that stores kept in --dir are written again.
DATA_VERSION = 3


@dataclass(frozen=True)
class Sizes:
    shape: tuple[int, int, int]
    shard: tuple[int, int, int]
    inner: tuple[int, int, int]
    windows: int
    band: tuple[int, int]
    band_shard: tuple[int, int]
    band_inner: tuple[int, int]
    band_window: int


FULL = Sizes((512,) * 3, (256,) * 3, (64,) * 3, 64, (4096, 4096), (2048, 2048), (256, 256), 256)
QUICK = Sizes((128,) * 3, (64,) * 3, (16,) * 3, 8, (512, 512), (256, 256), (64, 64), 64)


def sizes_from(fields: dict[str, Any]) -> Sizes:
    return Sizes(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})


# ----------------------------------------------------------------------------------------------
# Data, selections and checksums (children only)


def volume(shape: tuple[int, int, int], seed: int) -> np.ndarray:
    """uint16, a smooth function of the position plus Gaussian noise (sd 2): compressible,
    not trivially (zstd level 0 keeps about half)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = np.empty(shape, dtype=np.uint16)
    yy, xx = np.mgrid[0 : shape[1], 0 : shape[2]].astype(np.float64)
    plane = 30000 + 1000 * np.sin(xx / 100.0) * np.cos(yy / 70.0)
    for k in range(shape[0]):
        values = plane + 750 * np.sin(k / 100.0 + xx / 200.0) + rng.normal(0, 2, shape[1:])
        out[k] = np.clip(np.rint(values), 0, 65535)
    return out


def reflectance(shape: tuple[int, int], seed: int) -> np.ndarray:
    """bench_pipeline.py's band values: smooth reflectance-like values with 2 % NaN."""
    import numpy as np

    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0 : shape[0], 0 : shape[1]]
    values = 0.3 + 0.2 * np.sin(x / 97.0) * np.cos(y / 61.0) + rng.normal(0, 0.01, shape)
    values = np.round(values * SCALE) / SCALE + OFFSET
    values[rng.random(shape) < 0.02] = np.nan
    return values


def band(sizes: Sizes) -> np.ndarray:
    import numpy as np

    rows = sizes.band_shard[0]
    return np.concatenate(
        [reflectance((rows, sizes.band[1]), seed=start) for start in range(0, sizes.band[0], rows)]
    )


def grid_windows(
    shape: tuple[int, ...], inner: tuple[int, ...], count: int, seed: int
) -> list[tuple[slice, ...]]:
    """`count` inner chunks (of `inner`) at deterministic random places of an array of `shape`."""
    import numpy as np

    grid = [s // c for s, c in zip(shape, inner, strict=True)]
    picks = np.random.default_rng(seed).integers(0, grid, size=(count, len(shape)))
    return [
        tuple(slice(int(i) * c, (int(i) + 1) * c) for i, c in zip(p, inner, strict=True))
        for p in picks
    ]


def inner_windows(sizes: Sizes) -> list[tuple[slice, ...]]:
    """The zarr_benchmarks layout's windows: `sizes.windows` inner chunks."""
    return grid_windows(sizes.shape, sizes.inner, sizes.windows, seed=1)


def band_tiles(sizes: Sizes) -> list[tuple[slice, ...]]:
    """The band's tiles: `sizes.windows` inner chunks (a tile server's writes)."""
    return grid_windows(sizes.band, sizes.band_inner, sizes.windows, seed=3)


def band_tile(data: Any, sizes: Sizes) -> Any:
    """The values written into each of `band_tiles`: half the first inner chunk's (NaN kept)."""
    h, w = sizes.band_inner
    return data[:h, :w] * 0.5


def band_window(sizes: Sizes) -> tuple[slice, slice]:
    """One window of the band at a deterministic random place (not aligned to chunks)."""
    import numpy as np

    rng = np.random.default_rng(2)
    w = sizes.band_window
    y, x = (int(rng.integers(0, n - w)) for n in sizes.band)
    return slice(y, y + w), slice(x, x + w)


class Digest:
    def __init__(self) -> None:
        import hashlib

        self._h = hashlib.sha256()

    def add(self, array: Any) -> Digest:
        import numpy as np

        a = np.ascontiguousarray(array)
        self._h.update(f"{a.dtype.str}{a.shape}".encode())
        self._h.update(memoryview(a).cast("B"))
        return self

    def hex(self) -> str:
        return self._h.hexdigest()[:16]


def checksum(*arrays: Any) -> str:
    d = Digest()
    for a in arrays:
        d.add(a)
    return d.hex()


# ----------------------------------------------------------------------------------------------
# Stores


def store_path(root: Path, layout: str) -> Path:
    return root / f"{layout}.zarr"


def warm_up_path(root: Path, layout: str) -> Path:
    """An empty array of the layout's codecs, half its shape (so another metadata document):
    each child opens it and reads from it before timing anything, so that what any first open
    in a process costs (zarr's imports of its codec classes, registries, thread pools) is out
    of every reader's times alike, and no reader finds the timed array in a cache."""
    return root / f"{layout}-warm-up.zarr"


def write_warm_up(root: Path, layout: str) -> None:
    path = warm_up_path(root, layout)
    if (path / "zarr.json").exists():
        return
    meta = json.loads((store_path(root, layout) / "zarr.json").read_text())
    meta["shape"] = [max(1, n // 2) for n in meta["shape"]]
    path.mkdir(parents=True, exist_ok=True)
    (path / "zarr.json").write_text(json.dumps(meta))


def create_zarr_array(path: Path, layout: str, sizes: Sizes) -> Any:
    import numpy as np
    import zarr

    if layout == "zarr_benchmarks":
        return zarr.create_array(
            path,
            shape=sizes.shape,
            chunks=sizes.inner,
            shards=sizes.shard,
            dtype="uint16",
            fill_value=0,
            compressors=zarr.codecs.ZstdCodec(level=0),
        )
    return zarr.create_array(
        path,
        shape=sizes.band,
        chunks=sizes.band_inner,
        shards=sizes.band_shard,
        dtype="float64",
        fill_value=np.nan,
        filters=FILTERS,
        compressors=[BLOSC],
    )


def make_stores(root: Path, sizes: Sizes) -> dict[str, Any]:
    """Writes both layouts with zarr's default pipeline (and their data as .npy, for the
    writers), and returns the checksums every reader must reproduce."""
    import numpy as np
    import zarr

    expected: dict[str, Any] = {"sizes": asdict(sizes), "data": DATA_VERSION}
    with zarr.config.set({**ZARR_CLASSES, "codec_pipeline.path": BATCHED}):
        for layout in LAYOUTS:
            data = volume(sizes.shape, 7) if layout == "zarr_benchmarks" else band(sizes)
            np.save(root / f"{layout}.npy", data)
            path = store_path(root, layout)
            shutil.rmtree(path, ignore_errors=True)
            arr = create_zarr_array(path, layout, sizes)
            arr[...] = data
            back = zarr.open_array(path, mode="r")[...]
            if layout == "zarr_benchmarks":
                assert checksum(back) == checksum(data), "zarr did not read back what it wrote"
                expected[layout] = {
                    "read_whole": checksum(back),
                    "read_windows": checksum(*(back[w] for w in inner_windows(sizes))),
                }
                stored = sum(p.stat().st_size for p in (path / "c").rglob("*") if p.is_file())
                expected[layout]["ratio"] = data.nbytes / stored
            else:
                expected[layout] = {
                    "read_whole": checksum(back),
                    "open_window": checksum(back[band_window(sizes)]),
                }
            expected[layout]["write_whole"] = expected[layout]["read_whole"]
            if layout == "eopf_band":
                tiles = root / "writes" / "expected-tiles.zarr"
                shutil.rmtree(tiles, ignore_errors=True)
                arr = create_zarr_array(tiles, layout, sizes)
                arr[...] = data
                for w in band_tiles(sizes):
                    arr[w] = band_tile(data, sizes)
                back = zarr.open_array(tiles, mode="r")[...]
                expected[layout]["write_windows"] = checksum(back)
                shutil.rmtree(tiles, ignore_errors=True)
    return expected


# ----------------------------------------------------------------------------------------------
# Readers and writers (children only)


def zarr_config(reader: str, one_core: bool) -> dict[str, Any]:
    config: dict[str, Any] = {"threading.max_workers": 1} if one_core else {}
    config.update(OUR_CLASSES if reader == "ours" else ZARR_CLASSES)
    if reader == "zarr":
        config["codec_pipeline.path"] = BATCHED
    elif reader == "zarr-fused":
        config["codec_pipeline.path"] = FUSED
    elif reader == "zarrs":
        config.update({"codec_pipeline.path": ZARRS_PYTHON, "codec_pipeline.strict": True})
    elif reader == "ours":
        config.update({"codec_pipeline.path": OURS, "codec_pipeline.fallback": "raise"})
    elif reader == "zarr-floor":
        register_floor()
        config["codec_pipeline.path"] = FLOOR
    else:
        config["codec_pipeline.path"] = BATCHED
    return config


def register_floor() -> None:
    """Registers `FloorPipeline` with zarr, under the name `FLOOR`."""
    from zarr.abc.codec import GetResult
    from zarr.core.codec_pipeline import BatchedCodecPipeline
    from zarr.registry import register_pipeline

    class FloorPipeline(BatchedCodecPipeline):
        """zarr's default pipeline, but a read returns at once (every chunk "present")."""

        async def read(self, batch_info: Any, out: Any, drop_axes: Any = ()) -> Any:
            return tuple(GetResult(status="present") for _ in batch_info)

    # zarr's registry knows a pipeline by its module and name.
    FloorPipeline.__module__ = "bench_peers"
    FloorPipeline.__qualname__ = "FloorPipeline"
    register_pipeline(FloorPipeline)


def ts_context(one_core: bool) -> Any:
    import tensorstore as ts

    if not one_core:
        return ts.Context()
    return ts.Context({"data_copy_concurrency": {"limit": 1}, "file_io_concurrency": {"limit": 1}})


class Limit:
    """The lower bound: a sharded zstd array decoded in a plain Python loop."""

    def __init__(self, path: Path) -> None:
        import numpy as np
        import zstandard

        meta = json.loads((path / "zarr.json").read_text())
        (sharding,) = meta["codecs"]
        conf = sharding["configuration"]
        names = [c["name"] for c in conf["codecs"]]
        index_names = [c["name"] for c in conf["index_codecs"]]
        if (
            sharding["name"] != "sharding_indexed"
            or names != ["bytes", "zstd"]
            or index_names != ["bytes", "crc32c"]
            or conf.get("index_location", "end") != "end"
            or conf["codecs"][0]["configuration"]["endian"] != "little"
            or conf["index_codecs"][0]["configuration"]["endian"] != "little"
            or meta["chunk_key_encoding"]["name"] != "default"
        ):
            raise NotImplementedError(f"limit reads sharding(bytes, zstd) alone, not {meta}")
        self.path = path
        self.sep = meta["chunk_key_encoding"].get("configuration", {}).get("separator", "/")
        self.shape = tuple(meta["shape"])
        self.shard = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
        self.inner = tuple(conf["chunk_shape"])
        self.dtype = np.dtype(meta["data_type"]).newbyteorder("<")
        self.fill = meta["fill_value"]
        self.per_shard = tuple(s // c for s, c in zip(self.shard, self.inner, strict=True))
        self.count = int(np.prod(self.per_shard))
        self.index_bytes = 16 * self.count + 4
        self.dctx = zstandard.ZstdDecompressor()

    def _shard_file(self, coords: tuple[int, ...]) -> Path:
        return self.path / self.sep.join(["c", *map(str, coords)])

    def _index(self, tail: bytes | memoryview) -> Any:
        import google_crc32c
        import numpy as np

        body = bytes(tail[:-4])
        if google_crc32c.value(body) != int.from_bytes(tail[-4:], "little"):
            raise ValueError("shard index checksum mismatch")
        return np.frombuffer(body, dtype="<u8").reshape(self.count, 2)

    def _inner(self, data: bytes | memoryview, offset: int, nbytes: int) -> Any:
        import numpy as np

        raw = self.dctx.decompress(data[offset : offset + nbytes])
        return np.frombuffer(raw, dtype=self.dtype).reshape(self.inner)

    def read_whole(self) -> Any:
        import numpy as np

        out = np.empty(self.shape, dtype=self.dtype)
        missing = 2**64 - 1
        for shard in np.ndindex(*(-(-s // c) for s, c in zip(self.shape, self.shard, strict=True))):
            base = [i * c for i, c in zip(shard, self.shard, strict=True)]
            file = self._shard_file(shard)
            data = file.read_bytes() if file.exists() else None
            index = self._index(memoryview(data)[-self.index_bytes :]) if data else None
            view = memoryview(data) if data else b""
            for i, inner in enumerate(np.ndindex(*self.per_shard)):
                start = [b + j * c for b, j, c in zip(base, inner, self.inner, strict=True)]
                if any(s >= n for s, n in zip(start, self.shape, strict=True)):
                    continue
                region = tuple(
                    slice(s, min(s + c, n))
                    for s, c, n in zip(start, self.inner, self.shape, strict=True)
                )
                if index is None or int(index[i, 0]) == missing:
                    out[region] = self.fill
                    continue
                chunk = self._inner(view, int(index[i, 0]), int(index[i, 1]))
                out[region] = chunk[tuple(slice(0, r.stop - r.start) for r in region)]
        return out

    def read_chunk(self, window: tuple[slice, ...]) -> Any:
        """One inner chunk (a window aligned to, and as large as, one)."""
        import numpy as np

        start = [w.start for w in window]
        shard = tuple(s // c for s, c in zip(start, self.shard, strict=True))
        inner = tuple((s % c) // i for s, c, i in zip(start, self.shard, self.inner, strict=True))
        i = int(np.ravel_multi_index(inner, self.per_shard))
        out = np.empty(self.inner, dtype=self.dtype)
        file = self._shard_file(shard)
        if not file.exists():
            out[...] = self.fill
            return out
        with open(file, "rb") as f:
            f.seek(-self.index_bytes, os.SEEK_END)
            index = self._index(f.read(self.index_bytes))
            offset, nbytes = int(index[i, 0]), int(index[i, 1])
            if offset == 2**64 - 1:
                out[...] = self.fill
                return out
            f.seek(offset)
            data = f.read(nbytes)
        out[...] = self._inner(data, 0, nbytes)
        return out


@dataclass
class Reader:
    open: Callable[[], Any]
    read: Callable[[Any, Any], Any]  # (handle, selection or Ellipsis) -> fresh array


def make_reader(reader: str, path: Path, one_core: bool) -> Reader:
    if reader == "tensorstore":
        import tensorstore as ts

        context = ts_context(one_core)
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}

        def ts_read(ds: Any, sel: Any) -> Any:
            return (ds if sel is Ellipsis else ds[sel]).read().result()

        return Reader(lambda: ts.open(spec, context=context, read=True).result(), ts_read)
    if reader == "limit":

        def limit_read(lim: Limit, sel: Any) -> Any:
            return lim.read_whole() if sel is Ellipsis else lim.read_chunk(sel)

        return Reader(lambda: Limit(path), limit_read)
    import zarr

    return Reader(lambda: zarr.open_array(path, mode="r"), lambda arr, sel: arr[sel])


def write_store(
    writer: str, layout: str, root: Path, target: Path, data: Any, sizes: Sizes, ctx: Any
) -> None:
    """Creates the array at `target` (as zarr-python created the reference store in `root`)
    and writes `data` whole."""
    if writer == "tensorstore":
        import tensorstore as ts

        reference = json.loads((store_path(root, layout) / "zarr.json").read_text())
        reference.pop("attributes", None)
        spec = {
            "driver": "zarr3",
            "kvstore": {"driver": "file", "path": str(target)},
            "metadata": reference,
            "create": True,
        }
        ds = ts.open(spec, context=ctx).result()
        ds.write(data).result()
        return
    arr = create_zarr_array(target, layout, sizes)
    arr[...] = data


# ----------------------------------------------------------------------------------------------
# The child process


def pin(cores: int) -> None:
    """This process (one thread so far: the ones started later inherit it) on the first
    `cores` CPUs, and the thread counts of the libraries it will import."""
    os.sched_setaffinity(0, set(ALL_CPUS[:cores]))
    for name, value in ONE_CORE_ENV.items():
        if cores == 1:
            os.environ[name] = value
        else:
            os.environ.pop(name, None)


def child(spec: dict[str, Any]) -> dict[str, Any]:
    pin(spec["cores"])
    import zarr

    sizes = sizes_from(spec["sizes"])
    root = Path(spec["dir"])
    layout, case, reader = spec["layout"], spec["case"], spec["reader"]
    one_core = spec["cores"] == 1
    result: dict[str, Any] = {"cpus": sorted(os.sched_getaffinity(0))}
    with zarr.config.set(zarr_config(reader, one_core)):
        if case in WRITE_CASES:
            result.update(child_write(spec, sizes, root, one_core))
        else:
            result.update(child_read(spec, sizes, store_path(root, layout), one_core))
    return result


def child_read(spec: dict[str, Any], sizes: Sizes, path: Path, one_core: bool) -> dict[str, Any]:
    r = make_reader(spec["reader"], path, one_core)
    case = spec["case"]
    # The pipelines' modules, which zarr would import at the first open: imports stay out of
    # the open's time for every reader.
    if spec["reader"] == "zarrs":
        import zarrs  # noqa: F401
    elif spec["reader"] == "ours":
        import zarrs_extension_codecs  # noqa: F401
    window = band_window(sizes)
    if spec["reader"] != "limit":
        # See `warm_up_path` (the limit reader is a plain loop with nothing to warm up).
        warm_path = warm_up_path(path.parent, spec["layout"])
        ndim = len(json.loads((warm_path / "zarr.json").read_text())["shape"])
        warm = make_reader(spec["reader"], warm_path, one_core)
        warm.read(warm.open(), tuple(slice(0, 8) for _ in range(ndim)))
    start = time.perf_counter()
    handle = r.open()
    if case == "open_window":
        out = r.read(handle, window)
        elapsed = time.perf_counter() - start
        return {"open": elapsed, "times": [elapsed], "checksum": checksum(out)}
    opened = time.perf_counter() - start

    if case == "read_whole":

        def run() -> list[Any]:
            return [r.read(handle, Ellipsis)]
    else:
        windows = inner_windows(sizes)

        def run() -> list[Any]:
            return [r.read(handle, w) for w in windows]

    out = run()
    digest = checksum(*out)
    times = []
    for _ in range(spec["repeats"]):
        out = []  # the previous output freed before the next read
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    return {"open": opened, "times": times, "checksum": digest}


def child_write(spec: dict[str, Any], sizes: Sizes, root: Path, one_core: bool) -> dict[str, Any]:
    import numpy as np
    import zarr

    layout, writer = spec["layout"], spec["reader"]
    data = np.load(root / f"{layout}.npy")
    ctx = ts_context(one_core) if writer == "tensorstore" else None
    out_dir = root / "writes"
    out_dir.mkdir(exist_ok=True)
    times = []
    target = out_dir / f"{layout}-{writer}-warm-up.zarr"
    for i in range(spec["repeats"] + 1):
        shutil.rmtree(target, ignore_errors=True)
        target = out_dir / f"{layout}-{writer}-{i}.zarr"
        shutil.rmtree(target, ignore_errors=True)
        if spec["case"] == "write_windows":
            # The array written whole first (not timed), then the tiles one after the other.
            write_store(writer, layout, root, target, data, sizes, ctx)
            arr = zarr.open_array(target, mode="r+")
            tile = band_tile(data, sizes)
            os.sync()
            start = time.perf_counter()
            for w in band_tiles(sizes):
                arr[w] = tile
        else:
            os.sync()
            start = time.perf_counter()
            write_store(writer, layout, root, target, data, sizes, ctx)
        if i:  # the first is the warm-up
            times.append(time.perf_counter() - start)
    with zarr.config.set({**ZARR_CLASSES, "codec_pipeline.path": BATCHED}):
        back = zarr.open_array(target, mode="r")[...]
    shutil.rmtree(target, ignore_errors=True)
    return {"times": times, "checksum": checksum(back)}


def child_info() -> dict[str, Any]:
    from importlib.metadata import version

    info: dict[str, Any] = {"python": platform.python_version()}
    for name in ("zarr", "zarrs", "tensorstore", "numpy", "zstandard", "zarrs-extension-codecs"):
        try:
            info[name] = version(name)
        except Exception as e:
            info[name] = f"missing ({e})"
    try:
        import zarrs_extension_codecs

        info["debug_build"] = bool(zarrs_extension_codecs._native._debug_build)
    except Exception as e:
        info["debug_build"] = f"cannot import zarrs_extension_codecs: {e}"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    return info


# ----------------------------------------------------------------------------------------------
# The parent


@dataclass
class Outcome:
    times: list[float]
    opens: list[float]
    error: str | None = None

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times and not self.error else None


def spawn(args: list[str], what: str) -> dict[str, Any]:
    """Runs this script as a child and returns its result, or raises RuntimeError with the
    last line of its error output."""
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT):
            return json.loads(line[len(RESULT) :])
    # The exception's line, and those of the exceptions it was raised from or during.
    skip = ("Traceback", "The above exception", "During handling", "/", " ", "\t", "^", "~")
    chain = [line for line in proc.stderr.splitlines() if line and not line.startswith(skip)]
    if not chain:
        raise RuntimeError(f"{what}: exit {proc.returncode}, no output")
    raise RuntimeError(" ".join([chain[-1], *(f"(from {c})" for c in reversed(chain[:-1]))]))


def measure(spec: dict[str, Any], expected: str, fresh_processes: int) -> Outcome:
    outcome = Outcome([], [])
    for _ in range(fresh_processes):
        try:
            got = spawn(["--child", json.dumps(spec)], spec["reader"])
        except RuntimeError as e:
            return Outcome([], [], str(e))
        want = set(ALL_CPUS[: spec["cores"]])
        if set(got["cpus"]) != want:
            return Outcome([], [], f"child ran on CPUs {got['cpus']}, not {sorted(want)}")
        if got["checksum"] != expected and spec["reader"] not in UNCHECKED:
            return Outcome([], [], f"MISMATCH: checksum {got['checksum']}, expected {expected}")
        outcome.times += got["times"]
        if "open" in got:
            outcome.opens.append(got["open"])
    return outcome


def ensure_stores(root: Path, sizes: Sizes) -> dict[str, Any]:
    stamp = root / "expected.json"
    if stamp.exists():
        expected = json.loads(stamp.read_text())
        if expected.get("data") == DATA_VERSION and expected.get("sizes") == json.loads(
            json.dumps(asdict(sizes))
        ):
            print(f"reusing the stores in {root}", file=sys.stderr)
            for layout in LAYOUTS:
                write_warm_up(root, layout)
            return expected
    print(f"writing the stores into {root} (zarr-python)", file=sys.stderr)
    root.mkdir(parents=True, exist_ok=True)
    expected = spawn(["--child-make", str(root), "--sizes", json.dumps(asdict(sizes))], "make")
    stamp.write_text(json.dumps(expected))
    for layout in LAYOUTS:
        # Made again from the new stores (their chunk shapes may differ).
        shutil.rmtree(warm_up_path(root, layout), ignore_errors=True)
        write_warm_up(root, layout)
    return expected


Results = dict[tuple[str, str], dict[str, dict[int, Outcome]]]


def run(args: argparse.Namespace, root: Path, sizes: Sizes) -> tuple[Results, dict[str, Any]]:
    expected = ensure_stores(root, sizes)
    all_cores = len(ALL_CPUS)
    results: Results = {}
    for layout in LAYOUTS:
        if args.layouts and layout not in args.layouts:
            continue
        for case in CASES[layout]:
            if args.cases and case not in args.cases:
                continue
            names = args.only or DEFAULT_READERS[layout]
            if case in WRITE_CASES:
                names = [n for n in names if n in WRITERS]
            table = results.setdefault((layout, case), {})
            core_counts = [1] if all_cores == 1 else [1, all_cores]
            for round_ in range(args.rounds):
                for cores in core_counts:
                    for reader in names:
                        if reader == "limit" and (layout != "zarr_benchmarks" or cores != 1):
                            continue
                        spec = {
                            "layout": layout,
                            "case": case,
                            "reader": reader,
                            "cores": cores,
                            "dir": str(root),
                            "sizes": asdict(sizes),
                            "repeats": 1 if case == "open_window" else args.repeats,
                        }
                        fresh = args.repeats if case == "open_window" else 1
                        outcome = measure(spec, expected[layout][case], fresh)
                        kept = table.setdefault(reader, {}).setdefault(cores, outcome)
                        if kept is not outcome and kept.error is None:
                            kept.error = outcome.error
                            kept.times += outcome.times
                            kept.opens += outcome.opens
                        shown = (
                            f"{outcome.median * 1e3:.1f} ms"
                            if outcome.median is not None
                            else outcome.error
                        )
                        print(
                            f"{layout} {case} {reader} {cores} core(s), round {round_ + 1}: "
                            f"{shown}",
                            file=sys.stderr,
                        )
    return results, expected


CASE_TITLES = {
    "read_whole": "whole read (arr[...])",
    "read_windows": "{windows} windows of one inner chunk ({inner}), one after the other",
    "open_window": "open + one {w} x {w} window (one fresh process per measurement)",
    "write_whole": "whole write from memory into a new directory (creation included)",
    "write_windows": "{windows} inner chunks written into the stored array, one after the other",
}


def ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1e3:.1f}"


def report(results: Results, info: dict[str, Any], expected: dict[str, Any], args: Any) -> str:
    sizes: Sizes = args.sizes
    all_cores = len(ALL_CPUS)
    lines = [
        f"zarrs_extension_codecs {info.get('zarrs-extension-codecs')} "
        f"({'debug' if info.get('debug_build') is True else 'release'} build), "
        f"zarr {info.get('zarr')}, zarrs-python {info.get('zarrs')}, "
        f"tensorstore {info.get('tensorstore')}, numpy {info.get('numpy')}, "
        f"zstandard {info.get('zstandard')}, Python {info.get('python')}; "
        f"{all_cores} CPUs ({info.get('cpu', '?')}), load average at start "
        f"{args.load:.2f}, at the end {os.getloadavg()[0]:.2f}. Medians of {args.repeats} "
        f"runs x {args.rounds} round(s), each measurement in a fresh process; "
        "a shared machine: indicative only.",
        "",
    ]
    if "zarr_benchmarks" in expected and "ratio" in expected["zarr_benchmarks"]:
        lines += [
            f"zarr_benchmarks: uint16 {sizes.shape}, shards {sizes.shard}, inner chunks "
            f"{sizes.inner}, bytes + zstd level 0 (compression ratio "
            f"{expected['zarr_benchmarks']['ratio']:.2f}). eopf_band: float64 {sizes.band}, "
            f"shards {sizes.band_shard}, inner chunks {sizes.band_inner}, scale_offset + "
            "cast_value(uint16) + blosc zstd.",
            "",
        ]
    errors: list[str] = []
    for (layout, case), table in results.items():
        title = CASE_TITLES[case].format(
            windows=sizes.windows, inner=sizes.inner, w=sizes.band_window
        )
        lines += [
            f"### {layout}: {title}",
            "",
            "| reader | one core (ms) | all cores (ms) | one core: reader / ours "
            "| all cores: reader / ours |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        ours = table.get("ours", {})

        def ratio(outcome: Outcome | None, cores: int, ours: dict[int, Outcome] = ours) -> str:
            mine = ours.get(cores)
            if outcome is None or outcome.median is None or mine is None or not mine.median:
                return "—"
            return f"{outcome.median / mine.median:.2f}x"

        for reader, by_cores in table.items():
            cells = []
            for cores in (1, all_cores):
                outcome = by_cores.get(cores)
                if outcome is not None and outcome.error:
                    errors.append(f"{layout}, {case}, {reader}, {cores} core(s): {outcome.error}")
                    cells.append(f"fails [{len(errors)}]")
                else:
                    cells.append(ms(outcome.median if outcome else None))
            label = "limit (Python loop)" if reader == "limit" else reader
            lines.append(
                f"| {label} | {cells[0]} | {cells[1]} | {ratio(by_cores.get(1), 1)} "
                f"| {ratio(by_cores.get(all_cores), all_cores)} |"
            )
        best = []
        for cores in (1, all_cores):
            peers = [
                (by[cores].median, name)
                for name, by in table.items()
                if name in PEERS and cores in by and by[cores].median is not None
            ]
            mine = ours.get(cores)
            if peers and mine is not None and mine.median:
                t, name = min(peers)
                best.append(f"{t / mine.median:.2f}x ({name})")
            else:
                best.append("—")
        lines += [f"| **fastest peer / ours** | | | {best[0]} | {best[1]} |", ""]
    for layout in LAYOUTS:
        rows = []
        for (lay, case), table in results.items():
            if lay != layout or case not in ("read_whole", "read_windows"):
                continue
            for reader, by_cores in table.items():
                opens = {c: o.opens for c, o in by_cores.items() if o.opens and not o.error}
                if opens:
                    rows.append((reader, opens))
        if not rows:
            continue
        merged: dict[str, dict[int, list[float]]] = {}
        for reader, opens in rows:
            for c, values in opens.items():
                merged.setdefault(reader, {}).setdefault(c, []).extend(values)
        lines += [
            f"### {layout}: open (in a fresh process, after a warm-up open of another array)",
            "",
            "| reader | one core (ms) | all cores (ms) |",
            "| --- | ---: | ---: |",
        ]
        for reader, by_cores in merged.items():
            cells = [
                ms(statistics.median(by_cores[c]) if c in by_cores else None)
                for c in (1, all_cores)
            ]
            lines.append(f"| {reader} | {cells[0]} | {cells[1]} |")
        lines.append("")
    if errors:
        lines += ["Failures:", ""]
        lines += [f"{i}. {e}" for i, e in enumerate(errors, 1)]
        lines.append("")
    return "\n".join(lines)


def names(value: str, allowed: list[str]) -> list[str]:
    got = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in got if v not in allowed]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {allowed}")
    return got


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        result = child(json.loads(sys.argv[2]))
        print(RESULT + json.dumps(result), flush=True)
        return
    if len(sys.argv) == 5 and sys.argv[1] == "--child-make":
        pin(len(ALL_CPUS))
        sizes = sizes_from(json.loads(sys.argv[4]))
        print(RESULT + json.dumps(make_stores(Path(sys.argv[2]), sizes)), flush=True)
        return
    if sys.argv[1:] == ["--child-info"]:
        print(RESULT + json.dumps(child_info()), flush=True)
        return

    all_cases = sorted({c for cases in CASES.values() for c in cases})
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes, one repeat")
    parser.add_argument("--repeats", type=int, help="timed runs per measurement (default 5)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure every reader this many times in turn, pooling the times (default 1)",
    )
    parser.add_argument("--markdown", type=Path, help="also write the report here")
    parser.add_argument("--dir", type=Path, help="where the stores are written (and reused)")
    parser.add_argument(
        "--only", type=lambda v: names(v, READERS), help=f"readers: {','.join(READERS)}"
    )
    parser.add_argument(
        "--cases", type=lambda v: names(v, all_cases), help=f"cases: {','.join(all_cases)}"
    )
    parser.add_argument(
        "--layouts", type=lambda v: names(v, LAYOUTS), help=f"layouts: {','.join(LAYOUTS)}"
    )
    args = parser.parse_args()
    args.sizes = QUICK if args.quick else FULL
    if args.repeats is None:
        args.repeats = 1 if args.quick else 5
    args.load = os.getloadavg()[0]
    info = spawn(["--child-info"], "info")
    if info.get("debug_build") is not False and not args.quick:
        sys.exit(
            f"zarrs_extension_codecs: {info.get('debug_build')!r} debug build: install a "
            "release build to time it (scripts/bench/setup_peers.sh)"
        )
    with contextlib.ExitStack() as stack:
        if args.dir is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench_peers-")))
        else:
            root = args.dir.resolve()
        results, expected = run(args, root, args.sizes)
    text = report(results, info, expected, args)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if any(
        o.error and o.error.startswith("MISMATCH")
        for t in results.values()
        for by in t.values()
        for o in by.values()
    ):
        sys.exit("some readers or writers disagree with the reference (see Failures)")


if __name__ == "__main__":
    main()
