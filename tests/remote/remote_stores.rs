//! Remote reads through object_store (`zarrs_extension_codecs::remote`),
//! against real servers the tests start: Starlette's `StaticFiles` under
//! uvicorn (a standard server: multi-range requests get
//! `multipart/byteranges`) and moto's S3 server mode, both from the
//! repository's `.venv`.
//!
//! Every fixture store reads, whole and in windows, exactly as from the
//! filesystem (sharded arrays with `transpose` inside included, through
//! this crate's codecs: `register_overrides()` first); a window of one inner
//! chunk fetches that inner chunk and its shard's index, no more. Servers
//! that misbehave (a truncated object, 403, a `Range` ignored, a connection
//! dropped mid-body, nothing listening) give errors that name the key, and
//! never values.
#![cfg(feature = "remote")]

use crate::common;
use crate::http_server;
use crate::inspect;
use crate::servers;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::{copy_tree, files_under, fixture_names, u64s};
use http_server::{HttpServer, Misbehaviour};
use servers::{PythonServer, fixtures_root};
use zarrs::array::{Array, ArrayBytes, ArraySubset};
use zarrs::filesystem::FilesystemStore;
use zarrs::storage::{ListableStorageTraits, ReadableStorageTraits, StoreKey, StorePrefix};
use zarrs_extension_codecs::remote::{RemoteOptions, RemoteStore};

/// The directories of fixture stores under `fixtures/`.
const FIXTURE_DIRS: [&str; 6] = [
    "zarr-python",
    "zarr-python-core",
    "zarr-python-strings",
    "tensorstore",
    "zarrs-builtin/packbits",
    "zarrs-builtin/vlen",
];

/// The bucket the S3 server holds `fixtures/` in.
const BUCKET: &str = "fixtures";

/// The HTTP server of `fixtures/`, shared by the tests of this file (it
/// exits with the test process: its stdin closes).
fn http_fixtures() -> &'static PythonServer {
    static SERVER: std::sync::OnceLock<PythonServer> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| PythonServer::http(&fixtures_root(), 0))
}

/// The S3 server with `fixtures/` in [`BUCKET`], shared likewise (one
/// upload for all the tests).
fn s3_fixtures() -> &'static PythonServer {
    static SERVER: std::sync::OnceLock<PythonServer> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| PythonServer::s3(BUCKET, &fixtures_root()))
}

/// Fail fast: the tests' servers are on this machine.
fn options() -> RemoteOptions {
    let mut options = RemoteOptions::default();
    options.max_retries = 1;
    options.retry_timeout = Duration::from_secs(5);
    options.timeout = Duration::from_secs(20);
    options
}

/// Options for the moto server at `url`, signed with moto's test keys.
fn s3_options(url: &str) -> RemoteOptions {
    servers::moto_options(options(), url)
}

/// The whole array, then each subset in `NAME.expected.json`, then the
/// array minus a border of a third in each dimension (a window that cuts
/// chunks and shards).
fn subsets(meta: &serde_json::Value, shape: &[u64]) -> Vec<ArraySubset> {
    let mut out = vec![ArraySubset::new_with_shape(shape.to_vec())];
    for subset in meta["subsets"].as_array().into_iter().flatten() {
        out.push(
            ArraySubset::new_with_start_shape(u64s(&subset["start"]), u64s(&subset["shape"]))
                .unwrap(),
        );
    }
    let ranges: Vec<_> = shape.iter().map(|&d| d / 3..d - d / 3).collect();
    out.push(ArraySubset::new_with_ranges(&ranges));
    out
}

/// Every fixture store: (directory under `fixtures/`, name).
fn fixture_stores() -> Vec<(&'static str, String)> {
    FIXTURE_DIRS
        .iter()
        .flat_map(|dir| {
            fixture_names(&fixtures_root().join(dir))
                .into_iter()
                .map(move |name| (*dir, name))
        })
        .collect()
}

