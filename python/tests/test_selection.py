"""How zarr finds these classes: entry points, configuration keys,
environment variables, `enable()`; and no warnings on the way."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points

import numpy as np
import pytest
import zarr
from zarr.registry import get_codec_class
from zarr_classes import ZarrCastValue, ZarrScaleOffset

import zarrs_extension_codecs as zec

SCRIPT_HEAD = """
import warnings
warnings.simplefilter("error")
import numpy as np
import zarr
"""


def run_python(code: str, env: dict[str, str] | None = None) -> str:
    """Run `code` in a fresh interpreter with every warning an error."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ZARR_")}
    environment.update(env or {})
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(SCRIPT_HEAD + code)],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


WRITE_AND_READ = """
filters = [{"name": "scale_offset", "configuration": {"offset": 1, "scale": 10}},
           {"name": "cast_value", "configuration": {"data_type": "uint16"}}]
path = PATH
arr = zarr.create_array(path, shape=(4,), chunks=(2,), dtype="float64", filters=filters,
                        compressors=None, fill_value=1.0, overwrite=True)
arr[:] = np.array([1.0, 1.5, 2.0, 7.25])
again = zarr.open_array(path)
print(again[:].tolist())
print(type(again.metadata.codecs[0]).__module__, type(again.metadata.codecs[1]).__module__)
"""


def write_and_read(path: str) -> str:
    return WRITE_AND_READ.replace("PATH", repr(path))


def test_entry_points_name_the_classes() -> None:
    found = {e.name: e.value for e in entry_points(group="zarr.codecs")}
    assert found["scale_offset"] == "zarrs_extension_codecs:ScaleOffset"
    assert found["cast_value"] == "zarrs_extension_codecs:CastValue"
    for name in ("scale_offset", "cast_value"):
        (ep,) = [e for e in entry_points(group="zarr.codecs") if e.name == name]
        assert ep.load() is getattr(zec, ep.value.split(":")[1])


def test_installed_but_not_selected_keeps_zarrs_classes_without_warnings(tmp_path) -> None:
    """The package is installed (its entry points are seen by zarr) but not
    imported or selected: zarr opens arrays with its own classes and does
    not warn (warnings are errors in the child)."""
    out = run_python(write_and_read(str(tmp_path / "a.zarr")))
    assert out.splitlines() == [
        "[1.0, 1.5, 2.0, 7.2]",  # (7.25 - 1) * 10 = 62.5 -> 62 (ties to even)
        "zarr.codecs.scale_offset zarr.codecs.cast_value",
    ]


def test_environment_variables_select_them(tmp_path) -> None:
    env = {
        "ZARR_CODECS__SCALE_OFFSET": "zarrs_extension_codecs.ScaleOffset",
        "ZARR_CODECS__CAST_VALUE": "zarrs_extension_codecs.CastValue",
    }
    out = run_python(write_and_read(str(tmp_path / "a.zarr")), env)
    assert out.splitlines() == [
        "[1.0, 1.5, 2.0, 7.2]",  # (7.25 - 1) * 10 = 62.5 -> 62 (ties to even)
        "zarrs_extension_codecs zarrs_extension_codecs",
    ]


def test_config_one_line_selects_them(tmp_path) -> None:
    code = (
        'zarr.config.set({"codecs.scale_offset": "zarrs_extension_codecs.ScaleOffset", '
        '"codecs.cast_value": "zarrs_extension_codecs.CastValue"})\n'
    ) + write_and_read(str(tmp_path / "a.zarr"))
    assert run_python(code).splitlines()[1] == "zarrs_extension_codecs zarrs_extension_codecs"


def test_enable_after_import_then_reset(tmp_path) -> None:
    code = (
        "import zarrs_extension_codecs\n"
        "with zarrs_extension_codecs.enable():\n"
        "    pass\n"
        "zarrs_extension_codecs.enable()\n"
        + write_and_read(str(tmp_path / "a.zarr"))
        + "zarr.config.reset()\n"
        "print(type(zarr.open_array(path).metadata.codecs[0]).__module__)\n"
    )
    assert run_python(code).splitlines()[1:] == [
        "zarrs_extension_codecs zarrs_extension_codecs",
        "zarr.codecs.scale_offset",
    ]


