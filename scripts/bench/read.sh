#!/usr/bin/env bash
# Whole reads and windows of a zarr-python product: zarrs + this crate against
# zarr-python 3.4.2 in one run, printed as one table of ratios.
#
#   bash scripts/bench/read.sh            # stores in target/bench-stores
#
# 1. zarr-python writes the stores (scripts/bench/read_stores.py write);
# 2. zarr-python's pipelines read them (read_stores.py bench);
# 3. criterion reads them through zarrs (benches/read.rs);
# 4. scripts/bench/read_report.py prints the table (and writes it as markdown
#    to target/bench-stores/report.md).
# Run it on a quiet machine: both sides share the cores with anything else.
set -euo pipefail
cd "$(dirname "$0")/../.."

STORES="${ZARRS_BENCH_STORES:-$PWD/target/bench-stores}"
mkdir -p "${STORES}"
bash scripts/python/setup_venv.sh
.venv/bin/python scripts/bench/read_stores.py write "${STORES}"
# Build before timing anything, so the compiler does not share the cores.
cargo bench --bench read --no-run
.venv/bin/python scripts/bench/read_stores.py bench "${STORES}" "${STORES}/zarr_python.json"
rm -rf target/criterion/whole target/criterion/whole_big target/criterion/windows_aligned target/criterion/windows_unaligned
ZARRS_BENCH_STORES="${STORES}" cargo bench --bench read -- --noplot
.venv/bin/python scripts/bench/read_report.py "${STORES}/zarr_python.json" target/criterion \
    | tee "${STORES}/report.md"
