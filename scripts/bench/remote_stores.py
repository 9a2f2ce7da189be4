"""Remote reads: zarr-python's side of `scripts/bench/remote.sh`.

    python remote_stores.py write DIR          # write DIR/sharded.zarr and DIR/small.zarr
    python remote_stores.py bench URL OUT      # time zarr-python reading URL (JSON lines to OUT)
    python remote_stores.py report IN...       # a markdown table from the JSON lines

The store: 8192 x 4096 float64 (256 MiB decoded), stored as uint16 through
scale_offset + cast_value, zstd, in shards of 2048 x 2048 with inner chunks
of 256 x 256 (the layout of a Sentinel-2 L2A band: 5.5 MiB a shard);
small.zarr is the same in shards of 512 x 512 (about 350 KiB), where
reading a shard whole with its index (read-ahead) costs less than a round
trip. zarr-python 3.4.2 reads
it over HTTP with obstore (zarr.storage.ObjectStore) and with fsspec
(aiohttp), in its default configuration, and with obstore and
zarrs_extension_codecs.CodecPipeline selected (which reads the store through
the crate's remote layer); requests and bytes are the server's counts
(GET /__stats of scripts/servers/serve_http.py).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import urllib.request
from pathlib import Path

import bench_stores
import numpy as np
import zarr
from zarr.codecs import BytesCodec, ShardingCodec, ZstdCodec

SHAPE = (8192, 4096)
SHARDS = (2048, 2048)
SMALL_SHARDS = (512, 512)
INNER = (256, 256)
WINDOW = 256
N_WINDOWS = 32


def chain():
    return bench_stores.chain(offset=-100, scale=10, data_type="uint16")


def values() -> np.ndarray:
    """Reflectance-like: a smooth field plus noise, quantised to 0.1."""
    rng = np.random.default_rng(20261125)
    y, x = np.mgrid[0 : SHAPE[0], 0 : SHAPE[1]].astype(np.float32)
    field = 2000 + 1500 * np.sin(y / 700) * np.cos(x / 500)
    q = np.clip(field + rng.normal(0, 40, SHAPE), 1, 65535).astype(np.uint16)
    out = q.astype(np.float64) / 10 - 100  # exactly what decoding q gives
    out[rng.random(SHAPE) < 0.01] = np.nan
    return out


def write(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    data = values()
    for name, shards in (("sharded.zarr", SHARDS), ("small.zarr", SMALL_SHARDS)):
        bench_stores.write_checked(
            root / name,
            data,
            chunks=shards,
            serializer=ShardingCodec(
                chunk_shape=INNER, codecs=[*chain(), BytesCodec(), ZstdCodec(level=3)]
            ),
        )
        size = sum(p.stat().st_size for p in (root / name).rglob("*") if p.is_file())
        print(f"wrote {root}/{name} ({size / 2**20:.1f} MiB) with zarr {zarr.__version__}")


def window_offsets(aligned: bool) -> list[tuple[int, int]]:
    return bench_stores.window_offsets(SHAPE, WINDOW, N_WINDOWS, aligned)


def server_of(url: str) -> str:
    """The server's root URL of a store's `url`."""
    return "/".join(url.split("/")[:3])


def server_counts(server: str) -> tuple[int, int]:
    with urllib.request.urlopen(f"{server}/__stats") as r:
        stats = json.load(r)
    urllib.request.urlopen(f"{server}/__reset").read()
    return stats["requests"], stats["bytes"]


def open_array(url: str, how: str):
    if how == "obstore":
        from obstore.store import HTTPStore

        http = HTTPStore.from_url(url, client_options={"allow_http": True})
        store = zarr.storage.ObjectStore(http, read_only=True)
        return zarr.open_array(store, mode="r")
    return zarr.open_array(url, mode="r")  # fsspec's HTTPFileSystem


PIPELINE = {"codec_pipeline.path": "zarrs_extension_codecs.CodecPipeline"}


def pipeline_arrays(url: str, n: int, read_ahead: int | None = None) -> list:
    """`n` arrays read through `CodecPipeline`, each with a remote store of
    its own (none kept for arrays opened later: `remote_stores_kept` 0; no
    shard index kept yet), opened before any timing: the pipeline opens its
    Rust array at the first read, which `native.array` does here (no
    request). `read_ahead`: the pipeline's `remote_read_ahead_bytes`
    (`None`: its default, 1 MiB)."""
    import zarrs_extension_codecs  # noqa: F401 (registers the pipeline)

    arrays = []
    config = {**PIPELINE, "codec_pipeline.remote_stores_kept": 0}
    if read_ahead is not None:
        config["codec_pipeline.remote_read_ahead_bytes"] = read_ahead
    for _ in range(n):
        with zarr.config.set(config):
            arr = open_array(url, "obstore")
        native = arr._async_array.codec_pipeline.native
        assert native is not None and native.remote is not None, "not read by the remote layer"
        native.array("")
        arrays.append(arr)
    return arrays


def time_windows(read, offsets: list[tuple[int, int]]) -> list[float]:
    """Seconds of each window at `offsets`, the `i`-th read from `read(i)`."""
    times = []
    for i, (y, x) in enumerate(offsets):
        t = time.perf_counter()
        window = read(i)[y : y + WINDOW, x : x + WINDOW]
        times.append(time.perf_counter() - t)
        assert window.shape == (WINDOW, WINDOW)
    return times


def time_whole(arr, reps: int, reference: np.ndarray) -> list[float]:
    """Seconds of `reps` whole reads of `arr`, after one (warm: connections,
    pools) checked against `reference`."""
    whole = arr[...]
    np.testing.assert_array_equal(whole, reference)
    del whole
    return bench_stores.timed_whole_reads(arr, reps)


def counted(side: str, case: str, times: list[float], server: str, reads: int) -> dict:
    """A result line: the median of `times`, and the server's counts since
    they were last reset (which resets them), per read."""
    requests, nbytes = server_counts(server)
    return {
        "side": side,
        "case": case,
        "seconds": statistics.median(times),
        "requests": requests / reads,
        "bytes": nbytes / reads,
    }


CASES = (("window aligned", True), ("window unaligned", False))


def bench_pipeline(url: str, reps: int, reference: np.ndarray) -> list[dict]:
    """zarr-python with obstore and `CodecPipeline`: whole reads, first
    windows of a shard (a fresh array each, so no index is kept; default
    options and a read-ahead of 8 MiB), and windows of a shard seen before (every window
    read once, untimed)."""
    server = server_of(url)
    side = "zarr-python obstore + CodecPipeline"
    (arr,) = pipeline_arrays(url, 1)
    server_counts(server)
    times = time_whole(arr, reps, reference)
    # The warm read is counted too: every read asks for the same.
    lines = [counted(side, "whole", times, server, reps + 1)]
    for case, aligned in CASES:
        offsets = window_offsets(aligned)
        # Each a store of its own: its first request also connects (on
        # 127.0.0.1, well under a millisecond), which zarr-python's warm
        # store does not pay. Default options (a read-ahead of 1 MiB), and
        # a read-ahead larger than a shard of either store: the shard whole
        # with its index, in one request.
        for kind, read_ahead in (("", None), ("read-ahead 8 MiB, ", 8 << 20)):
            fresh = pipeline_arrays(url, len(offsets), read_ahead=read_ahead)
            server_counts(server)
            first = time_windows(lambda i, fresh=fresh: fresh[i], offsets)
            lines.append(
                counted(f"{side}, {kind}first window of a shard", case, first, server, len(offsets))
            )
        time_windows(lambda i: arr, offsets)  # warm: every shard's index kept
        server_counts(server)
        kept = time_windows(lambda i: arr, offsets)
        lines.append(counted(f"{side}, shard seen before", case, kept, server, len(offsets)))
    return lines


def bench_reopened(url: str, how: str) -> list[dict]:
    """A tile server's requests: the array opened (its `zarr.json` read)
    and one window read, timed together, for each window; after a warm-up
    pass over the same windows, as a server that has run a while. With
    `how` "pipeline" (obstore and `CodecPipeline`, default options) the
    store of the warm-up pass is kept and found again by every open, with
    the indexes it read; zarr-python keeps nothing across opens."""
    server = server_of(url)
    config = PIPELINE if how == "pipeline" else {}
    side = "zarr-python obstore" + (" + CodecPipeline" if how == "pipeline" else "")

    def opened(i: int):
        with zarr.config.set(config):
            arr = open_array(url, "obstore")
        native = getattr(arr._async_array.codec_pipeline, "native", None)
        assert (how == "pipeline") == (native is not None and native.remote is not None)
        return arr

    lines = []
    for case, aligned in CASES:
        offsets = window_offsets(aligned)
        time_windows(opened, offsets)
        server_counts(server)
        times = time_windows(opened, offsets)
        lines.append(counted(side, f"{case}, array opened for it", times, server, len(offsets)))
    return lines


def bench(url: str, out: Path, reps: int) -> None:
    server = server_of(url)
    lines = []
    reference = None
    for how in ("obstore", "fsspec"):
        side = f"zarr-python {how}"
        arr = open_array(url, how)
        if reference is None:
            reference = arr[...]
        server_counts(server)
        times = time_whole(arr, reps, reference)
        lines.append(counted(side, "whole", times, server, reps + 1))
        for case, aligned in CASES:
            offsets = window_offsets(aligned)
            server_counts(server)
            times = time_windows(lambda i, arr=arr: arr, offsets)
            lines.append(counted(side, case, times, server, len(offsets)))
        for line in lines[-3:]:
            print(json.dumps(line), file=sys.stderr)
    assert reference is not None
    lines += bench_pipeline(url, reps, reference)
    for how in ("obstore", "pipeline"):
        lines += bench_reopened(url, how)
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))


def report(paths: list[Path]) -> None:
    rows = []
    for path in paths:
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]
    best_peer = {}
    for r in rows:
        # The peers: zarr-python's own pipeline (not with this package's).
        if r["side"].startswith("zarr-python") and "CodecPipeline" not in r["side"]:
            best_peer[r["case"]] = min(best_peer.get(r["case"], float("inf")), r["seconds"])
    print("| read | reader | time | requests | bytes | vs fastest zarr-python |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    cases = [case for case, _ in CASES]
    cases = ["whole", *cases, *(f"{case}, array opened for it" for case in cases)]
    for case in cases:
        for r in rows:
            if r["case"] != case:
                continue
            t = r["seconds"]
            shown = f"{t:.3f} s" if t >= 1 else f"{t * 1e3:.1f} ms"
            ratio = best_peer[case] / t
            print(
                f"| {case} | {r['side']} | {shown} | {r['requests']:.1f} | "
                f"{r['bytes'] / 2**20:.2f} MiB | {ratio:.2f}x |"
            )


def main() -> None:
    cmd = sys.argv[1]
    if cmd == "write":
        write(Path(sys.argv[2]))
    elif cmd == "bench":
        import os

        bench_stores.require_release_build()
        bench(sys.argv[2], Path(sys.argv[3]), int(os.environ.get("BENCH_REPS", "5")))
    elif cmd == "report":
        report([Path(p) for p in sys.argv[2:]])
    else:
        raise SystemExit(f"unknown command {cmd!r}: use write, bench or report")


if __name__ == "__main__":
    main()
