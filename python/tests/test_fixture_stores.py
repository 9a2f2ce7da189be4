"""Every store of the repository's other fixture directories read through
`CodecPipeline`: ``fixtures/zarr-python-core``, ``zarr-python-products``,
``zarr-python-strings`` and ``tensorstore`` (``fixtures/zarr-python`` is
read by ``test_fixtures.py``).

The golden values are the fixtures' own: ``NAME.expected.bin`` (what the
writer decoded, in the layout each directory's README describes) or, for
the strings, ``values`` in ``NAME.expected.json``; zarr-python's default
pipeline reads each store too and must agree with them. With
``codec_pipeline.fallback`` set to ``"raise"`` every store is read by zarrs
or raises `FallbackError`; the stores that must raise are listed, with why,
in `FALLBACK`, and are read again with the fallback allowed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrs_extension_codecs as zec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DIRECTORIES = ("zarr-python-core", "zarr-python-products", "zarr-python-strings", "tensorstore")
STORES = [
    f"{directory}/{path.name.removesuffix('.zarr')}"
    for directory in DIRECTORIES
    for path in sorted((FIXTURES / directory).glob("*.zarr"))
]

# The stores CodecPipeline hands to zarr's own pipeline, and why.
VARIABLE_LENGTH = "a data type without a fixed size: zarr's pipeline decodes it"
FALLBACK = {
    "zarr-python-core/transpose_10_string": f"string (vlen-utf8), {VARIABLE_LENGTH}",
    "zarr-python-strings/bytes_1d": f"variable_length_bytes (vlen-bytes), {VARIABLE_LENGTH}",
    "zarr-python-strings/utf8_1d": f"string (vlen-utf8), {VARIABLE_LENGTH}",
    "zarr-python-strings/utf8_2d": f"string (vlen-utf8), {VARIABLE_LENGTH}",
    "zarr-python-strings/utf8_fill_chunks": f"string (vlen-utf8), {VARIABLE_LENGTH}",
    "zarr-python-strings/utf8_sharded": f"string (vlen-utf8) in shards, {VARIABLE_LENGTH}",
}

ZARR = {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}
OURS = {"codec_pipeline.path": "zarrs_extension_codecs.CodecPipeline"}

# zarr's advice about codecs around sharding_indexed; not about the pipeline.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Combining a `sharding_indexed` codec disables partial reads:UserWarning"
)


def _open(path: Path, config: dict[str, Any], fallback: str) -> zarr.Array:
    with zec.disable(), zarr.config.set({**config, "codec_pipeline.fallback": fallback}):
        return zarr.open_array(path, mode="r")


def _read(arr: zarr.Array, config: dict[str, Any], fallback: str, where: Any = ...) -> np.ndarray:
    with zec.disable(), zarr.config.set({**config, "codec_pipeline.fallback": fallback}):
        return np.asarray(arr[where])


def _normalised(values: np.ndarray) -> np.ndarray:
    """`values` as the fixtures store them: fixed-size elements
    little-endian; variable-length ones as each element's bytes (UTF-8 for
    strings), in an object array."""
    if values.dtype.kind in "biufc":
        return values.astype(values.dtype.newbyteorder("<"))
    flat = [v.encode() if isinstance(v, str) else bytes(v) for v in values.ravel()]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(values.shape)


def _expected(store: str, meta: dict[str, Any], dtype: np.dtype[Any]) -> np.ndarray:
    """The whole array as the fixture's files give it, normalised."""
    directory, name = store.split("/")
    shape = tuple(meta["shape"])
    path = FIXTURES / directory / f"{name}.expected.bin"
    if not path.exists():
        # zarr-python-strings: `values`, C order; bytes as lists of values.
        flat = [v.encode() if isinstance(v, str) else bytes(v) for v in meta["values"]]
    elif dtype.kind in "biufc":
        return np.frombuffer(path.read_bytes(), dtype=dtype.newbyteorder("<")).reshape(shape)
    else:
        # Per element: its UTF-8 length as a little-endian u32, then the bytes.
        raw, flat, at = path.read_bytes(), [], 0
        while at < len(raw):
            n = int.from_bytes(raw[at : at + 4], "little")
            flat.append(raw[at + 4 : at + 4 + n])
            at += 4 + n
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(shape)


def _same(got: np.ndarray, want: np.ndarray) -> None:
    got = _normalised(got)
    assert got.shape == want.shape
    if want.dtype == object:
        assert got.dtype == object
        assert got.tolist() == want.tolist()
    else:
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes()


def test_every_directory_is_covered() -> None:
    for directory in DIRECTORIES:
        assert [s for s in STORES if s.startswith(f"{directory}/")], directory
    assert len(STORES) >= 80
    assert set(FALLBACK) <= set(STORES)


@pytest.mark.parametrize("store", STORES)
def test_store_reads_through_the_pipeline(store: str) -> None:
    directory, name = store.split("/")
    path = FIXTURES / directory / f"{name}.zarr"
    meta = json.loads((FIXTURES / directory / f"{name}.expected.json").read_text())
    try:
        theirs_array = _open(path, ZARR, "allow")
        theirs = _read(theirs_array, ZARR, "allow")
    except Exception as e:
        # A data type or a codec form zarr-python lacks (tensorstore's
        # ml_dtypes types, transpose "F" / "C"): zarr with the pipeline
        # selected fails the same way, and there is nothing to compare.
        with pytest.raises(type(e)):
            _read(_open(path, OURS, "raise"), OURS, "raise")
        pytest.skip(f"zarr-python {zarr.__version__} cannot read it: {type(e).__name__}: {e}")
    want = _expected(store, meta, theirs.dtype)
    _same(theirs, want)

    if store in FALLBACK:
        with pytest.raises(zec.FallbackError, match="has no fixed size"):
            _read(_open(path, OURS, "raise"), OURS, "raise")
        fallback = "allow"
    else:
        fallback = "raise"
    arr = _open(path, OURS, fallback)
    assert isinstance(arr._async_array.codec_pipeline, zec.CodecPipeline)
    assert (arr._async_array.codec_pipeline.native is None) == (store in FALLBACK)
    ours = _read(arr, OURS, fallback)
    assert ours.dtype == theirs.dtype
    _same(ours, want)
    for subset in meta.get("subsets", []):
        where = tuple(
            slice(start, start + n)
            for start, n in zip(subset["start"], subset["shape"], strict=True)
        )
        _same(_read(arr, OURS, fallback, where), want[where])
