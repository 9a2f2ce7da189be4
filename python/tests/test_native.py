"""Bad input to the native functions and the classes: an exception of the
type zarr raises, never a crash or a wrong value; the output layout; the
async variants inline or off the event loop by size; which chunks are
split; the package version."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import tomllib
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
from chunk_spec import spec
from zarr.core.buffer import default_buffer_prototype
from zarr_classes import ZarrCastValue, ZarrScaleOffset

import zarrs_extension_codecs as zec
from zarrs_extension_codecs import _calls, _native

ROOT = Path(__file__).resolve().parents[2]


def nd(arr: np.ndarray):
    return default_buffer_prototype().nd_buffer.from_ndarray_like(arr)


def f64(x: float) -> bytes:
    return np.float64(x).tobytes()


def test_scale_offset_by_hand() -> None:
    src = np.array([[1.5, 2.0], [-0.5, 101.5]])
    out = np.empty_like(src)
    _native.scale_offset(True, src, out, f64(1.5), f64(4.0))
    np.testing.assert_array_equal(out, [[0.0, 2.0], [-8.0, 400.0]])
    _native.scale_offset(False, out, out, f64(1.5), f64(4.0))  # in place
    np.testing.assert_array_equal(out, src)


@pytest.mark.parametrize(
    ("src", "out", "error"),
    [
        (np.zeros(3, complex), np.zeros(3, complex), TypeError),
        (np.zeros(3, bool), np.zeros(3, bool), TypeError),
        (np.zeros(3), np.zeros(3, "f4"), ValueError),  # dtypes differ
        (np.zeros(3), np.zeros(2), ValueError),  # too small
        (np.zeros(4)[::2], np.zeros(2), ValueError),  # not contiguous
        (np.zeros(3, ">f8"), np.zeros(3), ValueError),  # byte-swapped
        (np.zeros(3), np.zeros(3, ">f8"), ValueError),
        (np.zeros(3), np.zeros((3, 2)).T[0], ValueError),
    ],
)
def test_scale_offset_refuses(src: np.ndarray, out: np.ndarray, error: type) -> None:
    with pytest.raises(error):
        _native.scale_offset(False, src, out, b"", b"")


def test_read_only_or_overlapping_output_is_refused() -> None:
    src = np.arange(4.0)
    out = np.empty(4)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        _native.scale_offset(True, src, out, b"", f64(2.0))
    both = np.arange(8.0)
    with pytest.raises(ValueError, match="overlaps"):
        _native.scale_offset(True, both[:4], both[2:6], b"", f64(2.0))
    np.testing.assert_array_equal(both, np.arange(8.0))


def test_bad_scalars_and_zero_scale() -> None:
    src, out = np.arange(4.0), np.empty(4)
    with pytest.raises(ValueError, match="scale"):
        _native.scale_offset(True, src, out, b"", b"\x00\x00")
    with pytest.raises(ValueError, match="scale must be non-zero"):
        _native.scale_offset(True, src, out, b"", f64(0.0))


def test_misaligned_buffers_give_the_aligned_results() -> None:
    raw = bytearray(8 * 100 + 1)
    src = np.frombuffer(raw, dtype="f8", offset=1, count=100)
    src.flags.writeable = True
    src[:] = np.linspace(-5, 5, 100)
    assert not src.flags.aligned
    out = np.frombuffer(bytearray(8 * 100 + 3), dtype="f8", offset=3, count=100)
    out.flags.writeable = True
    _native.scale_offset(False, src, out, f64(0.25), f64(0.1))
    np.testing.assert_array_equal(out, np.linspace(-5, 5, 100) / 0.1 + 0.25)
    plan = _native.CastPlan(np.dtype("f8"), np.dtype("i2"), "nearest-even", "clamp")
    cast = np.frombuffer(bytearray(201), dtype="i2", offset=1, count=100)
    cast.flags.writeable = True
    plan.cast(out, cast)
    np.testing.assert_array_equal(cast, np.clip(np.rint(out), -32768, 32767).astype("i2"))


def test_cast_plan_refuses() -> None:
    f8, u8 = np.dtype("f8"), np.dtype("u1")
    with pytest.raises(ValueError, match="rounding"):
        _native.CastPlan(f8, u8, "nearest")
    with pytest.raises(ValueError, match="out_of_range"):
        _native.CastPlan(f8, u8, "nearest-even", "saturate")
    with pytest.raises(TypeError):
        _native.CastPlan(np.dtype("c16"), u8, "nearest-even")
    with pytest.raises(ValueError, match="scalar_map"):
        _native.CastPlan(f8, u8, "nearest-even", None, [(b"\x00", b"\x00")])
    plan = _native.CastPlan(f8, u8, "nearest-even")
    with pytest.raises(TypeError):
        plan.cast(np.zeros(3, "f4"), np.zeros(3, "u1"))
    with pytest.raises(TypeError):
        plan.cast(np.zeros(3), np.zeros(3, "i1"))
    with pytest.raises(ValueError, match="shape"):
        plan.cast(np.zeros(3), np.zeros(4, "u1"))
    with pytest.raises(ValueError, match="NaN"):
        plan.cast(np.array([1.0, np.nan]), np.zeros(2, "u1"))
    out = np.zeros(3, "u1")
    out.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        plan.cast(np.zeros(3), out)


def test_scalar_map_entry_that_does_not_fit_is_a_type_error() -> None:
    """As zarr's backend raises for it (zarr's validation refuses it first
    when an array is created or opened)."""
    for cls in (zec.CastValue, ZarrCastValue):
        codec = cls(data_type="uint8", scalar_map={"encode": [("NaN", 300)]})
        with pytest.raises(TypeError):
            codec._encode_sync(nd(np.array([np.nan])), spec((1,), "float64"))


def test_chunk_of_another_dtype_is_refused() -> None:
    with pytest.raises(ValueError, match="data type"):
        zec.ScaleOffset(scale=2)._decode_sync(nd(np.zeros(4, "f4")), spec((4,), "float64"))


def test_layouts_and_byte_orders() -> None:
    """Fortran order stays Fortran (no copy), a big-endian chunk comes back
    big-endian as zarr's ScaleOffset returns it, strided views are read."""
    codec = zec.ScaleOffset(offset=1, scale=2)
    base = np.arange(24.0).reshape(4, 6)
    expected = (base - 1) * 2
    for arr in (np.asfortranarray(base), base[:, ::1], base.astype(">f8"), base.T.copy().T):
        got = np.asarray(codec._encode_sync(nd(arr), spec(arr.shape, "float64")).as_ndarray_like())
        assert got.dtype == arr.dtype
        np.testing.assert_array_equal(got, expected)
    strided = np.arange(48.0).reshape(4, 12)[:, ::2]
    got = codec._encode_sync(nd(strided), spec(strided.shape, "float64")).as_ndarray_like()
    np.testing.assert_array_equal(got, (strided - 1) * 2)
    cast = zec.CastValue(data_type="uint16")
    got = cast._encode_sync(nd(base.astype(">f8")[:, ::2]), spec((4, 3), "float64"))
    np.testing.assert_array_equal(got.as_ndarray_like(), base[:, ::2].astype("u2"))


