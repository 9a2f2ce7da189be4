"""This package's classes against zarr-python's own, in the same process.

Every example runs one codec method on both classes and requires the same
outcome: the same dtype (byte order included), shape and bytes, or an
exception of the same type. zarr's classes are the golden values; they are
reached through the subclasses' bases, so that swapping the classes into
zarr's modules (``zarr_upstream/conftest.py``) does not touch them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from chunk_spec import spec
from hypothesis import assume, currently_in_test_context, given
from hypothesis import note as hypothesis_note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from zarr.core.array_spec import ArraySpec
from zarr.core.dtype import get_data_type_from_native_dtype
from zarr_classes import ZarrCastValue, ZarrScaleOffset

import zarrs_extension_codecs as zec

DTYPES = [
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
]
ROUNDING = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]
SPECIAL_FLOATS = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0]
SPECIAL_STRINGS = ["NaN", "Infinity", "-Infinity"]

Outcome = tuple[Any, ...]


def note(text: str) -> None:
    """`hypothesis.note`, also usable from the plain tests below."""
    if currently_in_test_context():
        hypothesis_note(text)


def outcome(fn: Callable[[], Any]) -> Outcome:
    """What `fn` returns, as comparable bytes, or the type of what it
    raises. zarr's numpy arithmetic warns on overflow; the warnings are
    not part of the result."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            result = fn()
        except Exception as e:
            return ("raises", type(e))
    arr = np.asarray(result.as_ndarray_like()) if hasattr(result, "as_ndarray_like") else result
    return ("ok", arr.dtype.str, arr.shape, arr.tobytes())


def run_both(
    method: str,
    ours: Any,
    theirs: Any,
    arr: np.ndarray,
    chunk_spec: ArraySpec,
    theirs_arr: np.ndarray | None = None,
) -> Outcome:
    """`method` of both codecs on `arr` (zarr's on `theirs_arr` if given:
    the same values where zarr cannot take `arr` itself); they must agree."""
    proto = chunk_spec.prototype.nd_buffer
    theirs_in = arr if theirs_arr is None else theirs_arr
    expected = outcome(
        lambda: getattr(theirs, method)(proto.from_ndarray_like(theirs_in), chunk_spec)
    )
    before = (arr.dtype.str, arr.strides, arr.tobytes())
    got = outcome(lambda: getattr(ours, method)(proto.from_ndarray_like(arr), chunk_spec))
    note(f"{method}: zarr {expected[:3]} ours {got[:3]}")
    assert got == expected
    # The codecs only read their input, whatever its layout (and on failure).
    assert (arr.dtype.str, arr.strides, arr.tobytes()) == before
    return expected


def exact_integers(encode: bool, arr: np.ndarray, offset: int, scale: int) -> tuple[bool, bool]:
    """Whether every result, and every intermediate value, of the exact
    (unbounded) integer arithmetic lies in the range of `arr`'s type, with
    every decode exact."""
    info = np.iinfo(arr.dtype)
    results_fit = steps_fit = True
    for x in (int(v) for v in arr.reshape(-1)):
        if encode:
            step = x - offset
            result = step * scale
        elif x % scale:
            return False, False
        else:
            step = x // scale
            result = step + offset
        results_fit &= info.min <= result <= info.max
        steps_fit &= info.min <= step <= info.max
    return results_fit, steps_fit


def check_integers(
    method: str, ours: Any, theirs: Any, arr: np.ndarray, chunk_spec: ArraySpec
) -> None:
    """Integers against zarr, and against exact arithmetic where zarr is
    known to differ from it.

    zarr-python widens to int64, so where an int64 (or a large uint32)
    result overflows int64 it wraps silently and returns a wrong value;
    these classes raise `ValueError` there. And where a result fits but an
    intermediate value does not (`127 - (-1)` in int8 with scale -1; `-128 /
    -1` with offset -1), zarr returns the result and these classes raise
    `ValueError`, as the spec asks ("no implicit promotion")."""
    zdtype = chunk_spec.dtype
    offset = int(zdtype.from_json_scalar(theirs.offset, zarr_format=3))
    scale = int(zdtype.from_json_scalar(theirs.scale, zarr_format=3))
    results_fit, steps_fit = exact_integers(method == "_encode_sync", arr, offset, scale)
    if results_fit and steps_fit:
        run_both(method, ours, theirs, arr, chunk_spec)
        return
    proto = chunk_spec.prototype.nd_buffer
    got = outcome(lambda: getattr(ours, method)(proto.from_ndarray_like(arr), chunk_spec))
    assert got == ("raises", ValueError)
    expected = outcome(lambda: getattr(theirs, method)(proto.from_ndarray_like(arr), chunk_spec))
    note(f"{method}: zarr {expected[:3]}, exact results fit: {results_fit}")
    if results_fit:
        assert expected[0] == "ok"


