//! The shard-index cache of remote stores (on by default) cannot go stale:
//! a shard rewritten on the server between two reads of one open store
//! reads the new values, over HTTP (Starlette's `StaticFiles`, which sends
//! ETags) and S3 (moto), with and without compression, with and without
//! `crc32c` on the index, index at the end and at the start. A server that
//! gives no version (`serve_http.py --no-versions`) gets nothing kept and
//! still reads right. A second window of a shard whose index is kept costs
//! the inner chunk's request only.
//!
//! The stores are made here with zarrs. Odd versions leave the first
//! inner chunk of each shard at the fill value (so it is not stored), even
//! versions fill every inner chunk, with other values each time, so the
//! offsets of the inner chunks move from one version to the next: read
//! with the index of the one before, a version's bytes give wrong values
//! (without compression or `crc32c`, silently). An index with a missing
//! inner chunk is not served to a read of the index alone (a window of
//! that chunk alone sends no request that could see a rewrite): version 1
//! to 2 checks that. Two reads of one shard at once, one served the old
//! index while the other keeps the new one, both read the new values (the
//! read engine checks the index again in the call that reads the chunks):
//! played out by a store that rewrites the shard in between.
#![cfg(feature = "remote")]

use crate::common;
use crate::servers;

use std::num::NonZeroU64;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use servers::PythonServer;
use zarrs::array::codec::api::{ArrayToBytesCodecTraits, BytesToBytesCodecTraits};
use zarrs::array::codec::{GzipCodec, ShardingCodecBuilder, ShardingIndexLocation};
use zarrs::array::{Array, ArrayBuilder, ArraySubset, data_type};
use zarrs::filesystem::FilesystemStore;
use zarrs::storage::ReadableStorageTraits;
use zarrs_extension_codecs::ArrayReadExt;
use zarrs_extension_codecs::remote::{RemoteOptions, RemoteStore};

/// The array: 16 x 16 uint16, shards of 8 x 8, inner chunks of 4 x 4.
const SHAPE: [u64; 2] = [16, 16];

/// One way of storing the shards.
#[derive(Clone, Copy, Debug)]
struct Layout {
    gzip: bool,
    crc32c: bool,
    index_at_start: bool,
}

impl Layout {
    fn name(self) -> String {
        format!(
            "gzip{}_crc{}_start{}.zarr",
            u8::from(self.gzip),
            u8::from(self.crc32c),
            u8::from(self.index_at_start)
        )
    }
}

const LAYOUTS: [Layout; 5] = [
    Layout {
        gzip: false,
        crc32c: false,
        index_at_start: false,
    },
    Layout {
        gzip: false,
        crc32c: true,
        index_at_start: false,
    },
    Layout {
        gzip: true,
        crc32c: false,
        index_at_start: false,
    },
    Layout {
        gzip: true,
        crc32c: true,
        index_at_start: false,
    },
    Layout {
        gzip: false,
        crc32c: false,
        index_at_start: true,
    },
];

fn nonzero(values: &[u64]) -> Vec<NonZeroU64> {
    values
        .iter()
        .map(|&v| NonZeroU64::new(v).unwrap())
        .collect()
}

/// The values of `version` at (row, column): odd versions are 0 (the fill
/// value) in the first inner chunk of each shard.
fn value(version: u16, row: u64, column: u64) -> u16 {
    let first_inner = row % 8 < 4 && column % 8 < 4;
    if version % 2 == 1 && first_inner {
        0
    } else {
        version * 1000 + (row * 16 + column) as u16
    }
}

fn values(version: u16, subset: &ArraySubset) -> Vec<u16> {
    let ranges = subset.to_ranges();
    let mut out = vec![];
    for row in ranges[0].clone() {
        for column in ranges[1].clone() {
            out.push(value(version, row, column));
        }
    }
    out
}

/// Write `version` of the array at `dir` with `layout`.
fn write(dir: &Path, layout: Layout, version: u16) {
    let store = Arc::new(FilesystemStore::new(dir).unwrap());
    let data_type = data_type::uint16();
    let mut sharding = ShardingCodecBuilder::new(nonzero(&[4, 4]), &data_type);
    if layout.gzip {
        let gzip: Arc<dyn BytesToBytesCodecTraits> = Arc::new(GzipCodec::new(5).unwrap());
        sharding.bytes_to_bytes_codecs(vec![gzip]);
    }
    if !layout.crc32c {
        sharding.index_bytes_to_bytes_codecs(vec![]);
    }
    if layout.index_at_start {
        sharding.index_location(ShardingIndexLocation::Start);
    }
    let codec: Arc<dyn ArrayToBytesCodecTraits> = sharding.build_arc();
    let array = ArrayBuilder::new(SHAPE.to_vec(), vec![8, 8], data_type, 0u16)
        .array_to_bytes_codec(codec)
        .codec_specific_options(common::c_order())
        .build(store, "/")
        .unwrap();
    array.store_metadata().unwrap();
    let all = ArraySubset::new_with_shape(SHAPE.to_vec());
    array
        .store_array_subset(&all, values(version, &all))
        .unwrap();
    // Starlette's ETag is made of the modification time and the size: a
    // rewrite within its clock's resolution would keep it.
    let later = SystemTime::now() + Duration::from_secs(u64::from(version) * 5);
    for entry in common::files_under(dir) {
        std::fs::File::options()
            .write(true)
            .open(&entry)
            .unwrap()
            .set_modified(later)
            .unwrap();
    }
}

/// Fail fast: the servers are on this machine.
fn options() -> RemoteOptions {
    let mut options = RemoteOptions::default();
    options.max_retries = 0;
    options.retry_timeout = Duration::from_secs(2);
    options.timeout = Duration::from_secs(10);
    options
}

/// Options for the moto server at `url`, signed with moto's test keys.
fn s3_options(url: &str) -> RemoteOptions {
    servers::moto_options(options(), url)
}

/// `bucket` of moto at `url`, with moto's test keys.
fn moto_bucket(url: &str, bucket: &str) -> object_store::aws::AmazonS3 {
    object_store::aws::AmazonS3Builder::new()
        .with_endpoint(url)
        .with_bucket_name(bucket)
        .with_region("us-east-1")
        .with_access_key_id("testing")
        .with_secret_access_key("testing")
        .with_allow_http(true)
        .build()
        .unwrap()
}

