"""The codecs' outputs (`_outputs`): `ScaleOffset` decodes in place the array
`CastValue`'s decode returned when zarr's pipeline is all that refers to it,
outputs are recycled once nothing refers to them, and never otherwise."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import zarr
from zarr.core.array_spec import ArrayConfig, ArraySpec
from zarr.core.buffer import default_buffer_prototype
from zarr.core.buffer.cpu import NDBuffer
from zarr.core.dtype import parse_dtype

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


def spec(dtype: str, shape: tuple[int, ...]) -> ArraySpec:
    return ArraySpec(
        shape=shape,
        dtype=parse_dtype(dtype, zarr_format=3),
        fill_value=0,
        config=ArrayConfig.from_dict({}),
        prototype=default_buffer_prototype(),
    )


def codecs() -> tuple[zec.ScaleOffset, zec.CastValue]:
    return zec.ScaleOffset(**SCALE_OFFSET), zec.CastValue(**CAST_VALUE)


def stored(shape: tuple[int, ...] = (4, 5)) -> NDBuffer:
    """uint16 values as stored, 0 (NaN) among them."""
    values = np.arange(np.prod(shape), dtype="uint16").reshape(shape) * 97
    return NDBuffer.from_ndarray_like(values)


def expected(raw: NDBuffer) -> np.ndarray:
    """The float64 values zarr's own classes decode from `raw`."""
    so = zarr.codecs.ScaleOffset(**SCALE_OFFSET)
    cv = zarr.codecs.CastValue(**CAST_VALUE)
    f64 = spec("float64", raw.shape)
    cast = cv._decode_sync(raw, f64)
    return np.array(so._decode_sync(cast, f64).as_ndarray_like())


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


def test_decode_chain_runs_in_place(taken: list[bool]) -> None:
    so, cv = codecs()
    raw = stored()
    f64 = spec("float64", raw.shape)
    cast = cv._decode_sync(raw, f64)
    address = cast.as_ndarray_like().ctypes.data
    result = so._decode_sync(cast, f64)
    assert taken == [True]
    assert result is cast
    assert result.as_ndarray_like().ctypes.data == address
    np.testing.assert_array_equal(result.as_ndarray_like(), expected(raw))


def test_an_array_is_taken_over_once(taken: list[bool]) -> None:
    so, cv = codecs()
    raw = stored()
    f64 = spec("float64", raw.shape)
    cast = cv._decode_sync(raw, f64)
    so._decode_sync(cast, f64)
    # The buffer was consumed; decoding it again is no longer in place
    # (the values are then decoded twice, as a caller asked).
    so._decode_sync(cast, f64)
    assert taken == [True, False]


@pytest.mark.parametrize("hold", ["name", "view", "memoryview"])
def test_an_array_seen_elsewhere_is_not_touched(taken: list[bool], hold: str) -> None:
    so, cv = codecs()
    raw = stored()
    f64 = spec("float64", raw.shape)
    cast = cv._decode_sync(raw, f64)
    arr = cast.as_ndarray_like()
    held: Any = {"name": arr, "view": arr[1:], "memoryview": memoryview(arr)}[hold]
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
    result = so._decode_sync(mine, spec("float64", (4, 5)))
    assert taken == [False]
    np.testing.assert_array_equal(mine.as_ndarray_like(), values)
    assert result is not mine


def test_encode_never_takes_its_input_over(taken: list[bool]) -> None:
    so, cv = codecs()
    raw = stored()
    f64 = spec("float64", raw.shape)
    decoded = so._decode_sync(cv._decode_sync(raw, f64), f64)
    before = np.array(decoded.as_ndarray_like())
    so._encode_sync(decoded, f64)
    np.testing.assert_array_equal(decoded.as_ndarray_like(), before)
    assert taken == [True]


def test_few_outputs_are_kept() -> None:
    so, cv = codecs()
    raw = stored((512, 512))
    f64 = spec("float64", raw.shape)
    held = [so._decode_sync(cv._decode_sync(raw, f64), f64) for _ in range(3 * _outputs.MAX_ARRAYS)]
    assert len(_outputs._recent) <= _outputs.MAX_ARRAYS
    assert sum(a.nbytes for a in _outputs._recent) <= _outputs.MAX_BYTES
    del held


def big(shape: tuple[int, ...] = (512, 512)) -> NDBuffer:
    """float64 values of at least `_outputs.MIN_BYTES`, as a user holds them."""
    return NDBuffer.from_ndarray_like(np.linspace(-0.1, 6.4, np.prod(shape)).reshape(shape))


def test_an_output_nobody_holds_is_recycled() -> None:
    so, _ = codecs()
    f64 = spec("float64", (512, 512))
    values = big()
    first = so._encode_sync(values, f64)
    address = first.as_ndarray_like().ctypes.data
    expected_bits = np.array(first.as_ndarray_like())
    del first
    again = so._encode_sync(values, f64)
    assert again.as_ndarray_like().ctypes.data == address
    np.testing.assert_array_equal(again.as_ndarray_like(), expected_bits)


@pytest.mark.parametrize("hold", ["buffer", "name", "view", "memoryview"])
def test_an_output_still_held_is_not_recycled(hold: str) -> None:
    so, _ = codecs()
    f64 = spec("float64", (512, 512))
    first = so._encode_sync(big(), f64)
    arr = first.as_ndarray_like()
    before = np.array(arr)
    held: Any = {"buffer": first, "name": arr, "view": arr[1:], "memoryview": memoryview(arr)}[hold]
    del first, arr
    # Different values into an array of the same shape and dtype.
    other = so._encode_sync(NDBuffer.from_ndarray_like(np.zeros((512, 512))), f64)
    assert other.as_ndarray_like().ctypes.data != before.ctypes.data
    kept = {
        "buffer": lambda: held.as_ndarray_like(),
        "name": lambda: held,
        "view": lambda: held.base,
        "memoryview": lambda: held.obj,
    }[hold]()
    np.testing.assert_array_equal(kept, before)


def test_outputs_of_another_shape_or_dtype_are_not_recycled() -> None:
    so, _ = codecs()
    first = so._encode_sync(big((512, 512)), spec("float64", (512, 512)))
    address = first.as_ndarray_like().ctypes.data
    del first
    other = so._encode_sync(big((256, 1024)), spec("float64", (256, 1024)))
    assert other.as_ndarray_like().shape == (256, 1024)
    assert other.as_ndarray_like().ctypes.data != address


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_zarr_pipelines_decode_in_place(tmp_path: Any, taken: list[bool], pipeline: str) -> None:
    data = np.linspace(-0.1, 6.4, 64 * 48).reshape(64, 48)
    data[3, 4] = np.nan
    with zarr.config.set({"codec_pipeline.path": PIPELINES[pipeline]}):
        with zec.disable():
            arr = zarr.create_array(
                tmp_path / "a.zarr",
                shape=data.shape,
                chunks=(16, 16),
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
            ours = zarr.open_array(tmp_path / "a.zarr", mode="r")[...]
    np.testing.assert_array_equal(ours, theirs)
    assert len(taken) == 12
    assert all(taken)


@pytest.fixture(autouse=True)
def _nothing_kept() -> Iterator[None]:
    """Each test starts with no kept outputs (another test's could match)."""
    _outputs.forget_all()
    yield
    _outputs.forget_all()


def test_release_memory_lets_go_of_kept_outputs() -> None:
    so, _ = codecs()
    first = so._encode_sync(big(), spec("float64", (512, 512)))
    kept = weakref.ref(first.as_ndarray_like())
    del first
    assert kept() is not None
    zec.release_memory()
    gc.collect()
    assert kept() is None
