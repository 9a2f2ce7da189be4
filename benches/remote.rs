//! Remote reads through object_store (`zarrs_extension_codecs::remote`):
//! this crate's side of `scripts/bench/remote.sh`, which writes the store
//! with zarr-python, serves it with Starlette under uvicorn with a
//! per-request latency, and times zarr-python reading it too.
//!
//! ```sh
//! ZARRS_REMOTE_URL=http://127.0.0.1:PORT/sharded.zarr \
//!   cargo bench --features remote --bench remote
//! ```
//!
//! Whole reads and 256 x 256 windows (aligned to the inner chunks and not),
//! through zarrs' sync API (the store's async-to-sync adapter, zarrs'
//! threads) and its async API (on a tokio runtime); each read allocates a
//! fresh output (`retrieve_array_subset_vec`). Requests and body bytes are
//! the server's counts (`GET /__stats`), the same ones zarr-python's side
//! reports. Prints one JSON object per line:
//! `{"side", "case", "seconds", "requests", "bytes"}`, per read (median).

#[path = "../tests/common/servers.rs"]
mod servers;

use std::sync::Arc;
use std::time::Instant;

use zarrs::array::{Array, ArraySubset};
use zarrs_extension_codecs::remote::{RemoteOptions, RemoteStore};
use zarrs_extension_codecs::{ArrayReadExt, AsyncArrayReadExt};

const WINDOW: u64 = 256;
const N_WINDOWS: usize = 32;

/// The server's (requests, bytes) since the last reset; resets them.
fn server_counts(server: &str) -> (u64, u64) {
    let json = servers::stats_then_reset(server);
    (
        json["requests"].as_u64().unwrap(),
        json["bytes"].as_u64().unwrap(),
    )
}

