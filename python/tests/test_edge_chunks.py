"""Edge chunks (the array's shape not a multiple of the chunks') stay in
Rust for every kind of selection, reads and partial writes.

zarr hands the pipeline an edge chunk's full shape; the part inside the
array is what zarrs may read. Every test here runs the pipeline with
``codec_pipeline.fallback = "raise"`` and with zarr's own
`BatchedCodecPipeline.read` / `.write` made to fail, so that a read or
write redone by zarr's pipeline fails the test instead of passing
unseen. The expected values come from zarr's own pipeline (the pipeline
not selected) over the same store, or over a second store that zarr's
pipeline wrote the same way (for writes: the stored bytes, key by key).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from stored import stored
from zarr.core.buffer import default_buffer_prototype
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.core.sync import sync
from zarr.storage import LocalStore, MemoryStore

import zarrs_extension_codecs as zec

OURS = {"codec_pipeline.path": "zarrs_extension_codecs.CodecPipeline"}
STRICT = {**OURS, "codec_pipeline.fallback": "raise"}

SHAPE = (10, 7)
VALUES = np.arange(70, dtype="int32").reshape(SHAPE) * 3 - 50

# Chunks (4, 3) over (10, 7): the last row and column of chunks are
# partial (2 rows, 1 column inside the array). The sharded layout has
# shards of 2 x 2 such chunks, whose last row and column are partial too.
LAYOUTS: dict[str, dict[str, Any]] = {
    "chunked": {"chunks": (4, 3), "shards": None},
    "sharded": {"chunks": (4, 3), "shards": (8, 6)},
}

# Selections of SHAPE that take elements of the partial edge chunks.
READS: list[tuple[str, Callable[[zarr.Array], Any]]] = [
    ("steps", lambda a: a[::2, ::3]),
    ("steps-from-edge", lambda a: a[9::4, 6::5]),
    ("steps-offset", lambda a: a[1::3, 2::2]),
    ("edge-slices", lambda a: a[8:, 6:]),
    ("integer-row", lambda a: a[9]),
    ("integer-column", lambda a: a[:, 6]),
    ("integer-both", lambda a: a[9, 6]),
    ("integer-and-steps", lambda a: a[9, ::2]),
    ("oindex", lambda a: a.oindex[[0, 9, 5, 9], [6, 0, 2]]),
    ("oindex-integer", lambda a: a.oindex[9, [6, 1, 6]]),
    ("oindex-bool", lambda a: a.oindex[np.arange(10) % 3 == 0, 4:]),
    ("vindex", lambda a: a.vindex[[9, 0, 8, 3, 9], [6, 6, 0, 5, 6]]),
    ("vindex-mask", lambda a: a.vindex[VALUES % 7 == 0]),
    ("last-block", lambda a: a.blocks[-1, -1]),
    ("all", lambda a: a[...]),
]


def make_store(kind: str, path: Path) -> LocalStore | MemoryStore:
    return LocalStore(path) if kind == "local" else MemoryStore()


def create(store: Any, layout: str, *, fill: int = 0, order: str = "C") -> zarr.Array:
    """The array, written whole by zarr's own pipeline."""
    array = zarr.create_array(
        store,
        name="a",
        shape=SHAPE,
        dtype="int32",
        fill_value=fill,
        compressors=None,
        config={"order": order},
        **LAYOUTS[layout],
    )
    array[...] = VALUES
    return array


@contextmanager
def zarr_pipeline_forbidden() -> Iterator[None]:
    """zarr's own pipeline fails if it reads or writes; the pipeline here
    raises `FallbackError` for every fallback to it."""

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("zarr's own codec pipeline ran")

    with pytest.MonkeyPatch.context() as patch, zarr.config.set(STRICT):
        patch.setattr(BatchedCodecPipeline, "read", forbidden)
        patch.setattr(BatchedCodecPipeline, "write", forbidden)
        yield


def ours(store: Any, **config: Any) -> zarr.Array:
    with zarr.config.set(OURS):
        array = zarr.open_array(store, path="a", config=config or None)
    assert isinstance(array._async_array.codec_pipeline, zec.CodecPipeline)
    assert array._async_array.codec_pipeline.native is not None
    return array