def test_threads_do_not_change_results() -> None:
    src = np.linspace(-1e4, 1e4, 3 << 20)
    outs = []
    for threads in (1, 2, 4):
        out = np.empty_like(src)
        _native.scale_offset(True, src, out, f64(0.5), f64(0.1), threads)
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes() == outs[2].tobytes()
    assert _native.default_threads() >= 1


def default_threads_with(env_vars: dict[str, str], code: str = "") -> int:
    """`default_threads()` in a new process with `env_vars` set (and neither
    thread variable otherwise), after running `code` there: the counts are
    read from the environment then."""
    names = ("OMP_NUM_THREADS", "ZARRS_EXTENSION_CODECS_THREADS")
    env = {k: v for k, v in os.environ.items() if k not in names} | env_vars
    script = f"{code}\nfrom zarrs_extension_codecs import _native\nprint(_native.default_threads())"
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, check=True, capture_output=True, text=True
    )
    return int(out.stdout)


CPUS = len(os.sched_getaffinity(0))


@pytest.mark.skipif(CPUS < 2, reason="needs two CPUs to tell limits from the CPU count")
def test_default_threads_follow_the_environment() -> None:
    cpus = default_threads_with({})
    assert cpus >= 2
    for value in ("1", "1,2", " 1 "):
        assert default_threads_with({"OMP_NUM_THREADS": value}) == 1
        assert default_threads_with({"ZARRS_EXTENSION_CODECS_THREADS": value}) == 1
    # Not a count of at least 1: ignored.
    for value in ("0", "many", ""):
        assert default_threads_with({"OMP_NUM_THREADS": value}) == cpus
    assert default_threads_with({"OMP_NUM_THREADS": str(cpus + 5)}) == cpus
    # The package's own variable first: BLAS limited, chunks still split.
    both = {"OMP_NUM_THREADS": "1", "ZARRS_EXTENSION_CODECS_THREADS": str(cpus)}
    assert default_threads_with(both) == cpus


