#!/usr/bin/env bash
# Rebuilds each fuzz target's committed replay set, fuzz/replay/<target>/,
# from the replay set itself, the local corpus of scripts/fuzz.sh runs
# (fuzz/corpus/<target>/, ignored by git) and the seeds (fuzz/seeds/<target>/,
# if written). The replay set is at most FUZZ_REPLAY_MAX inputs (300 by
# default), chosen for coverage:
#
# 1. libFuzzer's merge (`-merge=1`, what `cargo fuzz cmin` runs) with
#    `-use_counters=0` keeps, smallest input first, each input that reaches
#    an edge (a branch of the instrumented build) the inputs kept before it
#    do not. Edges only: without `-use_counters=0` an input is kept for
#    each edge it reaches a new number of times, which left thousands of
#    files per target.
# 2. libFuzzer's set-cover merge (`-set_cover_merge=1`, same flags) runs
#    those inputs again and writes, per input, every edge it reaches to a
#    control file.
# 3. A greedy set cover over that file picks, one at a time, the input that
#    reaches the most edges not reached yet (ties: the smaller input, then
#    the name), until every edge is reached or the cap is met.
#
# The files are named by the SHA-1 of their contents; the log
# (fuzz/logs/<target>-replay-set.log) ends with the edges kept.
#
#   bash scripts/fuzz_replay_set.sh            # every target
#   bash scripts/fuzz_replay_set.sh decode     # one target
#   FUZZ_BUILD=0 bash scripts/fuzz_replay_set.sh   # the targets as already built
#
# Needs nightly and cargo-fuzz, as scripts/fuzz.sh, and python3; builds the
# targets as it does (`cargo +nightly fuzz build -a`: release, debug
# assertions, AddressSanitizer). tests/local/fuzz_replay.rs replays the result
# (and fuzz/regressions/) on stable; run it before committing the new set.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(configuration decode round_trip differential slices chunk_decode shards)
cap="${FUZZ_REPLAY_MAX:-300}"

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
triple="$(rustc +nightly -vV | sed -n 's/^host: //p')"
mkdir -p fuzz/logs

for target in "${targets[@]}"; do
    [ "${FUZZ_BUILD:-1}" = 0 ] || (cd fuzz && cargo +nightly fuzz build -a "$target")
    inputs=()
    for dir in "fuzz/replay/$target" "fuzz/corpus/$target" "fuzz/seeds/$target"; do
        [ -d "$dir" ] && inputs+=("$dir")
    done
    [ ${#inputs[@]} -gt 0 ] || { echo "$target: no inputs" >&2; exit 1; }
    log="fuzz/logs/$target-replay-set.log"
    work="$(mktemp -d "fuzz/target/replay-$target.XXXXXX")"
    mkdir "$work/edges" "$work/cover" "$work/set"
    echo "== $target: ${inputs[*]}"
    bin="fuzz/target/$triple/release/$target"
    "$bin" -merge=1 -use_counters=0 "$work/edges" "${inputs[@]}" > "$log" 2>&1
    "$bin" -set_cover_merge=1 -use_counters=0 -merge_control_file="$work/control" \
        "$work/cover" "$work/edges" >> "$log" 2>&1
    python3 - "$work/control" "$cap" "$work/set" >> "$log" <<'PY'
import hashlib, heapq, os, shutil, sys

control, cap, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = open(control).read().split("\n")
count = int(lines[0])
files = lines[2:2 + count]
edges = {}
for line in lines[2 + count:]:
    if line.startswith("FT "):
        fields = line.split()
        edges[int(fields[1])] = set(map(int, fields[2:]))
every = set().union(*edges.values()) if edges else set()
# Lazy greedy: an input's gain only shrinks as edges are reached, so the
# top of the heap needs recomputing only when it is stale.
def key(i, gain):
    return (-gain, os.path.getsize(files[i]), files[i], i)
heap = [key(i, len(e)) for i, e in edges.items()]
heapq.heapify(heap)
reached, chosen = set(), []
while heap and len(chosen) < cap:
    gain, _, _, i = heapq.heappop(heap)
    new = len(edges[i] - reached)
    if new == 0:
        continue
    if new < -gain:
        heapq.heappush(heap, key(i, new))
        continue
    reached |= edges[i]
    chosen.append(files[i])
for path in chosen:
    data = open(path, "rb").read()
    shutil.copyfile(path, os.path.join(out, hashlib.sha1(data).hexdigest()))
print(f"replay set: {len(chosen)} of {count} inputs, {len(reached)} of {len(every)} edges")
PY
    tail -1 "$log"
    if [ -z "$(ls -A "$work/set")" ]; then
        echo "$target: nothing kept ($log)" >&2
        exit 1
    fi
    rm -rf "fuzz/replay/$target"
    mkdir -p fuzz/replay
    mv "$work/set" "fuzz/replay/$target"
    rm -rf "$work"
done
