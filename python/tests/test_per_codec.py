"""What the classes work out once per codec (parsed offset and scale, cast
plans) belongs to that codec alone and goes with it."""

from __future__ import annotations

import gc

import numpy as np
import zarr
from chunk_spec import spec
from zarr.core.buffer.cpu import NDBuffer

import zarrs_extension_codecs as zec
from zarrs_extension_codecs import _per_codec


def bits(buffer: NDBuffer) -> bytes:
    return np.ascontiguousarray(buffer.as_ndarray_like()).tobytes()


def test_equal_but_different_offsets_are_not_confused() -> None:
    # 0.0 == -0.0, but -0.0 + -0.0 is -0.0 and -0.0 + 0.0 is 0.0.
    values = NDBuffer.from_ndarray_like(np.array([-0.0, 1.5], dtype="float64"))
    for first, second in [(0.0, -0.0), (-0.0, 0.0)]:
        for offset in (first, second):
            ours = zec.ScaleOffset(offset=offset, scale=1)._decode_sync(
                values, spec((2,), "float64")
            )
            theirs = zarr.codecs.ScaleOffset(offset=offset, scale=1)._decode_sync(
                values, spec((2,), "float64")
            )
            assert bits(ours) == bits(theirs)


def test_scalar_maps_equal_but_different_are_not_confused() -> None:
    # Mapping 5 to 0.0 or to -0.0: equal values, different bits written.
    values = NDBuffer.from_ndarray_like(np.array([5, 1], dtype="int8"))
    for target in (0.0, -0.0, 0.0):
        config = {"data_type": "float32", "scalar_map": {"encode": [[5, target]]}}
        ours = zec.CastValue(**config)._encode_sync(values, spec((2,), "int8"))
        theirs = zarr.codecs.CastValue(**config)._encode_sync(values, spec((2,), "int8"))
        assert bits(ours) == bits(theirs)
        assert np.signbit(ours.as_ndarray_like()[0]) == np.signbit(target)


def test_one_codec_serves_several_data_types() -> None:
    codec = zec.ScaleOffset(offset=1, scale=2)
    for dtype in ("float64", "int16", "float32", "int16"):
        values = NDBuffer.from_ndarray_like(np.arange(6, dtype=dtype) * 2)
        ours = codec._decode_sync(values, spec((6,), dtype))
        theirs = zarr.codecs.ScaleOffset(offset=1, scale=2)._decode_sync(values, spec((6,), dtype))
        assert bits(ours) == bits(theirs)
        assert ours.as_ndarray_like().dtype == np.dtype(dtype)


def test_what_is_kept_goes_with_the_codec() -> None:
    gc.collect()
    before = len(_per_codec._memos)
    for _ in range(50):
        codec = zec.CastValue(data_type="uint8")
        codec._encode_sync(
            NDBuffer.from_ndarray_like(np.arange(4, dtype="float64")), spec((4,), "float64")
        )
    del codec
    gc.collect()
    assert len(_per_codec._memos) == before


def test_encode_and_decode_maps_are_not_confused() -> None:
    # Same dtype both ways, so only the direction tells the plans apart.
    config = {
        "data_type": "float64",
        "scalar_map": {"encode": [[1.0, 2.0]], "decode": [[2.0, 5.0]]},
    }
    values = NDBuffer.from_ndarray_like(np.array([1.0, 2.0, 3.0]))
    f64 = spec((3,), "float64")
    ours, theirs = zec.CastValue(**config), zarr.codecs.CastValue(**config)
    for _ in range(2):
        assert bits(ours._encode_sync(values, f64)) == bits(theirs._encode_sync(values, f64))
        assert bits(ours._decode_sync(values, f64)) == bits(theirs._decode_sync(values, f64))
    np.testing.assert_array_equal(ours._decode_sync(values, f64).as_ndarray_like(), [1, 5, 3])
