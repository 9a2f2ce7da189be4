"""Writes of compressed, sharded and nested chains through `CodecPipeline`
are done by Rust, and give what zarr-python's own pipeline gives.

Each test writes the same values into two stores, one through zarr's
default pipeline (the pipeline not selected: the golden result), one
through `CodecPipeline` with ``codec_pipeline.fallback = "raise"`` and
zarr's own `BatchedCodecPipeline.write` made to fail (so that a write
redone by zarr's pipeline fails the test instead of passing unseen). After
every write: the same stored keys (chunks of fill values not stored, shards
whose inner chunks all are deleted, as zarr does), and the same values,
bit for bit, read back by zarr's default pipeline and by the pipeline.
Stored bytes may differ where a compressor runs (compressor libraries), or
where zarrs' sharding codec lays out shards (C order: shards within
shards); otherwise they are zarr's, a shard's inner chunks in Morton order
included, with ``write_empty_chunks`` too (inner chunks of fill values the
write touched stored, the others kept as stored: checked here for the
uncompressed sharded layout; test_pipeline.py for unsharded chains).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import google_crc32c
import numpy as np
import pytest
import zarr
from stored import stored
from zarr.codecs import ShardingCodec
from zarr.core.buffer import default_buffer_prototype
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.storage import LocalStore, MemoryStore

import zarrs_extension_codecs as zec

OURS = {"codec_pipeline.path": "zarrs_extension_codecs.CodecPipeline"}
STRICT = {**OURS, "codec_pipeline.fallback": "raise"}

SHAPE = (70, 45)


def blosc(typesize: int) -> dict[str, Any]:
    return {
        "name": "blosc",
        "configuration": {
            "cname": "zstd",
            "clevel": 3,
            "shuffle": "shuffle",
            "typesize": typesize,
            "blocksize": 0,
        },
    }


ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
GZIP = {"name": "gzip", "configuration": {"level": 5}}
# The EOPF-like chain: float64 reflectances stored as uint16.
EOPF_FILTERS = [
    {"name": "scale_offset", "configuration": {"scale": 10000, "offset": -0.1}},
    {
        "name": "cast_value",
        "configuration": {
            "data_type": "uint16",
            "rounding": "nearest-even",
            "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]},
        },
    },
]

LAYOUTS: dict[str, dict[str, Any]] = {
    "blosc": {"dtype": "float32", "chunks": (16, 8), "compressors": [blosc(4)], "fill_value": 0},
    "zstd": {"dtype": "uint16", "chunks": (16, 16), "compressors": [ZSTD], "fill_value": 7},
    "gzip": {"dtype": "int64", "chunks": (9, 10), "compressors": [GZIP], "fill_value": -1},
    "sharded": {
        "dtype": "float64",
        "chunks": (8, 8),
        "shards": (16, 24),
        "compressors": None,
        "fill_value": np.nan,
    },
    "sharded-zstd": {
        "dtype": "int16",
        "chunks": (8, 5),
        "shards": (16, 10),
        "compressors": [ZSTD],
        "fill_value": 3,
    },
    "eopf": {
        "dtype": "float64",
        "chunks": (8, 8),
        "shards": (32, 16),
        "filters": EOPF_FILTERS,
        "compressors": [blosc(2)],
        "fill_value": np.nan,
    },
    "nested": {
        "dtype": "uint8",
        "chunks": (32, 20),
        "serializer": ShardingCodec(
            chunk_shape=(16, 10),
            codecs=[ShardingCodec(chunk_shape=(8, 5), codecs=[{"name": "bytes"}, GZIP])],
        ),
        "compressors": None,
        "fill_value": 0,
    },
}


def values(layout: dict[str, Any], shape: tuple[int, ...], seed: int) -> np.ndarray[Any, Any]:
    """Random values of `layout`'s type, with some runs of the fill value
    (whole chunks of it, inner chunks of a shard of it)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(layout["dtype"])
    if layout.get("filters") == EOPF_FILTERS:
        data = np.asarray(np.round(rng.uniform(0, 0.6, shape) * 10000) / 10000 - 0.1)
        data[rng.random(shape) < 0.02] = np.nan
    elif dtype.kind == "f":
        data = rng.normal(0, 100, shape).astype(dtype)
    else:
        info = np.iinfo(dtype)
        data = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    if data.ndim == 2 and data.shape[0] > 20 and data.shape[1] > 12:
        # An inner-chunk-sized run, and a chunk-sized one, of fill values.
        data[0:8, 0:8] = layout["fill_value"]
        data[16:32, 8:16] = layout["fill_value"]
    return data


