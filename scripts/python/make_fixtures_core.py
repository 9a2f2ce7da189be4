#!/usr/bin/env python3
"""Write the fixtures for the core codecs (`bytes`, `transpose`) from two other writers:
tensorstore (driver "zarr3") and zarr-python.

    PYENV_VERSION=3.12.1 python3 -m venv /tmp/corevenv      # any CPython 3.12
    /tmp/corevenv/bin/pip install -r scripts/python/requirements-core.txt
    /tmp/corevenv/bin/python scripts/python/make_fixtures_core.py

Deletes and re-creates fixtures/tensorstore/ and fixtures/zarr-python-core/ (README.md
included). tensorstore is deliberately not in requirements.txt: CI only reads these files.

For each fixture NAME:

    NAME.zarr/           the store exactly as the writer left it (file kvstore / LocalStore,
                         default "/" chunk keys). Exception: fixtures marked "hand-edited" in
                         their description, where one codec field of zarr.json was rewritten.
    NAME.expected.bin    what the writer decodes when it reads the whole array back,
                         C order; see EXPECTED_LAYOUT below for each data type
    NAME.expected.json   shape, data_type, fill_value (as in zarr.json), codecs (as in
                         zarr.json), description, writer + version, subsets, stored keys

The data are deterministic: every fixture has its own seeded numpy Generator.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import tensorstore as ts
import zarr
from zarr.codecs import BytesCodec, TransposeCodec
from zarr.storage import LocalStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zarr_common as zc

REPO_ROOT = Path(__file__).resolve().parents[2]
OUT_TS = REPO_ROOT / "fixtures" / "tensorstore"
OUT_ZP = REPO_ROOT / "fixtures" / "zarr-python-core"

# The layout of NAME.expected.bin, by data type, as zarrs holds decoded elements in memory
# (one element after the other, C order, little-endian).
SUB_BYTE_INTS = {"int2": 2, "int4": 4}
SUB_BYTE_FLOATS = {"float4_e2m1fn": 4}
EIGHT_BIT_FLOATS = {
    "float8_e3m4",
    "float8_e4m3fnuz",
    "float8_e4m3b11fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
}
EXPECTED_LAYOUT = {
    "int2/int4": "one byte per element: the value as an int8 (sign-extended: -1 is 0xff). "
    "ml_dtypes itself keeps only the low bits meaningful (a decoded chunk holding 0x0f "
    "reads as -1), so the generator normalises with astype(int8).",
    "float4_e2m1fn": "one byte per element: the 4-bit pattern in the low bits, upper bits 0",
    "float8_*": "one byte per element: the 8-bit pattern",
    "bfloat16": "2 bytes per element, little-endian bit pattern",
    "bool": "one byte per element, 0x00 or 0x01",
    "complex64/complex128": "real then imaginary part, each little-endian float32/float64",
    "string": "per element: its UTF-8 length as a little-endian u32, then the UTF-8 bytes",
    "other": "the numpy little-endian bytes of the element",
}


def writer_versions() -> dict[str, str]:
    return {
        "tensorstore": version("tensorstore"),
        "zarr": zarr.__version__,
        "numpy": np.__version__,
        "ml_dtypes": version("ml_dtypes"),
    }


# --------------------------------------------------------------------------------------
# Fixture description
# --------------------------------------------------------------------------------------


@dataclass
class Spec:
    name: str
    description: str
    data_type: str  # Zarr v3 name
    shape: tuple[int, ...]
    chunks: tuple[int, ...]  # regular chunk grid (the shard shape when sharded)
    fill_value: Any  # as handed to the writer
    # tensorstore: the "codecs" JSON; zarr-python: kwargs for zarr.create_array.
    codecs: Any
    make_data: Callable[[np.random.Generator, Spec], np.ndarray]
    skip_chunks: list[tuple[int, ...]] = field(default_factory=list)  # never written
    fill_chunks: list[tuple[int, ...]] = field(default_factory=list)  # written, all fill
    half_chunk: tuple[int, ...] | None = None  # only its first half (axis 0) is written
    inner_chunks: tuple[int, ...] | None = None  # sharding inner chunk shape
    notes: list[str] = field(default_factory=list)
    raw_chunk_keys: list[str] = field(default_factory=list)  # record these chunks' bytes
    # Hand-edited variant: (new name, description, transform of the zarr.json text).
    edited_variants: list[tuple[str, str, Callable[[str], str]]] = field(default_factory=list)

    @property
    def seed(self) -> int:
        return zlib.crc32(self.name.encode())

    @property
    def grid(self) -> tuple[int, ...]:
        return tuple(math.ceil(n / c) for n, c in zip(self.shape, self.chunks))


def chunk_region(idx: tuple[int, ...], chunks, shape) -> tuple[slice, ...]:
    return tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(idx, chunks, shape))


def written_regions(s: Spec) -> list[tuple[slice, ...]]:
    """One region per written chunk; the half chunk gets the first half of axis 0."""
    regions = []
    for idx in np.ndindex(*s.grid):
        if idx in s.skip_chunks:
            continue
        r = chunk_region(idx, s.chunks, s.shape)
        if idx == s.half_chunk:
            a, b = r[0].start, r[0].stop
            r = (slice(a, a + max(1, (b - a) // 2)),) + r[1:]
        regions.append(r)
    return regions


def region_json(region: tuple[slice, ...]) -> dict[str, list[int]]:
    return {"start": [r.start for r in region], "shape": [r.stop - r.start for r in region]}


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------


def numpy_type(data_type: str) -> np.dtype:
    if data_type == "string":
        return np.dtype(object)
    return np.dtype(getattr(ml_dtypes, data_type, None) or data_type)


def fill_scalar(s: Spec) -> Any:
    """The fill value as a Python scalar (the JSON form in `s.fill_value` goes to tensorstore)."""
    fill = s.fill_value
    if s.data_type == "string":
        return fill

    def num(x: Any) -> float:
        return (
            {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}[x]
            if isinstance(x, str)
            else x
        )

    if isinstance(fill, list):  # complex as [re, im]
        return complex(float(num(fill[0])), float(num(fill[1])))
    return num(fill)


def fill_array(s: Spec) -> np.ndarray:
    dtype = object if s.data_type == "string" else numpy_type(s.data_type)
    return np.full(s.shape, fill_scalar(s), dtype=dtype)


def place(arr: np.ndarray, s: Spec, specials: list[Any]) -> np.ndarray:
    """Put `specials` at the start of the first chunk (which is always written)."""
    region = chunk_region((0,) * len(s.shape), s.chunks, s.shape)
    block = arr[region].copy()
    assert block.size >= len(specials), (s.name, block.size, len(specials))
    flat = block.reshape(-1)
    for i, v in enumerate(specials):
        flat[i] = v
    arr[region] = flat.reshape(block.shape)
    return arr


def data_int(rng: np.random.Generator, s: Spec) -> np.ndarray:
    dt = numpy_type(s.data_type)
    info = np.iinfo(dt)
    arr = rng.integers(info.min, info.max, size=s.shape, endpoint=True, dtype=dt)
    return place(
        arr, s, [info.min, info.max, 0, -1 if info.min < 0 else 1, 1, 0x0102 % (int(info.max) + 1)]
    )


def data_float(rng: np.random.Generator, s: Spec) -> np.ndarray:
    dt = numpy_type(s.data_type)
    fi = np.finfo(dt)
    arr = (rng.standard_normal(s.shape) * 1000).astype(dt)
    return place(
        arr,
        s,
        [
            np.nan,
            np.inf,
            -np.inf,
            -0.0,
            0.0,
            fi.max,
            -fi.max,
            fi.tiny,
            fi.smallest_subnormal,
            -fi.smallest_subnormal,
            1.0,
            -2.5,
        ],
    )


def data_complex(rng: np.random.Generator, s: Spec) -> np.ndarray:
    dt = numpy_type(s.data_type)
    arr = (rng.standard_normal(s.shape) * 100 + 1j * rng.standard_normal(s.shape) * 100).astype(dt)
    return place(
        arr,
        s,
        [
            complex(1.0, -2.0),
            complex(np.nan, 0.0),
            complex(0.0, np.inf),
            complex(-0.0, -np.inf),
            complex(1e30, -1e-30),
        ],
    )


def data_bool(rng: np.random.Generator, s: Spec) -> np.ndarray:
    return rng.integers(0, 2, size=s.shape).astype(bool)


def data_for(data_type: str) -> Callable[[np.random.Generator, Spec], np.ndarray]:
    dt = numpy_type(data_type)
    if data_type == "bool":
        return data_bool
    if dt.kind == "c":
        return data_complex
    if dt.kind == "f":
        return data_float
    return data_int


def data_bit_patterns(bits: int, upper: str = "zero"):
    """Every bit pattern of a `bits`-wide type, shuffled and repeated. `upper`: what the
    bits above `bits` hold in memory when handed to the writer: "zero", or "random"."""

    def make(rng: np.random.Generator, s: Spec) -> np.ndarray:
        n = int(np.prod(s.shape))
        reps = math.ceil(n / (1 << bits)) + 1
        patterns = np.concatenate([rng.permutation(1 << bits) for _ in range(reps)])[:n]
        raw = patterns.astype(np.uint8)
        if upper == "random":
            raw |= (rng.integers(0, 256, size=n).astype(np.uint8) >> bits) << bits
        # The first chunk holds every pattern in order, so each one is certainly written.
        # Placed as raw bytes: assigning ml_dtypes scalars could normalise the upper bits.
        pats = np.arange(1 << bits, dtype=np.uint8)
        if upper == "random":
            pats |= np.uint8(0xA0 if bits == 4 else 0xA4)
        raw = place(raw.reshape(s.shape), s, [int(p) for p in pats])
        return raw.view(numpy_type(s.data_type))

    return make


def data_bfloat16(rng: np.random.Generator, s: Spec) -> np.ndarray:
    arr = (rng.standard_normal(s.shape) * 1000).astype(ml_dtypes.bfloat16)
    specials = np.array(
        [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -2.5, 3.0e38, 1e-40, -1e-40], dtype=np.float32
    ).astype(ml_dtypes.bfloat16)
    return place(arr, s, list(specials))


WORDS = ["", "a", "zarr", "Grüße", "日本語", "🙂", "tab\there", 'quote"', "x" * 40, "naïve", "ok"]


def data_string(rng: np.random.Generator, s: Spec) -> np.ndarray:
    n = int(np.prod(s.shape))
    out = np.empty(n, dtype=object)
    for i in range(n):
        out[i] = f"{WORDS[int(rng.integers(len(WORDS)))]}{i}" if i % 5 else WORDS[i % len(WORDS)]
    return out.reshape(s.shape)


# --------------------------------------------------------------------------------------
# Expected bytes
# --------------------------------------------------------------------------------------


def expected_bytes(arr: np.ndarray, data_type: str) -> bytes:
    if data_type == "string":
        out = bytearray()
        for v in arr.reshape(-1):
            b = str(v).encode("utf-8")
            out += len(b).to_bytes(4, "little") + b
        return bytes(out)
    arr = np.ascontiguousarray(arr)
    if data_type in SUB_BYTE_INTS:
        return arr.astype(np.int8).tobytes()
    if data_type in SUB_BYTE_FLOATS:
        return (arr.view(np.uint8) & np.uint8((1 << SUB_BYTE_FLOATS[data_type]) - 1)).tobytes()
    if data_type in EIGHT_BIT_FLOATS:
        return arr.view(np.uint8).tobytes()
    if data_type == "bfloat16":
        return arr.view(np.uint16).astype("<u2").tobytes()
    if data_type == "bool":
        return arr.astype(np.uint8).tobytes()
    return np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()


def same_values(a: np.ndarray, b: np.ndarray, data_type: str) -> bool:
    """Bit-identical decoded values (sub-byte types compared by value)."""
    if a.shape != b.shape:
        return False
    if data_type == "string":
        return bool(np.all(a == b))
    return expected_bytes(a, data_type) == expected_bytes(b, data_type)


# --------------------------------------------------------------------------------------
# Subsets
# --------------------------------------------------------------------------------------


def auto_subsets(s: Spec) -> list[dict[str, Any]]:
    shape, chunks = s.shape, s.chunks
    unit = "shard" if s.inner_chunks is not None else "chunk"
    subs: list[dict[str, Any]] = []
    start = [max(0, c - 2) if n > c else 0 for n, c in zip(shape, chunks)]
    subs.append(
        {
            "label": f"crosses the first {unit} boundary in every dimension",
            "start": start,
            "shape": [min(4, n - st) for n, st in zip(shape, start)],
        }
    )
    inner = s.inner_chunks or chunks
    if all(c > 2 for c in inner):
        subs.append(
            {
                "label": "strictly inside the first (inner) chunk: no chunk edge touched",
                "start": [1] * len(shape),
                "shape": [c - 2 for c in inner],
            }
        )
    edge = [((n - 1) // c) * c for n, c in zip(shape, chunks)]
    partial = any(n % c for n, c in zip(shape, chunks))
    subs.append(
        {
            "label": f"the last (edge) {unit}" + (" - partial" if partial else ""),
            "start": edge,
            "shape": [n - e for n, e in zip(shape, edge)],
        }
    )
    for idx in s.skip_chunks[:1] + s.fill_chunks[:1]:
        what = "never-written" if idx in s.skip_chunks else "written-as-fill (not stored)"
        r = chunk_region(idx, chunks, shape)
        subs.append({"label": f"the whole {what} {unit} {list(idx)}", **region_json(r)})
        if any(x.start > 0 for x in r):
            st = [max(0, x.start - 2) for x in r]
            sz = [min(n - a, x.start - a + 3) for n, a, x in zip(shape, st, r)]
            subs.append(
                {
                    "label": f"from neighbouring {unit}s into {what} {unit} {list(idx)}",
                    "start": st,
                    "shape": sz,
                }
            )
    if s.half_chunk is not None:
        subs.append(
            {
                "label": f"the half-written {unit} {list(s.half_chunk)}",
                **region_json(chunk_region(s.half_chunk, chunks, shape)),
            }
        )
    subs.append(
        {"label": "one element", "start": [n // 2 for n in shape], "shape": [1] * len(shape)}
    )
    subs.append(
        {
            "label": "most of the array",
            "start": [1 if n > 2 else 0 for n in shape],
            "shape": [n - 2 if n > 2 else n for n in shape],
        }
    )
    for sub in subs:
        for st, sz, n in zip(sub["start"], sub["shape"], shape):
            assert 0 <= st and sz >= 1 and st + sz <= n, (s.name, sub)
    return subs


# --------------------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------------------


def ts_kvstore(path: Path) -> dict[str, Any]:
    return {"driver": "file", "path": str(path) + "/"}


def ts_write(s: Spec, path: Path, inp: np.ndarray, regions) -> None:
    metadata = {
        "shape": list(s.shape),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(s.chunks)}},
        "chunk_key_encoding": {"name": "default"},
        "data_type": s.data_type,
        "fill_value": s.fill_value,
        "codecs": s.codecs,
    }
    arr = ts.open(
        {"driver": "zarr3", "kvstore": ts_kvstore(path), "metadata": metadata}, create=True
    ).result()
    for r in regions:
        arr[r].write(inp[r]).result()


def ts_read(path: Path, sel: tuple[slice, ...] | None = None) -> np.ndarray:
    arr = ts.open({"driver": "zarr3", "kvstore": ts_kvstore(path)}, open=True).result()
    return arr[sel].read().result() if sel is not None else arr.read().result()


def zp_write(s: Spec, path: Path, inp: np.ndarray, regions) -> None:
    kwargs = dict(s.codecs)
    if s.inner_chunks is not None:
        kwargs["shards"], chunks = s.chunks, s.inner_chunks
    else:
        chunks = s.chunks
    arr = zarr.create_array(
        store=LocalStore(path),
        shape=s.shape,
        chunks=chunks,
        dtype=str if s.data_type == "string" else numpy_type(s.data_type),
        fill_value=fill_scalar(s),
        compressors=None,
        zarr_format=3,
        **kwargs,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in regions:
            arr[r] = inp[r]


def zp_read(path: Path, sel: tuple[slice, ...] | None = None) -> np.ndarray:
    arr = zarr.open_array(store=LocalStore(path, read_only=True), mode="r", zarr_format=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = np.asarray(arr[sel] if sel is not None else arr[...])
    if out.dtype.kind in "UT":  # zarr-python hands strings back as a numpy string dtype
        out = out.astype(object)
    return out


WRITERS = {
    "tensorstore": (ts_write, ts_read),
    "zarr-python": (zp_write, zp_read),
}


def codec_summary(c: Any) -> str:
    name = c["name"]
    cfg = c.get("configuration")
    if not cfg:
        return name
    if name == "sharding_indexed":
        inner = " -> ".join(codec_summary(x) for x in cfg["codecs"])
        index = " -> ".join(codec_summary(x) for x in cfg["index_codecs"])
        return (
            f"sharding_indexed(chunk_shape={cfg['chunk_shape']}, index_location="
            f"{cfg.get('index_location', 'end')}, index_codecs=[{index}]){{ {inner} }}"
        )
    return f"{name}(" + ", ".join(f"{k}={json.dumps(v)}" for k, v in cfg.items()) + ")"


def write_fixture(s: Spec, writer: str, out: Path) -> list[dict[str, Any]]:
    write, read = WRITERS[writer]
    rng = np.random.default_rng(s.seed)
    data = s.make_data(rng, s)
    assert data.shape == s.shape, (s.name, data.shape)
    regions = written_regions(s)
    inp = fill_array(s)
    for r in regions:
        inp[r] = data[r]
    for idx in s.fill_chunks:
        assert idx not in s.skip_chunks
        r = chunk_region(idx, s.chunks, s.shape)
        inp[r] = fill_array(s)[r]

    store = out / f"{s.name}.zarr"
    write(s, store, inp, regions)
    expected = read(store)
    # The writer reads back what it was given (values; sub-byte upper bits aside).
    assert same_values(expected, inp, s.data_type), f"{s.name}: read-back differs from input"

    infos = [describe(s, writer, store, expected, read)]
    for name, desc, edit in s.edited_variants:
        edited = out / f"{name}.zarr"
        shutil.copytree(store, edited)
        text = (store / "zarr.json").read_text()
        new = edit(text)
        assert new != text, name
        (edited / "zarr.json").write_text(new)
        got = read(edited)  # the writer itself must accept the edit and decode the same
        assert same_values(got, expected, s.data_type), f"{name}: edited store reads differently"
        variant = Spec(**{**s.__dict__, "name": name, "description": desc, "edited_variants": []})
        infos.append(describe(variant, writer, edited, got, read, hand_edited=True))
    return infos


def describe(s: Spec, writer: str, store: Path, expected: np.ndarray, read, hand_edited=False):
    meta = zc.load_json(store / "zarr.json")
    subsets = auto_subsets(s)
    for sub in subsets:  # the writer agrees with itself on every subset
        sel = tuple(slice(a, a + n) for a, n in zip(sub["start"], sub["shape"]))
        assert same_values(read(store, sel), expected[sel], s.data_type), (s.name, sub)
    stored = sorted(zc.store_keys(store))
    info: dict[str, Any] = {
        "name": s.name,
        "description": s.description,
        "writer": {
            "name": writer,
            "version": version("tensorstore") if writer == "tensorstore" else zarr.__version__,
        },
        "hand_edited": hand_edited,
        "shape": list(s.shape),
        "data_type": meta["data_type"],
        "fill_value": meta["fill_value"],
        "chunk_shape": meta["chunk_grid"]["configuration"]["chunk_shape"],
        "codecs": meta["codecs"],
        "codecs_summary": " -> ".join(codec_summary(c) for c in meta["codecs"]),
    }
    if s.inner_chunks is not None:
        info["inner_chunk_shape"] = list(s.inner_chunks)
    info["written_regions"] = [region_json(r) for r in written_regions(s)]
    info["never_written_chunks"] = [list(i) for i in s.skip_chunks]
    info["written_as_fill_chunks"] = [list(i) for i in s.fill_chunks]
    info["stored_keys"] = stored
    if s.raw_chunk_keys:
        info["raw_chunks_hex"] = {k: (store / k).read_bytes().hex() for k in s.raw_chunk_keys}
    info["expected_layout"] = layout_for(s.data_type)
    info["subsets"] = subsets
    info["notes"] = s.notes
    info["versions"] = writer_versions()
    (store.parent / f"{s.name}.expected.bin").write_bytes(expected_bytes(expected, s.data_type))
    (store.parent / f"{s.name}.expected.json").write_text(
        json.dumps(info, indent=2, ensure_ascii=False) + "\n"
    )
    return info


def layout_for(data_type: str) -> str:
    if data_type in SUB_BYTE_INTS:
        return EXPECTED_LAYOUT["int2/int4"]
    if data_type in SUB_BYTE_FLOATS:
        return EXPECTED_LAYOUT["float4_e2m1fn"]
    if data_type in EIGHT_BIT_FLOATS:
        return EXPECTED_LAYOUT["float8_*"]
    for key in ("bfloat16", "bool", "string"):
        if data_type == key:
            return EXPECTED_LAYOUT[key]
    if data_type.startswith("complex"):
        return EXPECTED_LAYOUT["complex64/complex128"]
    return EXPECTED_LAYOUT["other"]


# --------------------------------------------------------------------------------------
# The fixtures
# --------------------------------------------------------------------------------------


def bytes_codec(endian: str | None) -> dict[str, Any]:
    return {"name": "bytes", "configuration": {"endian": endian}} if endian else {"name": "bytes"}


def transpose_codec(order: Any) -> dict[str, Any]:
    return {"name": "transpose", "configuration": {"order": order}}


def replace_order(old: list[int], new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        meta = json.loads(text)
        hits = [c for c in meta["codecs"] if c["name"] == "transpose"]
        assert len(hits) == 1 and hits[0]["configuration"]["order"] == old, hits
        hits[0]["configuration"]["order"] = new
        return json.dumps(meta, separators=(",", ":"))  # tensorstore's own compact style

    return edit


FILLS = {  # fill values, chosen so that never-written chunks are not all-zero bytes
    "int8": -7,
    "uint8": 200,
    "int16": -1234,
    "uint16": 54321,
    "int32": -100000,
    "uint32": 4000000000,
    "int64": -5,
    "uint64": 18446744073709551000,
    "float16": -2.5,
    "float32": 1.25,
    "float64": "NaN",
    "complex64": [1.5, -2.0],
    "complex128": ["NaN", 0.5],
    "bool": True,
}


def tensorstore_specs() -> list[Spec]:
    specs: list[Spec] = []
    # --- transpose ---------------------------------------------------------------
    specs.append(
        Spec(
            "transpose_201_u16_be",
            "uint16 (7, 9, 10), chunks (4, 4, 3); transpose order [2, 0, 1] -> bytes big-endian. "
            "Edge chunks partial in every dimension; chunk [0, 2, 1] never written, chunk [1, 0, 0] "
            "half written, chunk [0, 1, 2] written with the fill value only (not stored).",
            "uint16",
            (7, 9, 10),
            (4, 4, 3),
            777,
            [transpose_codec([2, 0, 1]), bytes_codec("big")],
            data_for("uint16"),
            skip_chunks=[(0, 2, 1)],
            fill_chunks=[(0, 1, 2)],
            half_chunk=(1, 0, 0),
        )
    )
    specs.append(
        Spec(
            "transpose_120_f64_le",
            "float64 (5, 8, 6), chunks (3, 5, 4); transpose order [1, 2, 0] -> bytes little-endian; "
            "fill NaN. NaN, +-inf, -0.0, subnormals in chunk [0, 0, 0]; chunk [1, 1, 1] never written.",
            "float64",
            (5, 8, 6),
            (3, 5, 4),
            "NaN",
            [transpose_codec([1, 2, 0]), bytes_codec("little")],
            data_for("float64"),
            skip_chunks=[(1, 1, 1)],
        )
    )
    specs.append(
        Spec(
            "transpose_3102_f32_be",
            "float32 4-D (5, 6, 4, 7), chunks (2, 4, 3, 4); transpose order [3, 1, 0, 2] -> bytes "
            "big-endian; fill 1.25. Chunk [1, 1, 0, 1] never written, chunk [2, 0, 1, 0] half written.",
            "float32",
            (5, 6, 4, 7),
            (2, 4, 3, 4),
            1.25,
            [transpose_codec([3, 1, 0, 2]), bytes_codec("big")],
            data_for("float32"),
            skip_chunks=[(1, 1, 0, 1)],
            half_chunk=(2, 0, 1, 0),
        )
    )
    specs.append(
        Spec(
            "transpose_2031_i8",
            "int8 4-D (4, 5, 3, 6), chunks (3, 2, 3, 4); transpose order [2, 0, 3, 1] -> bytes (no "
            "endian: one byte). Chunk [0, 1, 0, 1] never written.",
            "int8",
            (4, 5, 3, 6),
            (3, 2, 3, 4),
            -7,
            [transpose_codec([2, 0, 3, 1]), bytes_codec(None)],
            data_for("int8"),
            skip_chunks=[(0, 1, 0, 1)],
        )
    )
    specs.append(
        Spec(
            "transpose_F_i32_be",
            'int32 (6, 5, 7), chunks (4, 3, 5); the array was created with transpose order "F"; '
            "tensorstore normalises it and writes the explicit permutation [2, 1, 0] to zarr.json. "
            "-> bytes big-endian. Chunk [1, 0, 1] never written.",
            "int32",
            (6, 5, 7),
            (4, 3, 5),
            -100000,
            [transpose_codec("F"), bytes_codec("big")],
            data_for("int32"),
            skip_chunks=[(1, 0, 1)],
            edited_variants=[
                (
                    "transpose_F_literal_i32_be",
                    (
                        "HAND-EDITED: the store of transpose_F_i32_be with its zarr.json rewritten to say "
                        'transpose "order": "F" (the v1.0 string form; tensorstore accepts it but never '
                        "writes it). Chunk files untouched; expected values are what tensorstore decodes "
                        "from the edited store (identical to transpose_F_i32_be)."
                    ),
                    replace_order([2, 1, 0], "F"),
                )
            ],
        )
    )
    specs.append(
        Spec(
            "transpose_F_u8_4d",
            'uint8 4-D (3, 4, 5, 2), chunks (2, 3, 2, 2); created with transpose order "F", which '
            "tensorstore writes as [3, 2, 1, 0]. -> bytes. Chunk [1, 1, 1, 0] never written.",
            "uint8",
            (3, 4, 5, 2),
            (2, 3, 2, 2),
            200,
            [transpose_codec("F"), bytes_codec(None)],
            data_for("uint8"),
            skip_chunks=[(1, 1, 1, 0)],
            edited_variants=[
                (
                    "transpose_F_literal_u8_4d",
                    (
                        "HAND-EDITED: the store of transpose_F_u8_4d with zarr.json rewritten to transpose "
                        '"order": "F" (4-D: means [3, 2, 1, 0]). Chunk files untouched; expected values are '
                        "what tensorstore decodes from the edited store."
                    ),
                    replace_order([3, 2, 1, 0], "F"),
                )
            ],
        )
    )
    specs.append(
        Spec(
            "transpose_C_f32_le",
            'float32 (5, 6, 4), chunks (3, 4, 3); created with transpose order "C", which '
            "tensorstore writes as [0, 1, 2]. -> bytes little-endian. Chunk [0, 1, 1] never written.",
            "float32",
            (5, 6, 4),
            (3, 4, 3),
            1.25,
            [transpose_codec("C"), bytes_codec("little")],
            data_for("float32"),
            skip_chunks=[(0, 1, 1)],
            edited_variants=[
                (
                    "transpose_C_literal_f32_le",
                    (
                        "HAND-EDITED: the store of transpose_C_f32_le with zarr.json rewritten to transpose "
                        '"order": "C" (the identity). Chunk files untouched; expected values are what '
                        "tensorstore decodes from the edited store."
                    ),
                    replace_order([0, 1, 2], "C"),
                )
            ],
        )
    )
    specs.append(
        Spec(
            "transpose_10_int4",
            "int4 (7, 9), chunks (4, 5); transpose order [1, 0] -> bytes. Every int4 value; fill -3. "
            "Chunk [1, 0] never written.",
            "int4",
            (7, 9),
            (4, 5),
            -3,
            [transpose_codec([1, 0]), bytes_codec(None)],
            data_bit_patterns(4),
            skip_chunks=[(1, 0)],
            raw_chunk_keys=["c/0/0"],
        )
    )
    specs.append(
        Spec(
            "sharded_transpose_120_u16_be",
            "uint16 (10, 9, 8), shards (6, 6, 4) of inner chunks (3, 2, 4); inside the shard: "
            "transpose [1, 2, 0] -> bytes big-endian; index bytes little + crc32c at the end. "
            "Shard [1, 1, 0] never written; shard [0, 0, 1] half written (inner chunks missing).",
            "uint16",
            (10, 9, 8),
            (6, 6, 4),
            54321,
            [
                {
                    "name": "sharding_indexed",
                    "configuration": {
                        "chunk_shape": [3, 2, 4],
                        "codecs": [transpose_codec([1, 2, 0]), bytes_codec("big")],
                        "index_codecs": [bytes_codec("little"), {"name": "crc32c"}],
                        "index_location": "end",
                    },
                }
            ],
            data_for("uint16"),
            skip_chunks=[(1, 1, 0)],
            half_chunk=(0, 0, 1),
            inner_chunks=(3, 2, 4),
        )
    )
    # --- bytes, fixed-size types ----------------------------------------------------
    for dt in ["int16", "uint32", "float32", "float64", "complex64"]:
        for endian in ("big", "little"):
            specs.append(
                Spec(
                    f"bytes_{dt}_{endian}",
                    f"{dt} (13, 17), chunks (5, 6); bytes {endian}-endian; fill {json.dumps(FILLS[dt])}. "
                    "Chunk [1, 1] never written, chunk [2, 2] is the partial edge chunk, chunk [0, 2] "
                    "half written.",
                    dt,
                    (13, 17),
                    (5, 6),
                    FILLS[dt],
                    [bytes_codec(endian)],
                    data_for(dt),
                    skip_chunks=[(1, 1)],
                    half_chunk=(0, 2),
                )
            )
    for dt in ["int64", "uint64", "float16", "complex128"]:
        specs.append(
            Spec(
                f"bytes_{dt}_big",
                f"{dt} (13, 17), chunks (5, 6); bytes big-endian; fill {json.dumps(FILLS[dt])}. "
                "Chunk [1, 1] never written.",
                dt,
                (13, 17),
                (5, 6),
                FILLS[dt],
                [bytes_codec("big")],
                data_for(dt),
                skip_chunks=[(1, 1)],
            )
        )
    specs.append(
        Spec(
            "bytes_bool",
            'bool (13, 17), chunks (5, 6); fill true. Created with bytes endian "big": tensorstore '
            'drops the endian for a one-byte type and writes {"name": "bytes"}. Chunk [1, 1] never '
            "written.",
            "bool",
            (13, 17),
            (5, 6),
            True,
            [bytes_codec("big")],
            data_bool,
            skip_chunks=[(1, 1)],
        )
    )
    # --- bytes, sub-byte and small float types --------------------------------------
    specs.append(
        Spec(
            "bytes_int4",
            "int4 (11, 13), chunks (4, 6); bytes; fill -3. Every int4 value; chunk [1, 1] never "
            "written. The values were handed to tensorstore as ml_dtypes int4, whose memory holds "
            "only the low 4 bits, and tensorstore stores that byte as is: see raw_chunks_hex "
            "(TS_INT4_BYTES). A reader must ignore the upper bits (data-types/int4.md).",
            "int4",
            (11, 13),
            (4, 6),
            -3,
            [bytes_codec(None)],
            data_bit_patterns(4),
            skip_chunks=[(1, 1)],
            raw_chunk_keys=["c/0/0"],
        )
    )
    specs.append(
        Spec(
            "bytes_int4_upper_bits_set",
            "int4 (11, 13), chunks (4, 6); bytes; fill 0. The in-memory bytes handed to tensorstore "
            "had arbitrary upper 4 bits (ml_dtypes ignores them), and tensorstore stored them "
            "unchanged (see raw_chunks_hex: e.g. 0xaf for -1). Decoding must ignore them.",
            "int4",
            (11, 13),
            (4, 6),
            0,
            [bytes_codec(None)],
            data_bit_patterns(4, upper="random"),
            skip_chunks=[(1, 1)],
            raw_chunk_keys=["c/0/0"],
        )
    )
    specs.append(
        Spec(
            "bytes_int2",
            "int2 (9, 10), chunks (4, 4); bytes; fill -1. Every int2 value; chunk [1, 1] never "
            "written. Stored as the low 2 bits, upper bits 0 (see raw_chunks_hex: -1 is 0x03).",
            "int2",
            (9, 10),
            (4, 4),
            -1,
            [bytes_codec(None)],
            data_bit_patterns(2),
            skip_chunks=[(1, 1)],
            raw_chunk_keys=["c/0/0"],
        )
    )
    specs.append(
        Spec(
            "bytes_int2_upper_bits_set",
            "int2 (9, 10), chunks (4, 4); bytes; fill 1. In-memory bytes with arbitrary upper 6 bits, "
            "stored unchanged by tensorstore (see raw_chunks_hex). Decoding must ignore them.",
            "int2",
            (9, 10),
            (4, 4),
            1,
            [bytes_codec(None)],
            data_bit_patterns(2, upper="random"),
            skip_chunks=[(1, 1)],
            raw_chunk_keys=["c/0/0"],
        )
    )
    specs.append(
        Spec(
            "bytes_float4_e2m1fn",
            "float4_e2m1fn (9, 10), chunks (4, 5); bytes; fill -2.0 (0x0c). All 16 bit patterns; "
            "chunk [1, 1] never written.",
            "float4_e2m1fn",
            (9, 10),
            (4, 5),
            -2.0,
            [bytes_codec(None)],
            data_bit_patterns(4),
            skip_chunks=[(1, 1)],
            raw_chunk_keys=["c/0/0"],
        )
    )
    for dt, fill in [
        ("float8_e5m2", -2.0),
        ("float8_e4m3fnuz", -2.0),
        ("float8_e5m2fnuz", -2.0),
        ("float8_e4m3b11fnuz", -2.0),
        ("float8_e3m4", -2.0),
    ]:
        specs.append(
            Spec(
                f"bytes_{dt}",
                f"{dt} (21, 37), chunks (16, 16); bytes; fill {fill}. All 256 bit patterns (NaN, inf, "
                "-0.0 and subnormals where the format has them) in chunk [0, 0]; chunk [1, 1] never "
                "written.",
                dt,
                (21, 37),
                (16, 16),
                fill,
                [bytes_codec(None)],
                data_bit_patterns(8),
                skip_chunks=[(1, 1)],
            )
        )
    specs.append(
        Spec(
            "bytes_float8_e8m0fnu",
            "float8_e8m0fnu (21, 37), chunks (16, 16); bytes; fill 2.0. All 256 bit patterns in chunk "
            "[0, 0]; every chunk written, because tensorstore decodes this type's fill value wrongly "
            "(see notes), so no element of the fixture is the fill value.",
            "float8_e8m0fnu",
            (21, 37),
            (16, 16),
            2.0,
            [bytes_codec(None)],
            data_bit_patterns(8),
            notes=[
                (
                    "tensorstore 0.1.86 reads a float8_e8m0fnu fill_value of 2.0 as 0x40 (2**-63) "
                    'instead of 0x80 (2**1), 1.0 as 0x3f, 0.5 as 0x3e; given "0x80" it fills 0x80 but '
                    "writes the fill_value back as -3.6893488147419103e+19."
                )
            ],
        )
    )
    for endian in ("big", "little"):
        specs.append(
            Spec(
                f"bytes_bfloat16_{endian}",
                f"bfloat16 (13, 17), chunks (5, 6); bytes {endian}-endian; fill -2.5. NaN, +-inf, "
                "-0.0, subnormals; chunk [1, 1] never written, chunk [0, 2] half written.",
                "bfloat16",
                (13, 17),
                (5, 6),
                -2.5,
                [bytes_codec(endian)],
                data_bfloat16,
                skip_chunks=[(1, 1)],
                half_chunk=(0, 2),
            )
        )
    return specs


def zarr_python_specs() -> list[Spec]:
    specs: list[Spec] = []
    specs.append(
        Spec(
            "transpose_201_i32",
            "int32 (7, 9, 10), chunks (4, 4, 3); TransposeCodec(order=(2, 0, 1)) -> bytes little. "
            "Chunk [0, 2, 1] never written, chunk [1, 0, 0] half written, chunk [0, 1, 2] written "
            "with the fill value only (not stored).",
            "int32",
            (7, 9, 10),
            (4, 4, 3),
            -100000,
            {
                "filters": [TransposeCodec(order=(2, 0, 1))],
                "serializer": BytesCodec(endian="little"),
            },
            data_for("int32"),
            skip_chunks=[(0, 2, 1)],
            fill_chunks=[(0, 1, 2)],
            half_chunk=(1, 0, 0),
        )
    )
    specs.append(
        Spec(
            "transpose_120_f64_be",
            "float64 (5, 8, 6), chunks (3, 5, 4); TransposeCodec(order=(1, 2, 0)) -> bytes big; fill "
            "NaN. Chunk [1, 1, 1] never written.",
            "float64",
            (5, 8, 6),
            (3, 5, 4),
            "NaN",
            {"filters": [TransposeCodec(order=(1, 2, 0))], "serializer": BytesCodec(endian="big")},
            data_for("float64"),
            skip_chunks=[(1, 1, 1)],
        )
    )
    specs.append(
        Spec(
            "transpose_3102_u16_be",
            "uint16 4-D (5, 6, 4, 7), chunks (2, 4, 3, 4); TransposeCodec(order=(3, 1, 0, 2)) -> "
            "bytes big. Chunk [1, 1, 0, 1] never written.",
            "uint16",
            (5, 6, 4, 7),
            (2, 4, 3, 4),
            54321,
            {
                "filters": [TransposeCodec(order=(3, 1, 0, 2))],
                "serializer": BytesCodec(endian="big"),
            },
            data_for("uint16"),
            skip_chunks=[(1, 1, 0, 1)],
        )
    )
    specs.append(
        Spec(
            "transpose_10_string",
            'string (7, 9), chunks (3, 4); TransposeCodec(order=(1, 0)) -> vlen-utf8; fill "". '
            "Variable-length data through transpose; non-ASCII and empty strings. Chunk [1, 1] "
            "never written, chunk [2, 2] the partial edge chunk.",
            "string",
            (7, 9),
            (3, 4),
            "",
            {"filters": [TransposeCodec(order=(1, 0))]},
            data_string,
            skip_chunks=[(1, 1)],
        )
    )
    specs.append(
        Spec(
            "sharded_transpose_021_f32_be",
            "float32 (10, 9, 8), shards (6, 6, 4) of inner chunks (3, 2, 4); inside the shard: "
            "TransposeCodec(order=(0, 2, 1)) -> bytes big (zarr-python's default index: bytes little "
            "+ crc32c at the end). Shard [1, 1, 0] never written; shard [0, 0, 1] half written.",
            "float32",
            (10, 9, 8),
            (6, 6, 4),
            1.25,
            {"filters": [TransposeCodec(order=(0, 2, 1))], "serializer": BytesCodec(endian="big")},
            data_for("float32"),
            skip_chunks=[(1, 1, 0)],
            half_chunk=(0, 0, 1),
            inner_chunks=(3, 2, 4),
        )
    )
    for dt in [
        "int16",
        "int32",
        "int64",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ]:
        for endian in ("big", "little"):
            specs.append(
                Spec(
                    f"bytes_{dt}_{endian}",
                    f'{dt} (13, 17), chunks (5, 6); BytesCodec(endian="{endian}"); fill '
                    f"{json.dumps(FILLS[dt])}. Chunk [1, 1] never written, chunk [2, 2] the partial "
                    "edge chunk, chunk [0, 2] half written.",
                    dt,
                    (13, 17),
                    (5, 6),
                    FILLS[dt],
                    {"serializer": BytesCodec(endian=endian)},
                    data_for(dt),
                    skip_chunks=[(1, 1)],
                    half_chunk=(0, 2),
                )
            )
    for dt in ["bool", "int8", "uint8"]:
        specs.append(
            Spec(
                f"bytes_{dt}",
                f'{dt} (13, 17), chunks (5, 6); created with BytesCodec(endian="big"), which '
                f'zarr-python writes as {{"name": "bytes"}} for a one-byte type; fill '
                f"{json.dumps(FILLS[dt])}. Chunk [1, 1] never written.",
                dt,
                (13, 17),
                (5, 6),
                FILLS[dt],
                {"serializer": BytesCodec(endian="big")},
                data_for(dt),
                skip_chunks=[(1, 1)],
            )
        )
    return specs


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def int_byte_map(info: dict[str, Any], out: Path, bits: int) -> str:
    """'value -> stored byte' for the first chunk of a sub-byte integer fixture."""
    name = info["name"]
    raw = bytes.fromhex(info["raw_chunks_hex"]["c/0/0"])
    expected = np.frombuffer((out / f"{name}.expected.bin").read_bytes(), dtype=np.int8)
    # The first chunk's values in C order within the chunk (no transpose in these fixtures).
    chunk = info["chunk_shape"]
    region = expected.reshape(info["shape"])[tuple(slice(0, c) for c in chunk)].reshape(-1)
    seen: dict[int, int] = {}
    for v, b in zip(region, raw):
        seen.setdefault(int(v), b)
    lo = -(1 << (bits - 1))
    return ", ".join(f"{v} -> 0x{seen[v]:02x}" for v in range(lo, -lo) if v in seen)


README_TS = """# tensorstore fixtures for `bytes` and `transpose`

