"""Scale-out on dask: a scale_offset + cast_value store read through ``dask.array.from_zarr``.

The store is written by zarr-python with zarr's own classes and looks like EOPF Sentinel-2
reflectance: float64 reflectance encoded as ``uint16 = round((reflectance + 0.1) * 10000)``,
NaN (no data) mapped to 0 and back. The golden values are zarr-python's: the same store read
with zarr's own classes. Every read here must match them bit for bit.

How we know our classes did the decoding rather than zarr's: zarr's own decode arithmetic
(``zarr.codecs.scale_offset._decode`` and the ``cast_value_rs.cast_array`` call in
``zarr.codecs.cast_value``) is replaced by a trap that raises for any array with more than one
element (the one-element fill-value casts in ``resolve_metadata`` stay allowed). A read that
succeeds with the trap set did not run zarr's kernels; ``test_trap_fires_for_zarr_classes``
shows the trap does fire when zarr's classes are selected.

In worker processes the classes are selected the way a user selects them there: the
``ZARR_CODECS__SCALE_OFFSET`` / ``ZARR_CODECS__CAST_VALUE`` environment variables, set before
the cluster starts, read by zarr when it is imported in each worker.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING, Any

import cloudpickle
import dask.array as da
import numpy as np
import pytest
import xarray as xr
import zarr
import zarr.codecs.cast_value
import zarr.codecs.scale_offset
from distributed import Client, LocalCluster, wait
from zarr.codecs import CastValue, ScaleOffset

import zarrs_extension_codecs

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

OURS = {
    "scale_offset": "zarrs_extension_codecs.ScaleOffset",
    "cast_value": "zarrs_extension_codecs.CastValue",
}
ZARRS_OWN = {
    "scale_offset": "zarr.codecs.scale_offset.ScaleOffset",
    "cast_value": "zarr.codecs.cast_value.CastValue",
}
BATCHED = "zarr.core.codec_pipeline.BatchedCodecPipeline"
FUSED = "zarr.core.codec_pipeline.FusedCodecPipeline"

ARRAY = "reflectance"
SHAPE = (600, 500)
CHUNKS = (128, 96)  # edge chunks are partial in both dimensions
SCALE = 10000
OFFSET = -0.1
TRAP = "zarr-kernel-trap"


def _codec_config(impl: dict[str, str]) -> dict[str, str]:
    return {f"codecs.{name}": path for name, path in impl.items()}


def _env(impl: dict[str, str]) -> dict[str, str]:
    return {f"ZARR_CODECS__{name.upper()}": path for name, path in impl.items()}


def _codec_classes(arr: zarr.Array) -> dict[str, str]:
    """The class of each array->array codec of ``arr`` (as zarr's registry names it)."""
    found = {}
    for codec in arr.metadata.codecs:
        name = codec.to_dict()["name"]
        if name in OURS:
            found[name] = zarr.registry.fully_qualified_name(type(codec))
    return found


def _assert_identical(got: np.ndarray, want: np.ndarray) -> None:
    """Exact equality: same dtype, shape and bits (so NaN positions and -0.0 count too)."""
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def _source_values() -> np.ndarray:
    """Reflectance-like float64: mostly in [-0.1, 1.2], with no-data NaNs and a few outliers."""
    rng = np.random.default_rng(17)
    values = rng.uniform(-0.1, 1.2, size=SHAPE)
    values[rng.random(SHAPE) < 0.02] = np.nan  # no data
    values[0, :8] = [
        -0.1,
        0.0,
        0.00005,
        0.00015,
        6.5535,
        7.0,
        -0.2,
        -0.0,
    ]  # edges, clamps
    return values


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A group with one array, written by zarr-python with zarr's own classes."""
    path = tmp_path_factory.mktemp("dask") / "s2.zarr"
    with zarr.config.set(_codec_config(ZARRS_OWN)):
        group = zarr.open_group(path, mode="w")
        arr = group.create_array(
            ARRAY,
            shape=SHAPE,
            chunks=CHUNKS,
            dtype="float64",
            fill_value=np.nan,
            dimension_names=("y", "x"),
            filters=[
                ScaleOffset(offset=OFFSET, scale=SCALE),
                CastValue(
                    data_type="uint16",
                    rounding="nearest-even",
                    out_of_range="clamp",
                    scalar_map={"encode": [("NaN", 0)], "decode": [(0, "NaN")]},
                ),
            ],
        )
        arr[...] = _source_values()
    return path


@pytest.fixture(scope="module")
def reference(store: Path) -> np.ndarray:
    """The store read with zarr's own classes: the golden values."""
    with zarr.config.set(_codec_config(ZARRS_OWN)):
        arr = zarr.open_array(store / ARRAY, mode="r")
        assert _codec_classes(arr) == ZARRS_OWN
        values = arr[...]
    # The golden values agree with the spec worked out here in numpy (encode: subtract the
    # offset, multiply by the scale, round half to even, clamp to uint16, NaN -> 0; decode:
    # 0 -> NaN, divide by the scale, add the offset), and they are really quantised.
    source = _source_values()
    with np.errstate(invalid="ignore"):
        code = np.clip(np.rint((source - OFFSET) * SCALE), 0, 65535)
    nodata = np.isnan(source) | (code == 0)
    model = np.where(nodata, np.nan, code / SCALE + OFFSET)
    _assert_identical(values, model)
    assert np.count_nonzero(values[~nodata] != source[~nodata]) > source.size // 2
    return values


def _install_trap() -> None:
    """Make zarr's own decode arithmetic raise for anything bigger than a fill value.

    Runs in this process (threaded scheduler) or in each worker (``client.run``). Raises a
    plain RuntimeError so the error pickles back from a worker without this module.
    """
    real_decode = zarr.codecs.scale_offset._decode
    real_cast = zarr.codecs.cast_value.cast_array_rs

    def trapped_decode(arr: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        if arr.size > 1:
            raise RuntimeError(f"{TRAP}: zarr's scale_offset decode ran on {arr.shape}")
        return real_decode(arr, *args, **kwargs)

    def trapped_cast(arr: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        if arr.size > 1:
            raise RuntimeError(f"{TRAP}: cast_value_rs.cast_array ran on {arr.shape}")
        return real_cast(arr, *args, **kwargs)

    zarr.codecs.scale_offset._decode = trapped_decode
    zarr.codecs.cast_value.cast_array_rs = trapped_cast


@pytest.fixture
def trap(reference: np.ndarray) -> Iterator[None]:
    """Set the trap in this process (after the reference was read) and take it away after."""
    saved = (zarr.codecs.scale_offset._decode, zarr.codecs.cast_value.cast_array_rs)
    _install_trap()
    try:
        yield
    finally:
        zarr.codecs.scale_offset._decode, zarr.codecs.cast_value.cast_array_rs = saved


def _open(store: Path, impl: dict[str, str], pipeline: str = BATCHED) -> zarr.Array:
    # The codec classes and the pipeline are fixed when the array is opened.
    with zarr.config.set({**_codec_config(impl), "codec_pipeline.path": pipeline}):
        arr = zarr.open_array(store / ARRAY, mode="r")
    assert _codec_classes(arr) == impl
    return arr


def test_classes_are_the_package_classes() -> None:
    with zarr.config.set(_codec_config(OURS)):
        assert zarr.registry.get_codec_class("scale_offset") is zarrs_extension_codecs.ScaleOffset
        assert zarr.registry.get_codec_class("cast_value") is zarrs_extension_codecs.CastValue
    assert issubclass(zarrs_extension_codecs.ScaleOffset, ScaleOffset)
    assert issubclass(zarrs_extension_codecs.CastValue, CastValue)


@pytest.mark.parametrize("pipeline", [BATCHED, FUSED], ids=["batched", "fused"])
@pytest.mark.parametrize("chunks", [None, (200, 160)], ids=["zarr-chunks", "misaligned"])
def test_from_zarr_threaded_scheduler(
    store: Path,
    reference: np.ndarray,
    trap: None,
    pipeline: str,
    chunks: tuple[int, int] | None,
) -> None:
    with zarr.config.set({**_codec_config(OURS), "codec_pipeline.path": pipeline}):
        x = da.from_zarr(str(store), component=ARRAY, chunks=chunks)
    assert x.chunksize == (chunks or CHUNKS)
    got = x.compute(scheduler="threads", num_workers=2)
    _assert_identical(got, reference)
    # the opened array is what the graph reads through; its classes are ours
    _assert_identical(
        da.from_zarr(_open(store, OURS, pipeline)).compute(scheduler="threads"),
        reference,
    )


def test_trap_fires_for_zarr_classes(store: Path, trap: None) -> None:
    # Read directly, not through dask: dask names an array by pickling and unpickling it, and
    # once the package's run of zarr's own tests has rebound zarr.codecs.scale_offset's
    # ScaleOffset (and cast_value's CastValue) in this process, cloudpickle takes zarr's
    # classes by value, and unpickling them would rebind their methods to the trap for good.
    arr = _open(store, ZARRS_OWN)
    with pytest.raises(RuntimeError, match=TRAP):
        arr[...]


def test_xarray_open_zarr_threaded(store: Path, reference: np.ndarray, trap: None) -> None:
    """The README's xarray example: a dask-backed Dataset, read with our classes."""
    with zarr.config.set(_codec_config(OURS)):
        ds = xr.open_zarr(store, consolidated=False)
    var = ds[ARRAY]
    assert var.dims == ("y", "x")
    assert var.chunks is not None  # dask-backed
    got = var.compute(scheduler="threads", num_workers=2).values
    _assert_identical(got, reference)


# --- dask.distributed: worker processes -------------------------------------------------------


def _worker_report() -> dict[str, Any]:
    """Run in each worker: which class zarr's registry picks, and where that choice came from."""
    import os

    import zarr.registry

    return {
        "pid": os.getpid(),
        "env": {k: v for k, v in os.environ.items() if k.startswith("ZARR_CODECS__")},
        "classes": {
            name: zarr.registry.fully_qualified_name(zarr.registry.get_codec_class(name))
            for name in ("scale_offset", "cast_value")
        },
    }


def _read_in_worker(path: str) -> tuple[dict[str, str], np.ndarray]:
    """Run in a worker: open the store there (the environment picks the classes) and read it."""
    import zarr

    arr = zarr.open_array(path, mode="r")
    return _codec_classes(arr), arr[...]


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    """Two single-threaded worker processes that select our classes through the environment."""
    # The functions below go to the workers by value: this test module need not be importable
    # there (pytest may import it under a name the workers cannot).
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    patch = pytest.MonkeyPatch()
    for key, value in _env(OURS).items():
        patch.setenv(key, value)  # set before the workers are spawned: they inherit it
    try:
        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=logging.ERROR,
            ) as cluster,
            Client(cluster) as client,
        ):
            client.run(_install_trap)
            yield client
    finally:
        patch.undo()
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def test_workers_select_our_classes_from_the_environment(client: Client) -> None:
    reports = client.run(_worker_report)
    assert len(reports) == 2
    for report in reports.values():
        assert report["pid"] != os.getpid()  # separate processes
        assert report["env"] == _env(OURS)
        assert report["classes"] == OURS


def test_read_opened_in_workers(client: Client, store: Path, reference: np.ndarray) -> None:
    """Each worker opens the store itself: the environment alone chooses our classes."""
    results = client.run(_read_in_worker, str(store / ARRAY))
    assert len(results) == 2
    for classes, values in results.values():
        assert classes == OURS
        _assert_identical(values, reference)


@pytest.mark.parametrize("chunks", [None, (200, 160)], ids=["zarr-chunks", "misaligned"])
def test_from_zarr_on_local_cluster(
    client: Client, store: Path, reference: np.ndarray, chunks: tuple[int, int] | None
) -> None:
    # The client opens the array (from_zarr does, here); the codec objects travel to the
    # workers pickled, so the client selects the classes too, the same way.
    with zarr.config.set(_codec_config(OURS)):
        x = da.from_zarr(str(store), component=ARRAY, chunks=chunks)
    persisted = client.persist(x)
    wait(persisted)
    # the chunks were read in both worker processes
    holders = client.who_has(persisted)
    assert len({worker for workers in holders.values() for worker in workers}) == 2
    _assert_identical(persisted.compute(), reference)


def _read_in_worker_with_zarrs_classes(path: str) -> None:
    """Run in a worker: open the store there with zarr's own classes and read it."""
    import zarr

    with zarr.config.set(_codec_config(ZARRS_OWN)):
        arr = zarr.open_array(path, mode="r")
    assert _codec_classes(arr) == ZARRS_OWN
    arr[...]


def test_trap_fires_in_workers_for_zarr_classes(client: Client, store: Path) -> None:
    # Opened in the workers, not pickled from here: see test_trap_fires_for_zarr_classes.
    with pytest.raises(RuntimeError, match=TRAP):
        client.run(_read_in_worker_with_zarrs_classes, str(store / ARRAY))