/// Read every fixture store through the store `open(dir, name)` gives, and
/// compare with the filesystem; the number of stores and reads compared.
fn compare_with_filesystem(what: &str, open: impl Fn(&str, &str) -> RemoteStore) -> (usize, usize) {
    zarrs_extension_codecs::register_overrides();
    let (mut stores, mut reads) = (0, 0);
    for (dir, name) in fixture_stores() {
        let path = fixtures_root().join(dir).join(format!("{name}.zarr"));
        let local = Array::open(Arc::new(FilesystemStore::new(&path).unwrap()), "/");
        let remote = Array::open(Arc::new(open(dir, &name)), "/");
        let (local, remote) = match (local, remote) {
            (Ok(local), Ok(remote)) => (local, remote),
            (Err(_), Err(_)) => continue, // refused either way
            (local, remote) => panic!(
                "{what} {dir}/{name}: opens {} locally, {} remotely",
                local.map_or_else(|e| format!("with an error ({e})"), |_| "fine".into()),
                remote.map_or_else(|e| format!("with an error ({e})"), |_| "fine".into()),
            ),
        };
        assert_eq!(local.metadata(), remote.metadata(), "{what} {dir}/{name}");
        let meta: serde_json::Value = serde_json::from_slice(
            &std::fs::read(
                fixtures_root()
                    .join(dir)
                    .join(format!("{name}.expected.json")),
            )
            .unwrap(),
        )
        .unwrap();
        for subset in subsets(&meta, local.shape()) {
            let want = local.retrieve_array_subset::<ArrayBytes<'static>>(&subset);
            let got = remote.retrieve_array_subset::<ArrayBytes<'static>>(&subset);
            match (want, got) {
                (Ok(want), Ok(got)) => {
                    assert!(want == got, "{what} {dir}/{name} {subset:?}: values differ");
                    reads += 1;
                }
                // zarrs 0.23.14 fails on some edge chunks of `transpose` +
                // `vlen-utf8` (see tests/local/async_stores.rs), wherever they are.
                (Err(_), Err(_)) => {}
                (want, got) => panic!(
                    "{what} {dir}/{name} {subset:?}: local {:?}, remote {:?}",
                    want.map(|_| "values"),
                    got.map(|_| "values")
                ),
            }
        }
        stores += 1;
    }
    (stores, reads)
}

#[test]
fn every_fixture_store_over_http_reads_as_from_the_filesystem() {
    let server = http_fixtures();
    let (stores, reads) = compare_with_filesystem("http", |dir, name| {
        let url = format!("{}/{dir}/{name}.zarr", server.url());
        RemoteStore::open(&url, &options()).unwrap()
    });
    // Six directories with over 130 stores; a glob gone wrong must not pass.
    assert!(stores >= 125, "only {stores} stores read");
    assert!(reads >= 350, "only {reads} reads compared");
}

#[test]
fn every_fixture_store_over_s3_reads_as_from_the_filesystem() {
    let options = s3_options(&s3_fixtures().url());
    let (stores, reads) = compare_with_filesystem("s3", |dir, name| {
        RemoteStore::open(&format!("s3://{BUCKET}/{dir}/{name}.zarr"), &options).unwrap()
    });
    assert!(stores >= 125, "only {stores} stores read");
    assert!(reads >= 350, "only {reads} reads compared");
}

/// `store` holds `fixtures/zarr-python/so_f32.zarr` at `path`: its whole
/// array reads as from the file system.
fn assert_reads_so_f32(store: RemoteStore, path: &str) {
    let array = Array::open(Arc::new(store), path).unwrap();
    let local = fixtures_root().join("zarr-python/so_f32.zarr");
    let local = Array::open(Arc::new(FilesystemStore::new(local).unwrap()), "/").unwrap();
    let all = local.subset_all();
    let want: ArrayBytes<'static> = local.retrieve_array_subset(&all).unwrap();
    let got: ArrayBytes<'static> = array.retrieve_array_subset(&all).unwrap();
    assert!(want == got);
}

/// A public bucket: no credentials, requests unsigned (moto accepts them).
#[test]
fn s3_reads_anonymously_without_credentials() {
    let mut options = options().with_s3_config("aws_endpoint_url", &s3_fixtures().url());
    options.anonymous = Some(true);
    let url = format!("s3://{BUCKET}/zarr-python/so_f32.zarr");
    let store = RemoteStore::open(&url, &options).unwrap();
    assert_reads_so_f32(store, "/");
}