@pytest.mark.skipif(CPUS < 2, reason="needs two CPUs to pin a process to fewer")
def test_default_threads_follow_a_process_pinned_while_it_runs() -> None:
    code = (
        "import os, time\n"
        "from zarrs_extension_codecs import _calls, _native\n"
        "assert _native.default_threads() >= 2\n"
        "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "time.sleep(0.05)"
    )
    assert default_threads_with({}, code) == 1


def decode_thread(elements: int) -> bool:
    """Whether `CastValue`'s async decode of `elements` uint8 values ran
    on the event loop's thread (checking what it returned)."""
    seen: list[int] = []

    class Probe(zec.CastValue):
        def _decode_sync(self, chunk_array, chunk_spec):
            seen.append(threading.get_ident())
            return super()._decode_sync(chunk_array, chunk_spec)

    codec = Probe(data_type="uint8")
    codes = (np.arange(elements) % 251).astype("u1")

    async def main() -> tuple[int, np.ndarray]:
        loop_thread = threading.get_ident()
        out = await codec._decode_single(nd(codes), spec(codes.shape, "float64"))
        return loop_thread, np.asarray(out.as_ndarray_like())

    loop_thread, out = asyncio.run(main())
    np.testing.assert_array_equal(out, codes.astype("float64"))
    assert len(seen) == 1
    return seen[0] == loop_thread


@pytest.mark.parametrize("elements", [4, 1 << 15, 1 << 20])
def test_async_variants_run_on_the_calling_thread(elements: int) -> None:
    assert decode_thread(elements)


def test_async_variants_on_a_worker_thread_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    # What the benchmark measures them against.
    monkeypatch.setattr(_calls, "ON_WORKER_THREAD", True)
    assert not decode_thread(4)


@pytest.mark.parametrize("on_worker_thread", [False, True])
def test_batches_give_zarrs_chunks_in_order(
    monkeypatch: pytest.MonkeyPatch, on_worker_thread: bool
) -> None:
    monkeypatch.setattr(_calls, "ON_WORKER_THREAD", on_worker_thread)
    f64 = spec((3, 4), "float64")
    chunks = [np.arange(12.0).reshape(3, 4) * k for k in (1, 2, 3)]
    batch = [(nd(chunks[0]), f64), (None, f64), (nd(chunks[1]), f64), (nd(chunks[2]), f64)]
    codecs = [
        (zec.ScaleOffset(offset=1, scale=4), ZarrScaleOffset(offset=1, scale=4)),
        (zec.CastValue(data_type="int16"), ZarrCastValue(data_type="int16")),
    ]
    for ours, theirs in codecs:
        for method in ("encode", "decode"):
            got = list(asyncio.run(getattr(ours, method)(batch)))
            want = list(asyncio.run(getattr(theirs, method)(batch)))
            assert [g is None for g in got] == [False, True, False, False]
            for g, w in zip(got, want, strict=True):
                if w is not None:
                    assert g.as_ndarray_like().dtype == w.as_ndarray_like().dtype
                    assert g.as_ndarray_like().tobytes() == w.as_ndarray_like().tobytes()


def test_only_large_chunks_are_split() -> None:
    cpus = _native.default_threads()
    assert _native.split_threads((2 << 20) - 1) == 1
    # Called alone: every thread the limit allows.
    assert _native.split_threads(2 << 20) == cpus
    assert _native.split_threads(64 << 20) == cpus


def test_version_is_the_crates() -> None:
    crate = tomllib.loads((ROOT / "Cargo.toml").read_text())["package"]["version"]
    binding = tomllib.loads((ROOT / "python" / "Cargo.toml").read_text())["package"]["version"]
    assert crate == binding == zec.__version__ == version("zarrs-extension-codecs")
    assert f"`zarrs-extension-codecs` {crate}" in (ROOT / "CHANGELOG.md").read_text()
