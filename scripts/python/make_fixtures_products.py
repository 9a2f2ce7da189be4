#!/usr/bin/env python3
"""Write zarr-python 3.4.2 fixtures shaped like real products: compressed chunks, and fill values
that do not survive the codecs.

    bash scripts/python/setup_venv.sh
    .venv/bin/python scripts/python/make_fixtures_products.py [OUT_DIR]

Deletes and re-creates OUT_DIR (default fixtures/zarr-python-products/), in the layout of
fixtures/zarr-python/:

    NAME.zarr/            the store zarr-python wrote (LocalStore)
    NAME.expected.bin     what zarr-python reads from the whole array (little-endian, C order)
    NAME.expected.json    shape, data_type, fill_value, codecs_summary, subsets (every one read
                          by zarr-python and checked equal to the slice of the whole read),
                          stored_keys, description, package versions

Two families:

- compressed: scale_offset + cast_value inside sharding_indexed with blosc and with zstd (how
  EOPF / Sentinel-2 L2A products are stored), an array with zarr-python's default compressor
  (zstd), and gzip + crc32c;
- fill_*: scale_offset(offset=100, scale=10) + cast_value(uint16) with zarr-python's default fill
  value 0.0, which the codecs cannot give back (0.0 -> -1000 -> 0 -> 100.0): zarr-python writes
  and reads them without a word. Whole chunks, partly written chunks (whose unwritten elements
  zarr-python stores as the encoded fill value, so they read 100.0) and missing chunks (read as
  the fill value 0.0), unsharded and inside sharding; with out_of_range clamp and wrap
  (zarr-python refuses the chain without out_of_range when it creates the array).

Every array is small (a few KB); the data are seeded.
"""

from __future__ import annotations

import json
import sys
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import zarr
from zarr.codecs import (
    BloscCodec,
    BytesCodec,
    CastValue,
    Crc32cCodec,
    GzipCodec,
    ScaleOffset,
    ZstdCodec,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zarr_common as zc

warnings.filterwarnings("ignore", message="Combining a `sharding_indexed` codec")

REPO_ROOT = Path(__file__).resolve().parents[2]
OUT = REPO_ROOT / "fixtures" / "zarr-python-products"

NAN_TO_0 = {"encode": [("NaN", 0)], "decode": [(0, "NaN")]}


@dataclass
class Fixture:
    name: str
    description: str
    dtype: str
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    fill_value: Any
    kwargs: Callable[[], dict[str, Any]]  # filters / serializer / compressors / shards
    data: Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
    regions: list[tuple[slice, ...]]  # written, one `arr[region] = data[region]` each
    subsets: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)


