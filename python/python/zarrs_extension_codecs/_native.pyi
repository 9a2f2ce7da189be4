from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str

def default_threads() -> int: ...
def split_threads(nbytes: int) -> int: ...
def scale_offset(
    encode: bool,
    src: npt.NDArray[Any],
    out: npt.NDArray[Any],
    offset: bytes,
    scale: bytes,
    threads: int | None = None,
) -> None: ...

class CastPlan:
    def __init__(
        self,
        source: np.dtype[Any],
        target: np.dtype[Any],
        rounding: str,
        out_of_range: str | None = None,
        entries: list[tuple[bytes, bytes]] = ...,
    ) -> None: ...
    def cast(
        self, src: npt.NDArray[Any], out: npt.NDArray[Any], threads: int | None = None
    ) -> None: ...

class StoredChunkError(ValueError):
    """A write met stored bytes of a chunk or shard that do not read."""