def make_store(kind: str, path: Path) -> LocalStore | MemoryStore:
    return LocalStore(path) if kind == "local" else MemoryStore()


@contextmanager
def zarr_writes_forbidden() -> Iterator[None]:
    """zarr's own pipeline fails if it writes; the pipeline here raises
    `FallbackError` for every fallback to it; and a chunk stored or
    deleted through `LocalStore`'s API fails too (Rust writes the chunks
    of an array in a `LocalStore` itself)."""

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("zarr's own codec pipeline wrote")

    def chunks_forbidden(method: Any) -> Any:
        async def guarded(self: LocalStore, key: str, *args: Any) -> Any:
            if not key.endswith("zarr.json"):
                raise AssertionError(f"a chunk went through LocalStore.{method.__name__}: {key}")
            return await method(self, key, *args)

        return guarded

    with pytest.MonkeyPatch.context() as patch, zarr.config.set(STRICT):
        patch.setattr(BatchedCodecPipeline, "write", forbidden)
        patch.setattr(LocalStore, "set", chunks_forbidden(LocalStore.set))
        patch.setattr(LocalStore, "delete", chunks_forbidden(LocalStore.delete))
        yield


def same(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()


class Pair:
    """The same array in two stores: `theirs` written by zarr's default
    pipeline, `mine` by `CodecPipeline` (zarr's writes forbidden)."""

    def __init__(
        self, name: str, kind: str, tmp: Path, *, write_empty_chunks: bool = False
    ) -> None:
        self.layout = LAYOUTS[name]
        self.write_empty_chunks = write_empty_chunks
        self.stores = [make_store(kind, tmp / "zarr"), make_store(kind, tmp / "ours")]
        config = {"write_empty_chunks": write_empty_chunks}
        self.theirs = zarr.create_array(
            self.stores[0], name="a", shape=SHAPE, config=config, **self.layout
        )
        with zarr.config.set(OURS):
            self.mine = zarr.create_array(
                self.stores[1], name="a", shape=SHAPE, config=config, **self.layout
            )
        assert isinstance(self.mine._async_array.codec_pipeline, zec.CodecPipeline)
        assert self.mine._async_array.codec_pipeline.native is not None

    def write(self, selection: Any, value: Any) -> None:
        self.theirs[selection] = value
        with zarr_writes_forbidden():
            self.mine[selection] = value
        self.check()

    def check(self) -> None:
        want, got = stored(self.stores[0]), stored(self.stores[1])
        assert got.keys() == want.keys()
        if self.layout.get("compressors") is None and "serializer" not in self.layout:
            # No compressor, one level of shards: zarr-python's bytes, the
            # inner chunks in its Morton order.
            assert got == want
        expected = zarr.open_array(self.stores[0], path="a")[...]
        same(zarr.open_array(self.stores[1], path="a")[...], expected)
        with zarr.config.set(STRICT):
            same(zarr.open_array(self.stores[1], path="a")[...], expected)


def windows(seed: int) -> list[tuple[str, tuple[slice | int, ...]]]:
    """Windows of SHAPE: aligned with the chunks (and shards), unaligned,
    at the far edge, one element, and random ones."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, tuple[slice | int, ...]]] = [
        ("aligned", (slice(0, 32), slice(0, 16))),
        ("unaligned", (slice(5, 41), slice(3, 30))),
        ("edge", (slice(60, 70), slice(40, 45))),
        ("element", (69, 44)),
        ("element-inside", (17, 9)),
        ("row", (33, slice(None))),
        ("column", (slice(None), 7)),
        ("column-part", (slice(10, 50), 30)),
    ]
    for i in range(4):
        y0, x0 = (int(rng.integers(0, n)) for n in SHAPE)
        y1, x1 = int(rng.integers(y0 + 1, SHAPE[0] + 1)), int(rng.integers(x0 + 1, SHAPE[1] + 1))
        out.append((f"random-{i}", (slice(y0, y1), slice(x0, x1))))
    return out


@pytest.mark.parametrize("kind", ["local", "memory"])
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_whole_write_and_windows(name: str, kind: str, tmp_path: Path) -> None:
    pair = Pair(name, kind, tmp_path)
    pair.write(Ellipsis, values(pair.layout, SHAPE, seed=1))
    for i, (_, window) in enumerate(windows(seed=2)):
        shape = np.empty(SHAPE, dtype="u1")[window].shape
        pair.write(window, values(pair.layout, shape, seed=10 + i))


@pytest.mark.parametrize("kind", ["local", "memory"])
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_windows_into_a_new_array(name: str, kind: str, tmp_path: Path) -> None:
    """Windows written into chunks and shards never stored (no
    read-modify-write of stored bytes)."""
    pair = Pair(name, kind, tmp_path)
    for i, (_, window) in enumerate(windows(seed=3)):
        shape = np.empty(SHAPE, dtype="u1")[window].shape
        pair.write(window, values(pair.layout, shape, seed=20 + i))


@pytest.mark.parametrize("name", ["sharded", "sharded-zstd", "eopf", "nested"])
def test_windows_with_write_empty_chunks(name: str, tmp_path: Path) -> None:
    """With ``write_empty_chunks``, windows into new and stored shards keep
    the inner chunks of fill values they touch, and only those, as zarr's
    sharding codec does (the same bytes where nothing compresses)."""
    pair = Pair(name, "local", tmp_path, write_empty_chunks=True)
    fill = pair.layout["fill_value"]
    for i, (_, window) in enumerate(windows(seed=5)[:6]):
        shape = np.empty(SHAPE, dtype="u1")[window].shape
        pair.write(window, values(pair.layout, shape, seed=30 + i))
    pair.write((slice(3, 20), slice(2, 9)), fill)
    pair.write(Ellipsis, values(pair.layout, SHAPE, seed=6))
    pair.write((slice(40, 70), slice(10, 45)), fill)


@pytest.mark.parametrize("write_empty_chunks", [False, True])
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_fill_values_are_dropped_as_zarr_drops_them(
    name: str, write_empty_chunks: bool, tmp_path: Path
) -> None:
    """Chunks of fill values are not stored, and a shard whose inner chunks
    become all fill values is deleted, without ``write_empty_chunks``; with
    it, every chunk and shard written is stored, as zarr does."""
    pair = Pair(name, "local", tmp_path, write_empty_chunks=write_empty_chunks)
    fill = pair.layout["fill_value"]
    pair.write(Ellipsis, values(pair.layout, SHAPE, seed=4))
    # One chunk (or shard) of fill values, partly then whole.
    pair.write((slice(32, 48), slice(16, 24)), fill)
    pair.write((slice(32, 64), slice(16, 32)), fill)
    # The whole array of fill values: every chunk and shard deleted.
    pair.write(Ellipsis, fill)
    # Back again, from fill values only (a scalar).
    pair.write((slice(0, 40), slice(0, 20)), 1)


def test_nan_inner_chunks_read_back_as_zarr_reads_them(tmp_path: Path) -> None:
    """An inner chunk of NaNs (of another bit pattern than the fill value's
    NaN) is dropped by zarr's sharding codec (`chunk_is_empty` counts any
    NaN as a NaN fill value) and reads back as the fill value's NaN: so too
    here."""
    pair = Pair("sharded", "local", tmp_path)
    data = values(pair.layout, SHAPE, seed=5)
    other_nan = np.frombuffer(np.uint64(0x7FF8_0000_0000_0ABC).tobytes(), "<f8")[0]
    data[8:16, 8:16] = other_nan
    data[40:48, 0:8] = -np.nan
    pair.write(Ellipsis, data)
    pair.write((slice(16, 24), slice(24, 32)), other_nan)


def test_negative_zero_is_not_a_zero_fill(tmp_path: Path) -> None:
    """-0.0 is not the fill value 0.0 (zarr compares bit patterns): kept."""
    layout = {**LAYOUTS["sharded"], "fill_value": 0.0}
    LAYOUTS["sharded-zero"] = layout
    try:
        pair = Pair("sharded-zero", "memory", tmp_path)
        pair.write(Ellipsis, np.full(SHAPE, -0.0))
        pair.write((slice(0, 8), slice(0, 8)), 0.0)
    finally:
        del LAYOUTS["sharded-zero"]


@pytest.mark.parametrize("write_empty_chunks", [False, True])
@pytest.mark.parametrize("shards", [None, (16, 24)])
def test_complex_chunks_of_fill_values(
    write_empty_chunks: bool, shards: tuple[int, int] | None, tmp_path: Path
) -> None:
    """Complex zeros of either sign are fill values to zarr (dropped
    without ``write_empty_chunks``), and every chunk written is stored with
    it."""
    name = f"complex-{write_empty_chunks}-{shards}"
    LAYOUTS[name] = {
        "dtype": "complex128",
        "chunks": (8, 8),
        "shards": shards,
        "compressors": None,
        "fill_value": 0j,
    }
    try:
        pair = Pair(name, "local", tmp_path, write_empty_chunks=write_empty_chunks)
        data = np.zeros(SHAPE, dtype="complex128")
        data[20:30, 10:20] = 1 + 2j
        data[40:48, 0:8] = complex(-0.0, -0.0)
        pair.write(Ellipsis, data)
        pair.write((slice(20, 30), slice(10, 20)), 0j)
        pair.write((slice(0, 5), slice(0, 5)), 3 - 1j)
    finally:
        del LAYOUTS[name]


@pytest.mark.parametrize("write_empty_chunks", [False, True])
def test_a_step_write_keeps_what_another_handle_stored_past_its_shape(
    write_empty_chunks: bool, tmp_path: Path
) -> None:
    """One handle grows the array and writes past the other's shape; the
    other, its shape stale, writes by steps into the same edge shard: the
    first's inner chunk stays, as zarr's sharding codec keeps it."""
    kwargs: dict[str, Any] = {
        "shape": (10,),
        "chunks": (2,),
        "shards": (8,),
        "dtype": "int16",
        "fill_value": 0,
        "compressors": None,
        "config": {"write_empty_chunks": write_empty_chunks},
    }
    stores = [LocalStore(tmp_path / "zarr"), LocalStore(tmp_path / "ours")]
    for store, config in ((stores[0], {}), (stores[1], STRICT)):
        with zarr.config.set(config):
            first = zarr.create_array(store, name="a", **kwargs)
            first[...] = np.arange(1, 11, dtype="int16")
            second = zarr.open_array(store, path="a")
            second.resize((16,))
            second[12:14] = [5, 6]
            first[8:10:2] = [7]
    assert stored(stores[1]).keys() == stored(stores[0]).keys()
    want = zarr.open_array(stores[0], path="a")[...]
    same(zarr.open_array(stores[1], path="a")[...], want)
    assert list(want[12:14]) == [5, 6]


def test_a_value_the_codecs_refuse_is_an_error_naming_the_chunk(tmp_path: Path) -> None:
    """Out of range for `cast_value` without `out_of_range`: `ValueError`
    naming the chunk, as zarr raises `ValueError`, with no fallback to
    zarr's pipeline (whose writes fail here) and nothing of it stored."""
    cast = {"name": "cast_value", "configuration": {"data_type": "uint8"}}
    kwargs = {"shape": (5,), "chunks": (2,), "dtype": "float64", "fill_value": 0.0}
    theirs = zarr.create_array(LocalStore(tmp_path / "zarr"), filters=[cast], **kwargs)
    with pytest.raises(ValueError, match="300"):
        theirs[...] = [1, 300, 2, 3, 4]
    with zarr.config.set(STRICT):
        mine = zarr.create_array(LocalStore(tmp_path / "ours"), filters=[cast], **kwargs)
        with zarr_writes_forbidden(), pytest.raises(ValueError, match="chunk c/0") as raised:
            mine[0:2] = [1, 300]
        assert "300" in str(raised.value)
        assert not isinstance(raised.value, zec.FallbackError)
        assert not (tmp_path / "ours" / "c").exists()
        # A write of three chunks, one refused: what zarr stores of it
        # (nothing), though Rust encodes the other two.
        with zarr_writes_forbidden(), pytest.raises(ValueError, match="300"):
            mine[...] = [1, 300, 2, 3, 4]
    assert (
        stored(LocalStore(tmp_path / "ours")).keys() == stored(LocalStore(tmp_path / "zarr")).keys()
    )


