"""`CodecPipeline`: zarr-python's chunk reads and writes run by zarrs, through
the Rust crate's codecs, with the GIL released and the chunks of a read in
parallel.

zarr builds one pipeline per array (`from_array_metadata_and_store`). This
one hands the array's ``zarr.json`` to zarrs (`_native.ChunkArray`) and
keeps zarr's own `BatchedCodecPipeline`, with this package's `ScaleOffset`
and `CastValue`, for what zarrs is not given; both are built at the
array's first read or write (`_Opening`), so opening costs what zarr's
own open costs:

- reads: chunks of a `LocalStore` are read by Rust from their files; those
  of an HTTP or S3 store (obstore's `HTTPStore` and `S3Store` under zarr's
  `ObjectStore`, fsspec's HTTP file system and s3fs under `FsspecStore`) by the
  crate's remote layer at the same URL with the same settings (see
  `_remote`), so a shard's index is kept and a window of it costs one round
  trip (the store is kept for arrays opened later: `_remote.shared_store`);
  any other store's chunks are fetched through zarr's async store API
  (concurrently, `async.concurrency` at a time) and decoded by Rust. A basic
  selection (slices of step 1, integers) is decoded straight into zarr's
  output, one call per read; any other (steps, integer or boolean arrays)
  is decoded into a temporary, one call per read, and numpy picks the
  elements from it. zarr gives an edge chunk's full shape: only its part
  inside the array is read (zarrs refuses the rest).
- writes: chunks are encoded by Rust, in parallel on the pipeline's
  threads, and stored through zarr's store API (read-modify-write for
  partial chunks), for every chain of `_WRITES`: the same bytes as zarr's
  for chains of `_BYTE_IDENTICAL` alone, the same values read back for the
  others (compressors, sharding); chunks (and shards) of fill values are
  not stored, as zarr drops them. A chain with another codec, or a write
  zarrs refuses, is written by zarr's own pipeline.
- what zarrs cannot open (a codec it does not have, a data type without a
  fixed size, Zarr v2 metadata), an output that is not a numpy array (GPU
  buffers), chunk keys it cannot parse, parts of shards from a store Rust
  does not read (but a `MemoryStore`), and the inner pipelines zarr's
  sharding codec makes: zarr's own pipeline. Each goes through
  `_fallback`: logged at debug level; with
  ``zarr.config.set({"codec_pipeline.fallback": "raise"})`` (or
  ``ZARR_CODEC_PIPELINE__FALLBACK=raise``) a `FallbackError` instead.
- a chunk zarrs cannot decode, of an array it reads: a `ValueError` naming
  the chunk, not a second read by zarr's pipeline (a failure of the remote
  layer excepted: zarr's store may still serve the chunk).
"""

from __future__ import annotations

import asyncio
import itertools
import json as json_module
import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import zarr
from zarr.abc.codec import CodecPipeline as _CodecPipeline
from zarr.abc.codec import GetResult
from zarr.core.buffer import default_buffer_prototype
from zarr.core.chunk_utils import chunk_is_empty, fill_value_or_default
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.core.metadata.v3 import ArrayV3Metadata
from zarr.storage import LocalStore, MemoryStore
from zarr.storage._common import StorePath

from zarrs_extension_codecs._kept_arrays import kept_array
from zarrs_extension_codecs._native import ChunkArray, StoredChunkError, pipeline_threads
from zarrs_extension_codecs._pipeline_codecs import with_our_classes
from zarrs_extension_codecs._remote import RemoteSource, remote_source

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Self

    from zarr.abc.codec import Codec
    from zarr.abc.store import ByteGetter, Store
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.dtype.wrapper import TBaseDType, TBaseScalar, ZDType
    from zarr.core.indexing import SelectorTuple
    from zarr.core.metadata import ArrayMetadata
    from zarr.core.metadata.v3 import ChunkGridMetadata

    BatchInfo = tuple[ByteGetter, ArraySpec, SelectorTuple, SelectorTuple, bool]

__all__ = ["CodecPipeline", "FallbackError", "enable_pipeline"]

log = logging.getLogger(__name__)

# Codecs whose zarrs encode gives the bytes zarr's gives (checked by
# python/tests/test_pipeline.py and test_edge_chunks.py): a chain of these
# alone is stored byte for byte as zarr stores it.
_BYTE_IDENTICAL = frozenset({"bytes", "transpose", "crc32c", "scale_offset", "cast_value"})
# Chains of these are written by Rust: besides the above, lossless
# compressors and sharding. Compressed bytes may differ from numcodecs' and
# zarr's (library versions), as may shards within shards (zarrs' sharding
# codec: C order), but all decode to the same values
# (python/tests/test_writes.py); other shards are laid out as zarr lays them
# out, with `write_empty_chunks` too. Any other codec
# zarrs may have (a lossy one) is written by zarr's pipeline.
_WRITES = _BYTE_IDENTICAL | {"blosc", "zstd", "gzip", "sharding_indexed"}

# The chunks of a write merged and encoded at a time (at least one a
# thread): about this many bytes of decoded chunks, and their encoded bytes,
# held beyond zarr's value.
_WRITE_BYTES = 64 << 20

# Chunks decoded into one temporary at a time, for selections that are not
# basic: at most this many bytes.
_TEMPORARY_BYTES = 256 << 20


class FallbackError(RuntimeError):
    """Raised instead of using zarr's own pipeline, when
    ``codec_pipeline.fallback`` is ``"raise"``."""


def _fallback(reason: str) -> None:
    """Note that zarr's pipeline does this call, or raise if asked to."""
    if str(zarr.config.get("codec_pipeline.fallback", "allow")).lower() == "raise":
        raise FallbackError(f"zarrs_extension_codecs.CodecPipeline: {reason}")
    log.debug("zarr's own pipeline: %s", reason)


def _threads() -> int:
    workers = zarr.config.get("threading.max_workers", None)
    # Rust's count of the CPUs reads the cgroup's quota files (13 µs, more
    # on a loaded machine: 1-4 % of a 256 x 256 window); asked again only
    # when what it depends on may have changed, as far as Python sees it: a
    # cgroup quota changed while the process runs is not seen.
    key = (
        workers,
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        os.environ.get("ZARRS_EXTENSION_CODECS_THREADS"),
        os.environ.get("OMP_NUM_THREADS"),
    )
    count = _THREADS.get(key)
    if count is None:
        count = _THREADS[key] = pipeline_threads(int(workers) if workers else None)
    return count


# `_threads()` by what it depends on (a handful of entries in a process).
_THREADS: dict[tuple[Any, ...], int] = {}


def _names(codecs: Iterable[Any]) -> set[str]:
    names: set[str] = set()
    for codec in codecs:
        d = codec if isinstance(codec, dict) else codec.to_dict()
        names.add(str(d.get("name")))
        inner = (d.get("configuration") or {}).get("codecs")
        if isinstance(inner, (list, tuple)):
            names |= _names(inner)
            names.add("sharding_indexed")
    return names


# The remote arrays of a parent process, in a child made by `fork()`: not
# used there (their store's runtime has threads in the parent only), and
# held (see `_remote._LEFT_BY_PARENT`).
_LEFT_BY_PARENT: list[dict[str, ChunkArray]] = []


