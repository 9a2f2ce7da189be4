#!/usr/bin/env bash
# Create (idempotently) the Python virtualenv used by scripts/python/*.py at <repo>/.venv,
# or one for another Python minor version at <repo>/.venv-<version>.
#
#   bash scripts/python/setup_venv.sh        # from any directory: .venv (Python 3.12)
#   bash scripts/python/setup_venv.sh 3.13   # .venv-3.13, to test the package on 3.13 too
#
# Needs CPython >= 3.12 (zarr-python 3.4.2). For .venv, looked for in order:
#   1. python3.12 on PATH
#   2. pyenv's 3.12.x installs: $(pyenv root)/versions/3.12.*/bin/python3
#   3. python3 on PATH, if it is >= 3.12
# For another version X.Y only python X.Y itself is taken (pythonX.Y on PATH, pyenv's X.Y.*).
# If none is found the script fails (exit 1) with an explanation; it never skips silently.
# The environment variable ZARRS_PYTHON may name an interpreter to use instead of the search
# (for .venv only).
#
# Reinstall is skipped when .venv/.requirements.sha256 matches the hash of requirements.txt.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/../.." && pwd)"
MINOR="${1:-}"
case "${MINOR}" in
    "" | 3.12) MINOR=""; VENV="${REPO_ROOT}/.venv" ;;
    3.[0-9]*) VENV="${REPO_ROOT}/.venv-${MINOR}" ;;
    *) printf 'setup_venv: ERROR: expected a Python version such as 3.13, got %s\n' "$1" >&2; exit 1 ;;
esac
REQUIREMENTS="${SCRIPT_DIR}/requirements.txt"
STAMP="${VENV}/.requirements.sha256"

export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INPUT=1

log() { printf 'setup_venv: %s\n' "$*" >&2; }
die() { printf 'setup_venv: ERROR: %s\n' "$*" >&2; exit 1; }

[[ -f "${REQUIREMENTS}" ]] || die "missing ${REQUIREMENTS}"

hash_file() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

# Prints the interpreter's path if it runs and is >= 3.12 (or exactly ${MINOR} when set),
# else fails quietly.
usable_python() {
    local candidate="$1"
    [[ -n "${candidate}" ]] || return 1
    "${candidate}" -c 'import sys, venv
want = sys.argv[1]
ok = (f"{sys.version_info[0]}.{sys.version_info[1]}" == want) if want else sys.version_info >= (3, 12)
sys.exit(0 if ok else 1)' "${MINOR}" </dev/null >/dev/null 2>&1 || return 1
    "${candidate}" -c 'import sys; print(sys.executable)' </dev/null 2>/dev/null
}

find_minor() {
    local found dir pyenv_root=""
    if command -v "python${MINOR}" >/dev/null 2>&1; then
        found="$(usable_python "python${MINOR}")" && { echo "${found}"; return 0; }
    fi
    if command -v pyenv >/dev/null 2>&1; then
        pyenv_root="$(pyenv root 2>/dev/null || true)"
    fi
    [[ -n "${pyenv_root}" ]] || pyenv_root="${PYENV_ROOT:-${HOME:-/root}/.pyenv}"
    if [[ -d "${pyenv_root}/versions" ]]; then
        while IFS= read -r dir; do
            found="$(usable_python "${dir}/bin/python3")" && { echo "${found}"; return 0; }
        done < <(find "${pyenv_root}/versions" -mindepth 1 -maxdepth 1 -name "${MINOR}.*" 2>/dev/null | sort -rV)
    fi
    return 1
}

find_python() {
    local found
    if [[ -n "${MINOR}" ]]; then
        find_minor
        return
    fi
    if [[ -n "${ZARRS_PYTHON:-}" ]]; then
        found="$(usable_python "${ZARRS_PYTHON}")" && { echo "${found}"; return 0; }
        die "ZARRS_PYTHON=${ZARRS_PYTHON} is not a working Python >= 3.12"
    fi
    # 1. python3.12 on PATH (a pyenv shim fails here unless 3.12 is selected; that is fine).
    if command -v python3.12 >/dev/null 2>&1; then
        found="$(usable_python python3.12)" && { echo "${found}"; return 0; }
    fi
    # 2. pyenv's 3.12.x installs, newest first.
    local pyenv_root=""
    if command -v pyenv >/dev/null 2>&1; then
        pyenv_root="$(pyenv root 2>/dev/null || true)"
    fi
    [[ -n "${pyenv_root}" ]] || pyenv_root="${PYENV_ROOT:-${HOME:-/root}/.pyenv}"
    local dir
    if [[ -d "${pyenv_root}/versions" ]]; then
        while IFS= read -r dir; do
            found="$(usable_python "${dir}/bin/python3")" && { echo "${found}"; return 0; }
        done < <(find "${pyenv_root}/versions" -mindepth 1 -maxdepth 1 -name '3.12.*' 2>/dev/null | sort -rV)
    fi
    # 3. python3, if it is new enough.
    if command -v python3 >/dev/null 2>&1; then
        found="$(usable_python python3)" && { echo "${found}"; return 0; }
    fi
    return 1
}

venv_ok() {
    [[ -x "${VENV}/bin/python" ]] && usable_python "${VENV}/bin/python" >/dev/null
}

install() {
    if ! venv_ok; then
        local python
        if [[ -n "${MINOR}" ]]; then
            python="$(find_python)" || die "no Python ${MINOR} found (tried: python${MINOR} on \
PATH, pyenv versions ${MINOR}.*). Install one (e.g. 'pyenv install ${MINOR}'), then re-run."
        fi
        [[ -n "${python:-}" ]] || python="$(find_python)" || die "no Python >= 3.12 found (tried: python3.12 on PATH, \
pyenv versions 3.12.*, python3 on PATH). zarr-python 3.4.2 needs Python >= 3.12. Install one \
(e.g. 'pyenv install 3.12') or point ZARRS_PYTHON at one, then re-run."
        log "creating ${VENV} with ${python} ($("${python}" -c 'import platform; print(platform.python_version())'))"
        rm -rf "${VENV}"
        "${python}" -m venv "${VENV}" </dev/null
    fi

    local want
    want="$(hash_file "${REQUIREMENTS}")"
    if [[ -f "${STAMP}" && "$(cat "${STAMP}")" == "${want}" ]]; then
        log "${VENV} is up to date"
        return 0
    fi

    log "installing ${REQUIREMENTS} into ${VENV}"
    rm -f "${STAMP}"
    "${VENV}/bin/python" -m pip install --quiet --no-input -r "${REQUIREMENTS}" </dev/null
    # Import check so a half-installed venv is never stamped.
    "${VENV}/bin/python" -c 'import zarr, numpy, cast_value_rs; assert zarr.__version__ == "3.4.2", zarr.__version__' </dev/null \
        || die "installed packages do not import"
    echo "${want}" > "${STAMP}"
    log "done"
}

# Serialise concurrent runs (e.g. several tests calling this at once) when flock exists.
if command -v flock >/dev/null 2>&1; then
    mkdir -p "${REPO_ROOT}"
    exec 9>"${VENV}.lock"
    flock 9
fi
install