/// Keys are read as written, as the AWS tools, s3fs and obstore name them
/// (object_store's `Path::from` percent-encodes `~`, `[`, `%`, ... and read
/// other keys: the array was not found): in the URL's path, and in the
/// array's path under the store's root, over S3 and HTTP.
#[test]
fn keys_are_read_as_written() {
    let root = tempfile::tempdir().unwrap();
    let name = "so~f32 [1]%41.zarr";
    copy_tree(
        &fixtures_root().join("zarr-python/so_f32.zarr"),
        &root.path().join(name),
    );
    let server = PythonServer::s3("odd", root.path());
    let url = format!("s3://odd/{name}");
    let store = RemoteStore::open(&url, &s3_options(&server.url())).unwrap();
    assert_reads_so_f32(store, "/");
    let store = RemoteStore::open("s3://odd", &s3_options(&server.url())).unwrap();
    // Listed as written too (zarrs_object_store lists `so%7Ef32...`: nothing).
    let root_dir = store.list_dir(&StorePrefix::root()).unwrap();
    assert_eq!(
        root_dir.prefixes(),
        &[StorePrefix::new(format!("{name}/")).unwrap()]
    );
    let array_prefix = StorePrefix::new(format!("{name}/")).unwrap();
    let listed = store.list_prefix(&array_prefix).unwrap();
    let on_disk = files_under(&root.path().join(name));
    assert_eq!(listed.len(), on_disk.len(), "{listed:?}");
    assert!(listed.contains(&StoreKey::new(format!("{name}/zarr.json")).unwrap()));
    let bytes: u64 = on_disk.iter().map(|f| f.metadata().unwrap().len()).sum();
    assert_eq!(store.size_prefix(&array_prefix).unwrap(), bytes);
    assert_eq!(store.list().unwrap(), listed);
    assert_reads_so_f32(store, &format!("/{name}"));
    // The same through a store at the array's URL (object_store's prefix
    // store under it), and a directory below its root.
    let store = RemoteStore::open(&format!("s3://odd/{name}"), &s3_options(&server.url())).unwrap();
    let top = store.list_dir(&StorePrefix::root()).unwrap();
    assert_eq!(top.keys(), &[StoreKey::new("zarr.json").unwrap()]);
    assert_eq!(top.prefixes(), &[StorePrefix::new("c/").unwrap()]);
    let below = store.list_dir(&StorePrefix::new("c/").unwrap()).unwrap();
    let chunk_dirs = std::fs::read_dir(root.path().join(name).join("c"))
        .unwrap()
        .count();
    assert_eq!(
        below.keys().len() + below.prefixes().len(),
        chunk_dirs,
        "{below:?}"
    );
    assert_eq!(store.list().unwrap().len(), on_disk.len());
    let http = PythonServer::http(root.path(), 0);
    let store = RemoteStore::open(&http.url(), &options()).unwrap();
    assert_reads_so_f32(store, &format!("/{name}"));
    let error = RemoteStore::open("s3://odd/a//b.zarr", &s3_options(&server.url()))
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("not an object key prefix"), "{error}");
    // A `#` is not cut from the path as a fragment: not a URL of a store.
    assert!(RemoteStore::open("s3://odd/a#b.zarr", &s3_options(&server.url())).is_err());
}

/// `(offset, length)` of each inner chunk of the shard file at `shard`, in
/// the C order of the inner grid, from its index (`bytes` little-endian +
/// `crc32c`, at `end` or `start`), as the sharding spec lays it out; and the
/// index's size in bytes.
fn shard_index(shard: &Path, inner_chunks: u64, at_start: bool) -> (Vec<(u64, u64)>, u64) {
    let bytes = std::fs::read(shard).unwrap();
    let index_len = inner_chunks * 16 + 4;
    let index = if at_start {
        &bytes[..index_len as usize]
    } else {
        &bytes[bytes.len() - index_len as usize..]
    };
    let word = |i: usize| u64::from_le_bytes(index[i * 8..i * 8 + 8].try_into().unwrap());
    let entries = (0..inner_chunks as usize)
        .map(|i| (word(2 * i), word(2 * i + 1)))
        .collect();
    (entries, index_len)
}

/// A sharded fixture store.
struct Sharded {
    store: PathBuf,
    shape: Vec<u64>,
    shard_shape: Vec<u64>,
    inner_shape: Vec<u64>,
    index_at_start: bool,
}

