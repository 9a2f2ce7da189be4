"""The codecs' outputs (`_outputs`): `ScaleOffset` decodes in place the array
`CastValue`'s decode returned when zarr's pipeline is all that refers to it,
outputs are recycled once nothing refers to them, and never otherwise."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import zarr
from chunk_spec import spec
from zarr.core.buffer.cpu import NDBuffer

import zarrs_extension_codecs as zec
from zarrs_extension_codecs import _outputs

SCALE_OFFSET = {"offset": -0.1, "scale": 10000}
CAST_VALUE = {
    "data_type": "uint16",
    "rounding": "nearest-even",
    "out_of_range": "clamp",
    "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]},
}
PIPELINES = {
    "batched": "zarr.core.codec_pipeline.BatchedCodecPipeline",
    "fused": "zarr.core.codec_pipeline.FusedCodecPipeline",
}


def codecs() -> tuple[zec.ScaleOffset, zec.CastValue]:
    return zec.ScaleOffset(**SCALE_OFFSET), zec.CastValue(**CAST_VALUE)


# A small chunk (kept only to be taken over) and one of 2 MiB decoded (also
# kept for reuse, so that `_recent` refers to it too).
SHAPES = [(4, 5), (512, 512)]


def stored(shape: tuple[int, ...] = (4, 5)) -> NDBuffer:
    """uint16 values as stored, 0 (NaN) among them."""
    values = (np.arange(np.prod(shape)) * 97 % 65536).astype("uint16").reshape(shape)
    return NDBuffer.from_ndarray_like(values)


def expected(raw: NDBuffer) -> np.ndarray:
    """The float64 values zarr's own classes decode from `raw`."""
    so = zarr.codecs.ScaleOffset(**SCALE_OFFSET)
    cv = zarr.codecs.CastValue(**CAST_VALUE)
    f64 = spec(raw.shape, "float64")
    cast = cv._decode_sync(raw, f64)
    return np.array(so._decode_sync(cast, f64).as_ndarray_like())


