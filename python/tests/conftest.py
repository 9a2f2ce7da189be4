"""Shared test set-up: hypothesis profiles and coroutine tests.

Profiles (``HYPOTHESIS_PROFILE``): ``zec-ci`` (the default; small, fixed
seed, what ``scripts/python/test_package.sh`` runs) and ``zec-local``
(thousands of examples per property, for a run before a release).
zarr-python's own conftest (``zarr_upstream/tests/conftest.py``) loads the
profile named by ``HYPOTHESIS_PROFILE`` too, so it is set here first.
"""

from __future__ import annotations

import asyncio
import inspect
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "zec-ci",
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "zec-local",
    max_examples=3000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
os.environ.setdefault("HYPOTHESIS_PROFILE", "zec-ci")
settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run ``async def`` tests (zarr's own) in a fresh event loop, as
    pytest-asyncio's auto mode would."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**arguments))
    return True


@pytest.fixture(autouse=True)
def _no_remote_store_from_another_test() -> None:
    """Remote stores are kept for arrays opened later (`shared_store`):
    each test starts with none, so that it counts its own requests."""
    from zarrs_extension_codecs import clear_remote_stores

    clear_remote_stores()
