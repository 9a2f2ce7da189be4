//! `ArrayWriteExt` against zarr-python and zarrs.
//!
//! - Every `fixtures/zarr-python` store was made by writing its input whole
//!   through zarr-python 3.4.2 (the fixtures' README). Writing the same
//!   input whole through `store_window` into the same metadata must give
//!   the same keys with the same bytes: sharded stores included, whose inner
//!   chunks zarr-python lays out in Morton order.
//! - Windows written into existing arrays (aligned, unaligned, edge, one
//!   element; sharded and not) read back as after zarrs' own
//!   `store_array_subset` of the same windows, and leave the same keys.
//! - A value `cast_value` cannot encode fails the write naming the chunk.
//!
//! With feature `async`, each test runs again through `AsyncArrayWriteExt`
//! over zarrs' `AsyncObjectStore` (object_store's local file system) and
//! must give the same files.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::{chunk_files, fixtures, le_to_ne, zarr_python_fixtures};
use zarrs::array::{Array, ArrayBytes, ArrayError, ArraySubset, CodecOptions};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::numeric::NumericType;
use zarrs_extension_codecs::write::StoredChunkDamaged;
use zarrs_extension_codecs::{ArrayReadExt, ArrayWriteExt, open_array};

/// A new store under `dir` with `metadata` (a `zarr.json` document).
fn new_store(dir: &Path, metadata: &[u8]) -> Array<FilesystemStore> {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("zarr.json"), metadata).unwrap();
    open_array(Arc::new(FilesystemStore::new(dir).unwrap()), "/").unwrap()
}

/// Which API a test writes with.
#[derive(Clone, Copy, Debug)]
enum Via {
    Sync,
    /// `AsyncArrayWriteExt` over `AsyncObjectStore`, on a current-thread
    /// runtime (so an encode on the runtime would stall the write's own
    /// stores, not hide among worker threads).
    #[cfg(feature = "async")]
    Async,
}

fn vias() -> Vec<Via> {
    vec![
        Via::Sync,
        #[cfg(feature = "async")]
        Via::Async,
    ]
}

/// An array to write, by `via`; reads go through `read` (a
/// `FilesystemStore` over the same directory).
struct Writer {
    via: Via,
    read: Array<FilesystemStore>,
    #[cfg(feature = "async")]
    remote: (
        Array<zarrs_object_store::AsyncObjectStore<object_store::local::LocalFileSystem>>,
        tokio::runtime::Runtime,
    ),
}

impl Writer {
    /// A new store under `dir` with `metadata`, written through `via`.
    fn new(dir: &Path, metadata: &[u8], via: Via) -> Self {
        let read = new_store(dir, metadata);
        Self {
            via,
            read,
            #[cfg(feature = "async")]
            remote: {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                let store = object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap();
                let store = Arc::new(zarrs_object_store::AsyncObjectStore::new(store));
                let array = runtime.block_on(Array::async_open(store, "/")).unwrap();
                (array, runtime)
            },
        }
    }

    fn write(&self, window: &ArraySubset, bytes: &[u8]) -> Result<(), ArrayError> {
        let options = CodecOptions::default();
        match self.via {
            Via::Sync => self.read.store_window_bytes_opt(window, bytes, &options),
            #[cfg(feature = "async")]
            Via::Async => {
                use zarrs_extension_codecs::AsyncArrayWriteExt;
                let (array, runtime) = &self.remote;
                runtime.block_on(array.async_store_window_bytes_opt(window, bytes, &options))
            }
        }
    }

    fn write_values<T: zarrs::array::Element + bytemuck::Pod + Send + Sync>(
        &self,
        window: &ArraySubset,
        values: &[T],
    ) -> Result<(), ArrayError> {
        match self.via {
            Via::Sync => self.read.store_window(window, values),
            #[cfg(feature = "async")]
            Via::Async => {
                use zarrs_extension_codecs::AsyncArrayWriteExt;
                let (array, runtime) = &self.remote;
                runtime.block_on(array.async_store_window(window, values))
            }
        }
    }
}

#[test]
fn whole_writes_give_zarr_pythons_files() {
    for via in vias() {
        whole_writes_give_zarr_pythons_files_via(via);
    }
}