def nan_parameter(codec: Any, chunk_spec: ArraySpec) -> bool:
    zdtype = chunk_spec.dtype
    return any(
        np.isnan(zdtype.from_json_scalar(v, zarr_format=3)) for v in (codec.offset, codec.scale)
    )


def check_all_nan(
    method: str, ours: Any, theirs: Any, arr: np.ndarray, chunk_spec: ArraySpec
) -> None:
    """A NaN offset or scale makes every result NaN, in both. Which NaN
    (sign, payload) comes out of an operation on two NaNs is the order in
    which the compiled code hands them to the CPU: numpy's and the crate's
    differ, so only NaN-ness is compared."""
    proto = chunk_spec.prototype.nd_buffer
    results = []
    for codec in (ours, theirs):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = getattr(codec, method)(proto.from_ndarray_like(arr), chunk_spec)
        results.append(np.asarray(out.as_ndarray_like()))
    assert results[0].dtype == results[1].dtype
    assert results[0].shape == results[1].shape
    assert np.isnan(results[0]).all()
    assert np.isnan(results[1]).all()


@st.composite
def layouts(draw: st.DrawFn, dtype: str, elements: st.SearchStrategy[Any] | None = None) -> Any:
    """An array of `dtype` as zarr may hand it to a codec: contiguous,
    big-endian, a strided view, Fortran order or 0-d."""
    base = np.dtype(dtype)
    kind = draw(st.sampled_from(["c", "big", "strided", "fortran", "scalar"]))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=2, max_side=12))
    if kind == "scalar":
        shape = ()
    if kind == "strided":
        shape = (*shape[:-1], shape[-1] * 2)
    arr = draw(hnp.arrays(base, shape, elements=elements))
    if kind == "big":
        arr = arr.astype(base.newbyteorder(">"))
    elif kind == "strided":
        arr = arr[..., ::2]
    elif kind == "fortran":
        arr = np.asfortranarray(arr)
    note(f"layout {kind}, dtype {arr.dtype.str}, shape {arr.shape}")
    return arr


def scalar_json(dtype: str) -> st.SearchStrategy[Any]:
    """An `offset` / `scale` as JSON: a number of the type, or for floats
    one of zarr's special strings."""
    np_dtype = np.dtype(dtype)
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        return st.one_of(
            st.integers(-3, 3),
            st.integers(int(info.min), int(info.max)),
        ).filter(lambda v: int(info.min) <= v <= int(info.max))
    width = np_dtype.itemsize * 8
    return st.one_of(
        st.sampled_from([0.5, 2.0, 0.1, 10.0, -4.0, 1.0, *SPECIAL_FLOATS]),
        st.floats(width=width),
        st.sampled_from(SPECIAL_STRINGS),
    )


@st.composite
def scale_offset_cases(draw: st.DrawFn) -> tuple[Any, ...]:
    dtype = draw(st.sampled_from(DTYPES))
    offset = draw(scalar_json(dtype))
    scale = draw(scalar_json(dtype))
    arr = draw(layouts(dtype))
    return dtype, offset, scale, arr


def validates(codec: Any, dtype: str, shape: tuple[int, ...]) -> Outcome:
    grid: Any = None  # neither codec reads it
    zdtype = get_data_type_from_native_dtype(np.dtype(dtype))
    return outcome(
        lambda: codec.validate(shape=shape, dtype=zdtype, chunk_grid=grid) or np.zeros(0)
    )


