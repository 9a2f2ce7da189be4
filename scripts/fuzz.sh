#!/usr/bin/env bash
# Runs each fuzz target in fuzz/ for N seconds (default 60) on nightly, under
# AddressSanitizer (cargo-fuzz's default) with debug assertions, one process,
# starting from the committed replay set (fuzz/replay/<target>/), the local
# corpus of earlier runs (fuzz/corpus/<target>/, ignored by git) and seeds
# written from fixtures/. New inputs land in fuzz/corpus/<target>/ (the
# first corpus directory is the one libFuzzer writes to, so the replay set
# is only read); crashes in fuzz/artifacts/<target>/. To commit what a run
# found, fold its coverage into the replay set:
# `bash scripts/fuzz_replay_set.sh <target>`.
#
#   bash scripts/fuzz.sh 60            # every target, 60 s each
#   bash scripts/fuzz.sh 600 decode    # one target
#   FUZZ_FLAGS=-D bash scripts/fuzz.sh # unoptimised build instead of -O -a
#
# Not part of scripts/test.sh (needs nightly); tests/local/fuzz_replay.rs replays
# the replay set and fuzz/regressions/ on stable.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(configuration decode round_trip differential slices chunk_decode shards)
flags="${FUZZ_FLAGS:--a}"

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
[ -d fuzz/seeds ] || cargo run --quiet --example fuzz_seeds

failed=()
for target in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$target" "fuzz/logs"
    echo "== $target: ${seconds}s"
    # Seeds exist for the targets fuzz_seeds writes them for; libFuzzer
    # stops at once on a corpus directory that does not exist.
    dirs=("corpus/$target" "replay/$target")
    [ -d "fuzz/seeds/$target" ] && dirs+=("seeds/$target")
    (cd fuzz && cargo +nightly fuzz run $flags "$target" "${dirs[@]}" -- \
        -max_total_time="$seconds" -print_final_stats=1) \
        2>&1 | tee "fuzz/logs/$target.log" | grep -E "INITED|DONE|panicked|ERROR|SUMMARY|stat::" || true
    if grep -qE "ERROR: libFuzzer|panicked|Fuzz target exited" "fuzz/logs/$target.log"; then
        echo "$target: crash, see fuzz/logs/$target.log and fuzz/artifacts/$target/" >&2
        failed+=("$target")
    fi
done
[ ${#failed[@]} -eq 0 ] || { echo "crashed: ${failed[*]}" >&2; exit 1; }