def test_fortran_ordered_and_strided_values(tmp_path: Path) -> None:
    """Values zarr hands over as views of other layouts (Fortran order,
    reversed, strided) are written as their values."""
    pair = Pair("eopf", "local", tmp_path)
    data = values(pair.layout, SHAPE, seed=6)
    pair.write(Ellipsis, np.asfortranarray(data))
    pair.write(Ellipsis, data[::-1, ::-1])
    big = values(pair.layout, (140, 90), seed=7)
    pair.write(Ellipsis, big[::2, ::2])


def test_a_fill_value_the_chain_does_not_give_back(tmp_path: Path) -> None:
    """With ``write_empty_chunks``, zarr stores inner chunks of fill values,
    which read back as what the codecs make of the fill value; zarrs never
    stores them. A fill value the chain does not give back unchanged is
    therefore written by zarr's pipeline: a fallback `raise` reports, right
    without it."""
    fill = 0.016527635528529094
    layout = {
        "dtype": "float64",
        "chunks": (8, 8),
        "shards": (16, 16),
        "filters": [{"name": "scale_offset", "configuration": {"scale": 3, "offset": 0.1}}],
        "compressors": [ZSTD],
        "fill_value": fill,
    }
    back = (np.float64(fill) - 0.1) * 3 / 3 + 0.1
    assert back != fill  # the fill value does not survive the chain
    LAYOUTS["lossy-fill"] = layout
    try:
        pair = Pair("lossy-fill", "local", tmp_path, write_empty_chunks=True)
        data = np.full(SHAPE, fill)
        data[3, 3] = 1.5
        with zarr_writes_forbidden(), pytest.raises(zec.FallbackError, match="write_empty"):
            pair.mine[...] = data
        pair.theirs[...] = data
        with zarr.config.set(OURS):
            pair.mine[...] = data
        pair.check()
    finally:
        del LAYOUTS["lossy-fill"]