/// The sharded fixture stores.
fn sharded_stores() -> Vec<Sharded> {
    let mut out = vec![];
    for (dir, name) in fixture_stores() {
        let store = fixtures_root().join(dir).join(format!("{name}.zarr"));
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(store.join("zarr.json")).unwrap()).unwrap();
        let Some(sharding) = meta["codecs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "sharding_indexed")
        else {
            continue;
        };
        let config = &sharding["configuration"];
        let index_codecs: Vec<&str> = config["index_codecs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(index_codecs, ["bytes", "crc32c"], "{}", store.display());
        out.push(Sharded {
            store,
            shape: u64s(&meta["shape"]),
            shard_shape: u64s(&meta["chunk_grid"]["configuration"]["chunk_shape"]),
            inner_shape: u64s(&config["chunk_shape"]),
            index_at_start: config["index_location"] == "start",
        });
    }
    out
}

/// A window of one inner chunk fetches its shard's index and that inner
/// chunk: within 2x of their sizes, in two requests, over both servers.
#[test]
fn a_window_of_one_inner_chunk_fetches_only_that_chunk_and_its_index() {
    zarrs_extension_codecs::register_overrides();
    let (http, s3) = (http_fixtures(), s3_fixtures());
    let stores = sharded_stores();
    assert!(stores.len() >= 6, "only {} sharded stores", stores.len());
    for Sharded {
        store,
        shape,
        shard_shape,
        inner_shape,
        index_at_start: at_start,
    } in stores
    {
        let relative = store
            .strip_prefix(fixtures_root())
            .unwrap()
            .to_str()
            .unwrap();
        let inner_per_shard: Vec<u64> = shard_shape
            .iter()
            .zip(&inner_shape)
            .map(|(s, i)| s / i)
            .collect();
        let (entries, index_len) = shard_index(
            &store.join("c").join(vec!["0"; shape.len()].join("/")),
            inner_per_shard.iter().product(),
            at_start,
        );
        // The second inner chunk of the first shard along the last
        // dimension (the first is at the start of the file, next to an
        // index there), or the first if there is one only.
        let last = shape.len() - 1;
        let column = u64::from(inner_per_shard[last] > 1);
        let (offset, length) = entries[column as usize];
        assert_ne!(offset, u64::MAX, "{relative}: that inner chunk is empty");
        let ranges: Vec<_> = (0..shape.len())
            .map(|d| {
                let start = if d == last {
                    column * inner_shape[d]
                } else {
                    0
                };
                start..(start + inner_shape[d]).min(shape[d])
            })
            .collect();
        let window = ArraySubset::new_with_ranges(&ranges);
        let local = Array::open(Arc::new(FilesystemStore::new(&store).unwrap()), "/").unwrap();
        let want: ArrayBytes<'static> = local.retrieve_array_subset(&window).unwrap();
        for (what, url, options) in [
            ("http", format!("{}/{relative}", http.url()), options()),
            (
                "s3",
                format!("s3://{BUCKET}/{relative}"),
                s3_options(&s3.url()),
            ),
        ] {
            // The index alone, not the shard's bytes beside it.
            let mut options = options;
            options.shard_read_ahead_bytes = 0;
            let remote = Arc::new(RemoteStore::open(&url, &options).unwrap());
            let array = Array::open(remote.clone(), "/").unwrap();
            remote.reset_fetched();
            let got: ArrayBytes<'static> = array.retrieve_array_subset(&window).unwrap();
            assert!(got == want, "{what} {relative}: values differ");
            let fetched = remote.fetched();
            let needed = length + index_len;
            eprintln!(
                "{what} {relative} {ranges:?}: {} bytes in {} requests (inner chunk {length} bytes, index {index_len})",
                fetched.bytes, fetched.requests
            );
            assert!(
                fetched.bytes >= needed && fetched.bytes <= 2 * needed,
                "{what} {relative}: {fetched:?} for an inner chunk of {length} bytes and an index of {index_len}"
            );
            // The index and the inner chunk; `zarrs.vlen` reads its
            // offsets, then its data.
            assert!(
                fetched.requests <= 4,
                "{what} {relative}: {fetched:?} requests"
            );
        }
    }
}

/// With the shard indexes kept (the default), a second window of the same
/// shard costs one request (the inner chunk), and reads the same values as
/// with none kept (`shard_index_cache_bytes = 0`).
#[test]
fn kept_shard_indexes_save_a_request_per_window() {
    let url = format!("{}/zarr-python/{SHARDED}.zarr", http_fixtures().url());
    let mut uncached = options();
    uncached.shard_index_cache_bytes = 0;
    let windows = [
        ArraySubset::new_with_ranges(&[0..4, 0..8]),
        ArraySubset::new_with_ranges(&[4..8, 8..16]),
    ];
    let mut values = vec![];
    for (options, second_requests) in [(uncached, 2), (options(), 1)] {
        let store = Arc::new(RemoteStore::open(&url, &options).unwrap());
        let array = Array::open(store.clone(), "/").unwrap();
        let mut read = vec![];
        for (i, window) in windows.iter().enumerate() {
            store.reset_fetched();
            read.push(
                array
                    .retrieve_array_subset::<ArrayBytes<'static>>(window)
                    .unwrap(),
            );
            let want = if i == 0 { 2 } else { second_requests };
            assert_eq!(store.fetched().requests, want, "window {i}");
        }
        values.push(read);
    }
    assert!(values[0] == values[1]);
}

/// `fixtures/zarr-python/NAME.zarr` copied to a temporary directory.
fn copy_of(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(
        &fixtures_root().join(format!("zarr-python/{name}.zarr")),
        &dir.path().join("store.zarr"),
    );
    dir
}

/// The sharded store the bad-input tests read.
const SHARDED: &str = "sharded_so_cv_f64_u8_nan";
/// Its shape.
const SHARDED_SHAPE: [u64; 2] = [37, 53];

/// Read the whole array at `url` and a window of it; the errors.
fn read_errors(url: &str) -> Vec<String> {
    let store = Arc::new(RemoteStore::open(url, &options()).unwrap());
    let array = match Array::open(store, "/") {
        Ok(array) => array,
        Err(e) => return vec![e.to_string()],
    };
    let window = ArraySubset::new_with_ranges(&[0..4, 8..16]);
    let all = ArraySubset::new_with_shape(SHARDED_SHAPE.to_vec());
    [all, window]
        .iter()
        .map(
            |subset| match array.retrieve_array_subset::<ArrayBytes<'static>>(subset) {
                Ok(_) => panic!("{url} {subset:?}: read values from a misbehaving server"),
                Err(e) => e.to_string(),
            },
        )
        .collect()
}