def test_enable_and_disable_in_process() -> None:
    with zec.enable():
        assert get_codec_class("scale_offset") is zec.ScaleOffset
        assert get_codec_class("cast_value") is zec.CastValue
        with zec.disable():
            assert get_codec_class("scale_offset") is ZarrScaleOffset
            assert get_codec_class("cast_value") is ZarrCastValue
        assert get_codec_class("scale_offset") is zec.ScaleOffset


def test_classes_are_drop_in_subclasses() -> None:
    assert issubclass(zec.ScaleOffset, zarr.codecs.ScaleOffset)
    assert issubclass(zec.CastValue, zarr.codecs.CastValue)
    assert zec.ScaleOffset(offset=1, scale=0.5).to_dict() == {
        "name": "scale_offset",
        "configuration": {"offset": 1, "scale": 0.5},
    }
    codec = zec.CastValue.from_dict(
        {"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": "clamp"}}
    )
    assert isinstance(codec, zec.CastValue)
    assert codec.to_dict()["configuration"] == {"data_type": "uint8", "out_of_range": "clamp"}
    with pytest.raises(TypeError, match="offset must be a number or string"):
        zec.ScaleOffset(offset=[1])


def test_pickles_by_name() -> None:
    import pickle

    codec = zec.CastValue(data_type="uint16", scalar_map={"encode": [("NaN", 0)]})
    assert pickle.loads(pickle.dumps(codec)) == codec
    assert pickle.loads(pickle.dumps(zec.ScaleOffset(offset=2))) == zec.ScaleOffset(offset=2)


def test_arrays_created_with_the_classes_read_back() -> None:
    arr = zarr.create_array(
        store={},
        shape=(6,),
        chunks=(4,),
        dtype="float32",
        filters=[zec.ScaleOffset(offset=1, scale=4), zec.CastValue(data_type="int8")],
        compressors=None,
        fill_value=1,
    )
    data = np.array([1, 1.25, 2, -3, 0.5, 1], dtype="float32")
    arr[:] = data
    np.testing.assert_array_equal(arr[:], data)


@pytest.mark.parametrize(
    "pipeline",
    [
        "zarr.core.codec_pipeline.BatchedCodecPipeline",
        "zarr.core.codec_pipeline.FusedCodecPipeline",
    ],
)
# float64 chunks of 64 B and of 1 MiB.
@pytest.mark.parametrize("chunk", [8, 1 << 17])
def test_where_zarrs_pipelines_run_the_kernels(pipeline: str, chunk: int, monkeypatch) -> None:
    """Both of zarr's pipelines reach these classes. The default one runs
    their kernels on zarr's event-loop thread (``zarr_io``), as zarr's own
    classes run their arithmetic; the fused one on its own threads."""
    threads: list[str] = []
    for cls in (zec.ScaleOffset, zec.CastValue):
        original = cls._decode_sync

        def probe(self, chunk_array, chunk_spec, _original=original):
            import threading

            threads.append(threading.current_thread().name)
            return _original(self, chunk_array, chunk_spec)

        monkeypatch.setattr(cls, "_decode_sync", probe)
    with zarr.config.set({"codec_pipeline.path": pipeline}), zec.enable():
        arr = zarr.create_array(
            store={},
            shape=(8 * chunk,),
            chunks=(chunk,),
            dtype="float64",
            filters=[
                {"name": "scale_offset", "configuration": {"scale": 4}},
                {"name": "cast_value", "configuration": {"data_type": "int16"}},
            ],
            compressors=None,
        )
        data = np.arange(8 * chunk) % 4096 / 4
        arr[:] = data
        np.testing.assert_array_equal(arr[:], data)
    assert len(threads) == 2 * 8
    if "Batched" in pipeline:
        assert set(threads) == {"zarr_io"}
    else:
        assert "zarr_io" not in threads
