"""zarrs arrays kept across opens of the same array, so that an array
opened again (a tile server opens the product for each request) reads
with the reader built the first time: its plan, codec chains and decoders
(0.6 ms of the first window of each open of the EOPF-like band).

What a kept array holds follows from its metadata and its directory
alone, both part of the key: chunks and shard indexes are read from the
files at every read, as they are for an array kept open, so a kept array
sees every write and deletion an array opened anew would. A rewritten
``zarr.json`` is another key. At most `KEPT` arrays are kept, the least
recently used dropped first (each holds its lookup tables: up to 512 KiB
for a 16-bit stored type).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from zarrs_extension_codecs._native import ChunkArray

KEPT = 64

# (directory or None for chunks handed in, metadata JSON) -> array, the
# most recently used last; the process they were opened in.
_KEPT: OrderedDict[tuple[str | None, str], ChunkArray] = OrderedDict()
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
    key = (directory, json)
    with _LOCK:
        _forget_parents()
        found = _KEPT.get(key)
        if found is not None:
            _KEPT.move_to_end(key)
            return found
    # Made outside the lock: two threads opening the same array at once
    # may both make one, and the later replaces the earlier in the cache.
    made = ChunkArray(json) if directory is None else ChunkArray(json, directory)
    with _LOCK:
        _forget_parents()
        _KEPT[key] = made
        while len(_KEPT) > KEPT:
            _KEPT.popitem(last=False)
    return made


def _forget_parents() -> None:
    if _KEPT_BY[0] != os.getpid():
        _LEFT_BY_PARENT.extend(_KEPT.values())
        _KEPT.clear()
        _KEPT_BY[0] = os.getpid()


def _after_fork_in_child() -> None:
    global _LOCK
    # Another thread of the parent may have held the lock at the fork.
    _LOCK = threading.Lock()
    _forget_parents()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
