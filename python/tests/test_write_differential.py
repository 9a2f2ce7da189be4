"""A hypothesis differential of writes: `CodecPipeline` against zarr-python's
default pipeline (the golden result), over random layouts and random
sequences of writes.

Each example draws a layout (data type: bool, integers, floats and complex
numbers, whose NaNs and signed zeros zarr counts as fill values; shape with
partial edge chunks,
chunks, shards or shards within shards with partial edge shards, a
compressor, a fill value, NaN included, `write_empty_chunks`, and a filter
chain: none, the EOPF-like `scale_offset` + `cast_value` to uint16 with
``out_of_range: clamp`` and a NaN <-> 0 `scalar_map`, or a `cast_value`
without ``out_of_range``, so that some values cannot be encoded), makes the
array in two stores of one kind (`MemoryStore` or `LocalStore`), and writes
1 to 4 values into both: the whole array, basic selections (slices with
steps, integers), `oindex` (integer arrays, slices, boolean arrays),
`vindex` (coordinates, a boolean mask); arrays, scalars broadcast, runs of
the fill value (so that chunks and inner chunks become fill values only,
and are deleted as zarr deletes them), in C or Fortran order, strided or
reversed.

zarr's pipeline writes one store; `CodecPipeline` the other, with
``codec_pipeline.fallback = "raise"`` and zarr's own
`BatchedCodecPipeline.write` made to fail (`test_writes.zarr_writes_forbidden`),
so that a write handed to zarr's pipeline fails the test. After every
write: the same keys stored, the same values read back by zarr's default
pipeline, bit for bit, and the same bytes where the package promises them
(python/README.md: no compressor but crc32c, and no shards within shards,
which zarrs' sharding codec lays out in C order, nor shards written with
`write_empty_chunks`, of which a write by steps or integer arrays stores
every inner chunk: not told apart here).

Exceptions: where zarr's write raises, ours raises the same type, under
``raise`` (a value the codecs cannot encode is an error of the write, not
a reason to hand it to zarr's pipeline: README). What a failed write
leaves stored is not documented by zarr (chunks are stored as they are
encoded): the example goes on with new arrays. The case the README leaves
to zarr's pipeline and that a layout here can be, a `cast_value` fill
value that does not survive the cast (zarrs refuses to write the array,
zarr writes), raises `FallbackError` under ``raise`` and is then written
(or refused) with the fallback allowed; either way the result is
compared.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import zarr
from hypothesis import event, given, note
from hypothesis import strategies as st
from stored import stored
from test_pipeline import basic_selections
from test_writes import EOPF_FILTERS, GZIP, OURS, ZSTD, blosc, same, zarr_writes_forbidden
from zarr.codecs import ShardingCodec
from zarr.storage import LocalStore, MemoryStore

import zarrs_extension_codecs as zec

CRC32C = {"name": "crc32c"}
COMPRESSORS = ["none", "crc32c", "zstd", "gzip", "blosc"]

# By kind, floats (whose NaN fill values are compared as zarr compares them)
# twice as often as the others.
PLAIN_DTYPES = {
    "bool": ["bool"],
    "int": ["int8", "int16", "int32", "int64"],
    "uint": ["uint8", "uint16", "uint32", "uint64"],
    "float": ["float16", "float32", "float64"],
    "complex": ["complex64", "complex128"],
}


def cast_filters(target: str) -> list[dict[str, Any]]:
    """`cast_value` to `target` without ``out_of_range`` nor `scalar_map`:
    a value out of the target's range, NaN and infinities cannot be encoded."""
    return [
        {
            "name": "cast_value",
            "configuration": {"data_type": target, "rounding": "nearest-even"},
        }
    ]


# A fill value `cast_value` to uint8 does not give back (2.5 -> 2 -> 2.0):
# zarr writes such an array, zarrs refuses to (the cast_value spec), and the
# package hands its writes to zarr's pipeline.
LOSSY_FILL = 2.5