def reflectance(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """float64 on the grid k / 0.1 - 10 (k in 1..255) with NaNs: exact through the chain."""
    x = rng.integers(1, 256, size=shape) / 0.1 - 10.0
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, flat.size // 16, replace=False)] = np.nan
    return x


def float32_field(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    y, x = np.indices(shape)
    return (np.sin(y / 5.0) * np.cos(x / 7.0) * 100.0 + rng.normal(0, 1, size=shape)).astype(
        np.float32
    )


def int16_field(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-300, 300, size=shape, dtype=np.int16)


def on_fill_grid(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """float64 k / 10 + 100 for k in 0..65535: exact through scale_offset(100, 10) + uint16."""
    return rng.integers(0, 65536, size=shape) / 10.0 + 100.0


def so_cv_u8() -> list[Any]:
    return [
        ScaleOffset(offset=-10, scale=0.1),
        CastValue(data_type="uint8", rounding="nearest-even", scalar_map=NAN_TO_0),
    ]


def so_cv_fill(out_of_range: str | None) -> list[Any]:
    kw: dict[str, Any] = {"data_type": "uint16"}
    if out_of_range is not None:
        kw["out_of_range"] = out_of_range
    return [ScaleOffset(offset=100, scale=10), CastValue(**kw)]


WINDOWS_2D = [
    ("inside one inner chunk", (1, 2), (3, 4)),
    ("across shard / chunk edges", (5, 6), (20, 21)),
    ("edge of the array", (30, 40), (10, 8)),
    ("one element", (39, 47), (1, 1)),
]


def fixtures() -> list[Fixture]:
    fx = []
    for codec_name, compressor in [
        (
            "blosc",
            lambda: BloscCodec(cname="zstd", clevel=5, shuffle="shuffle", typesize=1),
        ),
        ("zstd", lambda: ZstdCodec(level=3)),
    ]:
        fx.append(
            Fixture(
                name=f"sharded_so_cv_{codec_name}",
                description=f"float64, fill NaN; sharding_indexed(16x16, inner 8x8) around "
                f"scale_offset(offset=-10, scale=0.1) -> cast_value(uint8, NaN<->0) -> bytes -> "
                f"{codec_name}, as in EOPF / Sentinel-2 L2A products. Shard (2,2) is never written, "
                f"inner chunk (0,0) of shard (0,0) is all NaN (not stored).",
                dtype="float64",
                shape=(40, 48),
                chunks=(8, 8),
                fill_value=np.nan,
                kwargs=lambda compressor=compressor: {
                    "shards": (16, 16),
                    "filters": so_cv_u8(),
                    "serializer": BytesCodec(),
                    "compressors": [compressor()],
                },
                data=reflectance,
                regions=[
                    (slice(8, 32), slice(0, 48)),
                    (slice(0, 8), slice(8, 32)),
                    (slice(32, 40), slice(0, 30)),
                ],
            )
        )
    fx.append(
        Fixture(
            name="default_zstd_f32",
            description="float32, fill 0.0, zarr-python's default codecs (bytes -> zstd level 0, "
            "no checksum); chunk (2,2) never written.",
            dtype="float32",
            shape=(40, 48),
            chunks=(16, 16),
            fill_value=0.0,
            kwargs=dict,
            data=float32_field,
            regions=[(slice(0, 32), slice(0, 48)), (slice(32, 40), slice(0, 32))],
        )
    )
    fx.append(
        Fixture(
            name="gzip_crc32c_i16",
            description="int16, fill -1; bytes -> gzip(level 5) -> crc32c; chunk (0,2) never "
            "written.",
            dtype="int16",
            shape=(40, 48),
            chunks=(16, 16),
            fill_value=-1,
            kwargs=lambda: {"compressors": [GzipCodec(level=5), Crc32cCodec()]},
            data=int16_field,
            regions=[(slice(0, 16), slice(0, 32)), (slice(16, 40), slice(0, 48))],
        )
    )
    fx.append(
        Fixture(
            name="fill_so_cv_u16_clamp",
            description="float64, fill 0.0 (zarr-python's default), scale_offset(offset=100, "
            "scale=10) -> cast_value(uint16, out_of_range clamp) -> bytes: the fill value encodes "
            "to -1000 -> 0, which decodes to 100.0. Chunk (1,1) is written in part (its other "
            "elements are stored as 0 and read 100.0), chunk (2,2) never (reads 0.0).",
            dtype="float64",
            shape=(40, 48),
            chunks=(16, 16),
            fill_value=0.0,
            kwargs=lambda: {
                "filters": so_cv_fill("clamp"),
                "serializer": BytesCodec(),
                "compressors": None,
            },
            data=on_fill_grid,
            regions=[
                (slice(0, 16), slice(0, 48)),
                (slice(16, 32), slice(0, 16)),
                (slice(16, 24), slice(16, 24)),
                (slice(16, 32), slice(32, 48)),
                (slice(32, 40), slice(0, 32)),
            ],
        )
    )
    fx.append(
        Fixture(
            name="fill_so_cv_u16_wrap",
            description="float64, fill 0.0, scale_offset(offset=100, scale=10) -> "
            "cast_value(uint16, out_of_range wrap) -> bytes -> zstd: the fill value encodes to "
            "-1000 -> 64536, which decodes to 6553.6 (zarr-python refuses the same chain "
            "without out_of_range at creation). Chunk (1,1) is written in part (its other "
            "elements read 6553.6), chunk (2,2) never (reads 0.0).",
            dtype="float64",
            shape=(40, 48),
            chunks=(16, 16),
            fill_value=0.0,
            kwargs=lambda: {
                "filters": so_cv_fill("wrap"),
                "serializer": BytesCodec(),
                "compressors": [ZstdCodec(level=1)],
            },
            data=on_fill_grid,
            regions=[
                (slice(0, 16), slice(0, 48)),
                (slice(16, 32), slice(0, 16)),
                (slice(20, 28), slice(18, 30)),
                (slice(16, 32), slice(32, 48)),
                (slice(32, 40), slice(0, 32)),
            ],
        )
    )
    fx.append(
        Fixture(
            name="sharded_fill_so_cv_u16_clamp",
            description="float64, fill 0.0; sharding_indexed(16x16, inner 8x8) around "
            "scale_offset(offset=100, scale=10) -> cast_value(uint16, clamp) -> bytes -> zstd. "
            "Inner chunks written in part read 100.0 where unwritten; missing inner chunks and "
            "the never-written shard (2,2) read 0.0.",
            dtype="float64",
            shape=(40, 48),
            chunks=(8, 8),
            fill_value=0.0,
            kwargs=lambda: {
                "shards": (16, 16),
                "filters": so_cv_fill("clamp"),
                "serializer": BytesCodec(),
                "compressors": [ZstdCodec(level=1)],
            },
            data=on_fill_grid,
            regions=[
                (slice(0, 16), slice(0, 40)),
                (slice(17, 30), slice(3, 13)),
                (slice(16, 32), slice(32, 48)),
                (slice(32, 40), slice(0, 20)),
            ],
        )
    )
    for f in fx:
        f.subsets = WINDOWS_2D
    return fx


def codec_summary(codec: dict[str, Any]) -> str:
    name = codec["name"]
    if name == "sharding_indexed":
        inner = " -> ".join(codec_summary(c) for c in codec["configuration"]["codecs"])
        return f"sharding_indexed[{inner}]"
    return name


def write(f: Fixture, out: Path) -> dict[str, Any]:
    rng = np.random.default_rng(zlib.crc32(f.name.encode()))
    data = f.data(rng, f.shape)
    store_path = out / f"{f.name}.zarr"
    zc.create_and_write_regions(
        store_path,
        shape=f.shape,
        chunks=f.chunks,
        dtype=f.dtype,
        fill_value=f.fill_value,
        codec_kwargs=f.kwargs(),
        regions=f.regions,
        source=data,
    )
    meta = zc.load_json(store_path / "zarr.json")
    expected = zc.read_whole(store_path)
    (out / f"{f.name}.expected.bin").write_bytes(zc.to_le_bytes(expected))
    subsets = []
    for label, start, shape in f.subsets:
        zc.check_subset(store_path, expected, start, shape, (f.name, label))
        subsets.append({"label": label, "start": list(start), "shape": list(shape)})
    info = {
        "name": f.name,
        "description": f.description,
        "shape": list(f.shape),
        "data_type": meta["data_type"],
        "fill_value": meta["fill_value"],
        "codecs_summary": " -> ".join(codec_summary(c) for c in meta["codecs"]),
        "chunk_shape": meta["chunk_grid"]["configuration"]["chunk_shape"],
        "subsets": subsets,
        "stored_keys": sorted(zc.store_keys(store_path)),
        "versions": {
            "zarr": zarr.__version__,
            "numpy": np.__version__,
            "cast-value-rs": version("cast-value-rs"),
            "numcodecs": version("numcodecs"),
        },
    }
    (out / f"{f.name}.expected.json").write_text(json.dumps(info, indent=2) + "\n")
    return info


README = """\
# zarr-python fixtures shaped like real products

Written by zarr-python {zarr} (numcodecs {numcodecs}, cast-value-rs {cvr}) with
`scripts/python/make_fixtures_products.py`; do not edit by hand. Layout as in
`fixtures/zarr-python/` (`NAME.zarr`, `NAME.expected.bin`, `NAME.expected.json`);
every subset in `expected.json` was read by zarr-python and matched the whole read.

| name | data type | codecs | what it covers |
| --- | --- | --- | --- |
{rows}
"""


def main() -> int:
    # An output directory other than the fixtures' may be given (to compare a fresh run).
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    zc.fresh_output_dir(out)
    rows = []
    for f in fixtures():
        info = write(f, out)
        rows.append(
            f"| `{f.name}` | {info['data_type']} | `{info['codecs_summary']}` | {f.description} |"
        )
        print(f"wrote {f.name}: {len(info['stored_keys'])} stored keys")
    (out / "README.md").write_text(
        README.format(
            zarr=zarr.__version__,
            numcodecs=version("numcodecs"),
            cvr=version("cast-value-rs"),
            rows="\n".join(rows),
        )
    )
    print(f"{len(rows)} fixtures, {zc.tree_bytes(out)} bytes in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
