"""The repository's zarr-python fixtures (``fixtures/zarr-python``), read and
written through zarr with these classes selected and with zarr's own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrs_extension_codecs as zec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "zarr-python"
STORES = sorted(p.name.removesuffix(".zarr") for p in FIXTURES.glob("*.zarr"))
ERROR_STORES = sorted(
    p.name.removesuffix(".zarr") for p in (FIXTURES / "decode_errors").glob("*.zarr")
)


def read(path: Path, ours: bool) -> np.ndarray:
    with zec.enable() if ours else zec.disable():
        arr = zarr.open_array(path, mode="r")
        codecs = [type(c).__module__ for c in _array_array_codecs(arr)]
        assert all(m.startswith("zarrs_extension_codecs" if ours else "zarr.") for m in codecs)
        return np.asarray(arr[...])


def _array_array_codecs(arr: zarr.Array) -> list[object]:
    """The scale_offset / cast_value codecs of `arr`, inside a shard too."""
    found = []
    pending = list(arr.metadata.codecs)
    while pending:
        codec = pending.pop()
        pending.extend(getattr(codec, "codecs", ()))
        if isinstance(codec, zarr.codecs.ScaleOffset | zarr.codecs.CastValue):
            found.append(codec)
    assert found
    return found


# zarr's advice about a codec chain around sharding_indexed, for the
# fixture that has one; not about these classes.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Combining a `sharding_indexed` codec disables partial reads:UserWarning"
)


def test_every_fixture_is_covered() -> None:
    assert len(STORES) >= 25
    assert len(ERROR_STORES) >= 2


PIPELINES = {
    "batched": "zarr.core.codec_pipeline.BatchedCodecPipeline",
    "fused": "zarr.core.codec_pipeline.FusedCodecPipeline",
    # The whole chain in Rust (LocalStore: read by zarrs).
    "codec-pipeline": "zarrs_extension_codecs.CodecPipeline",
}


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
@pytest.mark.parametrize("name", STORES)
def test_read_gives_zarrs_values(name: str, pipeline: str) -> None:
    """zarr's default pipeline runs the async variants, the fused one the
    sync ones on its thread pool; CodecPipeline runs zarrs."""
    meta = json.loads((FIXTURES / f"{name}.expected.json").read_text())
    # A fallback to zarr's pipeline would raise instead of passing unseen.
    config = {"codec_pipeline.path": PIPELINES[pipeline], "codec_pipeline.fallback": "raise"}
    with zarr.config.set(config):
        ours = read(FIXTURES / f"{name}.zarr", ours=True)
    theirs = read(FIXTURES / f"{name}.zarr", ours=False)
    assert ours.dtype == theirs.dtype
    assert ours.tobytes() == theirs.tobytes()
    expected = (FIXTURES / f"{name}.expected.bin").read_bytes()
    assert ours.astype(ours.dtype.newbyteorder("<")).tobytes() == expected
    assert list(ours.shape) == meta["shape"]


@pytest.mark.parametrize("name", ERROR_STORES)
def test_read_fails_as_zarr_fails(name: str) -> None:
    errors = []
    for ours in (True, False):
        with pytest.raises(Exception) as info:  # noqa: PT011 - compared below
            read(FIXTURES / "decode_errors" / f"{name}.zarr", ours)
        errors.append(type(info.value))
    assert errors[0] is errors[1]


def _stored(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "zarr.json"
    }


@pytest.mark.parametrize("name", [n for n in STORES if (FIXTURES / f"{n}.input.bin").exists()])
def test_write_gives_zarrs_chunks(name: str, tmp_path: Path) -> None:
    """Writing the fixture's input whole, with these classes, stores the
    bytes zarr-python stored."""
    source = FIXTURES / f"{name}.zarr"
    info = json.loads((FIXTURES / f"{name}.input.json").read_text())
    dtype = np.dtype(info["data_type"]).newbyteorder("<")
    data = np.frombuffer((FIXTURES / f"{name}.input.bin").read_bytes(), dtype=dtype)
    data = data.reshape(info["shape"])
    target = tmp_path / f"{name}.zarr"
    target.mkdir()
    shutil.copy(source / "zarr.json", target / "zarr.json")
    with zec.enable():
        arr = zarr.open_array(target, mode="r+")
        assert _array_array_codecs(arr)
        arr[...] = data
    assert _stored(target) == _stored(source)
