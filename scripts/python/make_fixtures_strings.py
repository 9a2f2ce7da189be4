#!/usr/bin/env python3
"""Write the fixtures for `vlen-utf8` and `vlen-bytes` with zarr-python.

    bash scripts/python/setup_venv.sh
    .venv/bin/python scripts/python/make_fixtures_strings.py

Deletes and re-creates fixtures/zarr-python-strings/ (README.md included).

For each fixture NAME:

    NAME.zarr/           the store exactly as zarr-python left it (LocalStore, "/" chunk keys)
    NAME.expected.json   shape, data_type, codecs (as in zarr.json), description, writer
                         versions, and "values": what zarr-python reads back for the whole
                         array, C order, as strings (vlen-utf8) or lists of byte values
                         (vlen-bytes)

The data are deterministic: every fixture has its own seeded numpy Generator.
"""

from __future__ import annotations

import json
import shutil
from importlib.metadata import version
from pathlib import Path

import numpy as np
import zarr
from zarr.dtype import VariableLengthBytes
from zarr.storage import LocalStore

REPO_ROOT = Path(__file__).resolve().parents[2]
OUT = REPO_ROOT / "fixtures" / "zarr-python-strings"

# Characters drawn from: ASCII, Latin-1, CJK, an emoji (4 bytes in UTF-8).
ALPHABET = list("abcXYZ019 _-") + ["é", "ß", "日", "本", "語", "😀"]


def random_strings(rng: np.random.Generator, n: int) -> list[str]:
    out = []
    for _ in range(n):
        length = int(rng.integers(0, 12)) if rng.random() > 0.15 else 0
        out.append("".join(rng.choice(ALPHABET, size=length)))
    return out


def random_bytes(rng: np.random.Generator, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        length = int(rng.integers(0, 10)) if rng.random() > 0.15 else 0
        out.append(bytes(rng.integers(0, 256, size=length, dtype=np.uint8)))
    return out


def write(name: str, description: str, values, shape, chunks, dtype, shards=None, fill=None):
    path = OUT / f"{name}.zarr"
    kwargs = {}
    if shards is not None:
        kwargs["shards"] = shards
    array = zarr.create_array(
        store=LocalStore(path),
        shape=shape,
        chunks=chunks,
        dtype=dtype,
        compressors=None,
        fill_value=fill,
        **kwargs,
    )
    data = np.empty(len(values), dtype=object)
    data[:] = values
    array[...] = data.reshape(shape)
    back = zarr.open_array(LocalStore(path), mode="r")[...]
    flat = back.reshape(-1).tolist()
    meta = json.loads((path / "zarr.json").read_text())
    if dtype is str:
        expected = [str(v) for v in flat]
        assert expected == values, name
    else:
        expected = [list(bytes(v)) for v in flat]
        assert expected == [list(v) for v in values], name
    record = {
        "description": description,
        "shape": list(shape),
        "data_type": meta["data_type"],
        "fill_value": meta["fill_value"],
        "codecs": meta["codecs"],
        "writer": {
            "zarr": zarr.__version__,
            "numpy": np.__version__,
            "numcodecs": version("numcodecs"),
        },
        "values": expected,
        "stored": sorted(
            str(p.relative_to(path))
            for p in path.rglob("*")
            if p.is_file() and p.name != "zarr.json"
        ),
    }
    (OUT / f"{name}.expected.json").write_text(
        json.dumps(record, indent=1, ensure_ascii=False, separators=(",", ": ")) + "\n"
    )


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)

    rng = np.random.default_rng(1001)
    write(
        "utf8_1d",
        "1-D strings, 5 chunks of 8 (the last partial), empty and non-ASCII strings",
        random_strings(rng, 37),
        (37,),
        (8,),
        str,
    )
    rng = np.random.default_rng(1002)
    write(
        "utf8_2d", "2-D strings, 3x4 chunks over 7x9", random_strings(rng, 63), (7, 9), (3, 4), str
    )
    rng = np.random.default_rng(1003)
    values = [""] * 16 + random_strings(rng, 16)
    write(
        "utf8_fill_chunks",
        '1-D strings whose first two chunks hold only the fill value "" (not stored)',
        values,
        (32,),
        (8,),
        str,
    )
    rng = np.random.default_rng(1004)
    write(
        "utf8_sharded",
        "2-D strings in shards of 4x6 holding inner chunks of 2x3",
        random_strings(rng, 80),
        (8, 10),
        (2, 3),
        str,
        shards=(4, 6),
    )
    rng = np.random.default_rng(1005)
    write(
        "bytes_1d",
        "1-D variable-length bytes, 4 chunks of 5 (the last partial)",
        random_bytes(rng, 17),
        (17,),
        (5,),
        VariableLengthBytes(),
    )

    readme = f"""# zarr-python fixtures for `vlen-utf8` and `vlen-bytes`

Written by zarr-python {zarr.__version__} (numcodecs {version("numcodecs")}, numpy {np.__version__})
with `scripts/python/make_fixtures_strings.py`; regenerate with

    bash scripts/python/setup_venv.sh
    .venv/bin/python scripts/python/make_fixtures_strings.py

Do not edit by hand: every `zarr.json` and chunk file is exactly what zarr-python wrote. No
compressor (`compressors=None`), default `/` chunk keys. zarr-python chose the codecs itself:
`vlen-utf8` for `dtype=str` (the `string` data type), `vlen-bytes` for `dtype=zarr.dtype.VariableLengthBytes()`.

For each fixture `NAME`: `NAME.zarr/` (the store) and `NAME.expected.json` (description, shape,
data type, codecs, writer versions, the stored chunk keys, and `values`: what zarr-python reads
back for the whole array, C order: strings, or lists of byte values for `bytes`).

Read by `tests/local/vlen_v2_fixtures.rs`, with this crate's codecs
(`zarrs_extension_codecs::register_overrides()`) and, for comparison, with zarrs' built-ins.
"""
    (OUT / "README.md").write_text(readme)


if __name__ == "__main__":
    main()
