#!/usr/bin/env python3
"""Self-test of check_zarrs_written.py on copies of the zarr-python fixtures.

    .venv/bin/python scripts/python/selftest_check_zarrs_written.py

Needs fixtures/zarr-python/ (make_fixtures.py). Each case builds a DIR in a temporary
directory, runs the checker on it, and checks its exit code and output.
Prints one line per case and "N passed, M failed"; exits 1 if any case fails.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import struct
import sys
from collections.abc import Callable
from pathlib import Path

import google_crc32c
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_zarrs_written as checker
import zarr_common as zc

FIXTURES = HERE.parents[1] / "fixtures" / "zarr-python"
PLAIN = "so_cv_f64_u8_nan"
SHARDED = "sharded_so_cv_f64_u8_nan"


def copy_fixture(name: str, dest: Path) -> Path:
    shutil.copytree(FIXTURES / f"{name}.zarr", dest / f"{name}.zarr")
    for ext in ("input.bin", "input.json"):
        shutil.copyfile(FIXTURES / f"{name}.{ext}", dest / f"{name}.{ext}")
    return dest / f"{name}.zarr"


def run(dest: Path, *extra: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = checker.main([str(dest), *extra])
    return rc, out.getvalue()


def rewrite_shard(path: Path, order: Callable[[list[int]], list[int]], layout: dict) -> None:
    """Re-lay out the inner chunks of a shard (index at the end, bytes + crc32c)."""
    data = path.read_bytes()
    chunks = checker.inner_chunks(data, layout)
    assert chunks is not None and layout["location"] == "end"
    index = np.full((layout["n"], 2), checker.MAX_U64, dtype="<u8")
    body = bytearray()
    for i in order(sorted(chunks)):
        index[i] = (len(body), len(chunks[i]))
        body += chunks[i]
    raw = index.tobytes()
    crc = struct.pack("<I", google_crc32c.value(raw))
    path.write_bytes(bytes(body) + raw + crc)


def case_copy_passes(d: Path) -> str | None:
    copy_fixture(PLAIN, d)
    rc, out = run(d)
    return None if rc == 0 and "OK" in out and "1 passed, 0 failed" in out else out


def case_corrupt_byte_fails(d: Path) -> str | None:
    store = copy_fixture(PLAIN, d)
    chunk = store / "c" / "1" / "1"
    b = bytearray(chunk.read_bytes())
    b[17] ^= 0x01
    chunk.write_bytes(bytes(b))
    rc, out = run(d)
    ok = rc == 1 and "MISMATCH" in out and "'c/1/1'" in out and "byte offset 17" in out
    return None if ok else out


def case_missing_chunk_fails(d: Path) -> str | None:
    store = copy_fixture(PLAIN, d)
    (store / "c" / "3" / "3").unlink()
    rc, out = run(d)
    return None if rc == 1 and "missing keys ['c/3/3']" in out else out


def case_extra_chunk_fails(d: Path) -> str | None:
    store = copy_fixture(PLAIN, d)
    # An explicit all-fill chunk (NaN -> 0) where zarr-python stores nothing.
    (store / "c" / "0" / "0").write_bytes(bytes(10 * 16))
    rc, out = run(d)
    return None if rc == 1 and "extra keys ['c/0/0']" in out else out


def case_wrong_input_fails(d: Path) -> str | None:
    copy_fixture(PLAIN, d)
    info = zc.load_json(d / f"{PLAIN}.input.json")
    inp = zc.read_raw(d / f"{PLAIN}.input.bin", info["shape"], info["data_type"])
    inp[12, 20] = 1234.0
    (d / f"{PLAIN}.input.bin").write_bytes(zc.to_le_bytes(inp))
    rc, out = run(d)
    return None if rc == 1 and "(i) read-back" in out and "[12, 20]" in out else out


def case_missing_input_fails(d: Path) -> str | None:
    copy_fixture(PLAIN, d)
    (d / f"{PLAIN}.input.bin").unlink()
    rc, out = run(d)
    return None if rc == 1 and "missing" in out else out


def case_empty_dir_fails(d: Path) -> str | None:
    rc, out = run(d)
    return None if rc == 1 and "no *.zarr stores" in out else out


def case_sharded_copy_passes(d: Path) -> str | None:
    copy_fixture(SHARDED, d)
    rc, out = run(d)
    return None if rc == 0 and "morton order" in out else out


def case_sharded_c_order_passes(d: Path) -> str | None:
    """zarrs with SubchunkWriteOrder::C lays inner chunks out in C (lexicographic) order."""
    store = copy_fixture(SHARDED, d)
    layout = checker.shard_layout(zc.load_json(store / "zarr.json"))
    for path in zc.store_keys(store).values():
        rewrite_shard(path, lambda ids: ids, layout)
    rc, out = run(d)
    return None if rc == 0 and "lexicographic order" in out else out


def case_sharded_other_layout(d: Path) -> str | None:
    """Reverse order: fails by default, passes with --allow-shard-layout."""
    store = copy_fixture(SHARDED, d)
    layout = checker.shard_layout(zc.load_json(store / "zarr.json"))
    for path in zc.store_keys(store).values():
        rewrite_shard(path, lambda ids: list(reversed(ids)), layout)
    rc, out = run(d)
    if not (rc == 1 and "only the placement of inner chunks" in out):
        return out
    rc, out = run(d, "--allow-shard-layout")
    return None if rc == 0 and "different placement (allowed)" in out else out


def case_sharded_corrupt_inner_chunk_fails(d: Path) -> str | None:
    store = copy_fixture(SHARDED, d)
    layout = checker.shard_layout(zc.load_json(store / "zarr.json"))
    path = store / "c" / "0" / "0"
    for p in zc.store_keys(store).values():
        rewrite_shard(p, lambda ids: ids, layout)  # C order, as zarrs would
    b = bytearray(path.read_bytes())
    b[3] ^= 0x40  # inside inner chunk #0's data
    path.write_bytes(bytes(b))
    rc, out = run(d, "--allow-shard-layout")
    ok = rc == 1 and "inner chunk #0" in out and "'c/0/0'" in out
    return None if ok else out


CASES = [
    case_copy_passes,
    case_corrupt_byte_fails,
    case_missing_chunk_fails,
    case_extra_chunk_fails,
    case_wrong_input_fails,
    case_missing_input_fails,
    case_empty_dir_fails,
    case_sharded_copy_passes,
    case_sharded_c_order_passes,
    case_sharded_other_layout,
    case_sharded_corrupt_inner_chunk_fails,
]


def main() -> int:
    if not (FIXTURES / f"{PLAIN}.zarr").is_dir():
        print(f"missing {FIXTURES}; run make_fixtures.py first", file=sys.stderr)
        return 1
    root = zc.make_temp_dir("selftest-check-")
    passed = failed = 0
    try:
        for case in CASES:
            d = root / case.__name__
            d.mkdir()
            try:
                problem = case(d)
            except Exception as e:  # noqa: BLE001
                problem = f"{type(e).__name__}: {e}"
            if problem is None:
                passed += 1
                print(f"ok   {case.__name__}")
            else:
                failed += 1
                print(f"FAIL {case.__name__}:\n{problem}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