@st.composite
def layouts(
    draw: st.DrawFn,
    chains: list[str] | None = None,
    shardings: list[str] | None = None,
    nan_fill: bool = False,
) -> dict[str, Any]:
    """A layout; of one of `chains` and `shardings` if given, of a float
    type with a NaN fill value if `nan_fill`."""
    ndim = draw(st.integers(1, 3))
    # Few chunks a dimension (zarr's pipeline takes a while per chunk).
    max_chunk, max_mult, max_grid = {1: (8, 3, 3), 2: (6, 3, 3), 3: (4, 2, 2)}[ndim]
    sharding = draw(st.sampled_from(shardings or ["none", "none", "shards", "shards", "nested"]))
    chunks = tuple(draw(st.integers(1, max_chunk)) for _ in range(ndim))
    middle = None
    if sharding == "none":
        outer = chunks
    else:
        outer = tuple(c * draw(st.integers(1, max_mult)) for c in chunks)
        if sharding == "nested":
            # Shards of `middle` shards of `chunks`.
            middle = outer
            outer = tuple(m * draw(st.integers(1, 2)) for m in middle)
    # Each dimension: 1 to `max_grid` outer chunks, the last one partial or not.
    shape = tuple(o * (draw(st.integers(1, max_grid)) - 1) + draw(st.integers(1, o)) for o in outer)
    chain = draw(st.sampled_from(chains or ["plain", "plain", "eopf", "cast"]))
    lossy_fill = False
    if chain == "plain":
        kind = (
            "float"
            if nan_fill
            else draw(st.sampled_from(["bool", "int", "uint", "float", "float", "complex"]))
        )
        dtype = draw(st.sampled_from(PLAIN_DTYPES[kind]))
        if kind == "bool":
            fill: Any = draw(st.booleans())
        elif kind == "float":
            fill = draw(st.sampled_from([float("nan"), 0.0, -2.5, float("nan")]))
            if nan_fill:
                fill = float("nan")
        elif kind == "complex":
            fill = draw(st.sampled_from([0j, 1.5 - 2j]))
        else:
            fill = draw(st.sampled_from([0, 7]))
        filters: list[dict[str, Any]] = []
        encoded = dtype
    elif chain == "eopf":
        dtype = "float64"
        fill = float("nan") if nan_fill else draw(st.sampled_from([float("nan"), 0.0]))
        filters = EOPF_FILTERS
        encoded = "uint16"
    else:
        source, encoded = draw(st.sampled_from([("float64", "uint8"), ("int32", "int8")]))
        dtype = source
        if source == "float64":
            fill = draw(st.sampled_from([0.0, 3.0, LOSSY_FILL]))
            lossy_fill = fill == LOSSY_FILL
        else:
            fill = draw(st.sampled_from([0, -5]))
        filters = cast_filters(encoded)
    compressor = draw(st.sampled_from(COMPRESSORS))
    compressors: list[dict[str, Any]] = {
        "none": [],
        "crc32c": [CRC32C],
        "zstd": [ZSTD],
        "gzip": [GZIP],
        "blosc": [blosc(np.dtype(encoded).itemsize)],
    }[compressor]
    endian = draw(st.sampled_from(["little", "big"]))
    return {
        "shape": shape,
        "chunks": chunks,
        "sharding": sharding,
        "middle": middle,
        "outer": outer,
        "dtype": dtype,
        "fill_value": fill,
        "chain": chain,
        "filters": filters,
        "compressors": compressors,
        "endian": endian,
        "write_empty_chunks": draw(st.booleans()),
        "lossy_fill": lossy_fill,
    }


def create_kwargs(layout: dict[str, Any]) -> dict[str, Any]:
    """`zarr.create_array`'s arguments for `layout`."""
    serializer = {"name": "bytes", "configuration": {"endian": layout["endian"]}}
    common = {
        "shape": layout["shape"],
        "dtype": layout["dtype"],
        "fill_value": layout["fill_value"],
        "config": {"write_empty_chunks": layout["write_empty_chunks"]},
        "zarr_format": 3,
    }
    if layout["sharding"] == "nested":
        # The filters too in the innermost chain (before a sharding codec,
        # zarr warns that partial reads and writes are lost).
        inner = ShardingCodec(
            chunk_shape=layout["chunks"],
            codecs=[*layout["filters"], serializer, *layout["compressors"]],
        )
        return {
            **common,
            "filters": None,
            "chunks": layout["outer"],
            "serializer": ShardingCodec(chunk_shape=layout["middle"], codecs=[inner]),
            "compressors": None,
        }
    return {
        **common,
        "chunks": layout["chunks"],
        "shards": layout["outer"] if layout["sharding"] == "shards" else None,
        "filters": layout["filters"] or None,
        "serializer": serializer,
        "compressors": layout["compressors"] or None,
    }


