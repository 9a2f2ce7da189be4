#!/usr/bin/env bash
# Runs the library's unit tests under Miri (nightly), one test per process
# with a time limit each, and prints a line per test: ok / ignored / FAIL /
# TIMEOUT and the seconds it took. Tests shrink their sweeps under
# `cfg(miri)`; the `madvise` tests are ignored there (the advice is compiled
# out under Miri).
#
#   bash scripts/miri.sh                     # every unit test
#   bash scripts/miri.sh kernels::cast       # tests whose path contains this
#   LIMIT=300 bash scripts/miri.sh codec::   # a longer limit per test
#
# Tree Borrows, because rayon's work-stealing deque (crossbeam-epoch) fails
# Stacked Borrows' retagging, a known incompatibility outside this crate;
# permissive provenance for the integer-to-pointer casts in std's thread
# code; leaks ignored because rayon's pool threads outlive `main`; isolation
# off so that `available_parallelism` answers. Not part of scripts/test.sh
# (needs nightly and takes hours on 2 cores): docs/reliability.md lists the
# last run.
set -uo pipefail
cd "$(dirname "$0")/.."

limit="${LIMIT:-300}"
filter="${1:-}"
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation -Zmiri-tree-borrows -Zmiri-permissive-provenance -Zmiri-ignore-leaks}"

rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^miri' ||
    rustup component add miri --toolchain nightly

tests=$(cargo +nightly miri test --quiet --lib -- --list "$filter" 2>/dev/null |
    sed -n 's/: test$//p')
[ -n "$tests" ] || { echo "no unit test matches '$filter'" >&2; exit 1; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
for t in $tests; do
    start=$(date +%s)
    timeout "$limit" cargo +nightly miri test --quiet --lib -- --exact "$t" >"$log" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    if [ $rc -eq 124 ]; then
        result=TIMEOUT
        failed=1
    elif grep -q "1 passed" "$log"; then
        result=ok
    elif grep -q "1 ignored" "$log"; then
        result=ignored
    else
        result=FAIL
        failed=1
        sed 's/^/    /' "$log" | tail -40
    fi
    echo "$result ${took}s $t"
done
exit $failed