/// Upload the shards under `dir` to `bucket`/`prefix` of moto at `url`.
fn upload_shards(url: &str, bucket: &str, prefix: &str, dir: &Path) {
    use object_store::ObjectStoreExt;
    let store = moto_bucket(url, bucket);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for file in common::files_under(&dir.join("c")) {
        let key = format!(
            "{prefix}/{}",
            file.strip_prefix(dir).unwrap().to_str().unwrap()
        );
        let bytes = std::fs::read(&file).unwrap();
        runtime
            .block_on(store.put(&object_store::path::Path::from(key), bytes.into()))
            .unwrap();
    }
}

/// The stores of `layout`'s array over HTTP (`http`) and S3 (`bucket` of
/// `s3`), with `options` (and moto's settings for S3).
fn http_and_s3(
    http: &PythonServer,
    s3: &PythonServer,
    bucket: &str,
    layout: Layout,
    options: &RemoteOptions,
) -> [(&'static str, Arc<RemoteStore>); 2] {
    let name = layout.name();
    let url = s3.url();
    let s3_options = servers::moto_options(options.clone(), &url);
    [
        (
            "http",
            Arc::new(RemoteStore::open(&format!("{}/{name}", http.url()), options).unwrap()),
        ),
        (
            "s3",
            Arc::new(RemoteStore::open(&format!("s3://{bucket}/{name}"), &s3_options).unwrap()),
        ),
    ]
}

/// The window of one inner chunk (the second of the first shard).
fn inner_window() -> ArraySubset {
    ArraySubset::new_with_ranges(&[0..4, 4..8])
}

/// Read `subset` of `array` and compare with `version`.
fn assert_reads<S: ?Sized + ReadableStorageTraits + 'static>(
    what: &str,
    array: &Array<S>,
    subset: &ArraySubset,
    version: u16,
) {
    let got: Vec<u16> = array.retrieve_array_subset_vec(subset).unwrap_or_else(|e| {
        panic!("{what}: {e}");
    });
    assert_eq!(got, values(version, subset), "{what} {subset:?}");
}

#[test]
fn a_shard_rewritten_while_a_store_is_open_reads_its_new_values() {
    zarrs_extension_codecs::register_overrides();
    let (root, http, s3) = served_layouts(&LAYOUTS, 1, "cache");
    let windows = [
        inner_window(),
        ArraySubset::new_with_ranges(&[4..8, 0..4]),
        ArraySubset::new_with_ranges(&[2..7, 3..13]),
        ArraySubset::new_with_shape(SHAPE.to_vec()),
    ];
    for layout in LAYOUTS {
        let name = layout.name();
        let stores = http_and_s3(&http, &s3, "cache", layout, &options());
        let arrays = stores
            .iter()
            .map(|(_, store)| Array::open(store.clone(), "/").unwrap())
            .collect::<Vec<_>>();
        let rewrite = |version: u16| {
            write(&root.path().join(&name), layout, version);
            upload_shards(&s3.url(), "cache", &name, &root.path().join(&name));
        };
        // Version 1: a window of the missing first inner chunk. Its index
        // is not kept (it has a missing chunk): after the rewrite, the
        // same window reads the new values.
        let missing = ArraySubset::new_with_ranges(&[0..4, 0..4]);
        for ((what, _), array) in stores.iter().zip(&arrays) {
            assert_reads(&format!("{what} {layout:?} version 1"), array, &missing, 1);
        }
        rewrite(2);
        for ((what, store), array) in stores.iter().zip(&arrays) {
            let what = format!("{what} {layout:?} version 2");
            assert_reads(&what, array, &missing, 2);
            assert_reads(&what, array, &inner_window(), 2);
            // The index is kept: a second window of the shard is one
            // request.
            store.reset_fetched();
            assert_reads(
                &what,
                array,
                &ArraySubset::new_with_ranges(&[4..8, 4..8]),
                2,
            );
            assert_eq!(store.fetched().requests, 1, "{what}: {:?}", store.fetched());
        }
        // Version 3 moves the inner chunks: read with the kept index of
        // version 2, they would be the wrong ones.
        rewrite(3);
        for ((what, store), array) in stores.iter().zip(&arrays) {
            for window in &windows {
                assert_reads(&format!("{what} {layout:?} version 3"), array, window, 3);
            }
            // An index with a missing inner chunk is read anew by every
            // window, and kept for the engine's check only: the call that
            // reads the chunks gets it from what is kept, no third request.
            store.reset_fetched();
            assert_reads(&format!("{what} {layout:?}"), array, &inner_window(), 3);
            assert_eq!(store.fetched().requests, 2, "{what}: {:?}", store.fetched());
        }
    }
}

#[test]
fn a_server_without_versions_keeps_no_index_and_reads_right() {
    zarrs_extension_codecs::register_overrides();
    let root = tempfile::tempdir().unwrap();
    let layout = LAYOUTS[0];
    let dir = root.path().join(layout.name());
    write(&dir, layout, 1);
    let server = PythonServer::http_with(root.path(), &["--no-versions"]);
    let url = format!("{}/{}", server.url(), layout.name());
    let mut no_read_ahead = options();
    no_read_ahead.shard_read_ahead_bytes = 0;
    let store = Arc::new(RemoteStore::open(&url, &no_read_ahead).unwrap());
    let array = Array::open(store.clone(), "/").unwrap();
    assert_reads("no versions, version 1", &array, &inner_window(), 1);
    // Nothing kept: the index is read again, and the call that reads the
    // inner chunk asks for it once more (the engine's check that the chunk
    // belongs to it), a request of its own sent at once with the chunk's.
    store.reset_fetched();
    assert_reads("no versions, version 1", &array, &inner_window(), 1);
    assert_eq!(store.fetched().requests, 3, "{:?}", store.fetched());
    assert_eq!(store.fetched().bytes, 64 + 32 + 64, "{:?}", store.fetched());
    // With the default read-ahead, the shard comes whole with its index,
    // every time (nothing kept), and answers all the read asks.
    let shard_len = std::fs::metadata(dir.join("c/0/0")).unwrap().len();
    let store = Arc::new(RemoteStore::open(&url, &options()).unwrap());
    let array = Array::open(store.clone(), "/").unwrap();
    for _ in 0..2 {
        store.reset_fetched();
        assert_reads("no versions, read-ahead", &array, &inner_window(), 1);
        assert_eq!(store.fetched().requests, 1, "{:?}", store.fetched());
        assert_eq!(store.fetched().bytes, shard_len, "{:?}", store.fetched());
    }
    write(&dir, layout, 2);
    assert_reads("no versions, version 2", &array, &inner_window(), 2);
    assert_reads(
        "no versions, version 2",
        &array,
        &ArraySubset::new_with_shape(SHAPE.to_vec()),
        2,
    );
}

