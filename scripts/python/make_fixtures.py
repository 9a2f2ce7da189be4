#!/usr/bin/env python3
"""Write the zarr-python reference fixtures for the `scale_offset` and `cast_value` codecs.

    bash scripts/python/setup_venv.sh
    .venv/bin/python scripts/python/make_fixtures.py [OUT_DIR]
    .venv/bin/python scripts/python/make_fixtures.py --check [DIR]

Deletes and re-creates OUT_DIR (default fixtures/zarr-python/). For each fixture NAME it writes:

    NAME.zarr/            a Zarr v3 store written by zarr-python (LocalStore); its zarr.json is
                          exactly what zarr-python wrote
    NAME.expected.bin     what zarr-python decodes when it reads the whole array (raw
                          little-endian bytes, C order)
    NAME.expected.json    shape, data_type, fill_value (as in zarr.json), codecs_summary,
                          subsets, stored chunk keys, notes
    NAME.input.bin        the array that was written (unwritten regions hold the fill value),
                          raw little-endian bytes, C order
    NAME.input.json       {"shape": [...], "data_type": "..."} for NAME.input.bin

fixtures/zarr-python/decode_errors/ holds stores that zarr-python writes but then refuses to
read back (NAME.zarr + NAME.expected.json with the error text; no expected.bin).

With --check it writes into a temporary directory instead and fails (exit 1, naming the
files) unless DIR (default fixtures/zarr-python/) holds exactly the same files, byte for byte.

The data are deterministic: every fixture has its own seeded numpy Generator, and the data
use only operations that round the same on every CPU (no numpy transcendental functions,
whose SIMD kernels differ by an ulp between machines: see `pow10`).
"""

from __future__ import annotations

import contextlib
import decimal
import io
import json
import math
import shutil
import sys
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import zarr
from zarr.codecs import BytesCodec, CastValue, ScaleOffset, ShardingCodec

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zarr_common as zc

# zarr-python warns that sharding disables partial reads/writes; irrelevant here.
warnings.filterwarnings("ignore", message="Combining a `sharding_indexed` codec")

REPO_ROOT = Path(__file__).resolve().parents[2]
OUT = REPO_ROOT / "fixtures" / "zarr-python"

NAN_TO_0 = {"encode": [("NaN", 0)], "decode": [(0, "NaN")]}
F32_MAX = float(np.finfo(np.float32).max)
F32_TINY_SUB = float(np.finfo(np.float32).smallest_subnormal)
F16_TINY_SUB = float(np.finfo(np.float16).smallest_subnormal)


# --------------------------------------------------------------------------------------
# Fixture description
# --------------------------------------------------------------------------------------


@dataclass
class Fixture:
    name: str
    description: str
    dtype: str
    shape: tuple[int, ...]
    chunks: tuple[int, ...]  # regular chunk grid (the shard shape when sharded)
    fill_value: Any
    make_codecs: Callable[
        [], dict[str, Any]
    ]  # kwargs for zarr.create_array: filters, serializer, ...
    make_data: Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
    regions: list[tuple[slice, ...]]  # regions written, one `arr[region] = ...` each
    inner_chunks: tuple[int, ...] | None = None  # sharding inner chunk shape, if any
    extra_subsets: list[dict[str, Any]] = field(default_factory=list)
    all_fill_regions: list[tuple[slice, ...]] = field(default_factory=list)  # written as fill
    notes: list[str] = field(default_factory=list)
    expect_read_error: bool = False

    @property
    def seed(self) -> int:
        return zlib.crc32(self.name.encode())


def codecs_plain(*filters: Any) -> Callable[[], dict[str, Any]]:
    return lambda: {
        "filters": list(filters),
        "serializer": BytesCodec(),
        "compressors": None,
    }


def fill_array(shape: tuple[int, ...], dtype: str, fill: Any) -> np.ndarray:
    return np.full(shape, fill, dtype=zc.numpy_dtype(dtype).newbyteorder("="))


def place(base: np.ndarray, specials: list[Any]) -> np.ndarray:
    """Put `specials` at the start (C order) of `base`."""
    flat = base.reshape(-1)
    vals = np.array(specials, dtype=base.dtype)
    flat[: len(vals)] = vals
    return base


def pow10(exponents: np.ndarray) -> np.ndarray:
    """10.0 ** exponents, correctly rounded, the same on every machine.

    numpy's float64 `**` picks its kernel by CPU: the AVX-512 one (SVML) and the libm one
    differ by an ulp or two in a few percent of results, and libm's `pow` is itself not
    correctly rounded everywhere. Decimal arithmetic at 40 digits, rounded once to float64,
    does not depend on the CPU or the C library.
    """
    ctx = decimal.Context(prec=40)
    ten = decimal.Decimal(10)
    out = [float(ctx.power(ten, decimal.Decimal(float(e)))) for e in np.ravel(exponents)]
    return np.array(out, dtype=np.float64).reshape(np.shape(exponents))


def regions_except_chunk(shape: int, chunk: int, skip: int) -> list[tuple[slice, ...]]:
    """1-D: write everything but chunk number `skip` (two writes)."""
    return [(slice(0, skip * chunk),), (slice((skip + 1) * chunk, shape),)]


# --------------------------------------------------------------------------------------
# Data generators
# --------------------------------------------------------------------------------------


