"""`CodecPipeline` over every kind of store, through dask and xarray.

One sharded Sentinel-2-like store (scale_offset + cast_value to uint16,
blosc zstd, shards of 2 x 2 inner chunks, a missing shard) written by
zarr-python's default pipeline with zarr's own classes; each reader must
give zarr's values bit for bit: the store through `LocalStore` (read by
Rust), `MemoryStore`, `FsspecStore`, obstore's local, HTTP and S3 stores
(the repository's HTTP server and moto's S3 server, on 127.0.0.1), a
wrapper store, dask's threaded scheduler and `xarray.open_zarr`.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import servers
import zarr
from zarr.storage import FsspecStore, LocalStore, MemoryStore, ObjectStore, WrapperStore

import zarrs_extension_codecs as zec

OURS = {"codec_pipeline.path": "zarrs_extension_codecs.CodecPipeline"}
FILTERS: list[dict[str, Any]] = [
    {"name": "scale_offset", "configuration": {"scale": 10000, "offset": -0.1}},
    {
        "name": "cast_value",
        "configuration": {
            "data_type": "uint16",
            "rounding": "nearest-even",
            "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]},
        },
    },
]


@pytest.fixture(scope="module")
def product(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pipeline_stores") / "product.zarr"
    arr = zarr.create_array(
        root,
        name="b04",
        shape=(96, 80),
        chunks=(16, 16),
        shards=(32, 32),
        dtype="float64",
        fill_value=np.nan,
        filters=FILTERS,
        compressors=[{"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3}}],
    )
    rng = np.random.default_rng(4)
    values = np.round(rng.uniform(0, 1, (96, 80)) * 10000) / 10000 - 0.1
    values[rng.random(values.shape) < 0.05] = np.nan
    arr[:64] = values[:64]  # the last row of shards is never written
    return root


@pytest.fixture(scope="module")
def reference(product: Path) -> np.ndarray:
    return zarr.open_array(product, path="b04", mode="r")[...]


SELECTIONS: list[Any] = [
    ...,
    (slice(5, 70), slice(3, 77)),
    (7, slice(None)),
    (slice(None, None, 3), slice(1, 60, 7)),
]


def check(arr: zarr.Array, reference: np.ndarray, *, shard_parts_in_rust: bool = True) -> None:
    """Every selection as zarr reads it, with no fallback to zarr's pipeline;
    but, with `shard_parts_in_rust` false (a store Rust neither reads
    itself nor holds in memory), the selections that take parts of shards:
    zarr's pipeline reads those (it fetches byte ranges), a fallback that
    ``raise`` reports."""
    pipeline = arr._async_array.codec_pipeline
    assert isinstance(pipeline, zec.CodecPipeline)
    assert pipeline.native is not None
    with zarr.config.set({"codec_pipeline.fallback": "raise"}):
        if shard_parts_in_rust:
            read_all(arr, reference)
            return
        assert np.asarray(arr[...]).tobytes() == reference.tobytes()
        for selection in SELECTIONS[1:]:
            with pytest.raises(zec.FallbackError, match="parts of shards"):
                arr[selection]
    read_all(arr, reference)


def read_all(arr: zarr.Array, reference: np.ndarray) -> None:
    for selection in SELECTIONS:
        got = np.asarray(arr[selection])
        assert got.tobytes() == reference[selection].tobytes(), selection
    picks = (np.array([0, 40, 95, 40]), np.array([79, 0, 33]))
    assert arr.oindex[picks].tobytes() == reference[np.ix_(*picks)].tobytes()


def open_with_pipeline(store: Any) -> zarr.Array:
    with zarr.config.set(OURS):
        return zarr.open_array(store, path="b04", mode="r")


def test_local_store(product: Path, reference: np.ndarray) -> None:
    check(open_with_pipeline(LocalStore(product, read_only=True)), reference)


def test_memory_store(product: Path, reference: np.ndarray) -> None:
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.sync import sync

    src = LocalStore(product, read_only=True)
    memory = MemoryStore()

    async def copy() -> None:
        async for key in src.list():
            value = await src.get(key, prototype=default_buffer_prototype())
            await memory.set(key, value)

    sync(copy())
    check(open_with_pipeline(memory), reference)


def test_wrapper_store(product: Path, reference: np.ndarray) -> None:
    """A store wrapping a LocalStore is read through zarr's store API."""
    store = WrapperStore(LocalStore(product, read_only=True))
    check(open_with_pipeline(store), reference, shard_parts_in_rust=False)


