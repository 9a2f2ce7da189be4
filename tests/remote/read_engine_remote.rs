//! The read engine over HTTP (Starlette's `StaticFiles` under uvicorn, from
//! the repository's `.venv`), requests counted by the store: a window of
//! four inner chunks of one shard costs its index and one coalesced request
//! for the chunks; a second window of that shard, its index kept (the
//! default), one request; a whole read, one request per shard; a sync read
//! whose fetches wait on the network keeps more of them in flight than it
//! has threads. Values as the filesystem store reads them.
#![cfg(feature = "remote")]

use crate::servers;

use std::num::NonZeroU64;
use std::sync::Arc;

use servers::PythonServer;
use zarrs::array::codec::ShardingCodecBuilder;
use zarrs::array::{Array, ArrayBuilder, ArraySubset, CodecOptions, data_type};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::remote::{RemoteOptions, RemoteStore};
use zarrs_extension_codecs::{ArrayReadExt, AsyncArrayReadExt};

/// A 70 x 50 uint16 array, shards of 32 x 24 (3 x 3 of them), inner
/// chunks of 8 x 6 with zstd, index with crc32c, in `dir/a.zarr`.
fn write(dir: &std::path::Path) -> Vec<u16> {
    let store = Arc::new(FilesystemStore::new(dir.join("a.zarr")).unwrap());
    let inner: Vec<NonZeroU64> = [8u64, 6]
        .iter()
        .map(|&n| NonZeroU64::new(n).unwrap())
        .collect();
    let mut sharding = ShardingCodecBuilder::new(inner, &data_type::uint16());
    sharding.bytes_to_bytes_codecs(vec![Arc::new(zarrs::array::codec::ZstdCodec::new(
        1, false,
    ))]);
    let array = ArrayBuilder::new(vec![70, 50], vec![32, 24], data_type::uint16(), 7u16)
        .array_to_bytes_codec(Arc::new(sharding.build()))
        .build(store, "/")
        .unwrap();
    array.store_metadata().unwrap();
    let values: Vec<u16> = (0..70 * 50)
        .map(|i| (i * 37 % 60_000 + 100) as u16)
        .collect();
    array
        .store_array_subset(&array.subset_all(), values.clone())
        .unwrap();
    values
}

fn window_values(values: &[u16], window: &ArraySubset) -> Vec<u16> {
    let r = window.to_ranges();
    r[0].clone()
        .flat_map(|row| {
            r[1].clone()
                .map(move |col| values[(row * 50 + col) as usize])
        })
        .collect()
}

/// The array written, served over HTTP with `latency_ms` a request, and a
/// remote store of it with default options but `read_ahead` (with the
/// directory, which must outlive the server, and the values written).
fn served(
    latency_ms: u32,
    read_ahead: u64,
) -> (tempfile::TempDir, Vec<u16>, PythonServer, Arc<RemoteStore>) {
    let dir = tempfile::tempdir().unwrap();
    let values = write(dir.path());
    let server = PythonServer::http(dir.path(), latency_ms);
    let url = format!("{}/a.zarr", server.url());
    let mut options = RemoteOptions::default();
    options.shard_read_ahead_bytes = read_ahead;
    let store = Arc::new(RemoteStore::open(&url, &options).unwrap());
    (dir, values, server, store)
}

/// Shards here are under 3 KiB: with the default read-ahead, each is read
/// whole with its index.
const DEFAULT: u64 = zarrs_extension_codecs::remote::DEFAULT_SHARD_READ_AHEAD_BYTES;

