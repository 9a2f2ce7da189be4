#!/usr/bin/env bash
# The Python package's checks: builds python/ once (maturin, dev profile) into an abi3 wheel,
# installs that wheel into the repository's .venv (Python 3.12) and .venv-3.13, then clippy,
# ruff (lint and format) and the pytest suites, with the small hypothesis profile unless
# HYPOTHESIS_PROFILE says otherwise (`HYPOTHESIS_PROFILE=zec-local` for the long run).
#
#   bash scripts/python/test_package.sh            # from any directory
#
# What runs where: on 3.12, the package's tests and zarr-python's own tests
# (python/tests/zarr_upstream: its scale_offset and cast_value tests, then its array,
# codec, sharding and indexing tests with the pipeline selected); on 3.13, the same package
# tests and zarr's scale_offset and cast_value tests again (the wheel is the same abi3
# build; the interpreter, numpy and zarr's wheels are not).
#
# Needs Rust, and Python 3.12 and 3.13 for scripts/python/setup_venv.sh (run first here).
set -euo pipefail
cd "$(dirname "$0")/../.."

bash scripts/python/setup_venv.sh
bash scripts/python/setup_venv.sh 3.13
export PATH="${PWD}/.venv/bin:${PATH}"
# One wheel for both interpreters (pyo3's abi3: the stable ABI from 3.11 on). The dev profile
# (about a minute on two cores, against four or more for release) is enough to test with; a
# wheel to ship or benchmark comes from `maturin build --release` (in python/). It reuses the
# workspace's target/ directory.
WHEELS="${PWD}/target/python-wheels"
rm -rf "${WHEELS}"
(cd python && ../.venv/bin/maturin build --quiet --profile dev --out "${WHEELS}")
for venv in .venv .venv-3.13; do
    "${venv}/bin/python" -m pip install --quiet --no-deps --force-reinstall "${WHEELS}"/*.whl
done
cargo clippy -p zarrs_extension_codecs_python --all-targets -- -D warnings
# The binding's own unit tests (its directory writes, its codec-check cache): the
# workspace's default member is the crate alone, so `cargo test` at the top skips them.
cargo test -p zarrs_extension_codecs_python --lib
.venv/bin/ruff check python
.venv/bin/ruff format --check python
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-zec-ci}"
for venv in .venv .venv-3.13; do
    "${venv}/bin/python" -c 'import platform; print("Python", platform.python_version())'
    # zarr-python's own tests run in a process of their own: their conftest rebinds zarr's
    # module attributes to this package's classes for the whole session, which would leak
    # into the other tests (and into what dask pickles).
    "${venv}/bin/python" -m pytest -q python/tests --ignore=python/tests/zarr_upstream
    "${venv}/bin/python" -m pytest -q \
        python/tests/zarr_upstream/tests/test_codecs/test_scale_offset.py \
        python/tests/zarr_upstream/tests/test_codecs/test_cast_value.py
done
# zarr's array, codec, sharding and indexing tests with zarrs_extension_codecs.CodecPipeline
# selected (pytest-asyncio runs their async fixtures, as in zarr's own set-up), on 3.12
# (the package's own pipeline tests above run on both). Not here: zarr's pipeline suite
# (its classes name zarr's two pipelines; python/tests/test_pipeline_suite.py runs it
# against this one). Deselected (python/README.md): a test that monkeypatches zarr's
# Python shard index, which the pipeline's Rust reads of a LocalStore or MemoryStore never
# consult, two that match zarr's wording of a scale_offset decode error and three its
# wording of a scale_offset encode error (the pipeline raises zarrs' ValueError, naming
# the chunk, instead of reading or writing the chunk again with zarr); --deselect takes
# node ids relative to pytest's rootdir (python/).
ZARR_CODEC_PIPELINE__PATH=zarrs_extension_codecs.CodecPipeline \
    .venv/bin/python -m pytest -q python/tests/zarr_upstream \
    -o asyncio_mode=auto -o asyncio_default_fixture_loop_scope=function \
    --ignore=python/tests/zarr_upstream/tests/test_codec_pipeline_suite.py \
    --deselect "tests/zarr_upstream/tests/test_codecs/test_sharding.py::test_sharding_partial_shard_read__index_chunk_slice_fails[local-start]" \
    --deselect "tests/zarr_upstream/tests/test_codecs/test_sharding.py::test_sharding_partial_shard_read__index_chunk_slice_fails[local-end]" \
    --deselect "tests/zarr_upstream/tests/test_codecs/test_sharding.py::test_sharding_partial_shard_read__index_chunk_slice_fails[memory-start]" \
    --deselect "tests/zarr_upstream/tests/test_codecs/test_sharding.py::test_sharding_partial_shard_read__index_chunk_slice_fails[memory-end]" \
    --deselect "tests/zarr_upstream/tests/test_codecs/test_scale_offset.py::test_integer_decode_rejects_non_exact_division" \
    --deselect "tests/zarr_upstream/tests/test_codecs/test_scale_offset.py::test_decode_rejects_integer_overflow_on_offset_add" \
    --deselect "tests/zarr_upstream/tests/test_codecs/test_scale_offset.py::test_uint64_encode_rejects_underflow" \
    --deselect "tests/zarr_upstream/tests/test_codecs/test_scale_offset.py::test_encode_rejects_signed_integer_overflow" \
    --deselect "tests/zarr_upstream/tests/test_codecs/test_scale_offset.py::test_encode_rejects_unsigned_integer_underflow"