@given(scale_offset_cases())
def test_scale_offset_matches_zarr(case: tuple[Any, ...]) -> None:
    dtype, offset, scale, arr = case
    theirs, ours = (
        ZarrScaleOffset(offset=offset, scale=scale),
        zec.ScaleOffset(offset=offset, scale=scale),
    )
    assert ours.to_dict() == theirs.to_dict()
    valid = validates(theirs, dtype, arr.shape)
    assert validates(ours, dtype, arr.shape) == valid
    # zarr refuses the others when an array is created or opened.
    assume(valid[0] == "ok")
    chunk_spec = spec(arr.shape, dtype)
    for method in ("_encode_sync", "_decode_sync"):
        if np.issubdtype(arr.dtype, np.integer):
            check_integers(method, ours, theirs, arr, chunk_spec)
        elif nan_parameter(theirs, chunk_spec):
            check_all_nan(method, ours, theirs, arr, chunk_spec)
        else:
            run_both(method, ours, theirs, arr, chunk_spec)
    fill = arr.reshape(-1)[0].item() if arr.size else 0
    fill_spec = spec(arr.shape, dtype, fill)
    expected = outcome(lambda: np.asarray(theirs.resolve_metadata(fill_spec).fill_value))
    assert outcome(lambda: np.asarray(ours.resolve_metadata(fill_spec).fill_value)) == expected


def map_value(dtype: str) -> st.SearchStrategy[Any]:
    """A `scalar_map` key or value zarr accepts for `dtype`, mostly; the
    rest are refused by validation in both."""
    np_dtype = np.dtype(dtype)
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        return st.one_of(
            st.integers(-2, 2), st.sampled_from([int(info.min), int(info.max)]), st.integers()
        )
    return st.one_of(
        st.sampled_from([*SPECIAL_FLOATS, *SPECIAL_STRINGS, 1.5, -1.0, 255.0, 1e40]),
        st.floats(width=np_dtype.itemsize * 8),
        st.floats(),
    )


@st.composite
def cast_value_cases(draw: st.DrawFn) -> tuple[Any, ...]:
    source = draw(st.sampled_from(DTYPES))
    target = draw(st.sampled_from(DTYPES))
    rounding = draw(st.sampled_from(ROUNDING))
    out_of_range = draw(st.sampled_from([None, "clamp", "wrap"]))
    scalar_map: dict[str, list[tuple[Any, Any]]] | None = None
    if draw(st.booleans()):
        scalar_map = {
            "encode": draw(st.lists(st.tuples(map_value(source), map_value(target)), max_size=4)),
            "decode": draw(st.lists(st.tuples(map_value(target), map_value(source)), max_size=4)),
        }
    src = draw(layouts(source))
    encoded = draw(layouts(target))
    return source, target, rounding, out_of_range, scalar_map, src, encoded


@given(cast_value_cases())
def test_cast_value_matches_zarr(case: tuple[Any, ...]) -> None:
    source, target, rounding, out_of_range, scalar_map, src, encoded = case
    kwargs = {
        "data_type": target,
        "rounding": rounding,
        "out_of_range": out_of_range,
        "scalar_map": scalar_map,
    }
    theirs, ours = ZarrCastValue(**kwargs), zec.CastValue(**kwargs)
    assert ours.to_dict() == theirs.to_dict()
    valid = validates(theirs, source, src.shape)
    assert validates(ours, source, src.shape) == valid
    assume(valid[0] == "ok")
    # cast-value-rs (zarr's backend) refuses big-endian input with a TypeError;
    # these classes decode it. Compare with zarr on the same values in native order.
    theirs_src = src if src.dtype.isnative else src.astype(src.dtype.newbyteorder("="))
    run_both("_encode_sync", ours, theirs, src, spec(src.shape, source), theirs_src)
    theirs_enc = (
        encoded if encoded.dtype.isnative else encoded.astype(encoded.dtype.newbyteorder("="))
    )
    run_both("_decode_sync", ours, theirs, encoded, spec(encoded.shape, source), theirs_enc)
    fill = theirs_src.reshape(-1)[0].item() if src.size else 0
    fill_spec = spec(src.shape, source, fill)
    expected = outcome(lambda: np.asarray(theirs.resolve_metadata(fill_spec).fill_value))
    assert outcome(lambda: np.asarray(ours.resolve_metadata(fill_spec).fill_value)) == expected


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_scalar_map_float_keys_round_as_zarrs_backend(dtype: str) -> None:
    """A key or value between two elements of the type (1 + 2**-11 + 2**-40
    for float16) is rounded as zarr's backend rounds it."""
    x = 1 + 2**-11 + 2**-40
    src = np.array([1.0, 1 + 2**-10, x], dtype=dtype)
    kwargs = {"data_type": "uint8", "out_of_range": "clamp", "scalar_map": {"encode": [(x, 7)]}}
    chunk_spec = spec(src.shape, dtype)
    run_both("_encode_sync", zec.CastValue(**kwargs), ZarrCastValue(**kwargs), src, chunk_spec)
    kwargs = {"data_type": dtype, "scalar_map": {"encode": [(3, x)]}}
    chunk_spec = spec((1,), "int32")
    run_both(
        "_encode_sync",
        zec.CastValue(**kwargs),
        ZarrCastValue(**kwargs),
        np.array([3], dtype="int32"),
        chunk_spec,
    )


