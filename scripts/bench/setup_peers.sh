#!/usr/bin/env bash
# Create (idempotently) the virtualenv <repo>/.venv-peers that python/benchmarks/bench_peers.py
# runs in: zarr-python, zarrs-python, tensorstore and this repository's package side by side.
#
#   bash scripts/bench/setup_peers.sh                      # from any directory
#   WHEEL=path/to/zarrs_extension_codecs-*.whl bash scripts/bench/setup_peers.sh
#
# Installs from PyPI: zarr 3.4.2, tensorstore 0.1.86, zarrs 0.2.3 (zarrs-python, whose pipeline
# is zarrs.ZarrsCodecPipeline; it asks for zarr >= 3.1, so zarr 3.4.2 satisfies it), numpy,
# zstandard (the benchmark's pure Python "limit" reader), google-crc32c (to check the shard
# index's checksum) and cast-value-rs (which zarr's own cast_value codec needs). Then this
# package from an already built wheel (the script builds nothing): WHEEL if set, else the newest
# zarrs_extension_codecs-*.whl in target/python-wheels-release, else in target/python-wheels
# (build one to time with `maturin build --release` in python/). A dev-profile wheel installs,
# but the benchmark refuses to time it (it runs only with --quick then).
#
# Python: the interpreter of the repository's .venv (scripts/python/setup_venv.sh's search:
# ZARRS_PYTHON if set, else python3.12 on PATH, else pyenv's newest 3.12.x). Reinstall is
# skipped while the stamp (requirements and the wheel's hash) is unchanged.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/../.." && pwd)"
VENV="${REPO_ROOT}/.venv-peers"
STAMP="${VENV}/.peers.sha256"
REQUIREMENTS=(
    "zarr==3.4.2"
    "tensorstore==0.1.86"
    "zarrs==0.2.3"
    "numpy"
    "zstandard"
    "google-crc32c"
    # zarr's own cast_value codec (the eopf_band layout's zarr reader) needs it; the pin of
    # scripts/python/requirements.txt.
    "cast-value-rs==0.5.1"
)

export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INPUT=1

log() { printf 'setup_peers: %s\n' "$*" >&2; }
die() { printf 'setup_peers: ERROR: %s\n' "$*" >&2; exit 1; }

# The interpreter the repository's .venv was made from (scripts/python/setup_venv.sh finds a
# Python 3.12 the same way for every script; it is made first if need be).
find_python() {
    bash "${REPO_ROOT}/scripts/python/setup_venv.sh" >/dev/null </dev/null || return 1
    "${REPO_ROOT}/.venv/bin/python" -c 'import sys; print(sys._base_executable)' </dev/null
}

# Whether the interpreter runs and is Python >= 3.12 (zarr 3.4.2's floor).
usable_python() {
    "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' \
        </dev/null >/dev/null 2>&1
}

find_wheel() {
    if [[ -n "${WHEEL:-}" ]]; then
        [[ -f "${WHEEL}" ]] || die "WHEEL=${WHEEL} is not a file"
        echo "${WHEEL}"
        return 0
    fi
    local dir newest
    for dir in "${REPO_ROOT}/target/python-wheels-release" "${REPO_ROOT}/target/python-wheels"; do
        newest="$(ls -t "${dir}"/zarrs_extension_codecs-*.whl 2>/dev/null | head -n 1 || true)"
        [[ -n "${newest}" ]] && { echo "${newest}"; return 0; }
    done
    return 1
}

hash_text() {
    if command -v sha256sum >/dev/null 2>&1; then sha256sum | cut -d' ' -f1; else shasum -a 256 | cut -d' ' -f1; fi
}

install() {
    local wheel want python
    wheel="$(find_wheel)" || die "no zarrs_extension_codecs-*.whl in target/python-wheels-release \
or target/python-wheels: build one (cd python && maturin build --release --out \
../target/python-wheels-release) or set WHEEL=path"
    want="$( { printf '%s\n' "${REQUIREMENTS[@]}"; sha256sum "${wheel}" | cut -d' ' -f1; } | hash_text)"

    if ! [[ -x "${VENV}/bin/python" ]] || ! usable_python "${VENV}/bin/python" >/dev/null; then
        python="$(find_python)" || die "no Python >= 3.12: see scripts/python/setup_venv.sh's error above"
        log "creating ${VENV} with ${python}"
        rm -rf "${VENV}"
        "${python}" -m venv "${VENV}" </dev/null
    fi
    if [[ -f "${STAMP}" && "$(cat "${STAMP}")" == "${want}" ]]; then
        log "${VENV} is up to date (wheel ${wheel})"
        return 0
    fi
    rm -f "${STAMP}"
    log "installing ${REQUIREMENTS[*]} into ${VENV}"
    "${VENV}/bin/python" -m pip install --quiet "${REQUIREMENTS[@]}" </dev/null
    log "installing ${wheel}"
    # --no-deps: its dependencies (zarr, numpy) are the pins above; a mismatch fails the check.
    "${VENV}/bin/python" -m pip install --quiet --no-deps --force-reinstall "${wheel}" </dev/null
    "${VENV}/bin/python" -m pip check </dev/null || die "pip check failed (see above)"
    "${VENV}/bin/python" -c '
import zarr, tensorstore, zarrs, numpy, zstandard, google_crc32c, cast_value_rs, zarrs_extension_codecs
assert zarr.__version__ == "3.4.2", zarr.__version__
from importlib.metadata import version
print("zarr", zarr.__version__, "tensorstore", version("tensorstore"), "zarrs", version("zarrs"),
      "zarrs_extension_codecs", zarrs_extension_codecs.__version__,
      "debug build" if zarrs_extension_codecs._native._debug_build else "release build")
' </dev/null || die "installed packages do not import"
    echo "${want}" >"${STAMP}"
    log "done"
}

if command -v flock >/dev/null 2>&1; then
    exec 9>"${VENV}.lock"
    flock 9
fi
install
