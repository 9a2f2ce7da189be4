"""Helpers shared by make_fixtures*.py and check_zarrs_written.py.

Raw arrays on disk ("*.expected.bin", "*.input.bin") are the little-endian bytes of
the array in C order, with the data type named by its Zarr v3 name.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import zarr
from zarr.codecs import ShardingCodec
from zarr.storage import LocalStore

# Zarr v3 data type name -> numpy dtype (little-endian). Only the names zarr-python
# 3.4.2 registers for numbers; the sub-byte / float8 / bfloat16 names are not among them.
ZARR_TO_NUMPY: dict[str, str] = {
    "bool": "|b1",
    "int8": "|i1",
    "int16": "<i2",
    "int32": "<i4",
    "int64": "<i8",
    "uint8": "|u1",
    "uint16": "<u2",
    "uint32": "<u4",
    "uint64": "<u8",
    "float16": "<f2",
    "float32": "<f4",
    "float64": "<f8",
}


def numpy_dtype(zarr_name: str) -> np.dtype:
    try:
        return np.dtype(ZARR_TO_NUMPY[zarr_name])
    except KeyError:
        raise ValueError(f"unsupported data type for raw arrays: {zarr_name!r}") from None


def to_le_bytes(arr: np.ndarray) -> bytes:
    """Raw little-endian C-order bytes of `arr`."""
    le = arr.dtype.newbyteorder("<") if arr.dtype.itemsize > 1 else arr.dtype
    return np.ascontiguousarray(arr, dtype=le).tobytes(order="C")


def read_raw(path: Path, shape: Iterable[int], zarr_name: str) -> np.ndarray:
    shape = tuple(int(s) for s in shape)
    dtype = numpy_dtype(zarr_name)
    data = path.read_bytes()
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) != expected:
        raise ValueError(
            f"{path}: {len(data)} bytes, expected {expected} for shape {list(shape)} {zarr_name}"
        )
    # Native-endian copy, so numpy arithmetic and zarr-python see an ordinary array.
    return np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))


def store_keys(root: Path) -> dict[str, Path]:
    """Every file under a store except metadata, keyed by its '/'-separated relative path."""
    keys = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = p.relative_to(root).as_posix()
            if rel == "zarr.json" or rel.endswith("/zarr.json"):
                continue
            keys[rel] = p
    return keys


def _bits(arr: np.ndarray) -> np.ndarray:
    """View an array's elements as unsigned integers of the same width (bit patterns)."""
    arr = np.ascontiguousarray(arr)
    if arr.dtype.kind == "b":
        return arr.view(np.uint8)
    return arr.view(f"u{arr.dtype.itemsize}")


def first_array_difference(a: np.ndarray, b: np.ndarray) -> str | None:
    """None if `a` and `b` are identical (bit for bit, except that any NaN equals any NaN).

    Otherwise a one-line description of the first difference. -0.0 and 0.0 differ.
    """
    if a.dtype != b.dtype:
        return f"dtype {a.dtype} != {b.dtype}"
    if a.shape != b.shape:
        return f"shape {list(a.shape)} != {list(b.shape)}"
    diff = _bits(a) != _bits(b)
    if a.dtype.kind == "f":
        diff &= ~(np.isnan(a) & np.isnan(b))
    if not diff.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(diff)[0])
    count = int(diff.sum())
    return (
        f"{count} element(s) differ; first at index {list(idx)}: "
        f"{a[idx]!r} (bits {int(_bits(a)[idx]):#x}) != {b[idx]!r} (bits {int(_bits(b)[idx]):#x})"
    )


def first_bytes_difference(a: bytes, b: bytes) -> str | None:
    if a == b:
        return None
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            lo = max(0, i - 4)
            return (
                f"byte offset {i}: {a[i]:#04x} != {b[i]:#04x} "
                f"(lengths {len(a)} vs {len(b)}; bytes {lo}..{i + 5}: "
                f"{a[lo : i + 5].hex(' ')} vs {b[lo : i + 5].hex(' ')})"
            )
    return f"lengths differ: {len(a)} vs {len(b)} (common prefix of {n} bytes identical)"


def sharding_codecs(codecs: Iterable[Any]) -> list[ShardingCodec]:
    """All sharding codecs in a codec chain, nested ones included."""
    found = []
    for c in codecs:
        if isinstance(c, ShardingCodec):
            found.append(c)
            found.extend(sharding_codecs(c.codecs))
    return found