fn whole_writes_give_zarr_pythons_files_via(via: Via) {
    let tmp = tempfile::tempdir().unwrap();
    let mut compared = 0;
    let mut sharded = 0;
    for fixture in fixtures(&zarr_python_fixtures()) {
        let source = fixture.store.parent().unwrap();
        let Ok(input) = std::fs::read(source.join(format!("{}.input.bin", fixture.name))) else {
            continue;
        };
        let metadata = std::fs::read(fixture.store.join("zarr.json")).unwrap();
        let dir = tmp.path().join(&fixture.name);
        let writer = Writer::new(&dir, &metadata, via);
        let array = &writer.read;
        let data_type = NumericType::from_data_type(array.data_type()).unwrap();
        let input = le_to_ne(&input, data_type.size());
        writer
            .write(&array.subset_all(), &input)
            .unwrap_or_else(|e| panic!("{via:?}: {}: {e}", fixture.name));
        let ours = chunk_files(&dir);
        let theirs = chunk_files(&fixture.store);
        let keys =
            |files: &[(String, Vec<u8>)]| files.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        assert_eq!(
            keys(&ours),
            keys(&theirs),
            "{via:?}: {}: keys",
            fixture.name
        );
        for ((key, a), (_, b)) in ours.iter().zip(&theirs) {
            assert!(
                a == b,
                "{via:?}: {}: {key}: bytes differ from zarr-python's",
                fixture.name
            );
        }
        // The same input in unaligned pieces (each chunk or shard written
        // in parts, read back and merged): the same files again.
        let dir = tmp.path().join(format!("{}-pieces", fixture.name));
        let writer = Writer::new(&dir, &metadata, via);
        let array = &writer.read;
        for window in pieces(array.shape()) {
            let part = common::slice(
                &input,
                array.shape(),
                window.start(),
                window.shape(),
                data_type.size(),
            );
            writer
                .write(&window, &part)
                .unwrap_or_else(|e| panic!("{via:?}: {}: {window:?}: {e}", fixture.name));
        }
        let in_pieces = chunk_files(&dir);
        assert_eq!(
            keys(&in_pieces),
            keys(&theirs),
            "{via:?}: {}: keys, in pieces",
            fixture.name
        );
        for ((key, a), (_, b)) in in_pieces.iter().zip(&theirs) {
            assert!(
                a == b,
                "{via:?}: {}: {key}: written in pieces, bytes differ",
                fixture.name
            );
        }
        compared += 1;
        sharded += usize::from(fixture.name.starts_with("sharded"));
    }
    assert!(
        compared >= 30 && sharded >= 3,
        "{via:?}: {compared} fixtures, {sharded} sharded"
    );
}

/// Windows that tile an array of `shape`: each dimension cut at 2/5 and
/// 3/4 of its length (at no chunk boundary of the fixtures), in reverse
/// order (the last piece first).
fn pieces(shape: &[u64]) -> Vec<ArraySubset> {
    let mut out = vec![ArraySubset::new_with_ranges(&[])];
    for &n in shape {
        let mut cuts = vec![0, n * 2 / 5, n * 3 / 4, n];
        cuts.dedup();
        out = out
            .iter()
            .flat_map(|w| {
                cuts.windows(2).map(move |r| {
                    let mut ranges: Vec<_> = w
                        .start()
                        .iter()
                        .zip(w.shape())
                        .map(|(&s, &k)| s..s + k)
                        .collect();
                    ranges.push(r[0]..r[1]);
                    ArraySubset::new_with_ranges(&ranges)
                })
            })
            .collect();
    }
    out.reverse();
    out
}

/// An array of `u16` of shape 37 x 53 with `codecs`, fill 7, chunks 16 x 16.
fn metadata(codecs: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": [37, 53],
        "data_type": "uint16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16, 16]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 7,
        "codecs": codecs,
        "attributes": {}
    }))
    .unwrap()
}

/// The chains the window test writes: plain, compressed, sharded with the
/// index at either end, with a compressor inside shards.
fn chains() -> Vec<(&'static str, serde_json::Value)> {
    let sharded = |inner: serde_json::Value, location: &str| {
        serde_json::json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [4, 8],
            "codecs": inner,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": location
        }}])
    };
    vec![
        (
            "bytes",
            serde_json::json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
        ),
        (
            "zstd",
            serde_json::json!([{"name": "bytes", "configuration": {"endian": "big"}},
                               {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]),
        ),
        (
            "sharded_end",
            sharded(
                serde_json::json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
                "end",
            ),
        ),
        (
            "sharded_start_gzip",
            sharded(
                serde_json::json!([{"name": "bytes", "configuration": {"endian": "little"}},
                                   {"name": "gzip", "configuration": {"level": 1}}]),
                "start",
            ),
        ),
    ]
}