Written by tensorstore {tensorstore} (driver `zarr3`, `file` kvstore) with numpy {numpy} and
ml_dtypes {ml_dtypes}, by `scripts/python/make_fixtures_core.py`. Do not edit by hand: every
`zarr.json` and chunk file is exactly what tensorstore wrote, except the fixtures marked
**hand-edited** below (their `zarr.json` says transpose `"order": "F"` / `"C"`, which tensorstore
reads but always writes back as a permutation; their chunk files are tensorstore's).

Regenerate (from the repository root; deletes and re-creates this directory and
`fixtures/zarr-python-core/`). tensorstore is deliberately not in `requirements.txt`, which
CI installs: the Rust tests only read these files.

```sh
PYENV_VERSION=3.12.1 python3 -m venv /tmp/corevenv   # any CPython 3.12
/tmp/corevenv/bin/pip install -r scripts/python/requirements-core.txt
/tmp/corevenv/bin/python scripts/python/make_fixtures_core.py
```

Read by `tests/local/core_fixtures.rs` (`cargo test --test local core_fixtures::`), after
`zarrs_extension_codecs::register_overrides()`.

## Files

For each fixture `NAME`:

| file | what |
| --- | --- |
| `NAME.zarr/` | the Zarr v3 array store |
| `NAME.expected.bin` | what tensorstore decodes when it reads the whole array back, C order, in zarrs' in-memory layout (`expected_layout` in the JSON; below) |
| `NAME.expected.json` | `shape`, `data_type`, `fill_value` and `codecs` (as in `zarr.json`), `codecs_summary`, `description`, `writer` (name, version), `hand_edited`, `chunk_shape` (`inner_chunk_shape` when sharded), `written_regions`, `never_written_chunks`, `written_as_fill_chunks`, `stored_keys`, `raw_chunks_hex` (some sub-byte fixtures: the bytes of chunk `c/0/0` as stored), `subsets` (`{{"label", "start", "shape"}}` to slice from the expected array), `notes`, `versions` |

`NAME.expected.bin` layout, by data type (zarrs' in-memory layout, little-endian):

{layout}

## tensorstore {tensorstore} behaviour seen while writing these

- transpose `"order": "F"` and `"C"` are accepted when creating an array and written back as the
  permutation (`[2, 1, 0]`, `[0, 1, 2]`); a `zarr.json` that says `"F"` / `"C"` is read.
- `bytes` for a one-byte type is written as `{{"name": "bytes"}}` (an `endian` given is dropped);
  for multi-byte types tensorstore always writes `endian` (default `"little"`).
- Sub-byte types are stored one byte per element, exactly as they are in memory. ml_dtypes
  keeps only the low bits meaningful, so values that come from ml_dtypes arithmetic or
  conversions carry upper bits 0: int4 is written as {int4_map}; int2 as {int2_map}. Bytes whose
  upper bits are set are stored unchanged and read back ignoring them
  (`bytes_int4_upper_bits_set`, `bytes_int2_upper_bits_set`).
- Data types tensorstore has that zarrs 0.23 does not (so no fixture): `float8_e4m3fn`
  (zarrs has `float8_e4m3`, a different format, which tensorstore does not have). zarrs 0.23
  types tensorstore refuses: `uint2`, `uint4`, `float6_e2m3fn`, `float6_e3m2fn`,
  `float8_e4m3`.
- Fill values of the 8-bit and 4-bit float types are written as JSON numbers (`-2.0`), which
  zarrs parses only with its `microfloat` feature.
- `float8_e8m0fnu` fill values are decoded wrongly (2.0 fills with 0x40, i.e. 2**-63), so that
  fixture has no never-written chunk.

## What zarrs 0.23.14's built-in codecs make of these

Without `register_overrides()`: the `int2` / `int4` fixtures decode wrongly (the built-in
`bytes` keeps the upper bits: `0x0f` becomes 15, not -1; `0x02` int2 becomes 2, not -2), and the
hand-edited `"F"` / `"C"` stores do not open (`data did not match any variant of untagged enum
TransposeCodecConfiguration`). Everything else matches.

## Fixtures

| name | data type | shape / chunks | codecs | what it covers |
| --- | --- | --- | --- | --- |
{rows}
"""

README_ZP = """# zarr-python fixtures for `bytes` and `transpose`

Written by zarr-python {zarr} with numpy {numpy}, by `scripts/python/make_fixtures_core.py`
(which also writes `fixtures/tensorstore/`; see its README for how to regenerate both). Do not
edit by hand: every `zarr.json` and chunk file is exactly what zarr-python wrote. No
compressor (`compressors=None`), default `/` chunk keys.

Read by `tests/local/core_fixtures.rs` (`cargo test --test local core_fixtures::`), after
`zarrs_extension_codecs::register_overrides()`.

## Files

For each fixture `NAME`: `NAME.zarr/` (the store), `NAME.expected.bin` (what zarr-python decodes
when it reads the whole array back, C order) and `NAME.expected.json` (as in
`fixtures/tensorstore/README.md`).

`NAME.expected.bin` layout, by data type (zarrs' in-memory layout, little-endian):

{layout}

## zarr-python {zarr} behaviour seen while writing these

- `TransposeCodec(order="F")` is refused (`Expected an iterable of integers. Got F instead.`).
- `BytesCodec(endian="big")` on a one-byte type (`bool`, `int8`, `uint8`) is written as
  `{{"name": "bytes"}}`.
- Chunks written with nothing but the fill value are not stored (`write_empty_chunks=False`).
- Strings (`dtype=str`) get the `string` data type and the `vlen-utf8` serializer; a transpose
  filter in front of it works on variable-length data.
- zarr-python cannot read a `zarr.json` whose transpose `order` is `"F"` either (same error);
  the `"F"` / `"C"` stores are in `fixtures/tensorstore/`.

## What zarrs 0.23.14's built-in codecs make of these

Without `register_overrides()` everything matches except `transpose_10_string`: whole chunks
decode correctly, but any read that needs only part of a chunk (a subset, or the whole array,
whose edge chunks stick out of it) goes through the built-in transpose's partial decoder and
fails with `indexer references array indices [3, 4] which are out-of-bounds of array shape
[4, 3]` (the chunk is 3 x 4, transposed 4 x 3).

## Fixtures

| name | data type | shape / chunks | codecs | what it covers |
| --- | --- | --- | --- | --- |
{rows}
"""


def table_rows(infos: list[dict[str, Any]]) -> str:
    rows = []
    for i in infos:
        grid = "x".join(map(str, i["shape"])) + " / " + "x".join(map(str, i["chunk_shape"]))
        if "inner_chunk_shape" in i:
            grid += " (inner " + "x".join(map(str, i["inner_chunk_shape"])) + ")"
        desc = i["description"].replace("|", "\\|")
        if i["hand_edited"]:
            desc = "**hand-edited** " + desc
        summary = i["codecs_summary"].replace("|", "\\|")
        rows.append(f"| `{i['name']}` | {i['data_type']} | {grid} | `{summary}` | {desc} |")
    return "\n".join(rows)


def layout_text() -> str:
    return "\n".join(f"- {k}: {v}" for k, v in EXPECTED_LAYOUT.items())


def main() -> int:
    warnings.filterwarnings("ignore", message="Combining a `sharding_indexed` codec")
    results = {}
    for out, writer, specs in [
        (OUT_TS, "tensorstore", tensorstore_specs()),
        (OUT_ZP, "zarr-python", zarr_python_specs()),
    ]:
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        infos = []
        for s in specs:
            infos.extend(write_fixture(s, writer, out))
            print(f"{writer}: {s.name}", file=sys.stderr)
        results[writer] = (out, infos)

    out, infos = results["tensorstore"]
    by_name = {i["name"]: i for i in infos}
    int4_map = int_byte_map(by_name["bytes_int4"], out, 4)
    int2_map = int_byte_map(by_name["bytes_int2"], out, 2)
    assert "-1 -> 0x0f" in int4_map, int4_map  # the case issue 3 calls out
    for i in infos:
        if "TS_INT4_BYTES" in i["description"]:
            i["description"] = i["description"].replace("TS_INT4_BYTES", int4_map)
            path = out / f"{i['name']}.expected.json"
            path.write_text(json.dumps(i, indent=2, ensure_ascii=False) + "\n")
    v = writer_versions()
    (out / "README.md").write_text(
        README_TS.format(
            rows=table_rows(infos), layout=layout_text(), int4_map=int4_map, int2_map=int2_map, **v
        )
    )
    out, infos = results["zarr-python"]
    (out / "README.md").write_text(
        README_ZP.format(rows=table_rows(infos), layout=layout_text(), **v)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