def test_encode_chunks_takes_any_layout() -> None:
    """`ChunkArray.encode_chunks`: the bytes of C-contiguous chunks and of
    views (strided, reversed, Fortran order) of the same values agree."""
    from zarrs_extension_codecs._native import ChunkArray

    store = MemoryStore()
    array = zarr.create_array(store, shape=(8, 8), chunks=(4, 4), dtype="<f8", compressors=[ZSTD])
    meta = array.metadata.to_buffer_dict(default_buffer_prototype())["zarr.json"].to_bytes()
    native = ChunkArray(meta.decode())
    x = np.arange(64.0).reshape(8, 8)
    views: list[Callable[[], np.ndarray[Any, Any]]] = [
        lambda: x[:4, :4],
        lambda: np.asfortranarray(x[:4, :4]),
        lambda: np.arange(256.0).reshape(16, 16)[:8:2, :8:2] * 0 + x[:4, :4],
        lambda: x[3::-1, 3::-1][::-1, ::-1],
    ]
    want = native.encode_chunks([([0, 0], np.ascontiguousarray(x[:4, :4]))], 1)[0]
    got = native.encode_chunks([([0, 0], v()) for v in views], 2)
    for g in got:
        assert g.dtype == np.uint8
        assert g.tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="shape"):
        native.encode_chunks([([0, 0], x)], 1)