#[test]
fn misbehaving_servers_give_errors_naming_the_key() {
    let cases = [
        (Misbehaviour::Status("403 Forbidden"), "403"),
        (Misbehaviour::Status("500 Internal Server Error"), "500"),
        (Misbehaviour::IgnoreRange, "Range request not supported"),
        (
            Misbehaviour::DropMidBody,
            "end of file before message length reached",
        ),
        (Misbehaviour::ShortBody, "the response said it holds bytes"),
    ];
    for (misbehaviour, cause) in cases {
        let store = copy_of(SHARDED);
        let server = HttpServer::serve_misbehaving(store.path(), misbehaviour).unwrap();
        let url = format!("{}/store.zarr", server.url());
        for error in read_errors(&url) {
            eprintln!("{misbehaviour:?}: {error}");
            assert!(
                error.contains(&format!("{url}/c/")),
                "{misbehaviour:?}: no key in {error}"
            );
            assert!(
                error.contains(cause),
                "{misbehaviour:?}: no {cause:?} in {error}"
            );
        }
    }
}

/// A server that answers a range covering a whole shard with the shard
/// and `200` (RFC 9110 lets a server ignore a range; object_store refuses
/// such an answer): the read-ahead of the first shard is refused, its
/// index is read alone, and the store reads no more ahead; the values are
/// right.
#[test]
fn a_server_that_answers_whole_object_ranges_with_200_is_read_without_read_ahead() {
    let store = copy_of(SHARDED);
    let local = Array::open(
        Arc::new(FilesystemStore::new(store.path().join("store.zarr")).unwrap()),
        "/",
    )
    .unwrap();
    let server = HttpServer::serve_misbehaving(store.path(), Misbehaviour::WholeAs200).unwrap();
    let url = format!("{}/store.zarr", server.url());
    let remote = Arc::new(RemoteStore::open(&url, &options()).unwrap());
    let array = Array::open(remote.clone(), "/").unwrap();
    for subset in [
        ArraySubset::new_with_ranges(&[0..4, 8..16]),
        ArraySubset::new_with_shape(SHARDED_SHAPE.to_vec()),
    ] {
        let want: ArrayBytes<'static> = local.retrieve_array_subset(&subset).unwrap();
        let got: ArrayBytes<'static> = array.retrieve_array_subset(&subset).unwrap();
        assert!(got == want, "{subset:?}: values differ");
    }
}