def same(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()


# --- reads -------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind", ["local", "memory"])
@pytest.mark.parametrize(("name", "select"), READS, ids=[n for n, _ in READS])
def test_reads_of_edge_chunks_stay_in_rust(
    name: str,
    select: Callable[[zarr.Array], Any],
    kind: str,
    layout: str,
    order: str,
    tmp_path: Path,
) -> None:
    store = make_store(kind, tmp_path)
    theirs = create(store, layout)
    if order == "F":
        theirs = zarr.open_array(store, path="a", config={"order": "F"})
    want = select(theirs)
    mine = ours(store, order=order)
    with zarr_pipeline_forbidden():
        got = select(mine)
    same(got, want)
    if order == "F" and np.ndim(want) > 1:
        assert np.asarray(got).flags.f_contiguous == np.asarray(want).flags.f_contiguous


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind", ["local", "memory"])
def test_negative_steps_are_refused_as_zarr_refuses_them(
    kind: str, layout: str, tmp_path: Path
) -> None:
    store = make_store(kind, tmp_path)
    theirs = create(store, layout)
    with pytest.raises(Exception) as zarrs_own:  # noqa: PT011 (whatever zarr raises)
        theirs[::-2, 6]
    mine = ours(store)
    with zarr_pipeline_forbidden(), pytest.raises(type(zarrs_own.value)):
        mine[::-2, 6]


def test_one_dimension_stepped_read(tmp_path: Path) -> None:
    """The issue's case: 10 `int32` in chunks of 4, every other one."""
    store = LocalStore(tmp_path)
    theirs = zarr.create_array(store, name="a", shape=(10,), chunks=(4,), dtype="int32")
    theirs[...] = np.arange(10, dtype="int32")
    want = [theirs[::2], theirs[9], theirs.oindex[[9, 8, 1]]]
    mine = ours(store)
    with zarr_pipeline_forbidden():
        got = [mine[::2], mine[9], mine.oindex[[9, 8, 1]]]
    for g, w in zip(got, want, strict=True):
        same(g, w)


# --- writes ------------------------------------------------------------------------

# Partial writes that touch the partial edge chunks: (what, value).
WRITES: list[tuple[str, Callable[[zarr.Array], None]]] = [
    ("element", lambda a: a.__setitem__((9, 6), 1)),
    ("element-integer-row", lambda a: a.__setitem__(9, np.arange(7, dtype="int32"))),
    ("integer-column", lambda a: a.__setitem__((slice(None), 5), -np.arange(10))),
    ("steps", lambda a: a.__setitem__((slice(None, None, 2), slice(1, None, 3)), 7)),
    ("steps-array", lambda a: a.__setitem__((slice(9, None, 4), slice(None)), [np.arange(7)])),
    ("edge-slices", lambda a: a.__setitem__((slice(8, None), slice(5, None)), 5)),
    ("oindex", lambda a: a.oindex.__setitem__(([9, 1, 8], [6, 0]), np.ones((3, 2)))),
    ("vindex", lambda a: a.vindex.__setitem__(([9, 8, 0], [6, 5, 6]), [11, 12, 13])),
    ("scalar-everywhere", lambda a: a.__setitem__(..., 4)),
    ("fill-everywhere-in-edge", lambda a: a.__setitem__((slice(8, None), slice(6, None)), 0)),
]


@pytest.mark.parametrize("fresh", [False, True], ids=["stored", "fresh"])
@pytest.mark.parametrize("kind", ["local", "memory"])
@pytest.mark.parametrize(("name", "write"), WRITES, ids=[n for n, _ in WRITES])
def test_partial_writes_of_edge_chunks_stay_in_rust(
    name: str,
    write: Callable[[zarr.Array], None],
    kind: str,
    fresh: bool,
    tmp_path: Path,
) -> None:
    """The same stored bytes as zarr's own pipeline writes, key by key,
    over an array written whole before (`stored`) or never (`fresh`)."""
    stores = [make_store(kind, tmp_path / "zarr"), make_store(kind, tmp_path / "ours")]
    for store in stores:
        if fresh:
            zarr.create_array(
                store, name="a", shape=SHAPE, chunks=(4, 3), dtype="int32", compressors=None
            )
        else:
            create(store, "chunked")
    write(zarr.open_array(stores[0], path="a"))
    mine = ours(stores[1])
    with zarr_pipeline_forbidden():
        write(mine)
    assert stored(stores[1]) == stored(stores[0])
    same(zarr.open_array(stores[1], path="a")[...], zarr.open_array(stores[0], path="a")[...])


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_single_element_write_into_the_edge_chunk(kind: str, tmp_path: Path) -> None:
    """The issue's case: `z[9] = 1` on 10 `int32` in chunks of 4."""
    stores = [make_store(kind, tmp_path / "zarr"), make_store(kind, tmp_path / "ours")]
    for store in stores:
        z = zarr.create_array(
            store, name="a", shape=(10,), chunks=(4,), dtype="int32", compressors=None
        )
        z[...] = np.arange(10, dtype="int32")
    zarr.open_array(stores[0], path="a")[9] = 1
    mine = ours(stores[1])
    with zarr_pipeline_forbidden():
        mine[9] = 1
        got = mine[...]
    same(got, zarr.open_array(stores[0], path="a")[...])
    assert stored(stores[1]) == stored(stores[0])


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_a_write_keeps_what_an_edge_chunk_stores_outside_the_array(
    kind: str, tmp_path: Path
) -> None:
    """An array shrunk by `resize` leaves values in its new edge chunk past
    the array's end; zarr's pipeline keeps them when it rewrites the chunk
    (growing the array shows them again), and so must this one."""
    stores = [make_store(kind, tmp_path / "zarr"), make_store(kind, tmp_path / "ours")]
    for store in stores:
        z = zarr.create_array(
            store, name="a", shape=(12,), chunks=(4,), dtype="int32", compressors=None
        )
        z[...] = np.arange(12, dtype="int32") + 100
        z.resize((10,))
    zarr.open_array(stores[0], path="a")[9] = 1
    mine = ours(stores[1])
    with zarr_pipeline_forbidden():
        mine[9] = 1
    assert stored(stores[1]) == stored(stores[0])


def grow(array: zarr.Array) -> list[Any]:
    """Grow `array` in place (zarr tells its pipeline nothing), write into
    its new edge chunks, and read it back."""
    array.resize((11,))
    array[9:] = [7, 8]
    array.append(np.arange(6, dtype="int32"))
    array.resize((15,))
    array[14] = 9
    return [array[::3], array.oindex[[14, 0, 10]], array[...]]


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_an_array_grown_in_place_stays_in_rust(kind: str, tmp_path: Path) -> None:
    """zarr's `resize` and `append` change the shape of an open array
    without a new pipeline: reads and writes past the shape the pipeline
    was made with."""
    stores = [make_store(kind, tmp_path / "zarr"), make_store(kind, tmp_path / "ours")]
    for store in stores:
        z = zarr.create_array(
            store, name="a", shape=(10,), chunks=(4,), dtype="int32", compressors=None
        )
        z[...] = np.arange(10, dtype="int32")
    want = grow(zarr.open_array(stores[0], path="a"))
    mine = ours(stores[1])
    with zarr_pipeline_forbidden():
        got = grow(mine)
    for g, w in zip(got, want, strict=True):
        same(g, w)
    assert stored(stores[1]) == stored(stores[0])


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_a_sharded_write_of_an_edge_shard_stays_in_rust(kind: str, tmp_path: Path) -> None:
    """Sharded chains are written by Rust too (their bytes are not
    promised to be zarr's: the same keys, and the values zarr reads back)."""
    stores = [make_store(kind, tmp_path / "zarr"), make_store(kind, tmp_path / "ours")]
    theirs = create(stores[0], "sharded")
    create(stores[1], "sharded")
    mine = ours(stores[1])
    theirs[9, 6] = 1
    with zarr_pipeline_forbidden():
        mine[9, 6] = 1
    assert stored(stores[1]).keys() == stored(stores[0]).keys()
    same(zarr.open_array(stores[1], path="a")[...], theirs[...])


# --- errors ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_a_chunk_zarrs_cannot_decode_is_an_error_not_a_reread(kind: str, tmp_path: Path) -> None:
    """A corrupt edge chunk of an array the pipeline reads: an error naming
    the chunk's key, raised without zarr's pipeline reading it again."""
    store = make_store(kind, tmp_path)
    create(store, "chunked")
    sync(store.set("a/c/2/2", default_buffer_prototype().buffer.from_bytes(b"short")))
    mine = ours(store)
    with zarr_pipeline_forbidden():
        with pytest.raises(ValueError, match="c/2/2"):
            mine[8:, ::2]
        with pytest.raises(ValueError, match="c/2/2"):
            mine[9, 6] = 1
    # Not under `raise` either: the same error, zarr's pipeline not asked.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BatchedCodecPipeline, "read", _forbidden)
        with pytest.raises(ValueError, match="c/2/2"):
            mine[::3]


def _forbidden(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("zarr's own codec pipeline ran")


def test_a_partial_shard_of_another_store_is_a_fallback_that_raise_catches(
    tmp_path: Path,
) -> None:
    """Parts of shards from a store Rust does not read itself (here a
    wrapper) go to zarr's pipeline, which fetches byte ranges: a real
    fallback, reported under `raise`, and right without it."""
    from zarr.storage import WrapperStore

    store = LocalStore(tmp_path)
    theirs = create(store, "sharded")
    wrapped = WrapperStore(store)
    mine = ours(wrapped)
    with zarr.config.set(STRICT), pytest.raises(zec.FallbackError):
        mine[8:, ::2]
    same(mine[8:, ::2], theirs[8:, ::2])
