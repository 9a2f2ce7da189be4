#!/usr/bin/env bash
# Peak memory of whole writes (issue 36): for each layout of benches/write.rs,
# writer (zarrs' store_array_subset, this crate's ArrayWriteExt) and thread
# count, one write in a fresh process, printing how far its peak resident
# memory rose above what it held before (the input among it).
#
#   bash scripts/bench/write_memory.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

# Build first, so that each case below is one process of the bench binary.
cargo bench --bench write --no-run
for layout in band volume; do
    for threads in 1 all; do
        for writer in zarrs ext; do
            WRITE_PEAK="${layout}/${writer}/${threads}" cargo bench --quiet --bench write 2>/dev/null \
                | grep "^${layout}/"
        done
    done
done
