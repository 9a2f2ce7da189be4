//! Threads: many threads (more than the machine's cores) writing and reading
//! one array at once give what one thread gives; `register_overrides()`
//! racing `Array::open` (in a fresh process) gives the same values on every
//! thread and leaves this crate's codecs installed; zarrs' chunk caches over
//! chunks large enough for `scale_offset` / `cast_value` to split onto rayon
//! do not deadlock, read from many threads or from inside rayon.
//!
//! Every test runs under a time limit, so that a deadlock fails instead of
//! hanging the suite.

mod common;

use std::fmt::Debug;
use std::io::Read;
use std::process::Command;
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use zarrs::array::chunk_cache::{
    ChunkCache, ChunkCacheDecodedLruChunkLimit, ChunkCacheEncodedLruSizeLimit,
};
use zarrs::array::codec::api::CodecOptions;
use zarrs::array::{Array, ArrayMetadata, ArraySubset, Element, ElementOwned};
use zarrs::storage::ReadableStorageTraits;
use zarrs::storage::store::MemoryStore;

/// More threads than the 2 cores CI has.
const THREADS: usize = 8;

/// Run `f` on its own thread; fail if it does not finish within `limit`.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match receive.recv_timeout(limit) {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("not done within {limit:?}: deadlock?"),
    }
}

fn metadata(json: serde_json::Value) -> ArrayMetadata {
    serde_json::from_value(json).unwrap()
}

/// `float64` values through `scale_offset`, `cast_value`, `transpose` and
/// `bytes`: exact, since `(v + 10) * 0.5` is an integer for every value.
fn numeric_metadata(shape: [u64; 2], chunk: [u64; 2]) -> ArrayMetadata {
    metadata(serde_json::json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": -10.0,
        "codecs": [
            {"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.5}},
            {"name": "cast_value", "configuration": {"data_type": "int32"}},
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "bytes", "configuration": {"endian": "big"}}
        ],
    }))
}

fn numeric_value(i: u64) -> f64 {
    (i % 1000) as f64 * 2.0 - 10.0
}

/// Strings through `vlen-utf8` inside `sharding_indexed` (no `transpose`
/// before it: zarrs 0.23 cannot read that chain in part, see
/// `KNOWN_ZARRS_CACHE_BUG` in `tests/local/core_fixtures.rs`).
fn string_metadata() -> ArrayMetadata {
    metadata(serde_json::json!({
        "zarr_format": 3, "node_type": "array", "shape": [64, 48], "data_type": "string",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16, 16]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "",
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [8, 4],
            "codecs": [{"name": "vlen-utf8"}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c"}]}}],
    }))
}

fn string_value(i: u64) -> String {
    format!("{i}-{}", "é".repeat((i % 7) as usize))
}

/// The values of the chunk at `indices`, from `value(linear index)`.
fn chunk_values<T>(array: &Array<MemoryStore>, indices: &[u64], value: fn(u64) -> T) -> Vec<T> {
    let subset = array.chunk_subset(indices).unwrap();
    let shape = array.shape().to_vec();
    subset
        .indices()
        .into_iter()
        .map(|index| value(index[0] * shape[1] + index[1]))
        .collect()
}

/// The values of `subset`, from `value(linear index)`.
fn subset_values<T>(shape: &[u64], subset: &ArraySubset, value: fn(u64) -> T) -> Vec<T> {
    subset
        .indices()
        .into_iter()
        .map(|index| value(index[0] * shape[1] + index[1]))
        .collect()
}

/// Regions that cut across chunks (and inner chunks), overlapping each other.
fn regions(shape: &[u64]) -> Vec<ArraySubset> {
    let (h, w) = (shape[0], shape[1]);
    vec![
        ArraySubset::new_with_ranges(&[0..h, 0..w]),
        ArraySubset::new_with_ranges(&[3..h / 2 + 5, 1..w - 2]),
        ArraySubset::new_with_ranges(&[h / 4..h - 3, w / 3..w]),
        ArraySubset::new_with_ranges(&[1..2, 0..w]),
        ArraySubset::new_with_ranges(&[0..h, 7..8]),
    ]
}

