#!/usr/bin/env bash
# Remote reads: this crate through object_store against zarr-python 3.4.2
# (obstore and fsspec) reading the same sharded store over HTTP, from
# Starlette's StaticFiles under uvicorn with a per-request latency.
#
#   bash scripts/bench/remote.sh          # LATENCY_MS=20 BENCH_REPS=5 by default
#   MBYTES_PER_S=100 bash scripts/bench/remote.sh   # and 100 MB/s a request
#
# 1. zarr-python writes the stores (scripts/bench/remote_stores.py write):
#    sharded.zarr (Sentinel-2 shards, 5.5 MiB) and small.zarr (512 x 512
#    shards);
# 2. the server starts on 127.0.0.1 (scripts/servers/serve_http.py);
# 3. for each store, zarr-python reads it (remote_stores.py bench), then
#    zarrs (benches/remote.rs), each counted by the server;
# 4. remote_stores.py report prints a table per store (also to
#    target/bench-remote/report.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

DIR="${ZARRS_BENCH_REMOTE:-$PWD/target/bench-remote}"
LATENCY_MS="${LATENCY_MS:-20}"
MBYTES_PER_S="${MBYTES_PER_S:-0}"
REPORT="${DIR}/report.md"
[[ "${MBYTES_PER_S}" == 0 ]] || REPORT="${DIR}/report-${MBYTES_PER_S}MBps.md"
mkdir -p "${DIR}"
bash scripts/python/setup_venv.sh
[[ -d "${DIR}/sharded.zarr" && -d "${DIR}/small.zarr" ]] \
    || .venv/bin/python scripts/bench/remote_stores.py write "${DIR}"
# Build before timing anything, so the compiler does not share the cores.
cargo bench --features remote --bench remote --no-run

# The server stops when its stdin closes: keep a pipe open until we exit.
exec 3> >(.venv/bin/python scripts/servers/serve_http.py "${DIR}" --latency-ms "${LATENCY_MS}" \
    --mbytes-per-s "${MBYTES_PER_S}" > "${DIR}/port")
trap 'exec 3>&-' EXIT
for _ in $(seq 50); do [[ -s "${DIR}/port" ]] && break; sleep 0.1; done
SERVER="http://127.0.0.1:$(head -1 "${DIR}/port")"
: > "${REPORT}"
for STORE in sharded small; do
    URL="${SERVER}/${STORE}.zarr"
    echo "serving ${DIR}/${STORE}.zarr at ${URL} with ${LATENCY_MS} ms per request, ${MBYTES_PER_S} MB/s (0: as fast as it goes)" >&2
    .venv/bin/python scripts/bench/remote_stores.py bench "${URL}" "${DIR}/zarr_python_${STORE}.jsonl"
    ZARRS_REMOTE_URL="${URL}" cargo bench --features remote --bench remote > "${DIR}/zarrs_${STORE}.jsonl"
    {
        echo "${STORE}.zarr:"
        echo
        .venv/bin/python scripts/bench/remote_stores.py report \
            "${DIR}/zarr_python_${STORE}.jsonl" "${DIR}/zarrs_${STORE}.jsonl"
        echo
    } | tee -a "${REPORT}"
done
