"""Print the table of `scripts/bench/read.sh`: zarrs + this crate vs zarr-python.

    python read_report.py ZARR_PYTHON_JSON CRITERION_DIR

Ratios are speed over zarr-python's FusedCodecPipeline with the same number
of workers (1 on one thread, one per CPU on all), in the same run; above 1
means faster than zarr-python.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

ROWS = [
    ("zarrs_vec", "zarrs `retrieve_array_subset::<Vec<f64>>`"),
    ("ext_vec", "`ArrayReadExt::retrieve_array_subset_vec`"),
    ("ext_into_reused", "`retrieve_array_subset_into_slice`, reused buffer"),
]
CASES = [
    ("whole", "whole", "whole read (256 MiB)"),
    ("whole_big", "whole big", "whole read, 32 MiB chunks (256 MiB)"),
    ("windows_aligned", "windows aligned", "256x256 windows, aligned"),
    ("windows_unaligned", "windows unaligned", "256x256 windows, unaligned"),
]


def criterion_seconds(root: Path, group: str, row: str, threads: str) -> float | None:
    est = root / group / f"{row}_{threads}" / "new" / "estimates.json"
    if not est.exists():
        return None
    median_ns = json.loads(est.read_text())["median"]["point_estimate"]
    per_iter = median_ns / 1e9
    # Window groups time all 256 windows in one iteration.
    return per_iter / 256 if group.startswith("windows") else per_iter


def main() -> None:
    py = json.loads(Path(sys.argv[1]).read_text())
    crit = Path(sys.argv[2])
    cpus = os.cpu_count() or 1
    zp = {(r["side"], r["workers"], r["case"]): r for r in py["results"]}

    def speed(case_key: str, seconds: float) -> str:
        if case_key.startswith("whole"):
            return f"{4096 * 8192 * 8 / seconds / 1e9:.2f} GB/s"
        return f"{1 / seconds:,.0f} win/s"

    print(
        f"machine: {platform.machine()}, {cpus} CPUs, {platform.platform()}; "
        f"zarr-python {py['zarr']}, numpy {py['numpy']}"
    )
    print()
    print("| case | reader | 1 thread | x zarr-python | all threads | x zarr-python |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for group, py_case, title in CASES:
        base = {}
        for pipeline in ("fused", "batched", "codecpipeline"):
            cells = []
            for workers in (1, cpus):
                r = zp.get((f"zarr-python {pipeline}", workers, py_case))
                if pipeline == "fused" and r:
                    base[workers] = r["seconds"]
                cells.append(r)
            label = {"codecpipeline": "zarr-python + `zarrs_extension_codecs.CodecPipeline`"}
            line = [title, label.get(pipeline, f"zarr-python {pipeline}")]
            for r, workers in zip(cells, (1, cpus)):
                if r is None:
                    line += ["-", "-"]
                else:
                    line += [
                        speed(group, r["seconds"]),
                        f"{base[workers] / r['seconds']:.2f}x" if workers in base else "-",
                    ]
            print("| " + " | ".join(line) + " |")
        for row, label in ROWS:
            line = [title, label]
            for threads, workers in (("1", 1), ("all", cpus)):
                s = criterion_seconds(crit, group, row, threads)
                if s is None:
                    line += ["-", "-"]
                else:
                    ratio = f"**{base[workers] / s:.2f}x**" if workers in base else "-"
                    line += [speed(group, s), ratio]
            print("| " + " | ".join(line) + " |")


if __name__ == "__main__":
    main()
