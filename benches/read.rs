//! Whole reads and windows of a zarr-python product, the way a user reads it.
//!
//! The stores are written by zarr-python 3.4.2 (`scripts/bench/read.sh` does
//! that first, then runs this and zarr-python's side, and prints the ratios):
//! 4096 x 8192 float64 stored as uint8 through `scale_offset` +
//! `cast_value` (NaN <-> 0) + `bytes`.
//!
//! - group `whole`: `whole.zarr` (32 chunks of 1024 x 1024), the whole array
//!   with a fresh output every read (`Array::open` once, page cache warm):
//!   - `zarrs_vec`: zarrs' `retrieve_array_subset::<Vec<f64>>`;
//!   - `ext_vec`: [`ArrayReadExt::retrieve_array_subset_vec`];
//!   - `ext_into_reused`: [`ArrayReadExt::retrieve_array_subset_into_slice`]
//!     into one buffer kept across reads (no fresh output; for scale).
//! - group `whole_big`: the same rows on `big.zarr` (issue 23's store:
//!   8192 x 4096 float64 in 8 chunks of 1024 x 4096, 32 MiB decoded each,
//!   stored as uint16 through `scale_offset` (offset 100, scale 10) +
//!   `cast_value` + `bytes`, no compressor): chunk-sized intermediates
//!   cost most here.
//! - group `windows_aligned` / `windows_unaligned`: `sharded.zarr` (shards
//!   2048 x 2048 of 256 x 256 inner chunks), 256 x 256 windows at random
//!   offsets, on inner-chunk boundaries or anywhere (the same offsets as
//!   zarr-python's side); one iteration reads all 256 windows.
//!
//! Each row runs twice: `/1` on one thread (a one-thread rayon pool and a
//! `concurrent_target` of 1) and `/all` on every core (zarrs' defaults).
//!
//! ```sh
//! bash scripts/bench/read.sh                     # stores + both sides + table
//! ZARRS_BENCH_STORES=DIR cargo bench --bench read  # this side only
//! ```

mod common;

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};
use zarrs::array::{Array, ArraySubset};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::ArrayReadExt;

use common::{Rng, run, thread_modes};

const SHAPE: [u64; 2] = [4096, 8192];
const WINDOW: u64 = 256;
const N_WINDOWS: usize = 256;

type Store = Array<FilesystemStore>;

fn open(root: &std::path::Path, name: &str) -> Store {
    let store = Arc::new(FilesystemStore::new(root.join(name)).expect("store"));
    Array::open(store, "/").expect("open")
}

/// The same offsets as `window_offsets` in `scripts/bench/read_stores.py`.
fn window_offsets(aligned: bool) -> Vec<[u64; 2]> {
    let mut rng = Rng(0x5EED_0000 + if aligned { 1 } else { 2 });
    (0..N_WINDOWS)
        .map(|_| {
            if aligned {
                let y = rng.next_u64() % (SHAPE[0] / WINDOW) * WINDOW;
                [y, rng.next_u64() % (SHAPE[1] / WINDOW) * WINDOW]
            } else {
                let y = rng.next_u64() % (SHAPE[0] - WINDOW + 1);
                [y, rng.next_u64() % (SHAPE[1] - WINDOW + 1)]
            }
        })
        .collect()
}

fn window(at: [u64; 2]) -> ArraySubset {
    ArraySubset::new_with_ranges(&[at[0]..at[0] + WINDOW, at[1]..at[1] + WINDOW])
}