/// A server that gives Last-Modified but no ETag, or weak ETags
/// (`W/"..."`): neither is a version an index can be kept by (servers
/// build both from the modification time and the size, so a same-size
/// rewrite within their clock's resolution keeps them, and a kept index
/// would be paired with the new bytes, silently). Nothing is kept, every
/// window reads its shard's index again, exactly as with no versions at
/// all, and a rewrite is seen.
#[test]
fn a_server_with_last_modified_only_or_weak_etags_keeps_no_index_and_sees_rewrites() {
    zarrs_extension_codecs::register_overrides();
    for flag in ["--no-etag", "--weak-etag"] {
        let root = tempfile::tempdir().unwrap();
        let layout = LAYOUTS[0];
        let dir = root.path().join(layout.name());
        write(&dir, layout, 2);
        let server = PythonServer::http_with(root.path(), &[flag]);
        let url = format!("{}/{}", server.url(), layout.name());
        let mut no_read_ahead = options();
        no_read_ahead.shard_read_ahead_bytes = 0;
        let store = Arc::new(RemoteStore::open(&url, &no_read_ahead).unwrap());
        let array = Array::open(store.clone(), "/").unwrap();
        assert_reads(&format!("{flag}, version 2"), &array, &inner_window(), 2);
        store.reset_fetched();
        let second = ArraySubset::new_with_ranges(&[4..8, 4..8]);
        assert_reads(&format!("{flag}, version 2"), &array, &second, 2);
        // As with no versions: the index, then the chunk with the index
        // again (a kept index would make it one request).
        assert_eq!(store.fetched().requests, 3, "{flag}: {:?}", store.fetched());
        write(&dir, layout, 3);
        for window in [inner_window(), second] {
            assert_reads(&format!("{flag}, version 3"), &array, &window, 3);
        }
    }
}

/// Delete `key` from `bucket` of moto at `url`.
fn delete_object(url: &str, bucket: &str, key: &str) {
    use object_store::ObjectStoreExt;
    let store = moto_bucket(url, bucket);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(store.delete(&object_store::path::Path::from(key)))
        .unwrap();
}

/// A shard deleted while a store keeps its index (zarr-python deletes a
/// shard that becomes all fill value) reads as the fill value, through the
/// read engine and through zarrs' own reads, over HTTP and S3 (which
/// answers 404 even to a read on condition of a version); recreated, it
/// reads its new values. Before, the S3 store kept the index of the
/// deleted shard and every read failed with "the object changed".
#[test]
fn a_deleted_shard_reads_as_the_fill_value_and_a_recreated_one_anew() {
    zarrs_extension_codecs::register_overrides();
    let layouts = [LAYOUTS[0], LAYOUTS[3]];
    let (root, http, s3) = served_layouts(&layouts, 2, "deleted");
    let first_shard = ArraySubset::new_with_ranges(&[0..8, 0..8]);
    for layout in layouts {
        let name = layout.name();
        let dir = root.path().join(&name);
        let stores = http_and_s3(&http, &s3, "deleted", layout, &options());
        for (what, store) in &stores {
            let what = format!("{what} {layout:?}");
            let array = Array::open(store.clone(), "/").unwrap();
            // Version 2 stores every inner chunk: its index is kept.
            for _ in 0..2 {
                assert_reads(&what, &array, &inner_window(), 2);
            }
            std::fs::remove_file(dir.join("c/0/0")).unwrap();
            delete_object(&s3.url(), "deleted", &format!("{name}/c/0/0"));
            for window in [inner_window(), first_shard.clone()] {
                let fill = vec![0u16; window.num_elements_usize()];
                let engine: Vec<u16> = array
                    .retrieve_array_subset_vec(&window)
                    .unwrap_or_else(|e| panic!("{what}, engine, deleted: {e}"));
                assert_eq!(engine, fill, "{what}, engine, deleted");
                let zarrs: Vec<u16> = array
                    .retrieve_array_subset(&window)
                    .unwrap_or_else(|e| panic!("{what}, zarrs, deleted: {e}"));
                assert_eq!(zarrs, fill, "{what}, zarrs, deleted");
            }
            // Recreated, at another version: its new values.
            write(&dir, layout, 4);
            upload_shards(&s3.url(), "deleted", &name, &dir);
            assert_reads(&format!("{what}, recreated"), &array, &inner_window(), 4);
            write(&dir, layout, 2);
            upload_shards(&s3.url(), "deleted", &name, &dir);
        }
    }
}

/// The async API: a rewritten shard reads its new values through
/// `AsyncArrayReadExt` too.
#[tokio::test(flavor = "current_thread")]
async fn async_reads_see_a_rewritten_shard_too() {
    use zarrs_extension_codecs::AsyncArrayReadExt;
    use zarrs_extension_codecs::remote::AsyncRemoteStore;
    zarrs_extension_codecs::register_overrides();
    let root = tempfile::tempdir().unwrap();
    let layout = LAYOUTS[0];
    let dir = root.path().join(layout.name());
    // Version 2 has every inner chunk, so its index is kept (one with a
    // missing chunk is not, and would test no cache); version 3 moves the
    // inner chunks.
    write(&dir, layout, 2);
    let server = PythonServer::http(root.path(), 0);
    let url = format!("{}/{}", server.url(), layout.name());
    let store = Arc::new(AsyncRemoteStore::open(&url, &options()).unwrap());
    let array = Array::async_open(store.clone(), "/").await.unwrap();
    for version in [2, 3] {
        if version == 3 {
            write(&dir, layout, 3);
        }
        let got: Vec<u16> = array
            .async_retrieve_array_subset_vec(&inner_window())
            .await
            .unwrap();
        assert_eq!(got, values(version, &inner_window()), "version {version}");
    }
}

