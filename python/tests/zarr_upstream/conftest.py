"""Run zarr-python 3.4.2's own tests of `scale_offset` and `cast_value`
(``tests/test_codecs/test_scale_offset.py`` and ``test_cast_value.py``, from
its source distribution, unmodified; licence in ``LICENSE.txt``) against
this package's classes.

The test files import ``ScaleOffset`` / ``CastValue`` from
``zarr.codecs.scale_offset`` / ``zarr.codecs.cast_value`` and build arrays
from instances, so zarr's configuration alone would not reach them: this
puts the subclasses in those two module attributes before the test modules
are imported, and selects them in zarr's configuration for arrays opened
by name. zarr's registrations and its ``zarr.codecs`` package are left
as they are; the other tests reach zarr's classes through
``python/tests/zarr_classes.py`` (the subclasses' bases).
"""

from __future__ import annotations

import zarr.codecs.cast_value
import zarr.codecs.scale_offset

import zarrs_extension_codecs

zarr.codecs.scale_offset.ScaleOffset = zarrs_extension_codecs.ScaleOffset
zarr.codecs.cast_value.CastValue = zarrs_extension_codecs.CastValue
zarr.config.update_defaults(
    {
        "codecs": {
            "scale_offset": "zarrs_extension_codecs.ScaleOffset",
            "cast_value": "zarrs_extension_codecs.CastValue",
        }
    }
)

# zarr's conftest loads the hypothesis profile named by HYPOTHESIS_PROFILE
# when it is imported; ../conftest.py has set that to one of this package's
# profiles (zec-ci, zec-local), which exist only in this process. Import it
# now, then take the variable out of the environment: a child process that
# `spawn` or `forkserver` starts (zarr's test_multiprocessing) imports zarr's
# conftest again to unpickle its task, and would otherwise fail there with
# "Profile 'zec-ci' is not registered", leaving its pool waiting forever.
import os  # noqa: E402

import tests.conftest  # noqa: E402, F401

os.environ.pop("HYPOTHESIS_PROFILE", None)
