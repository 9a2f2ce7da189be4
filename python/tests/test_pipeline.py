"""`CodecPipeline` against zarr-python's default pipeline with zarr's own
classes (the golden values), in the same process.

Each example makes an array (random shape, chunk grid, shards, codec chain
and fill value) in two stores, writes the same values through each pipeline
(a whole write, then a partial one into existing chunks), and requires the
same stored bytes, key by key (for chains without a compressor or shards;
else the same keys and values read back); then reads random selections (slices, steps,
integers, integer and boolean arrays) through both and requires the same
dtype, shape and bytes.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from hypothesis import given, note
from hypothesis import strategies as st
from zarr.errors import ChunkNotFoundError
from zarr.storage import LocalStore, MemoryStore

import zarrs_extension_codecs as zec

OURS = {"codec_pipeline.path": "zarrs_extension_codecs.CodecPipeline"}

# A fill value that does not survive scale_offset (x 100) + cast_value to
# uint16: it encodes to 123 and decodes to 1.23.
LOSSY_FILL = 1.234567

COMPRESSORS: list[Any] = [
    None,
    {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
    {
        "name": "blosc",
        "configuration": {
            "cname": "zstd",
            "clevel": 3,
            "shuffle": "shuffle",
            "typesize": 2,
            "blocksize": 0,
        },
    },
    {"name": "gzip", "configuration": {"level": 5}},
    {"name": "crc32c"},
]

SCALE_CAST = [
    {"name": "scale_offset", "configuration": {"scale": 100, "offset": 0}},
    {
        "name": "cast_value",
        "configuration": {
            "data_type": "uint16",
            "rounding": "nearest-even",
            "out_of_range": "clamp",
        },
    },
]


@st.composite
def layouts(draw: st.DrawFn) -> dict[str, Any]:
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 12)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, max(1, n))) for n in shape)
    shards = None
    if draw(st.booleans()):
        shards = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    chain = draw(st.sampled_from(["scale_cast", "plain_int", "plain_float"]))
    compressor = draw(st.sampled_from(COMPRESSORS))
    if chain == "scale_cast":
        dtype = "float64"
        fill = draw(st.sampled_from([0.0, 1.5, LOSSY_FILL]))
        filters = SCALE_CAST
    elif chain == "plain_int":
        dtype = draw(st.sampled_from(["uint8", "int16", "int32", "uint64"]))
        fill = draw(st.sampled_from([0, 7]))
        filters = []
    else:
        dtype = draw(st.sampled_from(["float32", "float64"]))
        fill = draw(st.sampled_from([0.0, -2.5, float("nan")]))
        filters = []
    if chain != "scale_cast" and draw(st.booleans()):
        filters = [{"name": "transpose", "configuration": {"order": list(range(ndim))[::-1]}}]
    endian = draw(st.sampled_from(["little", "big"]))
    if compressor is not None and compressor["name"] == "blosc":
        compressor = {
            "name": "blosc",
            "configuration": {**compressor["configuration"], "typesize": np.dtype(dtype).itemsize},
        }
        if chain == "scale_cast":
            compressor["configuration"]["typesize"] = 2
    return {
        "shape": shape,
        "chunks": chunks,
        "shards": shards,
        "dtype": dtype,
        "fill_value": fill,
        "filters": filters,
        "serializer": {"name": "bytes", "configuration": {"endian": endian}},
        "compressors": [] if compressor is None else [compressor],
    }


def values(layout: dict[str, Any], seed: int) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    shape, dtype = layout["shape"], np.dtype(layout["dtype"])
    if layout["filters"] == SCALE_CAST:
        return np.round(rng.uniform(0, 600, shape), 2)
    if dtype.kind == "f":
        data = rng.normal(0, 100, shape).astype(dtype)
        data[rng.random(shape) < 0.1] = np.nan
        return data
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@st.composite
def basic_selections(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, ...]:
    out: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "step", "int", "all"]))
        if kind == "int":
            out.append(draw(st.integers(0, n - 1)))
        elif kind == "all":
            out.append(slice(None))
        else:
            start = draw(st.integers(0, n - 1))
            stop = draw(st.integers(start, n))
            step = 1 if kind == "slice" else draw(st.integers(1, 4))
            out.append(slice(start, stop, step))
    return tuple(out)


GZIP_HEADER = re.compile(rb"(\x1f\x8b\x08.)....", re.DOTALL)


def store_of(kind: str, tmp: Path) -> Any:
    return LocalStore(tmp) if kind == "local" else MemoryStore()


def stored(store: Any) -> dict[str, bytes]:
    """Every key of `store` and its bytes (a gzip stream's time zeroed)."""

    async def collect() -> dict[str, bytes]:
        from zarr.core.buffer import default_buffer_prototype

        found = {}
        async for key in store.list():
            buffer = await store.get(key, prototype=default_buffer_prototype())
            # gzip's header holds the time of writing (zarr's own writes
            # differ there from one second to the next), also inside shards.
            found[key] = GZIP_HEADER.sub(rb"\1\0\0\0\0", buffer.to_bytes())
        return found

    from zarr.core.sync import sync

    return sync(collect())


def same(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype
    assert a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def byte_identical(layout: dict[str, Any]) -> bool:
    """Whether the pipeline stores zarr's very bytes for `layout`: no
    shards, no compressor but crc32c."""
    return layout["shards"] is None and all(c["name"] == "crc32c" for c in layout["compressors"])


def create(store: Any, layout: dict[str, Any]) -> zarr.Array:
    return zarr.create_array(store, name="a", zarr_format=3, **layout)


@given(
    layout=layouts(),
    seed=st.integers(0, 2**16),
    store_kind=st.sampled_from(["memory", "local"]),
    data=st.data(),
)
def test_differential(layout: dict[str, Any], seed: int, store_kind: str, data: Any) -> None:
    note(repr(layout))
    with tempfile.TemporaryDirectory() as tmp:
        ref_store = store_of(store_kind, Path(tmp) / "ref")
        our_store = store_of(store_kind, Path(tmp) / "ours")
        ref = create(ref_store, layout)
        with zarr.config.set(OURS):
            ours = create(our_store, layout)
        assert isinstance(ours._async_array.codec_pipeline, zec.CodecPipeline)

        # Writes: a whole write, then a partial one into existing chunks.
        whole = values(layout, seed)
        for target in (ref, ours):
            target[...] = whole
        selection = data.draw(basic_selections(layout["shape"]))
        part_shape = np.empty(layout["shape"])[selection].shape
        part = values({**layout, "shape": part_shape}, seed + 1)
        for target in (ref, ours):
            target[selection] = part
        if byte_identical(layout):
            assert stored(ref_store) == stored(our_store)
        else:
            # Compressors and shards: the libraries' bytes and zarr's shard
            # layout are not promised; the keys and the values read back
            # (by zarr's own pipeline) are.
            assert stored(ref_store).keys() == stored(our_store).keys()
            same(zarr.open_array(our_store, path="a")[...], ref[...])

        # Reads, from the same store through both pipelines.
        with zarr.config.set(OURS):
            ours = zarr.open_array(ref_store, path="a")
        ref = zarr.open_array(ref_store, path="a")
        same(ours[...], ref[...])
        for _ in range(3):
            selection = data.draw(basic_selections(layout["shape"]))
            same(ours[selection], ref[selection])
        # Orthogonal integer arrays and a boolean mask.
        picks = tuple(
            np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4)))
            for n in layout["shape"]
        )
        same(ours.oindex[picks], ref.oindex[picks])
        mask = np.random.default_rng(seed).random(layout["shape"]) < 0.3
        same(ours.vindex[mask], ref.vindex[mask])
        # One whole chunk.
        chunk = tuple(slice(0, c) for c in (layout["shards"] or layout["chunks"]))
        same(ours[chunk], ref[chunk])


