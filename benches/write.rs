//! Whole writes from memory into a new directory: [`ArrayWriteExt`] beside
//! zarrs' own `store_array_subset_opt`, the way a product is written.
//!
//! - group `band`: the EOPF-like band of `python/benchmarks/eopf_band.py`
//!   (4096 x 4096 float64, smooth reflectance-like values with 2 % NaN,
//!   through `scale_offset(-0.1, 10000)` + `cast_value(uint16)` + blosc
//!   zstd 3 shuffle, in shards of 2048 x 2048 holding 256 x 256 inner
//!   chunks);
//! - group `volume`: the zarr_benchmarks layout of
//!   `python/benchmarks/bench_peers.py`, scaled down to 256^3 (uint16,
//!   shards of 128^3 holding 64^3 inner chunks, bytes + zstd level 0).
//!
//! - group `band_tiles`: 64 inner chunks (256 x 256) of the band written
//!   one after the other into the band once written whole (a tile writer:
//!   each window covers one inner chunk of a stored shard; the whole write
//!   is not timed).
//!
//! Rows: `zarrs` (zarrs' write) and `ext` (`store_window_bytes_opt`), each
//! on one thread (`/1`: a one-thread rayon pool) and on all (`/all`). Every
//! iteration creates the array in a new directory and removes it
//! afterwards, both outside the timing (no fsync).
//!
//! ```sh
//! cargo bench --bench write
//! bash scripts/bench/write_memory.sh   # peak memory of each whole write
//! ```
//!
//! With `WRITE_PEAK=LAYOUT/WRITER/THREADS` (e.g. `band/ext/1`), the bench
//! makes one whole write of that layout instead, and prints how far the
//! process's peak resident memory (`VmHWM`, reset just before through
//! `/proc/self/clear_refs`) rose above what it held before the write (the
//! input among it): what the write itself needs. One case per process, so
//! that memory freed by an earlier write cannot be reused unseen.

mod common;

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use zarrs::array::{Array, ArrayBytes, ArraySubset, CodecOptions};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::{ArrayWriteExt, register_overrides};

use common::{Rng, run, thread_modes};

const BAND: u64 = 4096;
const VOLUME: u64 = 256;

fn band_metadata() -> serde_json::Value {
    serde_json::json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": [BAND, BAND],
        "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2048, 2048]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "NaN",
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [256, 256],
            "codecs": [
                {"name": "scale_offset", "configuration": {"scale": 10000, "offset": -0.1}},
                {"name": "cast_value", "configuration": {
                    "data_type": "uint16", "rounding": "nearest-even", "out_of_range": "clamp",
                    "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}},
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "blosc", "configuration": {
                    "cname": "zstd", "clevel": 3, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}
            ],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"
        }}],
        "attributes": {}
    })
}

fn volume_metadata() -> serde_json::Value {
    serde_json::json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": [VOLUME, VOLUME, VOLUME],
        "data_type": "uint16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [128, 128, 128]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [64, 64, 64],
            "codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "zstd", "configuration": {"level": 0, "checksum": false}}
            ],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"
        }}],
        "attributes": {}
    })
}

/// Reflectance-like band values: smooth, quantised to 1e-4, 2 % NaN.
#[allow(clippy::cast_precision_loss)]
fn band_values() -> Vec<u8> {
    let mut rng = Rng(0xBA4D);
    let mut out = Vec::with_capacity((BAND * BAND * 8) as usize);
    for y in 0..BAND {
        for x in 0..BAND {
            let smooth = 0.3 + 0.2 * (x as f64 / 97.0).sin() * (y as f64 / 61.0).cos();
            let value = if rng.unit() < 0.02 {
                f64::NAN
            } else {
                ((smooth + 0.01 * (rng.unit() - 0.5)) * 1e4).round() / 1e4 - 0.1
            };
            out.extend_from_slice(&value.to_ne_bytes());
        }
    }
    out
}