/// Windows of a 37 x 53 array: whole shards, unaligned, edge, one element,
/// fill values over written data, the whole array.
fn windows() -> Vec<(ArraySubset, u16)> {
    let w = |r0: u64, r1: u64, c0: u64, c1: u64| ArraySubset::new_with_ranges(&[r0..r1, c0..c1]);
    vec![
        (w(0, 16, 0, 16), 100),
        (w(3, 29, 5, 44), 1000),
        (w(32, 37, 48, 53), 2000),
        (w(20, 21, 30, 31), 3000),
        (w(0, 16, 16, 32), 0),
        (w(16, 32, 0, 16), 4000),
        // Back to the fill value: chunks (1, 0) and inner chunks within it
        // become fill values only.
        (w(16, 32, 0, 16), u16::MAX),
        (w(0, 37, 0, 53), 5000),
        (w(10, 37, 0, 53), u16::MAX),
    ]
}

#[test]
fn windows_read_back_as_after_zarrs_writes() {
    for via in vias() {
        windows_read_back_as_after_zarrs_writes_via(via);
    }
}

fn windows_read_back_as_after_zarrs_writes_via(via: Via) {
    let tmp = tempfile::tempdir().unwrap();
    for (name, codecs) in chains() {
        let document = metadata(&codecs);
        let writer = Writer::new(&tmp.path().join(format!("{name}-ours")), &document, via);
        let ours = &writer.read;
        let theirs = new_store(&tmp.path().join(format!("{name}-zarrs")), &document);
        for (step, (window, base)) in windows().into_iter().enumerate() {
            // `u16::MAX` writes the fill value; else values that vary.
            let values: Vec<u16> = (0..window.num_elements_usize())
                .map(|i| {
                    if base == u16::MAX {
                        7
                    } else {
                        base.wrapping_add((i % 251) as u16)
                    }
                })
                .collect();
            writer
                .write_values(&window, &values)
                .unwrap_or_else(|e| panic!("{via:?}: {name}, step {step}: {e}"));
            theirs
                .store_array_subset(
                    &window,
                    ArrayBytes::new_flen(bytemuck::cast_slice::<u16, u8>(&values)),
                )
                .unwrap();
            let all = ours.subset_all();
            let a: Vec<u16> = ours.retrieve_array_subset_vec(&all).unwrap();
            let b: Vec<u16> = theirs.retrieve_array_subset_vec(&all).unwrap();
            assert!(
                a == b,
                "{via:?}: {name}, step {step}: values differ from zarrs' write"
            );
            let keys = |dir: &str| {
                chunk_files(&tmp.path().join(dir))
                    .into_iter()
                    .map(|f| f.0)
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                keys(&format!("{name}-ours")),
                keys(&format!("{name}-zarrs")),
                "{via:?}: {name}, step {step}: stored keys"
            );
            if !name.starts_with("sharded") {
                // One chunk per key, same codecs: the same bytes.
                assert_eq!(
                    chunk_files(&tmp.path().join(format!("{name}-ours"))),
                    chunk_files(&tmp.path().join(format!("{name}-zarrs"))),
                    "{via:?}: {name}, step {step}: chunk bytes"
                );
            }
        }
    }
}

#[test]
fn a_value_cast_value_cannot_encode_names_its_chunk() {
    for via in vias() {
        a_value_cast_value_cannot_encode_names_its_chunk_via(via);
    }
}

fn a_value_cast_value_cannot_encode_names_its_chunk_via(via: Via) {
    let tmp = tempfile::tempdir().unwrap();
    let codecs = serde_json::json!([
        {"name": "sharding_indexed", "configuration": {
            "chunk_shape": [4, 8],
            "codecs": [
                {"name": "cast_value", "configuration": {"data_type": "uint8"}},
                {"name": "bytes"}
            ],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"
        }}
    ]);
    let writer = Writer::new(&tmp.path().join("a"), &metadata(&codecs), via);
    let mut values = vec![1u16; 16 * 16];
    values[5 * 16 + 9] = 300;
    let err = writer
        .write_values(&ArraySubset::new_with_ranges(&[16..32, 16..32]), &values)
        .unwrap_err();
    // A value the codecs refuse is not damage to what is stored.
    assert!(StoredChunkDamaged::in_error(&err).is_none(), "{err}");
    let err = err.to_string();
    assert!(
        err.contains("shard c/1/1") && err.contains("inner chunk [1, 1]"),
        "{err}"
    );
    assert!(err.contains("300"), "{err}");
    // Nothing was stored for that shard.
    assert!(chunk_files(&tmp.path().join("a")).is_empty());
}