@pytest.mark.parametrize("store_kind", ["memory", "local"])
def test_missing_chunks_read_as_fill_and_are_reported(store_kind: str, tmp_path: Path) -> None:
    """A chunk never written is the fill value, and with
    ``array.read_missing_chunks`` off zarr raises for it as with its own
    pipeline."""
    store = store_of(store_kind, tmp_path)
    layout = {
        "shape": (6, 6),
        "chunks": (3, 3),
        "shards": None,
        "dtype": "float64",
        "fill_value": LOSSY_FILL,
        "filters": SCALE_CAST,
        "compressors": [],
    }
    ref = create(store, layout)
    ref[:3, :3] = 2.5
    with zarr.config.set(OURS):
        ours = zarr.open_array(store, path="a")
    same(ours[...], ref[...])
    assert ours[5, 5] == LOSSY_FILL
    for pipeline in ({}, OURS):
        with zarr.config.set(pipeline):
            strict = zarr.open_array(store, path="a", config={"read_missing_chunks": False})
        with pytest.raises(ChunkNotFoundError, match="c/1/1"):
            strict[...]


@pytest.mark.parametrize("store_kind", ["memory", "local"])
def test_corrupt_chunk_raises_and_names_the_key(store_kind: str, tmp_path: Path) -> None:
    """A chunk zarrs cannot decode is an error of the read (zarr's raises
    too), naming the chunk's key; zarr's pipeline does not read it again."""
    store = store_of(store_kind, tmp_path)
    layout = {
        "shape": (4,),
        "chunks": (2,),
        "shards": None,
        "dtype": "uint16",
        "fill_value": 0,
        "filters": [],
        "compressors": [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
    }
    ref = create(store, layout)
    ref[...] = np.arange(4, dtype="uint16")
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.sync import sync

    sync(store.set("a/c/1", default_buffer_prototype().buffer.from_bytes(b"not zstd")))
    with zarr.config.set(OURS):
        ours = zarr.open_array(store, path="a")
    with pytest.raises(Exception):  # noqa: PT011,B017 (whatever zarr raises)
        ref[...]
    from zarr.core.codec_pipeline import BatchedCodecPipeline

    def not_zarrs(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("zarr's own pipeline read the chunk again")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BatchedCodecPipeline, "read", not_zarrs)
        with pytest.raises(ValueError, match=r"CodecPipeline could not read: .*\bc/1\b"):
            ours[...]


def test_unknown_codec_falls_back_quietly_or_raises(caplog: pytest.LogCaptureFixture) -> None:
    """A chain zarrs cannot open (here a Zarr v2 array, whose metadata zarrs
    is not given) goes to zarr's own pipeline with one debug line, or raises
    `FallbackError` when asked."""
    store = MemoryStore()
    array = zarr.create_array(store, shape=(5,), chunks=(2,), dtype="int32", zarr_format=2)
    array[...] = np.arange(5)
    import logging

    logger = "zarrs_extension_codecs._pipeline"
    with caplog.at_level(logging.DEBUG, logger=logger), zarr.config.set(OURS):
        reopened = zarr.open_array(store)
        same(reopened[...], np.arange(5, dtype="int32"))
    assert any("zarr's own pipeline" in r.getMessage() for r in caplog.records)
    with (
        zarr.config.set({**OURS, "codec_pipeline.fallback": "raise"}),
        pytest.raises(zec.FallbackError),
    ):
        zarr.open_array(store)


def test_non_numpy_output_falls_back() -> None:
    """An output buffer that is not a numpy array (a GPU buffer, here a
    numpy subclass standing in for one) is filled by zarr's pipeline."""
    from zarr.core.buffer import cpu

    class Foreign(np.ndarray):
        pass

    store = MemoryStore()
    ref = zarr.create_array(store, shape=(6,), chunks=(4,), dtype="float64", fill_value=0.0)
    ref[...] = np.arange(6.0)
    with zarr.config.set(OURS):
        ours = zarr.open_array(store)
    out = cpu.NDBuffer(np.zeros(6).view(Foreign))
    with (
        zarr.config.set({"codec_pipeline.fallback": "raise"}),
        pytest.raises(zec.FallbackError),
    ):
        ours.get_basic_selection(..., out=out)
    ours.get_basic_selection(..., out=out)
    same(np.asarray(out.as_ndarray_like()).view(np.ndarray), np.arange(6.0))


def native_array() -> tuple[Any, np.ndarray[Any, Any]]:
    """A 4 x 6 uint16 array of 2 x 3 chunks, its chunks' bytes (plain
    little-endian `bytes` codec, so worked out by hand) and its values."""
    from zarrs_extension_codecs._native import ChunkArray

    metadata = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [4, 6],
        "data_type": "uint16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 9,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    }
    import json

    return ChunkArray(json.dumps(metadata)), np.arange(24, dtype="<u2").reshape(4, 6)


def chunk_bytes(values: np.ndarray[Any, Any], cy: int, cx: int) -> bytes:
    return values[cy * 2 : cy * 2 + 2, cx * 3 : cx * 3 + 3].astype("<u2").tobytes()


def test_native_read_into_checks_regions_before_writing() -> None:
    """Output parts that overlap, leave the output, or do not match the
    chunk part are refused (naming the chunk, or the two windows that
    overlap) before anything is written."""
    array, values = native_array()
    encoded = [chunk_bytes(values, 0, 0), chunk_bytes(values, 0, 1)]
    out = np.zeros((2, 6), dtype="uint16")
    regions = [
        ([0, 0], [(0, 2), (0, 3)], [(0, 2), (0, 3)]),
        ([0, 1], [(0, 2), (0, 3)], [(0, 2), (2, 5)]),
    ]
    with pytest.raises(ValueError, match=r"overlapping parts of the output"):
        array.read_into(out, regions, encoded)
    assert not out.any()
    outside = [([0, 1], [(0, 2), (0, 3)], [(0, 2), (4, 7)])]
    with pytest.raises(ValueError, match=r"c/0/1: output range"):
        array.read_into(out, outside, encoded[1:])
    mismatched = [([0, 1], [(0, 2), (0, 2)], [(0, 2), (0, 3)])]
    with pytest.raises(ValueError, match=r"c/0/1: dimension 1 reads 2 elements into 3"):
        array.read_into(out, mismatched, encoded[1:])
    beyond = [([2, 0], [(0, 2), (0, 3)], [(0, 2), (0, 3)])]
    with pytest.raises(ValueError, match=r"outside the chunk grid"):
        array.read_into(out, beyond, [None])
    assert not out.any()
    with pytest.raises(TypeError, match="2 bytes"):
        array.read_into(np.zeros((2, 6), dtype="uint32"), regions[:1], encoded[:1])


def test_native_entry_points_refuse_other_byte_orders_and_kinds() -> None:
    """An output of the right item size but another byte order (``>u2``)
    or kind (``i2``, ``f2``) for a uint16 array is refused by every entry
    point that takes an array, before anything is written: zarrs decodes
    native uint16, which such an array would reinterpret."""
    array, values = native_array()
    encoded = [chunk_bytes(values, 0, 0)]
    regions = [([0, 0], [(0, 2), (0, 3)], [(0, 2), (0, 3)])]
    for dtype, says in ((">u2", "native byte order"), ("i2", "kind"), ("f2", "kind")):
        out = np.zeros((2, 3), dtype=dtype)
        with pytest.raises(TypeError, match=says):
            array.read_into(out, regions, encoded)
        assert not out.any()
        with pytest.raises(TypeError, match=says):
            array.decode_chunks(np.zeros((1, 2, 3), dtype=dtype), [([0, 0], encoded[0])])
        with pytest.raises(TypeError, match=says):
            array.encode([0, 0], np.zeros((2, 3), dtype=dtype))


def test_native_read_into_places_chunks_and_fill() -> None:
    """Chunks decode into their output parts; a missing one is the fill
    value and reported as not stored."""
    array, values = native_array()
    out = np.zeros((3, 4), dtype="uint16")
    regions = [
        ([0, 0], [(1, 2), (1, 3)], [(0, 1), (0, 2)]),
        ([0, 1], [(1, 2), (0, 2)], [(0, 1), (2, 4)]),
        ([1, 0], [(0, 2), (1, 3)], [(1, 3), (0, 2)]),
        ([1, 1], [(0, 2), (0, 2)], [(1, 3), (2, 4)]),
    ]
    encoded = [
        chunk_bytes(values, 0, 0),
        chunk_bytes(values, 0, 1),
        chunk_bytes(values, 1, 0),
        None,
    ]
    present = array.read_into(out, regions, encoded, 2)
    assert present == [True, True, True, False]
    want = values[1:4, 1:5].copy()
    want[1:3, 2:4] = 9
    assert out.tolist() == want.tolist()
    assert array.encode([1, 1], values[2:4, 3:6].copy()) == chunk_bytes(values, 1, 1)


def test_codec_zarrs_lacks_falls_back() -> None:
    """A Zarr v3 array with a codec zarrs does not have (one registered
    with zarr only) is read and written by zarr's pipeline, the same
    values; with ``codec_pipeline.fallback = "raise"``, a `FallbackError`."""
    from dataclasses import dataclass

    from zarr.abc.codec import BytesBytesCodec
    from zarr.registry import register_codec

    @dataclass(frozen=True)
    class Reverse(BytesBytesCodec):
        """Stores the bytes reversed (zarr-only: zarrs has no such codec)."""

        is_fixed_size = True

        @classmethod
        def from_dict(cls, data: dict[str, Any]) -> Reverse:
            return cls()

        def to_dict(self) -> dict[str, Any]:
            return {"name": "zec-test.reverse"}

        async def _decode_single(self, chunk_bytes: Any, chunk_spec: Any) -> Any:
            return chunk_spec.prototype.buffer.from_bytes(chunk_bytes.to_bytes()[::-1])

        async def _encode_single(self, chunk_bytes: Any, chunk_spec: Any) -> Any:
            return chunk_spec.prototype.buffer.from_bytes(chunk_bytes.to_bytes()[::-1])

        def compute_encoded_size(self, input_byte_length: int, chunk_spec: Any) -> int:
            return input_byte_length

    register_codec("zec-test.reverse", Reverse)
    store = MemoryStore()
    with zarr.config.set(OURS):
        arr = zarr.create_array(
            store, shape=(7,), chunks=(3,), dtype="int16", compressors=[Reverse()]
        )
        assert arr._async_array.codec_pipeline.native is None
        arr[...] = np.arange(7, dtype="int16")
        same(arr[...], np.arange(7, dtype="int16"))
        # Opening builds nothing (a group's arrays open at zarr's cost); the
        # first read says why zarrs is given nothing.
        with zarr.config.set({"codec_pipeline.fallback": "raise"}):
            reopened = zarr.open_array(store)
            with pytest.raises(zec.FallbackError, match=r"zec-test\.reverse"):
                reopened[...]
            with pytest.raises(zec.FallbackError, match=r"zec-test\.reverse"):
                reopened[0] = 1
    same(zarr.open_array(store)[...], np.arange(7, dtype="int16"))


def test_opening_builds_nothing_until_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a group's arrays (xarray opens every variable of a product)
    gives zarrs nothing: each array's part is built at its first read or
    write, once. Under ``raise``, an array zarrs cannot read (strings) does
    not stop its group from opening; reading it raises."""
    from zarrs_extension_codecs import _pipeline

    group = zarr.open_group(LocalStore(tmp_path), mode="w", zarr_format=3)
    for name in ("a", "b", "c"):
        group.create_array(name, shape=(6,), chunks=(4,), dtype="int32")[...] = np.arange(6)
    group.create_array("s", shape=(2,), chunks=(2,), dtype=str)[...] = np.array(["x", "y"])
    built: list[str] = []
    real = _pipeline._open_native

    def counted(metadata: Any, store: Any, remote: Any) -> Any:
        built.append(metadata.to_dict()["data_type"])
        return real(metadata, store, remote)

    monkeypatch.setattr(_pipeline, "_open_native", counted)
    with zarr.config.set({**OURS, "codec_pipeline.fallback": "raise"}):
        members = dict(zarr.open_group(LocalStore(tmp_path), mode="r").members())
        assert sorted(members) == ["a", "b", "c", "s"]
        assert built == []
        same(members["b"][...], np.arange(6, dtype="int32"))
        same(members["b"][1:3], np.arange(1, 3, dtype="int32"))
        assert built == ["int32"]
        with pytest.raises(zec.FallbackError, match="no fixed size"):
            members["s"][...]
    assert len(built) == 2


def test_an_array_opened_again_reads_with_the_same_reader(tmp_path: Path) -> None:
    """A `LocalStore` array opened again (a tile server opens the product
    for each request) reads with the zarrs array made for the first open,
    and still sees what changed on disk since: a chunk rewritten by another
    writer, a chunk deleted (read as the fill value), a shard rewritten."""
    import shutil

    for shards in (None, (4, 4)):
        where = tmp_path / f"a{shards is not None}"
        with zarr.config.set(OURS):
            made = zarr.create_array(
                LocalStore(where), shape=(8, 8), chunks=(2, 2), shards=shards, dtype="int32"
            )
            values = np.arange(64, dtype="int32").reshape(8, 8)
            made[...] = values
            first = zarr.open_array(LocalStore(where), mode="r")
            same(first[0:3, 0:3], values[0:3, 0:3])
            kept = first._async_array.codec_pipeline.native.arrays
            again = zarr.open_array(LocalStore(where), mode="r")
            same(again[0:3, 0:3], values[0:3, 0:3])
            assert next(iter(again._async_array.codec_pipeline.native.arrays.values())) is next(
                iter(kept.values())
            )
        # Another writer (zarr's own pipeline) changes the store.
        other = zarr.open_array(LocalStore(where), mode="r+")
        other[0, 0] = -5
        key = "c/0/0"
        with zarr.config.set(OURS):
            want = values.copy()
            want[0, 0] = -5
            same(zarr.open_array(LocalStore(where), mode="r")[...], want)
            (where / key).unlink()
            want[0 : 4 if shards else 2, 0 : 4 if shards else 2] = 0
            same(zarr.open_array(LocalStore(where), mode="r")[...], want)
            shutil.rmtree(where / "c")
            same(zarr.open_array(LocalStore(where), mode="r")[...], np.zeros((8, 8), "int32"))


def test_every_array_of_a_product_read_in_turns_is_kept(tmp_path: Path) -> None:
    """A product of 40 arrays opened again and read in turns (a tile server
    reading every band per request) reads with the arrays kept from the
    first time, every one of them."""
    group = zarr.open_group(LocalStore(tmp_path), mode="w", zarr_format=3)
    for i in range(40):
        group.create_array(f"b{i}", shape=(4,), chunks=(2,), dtype="int16")[...] = i

    def zarrs_arrays() -> list[Any]:
        with zarr.config.set(OURS):
            opened = zarr.open_group(LocalStore(tmp_path), mode="r")
            out = []
            for i in range(40):
                arr = opened[f"b{i}"]
                same(arr[...], np.full(4, i, dtype="int16"))
                out.append(next(iter(arr._async_array.codec_pipeline.native.arrays.values())))
            return out

    first, second, third = zarrs_arrays(), zarrs_arrays(), zarrs_arrays()
    assert all(a is b is c for a, b, c in zip(first, second, third, strict=True))


def test_an_array_pickles_alike_before_and_after_its_first_read(tmp_path: Path) -> None:
    """What the pipeline pickles is what it is made from, not what a read
    built (dask tokenizes arrays by their pickles); every protocol works and
    a copy equals its original and reads the same."""
    import pickle

    with zarr.config.set(OURS):
        zarr.create_array(LocalStore(tmp_path), shape=(6,), chunks=(4,), dtype="int32")[...] = 7
        arr = zarr.open_array(LocalStore(tmp_path), mode="r")
        before = pickle.dumps(arr)
        same(arr[...], np.full(6, 7, dtype="int32"))
        assert pickle.dumps(arr) == before
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            copy = pickle.loads(pickle.dumps(arr, protocol=protocol))
            assert copy == arr
            same(copy[...], np.full(6, 7, dtype="int32"))
        assert "not yet read" in repr(pickle.loads(before)._async_array.codec_pipeline)


def test_the_chain_warning_comes_once_at_open() -> None:
    """zarr's advice on a chain (sharding beside a compressor) is given once
    when the array opens, as zarr gives it, and not again when zarr's
    pipeline is built later for a fallback."""
    import warnings

    from zarr.codecs import GzipCodec, ShardingCodec

    store = MemoryStore()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        made = zarr.create_array(
            store,
            shape=(16, 16),
            chunks=(16, 16),
            dtype="uint8",
            fill_value=0,
            serializer=ShardingCodec(chunk_shape=(8, 8)),
            compressors=[GzipCodec()],
        )
        made[...] = np.arange(256, dtype="uint8").reshape(16, 16)

    def advice(seen: list[warnings.WarningMessage]) -> int:
        return sum("disables partial reads" in str(w.message) for w in seen)

    with zarr.config.set(OURS), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        arr = zarr.open_array(store)
        assert advice(seen) == 1
        same(arr[...], np.arange(256, dtype="uint8").reshape(16, 16))
        assert arr._async_array.codec_pipeline.inner is not None  # built for fallbacks
        assert advice(seen) == 1


def test_enable_pipeline_selects_it_for_a_block() -> None:
    store = MemoryStore()
    zarr.create_array(store, shape=(3,), dtype="int8")
    with zec.enable_pipeline():
        assert isinstance(zarr.open_array(store)._async_array.codec_pipeline, zec.CodecPipeline)
    assert not isinstance(zarr.open_array(store)._async_array.codec_pipeline, zec.CodecPipeline)


def _read_sum(path: str) -> float:
    with zarr.config.set(OURS):
        return float(np.nansum(zarr.open_array(path)[...]))


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_reads_in_a_forked_child(tmp_path: Path) -> None:
    """A child made by fork() after the parent read (its thread pool
    started) reads too: the pool does not survive fork, a new one is made."""
    import multiprocessing

    ref = zarr.create_array(tmp_path, shape=(64, 64), chunks=(16, 16), dtype="float64")
    ref[...] = np.arange(64 * 64.0).reshape(64, 64)
    want = _read_sum(str(tmp_path))
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_read_sum, (str(tmp_path),)).get(timeout=60) == want


def _read_array(arr: zarr.Array) -> np.ndarray:
    return np.asarray(arr[...])


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_sharded_array_reads_in_a_forked_child(tmp_path: Path) -> None:
    """zarr's test_multiprocessing[shards1-local-fork]: a sharded array
    opened (and read) through the pipeline in the parent, pickled to a child
    made by fork(), reads there. Checking a sharded chain once ran zarrs'
    sharding encode on rayon's global pool, which the parent then had and
    the child inherited without its threads: the child waited forever."""
    import multiprocessing

    data = np.arange(100 * 24, dtype="int32").reshape(100, 24)
    zarr.create_array(tmp_path, data=data, shards=(20, 12), chunks=(5, 4))
    with zarr.config.set(OURS):
        arr = zarr.open_array(tmp_path, mode="r")
        assert isinstance(arr._async_array.codec_pipeline, zec.CodecPipeline)
        same(arr[...], data)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        # The array pickled (with its pipeline), and the same store opened anew.
        got = pool.apply_async(_read_array, (arr,)).get(timeout=60)
        same(got, data)
        assert pool.apply_async(_read_sum, (str(tmp_path),)).get(timeout=60) == data.sum()


def _read_scaled(path: str) -> np.ndarray:
    with zec.enable():
        return np.asarray(zarr.open_array(path, mode="r")[...])


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_classes_split_large_chunks_in_a_forked_child(tmp_path: Path) -> None:
    """The package's classes split a chunk of 2 MiB or more across the
    crate's own pool of threads; a child made by fork() has none of the
    parent's threads, so a pool kept for the whole process once made the
    child's read of such a chunk wait forever. The pool now belongs to a
    process: the child starts its own."""
    import multiprocessing

    data = np.linspace(-5.0, 5.0, 1024 * 1024).reshape(1024, 1024)
    zarr.create_array(
        tmp_path,
        shape=data.shape,
        chunks=data.shape,
        dtype="float64",
        filters=[{"name": "scale_offset", "configuration": {"offset": 1.5, "scale": 4.0}}],
        compressors=None,
        fill_value=0.0,
    )[...] = data
    want = zarr.open_array(tmp_path, mode="r")[...]
    with zec.enable():
        same(zarr.open_array(tmp_path, mode="r")[...], want)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        same(pool.apply_async(_read_scaled, (str(tmp_path),)).get(timeout=60), want)


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_array_pickles_after_a_read(tmp_path: Path, kind: str) -> None:
    """An array read through the pipeline pickles (dask, multiprocessing
    send arrays so), and the copy reads zarr's values: the zarrs arrays the
    pipeline opened are a cache, not part of the pickle."""
    import pickle

    store = LocalStore(tmp_path) if kind == "local" else MemoryStore()
    data = np.arange(30 * 7, dtype="float32").reshape(30, 7)
    zarr.create_array(store, data=data, chunks=(8, 3))
    want = zarr.open_array(store, mode="r")[...]
    with zarr.config.set({**OURS, "codec_pipeline.fallback": "raise"}):
        arr = zarr.open_array(store, mode="r")
        same(arr[...], want)
        copy = pickle.loads(pickle.dumps(arr))
        assert isinstance(copy._async_array.codec_pipeline, zec.CodecPipeline)
        same(copy[...], want)
        same(copy[3:17, 1:5], want[3:17, 1:5])