/// Requests per window: the index, then the window's inner chunks of the
/// shard in one request (one request in all with the index kept, or with
/// the default read-ahead, which brings the small shard with its index);
/// a whole read is one request per shard either way.
#[test]
fn requests_per_window_over_http() {
    for (read_ahead, first) in [(0, 2), (DEFAULT, 1)] {
        let (_dir, values, _server, store) = served(0, read_ahead);
        let array = Array::open(store.clone(), "/").unwrap();
        // Four inner chunks of shard [0, 0], then four others of it.
        for (i, window) in [
            ArraySubset::new_with_ranges(&[4..12, 3..9]),
            ArraySubset::new_with_ranges(&[20..28, 14..20]),
        ]
        .iter()
        .enumerate()
        {
            store.reset_fetched();
            let got = array.retrieve_array_subset_vec::<u16>(window).unwrap();
            assert_eq!(got, window_values(&values, window));
            let want = if i == 0 { first } else { 1 };
            assert_eq!(
                store.fetched().requests,
                want,
                "read-ahead {read_ahead}, window {i}: {:?}",
                store.fetched()
            );
        }
        store.reset_fetched();
        let all = array
            .retrieve_array_subset_vec::<u16>(&array.subset_all())
            .unwrap();
        assert_eq!(all, values);
        assert_eq!(store.fetched().requests, 9, "{:?}", store.fetched());
    }
}

#[test]
fn async_requests_per_window_over_http() {
    // Each shard's index, then its inner chunks in one request; with the
    // default read-ahead, each shard with its index.
    for (read_ahead, requests) in [(0, 8), (DEFAULT, 4)] {
        let (_dir, values, _server, remote) = served(0, read_ahead);
        let store = remote.async_store();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let array = Array::async_open(store.clone(), "/").await.unwrap();
            let window = ArraySubset::new_with_ranges(&[30..40, 20..30]); // 4 shards
            store.reset_fetched();
            let got = array
                .async_retrieve_array_subset_vec::<u16>(&window)
                .await
                .unwrap();
            assert_eq!(got, window_values(&values, &window));
            assert_eq!(store.fetched().requests, requests, "{:?}", store.fetched());
        });
    }
}

/// The array's `zarr.json` says what a shard stores before compression:
/// 32 x 24 uint16, 1536 bytes and a 260-byte index. A read-ahead less than
/// a quarter of that is not used at all (the first window fetches what it
/// fetches with none); one of a shard's size or more brings the shard
/// whole.
#[test]
fn metadata_of_shards_larger_than_the_read_ahead_turns_it_off() {
    let window = ArraySubset::new_with_ranges(&[4..12, 3..9]);
    let mut fetched = vec![];
    for read_ahead in [0, 300, DEFAULT] {
        let (_dir, values, _server, store) = served(0, read_ahead);
        let array = Array::open(store.clone(), "/").unwrap();
        store.reset_fetched();
        let got = array.retrieve_array_subset_vec::<u16>(&window).unwrap();
        assert_eq!(got, window_values(&values, &window));
        fetched.push(store.fetched());
    }
    assert_eq!(fetched[1], fetched[0], "{fetched:?}");
    assert_eq!(fetched[2].requests, 1, "{fetched:?}");
}

/// A whole read on one thread over a link of 30 ms a request: the first
/// fetch waits on the network, so the read starts more workers, and the
/// server sees several requests under way at once (one thread alone sends
/// them one after another). One request per shard; the values are
/// those written.
#[test]
fn a_sync_read_over_a_slow_link_keeps_more_fetches_in_flight_than_threads() {
    let (_dir, values, server, store) = served(30, DEFAULT);
    let array = Array::open(store, "/").unwrap();
    server.stats_then_reset();
    let one_thread = CodecOptions::default().with_concurrent_target(1);
    let got = array
        .retrieve_array_subset_vec_opt::<u16>(&array.subset_all(), &one_thread)
        .unwrap();
    assert_eq!(got, values);
    let stats = server.stats_then_reset();
    assert_eq!(stats["requests"], 9, "{stats}");
    // One thread alone shows 2 at most: the server counts a request under
    // way until its handler returns, which can be after the client has its
    // answer and has sent the next one. Grown, 8 (the shards after the
    // first) go out together.
    assert!(stats["most_at_once"].as_u64().unwrap() > 3, "{stats}");
}