@pytest.mark.parametrize(
    ("method", "dtype", "offset", "scale", "values"),
    [
        ("_encode_sync", "int8", 0, 100, [0, 1, 2]),  # 200 out of int8
        ("_encode_sync", "uint8", 10, 1, [10, 5, 20]),  # 5 - 10 < 0
        ("_encode_sync", "uint64", 100, 1, [100, 50, 200]),
        ("_encode_sync", "int32", 0, 2**16, [2**16]),
        ("_decode_sync", "int8", 0, 2, [2, 3, 4]),  # 3 % 2 != 0
        ("_decode_sync", "int8", 100, 1, [0, 50, 100]),  # 200 out of int8
        ("_decode_sync", "uint64", 0, 3, [2**64 - 1, 2**64 - 2]),
    ],
)
def test_scale_offset_errors_match(
    method: str, dtype: str, offset: int, scale: int, values: list[int]
) -> None:
    arr = np.array(values, dtype=dtype)
    args = {"offset": offset, "scale": scale}
    result = run_both(
        method,
        zec.ScaleOffset(**args),
        ZarrScaleOffset(**args),
        arr,
        spec(arr.shape, dtype),
    )
    assert result == ("raises", ValueError)


@pytest.mark.parametrize(
    ("source", "target", "values", "kwargs"),
    [
        ("float64", "uint8", [np.nan], {}),
        ("float64", "uint8", [300.0], {}),
        ("float64", "int8", [np.inf], {"out_of_range": "clamp"}),
        ("int32", "uint8", [-1], {}),
        ("float64", "float16", [1e6], {}),
    ],
)
def test_cast_value_errors_match(
    source: str, target: str, values: list[Any], kwargs: dict[str, Any]
) -> None:
    arr = np.array(values, dtype=source)
    result = run_both(
        "_encode_sync",
        zec.CastValue(data_type=target, **kwargs),
        ZarrCastValue(data_type=target, **kwargs),
        arr,
        spec(arr.shape, source),
    )
    assert result == ("raises", ValueError)


@pytest.mark.parametrize(
    ("dtype", "offset", "scale", "values", "method", "zarrs_result"),
    [
        # (0 - 2**62) * 4 = -2**64 wraps to 0 in zarr's int64 arithmetic.
        ("int64", 2**62, 4, [0], "_encode_sync", [0]),
        # 127 - (-1) = 128 leaves int8 before * -1 brings it back.
        ("int8", -1, -1, [127], "_encode_sync", [-128]),
        # -128 / -1 = 128 leaves int8 before + (-1) brings it back.
        ("int8", -1, -1, [-128], "_decode_sync", [127]),
    ],
)
def test_integer_overflow_zarr_lets_through_is_an_error(
    dtype: str, offset: int, scale: int, values: list[int], method: str, zarrs_result: list[int]
) -> None:
    """The documented differences: a result or intermediate value outside
    the type is a `ValueError` here, where zarr-python returns a value."""
    arr = np.array(values, dtype=dtype)
    args = {"offset": offset, "scale": scale}
    chunk_spec = spec(arr.shape, dtype)
    buffer = chunk_spec.prototype.nd_buffer.from_ndarray_like
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        theirs = getattr(ZarrScaleOffset(**args), method)(buffer(arr), chunk_spec)
    assert np.asarray(theirs.as_ndarray_like()).tolist() == zarrs_result
    with pytest.raises(ValueError, match="outside the range of dtype"):
        getattr(zec.ScaleOffset(**args), method)(buffer(arr), chunk_spec)