/// Volume values: a smooth function of the position plus small noise.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn volume_values() -> Vec<u8> {
    let mut rng = Rng(0x701);
    let mut out = Vec::with_capacity((VOLUME.pow(3) * 2) as usize);
    for z in 0..VOLUME {
        for y in 0..VOLUME {
            for x in 0..VOLUME {
                #[allow(clippy::cast_precision_loss)]
                let smooth = 30000.0
                    + 1000.0 * (x as f64 / 100.0).sin() * (y as f64 / 70.0).cos()
                    + 750.0 * (z as f64 / 100.0 + x as f64 / 200.0).sin();
                let value = (smooth + 4.0 * (rng.unit() - 0.5)).round() as u16;
                out.extend_from_slice(&value.to_ne_bytes());
            }
        }
    }
    out
}

/// A new array with `metadata` in the new directory `dir`.
fn create(dir: &Path, metadata: &serde_json::Value) -> Array<FilesystemStore> {
    std::fs::create_dir_all(dir).expect("dir");
    std::fs::write(
        dir.join("zarr.json"),
        serde_json::to_vec(metadata).expect("json"),
    )
    .expect("zarr.json");
    let store = Arc::new(FilesystemStore::new(dir).expect("store"));
    Array::open(store, "/").expect("open")
}

/// `count` inner-chunk windows of the band at deterministic places, and the
/// values written into each (the first inner chunk's, halved).
fn band_tiles(values: &[u8], count: usize) -> (Vec<ArraySubset>, Vec<u8>) {
    let mut rng = Rng(0x711E);
    let grid = BAND / 256;
    let windows = (0..count)
        .map(|_| {
            let (y, x) = (rng.next_u64() % grid * 256, rng.next_u64() % grid * 256);
            ArraySubset::new_with_ranges(&[y..y + 256, x..x + 256])
        })
        .collect();
    let mut tile = Vec::with_capacity(256 * 256 * 8);
    for row in 0..256usize {
        let at = row * BAND as usize * 8;
        for v in values[at..at + 256 * 8].chunks_exact(8) {
            let v = f64::from_ne_bytes(v.try_into().expect("8 bytes")) * 0.5;
            tile.extend_from_slice(&v.to_ne_bytes());
        }
    }
    (windows, tile)
}

/// One write with `writer` (`zarrs`: zarrs' `store_array_subset_opt`;
/// `ext`: `store_window_bytes_opt`).
fn write(
    writer: &str,
    array: &Array<FilesystemStore>,
    window: &ArraySubset,
    values: &[u8],
    options: &CodecOptions,
) {
    if writer == "zarrs" {
        array
            .store_array_subset_opt(window, ArrayBytes::new_flen(values), options)
            .expect("zarrs write");
    } else {
        array
            .store_window_bytes_opt(window, values, options)
            .expect("ext write");
    }
}

/// The rows `zarrs/1`, `ext/1`, `zarrs/all` and `ext/all` of group `name`.
/// Each iteration: `prepare` makes the array in a new directory (not
/// timed), then `timed` writes into it, inside a one-thread pool for `/1`;
/// the directory is removed afterwards.
fn rows(
    c: &mut Criterion,
    name: &str,
    bytes: u64,
    prepare: impl Fn(&Path, &CodecOptions) -> Array<FilesystemStore>,
    timed: impl Fn(&str, &Array<FilesystemStore>, &CodecOptions) + Sync,
) {
    let root = tempfile::tempdir().expect("tempdir");
    let mut group = c.benchmark_group(name);
    group.throughput(criterion::Throughput::Bytes(bytes));
    let mut n = 0usize;
    for (label, options, pool) in thread_modes() {
        let pool = pool.as_ref();
        for writer in ["zarrs", "ext"] {
            group.bench_function(format!("{writer}/{label}"), |b| {
                b.iter_custom(|iterations| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iterations {
                        n += 1;
                        let dir = root.path().join(format!("{n}.zarr"));
                        let array = prepare(&dir, &options);
                        let timed_write = || {
                            let start = Instant::now();
                            timed(writer, &array, &options);
                            start.elapsed()
                        };
                        total += run(pool, timed_write);
                        black_box(&array);
                        std::fs::remove_dir_all(&dir).expect("remove");
                    }
                    total
                });
            });
        }
    }
    group.finish();
}