/// Window origins: SplitMix64, as in scripts/bench/remote_stores.py.
fn window_offsets(shape: &[u64], aligned: bool) -> Vec<(u64, u64)> {
    let mut state: u64 = 0x5EED_0000 + if aligned { 1 } else { 2 };
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    (0..N_WINDOWS)
        .map(|_| {
            if aligned {
                let y = (next() % (shape[0] / WINDOW)) * WINDOW;
                let x = (next() % (shape[1] / WINDOW)) * WINDOW;
                (y, x)
            } else {
                let y = next() % (shape[0] - WINDOW + 1);
                let x = next() % (shape[1] - WINDOW + 1);
                (y, x)
            }
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn report(side: &str, case: &str, seconds: f64, requests: f64, bytes: f64) {
    println!(
        "{}",
        serde_json::json!({"side": side, "case": case, "seconds": seconds,
                           "requests": requests, "bytes": bytes})
    );
}

/// Report the median of `times` with the server's counts since the last
/// reset, per read of `reads`.
fn report_counts(side: &str, case: &str, times: Vec<f64>, server: &str, reads: usize) {
    let (requests, bytes) = server_counts(server);
    let n = reads as f64;
    report(
        side,
        case,
        median(times),
        requests as f64 / n,
        bytes as f64 / n,
    );
}

/// Both window cases: the name and the origins of each.
fn window_cases(shape: &[u64]) -> [(&'static str, Vec<(u64, u64)>); 2] {
    [
        ("window aligned", window_offsets(shape, true)),
        ("window unaligned", window_offsets(shape, false)),
    ]
}

/// The window with origin `(y, x)`.
fn window(y: u64, x: u64) -> ArraySubset {
    ArraySubset::new_with_ranges(&[y..y + WINDOW, x..x + WINDOW])
}

/// Time reading every window of both cases through `read` (with `warm`,
/// after reading them all once) and report them as `side`.
fn time_windows(
    side: &str,
    shape: &[u64],
    server: &str,
    warm: bool,
    read: impl Fn(&ArraySubset) -> Vec<f64>,
) {
    for (case, offsets) in window_cases(shape) {
        if warm {
            for &(y, x) in &offsets {
                read(&window(y, x));
            }
        }
        let mut times = vec![];
        server_counts(server);
        for &(y, x) in &offsets {
            let window = window(y, x);
            let t = Instant::now();
            let out = read(&window);
            times.push(t.elapsed().as_secs_f64());
            drop(out);
        }
        report_counts(side, case, times, server, offsets.len());
    }
}

fn main() {
    let Ok(url) = std::env::var("ZARRS_REMOTE_URL") else {
        eprintln!("set ZARRS_REMOTE_URL (scripts/bench/remote.sh does); nothing to do");
        return;
    };
    let reps: usize = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let server = url.split('/').take(3).collect::<Vec<_>>().join("/");
    zarrs_extension_codecs::register_overrides();

    // Sync API, no shard index kept.
    let mut uncached = RemoteOptions::default();
    uncached.shard_index_cache_bytes = 0;
    let store = Arc::new(RemoteStore::open(&url, &uncached).unwrap());
    let array = Array::open(store.clone(), "/").unwrap();
    let shape = array.shape().to_vec();
    let all = array.subset_all();
    let _warm: Vec<f64> = array.retrieve_array_subset_vec(&all).unwrap();
    server_counts(&server);
    let mut times = vec![];
    for _ in 0..reps {
        let t = Instant::now();
        let out: Vec<f64> = array.retrieve_array_subset_vec(&all).unwrap();
        times.push(t.elapsed().as_secs_f64());
        drop(out);
    }
    report_counts("zarrs sync", "whole", times, &server, reps);
    time_windows("zarrs sync", &shape, &server, false, |window| {
        array.retrieve_array_subset_vec(window).unwrap()
    });

    // Sync API with the shard indexes kept (the default); warm: every
    // shard's index once.
    let cached = RemoteOptions::default();
    let array = Array::open(Arc::new(RemoteStore::open(&url, &cached).unwrap()), "/").unwrap();
    time_windows(
        "zarrs sync, indexes cached",
        &shape,
        &server,
        true,
        |window| array.retrieve_array_subset_vec(window).unwrap(),
    );

    // Sync API, first windows of a shard: a store of its own for each
    // window, opened before timing (its first request also connects), with
    // the default options (a read-ahead of 1 MiB) and with
    // `shard_read_ahead_bytes` at 8 MiB (more than a shard of either store).
    let mut ahead = RemoteOptions::default();
    ahead.shard_read_ahead_bytes = 8 << 20;
    for (side, options) in [
        ("zarrs sync, first window of a shard", &cached),
        (
            "zarrs sync, read-ahead 8 MiB, first window of a shard",
            &ahead,
        ),
    ] {
        for (case, offsets) in window_cases(&shape) {
            let arrays: Vec<_> = offsets
                .iter()
                .map(|_| {
                    Array::open(Arc::new(RemoteStore::open(&url, options).unwrap()), "/").unwrap()
                })
                .collect();
            let mut times = vec![];
            server_counts(&server);
            for (&(y, x), array) in offsets.iter().zip(&arrays) {
                let window = window(y, x);
                let t = Instant::now();
                let out: Vec<f64> = array.retrieve_array_subset_vec(&window).unwrap();
                times.push(t.elapsed().as_secs_f64());
                drop(out);
            }
            report_counts(side, case, times, &server, offsets.len());
        }
    }

    // Sync API inside a larger rayon pool: zarrs reads the inner chunks of
    // a window on rayon's threads, one request each, so the pool's size
    // (the number of cores by default) bounds the requests in flight.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(16)
        .build()
        .unwrap();
    for (side, options) in [
        ("zarrs sync, 16-thread pool", uncached.clone()),
        ("zarrs sync, 16-thread pool, indexes cached", cached.clone()),
    ] {
        let array = Array::open(Arc::new(RemoteStore::open(&url, &options).unwrap()), "/").unwrap();
        pool.install(|| {
            time_windows(side, &shape, &server, true, |window| {
                array.retrieve_array_subset_vec(window).unwrap()
            });
        });
    }

    // Async API, on a runtime of the bench's own.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = store.async_store();
        let array = Array::async_open(store, "/").await.unwrap();
        let _warm: Vec<f64> = array.async_retrieve_array_subset_vec(&all).await.unwrap();
        server_counts(&server);
        let mut times = vec![];
        for _ in 0..reps {
            let t = Instant::now();
            let out: Vec<f64> = array.async_retrieve_array_subset_vec(&all).await.unwrap();
            times.push(t.elapsed().as_secs_f64());
            drop(out);
        }
        report_counts("zarrs async", "whole", times, &server, reps);
        for (case, offsets) in window_cases(&shape) {
            let mut times = vec![];
            server_counts(&server);
            for &(y, x) in &offsets {
                let window = window(y, x);
                let t = Instant::now();
                let out: Vec<f64> = array
                    .async_retrieve_array_subset_vec(&window)
                    .await
                    .unwrap();
                times.push(t.elapsed().as_secs_f64());
                drop(out);
            }
            report_counts("zarrs async", case, times, &server, offsets.len());
        }
    });
}