/// A reader served a kept index reads its inner chunks with a later
/// request; in between, other shards' indexes may push that index out
/// past the limit (concurrent readers of other shards). The chunk read
/// must still be conditional on the version of the index it was served: a
/// shard rewritten since fails with "the object changed" (and the read
/// path reads once more), never reads the new bytes at the old offsets.
/// The interleaving is played out here request by request.
#[test]
fn a_chunk_read_after_its_index_was_dropped_past_the_limit_is_still_checked() {
    use zarrs::storage::byte_range::ByteRange;
    let root = tempfile::tempdir().unwrap();
    let layout = LAYOUTS[0]; // no compression, no crc32c, index at the end
    let dir = root.path().join(layout.name());
    write(&dir, layout, 2);
    let server = PythonServer::http(root.path(), 0);
    let url = format!("{}/{}", server.url(), layout.name());
    let mut options = options();
    // One index: 4 inner chunks of 16 bytes (offset, length).
    options.shard_index_cache_bytes = 64;
    let store = RemoteStore::open(&url, &options).unwrap();
    let key = |k: &str| k.try_into().unwrap();
    let index_range = ByteRange::Suffix(64);
    // Kept, then served from the cache as a reader would be.
    store
        .get_partial(&key("c/0/0"), index_range)
        .unwrap()
        .unwrap();
    store.reset_fetched();
    let index = store
        .get_partial(&key("c/0/0"), index_range)
        .unwrap()
        .unwrap();
    assert_eq!(store.fetched().requests, 0, "the index is not kept");
    let entry = |i: usize| u64::from_le_bytes(index[i..i + 8].try_into().unwrap());
    let (offset, length) = (entry(16), entry(24));
    // Another shard's index takes the room; the shard is rewritten.
    store
        .get_partial(&key("c/0/1"), index_range)
        .unwrap()
        .unwrap();
    write(&dir, layout, 3);
    let chunk = store.get_partial(&key("c/0/0"), ByteRange::FromStart(offset, Some(length)));
    match chunk {
        Err(error) => {
            // Typed, so that the read path reads again.
            let changed = zarrs_extension_codecs::ObjectChanged::in_storage_error(&error);
            assert!(
                changed.is_some_and(|c| c.location().ends_with("c/0/0")),
                "{error}"
            );
            let error = error.to_string();
            assert!(error.contains("the object changed"), "{error}");
            // What to do when it is not a rewrite but the server.
            assert!(error.contains("shard_index_cache_bytes to 0"), "{error}");
        }
        Ok(bytes) => panic!(
            "the inner chunk was read from the new version at the old index's offsets: {:?}",
            bytes.map(|b| b.len())
        ),
    }
}

/// Rewrites one array on both servers: its directory (served by
/// Starlette) and its copy in moto's bucket.
#[derive(Clone)]
struct Rewriter {
    root: std::path::PathBuf,
    layout: Layout,
    s3_url: String,
    bucket: String,
}

impl Rewriter {
    /// The rewriter of `layout`'s store under `root`, served over S3 by `s3`.
    fn new(root: &std::path::Path, layout: Layout, s3: &PythonServer) -> Self {
        Self {
            root: root.to_path_buf(),
            layout,
            s3_url: s3.url(),
            bucket: "race".to_string(),
        }
    }

    fn to(&self, version: u16) {
        let name = self.layout.name();
        let dir = self.root.join(&name);
        write(&dir, self.layout, version);
        upload_shards(&self.s3_url, &self.bucket, &name, &dir);
    }
}

/// The range of `layout`'s shard index: 4 inner chunks of 16 bytes
/// (offset, length), then `crc32c`'s 4 bytes.
fn index_range(layout: Layout) -> zarrs::storage::byte_range::ByteRange {
    use zarrs::storage::byte_range::ByteRange;
    let len = 4 * 16 + if layout.crc32c { 4 } else { 0 };
    if layout.index_at_start {
        ByteRange::FromStart(0, Some(len))
    } else {
        ByteRange::Suffix(len)
    }
}

/// Whether `ranges`, asked for of `key`, read inner chunks of shard
/// `shard` (any range but its index's): where a reader that has its index
/// reads its chunks.
fn reads_chunks(
    key: &zarrs::storage::StoreKey,
    ranges: &[zarrs::storage::byte_range::ByteRange],
    shard: &str,
    index: zarrs::storage::byte_range::ByteRange,
) -> bool {
    key.as_str() == shard && ranges.iter().any(|r| *r != index)
}