/// Write the first half of the array's chunks from one thread, then, at
/// once: `THREADS` writers store the chunks of the second half (each its
/// own), while `THREADS` readers read overlapping regions of the first
/// half. Then `THREADS` readers read overlapping regions of the whole array.
/// Every read equals the values written, and the store equals the one a
/// single thread writes.
fn many_threads<T>(metadata: ArrayMetadata, value: fn(u64) -> T)
where
    T: Element + ElementOwned + Clone + PartialEq + Debug + Send + Sync + 'static,
{
    zarrs_extension_codecs::register_overrides();
    let store = Arc::new(MemoryStore::new());
    // Inner chunks in C order: zarrs' default order within a shard is
    // whichever thread finishes first.
    let array = Arc::new(
        Array::new_with_metadata(store.clone(), "/", metadata.clone())
            .unwrap()
            .with_codec_specific_options(&common::c_order()),
    );
    let shape = array.shape().to_vec();
    let grid = array.chunk_grid_shape().to_vec();
    let chunks: Vec<Vec<u64>> = (0..grid[0])
        .flat_map(|r| (0..grid[1]).map(move |c| vec![r, c]))
        .collect();
    let (first, second) = chunks.split_at(chunks.len() / 2);
    for indices in first {
        array
            .store_chunk(indices, chunk_values(&array, indices, value))
            .unwrap();
    }
    let first_rows = array.chunk_subset(first.last().unwrap()).unwrap().end_exc()[0];
    // Rows completely written by the first half.
    let done = ArraySubset::new_with_ranges(&[0..first_rows - first_rows % 2, 0..shape[1]]);

    let barrier = Arc::new(Barrier::new(2 * THREADS));
    let mut handles = vec![];
    for t in 0..THREADS {
        let (array, barrier) = (array.clone(), barrier.clone());
        let mine: Vec<Vec<u64>> = second.iter().skip(t).step_by(THREADS).cloned().collect();
        handles.push(std::thread::spawn(move || {
            barrier.wait();
            for indices in mine {
                array
                    .store_chunk(&indices, chunk_values(&array, &indices, value))
                    .unwrap();
            }
        }));
    }
    for t in 0..THREADS {
        let (array, barrier, done) = (array.clone(), barrier.clone(), done.clone());
        let shape = shape.clone();
        handles.push(std::thread::spawn(move || {
            barrier.wait();
            for region in regions(done.shape()).iter().cycle().skip(t).take(3) {
                let read: Vec<T> = array.retrieve_array_subset(region).unwrap();
                assert_eq!(read, subset_values(&shape, region, value), "{region:?}");
            }
        }));
    }
    handles.into_iter().for_each(|h| h.join().unwrap());

    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (array, barrier, shape) = (array.clone(), barrier.clone(), shape.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for region in regions(&shape).iter().cycle().skip(t).take(3) {
                    let read: Vec<T> = array.retrieve_array_subset(region).unwrap();
                    assert_eq!(read, subset_values(&shape, region, value), "{region:?}");
                }
            })
        })
        .collect();
    handles.into_iter().for_each(|h| h.join().unwrap());

    // One thread, one write: the same store.
    let single = Arc::new(MemoryStore::new());
    let one = Array::new_with_metadata(single.clone(), "/", metadata)
        .unwrap()
        .with_codec_specific_options(&common::c_order());
    let all = one.subset_all();
    one.store_array_subset(&all, subset_values(&shape, &all, value))
        .unwrap();
    let (ours, one) = (
        common::store_contents(&store),
        common::store_contents(&single),
    );
    let differ: Vec<&String> = ours
        .iter()
        .zip(&one)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| &a.0)
        .collect();
    assert!(
        ours.len() == one.len() && differ.is_empty(),
        "{} keys against {}; differing: {differ:?}",
        ours.len(),
        one.len()
    );
}

#[test]
fn many_threads_write_and_read_numeric_array() {
    within(Duration::from_secs(60), || {
        many_threads(numeric_metadata([96, 80], [16, 16]), numeric_value);
    });
}

#[test]
fn many_threads_write_and_read_sharded_strings() {
    within(Duration::from_secs(60), || {
        many_threads(string_metadata(), string_value);
    });
}