def bytes_promised(layout: dict[str, Any]) -> bool:
    """Whether the package stores zarr's very bytes (python/README.md): no
    compressor but crc32c, shards laid out by the crate's shard encoder
    (Morton order, as zarr's) — not shards within shards (zarrs' sharding
    codec, C order), nor shards written with `write_empty_chunks` (a write
    by steps or integer arrays stores every inner chunk of its shards)."""
    if any(c["name"] != "crc32c" for c in layout["compressors"]):
        return False
    if layout["sharding"] == "nested":
        return False
    return not (layout["sharding"] == "shards" and layout["write_empty_chunks"])


# --- values ---------------------------------------------------------------------------------


def random_values(
    layout: dict[str, Any], shape: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray[Any, Any]:
    """Values of `layout`'s type (that its chain encodes)."""
    if shape == ():
        return random_values(layout, (1,), rng).reshape(())
    dtype = np.dtype(layout["dtype"])
    chain = layout["chain"]
    if chain == "eopf":
        data = np.round(rng.uniform(0, 0.6, shape) * 10000) / 10000 - 0.1
        where = rng.random(shape) < 0.03
        data[where] = nans(np.dtype("float64"), (int(where.sum()),), rng)
        # Out of uint16's range after scaling: clamped.
        data[rng.random(shape) < 0.03] = rng.choice([-0.5, 7.0])
    elif chain == "cast" and dtype.kind == "f":
        # Integers and halves (rounded to the nearest even) within uint8.
        data = rng.integers(0, 510, shape, endpoint=True) / 2.0
    elif chain == "cast":
        data = rng.integers(-128, 127, shape, dtype=dtype, endpoint=True)
    elif dtype.kind == "b":
        data = rng.random(shape) < 0.5
    elif dtype.kind == "f":
        data = rng.normal(0, 100, shape).astype(dtype)
        where = rng.random(shape) < 0.05
        data[where] = nans(dtype, (int(where.sum()),), rng)
        data[rng.random(shape) < 0.03] = -0.0
    elif dtype.kind == "c":
        data = (rng.normal(0, 100, shape) + 1j * rng.normal(0, 100, shape)).astype(dtype)
        where = rng.random(shape) < 0.05
        data[where] = signed_zeros(dtype, (int(where.sum()),), rng)
    else:
        info = np.iinfo(dtype)
        data = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return np.asarray(data, dtype=dtype)


# NaNs of other bit patterns than numpy's (a sign, a payload): zarr counts
# any NaN as a NaN fill value (`chunk_is_empty`), so chunks and inner
# chunks of them are left out too, and read back as the fill value's NaN.
NAN_BITS = {
    "float16": [0x7E00, 0xFE00, 0x7E01],
    "float32": [0x7FC00000, 0xFFC00000, 0x7FC00ABC],
    "float64": [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000000ABC],
}


def nans(dtype: np.dtype[Any], shape: tuple[int, ...], rng: np.random.Generator) -> Any:
    """NaNs of `dtype`, of random bit patterns."""
    bits = np.array(NAN_BITS[dtype.name], dtype=f"u{dtype.itemsize}")
    return rng.choice(bits, shape).view(dtype)


def signed_zeros(dtype: np.dtype[Any], shape: tuple[int, ...], rng: np.random.Generator) -> Any:
    """Complex zeros with either part's sign set at random: zarr counts them
    all as a zero fill value (`chunk_is_empty`), so chunks of them are left
    out and read back as the fill value."""
    out = np.empty(shape, dtype=dtype)
    out.real = rng.choice(np.array([0.0, -0.0]), shape)
    out.imag = rng.choice(np.array([0.0, -0.0]), shape)
    return out


def fill_like(
    layout: dict[str, Any], shape: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray[Any, Any]:
    """The fill value, in `shape`: a NaN fill value as NaNs of any bit
    pattern."""
    dtype = np.dtype(layout["dtype"])
    fill = np.full(shape, layout["fill_value"], dtype=dtype)
    if dtype.kind == "f" and np.isnan(fill).any() and rng.random() < 0.5:
        return np.asarray(nans(dtype, shape, rng))
    if dtype.kind == "c" and not np.any(fill) and rng.random() < 0.5:
        return np.asarray(signed_zeros(dtype, shape, rng))
    return fill


def bad_value(layout: dict[str, Any], rng: np.random.Generator) -> Any:
    """A value at or past the edge of what the `cast_value` of the "cast"
    chain can encode: out of the target's range, NaN, infinite, or one that
    rounds onto the range's edge or just past it (-0.5 and 255.4 encode,
    255.5 rounds to 256 and does not): zarr's cast and the crate's must
    agree on each."""
    dtype = np.dtype(layout["dtype"])
    if dtype.kind == "f":
        edges = [300.0, -1.0, -0.75, np.nan, np.inf, -0.5, -0.25, 255.4, 255.5, 255.6]
        return dtype.type(rng.choice(edges))
    return dtype.type(rng.choice([200, -1000]))


def fill_runs(data: np.ndarray[Any, Any], layout: dict[str, Any], rng: np.random.Generator) -> None:
    """Sets some of the (innermost) chunks of a whole-array value to the
    fill value: those chunks are not stored, shards of them deleted."""
    chunks = layout["chunks"]
    grid = [-(-n // c) for n, c in zip(data.shape, chunks, strict=True)]
    for cell in np.ndindex(*grid):
        if rng.random() < 0.35:
            at = tuple(slice(i * c, (i + 1) * c) for i, c in zip(cell, chunks, strict=True))
            data[at] = fill_like(layout, data[at].shape, rng)


VALUE_MODES = ["random", "random", "sparse", "fill", "scalar-fill", "scalar"]
MEMORY_LAYOUTS = ["C", "C", "F", "strided", "reversed"]


def make_value(
    layout: dict[str, Any],
    shape: tuple[int, ...],
    *,
    whole: bool,
    mode: str,
    memory: str,
    bad: bool,
    seed: int,
) -> Any:
    """The value of a write of `shape` (a scalar for the scalar modes)."""
    rng = np.random.default_rng(seed)
    if mode == "scalar-fill":
        return fill_like(layout, (), rng)[()]
    if mode == "scalar":
        return bad_value(layout, rng) if bad else random_values(layout, (1,), rng)[0]
    if mode == "fill":
        data = fill_like(layout, shape, rng)
    else:
        data = random_values(layout, shape, rng)
        if mode == "sparse":
            keep = rng.random(shape) < 0.1
            data = np.where(keep, data, fill_like(layout, shape, rng))
        elif whole:
            fill_runs(data, layout, rng)
        elif data.size:
            where = rng.random(shape) < 0.3
            data[where] = fill_like(layout, shape, rng)[where]
    if bad and data.size:
        data[np.unravel_index(int(rng.integers(0, data.size)), shape)] = bad_value(layout, rng)
    return in_memory_layout(data, memory)


def in_memory_layout(data: np.ndarray[Any, Any], memory: str) -> np.ndarray[Any, Any]:
    """The same values, as a Fortran-ordered, strided or reversed view."""
    if data.ndim == 0 or memory == "C":
        return data
    if memory == "F":
        return np.asfortranarray(data)
    if memory == "strided":
        big = np.zeros(tuple(2 * n + 1 for n in data.shape), dtype=data.dtype)
        view = big[tuple(slice(1, None, 2) for _ in data.shape)]
        view[...] = data
        return view
    return np.ascontiguousarray(data[(slice(None, None, -1),) * data.ndim])[
        (slice(None, None, -1),) * data.ndim
    ]


# --- selections -----------------------------------------------------------------------------


@st.composite
def orthogonal_selections(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """`oindex` selections: per dimension, distinct integers (any order),
    a slice (with a step), or a boolean array."""
    out: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["ints", "ints", "slice", "bools"]))
        if kind == "ints":
            picks = st.lists(st.integers(0, n - 1), min_size=1, max_size=min(n, 5), unique=True)
            out.append(np.array(draw(picks), dtype=np.intp))
        elif kind == "slice":
            start = draw(st.integers(0, n - 1))
            stop = draw(st.integers(start + 1, n))
            out.append(slice(start, stop, draw(st.integers(1, 3))))
        else:
            out.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
    return tuple(out)


def orthogonal_shape(selection: tuple[Any, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for s, n in zip(selection, shape, strict=True):
        if isinstance(s, slice):
            out.append(len(range(*s.indices(n))))
        elif s.dtype == bool:
            out.append(int(s.sum()))
        else:
            out.append(len(s))
    return tuple(out)


@st.composite
def writes(draw: st.DrawFn, layout: dict[str, Any]) -> dict[str, Any]:
    """One write: where, and how its value is made."""
    shape = layout["shape"]
    size = int(np.prod(shape))
    kind = draw(st.sampled_from(["whole", "whole", "basic", "basic", "oindex", "vindex", "mask"]))
    if kind == "whole":
        selection: Any = Ellipsis
        target = shape
    elif kind == "basic":
        selection = draw(basic_selections(shape))
        target = np.empty(shape, dtype="u1")[selection].shape
    elif kind == "oindex":
        selection = draw(orthogonal_selections(shape))
        target = orthogonal_shape(selection, shape)
    elif kind == "vindex":
        flat = draw(
            st.lists(st.integers(0, size - 1), min_size=1, max_size=min(size, 8), unique=True)
        )
        selection = tuple(np.unravel_index(np.array(flat, dtype=np.intp), shape))
        target = (len(flat),)
    else:
        p = draw(st.sampled_from([0.1, 0.5, 1.0]))
        selection = np.random.default_rng(draw(st.integers(0, 2**16))).random(shape) < p
        target = (int(selection.sum()),)
    bad = layout["chain"] == "cast" and draw(st.integers(0, 3)) == 0
    return {
        "kind": kind,
        "selection": selection,
        "shape": tuple(target),
        "mode": draw(st.sampled_from(VALUE_MODES)),
        "memory": draw(st.sampled_from(MEMORY_LAYOUTS)),
        "bad": bad,
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


def apply(array: zarr.Array, write: dict[str, Any], value: Any) -> None:
    selection = write["selection"]
    if write["kind"] == "oindex":
        array.oindex[selection] = value
    elif write["kind"] in ("vindex", "mask"):
        array.vindex[selection] = value
    else:
        array[selection] = value


# --- the pair of arrays ---------------------------------------------------------------------


class Pair:
    """The same array in two stores: `theirs` written by zarr's default
    pipeline, `mine` by `CodecPipeline` (zarr's writes forbidden)."""

    def __init__(self, layout: dict[str, Any], kind: str, tmp: Path) -> None:
        self.layout = layout
        if kind == "local":
            self.stores: list[Any] = [LocalStore(tmp / "zarr"), LocalStore(tmp / "ours")]
        else:
            self.stores = [MemoryStore(), MemoryStore()]
        self.generation = -1
        self.fresh()

    def fresh(self) -> None:
        """New arrays (after a write that failed: what it left is not
        zarr's to promise)."""
        self.generation += 1
        self.name = f"a{self.generation}"
        kwargs = create_kwargs(self.layout)
        self.theirs = zarr.create_array(self.stores[0], name=self.name, **kwargs)
        with zarr.config.set(OURS):
            self.mine = zarr.create_array(self.stores[1], name=self.name, **kwargs)
        pipeline = self.mine._async_array.codec_pipeline
        assert isinstance(pipeline, zec.CodecPipeline)
        assert pipeline.native is not None, pipeline.why

    def write(self, write: dict[str, Any], value: Any) -> bool:
        """Writes `value` into both arrays; whether both wrote (else both
        raised, and the example goes on with new arrays)."""
        try:
            apply(self.theirs, write, value)
            want: BaseException | None = None
        except Exception as e:
            want = e
        try:
            with zarr_writes_forbidden():
                apply(self.mine, write, value)
            got: BaseException | None = None
        except Exception as e:
            got = e
        note(f"zarr: {want!r}; ours under fallback=raise: {got!r}")
        fell_back = isinstance(got, zec.FallbackError)
        if fell_back:
            assert self.layout["lossy_fill"], (
                f"a fallback to zarr's pipeline the README does not name: {got!r} "
                f"(zarr's write: {want!r})"
            )
            # Documented as zarr's pipeline's: done again with it allowed.
            try:
                with zarr.config.set(OURS):
                    apply(self.mine, write, value)
                got = None
            except Exception as e:
                got = e
            note(f"ours with the fallback allowed: {got!r}")
        event(
            f"zarr: {type(want).__name__ if want else 'wrote'}; fallback: {fell_back}; "
            f"lossy fill: {self.layout['lossy_fill']}"
        )
        if want is None:
            assert got is None, f"zarr's write succeeded, ours raised {got!r}"
            self.check()
            return True
        assert got is not None, f"zarr's write raised {want!r}, ours succeeded"
        assert type(got) is type(want), f"zarr raised {want!r}, ours {got!r}"
        self.fresh()
        return False

    def check(self) -> None:
        prefix = f"{self.name}/"
        want = {k: v for k, v in stored(self.stores[0]).items() if k.startswith(prefix)}
        got = {k: v for k, v in stored(self.stores[1]).items() if k.startswith(prefix)}
        assert sorted(got) == sorted(want)
        if bytes_promised(self.layout):
            differ = [k for k in want if got[k] != want[k]]
            assert not differ, f"stored bytes differ from zarr's: {differ}"
        expected = zarr.open_array(self.stores[0], path=self.name)[...]
        same(zarr.open_array(self.stores[1], path=self.name)[...], expected)


def shown(write: dict[str, Any], value: Any) -> str:
    text = {k: v for k, v in write.items() if k != "selection"}
    selection = write["selection"]
    if isinstance(selection, np.ndarray):
        selection = np.argwhere(selection).tolist()
        text["mask_true_at"] = selection
    else:
        text["selection"] = selection
    if np.ndim(value) == 0 or np.size(value) <= 64:
        text["value"] = value if np.ndim(value) == 0 else np.asarray(value).tolist()
    return repr(text)


def run(layout: dict[str, Any], store_kind: str, data: Any) -> None:
    """Makes the pair of arrays, then writes 1 to 4 values into both."""
    note(f"layout: {layout!r}; store: {store_kind}")
    event(f"{layout['chain']}, {layout['sharding']}, bytes promised: {bytes_promised(layout)}")
    with tempfile.TemporaryDirectory() as tmp:
        pair = Pair(layout, store_kind, Path(tmp))
        for _ in range(data.draw(st.integers(1, 4))):
            write = data.draw(writes(layout))
            value = make_value(
                layout,
                write["shape"],
                whole=write["kind"] == "whole",
                mode=write["mode"],
                memory=write["memory"],
                bad=write["bad"],
                seed=write["seed"],
            )
            note(f"write into {pair.name}: {shown(write, value)}")
            pair.write(write, value)


STORES = st.sampled_from(["memory", "local"])


@given(layout=layouts(), store_kind=STORES, data=st.data())
def test_write_differential(layout: dict[str, Any], store_kind: str, data: Any) -> None:
    """Every kind of layout."""
    run(layout, store_kind, data)


@given(layout=layouts(chains=["cast"]), store_kind=STORES, data=st.data())
def test_write_differential_exceptions(layout: dict[str, Any], store_kind: str, data: Any) -> None:
    """`cast_value` without ``out_of_range``: values it cannot encode raise
    as zarr raises; a fill value it does not give back is zarr's pipeline's."""
    run(layout, store_kind, data)


@given(
    layout=layouts(chains=["plain", "eopf"], shardings=["shards", "nested"]),
    store_kind=STORES,
    data=st.data(),
)
def test_write_differential_sharded(layout: dict[str, Any], store_kind: str, data: Any) -> None:
    """Shards and shards within shards: inner chunks of fill values left
    out, shards of them deleted, partial edge shards."""
    run(layout, store_kind, data)


@given(
    layout=layouts(chains=["plain", "plain", "eopf"], nan_fill=True),
    store_kind=STORES,
    data=st.data(),
)
def test_write_differential_nan_fill(layout: dict[str, Any], store_kind: str, data: Any) -> None:
    """A NaN fill value: chunks and inner chunks of NaNs of any bit pattern
    count as fill values (zarr's `chunk_is_empty`), left out, and read back
    as the fill value's NaN."""
    run(layout, store_kind, data)