def data_a(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """float64 in [0, 2540] with NaNs; (x + 10) * 0.1 lands in [1, 255]."""
    x = rng.uniform(0.0, 2540.0, size=shape)
    flat = x.reshape(-1)
    n = flat.size
    # a quarter on the exact ties (x + 10) * 0.1 == k + 0.5 in real arithmetic
    ties = rng.choice(n, n // 4, replace=False)
    flat[ties] = 10.0 * rng.integers(1, 254, size=ties.size) - 5.0
    # a quarter on the decoded grid k / 0.1 - 10
    grid = rng.choice(n, n // 4, replace=False)
    flat[grid] = rng.integers(1, 256, size=grid.size) / 0.1 - 10.0
    nans = rng.choice(n, n // 20, replace=False)
    flat[nans] = np.nan
    flat[:8] = [0.0, 2540.0, 5.0, 15.0, 2535.0, np.nan, 0.04999999999999999, 2544.9]
    return x


def data_so_cv_u16(rng, shape):
    x = rng.integers(1000, 1256, size=shape, dtype=np.uint16)
    return place(x, [1000, 1255, 1001, 1254])


def data_so_i32(rng, shape):
    x = rng.integers(-1_000_000, 1_000_000, size=shape, dtype=np.int32)
    # (x - 7) * 3 must fit in int32: x in [-715827875, 715827889]
    return place(x, [715827889, -715827875, 7, 0, 8, 6, -1, 1])


def data_so_i16_negscale(rng, shape):
    # (x + 100) * -2 must fit in int16: x in [-16483, 16284]
    x = rng.integers(-16483, 16285, size=shape, dtype=np.int16)
    return place(x, [-16483, 16284, -100, 0, -99, -101])


def data_so_f32(rng, shape):
    x = (rng.normal(0.0, 100.0, size=shape)).astype(np.float32)
    return place(
        x,
        [
            np.nan,
            np.inf,
            -np.inf,
            0.0,
            -0.0,
            1.5,
            F32_TINY_SUB,
            -F32_TINY_SUB,
            3e38,
            -3e38,
            F32_MAX,
            1e-30,
            1.5000001,
            0.1,
            1e30,
            8.5e37,
        ],
    )


def data_so_f64_str(rng, shape):
    x = rng.uniform(-1000.0, 1000.0, size=shape)
    return place(x, [0.25, np.nan, np.inf, -np.inf, -0.0, 0.0, 1e308, -1e308, 5e-324])


def data_so_f64_hex(rng, shape):
    x = rng.normal(0.0, 10.0, size=shape)
    return place(x, [1.0 / 3.0, 0.0, -0.0, np.nan, 1.0, 2.0 / 3.0])


def data_so_f16(rng, shape):
    x = rng.normal(0.0, 100.0, size=shape).astype(np.float16)
    return place(x, [65504.0, -65504.0, 0.5, np.nan, -0.0, F16_TINY_SUB, 32767.0, 0.1, np.inf])


def data_so_noconfig(rng, shape):
    return place(rng.integers(-128, 128, size=shape, dtype=np.int8), [-128, 127, 0])


def data_cv_f32_i16(rng, shape):
    x = rng.uniform(-50000.0, 50000.0, size=shape).astype(np.float32)
    x.reshape(-1)[100:200] = rng.uniform(-3, 3, size=100).astype(np.float32)
    return place(
        x,
        [
            40000.0,
            -40000.0,
            32767.9,
            -32768.9,
            32768.0,
            -32769.0,
            0.5,
            -0.5,
            -0.0,
            1.9999,
            -1.9999,
            1e10,
            -1e10,
            F32_MAX,
            -F32_MAX,
            32767.0,
            -32768.0,
            0.99999994,
            -0.99999994,
        ],
    )


def data_cv_f64_i8_wrap(rng, shape):
    x = np.round(rng.uniform(-1000.0, 1000.0, size=shape) * 2.0) / 2.0  # many .5 ties
    return place(
        x,
        [
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            127.5,
            -128.5,
            128.0,
            -129.0,
            255.0,
            256.0,
            300.7,
            -300.7,
            1e6 + 0.5,
            2.0**53,
            1e20,
            -0.0,
            0.49999999999999994,
            -127.5,
            383.5,
            -1e300,
        ],
    )


def data_cv_f64_u8_clamp(rng, shape):
    x = rng.uniform(-50.0, 300.0, size=shape)
    return place(
        x,
        [
            -0.5,
            -1e-300,
            -0.0,
            0.0,
            255.9,
            256.0,
            1e10,
            -1e10,
            0.9999,
            1.0,
            254.99999999999997,
            255.0,
            1e300,
            -1e300,
            0.5,
            1.5,
        ],
    )


def data_cv_f64_f32_ne(rng, shape):
    n = int(np.prod(shape))
    mag = pow10(rng.uniform(-47.0, 38.5, size=n))
    x = (np.where(rng.random(n) < 0.5, -mag, mag)).reshape(shape)
    return place(
        x,
        [
            np.nan,
            -np.nan,
            np.inf,
            -np.inf,
            0.0,
            -0.0,
            1e-40,
            -1e-40,
            F32_TINY_SUB,
            F32_TINY_SUB / 2,
            np.nextafter(F32_TINY_SUB / 2, 1.0),
            1.5 * F32_TINY_SUB,
            2.5 * F32_TINY_SUB,
            1.1754942106924411e-38,
            1.1754943508222875e-38,
            F32_MAX,
            -F32_MAX,
            1.0 + 2.0**-24,
            1.0 + 3 * 2.0**-24,
            0.1,
            1.0 / 3.0,
            -1e-50,
            16777217.0,
            1e-46,
            F32_MAX + 1e22,
        ],
    )


def data_cv_f64_f32_tz_clamp(rng, shape):
    n = int(np.prod(shape))
    mag = pow10(rng.uniform(-50.0, 300.0, size=n))
    x = (np.where(rng.random(n) < 0.5, -mag, mag)).reshape(shape)
    return place(
        x,
        [
            F32_MAX,
            -F32_MAX,
            3.4028235677973366e38,
            -3.4028235677973366e38,
            np.nextafter(2.0**128, 0.0),
            2.0**128,
            -(2.0**128),
            1e39,
            -1e39,
            1e300,
            -1e300,
            np.inf,
            -np.inf,
            np.nan,
            1e-50,
            -1e-50,
            1.0 + 2.0**-23 - 2.0**-40,
            -0.0,
            0.1,
        ],
    )


def data_cv_f64_f16_tp(rng, shape):
    x = rng.uniform(-60000.0, 60000.0, size=shape)
    x.reshape(-1)[100:200] = pow10(rng.uniform(-9.0, 4.0, 100)) * rng.choice([-1.0, 1.0], 100)
    return place(
        x,
        [
            0.0,
            -0.0,
            np.nan,
            np.inf,
            -np.inf,
            1e-10,
            -1e-10,
            65504.0,
            65503.5,
            -65519.0,
            -65535.9,
            1.0 / 3.0,
            0.1,
            2049.0,
            -2049.0,
            F16_TINY_SUB / 2,
            6.1e-5,
            1.0 + 2.0**-11,
        ],
    )


def data_cv_f64_f16_tz(rng, shape):
    x = rng.uniform(-65535.0, 65535.0, size=shape)
    x.reshape(-1)[100:200] = pow10(rng.uniform(-9.0, 4.0, 100)) * rng.choice([-1.0, 1.0], 100)
    return place(
        x,
        [
            0.0,
            -0.0,
            np.nan,
            np.inf,
            -np.inf,
            1e-10,
            -1e-10,
            65504.0,
            65535.0,
            -65535.0,
            65519.99,
            1.0 / 3.0,
            -1.0 / 3.0,
            0.1,
            2049.0,
            -2049.0,
            65535.99,
        ],
    )


def data_cv_i32_u8(rng, shape):
    x = rng.integers(-1000, 1000, size=shape, dtype=np.int32)
    return place(x, [-(2**31), -1, 0, 255, 256, 2**31 - 1, 511, 512, -256, -255])


def data_cv_i64_f32_ne(rng, shape):
    x = rng.integers(-(2**62), 2**62, size=shape, dtype=np.int64)
    x.reshape(-1)[100:200] = rng.integers(2**24 - 50, 2**24 + 50, size=100)
    limit = 2**63 - 2**39 - 2**38 - 1  # largest int64 that rounds (ties-even) below 2**63
    return place(
        x,
        [
            2**24,
            2**24 + 1,
            2**24 + 2,
            2**24 + 3,
            2**53,
            2**53 + 1,
            -(2**53 + 1),
            2**53 + 3,
            2**62 + 2**38,
            -(2**63),
            limit,
            -limit,
            0,
            -1,
            2**31 - 1,
            -(2**31),
        ],
    )


def data_cv_i64_f32_tz(rng, shape):
    x = rng.integers(-(2**63), 2**63 - 1, size=shape, dtype=np.int64, endpoint=True)
    x.reshape(-1)[100:200] = rng.integers(2**24 - 50, 2**24 + 50, size=100)
    return place(
        x,
        [
            2**63 - 1,
            -(2**63),
            -(2**63) + 1,
            2**24 + 1,
            -(2**24 + 1),
            2**53 + 1,
            -(2**53 + 1),
            0,
            -1,
            1,
        ],
    )


def data_cv_u8_f32(rng, shape):
    x = rng.integers(0, 256, size=shape, dtype=np.uint8)
    x.reshape(-1)[:256] = np.arange(256, dtype=np.uint8)
    return x


def data_cv_f32_f64(rng, shape):
    x = (rng.normal(0.0, 1.0, size=shape) * pow10(rng.uniform(-40, 38, size=shape))).astype(
        np.float32
    )
    return place(
        x,
        [
            np.nan,
            -np.nan,
            np.inf,
            -np.inf,
            0.0,
            -0.0,
            F32_TINY_SUB,
            -F32_TINY_SUB,
            F32_MAX,
            -F32_MAX,
            0.1,
            1.0 / 3.0,
            1.1754942e-38,
        ],
    )


def data_cv_f64_i16_map(rng, shape):
    x = rng.uniform(-40000.0, 40000.0, size=shape)
    return place(
        x,
        [
            np.nan,
            -np.nan,
            np.inf,
            -np.inf,
            1e6,
            -1e6,
            32767.0,
            -32767.0,
            -32768.0,
            -32767.5,
            32766.5,
            0.5,
            -0.0,
        ],
    )


def data_cv_i16_i8_wrap(rng, shape):
    x = rng.integers(-32768, 32768, size=shape, dtype=np.int16)
    return place(x, [127, 128, -128, -129, 255, 256, 32767, -32768, 0, -1])


def data_cv_f16_i8(rng, shape):
    x = rng.uniform(-300.0, 300.0, size=shape).astype(np.float16)
    return place(
        x,
        [
            0.5,
            -0.5,
            1.5,
            -1.5,
            127.5,
            -128.5,
            1000.0,
            -1000.0,
            65504.0,
            -65504.0,
            -0.0,
            126.5,
        ],
    )


def data_cv_u64_f64(rng, shape):
    x = rng.integers(0, 2**64 - 1, size=shape, dtype=np.uint64, endpoint=True)
    x.reshape(-1)[100:200] = rng.integers(2**53 - 50, 2**53 + 50, size=100, dtype=np.uint64)
    return place(x, [2**64 - 1, 2**53 + 1, 2**53, 2**63 + 1, 0, 1, 2**64 - 2048, 2**64 - 2049])


def data_cv_f64_i64(rng, shape):
    x = rng.normal(0.0, 1.0, size=shape) * pow10(rng.uniform(-3, 20, size=shape))
    return place(
        x,
        [
            1e19,
            -1e19,
            0.1,
            -0.9,
            -0.0,
            2.0**63,
            -(2.0**63),
            9.223372036854775e18,
            -9.223372036854775e18,
            np.nextafter(2.0**53, 0),
            2.0**53 + 2,
            1e300,
            -1e300,
        ],
    )


def data_cv_so_chain(rng, shape):
    x = rng.uniform(-16000.0, 16000.0, size=shape)
    return place(x, [0.5, 1.5, -0.5, 100.0, 16283.4, -16283.4, -0.0])


def data_err_nonexact(rng, shape):
    x = rng.integers(-40, 40, size=shape, dtype=np.int16)
    x.reshape(-1)[0] = 100  # 300 -> clamped to 127, and 127 is not a multiple of 3
    return x


def data_err_inf_u64(rng, shape):
    x = rng.integers(0, 60000, size=shape, dtype=np.uint64)
    x.reshape(-1)[0] = 2**63  # -> float16 +inf under clamp; +inf cannot be cast back
    return x


# --------------------------------------------------------------------------------------
# The fixtures
# --------------------------------------------------------------------------------------


def cv(**kw: Any) -> CastValue:
    return CastValue(**kw)


def a_chain() -> list[Any]:
    return [
        ScaleOffset(offset=-10, scale=0.1),
        cv(data_type="uint8", rounding="nearest-even", scalar_map=NAN_TO_0),
    ]


def one_d(name, desc, dtype, fill, filters, data, n=300, chunk=64, skip=2, notes=(), **kw):
    return Fixture(
        name=name,
        description=desc,
        dtype=dtype,
        shape=(n,),
        chunks=(chunk,),
        fill_value=fill,
        make_codecs=codecs_plain(*filters()) if callable(filters) else codecs_plain(*filters),
        make_data=data,
        regions=regions_except_chunk(n, chunk, skip),
        notes=list(notes),
        **kw,
    )


def fixtures() -> list[Fixture]:
    fx: list[Fixture] = []

    # (a) the spec's float64 -> uint8 example, with NaN fill and unwritten chunks.
    fx.append(
        Fixture(
            name="so_cv_f64_u8_nan",
            description="float64, fill NaN; scale_offset(offset=-10, scale=0.1) -> "
            "cast_value(uint8, nearest-even, NaN<->0) -> bytes. Data in [0, 2540] with NaNs "
            "(a quarter on exact .5 ties). Chunk (0,0) is written but all NaN, so it is not "
            "stored; chunks (0..2,3) and (3,0..2) are never written.",
            dtype="float64",
            shape=(40, 50),
            chunks=(10, 16),
            fill_value=np.nan,
            make_codecs=lambda: {
                "filters": a_chain(),
                "serializer": BytesCodec(),
                "compressors": None,
            },
            make_data=data_a,
            regions=[(slice(0, 25), slice(0, 35)), (slice(30, 40), slice(48, 50))],
            all_fill_regions=[(slice(0, 10), slice(0, 16))],
            notes=[
                (
                    'zarr-python omits "rounding": "nearest-even" (the default) from the cast_value '
                    "configuration it writes."
                ),
            ],
        )
    )

    # (b) uint16 offset-only -> uint8 (the spec's second example).
    fx.append(
        Fixture(
            name="so_cv_u16_u8_offset",
            description="uint16, fill 1000; scale_offset(offset=1000) -> cast_value(uint8) -> bytes. "
            "Data in [1000, 1255]. Chunk 1 written all-fill (not stored), chunks 3 and 4 never "
            "written, chunk 2 half written, chunk 7 is the partial edge chunk.",
            dtype="uint16",
            shape=(1000,),
            chunks=(128,),
            fill_value=1000,
            make_codecs=codecs_plain(ScaleOffset(offset=1000), cv(data_type="uint8")),
            make_data=data_so_cv_u16,
            regions=[(slice(0, 300),), (slice(640, 1000),)],
            all_fill_regions=[(slice(128, 256),)],
            notes=[
                (
                    "The fill value must be >= 1000: (0 - 1000) underflows uint16 and zarr-python "
                    "errors when it encodes the fill value."
                )
            ],
        )
    )

    # (c) scale_offset alone.
    fx.append(
        Fixture(
            name="so_i32",
            description="int32, fill 0; scale_offset(offset=7, scale=3) -> bytes. Includes the "
            "extreme inputs whose encoding still fits int32 (715827889, -715827875). The stored "
            "fill is (0 - 7) * 3 = -21.",
            dtype="int32",
            shape=(30, 40),
            chunks=(8, 8),
            fill_value=0,
            make_codecs=codecs_plain(ScaleOffset(offset=7, scale=3)),
            make_data=data_so_i32,
            regions=[(slice(0, 20), slice(0, 40)), (slice(24, 30), slice(32, 40))],
        )
    )
    fx.append(
        one_d(
            "so_i16_negscale",
            "int16, fill -100; scale_offset(offset=-100, scale=-2) -> bytes (negative scale).",
            "int16",
            -100,
            [ScaleOffset(offset=-100, scale=-2)],
            data_so_i16_negscale,
            n=500,
            chunk=64,
            skip=4,
        )
    )
    fx.append(
        Fixture(
            name="so_f32",
            description="float32, fill 0; scale_offset(offset=1.5, scale=4) -> bytes. Includes "
            "NaN, +-inf, +-0.0, subnormals and values whose encoding overflows to +-inf "
            "(3e38, FLT_MAX, -3e38): zarr-python stores inf without error and decodes it to inf.",
            dtype="float32",
            shape=(1000,),
            chunks=(256,),
            fill_value=0.0,
            make_codecs=codecs_plain(ScaleOffset(offset=1.5, scale=4)),
            make_data=data_so_f32,
            regions=[(slice(0, 256),), (slice(600, 700),), (slice(900, 1000),)],
        )
    )
    fx.append(
        Fixture(
            name="so_f64_str",
            description='float64, fill 0.25; scale_offset(offset="0.25", scale="10") with the '
            "numbers written as JSON strings (zarr-python accepts decimal strings and keeps them "
            "verbatim in zarr.json). Includes +-1e308, whose encoding overflows to +-inf.",
            dtype="float64",
            shape=(20, 25),
            chunks=(8, 8),
            fill_value=0.25,
            make_codecs=codecs_plain(ScaleOffset(offset="0.25", scale="10")),
            make_data=data_so_f64_str,
            regions=[(slice(0, 16), slice(0, 16)), (slice(16, 20), slice(20, 25))],
            notes=[
                (
                    'Decimal strings such as "0.25" are not a Zarr v3 fill-value encoding for '
                    'floats (only numbers, "NaN", "Infinity", "-Infinity" and "0x..." hex '
                    "are); zarr-python 3.4.2 accepts them anyway (float(str))."
                )
            ],
        )
    )
    fx.append(
        one_d(
            "so_f64_hex",
            "float64, fill 0.0; scale_offset with hex-string scalars: offset "
            '"0x3fd5555555555555" (1/3), scale "0x4008000000000000" (3.0).',
            "float64",
            0.0,
            [ScaleOffset(offset="0x3fd5555555555555", scale="0x4008000000000000")],
            data_so_f64_hex,
            n=300,
            chunk=64,
            skip=1,
        )
    )
    fx.append(
        one_d(
            "so_f16",
            "float16, fill 0; scale_offset(offset=0.5, scale=2) -> bytes; 65504 and 32767 "
            "overflow float16 to inf when encoded (stored as inf, no error).",
            "float16",
            0.0,
            [ScaleOffset(offset=0.5, scale=2)],
            data_so_f16,
            n=200,
            chunk=64,
            skip=1,
        )
    )
    fx.append(
        one_d(
            "so_noconfig",
            "int8, fill 0; scale_offset with neither offset nor scale: zarr-python writes "
            '{"name": "scale_offset"} with no configuration (a no-op).',
            "int8",
            0,
            [ScaleOffset()],
            data_so_noconfig,
            n=100,
            chunk=32,
            skip=1,
        )
    )

    # (d) cast_value alone.
    fx.append(
        one_d(
            "cv_f32_i16_tz_clamp",
            "float32 -> int16, towards-zero, out_of_range clamp; values beyond +-32767, "
            "fractions, negatives, -0.0, +-FLT_MAX.",
            "float32",
            0.0,
            lambda: [cv(data_type="int16", rounding="towards-zero", out_of_range="clamp")],
            data_cv_f32_i16,
            n=400,
            chunk=64,
            skip=3,
        )
    )
    fx.append(
        one_d(
            "cv_f64_i8_na_wrap",
            "float64 -> int8, nearest-away, out_of_range wrap; .5 ties, values far out of range.",
            "float64",
            0.0,
            lambda: [cv(data_type="int8", rounding="nearest-away", out_of_range="wrap")],
            data_cv_f64_i8_wrap,
        )
    )
    fx.append(
        one_d(
            "cv_f64_u8_tn_clamp",
            "float64 -> uint8, towards-negative, out_of_range clamp.",
            "float64",
            0.0,
            lambda: [cv(data_type="uint8", rounding="towards-negative", out_of_range="clamp")],
            data_cv_f64_u8_clamp,
        )
    )
    fx.append(
        one_d(
            "cv_f64_f32_ne",
            "float64 -> float32, nearest-even, no out_of_range; fill NaN; float32 subnormals and "
            "ties, +-0.0, +-inf, NaN (incl. negative NaN), magnitudes 1e-47..3e38.",
            "float64",
            np.nan,
            lambda: [cv(data_type="float32")],
            data_cv_f64_f32_ne,
        )
    )
    fx.append(
        one_d(
            "cv_f64_f32_tz_clamp",
            "float64 -> float32, towards-zero, out_of_range clamp; magnitudes up to 1e300.",
            "float64",
            0.0,
            lambda: [cv(data_type="float32", rounding="towards-zero", out_of_range="clamp")],
            data_cv_f64_f32_tz_clamp,
            notes=[
                (
                    "cast-value-rs 0.5.1: under towards-zero, values in (FLT_MAX, 2**128) round to "
                    "FLT_MAX, but values >= 2**128 (e.g. 2**128, 1e39, 1e300) become +-inf under "
                    "clamp (and are an error with no out_of_range). IEEE 754 roundTowardZero would "
                    "give +-FLT_MAX for every finite input; the spec text (round first, then clamp "
                    "maps values outside the finite range to +-inf) allows either reading."
                ),
            ],
        )
    )
    fx.append(
        one_d(
            "cv_f64_f16_tp",
            "float64 -> float16, towards-positive, no out_of_range; -1e-10 -> -0.0, 1e-10 -> "
            "smallest subnormal, -65535.9 -> -65504.",
            "float64",
            0.0,
            lambda: [cv(data_type="float16", rounding="towards-positive")],
            data_cv_f64_f16_tp,
        )
    )
    fx.append(
        one_d(
            "cv_f64_f16_tz",
            "float64 -> float16, towards-zero, no out_of_range; 65535.99 -> 65504 (values "
            ">= 65536 would be an error in cast-value-rs).",
            "float64",
            0.0,
            lambda: [cv(data_type="float16", rounding="towards-zero")],
            data_cv_f64_f16_tz,
        )
    )
    fx.append(
        one_d(
            "cv_i32_u8_clamp",
            "int32 -> uint8, out_of_range clamp.",
            "int32",
            0,
            lambda: [cv(data_type="uint8", out_of_range="clamp")],
            data_cv_i32_u8,
        )
    )
    fx.append(
        one_d(
            "cv_i32_u8_wrap",
            "int32 -> uint8, out_of_range wrap.",
            "int32",
            0,
            lambda: [cv(data_type="uint8", out_of_range="wrap")],
            data_cv_i32_u8,
        )
    )
    fx.append(
        one_d(
            "cv_i64_f32_ne",
            "int64 -> float32, nearest-even; 2**24+1, 2**53+1, up to the largest int64 that does "
            "not round to 2**63 (2**63 would not cast back to int64).",
            "int64",
            0,
            lambda: [cv(data_type="float32")],
            data_cv_i64_f32_ne,
        )
    )
    fx.append(
        one_d(
            "cv_i64_f32_tz",
            "int64 -> float32, towards-zero (decode float32 -> int64 is exact); full int64 range.",
            "int64",
            0,
            lambda: [cv(data_type="float32", rounding="towards-zero")],
            data_cv_i64_f32_tz,
        )
    )
    fx.append(
        one_d(
            "cv_u8_f32",
            "uint8 -> float32 (exact); all 256 values.",
            "uint8",
            0,
            lambda: [cv(data_type="float32")],
            data_cv_u8_f32,
            n=400,
        )
    )
    fx.append(
        one_d(
            "cv_f32_f64",
            "float32 -> float64 (exact widening); fill NaN; NaN, -NaN, +-inf, +-0.0, subnormals.",
            "float32",
            np.nan,
            lambda: [cv(data_type="float64")],
            data_cv_f32_f64,
        )
    )
    fx.append(
        one_d(
            "cv_f64_i16_map_inf",
            "float64 -> int16, nearest-even, clamp, scalar_map encode NaN->-32768, "
            "+Infinity->32767, -Infinity->-32767, decode -32768->NaN; fill NaN. -1e6 clamps to "
            "-32768, which then decodes to NaN through the decode map.",
            "float64",
            np.nan,
            lambda: [
                cv(
                    data_type="int16",
                    out_of_range="clamp",
                    scalar_map={
                        "encode": [
                            ("NaN", -32768),
                            ("Infinity", 32767),
                            ("-Infinity", -32767),
                        ],
                        "decode": [(-32768, "NaN")],
                    },
                )
            ],
            data_cv_f64_i16_map,
        )
    )
    fx.append(
        one_d(
            "cv_i16_i8_wrap",
            "int16 -> int8, out_of_range wrap.",
            "int16",
            0,
            lambda: [cv(data_type="int8", out_of_range="wrap")],
            data_cv_i16_i8_wrap,
        )
    )
    fx.append(
        one_d(
            "cv_f16_i8_na_clamp",
            "float16 -> int8, nearest-away, clamp.",
            "float16",
            0.0,
            lambda: [cv(data_type="int8", rounding="nearest-away", out_of_range="clamp")],
            data_cv_f16_i8,
        )
    )
    fx.append(
        one_d(
            "cv_u64_f64_tn",
            "uint64 -> float64, towards-negative (2**64-1 -> 2**64-2048); decode is exact.",
            "uint64",
            0,
            lambda: [cv(data_type="float64", rounding="towards-negative")],
            data_cv_u64_f64,
        )
    )
    fx.append(
        one_d(
            "cv_f64_i64_tp_clamp",
            "float64 -> int64, towards-positive, clamp. The decode (int64 -> float64) also "
            "rounds towards-positive: 2**63-1 decodes to 2**63.",
            "float64",
            0.0,
            lambda: [cv(data_type="int64", rounding="towards-positive", out_of_range="clamp")],
            data_cv_f64_i64,
        )
    )
    fx.append(
        one_d(
            "cv_so_f64_i16_chain",
            "float64 -> cast_value(int16, nearest-even, clamp) -> scale_offset(offset=100, "
            "scale=2) on int16 -> bytes: scale_offset after a cast works in the cast's type.",
            "float64",
            0.0,
            lambda: [
                cv(data_type="int16", out_of_range="clamp"),
                ScaleOffset(offset=100, scale=2),
            ],
            data_cv_so_chain,
        )
    )

    # (e) sharding.
    sharded_regions = [(slice(0, 20), slice(0, 30)), (slice(33, 37), slice(40, 53))]
    sharded_subsets = [
        {
            "label": "crosses shard and inner chunk boundaries",
            "start": [14, 12],
            "shape": [6, 8],
        },
        {
            "label": "inside a never-written shard (0,2)",
            "start": [2, 34],
            "shape": [5, 6],
        },
        {
            "label": "one never-written inner chunk of written shard (1,0)",
            "start": [24, 0],
            "shape": [4, 8],
        },
        {
            "label": "unwritten inner chunks, crossing them",
            "start": [21, 3],
            "shape": [6, 7],
        },
        {
            "label": "partial edge shard (2,3) / edge inner chunks",
            "start": [32, 48],
            "shape": [5, 5],
        },
        {
            "label": "edge shard row, crossing shards (2,2)-(2,3)",
            "start": [30, 40],
            "shape": [7, 13],
        },
    ]
    fx.append(
        Fixture(
            name="sharded_so_cv_f64_u8_nan",
            description="Chain (a) inside sharding_indexed: float64 (37, 53), fill NaN, shards "
            "(16, 16), inner chunks (4, 8), index bytes+crc32c at the end, inner chunks in "
            "zarr-python's default morton order. Shards (0..1, 2..3) and (2, 0..1) never "
            "written; shard (1,0) has only its first row of inner chunks written.",
            dtype="float64",
            shape=(37, 53),
            chunks=(16, 16),
            inner_chunks=(4, 8),
            fill_value=np.nan,
            make_codecs=lambda: {
                "serializer": ShardingCodec(chunk_shape=(4, 8), codecs=[*a_chain(), BytesCodec()]),
                "compressors": None,
            },
            make_data=data_a,
            regions=sharded_regions,
            extra_subsets=sharded_subsets,
        )
    )
    fx.append(
        Fixture(
            name="sharded_outer_so_cv_f64_u8_nan",
            description="Chain (a) with scale_offset and cast_value OUTSIDE sharding_indexed: "
            "[scale_offset, cast_value, sharding_indexed{bytes}]. The sharding codec sees uint8 "
            "with fill 0 (NaN encoded), so missing inner chunks are 0, which decode to NaN.",
            dtype="float64",
            shape=(37, 53),
            chunks=(16, 16),
            inner_chunks=(4, 8),
            fill_value=np.nan,
            make_codecs=lambda: {
                "filters": a_chain(),
                "serializer": ShardingCodec(chunk_shape=(4, 8)),
                "compressors": None,
            },
            make_data=data_a,
            regions=sharded_regions,
            extra_subsets=sharded_subsets,
        )
    )
    fx.append(
        Fixture(
            name="sharded_idxstart_so_i32",
            description="int32 (30, 20), fill 0, sharding_indexed with index_location start, "
            "shards (16, 8), inner chunks (4, 4) [scale_offset(offset=7, scale=3), bytes].",
            dtype="int32",
            shape=(30, 20),
            chunks=(16, 8),
            inner_chunks=(4, 4),
            fill_value=0,
            make_codecs=lambda: {
                "serializer": ShardingCodec(
                    chunk_shape=(4, 4),
                    codecs=[ScaleOffset(offset=7, scale=3), BytesCodec()],
                    index_location="start",
                ),
                "compressors": None,
            },
            make_data=data_so_i32,
            regions=[(slice(0, 10), slice(0, 20)), (slice(20, 30), slice(16, 20))],
            extra_subsets=[
                {"label": "crosses shard boundary", "start": [14, 6], "shape": [4, 4]},
                {
                    "label": "unwritten inner chunk in written shard",
                    "start": [12, 0],
                    "shape": [4, 4],
                },
            ],
        )
    )
    return fx


def error_fixtures() -> list[Fixture]:
    return [
        one_d(
            "so_nonexact_division",
            "int16, fill 0; scale_offset(scale=3) -> cast_value(int8, clamp). Input 100 encodes "
            "to 300, clamps to 127; decoding 127 / 3 is not exact, and zarr-python refuses to "
            "read that chunk.",
            "int16",
            0,
            lambda: [ScaleOffset(scale=3), cv(data_type="int8", out_of_range="clamp")],
            data_err_nonexact,
            n=64,
            chunk=16,
            skip=2,
            expect_read_error=True,
        ),
        one_d(
            "cv_u64_f16_clamp_inf",
            "uint64, fill 0; cast_value(float16, clamp). 2**63 encodes to +inf (clamp); +inf "
            "cannot be cast back to uint64, so reading that chunk fails.",
            "uint64",
            0,
            lambda: [cv(data_type="float16", out_of_range="clamp")],
            data_err_inf_u64,
            n=64,
            chunk=16,
            skip=2,
            expect_read_error=True,
        ),
    ]


# --------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------


def region_json(region: tuple[slice, ...], shape: tuple[int, ...]) -> dict[str, list[int]]:
    start, size = [], []
    for s, n in zip(region, shape):
        a, b, _ = s.indices(n)
        start.append(a)
        size.append(b - a)
    return {"start": start, "shape": size}


def chunk_written(
    idx: tuple[int, ...],
    chunks: tuple[int, ...],
    regions: list[tuple[slice, ...]],
    shape,
) -> bool:
    for region in regions:
        hit = True
        for i, c, s, n in zip(idx, chunks, region, shape):
            a, b, _ = s.indices(n)
            if not (a < (i + 1) * c and i * c < b):
                hit = False
                break
        if hit:
            return True
    return False


def auto_subsets(f: Fixture) -> list[dict[str, Any]]:
    shape, chunks = f.shape, f.chunks
    unit = "shard" if f.inner_chunks is not None else "chunk"
    subs: list[dict[str, Any]] = []
    start = [max(0, c - 2) if n > c else 0 for n, c in zip(shape, chunks)]
    subs.append(
        {
            "label": f"crosses the first {unit} boundary",
            "start": start,
            "shape": [min(4, n - s) for n, s in zip(shape, start)],
        }
    )
    edge = [((n - 1) // c) * c for n, c in zip(shape, chunks)]
    subs.append(
        {
            "label": f"the last (edge) {unit}"
            + (" - partial" if any(n % c for n, c in zip(shape, chunks)) else ""),
            "start": edge,
            "shape": [n - e for n, e in zip(shape, edge)],
        }
    )
    grid = [math.ceil(n / c) for n, c in zip(shape, chunks)]
    unwritten = [
        idx for idx in np.ndindex(*grid) if not chunk_written(idx, chunks, f.regions, shape)
    ]
    # Prefer a whole (non-edge) chunk that was never written.
    unwritten.sort(key=lambda idx: any((i + 1) * c > n for i, c, n in zip(idx, chunks, shape)))
    if unwritten:
        idx = unwritten[0]
        origin = [i * c for i, c in zip(idx, chunks)]
        st = [o + (1 if c > 2 else 0) for o, c in zip(origin, chunks)]
        sz = [max(1, min(c - 2, n - s)) for c, n, s in zip(chunks, shape, st)]
        subs.append(
            {
                "label": f"inside never-written {unit} {list(idx)}",
                "start": st,
                "shape": sz,
            }
        )
        # From a written chunk into the never-written one, when there is a neighbour before it.
        if any(o > 0 for o in origin):
            st2 = [max(0, o - 2) for o in origin]
            sz2 = [min(n - s, (o - s) + 3) for n, s, o in zip(shape, st2, origin)]
            subs.append(
                {
                    "label": f"from neighbouring {unit}s into never-written {unit} {list(idx)}",
                    "start": st2,
                    "shape": sz2,
                }
            )
    subs.append(
        {
            "label": "one element",
            "start": [n // 2 for n in shape],
            "shape": [1] * len(shape),
        }
    )
    subs.append(
        {
            "label": "most of the array",
            "start": [1] * len(shape),
            "shape": [max(1, n - 2) for n in shape],
        }
    )
    return subs


def codec_summary(c: Any) -> str:
    if isinstance(c, str):
        return c
    name = c["name"]
    cfg = c.get("configuration")
    if not cfg:
        return name
    if name == "sharding_indexed":
        inner = " -> ".join(codec_summary(x) for x in cfg["codecs"])
        index = " -> ".join(codec_summary(x) for x in cfg["index_codecs"])
        return (
            f"sharding_indexed(chunk_shape={cfg['chunk_shape']}, index_location="
            f"{cfg.get('index_location', 'end')}, index_codecs=[{index}]){{ {inner} }}"
        )
    parts = []
    for k, v in cfg.items():
        if k == "scalar_map":
            sm = []
            for d in ("encode", "decode"):
                if d in v:
                    sm.append(
                        d
                        + "["
                        + ", ".join(f"{json.dumps(a)}->{json.dumps(b)}" for a, b in v[d])
                        + "]"
                    )
            parts.append("scalar_map " + " ".join(sm))
        else:
            parts.append(f"{k}={json.dumps(v)}")
    return f"{name}(" + ", ".join(parts) + ")"


def write_fixture(f: Fixture, out_dir: Path) -> dict[str, Any]:
    rng = np.random.default_rng(f.seed)
    data = f.make_data(rng, f.shape)
    nd = zc.numpy_dtype(f.dtype).newbyteorder("=")
    assert data.dtype == nd, (f.name, data.dtype, nd)
    assert data.shape == f.shape, (f.name, data.shape)

    # The input as a whole: the fill value wherever nothing (or fill) is written.
    inp = fill_array(f.shape, f.dtype, f.fill_value)
    for r in f.regions:
        inp[r] = data[r]
    for r in f.all_fill_regions:
        inp[r] = fill_array(inp[r].shape, f.dtype, f.fill_value)

    store_path = out_dir / f"{f.name}.zarr"
    zc.create_and_write_regions(
        store_path,
        shape=f.shape,
        chunks=f.chunks,
        dtype=f.dtype,
        fill_value=f.fill_value,
        codec_kwargs=f.make_codecs(),
        regions=f.regions,
        source=inp,
    )

    meta = zc.load_json(store_path / "zarr.json")
    stored = sorted(zc.store_keys(store_path))
    info: dict[str, Any] = {
        "name": f.name,
        "description": f.description,
        "shape": list(f.shape),
        "data_type": meta["data_type"],
        "fill_value": meta["fill_value"],
        "codecs_summary": " -> ".join(codec_summary(c) for c in meta["codecs"]),
        "chunk_shape": meta["chunk_grid"]["configuration"]["chunk_shape"],
    }
    if f.inner_chunks is not None:
        info["inner_chunk_shape"] = list(f.inner_chunks)
    info["written_regions"] = [region_json(r, f.shape) for r in f.regions]
    info["stored_keys"] = stored
    info["store"] = f"{f.name}.zarr"
    info["input_file"] = f"{f.name}.input.bin"

    (out_dir / f"{f.name}.input.bin").write_bytes(zc.to_le_bytes(inp))
    (out_dir / f"{f.name}.input.json").write_text(
        json.dumps({"shape": list(f.shape), "data_type": meta["data_type"]}) + "\n"
    )

    if f.expect_read_error:
        try:
            zc.read_whole(store_path)
        except Exception as e:  # noqa: BLE001 - record whatever zarr-python raises
            info["expected_error"] = f"{type(e).__name__}: {e}"
        else:
            raise AssertionError(f"{f.name}: expected zarr-python to fail reading the array")
        bad = []
        ro = zc.open_array(store_path)
        for key in stored:
            idx = tuple(int(p) for p in key.split("/")[1:])
            sel = tuple(
                slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(idx, f.chunks, f.shape)
            )
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ro[sel]
            except Exception:  # noqa: BLE001
                bad.append(key)
        info["failing_chunk_keys"] = bad
        info["notes"] = f.notes
        del info["input_file"]
        (out_dir / f"{f.name}.input.bin").unlink()
        (out_dir / f"{f.name}.input.json").unlink()
    else:
        expected = zc.read_whole(store_path)
        assert expected.dtype == nd and expected.shape == f.shape
        (out_dir / f"{f.name}.expected.bin").write_bytes(zc.to_le_bytes(expected))
        info["expected_file"] = f"{f.name}.expected.bin"
        subsets = auto_subsets(f) + f.extra_subsets
        for s in subsets:
            for st, sz, n in zip(s["start"], s["shape"], f.shape):
                assert 0 <= st and sz >= 1 and st + sz <= n, (f.name, s)
            # zarr-python agrees on every subset with the whole-array read.
            zc.check_subset(store_path, expected, s["start"], s["shape"], (f.name, s))
        info["subsets"] = subsets
        info["notes"] = f.notes
        self_check(f, store_path, inp)
    info["zarr_python"] = zarr.__version__
    info["cast_value_rs"] = version("cast-value-rs")
    info["numpy"] = np.__version__
    (out_dir / f"{f.name}.expected.json").write_text(json.dumps(info, indent=2) + "\n")
    return info


def self_check(f: Fixture, store_path: Path, inp: np.ndarray) -> None:
    """Writing the input whole must give the same files as the region-by-region writes,
    so that NAME.input.bin is a faithful description of the store."""
    tmp = zc.make_temp_dir("zarr-fixture-")
    try:
        zc.write_whole_from_metadata(store_path / "zarr.json", tmp / "w.zarr", inp)
        diff = zc.compare_stores(tmp / "w.zarr", store_path)
        if not diff.ok:
            raise AssertionError(
                f"{f.name}: whole write differs from region writes: {diff.describe()}"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


README_HEAD = """\
# zarr-python fixtures for `scale_offset` and `cast_value`

Written by zarr-python {zarr_version} with cast-value-rs {cvr_version} and numpy {np_version},
by `scripts/python/make_fixtures.py`. Do not edit by hand: every `zarr.json` and chunk file
is exactly what zarr-python wrote.

Regenerate (from the repository root; deletes and re-creates this directory):

```sh
bash scripts/python/setup_venv.sh
.venv/bin/python scripts/python/make_fixtures.py
```

Check that this directory is exactly what the script writes (`scripts/test.sh` does this; a few
seconds):

```sh
.venv/bin/python scripts/python/make_fixtures.py --check
```

The input data are the same on every machine: the generator uses numpy's seeded `Generator`
and only operations that round the same everywhere. numpy's float64 `**` does not: its AVX-512
kernel and the libm one differ by an ulp in a few results, which once made these files depend
on the CPU that wrote them; powers of ten are computed with `decimal` instead.

## Files

For each fixture `NAME`:

| file | what |
| --- | --- |
| `NAME.zarr/` | Zarr v3 array store (LocalStore layout, default `/` chunk keys, no compressor) |
| `NAME.expected.bin` | what zarr-python decodes when it reads the whole array: raw little-endian bytes, C order |
| `NAME.expected.json` | `shape`, `data_type` (Zarr v3 name), `fill_value` (as in `zarr.json`), `codecs_summary`, `subsets` (list of `{{"label", "start", "shape"}}` to slice from the expected array: chunk-boundary crossings, never-written chunks, partial edge chunks), plus `chunk_shape`, `inner_chunk_shape` (sharded), `written_regions`, `stored_keys`, `notes` and the package versions |
| `NAME.input.bin` / `NAME.input.json` | the array that was written, whole (never-written regions hold the fill value), raw little-endian C order; `{{"shape", "data_type"}}`. Writing it whole through zarr-python gives the same files as the fixture (checked when generating), so a Rust test can write it through zarrs and compare with `scripts/python/check_zarrs_written.py` |

`decode_errors/` holds stores that zarr-python writes but refuses to read back:
`NAME.zarr` and `NAME.expected.json` with `expected_error` (zarr-python's message) and
`failing_chunk_keys`. There is no `expected.bin` there. A conforming reader must fail too.

This directory is itself a valid input for the reverse check
(`.venv/bin/python scripts/python/check_zarrs_written.py fixtures/zarr-python` passes).

## Fixtures

| name | data type | shape / chunks | codecs | what it covers |
| --- | --- | --- | --- | --- |
"""

README_TAIL = """
## zarr-python 3.4.2 / cast-value-rs 0.5.1 behaviour seen while writing these

- `cast_value`: `"rounding": "nearest-even"` is omitted from the metadata (it is the default);
  `scale_offset` omits `offset` when it is 0 and `scale` when it is 1, and the whole
  `configuration` when both are (`{{"name": "scale_offset"}}`). String scalars are kept verbatim
  (`"0.25"`, `"0x3fd5555555555555"`, even `"0"`).
- `scale_offset` on floats: overflow to +-inf is stored without error (numpy only warns).
  On integers: results outside the type are a `ValueError` on encode (also for the fill value,
  at array creation), and a decode whose division is not exact is a `ValueError` on read
  (`decode_errors/so_nonexact_division`). Integer `scale`/`offset` may be written as `7`, `7.0` or
  `"7"`; `0.5` is refused. Exception: int64 is not range-checked, `(x - offset) * scale` wraps
  silently (`scale=2**40`, `x=2**23` stores `-2**63`).
- `cast_value` (cast-value-rs): NaN / +-inf to an integer type is an error even with `clamp`
  unless `scalar_map` maps it. Float to float: `+-inf` and NaN pass through; finite values that
  round beyond the finite range are an error without `out_of_range`, +-inf with `clamp`. Under
  towards-zero / towards-negative, values between the largest finite value and 2**(emax+1) round
  down to the largest finite value, but values >= 2**(emax+1) (65536 for float16, 2**128 for
  float32) are still out of range (error, or inf under clamp).
- `-0.0`: kept float to float; becomes 0 in integers; a `scalar_map` key `0` (or `-0.0`) matches
  both zeros. A `"NaN"` key matches every NaN (either sign, any payload). NaN payloads follow
  the hardware conversion (quiet bit set, sign kept, payload truncated).
- `scalar_map` with a repeated key: zarr-python keeps the LAST pair (and writes only that one),
  where the spec says readers use the first. A float `nan` key (instead of the string `"NaN"`)
  is written as a bare `NaN` token, which is not valid JSON.
- The fill value is not checked for a round trip: with fill 0.5 and `cast_value(uint8)`, a
  never-written chunk reads 0.5 but the unwritten part of a written chunk reads 0.0; the same
  happens with fill NaN and an encode-only `scalar_map`.
- Chunks equal to the fill value are not stored (`write_empty_chunks=False`); +-0.0 are told
  apart bit-wise there, NaNs are all equal.
- Sharding: inner chunks are laid out in morton order by default (zarrs: C order or unordered).

## Not covered, because zarr-python 3.4.2 refuses them

{refused}
"""


def probe_refused() -> list[str]:
    """Data types and configurations named by the specs that zarr-python 3.4.2 refuses."""
    lines = []
    for name in [
        "bfloat16",
        "int4",
        "uint4",
        "int2",
        "uint2",
        "float8_e4m3",
        "float8_e5m2",
        "float4_e2m1fn",
        "float6_e2m3fn",
        "float6_e3m2fn",
        "float8_e3m4",
        "float8_e4m3fnuz",
        "float8_e5m2fnuz",
        "float8_e4m3b11fnuz",
        "float8_e8m0fnu",
    ]:
        for role in ("cast_value target", "array data type"):
            try:
                if role == "cast_value target":
                    CastValue(data_type=name)
                else:
                    zarr.create_array(store={}, shape=(4,), dtype=name)
                lines.append(f"- `{name}` as {role}: accepted (unexpected)")
            except Exception as e:  # noqa: BLE001
                lines.append(f"- `{name}` as {role}: `{type(e).__name__}: {e}`")
    checks = [
        (
            "cast_value out_of_range wrap with a float target",
            lambda: zarr.create_array(
                store={},
                shape=(4,),
                dtype="float64",
                filters=[CastValue(data_type="float32", out_of_range="wrap")],
            ),
        ),
        (
            "scale_offset with a non-integer scale on int32",
            lambda: zarr.create_array(
                store={}, shape=(4,), dtype="int32", filters=[ScaleOffset(scale=0.5)]
            ),
        ),
        (
            "scale_offset with scale 0",
            lambda: zarr.create_array(
                store={}, shape=(4,), dtype="float64", filters=[ScaleOffset(scale=0)]
            ),
        ),
        ("cast_value to bool", lambda: CastValue(data_type="bool")),
        (
            "cast_value float64 -> uint8 with fill NaN and no scalar_map",
            lambda: zarr.create_array(
                store={},
                shape=(4,),
                dtype="float64",
                fill_value=np.nan,
                filters=[CastValue(data_type="uint8")],
            ),
        ),
    ]
    for label, fn in checks:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a = fn()
                if hasattr(a, "__setitem__"):
                    a[:] = 1
            lines.append(f"- {label}: accepted")
        except Exception as e:  # noqa: BLE001
            lines.append(f"- {label}: `{type(e).__name__}: {e}`")
    return lines


def tree_files(root: Path) -> dict[str, bytes]:
    """Every file below `root`, by its path relative to `root` (with `/`)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def check(committed: Path) -> int:
    """Regenerate into a temporary directory and compare byte for byte with `committed`."""
    tmp = zc.make_temp_dir("zarr-fixtures-check-")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            generate(tmp / "out")
        fresh = tree_files(tmp / "out")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    have = tree_files(committed)
    problems = [f"missing from {committed}: {k}" for k in sorted(fresh.keys() - have.keys())]
    problems += [f"not written by the generator: {k}" for k in sorted(have.keys() - fresh.keys())]
    problems += [f"differs: {k}" for k in sorted(fresh.keys() & have.keys()) if fresh[k] != have[k]]
    if problems:
        print(
            f"{committed} does not match a fresh run of {Path(__file__).name}:",
            file=sys.stderr,
        )
        for line in problems:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(f"{committed}: all {len(have)} files match a fresh run")
    return 0


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["--check"]:
        # `--check [DIR]`: DIR (default fixtures/zarr-python) must be exactly what this script writes.
        return check(Path(args[1]) if len(args) > 1 else OUT)
    # An output directory other than fixtures/zarr-python may be given (to compare a fresh run).
    generate(Path(args[0]) if args else OUT)
    return 0


def generate(out: Path) -> None:
    zc.fresh_output_dir(out)
    err_dir = out / "decode_errors"
    err_dir.mkdir()

    rows = []
    for f in fixtures():
        info = write_fixture(f, out)
        rows.append(info)
        print(f"wrote {f.name}: {len(info['stored_keys'])} stored keys")
    err_rows = []
    for f in error_fixtures():
        info = write_fixture(f, err_dir)
        err_rows.append(info)
        print(f"wrote decode_errors/{f.name}: {info['expected_error']}")

    def row(info: dict[str, Any], prefix: str = "") -> str:
        shape = "x".join(map(str, info["shape"]))
        chunks = "x".join(map(str, info["chunk_shape"]))
        if "inner_chunk_shape" in info:
            chunks += " (inner " + "x".join(map(str, info["inner_chunk_shape"])) + ")"
        codecs = info["codecs_summary"].replace("|", "\\|")
        desc = info["description"].replace("|", "\\|")
        if "expected_error" in info:
            desc += f" Error: `{info['expected_error']}`"
        return (
            f"| `{prefix}{info['name']}` | {info['data_type']} | {shape} / {chunks} | "
            f"`{codecs}` | {desc} |"
        )

    readme = README_HEAD.format(
        zarr_version=zarr.__version__,
        cvr_version=version("cast-value-rs"),
        np_version=np.__version__,
    )
    readme += "\n".join(row(i) for i in rows) + "\n"
    readme += (
        "\n### decode_errors/\n\n| name | data type | shape / chunks | codecs | what it covers |\n"
    )
    readme += "| --- | --- | --- | --- | --- |\n"
    readme += "\n".join(row(i, "decode_errors/") for i in err_rows) + "\n"
    readme += README_TAIL.format(refused="\n".join(probe_refused()))
    (out / "README.md").write_text(readme)

    total = zc.tree_bytes(out)
    print(f"{len(rows)} fixtures + {len(err_rows)} decode-error fixtures, {total} bytes in {out}")


if __name__ == "__main__":
    sys.exit(main())
