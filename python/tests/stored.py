"""What a zarr store holds, for tests that compare the keys and bytes the
pipeline stored with those zarr-python stores."""

from __future__ import annotations

from typing import Any

from zarr.core.buffer import default_buffer_prototype
from zarr.core.sync import sync


def stored(store: Any) -> dict[str, bytes]:
    """Every key of `store` and its bytes."""

    async def read() -> dict[str, bytes]:
        out = {}
        async for key in store.list():
            value = await store.get(key, prototype=default_buffer_prototype())
            out[key] = value.to_bytes()
        return out

    return sync(read())
