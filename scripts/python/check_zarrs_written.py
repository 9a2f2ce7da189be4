#!/usr/bin/env python3
"""Check stores written by zarrs against zarr-python.

    .venv/bin/python scripts/python/check_zarrs_written.py DIR [--allow-shard-layout] [--keep-temp]

DIR holds, for each store NAME:

    NAME.zarr/         a Zarr v3 array written by zarrs
    NAME.input.bin     the array zarrs was given to write (raw little-endian bytes, C order)
    NAME.input.json    {"shape": [...], "data_type": "<zarr v3 name>"}

For each store:

  (i)  read it whole with zarr-python and compare (bit for bit, any NaN equal to any NaN)
       with what zarr-python reads back after it writes NAME.input.bin itself, whole, into a
       fresh store that has the same zarr.json;
  (ii) compare every chunk / shard file of that fresh store byte for byte with the zarrs
       store (the same set of keys, the same bytes).

Inner chunks inside a shard may be laid out in any order. zarr-python writes them in morton
order by default, and zarrs in C order (SubchunkWriteOrder::C) or unordered (its default).
A sharded store therefore passes (ii) if its files equal zarr-python's in morton,
lexicographic (C) or colexicographic order. If they still differ, the shard indexes are
decoded: when every inner chunk is present in both with the same bytes and only their
placement differs, the store fails unless --allow-shard-layout is given.

Prints one line per store (OK / MISMATCH with details), then "N passed, M failed".
Exits 1 if any store mismatches or DIR holds no store.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from zarr.core.buffer import default_buffer_prototype

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zarr_common as zc

# zarr-python warns that sharding disables partial reads/writes; irrelevant here.
warnings.filterwarnings("ignore", message="Combining a `sharding_indexed` codec")

SHARD_ORDERS = ("morton", "lexicographic", "colexicographic")
MAX_U64 = 2**64 - 1


# --------------------------------------------------------------------------------------
# Shard index parsing (for diagnostics when the bytes of a shard differ)
# --------------------------------------------------------------------------------------


def shard_layout(meta: dict[str, Any]) -> dict[str, Any] | None:
    """Where the shard index is and how big, from the outermost sharding codec, if any."""
    codecs = meta.get("codecs", [])
    shard = next(
        (c for c in codecs if isinstance(c, dict) and c.get("name") == "sharding_indexed"), None
    )
    if shard is None:
        return None
    cfg = shard["configuration"]
    shard_shape = meta["chunk_grid"]["configuration"]["chunk_shape"]
    inner = cfg["chunk_shape"]
    if len(inner) != len(shard_shape):
        return None
    n = math.prod(math.ceil(s / c) for s, c in zip(shard_shape, inner))
    endian = "little"
    crc = False
    for c in cfg.get("index_codecs", []):
        name = c if isinstance(c, str) else c.get("name")
        if name == "bytes":
            endian = (
                (c.get("configuration") or {}).get("endian", "little")
                if isinstance(c, dict)
                else "little"
            )
        elif name == "crc32c":
            crc = True
        else:
            return None  # an index codec we do not decode here
    return {
        "n": n,
        "index_size": n * 16 + (4 if crc else 0),
        "location": cfg.get("index_location", "end"),
        "dtype": "<u8" if endian == "little" else ">u8",
    }


def inner_chunks(data: bytes, layout: dict[str, Any]) -> dict[int, bytes] | None:
    """Inner chunk number -> encoded bytes, for the chunks present in a shard."""
    size = layout["index_size"]
    if len(data) < size:
        return None
    raw = data[:size] if layout["location"] == "start" else data[len(data) - size :]
    index = np.frombuffer(raw[: layout["n"] * 16], dtype=layout["dtype"]).reshape(-1, 2)
    out = {}
    for i, (off, length) in enumerate(index.tolist()):
        if off == MAX_U64 and length == MAX_U64:
            continue
        if off + length > len(data):
            return None
        out[i] = data[off : off + length]
    return out


def compare_shard_contents(
    store: Path, ref: Path, keys: list[str], layout: dict[str, Any]
) -> str | None:
    """None if every shard in `keys` holds the same inner chunks (same bytes) in both stores;
    otherwise the first difference."""
    for key in keys:
        a = inner_chunks((store / key).read_bytes(), layout)
        b = inner_chunks((ref / key).read_bytes(), layout)
        if a is None or b is None:
            return f"shard {key!r}: index could not be decoded"
        if set(a) != set(b):
            only_a = sorted(set(a) - set(b))
            only_b = sorted(set(b) - set(a))
            return (
                f"shard {key!r}: inner chunks present only in zarrs store {only_a[:5]}, "
                f"only in zarr-python's {only_b[:5]} (C-order inner chunk numbers)"
            )
        for i in sorted(a):
            d = zc.first_bytes_difference(a[i], b[i])
            if d is not None:
                return f"shard {key!r}, inner chunk #{i} (C order): {d}"
    return None


# --------------------------------------------------------------------------------------
# One store
# --------------------------------------------------------------------------------------


def canonical_metadata_note(store: Path) -> str | None:
    """Whether zarr-python would serialise this zarr.json differently (informational only)."""
    try:
        arr = zc.open_array(store)
        buf = arr.metadata.to_buffer_dict(default_buffer_prototype())["zarr.json"]
        theirs = json.loads(buf.to_bytes())
        ours = zc.load_json(store / "zarr.json")
    except Exception as e:  # noqa: BLE001
        return f"zarr.json could not be re-serialised by zarr-python: {type(e).__name__}: {e}"
    if theirs == ours:
        return None
    diffs = []
    for k in sorted(set(ours) | set(theirs)):
        if ours.get(k, "<absent>") != theirs.get(k, "<absent>"):
            diffs.append(
                f"{k}: zarrs {json.dumps(ours.get(k, '<absent>'))} vs zarr-python "
                f"{json.dumps(theirs.get(k, '<absent>'))}"
            )
    return "zarr.json differs from zarr-python's own serialisation (not a failure): " + "; ".join(
        diffs
    )


def read_or_error(path: Path) -> tuple[np.ndarray | None, str | None]:
    try:
        return zc.read_whole(path), None
    except Exception as e:  # noqa: BLE001
        return None, f"{type(e).__name__}: {e}"


def check_store(store: Path, tmp_root: Path, allow_layout: bool) -> tuple[bool, str, list[str]]:
    """(ok, one-line summary, extra note lines)."""
    name = store.name[: -len(".zarr")]
    base = store.parent
    notes: list[str] = []
    meta_path = store / "zarr.json"
    if not meta_path.is_file():
        return False, "no zarr.json", notes
    in_json = base / f"{name}.input.json"
    in_bin = base / f"{name}.input.bin"
    if not in_json.is_file() or not in_bin.is_file():
        return False, f"missing {in_json.name} or {in_bin.name}", notes

    meta = zc.load_json(meta_path)
    spec = zc.load_json(in_json)
    if list(spec["shape"]) != list(meta["shape"]) or spec["data_type"] != meta["data_type"]:
        return (
            False,
            (
                f"{in_json.name} says shape {spec['shape']} {spec['data_type']}, zarr.json says "
                f"{meta['shape']} {meta['data_type']}"
            ),
            notes,
        )
    try:
        inp = zc.read_raw(in_bin, spec["shape"], spec["data_type"])
    except ValueError as e:
        return False, str(e), notes

    note = canonical_metadata_note(store)
    if note:
        notes.append(note)

    # (i) read-back
    got, got_err = read_or_error(store)
    ref_dir = tmp_root / name / "morton.zarr"
    try:
        zc.write_whole_from_metadata(meta_path, ref_dir, inp)
    except Exception as e:  # noqa: BLE001
        return (
            False,
            f"zarr-python cannot write the input with this metadata: {type(e).__name__}: {e}",
            notes,
        )
    want, want_err = read_or_error(ref_dir)
    problems: list[str] = []
    if got_err or want_err:
        if got_err != want_err:
            problems.append(
                f"(i) read-back: zarrs store -> {got_err or 'ok'}; "
                f"zarr-python's own store -> {want_err or 'ok'}"
            )
        else:
            notes.append(f"both reads fail identically: {got_err}")
    else:
        d = zc.first_array_difference(got, want)
        if d is not None:
            problems.append(f"(i) read-back: {d}")

    # (ii) files
    layout = shard_layout(meta)
    diff = zc.compare_stores(store, ref_dir)
    matched_order = "morton" if diff.ok else None
    if not diff.ok and layout is not None:
        for order in SHARD_ORDERS[1:]:
            alt = tmp_root / name / f"{order}.zarr"
            zc.write_whole_from_metadata(meta_path, alt, inp, subchunk_write_order=order)
            alt_diff = zc.compare_stores(store, alt)
            if alt_diff.ok:
                matched_order = order
                diff = alt_diff
                break
            if order == "lexicographic":
                lex_dir, lex_diff = alt, alt_diff
    n_keys = len(zc.store_keys(store))
    layout_only = False
    if not diff.ok:
        detail = diff.describe()
        if layout is not None and not diff.missing and not diff.extra:
            keys = [k for k, _ in lex_diff.differing]
            content = compare_shard_contents(store, lex_dir, keys, layout)
            if content is None:
                layout_only = True
                detail += (
                    "; every inner chunk is present with identical bytes: only the "
                    "placement of inner chunks within the shard differs"
                )
            else:
                detail += f"; decoded shards: {content}"
        if layout_only and allow_layout:
            notes.append("(ii) " + detail)
        else:
            problems.append("(ii) files: " + detail)

    if problems:
        return False, " | ".join(problems), notes
    summary = f"{n_keys} chunk file(s) byte-identical"
    if layout_only:
        summary = f"{n_keys} chunk file(s): same inner chunks, different placement (allowed)"
    elif matched_order and layout is not None:
        summary += f" (inner chunks in {matched_order} order)"
    elems = int(np.prod(meta["shape"]))
    return True, f"read-back identical ({elems} elements); {summary}", notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("dir", type=Path, help="directory holding NAME.zarr + NAME.input.{bin,json}")
    ap.add_argument(
        "--allow-shard-layout",
        action="store_true",
        help="pass shards whose inner chunks match but are placed differently",
    )
    ap.add_argument("--keep-temp", action="store_true", help="keep zarr-python's reference stores")
    args = ap.parse_args(argv)

    if not args.dir.is_dir():
        print(f"check_zarrs_written: {args.dir} is not a directory", file=sys.stderr)
        return 1
    stores = sorted(p for p in args.dir.iterdir() if p.is_dir() and p.name.endswith(".zarr"))
    if not stores:
        print(f"check_zarrs_written: no *.zarr stores in {args.dir}", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1

    tmp_root = zc.make_temp_dir("check-zarrs-")
    passed = failed = 0
    try:
        for store in stores:
            name = store.name[: -len(".zarr")]
            try:
                ok, summary, notes = check_store(store, tmp_root, args.allow_shard_layout)
            except Exception as e:  # noqa: BLE001
                ok, summary, notes = (
                    False,
                    f"checker error: {type(e).__name__}: {e}",
                    [traceback.format_exc()],
                )
            print(f"{'OK' if ok else 'MISMATCH':8} {name}: {summary}")
            for n in notes:
                print(f"         note: {n}")
            passed += ok
            failed += not ok
    finally:
        if args.keep_temp:
            print(f"reference stores kept in {tmp_root}")
        else:
            shutil.rmtree(tmp_root, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
