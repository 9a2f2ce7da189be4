"""zarr-python 3.4.2's shared codec-pipeline suite (``CodecPipelineTests``
in ``zarr_upstream/tests/test_codec_pipeline_suite.py``, unmodified), which
zarr runs against each of its own pipelines, run against `CodecPipeline`:
the same array semantics whichever pipeline is configured, on a store with
zarr's sync surface and on one without."""

from __future__ import annotations

from tests.test_codec_pipeline_suite import CodecPipelineTests

import zarrs_extension_codecs  # noqa: F401 (registers the pipeline with zarr)


class TestZarrsExtensionCodecsPipeline(CodecPipelineTests):
    pipeline_path = "zarrs_extension_codecs.CodecPipeline"