def open_array(path: Path, mode: str = "r") -> zarr.Array:
    return zarr.open_array(
        store=LocalStore(path, read_only=(mode == "r")), mode=mode, zarr_format=3
    )


def write_whole_from_metadata(
    zarr_json: Path, dest: Path, data: np.ndarray, subchunk_write_order: str | None = None
) -> zarr.Array:
    """Create a store at `dest` holding a verbatim copy of `zarr_json`, and write `data` whole
    through zarr-python. `subchunk_write_order` (a zarr-python write-time setting, not part of
    the metadata) is applied to every sharding codec when given."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copyfile(zarr_json, dest / "zarr.json")
    arr = open_array(dest, mode="r+")
    if subchunk_write_order is not None:
        for codec in sharding_codecs(arr.metadata.codecs):
            # Frozen dataclass; the pipeline holds these same instances.
            object.__setattr__(codec, "subchunk_write_order", subchunk_write_order)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arr[...] = data
    return arr


def create_and_write_regions(
    store_path: Path,
    *,
    shape: tuple[int, ...],
    chunks: tuple[int, ...],
    dtype: str,
    fill_value: Any,
    codec_kwargs: dict[str, Any],
    regions: Iterable[tuple[slice, ...]],
    source: np.ndarray,
) -> None:
    """Create a Zarr v3 array in a LocalStore at `store_path` and write `source[r]` for each
    region `r`, one assignment each, so partly written chunks are stored as zarr-python
    stores them. `codec_kwargs`: filters, serializer, compressors, shards for create_array."""
    arr = zarr.create_array(
        store=LocalStore(store_path),
        shape=shape,
        chunks=chunks,
        dtype=dtype,
        fill_value=fill_value,
        zarr_format=3,
        **codec_kwargs,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in regions:
            arr[r] = source[r]


def check_subset(
    path: Path, expected: np.ndarray, start: Iterable[int], shape: Iterable[int], what: Any
) -> None:
    """zarr-python reading the subset of the store at `path` gives the same as slicing its
    whole read `expected`; `what` names the subset in the assertion."""
    sel = tuple(slice(st, st + sz) for st, sz in zip(start, shape))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        part = np.asarray(open_array(path)[sel])
    d = first_array_difference(part, expected[sel])
    assert d is None, (what, d)


def fresh_output_dir(out: Path) -> None:
    """Warn unless zarr-python is 3.4.2 (the fixtures' version), then empty `out`."""
    if zarr.__version__ != "3.4.2":
        print(
            f"warning: zarr {zarr.__version__} (fixtures were designed with 3.4.2)", file=sys.stderr
        )
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)


def tree_bytes(root: Path) -> int:
    """Total size of the files below `root`."""
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def read_whole(path: Path) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(open_array(path, mode="r")[...])


@dataclass
class StoreDiff:
    missing: list[str]  # keys in the reference, not in the store under test
    extra: list[str]  # keys in the store under test, not in the reference
    differing: list[tuple[str, str]]  # (key, description)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.differing)

    def describe(self, limit: int = 3) -> str:
        parts = []
        if self.missing:
            parts.append(
                f"missing keys {self.missing[:limit]}{' ...' if len(self.missing) > limit else ''}"
            )
        if self.extra:
            parts.append(
                f"extra keys {self.extra[:limit]}{' ...' if len(self.extra) > limit else ''}"
            )
        if self.differing:
            key, desc = self.differing[0]
            more = (
                f" (+{len(self.differing) - 1} more differing keys)"
                if len(self.differing) > 1
                else ""
            )
            parts.append(f"first differing key {key!r}: {desc}{more}")
        return "; ".join(parts)


def compare_stores(under_test: Path, reference: Path) -> StoreDiff:
    a = store_keys(under_test)
    b = store_keys(reference)
    missing = sorted(set(b) - set(a))
    extra = sorted(set(a) - set(b))
    differing = []
    for key in sorted(set(a) & set(b)):
        d = first_bytes_difference(a[key].read_bytes(), b[key].read_bytes())
        if d is not None:
            differing.append((key, d))
    return StoreDiff(missing, extra, differing)


def make_temp_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


def load_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)
