"""The EOPF-like band's codecs, shared by the benchmarks (no import of numpy, zarr or this
package: bench_peers.py's children import it before they set their thread limits).

Sentinel-2 reflectance as EOPF stores it: float64 scaled by 10000 with offset -0.1 and cast to
uint16 (rounding half to even, clamping, NaN <-> 0), blosc zstd level 3 with shuffle.
"""

from __future__ import annotations

from typing import Any

SCALE = 10000
OFFSET = -0.1
FILTERS: list[dict[str, Any]] = [
    {"name": "scale_offset", "configuration": {"scale": SCALE, "offset": OFFSET}},
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
BLOSC: dict[str, Any] = {
    "name": "blosc",
    "configuration": {
        "cname": "zstd",
        "clevel": 3,
        "shuffle": "shuffle",
        "typesize": 2,
        "blocksize": 0,
    },
}