def test_an_edge_shard_keeps_what_it_stores_outside_the_array(tmp_path: Path) -> None:
    """A write that covers an edge shard's part inside the array (after a
    shrinking resize) keeps the inner chunks outside it, as zarr's sharding
    codec does: they come back when the array grows again."""
    pair = Pair("sharded-zstd", "memory", tmp_path)
    pair.write(Ellipsis, values(pair.layout, SHAPE, seed=8))
    for array in (pair.theirs, pair.mine):
        array.resize((60, 40))
    pair.write(Ellipsis, values(pair.layout, (60, 40), seed=9))
    for array in (pair.theirs, pair.mine):
        array.resize(SHAPE)
    pair.check()


def test_a_damaged_shard_is_an_error_not_a_fallback(tmp_path: Path) -> None:
    """A write into part of a stored shard whose index points outside it
    raises, naming the shard; zarr's pipeline is not asked to write it
    (it would copy a cut-short inner chunk into the new shard)."""
    pair = Pair("sharded", "local", tmp_path)
    pair.write(Ellipsis, values(pair.layout, SHAPE, seed=8))
    shard = tmp_path / "ours" / "a" / "c" / "0" / "0"
    data = bytearray(shard.read_bytes())
    # The index is at the end: 2 x 3 inner chunks, (offset, size) each, then
    # a crc32c. Point the first inner chunk past the end, crc kept right.
    index_at = len(data) - (2 * 3 * 16 + 4)
    data[index_at : index_at + 8] = (10**9).to_bytes(8, "little")
    crc = google_crc32c.value(bytes(data[index_at:-4]))
    data[-4:] = crc.to_bytes(4, "little")
    shard.write_bytes(bytes(data))
    damaged = pytest.raises(ValueError, match="could not read for a write")
    with zarr_writes_forbidden(), damaged as e:
        pair.mine[1:3, 1:3] = 5.0
    assert "c/0/0" in str(e.value)
    assert not isinstance(e.value, zec.FallbackError)