/// A shard cut short: the window's inner chunk lies past the end, so the
/// read names the key and what was missing; the whole array fails too
/// (its index is gone).
#[test]
fn a_truncated_shard_is_an_error_naming_the_key() {
    let store = copy_of(SHARDED);
    let shard = store.path().join("store.zarr/c/0/0");
    let bytes = std::fs::read(&shard).unwrap();
    std::fs::write(&shard, &bytes[..bytes.len() - 140]).unwrap();
    let server = PythonServer::http(store.path(), 0);
    let url = format!("{}/store.zarr", server.url());
    let store = Arc::new(RemoteStore::open(&url, &options()).unwrap());
    let array = Array::open(store, "/").unwrap();
    for subset in [
        ArraySubset::new_with_ranges(&[0..4, 0..8]),
        ArraySubset::new_with_shape(SHARDED_SHAPE.to_vec()),
    ] {
        let error = array
            .retrieve_array_subset::<ArrayBytes<'static>>(&subset)
            .unwrap_err()
            .to_string();
        eprintln!("truncated {subset:?}: {error}");
        assert!(
            error.contains("c/0/0") || error.contains("checksum"),
            "{error}"
        );
    }
}

/// A missing `zarr.json` is an error; a missing chunk is the fill value, as
/// in every Zarr implementation (the spec's missing chunk), over both
/// servers.
#[test]
fn missing_objects() {
    let store = copy_of("so_f32");
    let server = PythonServer::http(store.path(), 0);
    let url = format!("{}/store.zarr", server.url());
    let remote = RemoteStore::open(&url, &options()).unwrap();
    let key = "zarr.json".try_into().unwrap();
    assert!(remote.get(&key).unwrap().is_some());
    let missing = "nothing/zarr.json".try_into().unwrap();
    assert_eq!(remote.get(&missing).unwrap(), None);
    assert_eq!(remote.size_key(&missing).unwrap(), None);
    assert!(Array::open(Arc::new(remote), "/nothing").is_err());

    std::fs::remove_file(store.path().join("store.zarr/c/2")).unwrap();
    let local = Array::open(
        Arc::new(FilesystemStore::new(store.path().join("store.zarr")).unwrap()),
        "/",
    )
    .unwrap();
    let remote = Array::open(Arc::new(RemoteStore::open(&url, &options()).unwrap()), "/").unwrap();
    let all = local.subset_all();
    let want: ArrayBytes<'static> = local.retrieve_array_subset(&all).unwrap();
    let got: ArrayBytes<'static> = remote.retrieve_array_subset(&all).unwrap();
    assert!(want == got);
}

/// Nothing listening: the error names the key and shows the cause chain
/// down to the refused connection.
#[test]
fn connection_errors_show_their_cause_chain() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/store.zarr");
    let mut options = options();
    options.max_retries = 0;
    let store = RemoteStore::open(&url, &options).unwrap();
    let error = store
        .get(&"zarr.json".try_into().unwrap())
        .unwrap_err()
        .to_string();
    eprintln!("{error}");
    assert!(error.starts_with(&format!("{url}/zarr.json: ")), "{error}");
    assert!(
        error.to_lowercase().contains("connection refused"),
        "no cause in {error}"
    );
}

/// Sync reads from inside an async runtime: an error, not tokio's panic.
#[test]
fn sync_reads_inside_an_async_runtime_are_an_error() {
    let store = RemoteStore::open("http://127.0.0.1:9/store.zarr", &options()).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let error = runtime
        .block_on(async { store.get(&"zarr.json".try_into().unwrap()) })
        .unwrap_err();
    assert!(error.to_string().contains("async_store()"), "{error}");
}

/// A sync store opened and dropped inside an async runtime (a tokio
/// `main` that opens one and finds it must use `async_store()`): its own
/// runtime is let go without blocking, not tokio's panic on dropping a
/// runtime in an async context.
#[test]
fn a_sync_store_dropped_inside_an_async_runtime_does_not_panic() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = RemoteStore::open("http://127.0.0.1:9/store.zarr", &options()).unwrap();
        let _async_store = store.async_store();
        drop(store);
    });
}