/// Group `group`: whole reads of the store `name`.
fn whole(c: &mut Criterion, root: &std::path::Path, name: &str, group: &str) {
    let array = open(root, name);
    let all = array.subset_all();
    let len = all.num_elements_usize();
    // Both APIs must give what zarrs gives before anything is timed.
    let reference: Vec<f64> = array.retrieve_array_subset(&all).expect("read");
    let ours: Vec<f64> = array.retrieve_array_subset_vec(&all).expect("read");
    assert!(same_values(&reference, &ours), "ext_vec differs from zarrs");

    let mut group = c.benchmark_group(group);
    group.throughput(Throughput::Bytes((len * 8) as u64));
    for (label, options, pool) in thread_modes() {
        let pool = pool.as_ref();
        group.bench_function(format!("zarrs_vec/{label}"), |b| {
            b.iter(|| {
                run(pool, || {
                    let v: Vec<f64> = array.retrieve_array_subset_opt(&all, &options).unwrap();
                    black_box(v)
                })
            });
        });
        group.bench_function(format!("ext_vec/{label}"), |b| {
            b.iter(|| {
                run(pool, || {
                    black_box(
                        array
                            .retrieve_array_subset_vec_opt::<f64>(&all, &options)
                            .unwrap(),
                    )
                })
            });
        });
        let mut reused = vec![0f64; len];
        group.bench_function(format!("ext_into_reused/{label}"), |b| {
            b.iter(|| {
                run(pool, || {
                    array
                        .retrieve_array_subset_into_slice_opt(&all, &mut reused, &options)
                        .unwrap();
                })
            });
            black_box(&reused);
        });
    }
    group.finish();
}

fn windows(c: &mut Criterion, root: &std::path::Path) {
    let array = open(root, "sharded.zarr");
    for aligned in [true, false] {
        let offsets = window_offsets(aligned);
        let first = window(offsets[0]);
        let reference: Vec<f64> = array.retrieve_array_subset(&first).expect("read");
        let ours: Vec<f64> = array.retrieve_array_subset_vec(&first).expect("read");
        assert!(
            same_values(&reference, &ours),
            "ext_vec window differs from zarrs"
        );

        let name = if aligned {
            "windows_aligned"
        } else {
            "windows_unaligned"
        };
        let mut group: BenchmarkGroup<'_, WallTime> = c.benchmark_group(name);
        group.throughput(Throughput::Elements(N_WINDOWS as u64));
        for (label, options, pool) in thread_modes() {
            let pool = pool.as_ref();
            group.bench_function(format!("zarrs_vec/{label}"), |b| {
                b.iter(|| {
                    run(pool, || {
                        for &at in &offsets {
                            let v: Vec<f64> = array
                                .retrieve_array_subset_opt(&window(at), &options)
                                .unwrap();
                            black_box(v);
                        }
                    })
                });
            });
            group.bench_function(format!("ext_vec/{label}"), |b| {
                b.iter(|| {
                    run(pool, || {
                        for &at in &offsets {
                            let v = array
                                .retrieve_array_subset_vec_opt::<f64>(&window(at), &options)
                                .unwrap();
                            black_box(v);
                        }
                    })
                });
            });
            let mut tile = vec![0f64; (WINDOW * WINDOW) as usize];
            group.bench_function(format!("ext_into_reused/{label}"), |b| {
                b.iter(|| {
                    run(pool, || {
                        for &at in &offsets {
                            array
                                .retrieve_array_subset_into_slice_opt(
                                    &window(at),
                                    &mut tile,
                                    &options,
                                )
                                .unwrap();
                            black_box(&tile);
                        }
                    })
                });
            });
        }
        group.finish();
    }
}

/// Equal values, NaN equal to NaN.
fn same_values(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
}

fn main() {
    let Some(root) = std::env::var_os("ZARRS_BENCH_STORES").map(PathBuf::from) else {
        eprintln!(
            "benches/read: ZARRS_BENCH_STORES is not set; run `bash scripts/bench/read.sh`, \
             which writes the stores with zarr-python first. Nothing measured."
        );
        return;
    };
    let mut c = common::config(Duration::from_secs(8))
        .sample_size(10)
        .configure_from_args();
    whole(&mut c, &root, "whole.zarr", "whole");
    whole(&mut c, &root, "big.zarr", "whole_big");
    windows(&mut c, &root);
    c.final_summary();
}