def test_rust_stores_into_a_local_store_as_it_does(tmp_path: Path) -> None:
    """Rust writes the chunks of an array in a `LocalStore` itself (the
    guard fails any that goes through `LocalStore.set` or `.delete`): a
    whole write, a tile into a stored shard, a write of fill values that
    empties a shard, a step write; no temporary file is left, and a store
    read through another handle sees each write."""
    pair = Pair("eopf", "local", tmp_path)
    data = values(pair.layout, SHAPE, seed=21)
    pair.write(Ellipsis, data)
    pair.write((slice(8, 16), slice(0, 8)), data[:8, :8] * 0.5)
    pair.write((slice(0, 32), slice(0, 16)), np.nan)
    pair.write((slice(1, 60, 3), slice(2, 40, 5)), 0.25)
    leftovers = [p for p in (tmp_path / "ours").rglob("*") if p.name.endswith(".partial")]
    assert leftovers == []
    again = zarr.open_array(LocalStore(tmp_path / "ours"), path="a")
    same(again[...], zarr.open_array(pair.stores[0], path="a")[...])


def test_a_read_only_local_store_raises_as_zarr_does(tmp_path: Path) -> None:
    """A `LocalStore` opened read-only is not written behind its back: the
    write goes to its API, which raises zarr's own error."""
    array = zarr.create_array(LocalStore(tmp_path), shape=(8,), chunks=(4,), dtype="int32")
    array[...] = 1
    expected = None
    try:
        zarr.open_array(LocalStore(tmp_path, read_only=True))[0:2] = 5
    except Exception as e:
        expected = type(e)
    assert expected is not None
    with zarr.config.set(OURS), pytest.raises(expected):
        zarr.open_array(LocalStore(tmp_path, read_only=True))[0:2] = 5
    same(zarr.open_array(LocalStore(tmp_path))[...], np.ones(8, dtype="int32"))