#[test]
fn urls_that_are_not_stores() {
    for url in ["ftp://host/a.zarr", "s3://", "/local/path.zarr"] {
        let error = RemoteStore::open(url, &options()).unwrap_err().to_string();
        assert!(error.starts_with(url), "{error}");
        assert!(error.contains("s3://bucket/prefix"), "{error}");
    }
}

/// Run `examples/inspect.rs` with `args` (and S3 settings); its output.
fn run_inspect(args: &[&str], s3_config: &[(&str, &str)]) -> Result<String, String> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let mut out = Vec::new();
    inspect::inspect_with(&args, s3_config, &mut out).map_err(|e| e.to_string())?;
    Ok(String::from_utf8(out).unwrap())
}

/// The output without its first line (the location) and `fetched` line.
fn without_location(output: &str) -> String {
    output
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("fetched "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `inspect` over HTTP and S3, whole and with `--window`: the summary is
/// the local one; the window's min / max are those of zarr-python's values
/// in it; what was fetched is printed.
#[test]
fn inspect_reads_urls_whole_and_in_windows() {
    let http = http_fixtures();
    let s3_url = s3_fixtures().url();
    let s3_config = [
        ("aws_endpoint_url", s3_url.as_str()),
        ("aws_access_key_id", "testing"),
        ("aws_secret_access_key", "testing"),
    ];
    let local = fixtures_root().join(format!("zarr-python/{SHARDED}.zarr"));
    let local = local.to_str().unwrap();
    let urls = [
        format!("{}/zarr-python/{SHARDED}.zarr", http.url()),
        format!("s3://{BUCKET}/zarr-python/{SHARDED}.zarr"),
    ];
    for window in [None, Some("3:20,7:50")] {
        let with_window = |location: &str| {
            let mut args = vec![location.to_string()];
            if let Some(w) = window {
                args.extend(["--window".to_string(), w.to_string()]);
            }
            args
        };
        let args = with_window(local);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let expected = run_inspect(&args, &[]).unwrap();
        assert!(!expected.contains("fetched "), "{expected}");
        for url in &urls {
            let args = with_window(url);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let output = run_inspect(&args, &s3_config).unwrap();
            assert_eq!(
                without_location(&output),
                without_location(&expected),
                "{url}"
            );
            let fetched = output.lines().last().unwrap();
            assert!(
                fetched.starts_with("fetched ") && fetched.ends_with(" requests"),
                "{output}"
            );
        }
    }

    // The window's min / max, from zarr-python's values.
    let values: Vec<f64> =
        std::fs::read(fixtures_root().join(format!("zarr-python/{SHARDED}.expected.bin")))
            .unwrap()
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
            .collect();
    let inside: Vec<f64> = (3..20)
        .flat_map(|row| values[row * 53 + 7..row * 53 + 50].to_vec())
        .filter(|v| !v.is_nan())
        .collect();
    let min = inside.iter().copied().fold(f64::INFINITY, f64::min);
    let max = inside.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let output = run_inspect(&[&urls[0], "--window", "3:20,7:50"], &[]).unwrap();
    let line = |label: &str| {
        output
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} in {output}"))[10..]
            .trim()
            .to_string()
    };
    use zarrs_extension_codecs::numeric::Value;
    assert_eq!(
        line("min / max"),
        format!("{} / {}", Value::Float(min), Value::Float(max))
    );
    assert_eq!(line("window"), "[3..20, 7..50]");
    assert!(
        line("elements").starts_with(&format!("{} (", 17 * 43)),
        "{output}"
    );
    assert!(output.contains("values [3..6, 7..13]:"), "{output}");

    // Windows that do not fit, in words.
    for (window, message) in [
        ("0:4", "--window has 1 ranges, the array 2 dimensions"),
        ("0:4,50:60", "--window 50..60 is outside dimension 1"),
        ("4:0,0:1", "is not START:END"),
        ("a:b,0:1", "is not START:END"),
    ] {
        let error = run_inspect(&[&urls[0], "--window", window], &[]).unwrap_err();
        assert!(error.contains(message), "{window}: {error}");
    }
}
