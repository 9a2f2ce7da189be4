"""zarrs arrays kept across opens of the same array, so that an array
opened again (a tile server opens the product for each request) reads
with the reader built the first time: its plan, codec chains and decoders
(0.6 ms of the first window of each open of the EOPF-like band).

What a kept array holds follows from its metadata and its directory
alone, both part of the key: chunks and shard indexes are read from the
files at every read, as they are for an array kept open, so a kept array
sees every write and deletion an array opened anew would. A rewritten
``zarr.json`` is another key. Up to `KEPT` arrays are kept on directories,
and as many for chunks handed in (the one each open checks its metadata
with), the least recently used of each dropped first: a product of up to
`KEPT` arrays, read in turns, is read with kept arrays only. Each holds
its decoders, with lookup tables of up to 512 KiB for a 16-bit stored type
once a read has decoded enough to build one.

A kept array is shared by every open of the same metadata: the shape that
`cover` grows it to (zarr's chunks past the metadata's shape, after a
resize in place) is then the largest any of them asked for. That loosens
only zarrs' bound on what may be read; zarr's selection decides what is
read and written (values and stored shard bytes checked against zarr's
pipeline after one open grew it).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from zarrs_extension_codecs._native import ChunkArray

KEPT = 128

# (directory, metadata JSON) -> array, and metadata JSON -> array for
# chunks handed in; the most recently used last; the process they were
# opened in.
_ON_DISK: OrderedDict[tuple[str, str], ChunkArray] = OrderedDict()
_HANDED_IN: OrderedDict[tuple[str, str], ChunkArray] = OrderedDict()
_KEPT_BY: list[int] = [os.getpid()]
_LOCK = threading.Lock()
# Arrays of a parent process, in a child made by `fork()`: held, not used
# (as `_remote._LEFT_BY_PARENT`: nothing of the parent's is torn down in
# the child while it runs).
_LEFT_BY_PARENT: list[ChunkArray] = []


def kept_array(json: str, directory: str | None) -> ChunkArray:
    """The zarrs array of the metadata `json` reading from `directory` (or,
    `None`, from the bytes each read hands in), kept from an earlier open
    of the same array or made now (raises what `ChunkArray` raises)."""
    key = (directory or "", json)
    kept = _HANDED_IN if directory is None else _ON_DISK
    with _LOCK:
        _forget_parents()
        found = kept.get(key)
        if found is not None:
            kept.move_to_end(key)
            return found
    # Made outside the lock: two threads opening the same array at once
    # may both make one, and the later replaces the earlier in the cache.
    made = ChunkArray(json) if directory is None else ChunkArray(json, directory)
    with _LOCK:
        _forget_parents()
        kept[key] = made
        while len(kept) > KEPT:
            kept.popitem(last=False)
    return made


def _forget_parents() -> None:
    if _KEPT_BY[0] != os.getpid():
        for kept in (_ON_DISK, _HANDED_IN):
            _LEFT_BY_PARENT.extend(kept.values())
            kept.clear()
        _KEPT_BY[0] = os.getpid()


def _after_fork_in_child() -> None:
    global _LOCK
    # Another thread of the parent may have held the lock at the fork.
    _LOCK = threading.Lock()
    _forget_parents()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