@dataclass(frozen=True)
class _Native:
    """What zarrs was given of one array."""

    metadata: ArrayV3Metadata
    json: str
    store: Store
    dtype: np.dtype[Any]
    writes: bool
    sharded: bool
    # Where Rust reads the store's chunks from: zarr's `LocalStore` itself,
    # the crate's remote layer (`RemoteSource`), or nowhere (`None`: zarr's
    # store API fetches, Rust decodes).
    remote: RemoteSource | None = None
    # The chunk shape of a regular chunk grid (else `None`): where a chunk
    # lies, to grow zarrs' array with zarr's (`_cover`).
    grid: tuple[int, ...] | None = None
    # The inner chunk shape of a sharded array (else `None`): which inner
    # chunks a selection of points needs (`_inner_boxes`).
    inner: tuple[int, ...] | None = None
    # The shape of the innermost chunks of a sharded array (else `None`):
    # the chunks zarr's sharding codec drops when they are all fill value.
    finest: tuple[int, ...] | None = None
    # The order of a shard's inner chunks in its bytes: the sharding
    # codec's `subchunk_write_order` (zarr's default, Morton, if none).
    subchunk_order: str = "morton"
    # Whether Rust's `ChunkEncoder` lays out the shards (the chain ends in
    # `sharding_indexed`, no bytes -> bytes codec after it): then it leaves
    # out inner chunks of fill values as zarr counts them, and rewrites
    # only the inner chunks a write touches.
    rust_shards: bool = False
    # Caches, not part of what the pipeline is (a pickled copy, which has
    # none, equals its original): the zarrs arrays opened so far, and the
    # process they were opened in.
    arrays: dict[Any, ChunkArray] = field(default_factory=dict, compare=False, repr=False)
    detached: list[ChunkArray] = field(default_factory=list, compare=False, repr=False)
    owner: list[int] = field(default_factory=lambda: [os.getpid()], compare=False, repr=False)

    @property
    def rust_inner_chunks(self) -> bool:
        """Whether Rust encodes every inner chunk of the shards (it lays
        them out, and there are no shards within shards): it then leaves
        out inner chunks of fill values as zarr counts them, and can encode
        a box of a shard again alone."""
        return self.rust_shards and self.finest == self.inner

    def __getstate__(self) -> dict[str, Any]:
        # zarr arrays are pickled with their pipeline (dask, multiprocessing):
        # the zarrs arrays opened so far are a cache, made again on first use
        # (native objects do not pickle).
        return {**self.__dict__, "arrays": {}, "detached": [], "owner": [os.getpid()]}

    def reads_store(self, prefix: str) -> bool:
        """Whether Rust reads the chunks of the array at `prefix` from the
        store itself."""
        if self.remote is not None:
            return self.remote.accepts(prefix)
        return type(self.store) is LocalStore

    def array(self, prefix: str | None) -> ChunkArray:
        """The zarrs array reading from the array's directory at `prefix`,
        or (`None`) from bytes handed in."""
        if prefix is None:
            if not self.detached:
                self.detached.append(kept_array(self.json, None))
            return self.detached[0]
        if self.owner[0] != os.getpid():
            if self.arrays:
                _LEFT_BY_PARENT.append(dict(self.arrays))
                self.arrays.clear()
            self.owner[0] = os.getpid()
        # A `LocalStore`'s root is part of the key: `LocalStore.move()`
        # changes it, and the arrays opened before read the old directory.
        key = prefix if self.remote is not None else (self.store.root, prefix)
        found = self.arrays.get(key)
        if found is None:
            if self.remote is not None:
                found = self.remote.open(self.json, prefix)
            else:
                assert type(self.store) is LocalStore
                root = self.store.root / prefix if prefix else self.store.root
                found = kept_array(self.json, str(root))
            self.arrays[key] = found
        return found

    def split_key(self, path: str) -> tuple[str, tuple[int, ...]] | None:
        """The array's path and the chunk's coordinates in a chunk's
        store path, or `None` if it is not one of this array's keys."""
        encoding = self.metadata.chunk_key_encoding
        ndim = len(self.metadata.shape)
        sep = getattr(encoding, "separator", "/")
        name = encoding.to_dict().get("name")
        parts = (ndim + 1 if name == "default" else max(ndim, 1)) if sep == "/" else 1
        pieces = path.split("/")
        if len(pieces) < parts:
            return None
        key = "/".join(pieces[len(pieces) - parts :])
        try:
            coords = tuple(encoding.decode_chunk_key(key))
        except (ValueError, TypeError):
            return None
        if len(coords) != ndim or self.metadata.encode_chunk_key(coords) != key:
            return None
        return "/".join(pieces[: len(pieces) - parts]), coords


def _fixed_size(metadata: ArrayV3Metadata) -> np.dtype[Any] | str:
    """The array's numpy data type, or why zarrs is not given the array."""
    try:
        dtype = np.dtype(metadata.data_type.to_native_dtype())
    except Exception as e:
        return f"data type {metadata.data_type}: {e}"
    if dtype.hasobject or dtype.kind in "OUSV" or dtype.fields is not None:
        return f"data type {metadata.data_type} ({dtype}) has no fixed size in numpy"
    return dtype


def _remote_at_open(store: Store) -> RemoteSource | None:
    """Where the remote layer reads `store`, with the settings in force when
    the array is opened (a bad setting is an error there); `None` for a
    store zarr's store API serves."""
    if str(zarr.config.get("codec_pipeline.remote", "rust")).lower() == "zarr":
        return None
    remote = remote_source(store)
    if isinstance(remote, str):
        log.debug("zarr's store API fetches the chunks: %s", remote)
        return None
    return remote


def _open_native(
    metadata: ArrayV3Metadata, store: Store, remote: RemoteSource | None
) -> _Native | str:
    """What zarrs is given of the array, or why it is given nothing."""
    dtype = _fixed_size(metadata)
    if isinstance(dtype, str):
        return dtype
    # The document as zarr writes it, but without zarr's indentation, which
    # turns off json's C encoder (0.5 ms of an open of the EOPF-like band).
    json = json_module.dumps(metadata.to_dict(), allow_nan=True)
    try:
        # Kept: the array for reads that hand in the chunks' bytes.
        checked = kept_array(json, None)
    except (ValueError, TypeError) as e:
        return str(e)
    names = _names(metadata.codecs)
    writes = names <= _WRITES
    from zarr.core.metadata.v3 import RegularChunkGridMetadata

    grid = metadata.chunk_grid
    return _Native(
        metadata,
        json,
        store,
        dtype.newbyteorder("="),
        writes,
        "sharding_indexed" in names,
        remote,
        tuple(grid.chunk_shape) if isinstance(grid, RegularChunkGridMetadata) else None,
        _inner_chunk_shape(metadata),
        _finest_chunk_shape(metadata),
        _subchunk_order(metadata),
        checked.lays_out_shards,
        detached=[checked],
    )


def _subchunk_order(metadata: ArrayV3Metadata) -> str:
    """The `subchunk_write_order` of the array's sharding codec (set when
    the codec was made; not part of the metadata document)."""
    from zarr.codecs import ShardingCodec

    for codec in metadata.codecs:
        if isinstance(codec, ShardingCodec):
            return str(getattr(codec, "subchunk_write_order", "morton"))
    return "morton"


def _inner_chunk_shape(metadata: ArrayV3Metadata) -> tuple[int, ...] | None:
    """The shape of a sharded array's inner chunks, else `None`."""
    from zarr.codecs import ShardingCodec

    first = metadata.codecs[0] if metadata.codecs else None
    return tuple(first.chunk_shape) if isinstance(first, ShardingCodec) else None


def _finest_chunk_shape(metadata: ArrayV3Metadata) -> tuple[int, ...] | None:
    """The shape of the innermost chunks of a (possibly nested) sharded
    array, else `None`."""
    from zarr.codecs import ShardingCodec

    codecs = list(metadata.codecs)
    shape = None
    while codecs and isinstance(codecs[0], ShardingCodec):
        shape = tuple(codecs[0].chunk_shape)
        codecs = list(codecs[0].codecs)
    return shape


def _basic(selection: SelectorTuple) -> bool:
    if not isinstance(selection, tuple):
        return False
    for s in selection:
        if isinstance(s, slice):
            if s.step not in (None, 1):
                return False
        elif not isinstance(s, (int, np.integer)):
            return False
    return True


def _whole(selection: Any, shape: tuple[int, ...]) -> bool:
    """Whether a chunk selection covers the whole chunk of `shape`."""
    if not _basic(selection) or len(selection) != len(shape):
        return False
    return _ranges(selection, shape) == [(0, n) for n in shape]