def test_fsspec_store(product: Path, reference: np.ndarray) -> None:
    store = FsspecStore.from_url(f"file://{product}", read_only=True)
    check(open_with_pipeline(store), reference, shard_parts_in_rust=False)


def test_obstore_local(product: Path, reference: np.ndarray) -> None:
    obstore = pytest.importorskip("obstore")
    store = ObjectStore(obstore.store.LocalStore(str(product)), read_only=True)
    check(open_with_pipeline(store), reference, shard_parts_in_rust=False)


@pytest.fixture(scope="module")
def http_url(product: Path) -> Iterator[str]:
    yield from servers.http(product)


def test_obstore_http(http_url: str, reference: np.ndarray) -> None:
    obstore = pytest.importorskip("obstore")
    http = obstore.store.HTTPStore.from_url(http_url, client_options={"allow_http": True})
    store = ObjectStore(http, read_only=True)
    check(open_with_pipeline(store), reference)


def test_dask_threaded(product: Path, reference: np.ndarray) -> None:
    da = pytest.importorskip("dask.array")
    arr = open_with_pipeline(LocalStore(product, read_only=True))
    lazy = da.from_zarr(arr, chunks=(16, 40))
    got = lazy.compute(scheduler="threads", num_workers=2)
    assert got.tobytes() == reference.tobytes()


def test_xarray_open_zarr(product: Path, reference: np.ndarray) -> None:
    xr = pytest.importorskip("xarray")
    tmp = product.parent / "xr.zarr"
    shutil.rmtree(tmp, ignore_errors=True)
    with zarr.config.set(OURS):
        zarr.open_group(tmp, mode="w", zarr_format=3)
        arr = zarr.create_array(
            tmp,
            name="b04",
            shape=reference.shape,
            chunks=(16, 16),
            dtype="float64",
            fill_value=np.nan,
            filters=FILTERS,
            dimension_names=["y", "x"],
        )
        arr[...] = reference
        ds = xr.open_zarr(tmp, consolidated=False, chunks={})
        got = ds["b04"].values
    assert got.tobytes() == reference.tobytes()
    assert zarr.open_array(tmp, path="b04")[...].tobytes() == reference.tobytes()


@pytest.fixture(scope="module")
def s3_endpoint(product: Path) -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 with bucket `products` holding the store."""
    yield from servers.s3("products", product.parent)


def test_obstore_s3(s3_endpoint: str, product: Path, reference: np.ndarray) -> None:
    s3 = servers.moto_s3store(s3_endpoint, "products", product.name)
    check(open_with_pipeline(ObjectStore(s3, read_only=True)), reference)


def _read_in_worker(path: str) -> tuple[str, bytes]:
    """Run in a worker process: open the store there (the environment picks
    the pipeline) and read it."""
    import zarr

    import zarrs_extension_codecs  # noqa: F401 (registers the pipeline)

    arr = zarr.open_array(path, path="b04", mode="r")
    return type(arr._async_array.codec_pipeline).__name__, arr[...].tobytes()


def test_local_cluster_workers_select_it_from_the_environment(
    product: Path, reference: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("distributed")
    cloudpickle = pytest.importorskip("cloudpickle")
    import logging

    # Set before the worker is spawned: it inherits it.
    monkeypatch.setenv("ZARR_CODEC_PIPELINE__PATH", "zarrs_extension_codecs.CodecPipeline")
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        with (
            distributed.LocalCluster(
                n_workers=1,
                threads_per_worker=2,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=logging.ERROR,
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            results = client.run(_read_in_worker, str(product))
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert len(results) == 1
    for name, values in results.values():
        assert name == "CodecPipeline"
        assert values == reference.tobytes()