/// A store that forwards every read to a remote store, and, at the first
/// read of inner chunks of shard `c/0/0` once a race is set, first runs
/// the race: the shard is rewritten and another read of it goes through
/// the same remote store, so that it sees the change and keeps the new
/// index. The read that set off the race was served the old index and
/// reads its chunks after: two reads of one shard at once, interleaved
/// the one way that used to read new bytes at the old offsets, played
/// out deterministically.
struct Racing {
    remote: Arc<RemoteStore>,
    index: zarrs::storage::byte_range::ByteRange,
    race: std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl ReadableStorageTraits for Racing {
    fn get(
        &self,
        key: &zarrs::storage::StoreKey,
    ) -> Result<zarrs::storage::MaybeBytes, zarrs::storage::StorageError> {
        self.remote.get(key)
    }

    fn get_partial_many<'a>(
        &'a self,
        key: &zarrs::storage::StoreKey,
        byte_ranges: zarrs::storage::byte_range::ByteRangeIterator<'a>,
    ) -> Result<zarrs::storage::MaybeBytesIterator<'a>, zarrs::storage::StorageError> {
        let ranges: Vec<_> = byte_ranges.collect();
        if reads_chunks(key, &ranges, "c/0/0", self.index) {
            let race = self.race.lock().unwrap().take();
            if let Some(race) = race {
                race();
            }
        }
        self.remote
            .get_partial_many(key, Box::new(ranges.into_iter()))
    }

    fn size_key(
        &self,
        key: &zarrs::storage::StoreKey,
    ) -> Result<Option<u64>, zarrs::storage::StorageError> {
        self.remote.size_key(key)
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

/// `layouts` written at `version` under a new directory, served over HTTP
/// and over S3 (in `bucket`).
fn served_layouts(
    layouts: &[Layout],
    version: u16,
    bucket: &str,
) -> (tempfile::TempDir, PythonServer, PythonServer) {
    let root = tempfile::tempdir().unwrap();
    for &layout in layouts {
        write(&root.path().join(layout.name()), layout, version);
    }
    let http = PythonServer::http(root.path(), 0);
    let s3 = PythonServer::s3(bucket, root.path());
    (root, http, s3)
}

/// `layouts` at version 2, over HTTP and S3 (bucket `race`, which
/// [`Rewriter`] rewrites).
fn race_servers(layouts: &[Layout]) -> (tempfile::TempDir, PythonServer, PythonServer) {
    served_layouts(layouts, 2, "race")
}

/// Two reads of one shard at once after it was rewritten: B sees the
/// change (412), drops the old index and keeps the new one, while A, which
/// was served the old index, reads its inner chunks after. The store makes
/// A's chunk read conditional on the version it keeps then, the new one,
/// so the request succeeds.
///
/// Before the read engine checked the index, A decoded the new version's
/// bytes at the old index's offsets, which this test showed in every case,
/// over HTTP and S3: without gzip (`crc32c` covers the index only, which
/// is right), the window of inner chunk [0, 1] read the values of inner
/// chunk [1, 0] (2 -> 3) or [0, 0] (3 -> 4), silently; with gzip, "invalid
/// gzip header" for 2 -> 3 (an error that does not read again) and, for
/// 3 -> 4, where the old offset is the start of inner chunk [0, 0], its
/// values, silently too. Now the engine asks for the index range again in
/// the call that reads the chunks; the store answers it from the entry
/// whose version it puts on the chunk requests, so it differs from the
/// index A decoded, A's attempt fails with "the object changed", and
/// `ArrayReadExt` reads once more: the new values.
///
/// 2 -> 3: A is served the old index from the cache; B keeps the new one,
/// which has a missing inner chunk (kept for the check only). 3 -> 4: A
/// reads the old index anew (it has a missing chunk), B keeps the new one
/// and serves it: A's chunk read is conditional on the new version, the
/// interleaving `docs/stores-and-remote.md` described as not covered.
#[test]
fn two_reads_of_a_shard_rewritten_meanwhile_both_read_its_new_values() {
    zarrs_extension_codecs::register_overrides();
    let (root, http, s3) = race_servers(&LAYOUTS);
    for layout in LAYOUTS {
        let name = layout.name();
        let rewriter = Rewriter::new(root.path(), layout, &s3);
        for what in ["http", "s3"] {
            rewriter.to(2);
            let remote = Arc::new(
                match what {
                    "http" => RemoteStore::open(&format!("{}/{name}", http.url()), &options()),
                    _ => RemoteStore::open(&format!("s3://race/{name}"), &s3_options(&s3.url())),
                }
                .unwrap(),
            );
            let racing = Arc::new(Racing {
                remote: remote.clone(),
                index: index_range(layout),
                race: std::sync::Mutex::new(None),
            });
            let a = Array::open(racing.clone(), "/").unwrap();
            let b = Arc::new(Array::open(remote.clone(), "/").unwrap());
            let what = format!("{what} {name}");
            // Every inner chunk stored: the index is kept.
            assert_reads(&format!("{what} version 2"), &a, &inner_window(), 2);
            for version in [3, 4] {
                let (rewriter, b, what_b) = (
                    rewriter.clone(),
                    b.clone(),
                    format!("{what} version {version}, the other read"),
                );
                *racing.race.lock().unwrap() = Some(Box::new(move || {
                    rewriter.to(version);
                    assert_reads(&what_b, &*b, &inner_window(), version);
                }));
                assert_reads(
                    &format!("{what} version {version}, the read served the old index"),
                    &a,
                    &inner_window(),
                    version,
                );
                assert!(
                    racing.race.lock().unwrap().is_none(),
                    "{what}: no chunk read"
                );
            }
        }
    }
}

/// A server that gives no version: nothing is kept, and the store cannot
/// make the chunk read conditional on anything. A shard rewritten between
/// a read's index and its chunks (here by the race of the test above)
/// read new bytes at the old offsets (wrong values, silently); the engine
/// now reads the index again with the chunks, sees that it changed, and
/// reads once more.
#[test]
fn a_shard_rewritten_between_index_and_chunks_on_a_server_without_versions() {
    zarrs_extension_codecs::register_overrides();
    let root = tempfile::tempdir().unwrap();
    let layout = LAYOUTS[0];
    let dir = root.path().join(layout.name());
    write(&dir, layout, 2);
    let server = PythonServer::http_with(root.path(), &["--no-versions"]);
    let url = format!("{}/{}", server.url(), layout.name());
    // No read-ahead, and one of the index and two bytes (a read-ahead that
    // brings the whole shard leaves no request to race with). Bytes held
    // with no version answer nothing of a call that must fetch too: the
    // index range is fetched beside the chunk.
    for read_ahead in [0, 66] {
        write(&dir, layout, 2);
        for version in [3, 4] {
            // A store of its own: its first index read reads ahead (a
            // shard seen larger than the read-ahead stops it).
            let mut options = options();
            options.shard_read_ahead_bytes = read_ahead;
            let remote = Arc::new(RemoteStore::open(&url, &options).unwrap());
            let racing = Arc::new(Racing {
                remote: remote.clone(),
                index: index_range(layout),
                race: std::sync::Mutex::new(None),
            });
            let array = Array::open(racing.clone(), "/").unwrap();
            let dir = dir.clone();
            *racing.race.lock().unwrap() = Some(Box::new(move || write(&dir, layout, version)));
            let what = format!(
                "no versions, read-ahead {read_ahead}, rewritten to {version} before the chunks"
            );
            assert_reads(&what, &array, &inner_window(), version);
            assert!(racing.race.lock().unwrap().is_none(), "no chunk read");
        }
    }
}

/// The async twin of [`Racing`], over an [`AsyncRemoteStore`]: the race is
/// a future, awaited before the first read of inner chunks of `c/0/0` once
/// set.
#[cfg(feature = "async")]
struct AsyncRacing {
    remote: Arc<zarrs_extension_codecs::remote::AsyncRemoteStore>,
    index: zarrs::storage::byte_range::ByteRange,
    race: std::sync::Mutex<Option<futures::future::BoxFuture<'static, ()>>>,
}

#[async_trait::async_trait]
impl zarrs::storage::AsyncReadableStorageTraits for AsyncRacing {
    async fn get(
        &self,
        key: &zarrs::storage::StoreKey,
    ) -> Result<zarrs::storage::MaybeBytes, zarrs::storage::StorageError> {
        self.remote.get(key).await
    }

    async fn get_partial_many<'a>(
        &'a self,
        key: &zarrs::storage::StoreKey,
        byte_ranges: zarrs::storage::byte_range::ByteRangeIterator<'a>,
    ) -> Result<zarrs::storage::AsyncMaybeBytesIterator<'a>, zarrs::storage::StorageError> {
        let ranges: Vec<_> = byte_ranges.collect();
        let race = if reads_chunks(key, &ranges, "c/0/0", self.index) {
            self.race.lock().unwrap().take()
        } else {
            None
        };
        if let Some(race) = race {
            race.await;
        }
        self.remote
            .get_partial_many(key, Box::new(ranges.into_iter()))
            .await
    }

    async fn size_key(
        &self,
        key: &zarrs::storage::StoreKey,
    ) -> Result<Option<u64>, zarrs::storage::StorageError> {
        self.remote.size_key(key).await
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

/// The race of [`two_reads_of_a_shard_rewritten_meanwhile_both_read_its_new_values`]
/// on the async API (`AsyncArrayReadExt`), over HTTP and S3, without
/// compression and `crc32c` (where it read wrong values silently) and with
/// both.
#[cfg(feature = "async")]
#[tokio::test(flavor = "current_thread")]
async fn async_two_reads_of_a_shard_rewritten_meanwhile_both_read_its_new_values() {
    use futures::FutureExt;
    use zarrs_extension_codecs::AsyncArrayReadExt;
    use zarrs_extension_codecs::remote::AsyncRemoteStore;
    zarrs_extension_codecs::register_overrides();
    let layouts = [LAYOUTS[0], LAYOUTS[3], LAYOUTS[4]];
    let (root, http, s3) = race_servers(&layouts);
    for layout in layouts {
        let name = layout.name();
        let rewriter = Rewriter::new(root.path(), layout, &s3);
        // `upload_shards` runs a runtime of its own: not on this one's thread.
        let rewrite = |rewriter: Rewriter, version: u16| {
            std::thread::spawn(move || rewriter.to(version))
                .join()
                .unwrap();
        };
        for what in ["http", "s3"] {
            rewrite(rewriter.clone(), 2);
            let remote = Arc::new(
                match what {
                    "http" => AsyncRemoteStore::open(&format!("{}/{name}", http.url()), &options()),
                    _ => {
                        AsyncRemoteStore::open(&format!("s3://race/{name}"), &s3_options(&s3.url()))
                    }
                }
                .unwrap(),
            );
            let racing = Arc::new(AsyncRacing {
                remote: remote.clone(),
                index: index_range(layout),
                race: std::sync::Mutex::new(None),
            });
            let a = Array::async_open(racing.clone(), "/").await.unwrap();
            let b = Arc::new(Array::async_open(remote.clone(), "/").await.unwrap());
            let what = format!("async {what} {name}");
            let window = inner_window();
            let got: Vec<u16> = a.async_retrieve_array_subset_vec(&window).await.unwrap();
            assert_eq!(got, values(2, &window), "{what} version 2");
            for version in [3, 4] {
                let (rewriter, b, what_b) = (
                    rewriter.clone(),
                    b.clone(),
                    format!("{what} version {version}, the other read"),
                );
                *racing.race.lock().unwrap() = Some(
                    async move {
                        rewrite(rewriter, version);
                        let window = inner_window();
                        let got: Vec<u16> = b
                            .async_retrieve_array_subset_vec(&window)
                            .await
                            .unwrap_or_else(|e| panic!("{what_b}: {e}"));
                        assert_eq!(got, values(version, &window), "{what_b}");
                    }
                    .boxed(),
                );
                let got: Vec<u16> = a
                    .async_retrieve_array_subset_vec(&window)
                    .await
                    .unwrap_or_else(|e| panic!("{what} version {version}: {e}"));
                assert_eq!(
                    got,
                    values(version, &window),
                    "{what} version {version}, the read served the old index"
                );
                assert!(
                    racing.race.lock().unwrap().is_none(),
                    "{what}: no chunk read"
                );
            }
        }
    }
}

/// `shard_read_ahead_bytes`: a shard no larger is read whole with its
/// index, so the first window of it is one request; the held shard answers
/// only the engine's call that follows its index read, so a shard
/// rewritten afterwards (even after a window that needed no chunk, whose
/// read leaves the shard held) reads its new values. A shard larger than
/// the read-ahead costs two requests, as without it, and reads right. Over
/// HTTP and S3, every layout (index at the end and at the start,
/// compressed or not, crc32c or not).
#[test]
fn read_ahead_reads_a_first_window_of_a_small_shard_in_one_request_and_never_stale() {
    zarrs_extension_codecs::register_overrides();
    let (root, http, s3) = served_layouts(&LAYOUTS, 2, "ahead");
    let open = |layout: Layout, read_ahead: u64| {
        let mut options = options();
        options.shard_read_ahead_bytes = read_ahead;
        http_and_s3(&http, &s3, "ahead", layout, &options)
    };
    let second = ArraySubset::new_with_ranges(&[4..8, 4..8]);
    for layout in LAYOUTS {
        let rewrite = |version: u16| {
            let dir = root.path().join(layout.name());
            write(&dir, layout, version);
            upload_shards(&s3.url(), "ahead", &layout.name(), &dir);
        };
        // A read-ahead larger than any shard (under 300 bytes here).
        for (what, store) in open(layout, 1 << 20) {
            let what = format!("{what} {layout:?}, read-ahead");
            let array = Array::open(store.clone(), "/").unwrap();
            store.reset_fetched();
            assert_reads(&what, &array, &inner_window(), 2);
            assert_eq!(store.fetched().requests, 1, "{what}: {:?}", store.fetched());
            // The index is kept: a window of another inner chunk is the
            // chunk's request, conditional on the shard's version.
            store.reset_fetched();
            assert_reads(&what, &array, &second, 2);
            assert_eq!(store.fetched().requests, 1, "{what}: {:?}", store.fetched());
            // A window of a shard none of whose inner chunks is asked for
            // beyond its index: all of the array, then a rewrite.
            assert_reads(
                &what,
                &array,
                &ArraySubset::new_with_shape(SHAPE.to_vec()),
                2,
            );
        }
        // Version 3 leaves the first inner chunk of each shard missing: a
        // window of it alone reads the shard whole with its index and
        // sends no call for chunks, so the shard stays held. The shard is
        // then rewritten as version 5: the same chunks missing, so
        // without compression the same index, other values. The next
        // window reads the index anew (kept for the check of chunk reads
        // only: it marks a missing chunk) and must not have its chunks
        // answered from the held version 3, whose index range would pass
        // the engine's check.
        rewrite(3);
        let stores = open(layout, 1 << 20);
        let arrays: Vec<_> = stores
            .iter()
            .map(|(_, store)| Array::open(store.clone(), "/").unwrap())
            .collect();
        let missing = ArraySubset::new_with_ranges(&[0..4, 0..4]);
        for ((what, _), array) in stores.iter().zip(&arrays) {
            assert_reads(&format!("{what} {layout:?} version 3"), array, &missing, 3);
        }
        rewrite(5);
        for ((what, _), array) in stores.iter().zip(&arrays) {
            let what = format!("{what} {layout:?} version 5");
            assert_reads(&what, array, &inner_window(), 5);
            assert_reads(&what, array, &missing, 5);
        }
        // A read-ahead a little larger than the index, smaller than the
        // shard: index and some bytes beside it, then the chunks.
        for (what, store) in open(layout, 80) {
            let what = format!("{what} {layout:?}, short read-ahead");
            let array = Array::open(store.clone(), "/").unwrap();
            store.reset_fetched();
            assert_reads(&what, &array, &inner_window(), 5);
            assert_eq!(store.fetched().requests, 2, "{what}: {:?}", store.fetched());
            assert_reads(
                &what,
                &array,
                &ArraySubset::new_with_ranges(&[2..7, 3..13]),
                5,
            );
        }
    }
}

/// An array opened from metadata read elsewhere (`Array::new_with_metadata`,
/// as the Python pipeline opens zarr's arrays) with its shard indexes at
/// the start: the store recognises a read of such an index only once it
/// knows the array's `zarr.json`, so it keeps none until
/// `RemoteStore::note_metadata` tells it; then a second window of a shard
/// is one request.
#[test]
fn indexes_at_the_start_are_kept_once_the_store_is_told_the_metadata() {
    zarrs_extension_codecs::register_overrides();
    let root = tempfile::tempdir().unwrap();
    let layout = LAYOUTS[4];
    assert!(layout.index_at_start);
    let dir = root.path().join(layout.name());
    write(&dir, layout, 2);
    let zarr_json = std::fs::read(dir.join("zarr.json")).unwrap();
    let metadata: zarrs::array::ArrayMetadata = serde_json::from_slice(&zarr_json).unwrap();
    let http = PythonServer::http(root.path(), 0);
    let second = ArraySubset::new_with_ranges(&[4..8, 4..8]);
    for told in [false, true] {
        let url = format!("{}/{}", http.url(), layout.name());
        let store = Arc::new(RemoteStore::open(&url, &options()).unwrap());
        if told {
            store.note_metadata("zarr.json", &zarr_json);
        }
        let array = Array::new_with_metadata(store.clone(), "/", metadata.clone()).unwrap();
        assert_reads("first window", &array, &inner_window(), 2);
        store.reset_fetched();
        assert_reads("second window", &array, &second, 2);
        // Not told: the index is read again, then the chunk (with the
        // index range beside it, which object_store coalesces: it is near).
        let want = if told { 1 } else { 2 };
        assert_eq!(
            store.fetched().requests,
            want,
            "told {told}: {:?}",
            store.fetched()
        );
    }
}

/// `(offset, length)` of each inner chunk of shard `c/0/0` of `layout`'s
/// array at `dir` (its index read from the file), and the shard's size.
fn inner_chunks(dir: &Path, layout: Layout) -> (Vec<(u64, u64)>, u64) {
    let shard = std::fs::read(dir.join("c/0/0")).unwrap();
    let index = if layout.index_at_start {
        &shard[..64]
    } else {
        let end = shard.len() - if layout.crc32c { 4 } else { 0 };
        &shard[end - 64..end]
    };
    let word = |i: usize| u64::from_le_bytes(index[8 * i..8 * i + 8].try_into().unwrap());
    let chunks = (0..4).map(|i| (word(2 * i), word(2 * i + 1))).collect();
    (chunks, shard.len() as u64)
}

/// The window of inner chunk `i` (in C order) of shard [0, 0].
fn inner(i: u64) -> ArraySubset {
    let (row, column) = (i / 2 * 4, i % 2 * 4);
    ArraySubset::new_with_ranges(&[row..row + 4, column..column + 4])
}

/// A read-ahead shorter than the shard: the index read brings the last
/// (or first) bytes of the shard, and a first window whose inner chunk lies
/// in them is one request; one whose chunk does not is two, the chunk's
/// request conditional on the version the held bytes came from. Once a
/// store has seen a shard larger than its read-ahead, first windows of the
/// array's other shards read the index alone. Over HTTP and S3, every
/// layout.
#[test]
fn a_short_read_ahead_answers_the_chunks_it_holds_and_then_stops() {
    zarrs_extension_codecs::register_overrides();
    let (root, http, s3) = race_servers(&LAYOUTS);
    for layout in LAYOUTS {
        let dir = root.path().join(layout.name());
        let (chunks, size) = inner_chunks(&dir, layout);
        let index_len = 64 + if layout.crc32c { 4 } else { 0 };
        // The index and the inner chunk next to it, not more.
        let next = if layout.index_at_start {
            chunks.iter().min_by_key(|c| c.0).unwrap()
        } else {
            chunks.iter().max_by_key(|c| c.0).unwrap()
        };
        let read_ahead = index_len + next.1;
        let held = if layout.index_at_start {
            0..read_ahead
        } else {
            size - read_ahead..size
        };
        let inside: Vec<bool> = chunks
            .iter()
            .map(|&(offset, len)| held.start <= offset && offset + len <= held.end)
            .collect();
        assert_eq!(inside.iter().filter(|&&i| i).count(), 1, "{layout:?}");
        let mut options = options();
        options.shard_read_ahead_bytes = read_ahead;
        for i in 0..4 {
            for (what, store) in http_and_s3(&http, &s3, "race", layout, &options) {
                let what = format!("{what} {layout:?}, inner chunk {i}");
                let array = Array::open(store.clone(), "/").unwrap();
                store.reset_fetched();
                assert_reads(&what, &array, &inner(i), 2);
                let fetched = store.fetched();
                let (requests, bytes) = if inside[i as usize] {
                    (1, read_ahead)
                } else {
                    (2, read_ahead + chunks[i as usize].1)
                };
                assert_eq!(
                    (fetched.requests, fetched.bytes),
                    (requests, bytes),
                    "{what}: {fetched:?}"
                );
                // Shard [0, 0] is larger than the read-ahead: shard [1, 1]'s
                // first window reads its index alone, then its chunk.
                store.reset_fetched();
                assert_reads(
                    &what,
                    &array,
                    &ArraySubset::new_with_ranges(&[8..12, 8..12]),
                    2,
                );
                let fetched = store.fetched();
                assert_eq!(fetched.requests, 2, "{what}: {fetched:?}");
                assert!(fetched.bytes < index_len + 64, "{what}: {fetched:?}");
            }
        }
    }
}

/// A shard rewritten between the index read that brought some of its bytes
/// and the call for a chunk outside them: that chunk's request is
/// conditional on the version of the bytes held, so the read fails with
/// the object changed and reads again, the new values. Version 3 leaves
/// the first inner chunk missing, so the chunk asked for moved: read at its
/// old offset without the condition, it would be another chunk's values.
#[test]
fn a_shard_rewritten_after_a_short_read_ahead_reads_its_new_values() {
    zarrs_extension_codecs::register_overrides();
    let layouts = [LAYOUTS[0], LAYOUTS[3], LAYOUTS[4]];
    let (root, http, s3) = race_servers(&layouts);
    for layout in layouts {
        let rewriter = Rewriter::new(root.path(), layout, &s3);
        rewriter.to(2);
        // Two bytes more than the index: no inner chunk comes with it.
        let mut options = options();
        options.shard_read_ahead_bytes = 64 + if layout.crc32c { 4 } else { 0 } + 2;
        // The race: the rewrite alone, or the rewrite and then another
        // reader's index read through the same store, which reads ahead
        // too (the new version) and holds what it read for the chunk call
        // that comes next: the first reader's, with the old index.
        for other in [false, true] {
            for (what, remote) in http_and_s3(&http, &s3, "race", layout, &options) {
                rewriter.to(2);
                let what = format!("{what} {layout:?}, other reader {other}");
                let racing = Arc::new(Racing {
                    remote: remote.clone(),
                    index: index_range(layout),
                    race: std::sync::Mutex::new(None),
                });
                let array = Array::open(racing.clone(), "/").unwrap();
                let (rewriter, index, by_other) =
                    (rewriter.clone(), index_range(layout), remote.clone());
                *racing.race.lock().unwrap() = Some(Box::new(move || {
                    rewriter.to(3);
                    if other {
                        let key = "c/0/0".try_into().unwrap();
                        by_other
                            .get_partial_many(&key, Box::new([index].into_iter()))
                            .unwrap();
                    }
                }));
                remote.reset_fetched();
                assert_reads(&what, &array, &inner_window(), 3);
                assert!(
                    racing.race.lock().unwrap().is_none(),
                    "{what}: no chunk read"
                );
                // The index with two bytes, the refused chunk read (or the
                // other reader's index read), then the new index and the
                // chunk; zarrs may ask for the shard's size on the way.
                let fetched = remote.fetched();
                assert!((4..=6).contains(&fetched.requests), "{what}: {fetched:?}");
            }
        }
    }
}

/// A shard index whose inner chunk [0, 1] lies past the end of the shard,
/// beside [0, 0] inside it: the two ranges are fetched in one coalesced
/// request, which the server trims to the end of the shard. The read is an
/// error naming the shard (it was a panic: object_store sliced the range
/// past the end out of the trimmed bytes), with and without read-ahead,
/// over HTTP and S3.
#[test]
fn an_index_pointing_past_the_end_of_its_shard_is_an_error() {
    zarrs_extension_codecs::register_overrides();
    let root = tempfile::tempdir().unwrap();
    let layout = LAYOUTS[0];
    assert!(!layout.gzip && !layout.crc32c && !layout.index_at_start);
    let dir = root.path().join(layout.name());
    write(&dir, layout, 2);
    let shard = dir.join("c/0/0");
    let mut bytes = std::fs::read(&shard).unwrap();
    // The index's second entry (16 bytes each after the 128 of chunks).
    let entry = bytes.len() - 64 + 16;
    bytes[entry..entry + 8].copy_from_slice(&300u64.to_le_bytes());
    std::fs::write(&shard, &bytes).unwrap();
    let http = PythonServer::http(root.path(), 0);
    let s3 = PythonServer::s3("past", root.path());
    let two_chunks = ArraySubset::new_with_ranges(&[0..4, 0..8]);
    for read_ahead in [0, 1 << 20] {
        let mut options = options();
        options.shard_read_ahead_bytes = read_ahead;
        for (what, store) in http_and_s3(&http, &s3, "past", layout, &options) {
            let array = Array::open(store, "/").unwrap();
            let error = array
                .retrieve_array_subset_vec::<u16>(&two_chunks)
                .unwrap_err()
                .to_string();
            eprintln!("{what}, read-ahead {read_ahead}: {error}");
            assert!(
                error.contains("c/0/0"),
                "{what}, read-ahead {read_ahead}: {error}"
            );
        }
    }
}