/// A whole write of `values` into a new array (its creation untimed).
fn bench_layout(c: &mut Criterion, name: &str, metadata: &serde_json::Value, values: &[u8]) {
    rows(
        c,
        name,
        values.len() as u64,
        |dir, _| create(dir, metadata),
        |writer, array, options| write(writer, array, &array.subset_all(), values, options),
    );
}

/// Tiles written into the band once it is written whole (not timed).
fn bench_tiles(c: &mut Criterion, values: &[u8]) {
    // 64 tiles when measuring; 4 when `cargo test` runs each row once (an
    // unoptimised zarrs rewrites a whole shard per tile).
    let measuring = std::env::args().any(|a| a == "--bench");
    let (windows, tile) = band_tiles(values, if measuring { 64 } else { 4 });
    let metadata = band_metadata();
    rows(
        c,
        "band_tiles",
        (windows.len() * tile.len()) as u64,
        |dir, options| {
            let array = create(dir, &metadata);
            write("ext", &array, &array.subset_all(), values, options);
            array
        },
        |writer, array, options| {
            for window in &windows {
                write(writer, array, window, &tile, options);
            }
        },
    );
}

/// A `/proc/self/status` field, in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

/// The `WRITE_PEAK` case `layout/writer/threads` (see the module doc).
#[allow(clippy::cast_precision_loss)]
fn peak(case: &str) {
    let [layout, writer, threads] = case.split('/').collect::<Vec<_>>()[..] else {
        panic!("WRITE_PEAK={case}: expected LAYOUT/WRITER/THREADS, e.g. band/ext/1");
    };
    let (metadata, values) = match layout {
        "band" => (band_metadata(), band_values()),
        "volume" => (volume_metadata(), volume_values()),
        _ => panic!("WRITE_PEAK={case}: layout is band or volume"),
    };
    let (_, options, pool) = thread_modes()
        .into_iter()
        .find(|mode| mode.0 == threads)
        .unwrap_or_else(|| panic!("WRITE_PEAK={case}: threads is 1 or all"));
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("peak.zarr");
    let array = create(&dir, &metadata);
    let mib = |kib: u64| kib as f64 / 1024.0;
    // Resets VmHWM to the current resident size (Linux 4.0 and later).
    std::fs::write("/proc/self/clear_refs", "5").expect("clear_refs");
    let before = status_kib("VmRSS:");
    run(pool.as_ref(), || {
        write(writer, &array, &array.subset_all(), &values, &options);
    });
    let peak = status_kib("VmHWM:");
    let largest = common::largest_file(&dir);
    println!(
        "{case}: input {:.1} MiB, held before {:.1} MiB, peak {:.1} MiB: {:.1} MiB above (largest stored chunk {:.1} MiB)",
        values.len() as f64 / (1 << 20) as f64,
        mib(before),
        mib(peak),
        mib(peak.saturating_sub(before)),
        largest as f64 / (1 << 20) as f64,
    );
}

fn main() {
    register_overrides();
    if let Ok(case) = std::env::var("WRITE_PEAK") {
        peak(&case);
        return;
    }
    // `configure_from_args`: under `cargo test --all-targets` each row runs
    // once, as a test.
    let mut c = common::config(Duration::from_secs(6))
        .sample_size(10)
        .configure_from_args();
    let band = band_values();
    bench_layout(&mut c, "band", &band_metadata(), &band);
    bench_tiles(&mut c, &band);
    bench_layout(&mut c, "volume", &volume_metadata(), &volume_values());
    c.final_summary();
}