#[test]
fn windows_outside_the_array_or_of_the_wrong_size_are_refused() {
    for via in vias() {
        let tmp = tempfile::tempdir().unwrap();
        let writer = Writer::new(&tmp.path().join("a"), &metadata(&chains()[0].1), via);
        let outside = ArraySubset::new_with_ranges(&[30..40, 0..4]);
        assert!(writer.write_values(&outside, &[0u16; 40]).is_err());
        let window = ArraySubset::new_with_ranges(&[0..2, 0..2]);
        assert!(writer.write_values(&window, &[0u16; 3]).is_err());
        assert!(writer.write(&window, &[0u8; 7]).is_err());
        assert!(writer.write_values(&window, &[0u32; 4]).is_err());
        assert!(chunk_files(&tmp.path().join("a")).is_empty(), "{via:?}");
    }
}

#[test]
fn a_partial_write_over_a_damaged_shard_names_it() {
    for via in vias() {
        a_partial_write_over_a_damaged_shard_names_it_via(via);
    }
}

fn a_partial_write_over_a_damaged_shard_names_it_via(via: Via) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a");
    let array = Writer::new(&dir, &metadata(&chains()[2].1), via);
    let window = ArraySubset::new_with_ranges(&[0..16, 0..16]);
    array.write_values(&window, &[1u16; 256]).unwrap();
    let part = ArraySubset::new_with_ranges(&[1..3, 1..3]);
    // Too short for its index.
    std::fs::write(dir.join("c/0/0"), [0u8; 10]).unwrap();
    let err = array.write_values(&part, &[2u16; 4]).unwrap_err();
    let damaged = StoredChunkDamaged::in_error(&err).expect("a typed error");
    assert_eq!(damaged.key(), "shard c/0/0");
    let err = err.to_string();
    assert!(
        err.contains("shard c/0/0") && err.contains("10 bytes"),
        "{err}"
    );
    // Each case: the shard written whole, then one index entry's `offset`
    // or `nbytes` (u64 `field` of inner chunk `inner`, C order) set to
    // `value` with the crc32c made right again, then a write of `part`
    // refused with an error naming the shard, `names` and `says`.
    let cases = [
        // An entry past the end.
        (0, 0, 1_000_000u64, "inner chunk [0, 0]", "1000000"),
        // An entry of an inner chunk the write keeps as stored, inside the
        // shard but not the size the inner codecs write (4 x 8 uint16: 64
        // bytes): kept, it made a shard no reader opens, the write a
        // success.
        (
            7,
            1,
            0,
            "inner chunk [3, 1]",
            "nbytes 0 is not the 64 bytes",
        ),
    ];
    for (inner, field, value, names, says) in cases {
        array.write_values(&window, &[1u16; 256]).unwrap();
        let mut shard = std::fs::read(dir.join("c/0/0")).unwrap();
        let n = shard.len();
        let index_at = n - (4 * 2 * 2 * 8 + 4);
        let at = index_at + inner * 16 + field * 8;
        shard[at..at + 8].copy_from_slice(&value.to_le_bytes());
        let crc = crc32c(&shard[index_at..n - 4]);
        shard[n - 4..].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(dir.join("c/0/0"), &shard).unwrap();
        let err = array.write_values(&part, &[2u16; 4]).unwrap_err();
        assert!(StoredChunkDamaged::in_error(&err).is_some(), "{err}");
        let err = err.to_string();
        assert!(
            err.contains("shard c/0/0") && err.contains(names) && err.contains(says),
            "{err}"
        );
    }
}

/// CRC-32C (Castagnoli), bit by bit, as the spec of the `crc32c` codec
/// defines it.
fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The async write's future can be handed to a multi-threaded runtime
/// (`tokio::spawn` needs `Send`): checked by the compiler, run once.
#[cfg(feature = "async")]
#[test]
fn the_async_write_is_send() {
    use zarrs_extension_codecs::AsyncArrayWriteExt;
    fn send<F: std::future::Future + Send>(future: F) -> F {
        future
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a");
    let writer = Writer::new(&dir, &metadata(&chains()[2].1), Via::Async);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let store = object_store::local::LocalFileSystem::new_with_prefix(&dir).unwrap();
    let store = Arc::new(zarrs_object_store::AsyncObjectStore::new(store));
    let array = runtime.block_on(Array::async_open(store, "/")).unwrap();
    let window = ArraySubset::new_with_ranges(&[0..16, 0..16]);
    runtime
        .block_on(runtime.spawn(send(async move {
            array.async_store_window(&window, &[9u16; 256]).await
        })))
        .unwrap()
        .unwrap();
    let back: Vec<u16> = writer
        .read
        .retrieve_array_subset_vec(&ArraySubset::new_with_ranges(&[0..16, 0..16]))
        .unwrap();
    assert!(back.iter().all(|&v| v == 9));
}