def _ranges(selection: tuple[Any, ...], shape: tuple[int, ...]) -> list[tuple[int, int]] | None:
    """`(start, stop)` for each dimension of a basic selection (an integer
    is one element)."""
    out = []
    for s, n in zip(selection, shape, strict=True):
        if isinstance(s, slice):
            start, stop, step = s.indices(n)
            if step != 1:
                return None
            out.append((start, max(start, stop)))
        else:
            i = int(s)
            if i < 0 or i >= n:
                return None
            out.append((i, i + 1))
    return out


class _Opening:
    """What an array's pipeline is made of, built from the array's metadata
    at its first read or write, not when zarr opens the array.

    zarr builds a pipeline for every array it opens, and xarray opens every
    array of a product (40 bands: 17 ms more than zarr's own open when this
    was done at open, 0.4 ms an array), most of them never read. Building
    late also means an array zarrs cannot read raises `FallbackError`
    (under ``raise``) when it is read, not when a group around it is opened.

    zarr's own pipeline (`inner`, this package's classes in it) is built
    apart, when a fallback or zarr asks for it: a read zarrs serves never
    needs it (0.15 ms of an open and first window).

    No lock: two threads reading an array first at once may both build,
    and one build is dropped; each is complete in itself (the stores they
    share are kept process-wide), so that costs time, not correctness.
    """

    __slots__ = ("_inner", "_metadata", "_native", "_remote", "_split", "_store")

    def __init__(
        self,
        metadata: ArrayV3Metadata | None,
        store: Store | None,
        remote: RemoteSource | None = None,
        inner: BatchedCodecPipeline | None = None,
        native: tuple[_Native | None, str | None] | None = None,
    ) -> None:
        self._metadata = metadata
        self._store = store
        # Taken at open, as documented: the remote settings in force then.
        self._remote = remote
        self._inner = inner
        self._native = native
        # zarr's own split of the chain, made at open as zarr makes it for
        # an array (3 µs): its checks, and its warnings once, at open.
        self._split = (
            BatchedCodecPipeline.from_codecs(metadata.codecs)
            if metadata is not None and inner is None
            else None
        )

    @classmethod
    def built(
        cls, inner: BatchedCodecPipeline, native: _Native | None = None, why: str | None = None
    ) -> _Opening:
        return cls(None, None, None, inner, (native, why))

    def __eq__(self, other: object) -> bool:
        # A pickled array equals its original (zarr's tests compare them):
        # what the parts are made from decides, not whether they are made.
        if not isinstance(other, _Opening):
            return NotImplemented
        if self._metadata is None or other._metadata is None:
            return (self._metadata, self._inner, self._native) == (
                other._metadata,
                other._inner,
                other._native,
            )
        return (self._metadata, self._store, self._remote) == (
            other._metadata,
            other._store,
            other._remote,
        )

    # Unhashable, as the pipeline was when its fields held the metadata.
    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> dict[str, Any]:
        # What the parts are made from, not the parts: a copy (dask,
        # multiprocessing) builds its own at its first read, and an array
        # pickles alike before and after its first read (dask's tokens).
        if self._metadata is None:
            return {"inner": self._inner, "native": self._native}
        return {
            "metadata": self._metadata,
            "store": self._store,
            "remote": self._remote,
            "split": self._split,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._metadata = state.get("metadata")
        self._store = state.get("store")
        self._remote = state.get("remote")
        self._split = state.get("split")
        self._inner = state.get("inner")
        self._native = state.get("native")

    def __repr__(self) -> str:
        if self._metadata is None:
            return f"_Opening(inner={self._inner!r}, native={self._native!r})"
        built = "built" if self._native is not None else "not yet read"
        return f"_Opening({self._store!r}, shape={self._metadata.shape}, {built})"

    def inner(self) -> BatchedCodecPipeline:
        inner = self._inner
        if inner is None:
            assert self._metadata is not None
            assert self._split is not None
            inner = self._inner = _zarr_pipeline(self._metadata, self._split)
        return inner

    def native(self) -> tuple[_Native | None, str | None]:
        """What zarrs is given of the array, or why it is given nothing."""
        native = self._native
        if native is None:
            assert self._metadata is not None
            assert self._store is not None
            opened = _open_native(self._metadata, self._store, self._remote)
            native = self._native = (None, opened) if isinstance(opened, str) else (opened, None)
        return native


def _zarr_pipeline(metadata: ArrayV3Metadata, split: BatchedCodecPipeline) -> BatchedCodecPipeline:
    """zarr's pipeline of the array, with this package's classes, as zarr
    builds it for an array when no pipeline class builds its own (`split`:
    zarr's split of the chain, checked and warned about at open)."""
    from dataclasses import replace

    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.metadata.v3 import RegularChunkGridMetadata

    ours = replace(
        split,
        array_array_codecs=with_our_classes(split.array_array_codecs),
        array_bytes_codec=with_our_classes((split.array_bytes_codec,))[0],
        bytes_bytes_codecs=with_our_classes(split.bytes_bytes_codecs),
    )
    grid = metadata.chunk_grid
    if isinstance(grid, RegularChunkGridMetadata):
        chunk_shape = grid.chunk_shape
    else:
        chunk_shape = (1,) * len(metadata.shape)
    spec = ArraySpec(
        shape=chunk_shape,
        dtype=metadata.data_type,
        fill_value=metadata.fill_value,
        config=ArrayConfig.from_dict({}),
        prototype=default_buffer_prototype(),
    )
    return ours.evolve_from_array_spec(spec)


@dataclass(frozen=True)
class CodecPipeline(_CodecPipeline):
    """zarr-python's codec pipeline on zarrs and this crate's codecs.

    Select it for every array zarr opens with::

        zarr.config.set({"codec_pipeline.path": "zarrs_extension_codecs.CodecPipeline"})

    or ``ZARR_CODEC_PIPELINE__PATH=zarrs_extension_codecs.CodecPipeline`` in
    the environment (worker processes). See the module documentation for
    what runs in Rust and what goes to zarr's own pipeline.
    """

    opening: _Opening

    @property
    def inner(self) -> BatchedCodecPipeline:
        """zarr's own pipeline of the array: what every fallback runs."""
        return self.opening.inner()

    @property
    def native(self) -> _Native | None:
        """What zarrs is given of the array; `None` when it is given nothing."""
        return self.opening.native()[0]

    @property
    def why(self) -> str | None:
        """Why an array's pipeline has no `native` (said again at every read
        and write, so that a `raise` set after the array was opened still
        catches them); `None` for the pipelines zarr builds from codecs
        alone (its sharding codec's inner ones), which run only inside
        zarr's own pipeline, itself reached through `_fallback`."""
        return self.opening.native()[1]

    # --- construction ---------------------------------------------------------------

    @classmethod
    def from_codecs(cls, codecs: Iterable[Codec], *, batch_size: int | None = None) -> Self:
        return cls(_Opening.built(BatchedCodecPipeline.from_codecs(codecs, batch_size=batch_size)))

    @classmethod
    def from_array_metadata_and_store(cls, array_metadata: ArrayMetadata, store: Store) -> Self:
        if not isinstance(array_metadata, ArrayV3Metadata):
            # zarr then builds the pipeline with `from_codecs`: zarr's own.
            _fallback(f"Zarr v{array_metadata.zarr_format} metadata")
            raise NotImplementedError("Zarr v2 arrays are read by zarr's own pipeline")
        # The remote settings are taken (and a bad one raised) at open for
        # the arrays zarrs can read; one without a fixed size never reaches
        # the remote layer.
        remote = (
            _remote_at_open(store) if not isinstance(_fixed_size(array_metadata), str) else None
        )
        return cls(_Opening(array_metadata, store, remote))

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        native, why = self.opening.native()
        inner = self.opening.inner().evolve_from_array_spec(array_spec)
        return type(self)(_Opening.built(inner, native, why))

    # --- what zarr asks of every pipeline: the inner one answers ---------------------

    def __iter__(self) -> Iterator[Codec]:
        return iter(self.inner)

    @property
    def supports_partial_decode(self) -> bool:
        return self.inner.supports_partial_decode

    @property
    def supports_partial_encode(self) -> bool:
        return self.inner.supports_partial_encode

    def validate(
        self,
        *,
        shape: tuple[int, ...],
        dtype: ZDType[TBaseDType, TBaseScalar],
        chunk_grid: ChunkGridMetadata,
    ) -> None:
        self.inner.validate(shape=shape, dtype=dtype, chunk_grid=chunk_grid)

    def compute_encoded_size(self, byte_length: int, array_spec: ArraySpec) -> int:
        return self.inner.compute_encoded_size(byte_length, array_spec)

    async def decode(
        self, chunk_bytes_and_specs: Iterable[tuple[Buffer | None, ArraySpec]]
    ) -> Iterable[NDBuffer | None]:
        return await self.inner.decode(chunk_bytes_and_specs)

    async def encode(
        self, chunk_arrays_and_specs: Iterable[tuple[NDBuffer | None, ArraySpec]]
    ) -> Iterable[Buffer | None]:
        return await self.inner.encode(chunk_arrays_and_specs)

    # --- reads -------------------------------------------------------------------------

    def _plan(self, batch: list[BatchInfo]) -> tuple[str | None, list[tuple[int, ...]]] | str:
        """The array's path (None: not a LocalStore) and every chunk's
        coordinates, or why the batch goes to zarr's pipeline."""
        native = self.native
        assert native is not None
        prefixes: set[str] = set()
        coords = []
        for byte_getter, spec, *_ in batch:
            if not isinstance(byte_getter, StorePath) or byte_getter.store is not native.store:
                return "a chunk that is not in the array's store"
            split = native.split_key(byte_getter.path)
            if split is None:
                return f"chunk key {byte_getter.path!r} does not parse"
            if spec.prototype is not default_buffer_prototype() and not _numpy_prototype(spec):
                return "a buffer prototype other than numpy's"
            prefixes.add(split[0])
            coords.append(split[1])
        if len(prefixes) > 1:
            return "chunks of more than one array in a batch"
        # Exactly zarr's LocalStore (a subclass or a wrapper may lay out or
        # serve its files otherwise), or a store mapped onto the remote layer.
        prefix = prefixes.pop() if prefixes else None
        return (prefix if prefix is not None and native.reads_store(prefix) else None), coords

    async def _fetch(self, batch: list[BatchInfo]) -> list[bytes | None]:
        limit = asyncio.Semaphore(_concurrency())
        return list(
            await asyncio.gather(*(_stored_bytes(bg, spec, limit) for bg, spec, *_ in batch))
        )

    async def read(
        self,
        batch_info: Iterable[BatchInfo],
        out: NDBuffer,
        drop_axes: tuple[int, ...] = (),
    ) -> tuple[GetResult, ...]:
        batch = list(batch_info)
        if not batch:
            return ()
        if self.native is None:
            if self.why is not None:
                _fallback(self.why)
            return await self.inner.read(batch, out, drop_axes)
        target = out.as_ndarray_like()
        if type(target) is not np.ndarray or target.dtype != self.native.dtype:
            _fallback(
                f"output of type {type(target).__name__}, not a numpy array of the array's dtype"
            )
            return await self.inner.read(batch, out, drop_axes)
        plan = self._plan(batch)
        if isinstance(plan, str):
            _fallback(plan)
            return await self.inner.read(batch, out, drop_axes)
        native = self.native
        prefix, coords = plan
        try:
            return await self._read(batch, out, drop_axes, plan, target)
        except ValueError as e:
            if prefix is None or native.remote is None:
                # The array is one zarrs reads: its error is the answer
                # (reading the chunks again with zarr would double the I/O
                # and hide what went wrong).
                raise _chunk_error("read", native, coords, e) from e
            # The remote layer reads another way than zarr's store does (a
            # mapped setting, its own connections): zarr's pipeline reads
            # through the store itself, and raises its own exception if that
            # fails too, with the remote layer's account as a note.
            _fallback(f"the remote layer failed: {e}")
            try:
                return await self.inner.read(batch, out, drop_axes)
            except Exception as theirs:
                theirs.add_note(f"zarrs_extension_codecs.CodecPipeline: {e}")
                raise

    async def _read(
        self,
        batch: list[BatchInfo],
        out: NDBuffer,
        drop_axes: tuple[int, ...],
        plan: tuple[str | None, list[tuple[int, ...]]],
        target: np.ndarray[Any, Any],
    ) -> tuple[GetResult, ...]:
        assert self.native is not None
        prefix, coords = plan
        basic = (
            not drop_axes
            and target.flags.c_contiguous
            and target.flags.writeable
            and all(_basic(cs) and _basic(sel) for _, _, cs, sel, _ in batch)
        )
        if (
            self.native.sharded
            and prefix is None
            and type(self.native.store) is not MemoryStore
            and not all(c for *_, c in batch)
        ):
            # Parts of shards from a store Rust does not read itself: it
            # would be handed whole shards, where zarr's pipeline fetches
            # the index and the inner chunks the read needs. (A
            # MemoryStore's shards are in memory already: handed whole, of
            # which Rust decodes the inner chunks the read needs.)
            _fallback("parts of shards from a store Rust does not read: zarr's reads byte ranges")
            return await self.inner.read(batch, out, drop_axes)
        array = self.native.array(prefix)
        encoded = None if prefix is not None else await self._fetch(batch)
        remote = prefix is not None and self.native.remote is not None
        read = _Reader(array, encoded, batch, remote=remote)
        if basic:
            regions = _basic_regions(batch, coords, target)
            if regions is not None:
                view, regs = regions
                _cover(self.native, array, coords, [r[1] for r in regs])
                present = await read(view, regs)
                return tuple(GetResult(status="present" if p else "missing") for p in present)
        return await self._read_via_temporary(read, batch, coords, target, drop_axes)

    async def _read_via_temporary(
        self,
        read: _Reader,
        batch: list[BatchInfo],
        coords: list[tuple[int, ...]],
        target: np.ndarray[Any, Any],
        drop_axes: tuple[int, ...],
    ) -> tuple[GetResult, ...]:
        assert self.native is not None
        shapes = {tuple(spec.shape) for _, spec, *_ in batch}
        if len(shapes) != 1:
            _fallback("chunks of different shapes in one batch")
            return await self.inner.read(batch, _wrap(target), drop_axes)
        (shape,) = shapes
        itemsize = self.native.dtype.itemsize
        per_chunk = max(1, int(np.prod(shape, dtype=np.int64)) * itemsize)
        group = max(1, _TEMPORARY_BYTES // per_chunk)
        results: list[GetResult] = []
        for first in range(0, len(batch), group):
            part = batch[first : first + group]
            n = len(part)
            if shape:
                temp = np.empty((n * shape[0], *shape[1:]), dtype=self.native.dtype)
            else:
                temp = np.empty((n,), dtype=self.native.dtype)
            if shape:
                regions, chunk_of = _temporary_regions(
                    self.native, read.array, part, coords[first : first + group]
                )
                by_region = await read(temp, regions, first=first, chunk_of=chunk_of)
                # A chunk is stored as its first region says.
                firsts = _first_regions(chunk_of)
                present = [by_region[firsts[i]] for i in range(n)]
                chunks = temp.reshape((n, *shape))
            else:
                # Zero-dimensional: one chunk of one element each call.
                present = []
                for i, c in enumerate(coords[first : first + group]):
                    one = temp[i : i + 1].reshape(())
                    present.extend(await read(one, [(list(c), [], [])], first=first + i, threads=1))
                chunks = temp.reshape((n,))
            for i, (_, _, chunk_selection, out_selection, _) in enumerate(part):
                selected = chunks[i][chunk_selection]
                if drop_axes:
                    selected = selected.squeeze(axis=drop_axes)
                target[out_selection] = selected
                results.append(GetResult(status="present" if present[i] else "missing"))
        return tuple(results)

    # --- writes ------------------------------------------------------------------------

    async def write(
        self,
        batch_info: Iterable[BatchInfo],
        value: NDBuffer,
        drop_axes: tuple[int, ...] = (),
    ) -> None:
        batch = list(batch_info)
        if not batch:
            return
        native = self.native
        if native is None:
            if self.why is not None:
                _fallback(self.why)
            await self.inner.write(batch, value, drop_axes)
            return
        if not native.writes:
            _fallback("a codec zarrs does not write as zarr does")
            await self.inner.write(batch, value, drop_axes)
            return
        # A fill value its codecs do not give back, which zarr writes anyway
        # (found by the codec check at open).
        refusal = native.array(None).write_refusal
        if refusal is not None:
            _fallback(f"zarrs refuses to write the array: {refusal}")
            await self.inner.write(batch, value, drop_axes)
            return
        source = value.as_ndarray_like()
        if type(source) is not np.ndarray:
            _fallback(f"value of type {type(source).__name__}, not a numpy array")
            await self.inner.write(batch, value, drop_axes)
            return
        plan = self._plan(batch)
        if isinstance(plan, str):
            _fallback(plan)
            await self.inner.write(batch, value, drop_axes)
            return
        prefix, coords = plan
        shapes = {tuple(spec.shape) for _, spec, *_ in batch}
        if len(shapes) != 1:
            _fallback("chunks of different shapes in one batch")
            await self.inner.write(batch, value, drop_axes)
            return
        spec = batch[0][1]
        if native.finest is not None and spec.config.write_empty_chunks:
            # With `write_empty_chunks`, zarr stores the inner chunks of
            # fill values a write touches, and reads back what the codecs
            # make of them. Rust does too, but for shards within shards
            # (zarrs' sharding codec leaves such inner chunks out) and
            # writes by steps or integer arrays (merged and encoded whole:
            # inner chunks the selection misses are stored too): the same
            # values only if the fill value comes back unchanged.
            why = await self._fill_round_trips(spec)
            if why is not None:
                _fallback(why)
                await self.inner.write(batch, value, drop_axes)
                return
        # In zarr's `LocalStore` (one Rust reads), Rust reads the shards a
        # write updates and stores what it encodes itself, a group at a
        # time, the way `LocalStore` does (a new file renamed over the key);
        # a store opened read-only is left to zarr's store API, which
        # raises.
        directory = None
        if prefix is not None and native.remote is None and not native.store.read_only:
            directory = native.array(prefix)
        # The chunks written are in the array as zarr has it now.
        shape = tuple(spec.shape)
        boxes = [[s or (0, 1) for s in _spans(cs, shape)] for _, _, cs, _, _ in batch]
        for array in (native.array(None), directory):
            if array is not None:
                _cover(native, array, coords, boxes)
        await self._write(batch, coords, value, source, drop_axes, directory)

    async def _fill_round_trips(self, spec: ArraySpec) -> str | None:
        """`None` if an innermost chunk of fill values decodes, through
        zarr's own codecs, to the fill value bit for bit; else why not."""
        native = self.native
        assert native is not None
        assert native.finest is not None
        from zarr.codecs import ShardingCodec
        from zarr.core.array_spec import ArraySpec as Spec

        codecs = list(native.metadata.codecs)
        while codecs and isinstance(codecs[0], ShardingCodec):
            codecs = list(codecs[0].codecs)
        inner = Spec(
            shape=native.finest,
            dtype=spec.dtype,
            fill_value=spec.fill_value,
            config=spec.config,
            prototype=default_buffer_prototype(),
        )
        chain = BatchedCodecPipeline.from_codecs(with_our_classes(codecs))
        chain = chain.evolve_from_array_spec(inner)
        fill = np.full(native.finest, fill_value_or_default(spec), dtype=native.dtype)
        try:
            (encoded,) = await chain.encode([(_wrap(fill), inner)])
            (decoded,) = await chain.decode([(encoded, inner)])
        except Exception as e:
            return f"the fill value does not encode: {e}"
        back = None if decoded is None else np.asarray(decoded.as_ndarray_like())
        if back is None or back.tobytes() != fill.tobytes():
            return "with write_empty_chunks, a fill value the codecs do not give back"
        return None

    async def _write(
        self,
        batch: list[BatchInfo],
        coords: list[tuple[int, ...]],
        value: NDBuffer,
        source: np.ndarray[Any, Any],
        drop_axes: tuple[int, ...],
        directory: ChunkArray | None,
    ) -> None:
        """Merge, encode (in Rust, in parallel) and store the batch's
        chunks, a group at a time: a group is stored while the next one is
        encoded, so that at most two groups' encoded bytes are held. With
        a `directory` (the array in zarr's `LocalStore`), Rust reads the
        shards it updates and stores a group's chunks once it has encoded
        them."""
        native = self.native
        assert native is not None
        threads = _threads()
        shape = tuple(batch[0][1].shape)
        per_chunk = max(1, int(np.prod(shape, dtype=np.int64)) * native.dtype.itemsize)
        group = max(threads, _WRITE_BYTES // per_chunk)
        storing: asyncio.Future[None] | None = None
        failed: BaseException | None = None
        try:
            for first in range(0, len(batch), group):
                part = batch[first : first + group]
                where = coords[first : first + group]
                try:
                    chunks = await _merged(
                        native, part, where, source, drop_axes, fetch=directory is None
                    )
                except ValueError as e:
                    # A stored chunk zarrs cannot decode: an error, as for a read.
                    raise _chunk_error("read for a write", native, where, e) from e
                try:
                    encoded = await _encode(native, part, where, chunks, threads, directory)
                except ValueError as e:
                    # A shape that does not fit: nothing of the group encoded.
                    raise _chunk_error("write", native, where, e) from e
                del chunks
                if failed is None:
                    failed = next((e for e in encoded if isinstance(e, BaseException)), None)
                if storing is not None:
                    await storing
                storing = asyncio.ensure_future(_store(part, encoded))
            if storing is not None:
                await storing
                storing = None
            if failed is not None:
                # The first chunk that failed, once every chunk that encoded
                # is stored, as zarr's pipeline stores a batch's chunks that
                # encode and raises for the one that does not.
                if isinstance(failed, StoredChunkError):
                    # A stored shard that does not read: an error, as for a read.
                    raise _chunk_error("read for a write", native, coords, failed) from failed
                if isinstance(failed, ValueError):
                    # A value the codecs refuse (out of range for
                    # `cast_value`, NaN without a `scalar_map`): zarr
                    # refuses it too, and this is the error, naming the
                    # chunk. The writes zarrs refuses and zarr makes are
                    # known before (`write_refusal`).
                    raise _chunk_error("write", native, coords, failed) from failed
                # A file of the `LocalStore` that could not be written: the
                # `OSError` zarr's store raises, naming the chunk.
                raise failed
        finally:
            if storing is not None:
                # An error above: the stores under way finish (or fail) first.
                await asyncio.gather(storing, return_exceptions=True)


class _Reader:
    """The calls into Rust of one read: the zarrs array, the chunks' bytes
    when Python fetched them, how many threads, and whether to find out
    which chunks are stored."""

    def __init__(
        self,
        array: ChunkArray,
        encoded: list[bytes | None] | None,
        batch: list[BatchInfo],
        *,
        remote: bool,
    ) -> None:
        self.array = array
        self.encoded = encoded
        self.threads = _threads()
        self.io_threads = 0
        self.presence = True
        if remote:
            # A pool as large as zarr's own store API's concurrency: once
            # fetches are seen to wait on the network, that many are in
            # flight, and no more than `threads` decode at once.
            self.io_threads = max(self.threads, _concurrency())
            # Whether a chunk is stored: the read engine finds out as it
            # fetches, but for an array it leaves to zarrs it costs a
            # request per chunk on a remote store, and zarr looks at it only
            # to raise for missing chunks (`array.read_missing_chunks`
            # false): asked for then only, and "present" otherwise.
            self.presence = any(
                getattr(spec.config, "read_missing_chunks", True) is False for _, spec, *_ in batch
            )

    async def __call__(
        self,
        out: np.ndarray[Any, Any],
        regions: list[Any],
        *,
        first: int = 0,
        threads: int | None = None,
        chunk_of: list[int] | None = None,
    ) -> list[bool]:
        """Read `regions` (the batch's from its `first` on; region `k` of
        chunk `first + chunk_of[k]`, else one region a chunk) into `out`;
        whether each region's chunk is stored."""
        encoded = None
        if self.encoded is not None and chunk_of is None:
            encoded = self.encoded[first : first + len(regions)]
        elif self.encoded is not None and chunk_of is not None:
            # A chunk's bytes with its first region only: Rust stores them
            # once (its other regions then read as "not stored").
            firsts = _first_regions(chunk_of)
            encoded = [
                self.encoded[first + k] if firsts[k] == i else None for i, k in enumerate(chunk_of)
            ]
        got = await asyncio.to_thread(
            self.array.read_into,
            out,
            regions,
            encoded,
            threads or self.threads,
            self.presence,
            self.io_threads,
        )
        return [True] * len(regions) if got is None else got


def _temporary_regions(
    native: _Native, array: ChunkArray, part: list[BatchInfo], coords: list[tuple[int, ...]]
) -> list[Any]:
    """Each chunk's region of a temporary of `len(part)` chunks stacked on
    the first axis: the box of the chunk its selection picks from, put at
    the same place in the chunk's slot (so the selection picks from the
    slot as from the chunk). Only the box is decoded: of an edge chunk, no
    element outside the array (zarrs refuses those), of a shard, only the
    inner chunks the box meets."""
    shape = tuple(part[0][1].shape)
    spans = [_spans(chunk_selection, shape) for _, _, chunk_selection, _, _ in part]
    # What zarr picks is inside the array as zarr has it now.
    _cover(native, array, coords, [[s or (0, 1) for s in span] for span in spans])
    extents = array.extents([list(c) for c in coords])
    regions = []
    chunk_of = []
    for i, (c, extent, span) in enumerate(zip(coords, extents, spans, strict=True)):
        # A dimension whose selection is of a kind not known here: the
        # chunk's whole part inside the array.
        box = [s if s is not None else (0, n) for s, n in zip(span, extent, strict=True)]
        offset = i * shape[0]
        for sub in _inner_boxes(part[i][2], box, native.inner):
            out = [(offset + sub[0][0], offset + sub[0][1]), *sub[1:]]
            regions.append((list(c), sub, out))
            chunk_of.append(i)
    return regions, chunk_of


def _first_regions(chunk_of: list[int]) -> dict[int, int]:
    """The index of each chunk's first region."""
    firsts: dict[int, int] = {}
    for k, chunk in enumerate(chunk_of):
        firsts.setdefault(chunk, k)
    return firsts


def _inner_boxes(
    selection: Any, box: list[tuple[int, int]], inner: tuple[int, ...] | None
) -> list[list[tuple[int, int]]]:
    """`box` of a shard whose inner chunks are of shape `inner`, as the
    parts of the inner chunks `selection` picks from: a few points of a
    large shard then decode their inner chunks, not all those between
    them. `[box]` for an array that is not sharded, and for selections of
    slices and integers alone (their box is what they pick from)."""
    if inner is None or not isinstance(selection, tuple) or len(selection) != len(box):
        return [box]
    if not any(isinstance(s, np.ndarray) for s in selection):
        return [box]
    cells = _points_cells(selection, inner)
    if cells is None:
        per_dim = [_cells(s, b, i) for s, b, i in zip(selection, box, inner, strict=True)]
        cells = list(itertools.product(*per_dim))
    if not cells:
        return [box]
    return [
        [
            (max(c * i, lo), min((c + 1) * i, hi))
            for c, i, (lo, hi) in zip(cell, inner, box, strict=True)
        ]
        for cell in cells
    ]


def _points_cells(selection: tuple[Any, ...], inner: tuple[int, ...]) -> list[Any] | None:
    """The inner chunks of a coordinate selection (`vindex`: one integer
    array a dimension, of one length), once each; `None` for another."""
    if (
        not all(
            isinstance(s, np.ndarray) and s.ndim == 1 and s.dtype.kind in "iu" for s in selection
        )
        or len({s.shape for s in selection}) != 1
    ):
        return None
    at = np.stack([s // i for s, i in zip(selection, inner, strict=True)], axis=1)
    return [tuple(int(v) for v in row) for row in np.unique(at, axis=0)]


def _cells(s: Any, box: tuple[int, int], inner: int) -> list[int]:
    """The inner chunks, in one dimension, that `s` picks from in `box`."""
    lo, hi = box
    if isinstance(s, np.ndarray) and s.dtype.kind in "iu" and s.size:
        picked = s.ravel()
    elif isinstance(s, np.ndarray) and s.ndim == 1 and s.dtype == bool and s.any():
        picked = np.flatnonzero(s)
    elif isinstance(s, slice):
        picked = np.arange(*s.indices(hi))
    else:
        return list(range(lo // inner, (hi - 1) // inner + 1))
    return [int(c) for c in np.unique(picked[(picked >= lo) & (picked < hi)] // inner)]


def _spans(selection: Any, shape: tuple[int, ...]) -> list[tuple[int, int] | None]:
    """`(start, stop)` in each dimension of the smallest box of a chunk of
    `shape` that holds every element `selection` (zarr's selection of the
    chunk) picks; `None` in a dimension whose selection is of a kind not
    known here."""
    if not isinstance(selection, tuple) or len(selection) != len(shape):
        return [None] * len(shape)
    return [_span(s, n) for s, n in zip(selection, shape, strict=True)]


def _cover(
    native: _Native,
    array: ChunkArray,
    coords: list[tuple[int, ...]],
    boxes: list[list[tuple[int, int]]],
) -> None:
    """Grow zarrs' array to hold each chunk's `box`: zarr grows an array
    (`resize`, `append`) in place, without telling its pipeline, and its
    selections are of the array as it is now."""
    if native.grid is None or not coords:
        return
    needed = [0] * len(native.grid)
    for c, box in zip(coords, boxes, strict=True):
        for d, (size, (_, stop)) in enumerate(zip(native.grid, box, strict=True)):
            needed[d] = max(needed[d], c[d] * size + stop)
    array.cover(needed)


def _span(s: Any, n: int) -> tuple[int, int] | None:
    """`(first, last + 1)` of what `s` picks in a dimension of `n`
    elements, or `None` if not known (or nothing is picked)."""
    if isinstance(s, slice):
        picked = range(*s.indices(n))
        if len(picked) == 0:
            return None
        low, high = min(picked[0], picked[-1]), max(picked[0], picked[-1])
    elif isinstance(s, (int, np.integer)):
        low = high = int(s)
    elif isinstance(s, np.ndarray) and s.size and s.dtype.kind in "iu":
        low, high = int(s.min()), int(s.max())
    elif isinstance(s, np.ndarray) and s.ndim == 1 and s.dtype == bool and s.any():
        picked_at = np.flatnonzero(s)
        low, high = int(picked_at[0]), int(picked_at[-1])
    else:
        return None
    # zarr's chunk selections count from the chunk's origin; anything else
    # (negative, beyond the array) is left to numpy over the whole extent.
    if low < 0 or high >= n:
        return None
    return (low, high + 1)


def _chunk_error(
    what: str, native: _Native, coords: list[tuple[int, ...]], error: ValueError
) -> ValueError:
    """`error`, a failure of zarrs on an array it supports, as the
    exception to raise: named for the pipeline, with the chunks' keys if
    zarrs' message names none of them."""
    message = str(error)
    keys = [native.metadata.encode_chunk_key(c) for c in coords]
    if not any(k in message for k in keys):
        shown = ", ".join(keys[:4]) + (f" and {len(keys) - 4} more" if len(keys) > 4 else "")
        message = f"{message} (chunks {shown})"
    return ValueError(f"zarrs_extension_codecs.CodecPipeline could not {what}: {message}")


def _concurrency() -> int:
    return int(zarr.config.get("async.concurrency") or 10)


def _numpy_prototype(spec: ArraySpec) -> bool:
    from zarr.core.buffer import cpu

    return spec.prototype.nd_buffer is cpu.NDBuffer or issubclass(
        spec.prototype.nd_buffer, cpu.NDBuffer
    )


def _wrap(array: np.ndarray[Any, Any]) -> NDBuffer:
    from zarr.core.buffer import cpu

    return cpu.NDBuffer(array)


def _basic_regions(
    batch: list[BatchInfo], coords: list[tuple[int, ...]], target: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], list[Any]] | None:
    """`target` with the integer-indexed dimensions put back (length one),
    and each chunk's region in it; `None` if a selection does not fit."""
    first = batch[0][2]
    dropped = tuple(d for d, s in enumerate(first) if not isinstance(s, slice))
    view = np.expand_dims(target, dropped) if dropped else target
    regions = []
    for (_, spec, chunk_selection, out_selection, _), c in zip(batch, coords, strict=True):
        kept = tuple(d for d, s in enumerate(chunk_selection) if not isinstance(s, slice))
        if kept != dropped or len(chunk_selection) != len(spec.shape):
            return None
        chunk = _ranges(chunk_selection, tuple(spec.shape))
        if chunk is None or len(out_selection) != target.ndim:
            return None
        out_dims = _ranges(out_selection, target.shape)
        if out_dims is None:
            return None
        it = iter(out_dims)
        out = [(0, 1) if d in dropped else next(it) for d in range(len(spec.shape))]
        regions.append((list(c), chunk, out))
    return view, regions


@dataclass
class _Update:
    """A box of a stored shard to write: the box's values, where it starts
    in the shard, and the shard's stored bytes (`None`: not stored)."""

    value: np.ndarray[Any, Any]
    at: tuple[int, ...]
    stored: bytes | None


# A chunk `_encode` had Rust store (nothing left for `_store` to do).
_STORED = object()


async def _stored_bytes(
    byte_getter: ByteGetter, spec: ArraySpec, limit: asyncio.Semaphore
) -> bytes | None:
    """The bytes stored at `byte_getter` (`None`: nothing is), fetched
    within `limit`'s count of requests at once."""
    async with limit:
        buffer = await byte_getter.get(prototype=spec.prototype)
    return None if buffer is None else buffer.to_bytes()


def _chunk_value(
    source: np.ndarray[Any, Any], out_selection: Any, drop_axes: tuple[int, ...], ndim: int
) -> Any:
    """The part of the value written to one chunk, with the chunk's axes."""
    if source.ndim == 0:
        return source
    value = source[out_selection]
    if drop_axes:
        value = value[tuple(None if d in drop_axes else slice(None) for d in range(ndim))]
    return value


def _box_value(
    value: Any, selection: tuple[Any, ...], ranges: list[tuple[int, int]], dtype: np.dtype[Any]
) -> np.ndarray[Any, Any]:
    """`value` as numpy assigns it to `chunk[selection]` (a basic selection:
    its integers drop their axes; leading axes of one element dropped from
    the value), with the integers' axes put back: the box `ranges` spans."""
    kept = [isinstance(s, slice) for s in selection]
    shape = tuple(stop - start for (start, stop), k in zip(ranges, kept, strict=True) if k)
    array = np.asarray(value, dtype=dtype)
    while array.ndim > len(shape) and array.shape[0] == 1:
        array = array[0]
    array = np.broadcast_to(array, shape)
    return array[tuple(slice(None) if k else None for k in kept)]


async def _updates(
    native: _Native,
    batch: list[BatchInfo],
    source: np.ndarray[Any, Any],
    drop_axes: tuple[int, ...],
    *,
    fetch: bool,
) -> dict[int, _Update]:
    """The chunks of the batch written as updates of a stored shard: a box
    (slices of step 1, integers) of a shard the write does not cover whole,
    of a sharded chain with no shards within its shards and of a real type
    (complex zeros of both signs count as fill values in zarr, which Rust's
    test does not follow). Their stored bytes fetched if `fetch` (else Rust
    reads them from the array's directory)."""
    if not native.rust_inner_chunks or native.dtype.kind == "c" or not batch:
        return {}
    shape = tuple(batch[0][1].shape)
    limit = asyncio.Semaphore(_concurrency())

    async def update(i: int) -> _Update | None:
        byte_setter, spec, chunk_selection, out_selection, _ = batch[i]
        if not _basic(chunk_selection) or len(chunk_selection) != len(shape):
            return None
        ranges = _ranges(chunk_selection, shape)
        if ranges is None or ranges == [(0, n) for n in shape]:
            # Not a box, or the whole shard (encoded from the value alone).
            return None
        value = _box_value(
            _chunk_value(source, out_selection, drop_axes, len(shape)),
            chunk_selection,
            ranges,
            native.dtype,
        )
        stored = await _stored_bytes(byte_setter, spec, limit) if fetch else None
        return _Update(value, tuple(start for start, _ in ranges), stored)

    found = await asyncio.gather(*(update(i) for i in range(len(batch))))
    return {i: u for i, u in enumerate(found) if u is not None}


async def _merged(
    native: _Native,
    batch: list[BatchInfo],
    coords: list[tuple[int, ...]],
    source: np.ndarray[Any, Any],
    drop_axes: tuple[int, ...],
    *,
    fetch: bool = True,
) -> list[np.ndarray[Any, Any] | _Update]:
    """Each chunk of a write, `source` merged into what is stored (read,
    modify, write for a partial chunk), as zarr's pipeline merges it; a
    shard of which a box is written, an `_Update` instead (Rust encodes the
    inner chunks the box touches again and keeps the others' bytes), and so
    is a shard with nothing stored at the array's far edge, its part inside
    the array the box: zarr never touches the inner chunks wholly outside
    the array, so they are not stored with `write_empty_chunks` either."""
    shape = tuple(batch[0][1].shape)
    updates = await _updates(native, batch, source, drop_axes, fetch=fetch)
    decoded = await _stored_chunks(native, batch, coords, shape, skip=updates.keys())
    chunks: list[np.ndarray[Any, Any] | _Update] = []
    # Shards Rust lays out with nothing stored merged into them.
    fresh: list[int] = []
    for i, (_, spec, chunk_selection, out_selection, complete) in enumerate(batch):
        if i in updates:
            chunks.append(updates[i])
            continue
        chunk_value = _chunk_value(source, out_selection, drop_axes, len(shape))
        if complete and getattr(chunk_value, "shape", None) == shape:
            # The value's own memory (Rust gathers a strided view as it
            # encodes it): no copy here.
            chunk = chunk_value
            if chunk.dtype != native.dtype:
                chunk = chunk.astype(native.dtype)
            own = chunk is not chunk_value
        else:
            chunk = decoded.get(i)
            if chunk is None:
                chunk = np.full(shape, fill_value_or_default(spec), dtype=native.dtype)
            chunk[chunk_selection] = chunk_value
            own = True
        if (
            native.finest is not None
            and not spec.config.write_empty_chunks
            # Rust counts a shard's inner chunks of NaNs as zarr does where
            # it lays out the shards; not those of shards within shards nor
            # of chains zarrs' sharding codec encodes, nor complex zeros of
            # either sign.
            and (not native.rust_inner_chunks or native.dtype.kind == "c")
        ):
            chunk = _canonical_fill(chunk, native.finest, fill_value_or_default(spec), own=own)
        if native.rust_inner_chunks and decoded.get(i) is None:
            fresh.append(i)
        chunks.append(chunk)
    if fresh:
        extents = native.array(None).extents([list(coords[i]) for i in fresh])
        for i, extent in zip(fresh, extents, strict=True):
            if tuple(extent) != shape:
                inside = tuple(slice(0, e) for e in extent)
                chunks[i] = _Update(chunks[i][inside], (0,) * len(shape), None)
    return chunks


def _canonical_fill(
    chunk: np.ndarray[Any, Any], finest: tuple[int, ...], fill: Any, *, own: bool
) -> np.ndarray[Any, Any]:
    """`chunk` (a shard) with each innermost chunk that zarr counts as fill
    values (`chunk_is_empty`: any NaN for a NaN fill value, -0.0 for 0 in a
    complex number) set to the fill value's very bits: zarr's sharding
    codec drops such a chunk, which then reads as the fill value, while
    zarrs' drops only the fill value's bits. A copy if `chunk` is not
    `own`ed and changes."""
    kind = chunk.dtype.kind
    filled = np.asarray(fill, dtype=chunk.dtype)
    nan = bool(np.isnan(filled)) if kind in "fc" else False
    if kind not in "fc" or (kind == "f" and not nan) or chunk.ndim != len(finest):
        # Integers, and floats but for NaN: zarr's test is bitwise already.
        return chunk
    if any(n % f for n, f in zip(chunk.shape, finest, strict=True)):
        return chunk
    split = [d for n, f in zip(chunk.shape, finest, strict=True) for d in (n // f, f)]
    blocks = chunk.reshape(split)
    axes = tuple(range(1, 2 * chunk.ndim, 2))
    equal = np.isnan(blocks) if nan else blocks == filled
    empty = np.argwhere(equal.all(axis=axes))
    bits = filled.tobytes()
    for cell in empty:
        at = tuple(slice(c * f, (c + 1) * f) for c, f in zip(cell, finest, strict=True))
        block = np.ascontiguousarray(chunk[at])
        if block.tobytes() == bits * block.size:
            continue
        if not own:
            chunk = np.array(chunk)
            own = True
        chunk[at] = filled
    return chunk


async def _stored_chunks(
    native: _Native,
    batch: list[BatchInfo],
    coords: list[tuple[int, ...]],
    shape: tuple[int, ...],
    skip: Iterable[int] = (),
) -> dict[int, np.ndarray[Any, Any]]:
    """The stored chunks a write only partly covers, decoded whole (an edge
    chunk's part outside the array too, which zarr keeps as stored), by
    their index in the batch; a chunk not stored is not here."""
    limit = asyncio.Semaphore(_concurrency())

    skipped = set(skip)

    async def existing(i: int) -> bytes | None:
        byte_setter, spec, chunk_selection, _, complete = batch[i]
        if i in skipped:
            return None
        if complete and (native.finest is None or _whole(chunk_selection, shape)):
            # zarr does not read a chunk the write covers (an edge chunk's
            # part outside the array then holds the fill value); its
            # sharding codec does read a shard whose inner chunks the write
            # does not all cover (an edge shard's outside it are kept).
            return None
        return await _stored_bytes(byte_setter, spec, limit)

    olds = await asyncio.gather(*(existing(i) for i in range(len(batch))))
    stored = [(i, old) for i, old in enumerate(olds) if old is not None]
    if not stored:
        return {}
    out = np.empty((len(stored), *shape), dtype=native.dtype)
    chunks = [(list(coords[i]), old) for i, old in stored]
    await asyncio.to_thread(native.array(None).decode_chunks, out, chunks, _threads())
    # `out[k, ...]`: a view, zero-dimensional for a zero-dimensional array.
    return {i: out[k, ...] for k, (i, _) in enumerate(stored)}


async def _encode(
    native: _Native,
    batch: list[BatchInfo],
    coords: list[tuple[int, ...]],
    chunks: list[np.ndarray[Any, Any] | _Update],
    threads: int,
    directory: ChunkArray | None = None,
) -> list[Any]:
    """Each chunk encoded in Rust, the chunks in parallel on `threads`
    threads with the GIL released: the bytes to store (a `uint8` array),
    `None` to delete (a chunk of fill values, as zarr drops it without
    `write_empty_chunks`; a shard whose inner chunks all are, as zarr's
    sharding codec deletes it), with a `directory` `_STORED` for a chunk
    Rust has stored or deleted there (and an update's stored bytes read
    there), or the exception the chunk raised (not raised: the others are
    stored first, as zarr's pipeline stores a batch's chunks that
    encode)."""
    from zarr.core.buffer import cpu

    array = native.array(None) if directory is None else directory
    store = directory is not None

    def encode_all() -> list[Any]:
        # Rust leaves out chunks (and a shard's inner chunks) of fill values
        # as `chunk_is_empty` counts them, but for complex zeros of either
        # sign: numpy's pass over each chunk is needed for those alone
        # (and not with `write_empty_chunks`, where nothing is left out).
        write_empty = bool(batch[0][1].config.write_empty_chunks)
        complex_ = native.dtype.kind == "c" and not write_empty
        result: list[Any] = [None] * len(batch)
        updates = [(i, u) for i, u in enumerate(chunks) if isinstance(u, _Update)]
        if updates:
            done = array.update_chunks(
                # Into a directory, `u.stored` is `None`: Rust reads it there.
                [(list(coords[i]), u.value, u.stored, list(u.at)) for i, u in updates],
                threads,
                native.subchunk_order,
                write_empty,
                store=store,
            )
            for (i, _), out in zip(updates, done, strict=True):
                result[i] = _STORED if store and out is None else out
        kept = [
            i
            for i, ((_, spec, *_), chunk) in enumerate(zip(batch, chunks, strict=True))
            if isinstance(chunk, np.ndarray)
            and (not complex_ or not chunk_is_empty(cpu.NDBuffer.from_numpy_array(chunk), spec))
        ]
        if kept:
            done = array.encode_chunks(
                [(list(coords[i]), chunks[i]) for i in kept],
                threads,
                native.subchunk_order,
                write_empty,
                store=store,
            )
            for i, out in zip(kept, done, strict=True):
                result[i] = _STORED if store and out is None else out
        if store:
            # The complex chunks of zeros left out above.
            gone = [i for i, out in enumerate(result) if out is None]
            if gone:
                array.delete_chunks([list(coords[i]) for i in gone])
                for i in gone:
                    result[i] = _STORED
        return result

    return await asyncio.to_thread(encode_all)


async def _store(batch: list[BatchInfo], encoded: list[Any]) -> None:
    """Store or delete each chunk through zarr's store API (but those
    Rust stored)."""
    from zarr.core.buffer import cpu

    limit = asyncio.Semaphore(_concurrency())

    async def store(i: int) -> None:
        byte_setter = batch[i][0]
        chunk = encoded[i]
        if chunk is _STORED or isinstance(chunk, BaseException):
            return
        async with limit:
            if chunk is None:
                await byte_setter.delete()
            else:
                await byte_setter.set(cpu.Buffer.from_array_like(chunk))

    await asyncio.gather(*(store(i) for i in range(len(batch))))


def enable_pipeline() -> Any:
    """Select `CodecPipeline` (and this package's `ScaleOffset` /
    `CastValue` for what it hands to zarr's pipeline) for every array zarr
    opens or creates from now on; usable as a context manager, as
    `enable()`::

        with zarrs_extension_codecs.enable_pipeline():
            data = zarr.open_array("product.zarr")[:]
    """
    return zarr.config.set(
        {
            "codec_pipeline.path": "zarrs_extension_codecs.CodecPipeline",
            "codecs.scale_offset": "zarrs_extension_codecs.ScaleOffset",
            "codecs.cast_value": "zarrs_extension_codecs.CastValue",
        }
    )
