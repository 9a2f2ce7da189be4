#!/usr/bin/env bash
# The test command: sets up the Python environment (zarr-python 3.4.2 from
# PyPI, Python 3.12 from pyenv) that the fixture round-trip test needs, then
# checks formatting and lints and runs every test. Fails loudly if anything
# is missing; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
# No incremental compilation: a fresh clone (CI) never reuses it, and its
# cache was a third of target/ (several GB) on a disk CI shares.
export CARGO_INCREMENTAL=0

bash scripts/python/setup_venv.sh
# fixtures/zarr-python must be exactly what its generator writes (a few seconds).
.venv/bin/python scripts/python/make_fixtures.py --check
# The checker that the reverse-direction test relies on must itself catch mismatches.
.venv/bin/python scripts/python/selftest_check_zarrs_written.py
# The scripts' Python (fixtures, benchmarks, test servers); python/ is checked
# with the package, by test_package.sh.
.venv/bin/ruff check scripts
.venv/bin/ruff format --check scripts
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo clippy --all-targets --features async,remote,zstd -- -D warnings
# Every test with the `async`, `remote` and `zstd` features on (the sync tests
# run unchanged; clippy above checks the build without them; `remote` turns on
# `async`, so its clippy line covers both; the library's own tests run without
# them too, where zstd chunks go through zarrs' codec): tests/local/async_stores.rs reads through a
# real async store (object_store's local file system), tests/remote/remote_stores.rs
# through object_store's HTTP and S3 stores from servers it starts
# (Starlette under uvicorn, moto; from .venv), and tests/local/fuzz_replay.rs
# replays the committed fuzz inputs (fuzz/replay/ and fuzz/regressions/).
# No test may reach the instance metadata service's real address
# (169.254.169.254): the tests that probe it point AWS_METADATA_ENDPOINT at
# loopback in child processes with an environment of their own; this keeps
# any other `s3://` store opened without credentials from asking it.
export AWS_EC2_METADATA_DISABLED=true
cargo test --lib
cargo test --all-targets --features async,remote,zstd
cargo test --doc --features async,remote,zstd
# The package builds from what it ships, with no warnings (needs a clean
# work tree: run it on a fresh clone, as CI does).
cargo publish --dry-run
# The Python package (python/): one abi3 wheel into .venv (CPython 3.12) and
# .venv-3.13 (CPython 3.13, from pyenv), ruff, clippy, pytest on both.
bash scripts/python/test_package.sh