@pytest.fixture(autouse=True)
def _nothing_kept() -> Iterator[None]:
    """Each test starts with no kept outputs (another test's could match)."""
    _outputs.forget_all()
    yield
    _outputs.forget_all()


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each `ScaleOffset` decode took its input over."""
    calls: list[bool] = []
    original = _outputs.take_over

    def spy(chunk_array: Any) -> Any:
        result = original(chunk_array)
        calls.append(result is not None)
        return result

    monkeypatch.setattr("zarrs_extension_codecs._scale_offset.take_over", spy)
    return calls


def hold_on(arr: np.ndarray, how: str) -> Any:
    """Something that keeps `arr` reachable (or, "read-only", marks it so)."""
    if how == "name":
        return arr
    if how == "view":
        return arr[1:]
    if how == "memoryview":
        return memoryview(arr)
    if how == "weakref":
        return weakref.ref(arr)
    assert how == "read-only"
    arr.setflags(write=False)
    return None


def newest_kept() -> int:
    """The id of the array kept last. While `_recent` holds it, no other live
    array has this id (a weak reference to it would keep it from reuse)."""
    return id(_outputs._recent[-1])


def test_counts_work_here() -> None:
    # Otherwise nothing below is exercised: both features are off.
    assert _outputs._COUNTS is not None


@pytest.mark.parametrize("shape", SHAPES)
def test_decode_chain_runs_in_place(taken: list[bool], shape: tuple[int, ...]) -> None:
    so, cv = codecs()
    raw = stored(shape)
    f64 = spec(raw.shape, "float64")
    cast = cv._decode_sync(raw, f64)
    address = cast.as_ndarray_like().ctypes.data
    result = so._decode_sync(cast, f64)
    assert taken == [True]
    assert result is cast
    assert result.as_ndarray_like().ctypes.data == address
    np.testing.assert_array_equal(result.as_ndarray_like(), expected(raw))


@pytest.mark.parametrize("shape", SHAPES)
def test_an_array_is_taken_over_once(taken: list[bool], shape: tuple[int, ...]) -> None:
    so, cv = codecs()
    raw = stored(shape)
    f64 = spec(raw.shape, "float64")
    cast = cv._decode_sync(raw, f64)
    so._decode_sync(cast, f64)
    # The buffer was consumed; decoding it again is no longer in place
    # (the values are then decoded twice, as a caller asked).
    so._decode_sync(cast, f64)
    assert taken == [True, False]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("hold", ["name", "view", "memoryview", "weakref", "read-only"])
def test_an_array_seen_elsewhere_is_not_touched(
    taken: list[bool], hold: str, shape: tuple[int, ...]
) -> None:
    so, cv = codecs()
    raw = stored(shape)
    f64 = spec(raw.shape, "float64")
    cast = cv._decode_sync(raw, f64)
    arr = cast.as_ndarray_like()
    held = hold_on(arr, hold)
    before = np.array(arr)
    del arr
    result = so._decode_sync(cast, f64)
    assert taken == [False]
    assert result is not cast
    np.testing.assert_array_equal(cast.as_ndarray_like(), before)
    np.testing.assert_array_equal(result.as_ndarray_like(), expected(raw))
    del held


def test_arrays_not_made_by_a_decode_are_not_touched(taken: list[bool]) -> None:
    so, _ = codecs()
    values = np.linspace(-0.1, 0.5, 20).reshape(4, 5)
    mine = NDBuffer.from_ndarray_like(values.copy())
    result = so._decode_sync(mine, spec((4, 5), "float64"))
    assert taken == [False]
    np.testing.assert_array_equal(mine.as_ndarray_like(), values)
    assert result is not mine


def test_encode_never_takes_its_input_over(taken: list[bool]) -> None:
    so, cv = codecs()
    raw = stored()
    f64 = spec(raw.shape, "float64")
    decoded = so._decode_sync(cv._decode_sync(raw, f64), f64)
    before = np.array(decoded.as_ndarray_like())
    so._encode_sync(decoded, f64)
    np.testing.assert_array_equal(decoded.as_ndarray_like(), before)
    assert taken == [True]


def test_a_recycled_cast_output_is_no_longer_to_be_taken_over(taken: list[bool]) -> None:
    so, cv = codecs()
    raw = stored((512, 512))
    f64 = spec(raw.shape, "float64")
    # A CastValue decode output, never passed on: still registered for taking over.
    cast = cv._decode_sync(raw, f64)
    assert newest_kept() == id(cast.as_ndarray_like())
    del cast
    recycled = newest_kept()
    # Recycled as the output of an encode that the caller keeps ...
    encoded = so._encode_sync(NDBuffer.from_ndarray_like(np.ones((512, 512))), f64)
    assert id(encoded.as_ndarray_like()) == recycled
    before = np.array(encoded.as_ndarray_like())
    # ... which a decode must not then overwrite.
    so._decode_sync(encoded, f64)
    assert taken == [False]
    np.testing.assert_array_equal(encoded.as_ndarray_like(), before)


def test_few_outputs_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    so, cv = codecs()
    raw = stored((512, 512))  # 2 MiB decoded
    f64 = spec(raw.shape, "float64")
    held = [so._decode_sync(cv._decode_sync(raw, f64), f64) for _ in range(3 * _outputs.MAX_ARRAYS)]
    assert len(_outputs._recent) == _outputs.MAX_ARRAYS
    monkeypatch.setattr(_outputs, "max_bytes", 5 << 20)
    held += [so._decode_sync(cv._decode_sync(raw, f64), f64) for _ in range(3)]
    assert sum(a.nbytes for a in _outputs._recent) <= 5 << 20
    del held


def big(shape: tuple[int, ...] = (512, 512), dtype: str = "float64") -> NDBuffer:
    """Values of at least `_outputs.MIN_BYTES`, as a user holds them."""
    values = np.linspace(-0.1, 6.4, np.prod(shape)).reshape(shape).astype(dtype)
    return NDBuffer.from_ndarray_like(values)


def test_an_output_nobody_holds_is_recycled() -> None:
    so, _ = codecs()
    f64 = spec((512, 512), "float64")
    first = so._encode_sync(big(), f64)
    del first
    kept = newest_kept()
    # Other values into the recycled array: every element written anew, as
    # zarr's own class writes them.
    values = NDBuffer.from_ndarray_like(np.linspace(3.0, -2.0, 512 * 512).reshape(512, 512))
    again = so._encode_sync(values, f64)
    assert id(again.as_ndarray_like()) == kept
    theirs = zarr.codecs.ScaleOffset(**SCALE_OFFSET)._encode_sync(values, f64)
    assert again.as_ndarray_like().tobytes() == theirs.as_ndarray_like().tobytes()


@pytest.mark.parametrize("hold", ["buffer", "name", "view", "memoryview", "read-only"])
def test_an_output_still_held_is_not_recycled(hold: str) -> None:
    so, _ = codecs()
    f64 = spec((512, 512), "float64")
    first = so._encode_sync(big(), f64)
    arr = first.as_ndarray_like()
    address = arr.ctypes.data
    before = np.array(arr)
    held = first if hold == "buffer" else hold_on(arr, hold)
    del first, arr
    kept = newest_kept()
    # Different values into an array of the same shape and dtype.
    other = so._encode_sync(NDBuffer.from_ndarray_like(np.zeros((512, 512))), f64)
    assert id(other.as_ndarray_like()) != kept
    if hold == "read-only":
        return
    assert other.as_ndarray_like().ctypes.data != address
    reach = {
        "buffer": lambda: held.as_ndarray_like(),
        "name": lambda: held,
        "view": lambda: held.base,
        "memoryview": lambda: held.obj,
    }[hold]()
    np.testing.assert_array_equal(reach, before)


def test_a_weakly_held_output_is_not_recycled() -> None:
    so, _ = codecs()
    f64 = spec((512, 512), "float64")
    first = so._encode_sync(big(), f64)
    watcher = weakref.ref(first.as_ndarray_like())
    before = np.array(first.as_ndarray_like())
    del first
    other = so._encode_sync(NDBuffer.from_ndarray_like(np.zeros((512, 512))), f64)
    assert other.as_ndarray_like() is not watcher()
    np.testing.assert_array_equal(watcher(), before)


@pytest.mark.parametrize(
    ("shape", "dtype"), [((256, 1024), "float64"), ((512, 512), "float32"), ((512, 512), "int64")]
)
def test_outputs_of_another_shape_or_dtype_are_not_recycled(
    shape: tuple[int, ...], dtype: str
) -> None:
    first = zec.ScaleOffset(offset=0, scale=1)._encode_sync(big(), spec((512, 512), "float64"))
    del first
    kept = newest_kept()
    other = zec.ScaleOffset(offset=0, scale=1)._encode_sync(big(shape, dtype), spec(shape, dtype))
    assert other.as_ndarray_like().shape == shape
    assert other.as_ndarray_like().dtype == np.dtype(dtype)
    assert id(other.as_ndarray_like()) != kept


def test_release_memory_lets_go_of_kept_outputs() -> None:
    so, _ = codecs()
    first = so._encode_sync(big(), spec((512, 512), "float64"))
    kept = weakref.ref(first.as_ndarray_like())
    del first
    assert kept() is not None
    zec.release_memory()
    gc.collect()
    assert kept() is None


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("chunks", [(16, 16), (512, 512)])
def test_zarr_pipelines_decode_in_place(
    tmp_path: Any, taken: list[bool], pipeline: str, chunks: tuple[int, int]
) -> None:
    shape = (chunks[0] * 4, chunks[1] * 3)
    data = np.linspace(-0.1, 6.4, shape[0] * shape[1]).reshape(shape)
    data[3, 4] = np.nan
    with zarr.config.set({"codec_pipeline.path": PIPELINES[pipeline]}):
        with zec.disable():
            arr = zarr.create_array(
                tmp_path / "a.zarr",
                shape=data.shape,
                chunks=chunks,
                dtype="float64",
                filters=[
                    zarr.codecs.ScaleOffset(**SCALE_OFFSET),
                    zarr.codecs.CastValue(**CAST_VALUE),
                ],
                compressors=None,
            )
            arr[...] = data
            theirs = arr[...]
        with zec.enable():
            ours = zarr.open_array(tmp_path / "a.zarr", mode="r")
            first = ours[...]
            again = ours[...]  # now into recycled outputs
    np.testing.assert_array_equal(first, theirs)
    np.testing.assert_array_equal(again, theirs)
    assert len(taken) == 24
    assert all(taken)


def test_kept_outputs_can_be_turned_off() -> None:
    code = (
        "import numpy as np\n"
        "from zarrs_extension_codecs import _outputs\n"
        "out = _outputs.new_output((512, 512), np.dtype('float64'))\n"
        "_outputs.returned(out)\n"
        "print(_outputs.max_bytes, len(_outputs._recent))"
    )
    env = os.environ | {"ZARRS_EXTENSION_CODECS_KEEP_MIB": "0"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    )
    assert out.stdout.split() == ["0", "0"]


def test_a_child_forked_while_the_lock_is_held_does_not_wait_for_it() -> None:
    held, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with _outputs._lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    held.wait(10)
    try:
        with warnings.catch_warnings():
            # Python warns about fork() in a process with threads: that is the case here.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            # The child: the lock's holder does not exist here.
            try:
                _outputs.new_output((512, 512), np.dtype("float64"))
                _outputs.forget_all()
            finally:
                os._exit(0)
        deadline = time.monotonic() + 20
        while (waited := os.waitpid(pid, os.WNOHANG)) == (0, 0) and time.monotonic() < deadline:
            time.sleep(0.01)
        if waited == (0, 0):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        assert waited[0] == pid, "the child waited for a lock nobody would release"
        assert os.waitstatus_to_exitcode(waited[1]) == 0
    finally:
        release.set()
        holder.join()