def test_a_chunk_rust_cannot_store_is_an_os_error_naming_it(tmp_path: Path) -> None:
    """A chunk whose file cannot be written (a directory where it goes)
    raises `OSError`, as `LocalStore` raises, naming the chunk and the
    path; what is in the way stays, and no temporary file is left."""
    with zarr.config.set(STRICT):
        array = zarr.create_array(
            LocalStore(tmp_path), shape=(8,), chunks=(4,), dtype="int32", fill_value=0
        )
    blocker = tmp_path / "c" / "1" / "inside"
    blocker.mkdir(parents=True)
    with zarr.config.set(STRICT), pytest.raises(IsADirectoryError) as e:
        array[...] = np.arange(1, 9, dtype="int32")
    # As Python's own errors for a file: the number, the system's words, the
    # path; the chunk and what was being done to it in a note.
    assert e.value.filename == str(tmp_path / "c" / "1")
    assert e.value.strerror == "Is a directory"
    assert "chunk c/1: writing" in e.value.__notes__
    assert blocker.is_dir()
    assert not any(p.name.endswith(".partial") for p in (tmp_path / "c").iterdir())


@pytest.mark.parametrize(
    "encoding",
    [
        {"name": "default", "separator": "/"},
        {"name": "default", "separator": "."},
        {"name": "v2", "separator": "."},
        {"name": "v2", "separator": "/"},
    ],
    ids=lambda e: f"{e['name']}-{e['separator']}",
)
def test_rust_stores_under_zarrs_keys_for_every_key_encoding(
    encoding: dict[str, str], tmp_path: Path
) -> None:
    """Rust names the files it writes by the array's chunk key encoding, in
    a group below the store's root: the same files as zarr's, byte for byte
    (no compressor), read back alike, nothing through `LocalStore.set`."""
    kwargs: dict[str, Any] = {
        "shape": (9, 7),
        "chunks": (4, 3),
        "dtype": "int32",
        "fill_value": 0,
        "compressors": None,
        "chunk_key_encoding": encoding,
    }
    values = np.arange(63, dtype="int32").reshape(9, 7) - 5
    roots = [tmp_path / "zarr", tmp_path / "ours"]
    theirs = zarr.create_array(LocalStore(roots[0]), name="g/h/a", **kwargs)
    theirs[...] = values
    theirs[2:5, 1:6] = 0
    with zarr.config.set(OURS):
        mine = zarr.create_array(LocalStore(roots[1]), name="g/h/a", **kwargs)
    with zarr_writes_forbidden():
        mine[...] = values
        mine[2:5, 1:6] = 0
    want, got = stored(LocalStore(roots[0])), stored(LocalStore(roots[1]))
    assert got == want
    assert any(not key.endswith("zarr.json") for key in got)
    same(zarr.open_array(LocalStore(roots[1]), path="g/h/a")[...], theirs[...])


