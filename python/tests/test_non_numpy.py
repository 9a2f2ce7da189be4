"""A chunk that is not a numpy array (CuPy's, with `zarr.config.enable_gpu()`)
goes to zarr's own arithmetic: the classes then do exactly what zarr's do.

No GPU here: `DeviceArray` stands in for a CuPy array. Like CuPy's, it is
not a numpy array, refuses implicit conversion to one (`__array__` raises
TypeError), and takes part in numpy's functions and ufuncs through
`__array_function__` / `__array_ufunc__`, returning arrays of its own kind.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
import zarr
from chunk_spec import spec
from zarr.core.buffer.cpu import NDBuffer

import zarrs_extension_codecs as zec


def unwrap(value: Any) -> Any:
    if isinstance(value, DeviceArray):
        return value.host
    if isinstance(value, list | tuple):
        return type(value)(unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    return value


def wrap(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return DeviceArray(value)
    if isinstance(value, tuple):
        return tuple(wrap(v) for v in value)
    return value


class DeviceArray:
    """An array in memory numpy cannot see (as far as its callers know)."""

    def __init__(self, host: np.ndarray) -> None:
        self.host = host

    def __array__(self, *_: Any, **__: Any) -> np.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed.")

    def __array_namespace__(self, api_version: str | None = None) -> Any:
        return np

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return wrap(getattr(ufunc, method)(*unwrap(inputs), **unwrap(kwargs)))

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return wrap(func(*unwrap(args), **unwrap(kwargs)))

    def __getattr__(self, name: str) -> Any:
        # dtype, shape, size, astype, reshape, min, max, ...
        found = getattr(self.host, name)
        if callable(found):
            return lambda *a, **k: wrap(found(*unwrap(a), **unwrap(k)))
        return found

    def __getitem__(self, key: Any) -> Any:
        return wrap(self.host[unwrap(key)])

    def __len__(self) -> int:
        return len(self.host)

    def get(self) -> np.ndarray:
        """Back to host memory (as CuPy's `get`)."""
        return self.host


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "eq", "ne", "lt", "gt"):
    _ufunc = {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "truediv": np.true_divide,
        "floordiv": np.floor_divide,
        "mod": np.remainder,
        "eq": np.equal,
        "ne": np.not_equal,
        "lt": np.less,
        "gt": np.greater,
    }[_name]
    setattr(DeviceArray, f"__{_name}__", lambda self, other, f=_ufunc: f(self, other))
    setattr(DeviceArray, f"__r{_name}__", lambda self, other, f=_ufunc: f(other, self))


def outcome(codec: Any, method: str, arr: np.ndarray, dtype: str) -> tuple[Any, ...]:
    """What `method` of `codec` gives for `arr` as a `DeviceArray`: its
    type, dtype and values, or the type of what it raises."""
    buffer = NDBuffer(DeviceArray(arr.copy()))
    try:
        if method.endswith("_single"):
            result = asyncio.run(getattr(codec, method)(buffer, spec(arr.shape, dtype)))
        else:
            result = getattr(codec, method)(buffer, spec(arr.shape, dtype))
    except Exception as e:
        return ("raises", type(e))
    got = result.as_ndarray_like()
    host = got.get() if isinstance(got, DeviceArray) else got
    return (type(got).__name__, got.dtype.str, np.asarray(host).tobytes())


METHODS = ["_encode_sync", "_decode_sync", "_encode_single", "_decode_single"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    ("dtype", "values"),
    [
        ("float64", [0.5, -1.25, np.nan, 3e8]),
        ("int16", [0, 20, -40, 100]),
        ("int16", [1, 20, -40, 100]),  # decode: 1 is not a multiple of scale 2
    ],
)
def test_scale_offset_takes_zarrs_arithmetic(method: str, dtype: str, values: list[Any]) -> None:
    arr = np.array(values, dtype=dtype)
    config = {"offset": 3, "scale": 2}
    ours = outcome(zec.ScaleOffset(**config), method, arr, dtype)
    theirs = outcome(zarr.codecs.ScaleOffset(**config), method, arr, dtype)
    assert ours == theirs
    if not (method.startswith("_decode") and values[0] == 1):
        # zarr's arithmetic works here: so do ours, and the result stays on
        # the device.
        assert ours[0] == "DeviceArray"


@pytest.mark.parametrize("method", METHODS)
def test_cast_value_does_what_zarrs_does(method: str) -> None:
    # zarr's own cast_value hands the chunk to its numpy backend: whatever
    # that makes of a device array, ours does the same.
    config = {"data_type": "uint8", "rounding": "nearest-even", "out_of_range": "clamp"}
    arr = np.array([0.4, 2.5, 300.0])
    ours = outcome(zec.CastValue(**config), method, arr, "float64")
    theirs = outcome(zarr.codecs.CastValue(**config), method, arr, "float64")
    assert ours == theirs


def test_the_kernels_are_not_reached(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("a device array reached the kernels")

    monkeypatch.setattr(zec._scale_offset._native, "scale_offset", refuse)
    arr = np.arange(6, dtype="float64")
    for method in METHODS:
        assert outcome(zec.ScaleOffset(offset=1, scale=2), method, arr, "float64")[0] == (
            "DeviceArray"
        )