/// Runs `register_overrides_races_array_open_child` in a process of its
/// own, where nothing has registered the overrides yet.
#[test]
fn register_overrides_races_array_open() {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "register_overrides_races_array_open_child",
            "--test-threads=1",
        ])
        .env("THREADS_RACE_CHILD", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Drained on threads of their own: a child blocked on a full pipe would
    // look like a deadlock.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
            panic!("the race did not finish within 60 s: deadlock?\n{stdout}\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(status.success(), "{stdout}\n{stderr}");
    // The child really ran (a filter that matched nothing also succeeds).
    assert!(stdout.contains("1 passed"), "{stdout}");
}

/// The child of [`register_overrides_races_array_open`]: does nothing unless
/// `THREADS_RACE_CHILD` is set.
#[test]
fn register_overrides_races_array_open_child() {
    if std::env::var_os("THREADS_RACE_CHILD").is_none() {
        return;
    }
    // Written before any override is installed: by zarrs' built-ins, whose
    // chunks this crate's codecs read alike for these configurations.
    let numeric = Arc::new(MemoryStore::new());
    let strings = Arc::new(MemoryStore::new());
    let setups: [(&Arc<MemoryStore>, ArrayMetadata); 2] = [
        (&numeric, numeric_metadata([40, 24], [8, 16])),
        (&strings, string_metadata()),
    ];
    for (store, metadata) in setups {
        let array = Array::new_with_metadata(store.clone(), "/", metadata).unwrap();
        array.store_metadata().unwrap();
        let all = array.subset_all();
        let shape = array.shape().to_vec();
        if array.data_type().is_fixed() {
            array
                .store_array_subset(&all, subset_values(&shape, &all, numeric_value))
                .unwrap();
        } else {
            array
                .store_array_subset(&all, subset_values(&shape, &all, string_value))
                .unwrap();
        }
    }
    let (numeric_for_race, strings_for_race) = (numeric.clone(), strings);
    within(Duration::from_secs(50), move || {
        let (numeric, strings) = (numeric_for_race, strings_for_race);
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (barrier, numeric, strings) =
                    (barrier.clone(), numeric.clone(), strings.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    for round in 0..4 {
                        if (t + round) % 2 == 0 {
                            zarrs_extension_codecs::register_overrides();
                        }
                        let array = Array::open(numeric.clone(), "/").unwrap();
                        let all = array.subset_all();
                        let read: Vec<f64> = array.retrieve_array_subset(&all).unwrap();
                        assert_eq!(read, subset_values(array.shape(), &all, numeric_value));
                        let array = Array::open(strings.clone(), "/").unwrap();
                        let all = array.subset_all();
                        let read: Vec<String> = array.retrieve_array_subset(&all).unwrap();
                        assert_eq!(read, subset_values(array.shape(), &all, string_value));
                    }
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
    });
    // Afterwards, this crate's codecs are the ones in use.
    let array = Array::open(numeric, "/").unwrap();
    let codecs = array.codecs();
    let codec = codecs.array_to_bytes_codec().as_any();
    assert!(
        codec
            .downcast_ref::<zarrs_extension_codecs::codec::bytes::BytesCodec>()
            .is_some(),
        "the override is not installed"
    );
}

/// Read through a chunk cache from `THREADS` std threads and from inside
/// rayon's pool, each read checked.
fn read_through<C: ChunkCache + Send + Sync + 'static>(cache: Arc<C>, shape: &[u64]) {
    // Expected values worked out once: in a debug build that costs more
    // than the reads.
    let expected: Arc<Vec<(ArraySubset, Vec<f64>)>> = Arc::new(
        regions(shape)
            .into_iter()
            .map(|r| {
                let values = subset_values(shape, &r, numeric_value);
                (r, values)
            })
            .collect(),
    );
    let check = move |cache: &C, t: usize| {
        let (region, values) = &expected[t % expected.len()];
        let read: Vec<f64> = cache
            .retrieve_array_subset(region, &CodecOptions::default())
            .unwrap();
        assert_eq!(&read, values, "{region:?}");
    };
    let check = Arc::new(check);
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (cache, check) = (cache.clone(), check.clone());
            std::thread::spawn(move || check(&cache, t))
        })
        .collect();
    handles.into_iter().for_each(|h| h.join().unwrap());
    (0..THREADS).into_par_iter().for_each(|t| check(&cache, t));
}

/// Chunks of 2 MiB of `float64` (and of `int32` after `cast_value`, 1 MiB):
/// `scale_offset` and `cast_value` split them onto rayon when zarrs decodes
/// one chunk alone. Decoded and encoded LRU caches, read from many threads
/// and from inside rayon.
#[test]
fn chunk_caches_with_large_chunks_do_not_deadlock() {
    within(Duration::from_secs(60), || {
        zarrs_extension_codecs::register_overrides();
        let store = Arc::new(MemoryStore::new());
        let array = Array::new_with_metadata(
            store.clone(),
            "/",
            numeric_metadata([1024, 512], [512, 512]),
        )
        .unwrap();
        let all = array.subset_all();
        let shape = array.shape().to_vec();
        array
            .store_array_subset(&all, subset_values(&shape, &all, numeric_value))
            .unwrap();
        let readable: Arc<Array<dyn ReadableStorageTraits>> = Arc::new(array.readable());
        read_through(
            Arc::new(ChunkCacheDecodedLruChunkLimit::new(readable.clone(), 2)),
            &shape,
        );
        read_through(
            Arc::new(ChunkCacheEncodedLruSizeLimit::new(readable, 4 << 20)),
            &shape,
        );
    });
}