def test_an_os_error_is_the_one_local_store_raises(tmp_path: Path) -> None:
    """A chunk's file that cannot be written raises the `OSError` subclass
    zarr's `LocalStore` raises in the same place (the system's error number
    kept), naming the chunk."""
    raised = []
    for root, config in ((tmp_path / "zarr", {}), (tmp_path / "ours", STRICT)):
        with zarr.config.set(config):
            array = zarr.create_array(
                LocalStore(root), shape=(8,), chunks=(4,), dtype="int32", fill_value=0
            )
        (root / "c" / "1" / "in-the-way").mkdir(parents=True)
        with zarr.config.set(config), pytest.raises(OSError, match=r"c/1") as e:
            array[...] = np.arange(1, 9, dtype="int32")
        raised.append(e.value)
    theirs, mine = raised
    assert type(mine) is type(theirs), (theirs, mine)
    assert (mine.errno, mine.strerror) == (theirs.errno, theirs.strerror)
    assert "chunk c/1: writing" in mine.__notes__


def test_a_key_that_is_a_directory_or_below_a_file_reads_as_zarr_reads_it(
    tmp_path: Path,
) -> None:
    """`LocalStore.get` reads a chunk key that is a directory as nothing
    stored: the fill value. Rust reads the store's files itself and gives
    the same values, with no fallback to zarr. (Below a file: the Rust
    unit test `reads_as_local_store_reads`; zarr's keys here cannot put a
    chunk below another's file.)"""
    kwargs: dict[str, Any] = {"shape": (12,), "chunks": (4,), "dtype": "int32", "fill_value": 7}
    got = []
    for root, config in ((tmp_path / "zarr", {}), (tmp_path / "ours", STRICT)):
        with zarr.config.set(config):
            array = zarr.create_array(LocalStore(root), **kwargs)
            array[...] = np.arange(12, dtype="int32")
        # Chunk 0: a directory where its file was.
        (root / "c" / "0").unlink()
        (root / "c" / "0" / "x").mkdir(parents=True)
        with zarr.config.set(config):
            got.append(zarr.open_array(LocalStore(root))[...])
    theirs, mine = got
    same(mine, theirs)
    assert list(mine[:4]) == [7] * 4


def test_reads_follow_a_moved_local_store(tmp_path: Path) -> None:
    """`LocalStore.move()` changes the store's root: an array's later reads
    and writes go to the new directory, not to the one Rust opened before."""
    import asyncio

    store = LocalStore(tmp_path / "before")
    with zarr.config.set(STRICT):
        array = zarr.create_array(store, shape=(8,), chunks=(4,), dtype="int32", fill_value=0)
        array[...] = np.arange(8, dtype="int32")
        same(array[...], np.arange(8, dtype="int32"))
        asyncio.run(store.move(tmp_path / "after"))
        same(array[...], np.arange(8, dtype="int32"))
        array[0:4] = 9
    assert not (tmp_path / "before").exists()
    want = np.array([9] * 4 + [4, 5, 6, 7], dtype="int32")
    same(zarr.open_array(LocalStore(tmp_path / "after"))[...], want)


def test_a_chunk_file_the_system_refuses_raises_the_os_error_zarr_raises(
    tmp_path: Path,
) -> None:
    """A chunk's file that the operating system will not open for reading
    (here a link to itself: `ELOOP`; as root, permissions would not
    refuse) raises the `OSError` subclass and number zarr's `LocalStore`
    raises, not a `ValueError`; a note names the chunk."""
    raised = []
    for root, config in ((tmp_path / "zarr", {}), (tmp_path / "ours", STRICT)):
        with zarr.config.set(config):
            array = zarr.create_array(
                LocalStore(root), shape=(8,), chunks=(4,), dtype="int32", fill_value=0
            )
            array[...] = np.arange(8, dtype="int32")
        chunk = root / "c" / "1"
        chunk.unlink()
        chunk.symlink_to(chunk)
        with zarr.config.set(config), pytest.raises(OSError, match="symbolic links") as e:
            array[...]
        raised.append(e.value)
    theirs, mine = raised
    assert type(mine) is type(theirs), (theirs, mine)
    assert (mine.errno, mine.strerror) == (theirs.errno, theirs.strerror)
    assert any("chunk c/1" in note for note in mine.__notes__), mine.__notes__
