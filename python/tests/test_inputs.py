"""The classes only read the chunk they are given: every result is a new
array, on every path (layouts, read-only input, the decode chain as zarr's
pipelines run it, encode through zarr). The hypothesis differential checks
the same for every layout it draws (`test_differential.run_both`)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
import zarr
from chunk_spec import spec
from zarr.core.buffer.cpu import NDBuffer

import zarrs_extension_codecs as zec

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
# Small (run inline) and 2 MiB decoded (large enough to be split, and to
# run on a worker thread).
SHAPES = [(4, 5), (512, 512)]


def reflectance(shape: tuple[int, ...]) -> np.ndarray:
    values = np.random.default_rng(0).uniform(-0.05, 1.0, size=shape)
    values.flat[::17] = np.nan
    return values


def layouts(arr: np.ndarray) -> dict[str, np.ndarray]:
    """`arr` as zarr may hand it to a codec, each one read-only too."""
    wide = np.repeat(arr, 2, axis=-1)
    found = {
        "c": arr.copy(),
        "big-endian": arr.astype(arr.dtype.newbyteorder(">")),
        "strided": wide[..., ::2],
        "fortran": np.asfortranarray(arr),
    }
    for name, value in list(found.items()):
        frozen = value.copy(order="K")
        frozen.setflags(write=False)
        found[f"{name}, read-only"] = frozen
    return found


def snapshot(arr: np.ndarray) -> tuple[Any, ...]:
    return arr.dtype.str, arr.strides, arr.flags.writeable, arr.tobytes()


def bits(buffer: NDBuffer) -> tuple[str, bytes]:
    arr = buffer.as_ndarray_like()
    return arr.dtype.str, np.ascontiguousarray(arr).tobytes()


def encoded(values: np.ndarray) -> np.ndarray:
    """`values` as stored, by zarr's own classes."""
    f64 = spec(values.shape, "float64")
    so, cv = zarr.codecs.ScaleOffset(**SCALE_OFFSET), zarr.codecs.CastValue(**CAST_VALUE)
    scaled = so._encode_sync(NDBuffer.from_ndarray_like(values), f64)
    return np.array(cv._encode_sync(scaled, f64).as_ndarray_like())


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout", list(layouts(np.zeros((2, 2)))))
@pytest.mark.parametrize("method", ["_encode_sync", "_decode_sync"])
def test_no_method_writes_its_input(shape: tuple[int, ...], layout: str, method: str) -> None:
    values = reflectance(shape)
    f64 = spec(shape, "float64")
    cases = [
        (zec.ScaleOffset(**SCALE_OFFSET), zarr.codecs.ScaleOffset(**SCALE_OFFSET), values),
        (
            zec.CastValue(**CAST_VALUE),
            zarr.codecs.CastValue(**CAST_VALUE),
            encoded(values) if method == "_decode_sync" else (values - -0.1) * 10000,
        ),
    ]
    for ours, theirs, source in cases:
        arr = layouts(source)[layout]
        before = snapshot(arr)
        got = getattr(ours, method)(NDBuffer.from_ndarray_like(arr), f64)
        assert snapshot(arr) == before
        assert not np.shares_memory(got.as_ndarray_like(), arr)
        # zarr's cast_value backend refuses big-endian input; the same values
        # in native order are its answer.
        theirs_in = (
            arr if isinstance(ours, zec.ScaleOffset) else arr.astype(arr.dtype.newbyteorder("="))
        )
        want = getattr(theirs, method)(NDBuffer.from_ndarray_like(theirs_in), f64)
        assert bits(got) == bits(want)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_decode_chain_leaves_the_cast_output_alone(shape: tuple[int, ...]) -> None:
    # As zarr's pipelines chain them; a caller may still hold the middle one.
    so, cv = zec.ScaleOffset(**SCALE_OFFSET), zec.CastValue(**CAST_VALUE)
    f64 = spec(shape, "float64")
    cast = cv._decode_sync(NDBuffer.from_ndarray_like(encoded(reflectance(shape))), f64)
    before = snapshot(cast.as_ndarray_like())
    for decoded in (
        so._decode_sync(cast, f64),
        asyncio.run(so._decode_single(cast, f64)),
    ):
        assert snapshot(cast.as_ndarray_like()) == before
        assert not np.shares_memory(decoded.as_ndarray_like(), cast.as_ndarray_like())
    # Decoding it again gives the same values (it was not consumed).
    assert bits(so._decode_sync(cast, f64)) == bits(decoded)


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("chunks", [(16, 16), (512, 512)])
def test_zarr_pipelines_hand_on_unchanged_arrays(
    monkeypatch: pytest.MonkeyPatch, pipeline: str, chunks: tuple[int, int]
) -> None:
    """Every array `CastValue`'s decode returns inside zarr's pipeline is
    still what it returned after the read (the `ScaleOffset` decode it goes
    on to made a new one)."""
    values = reflectance((1024, 512))
    with zarr.config.set({"codec_pipeline.path": PIPELINES[pipeline]}), zec.enable():
        arr = zarr.create_array(
            {},
            shape=values.shape,
            chunks=chunks,
            dtype="float64",
            filters=[zec.ScaleOffset(**SCALE_OFFSET), zec.CastValue(**CAST_VALUE)],
            compressors=None,
            fill_value=np.nan,
        )
        written = values.copy()
        arr[:] = written
        assert snapshot(written) == snapshot(values)
        returned: list[tuple[np.ndarray, tuple[Any, ...]]] = []
        original = zec.CastValue._decode_sync

        def spy(self: Any, chunk_array: NDBuffer, chunk_spec: Any) -> NDBuffer:
            result = original(self, chunk_array, chunk_spec)
            out = result.as_ndarray_like()
            returned.append((out, snapshot(out)))
            return result

        monkeypatch.setattr(zec.CastValue, "_decode_sync", spy)
        got = arr[:]
    assert len(returned) == (1024 // chunks[0]) * (512 // chunks[1])
    for out, before in returned:
        assert snapshot(out) == before
    theirs = zarr.create_array(
        {},
        shape=values.shape,
        chunks=chunks,
        dtype="float64",
        filters=[zarr.codecs.ScaleOffset(**SCALE_OFFSET), zarr.codecs.CastValue(**CAST_VALUE)],
        compressors=None,
        fill_value=np.nan,
    )
    theirs[:] = values
    assert got.tobytes() == theirs[:].tobytes()
