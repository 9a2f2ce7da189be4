//! Reading a sharded zarr-python store over HTTP through zarrs' HTTP store
//! (`zarrs_http`), from a loopback server that answers range requests: the
//! values are zarr-python's, and a window inside one inner chunk fetches only
//! that inner chunk and its shard's index.

use crate::common;
#[path = "../../examples/read_http.rs"]
// The example brings its own copy of the HTTP server the crate root has.
#[allow(dead_code, clippy::duplicate_mod)]
mod read_http;

use std::sync::Arc;

use common::{compare, le_to_ne, slice, u64s, zarr_python_fixtures};
use read_http::{STORE, read_over_http};
use zarrs::array::{Array, ArrayBytes, ArraySubset};
use zarrs_extension_codecs::numeric::NumericType;

/// Bytes of one shard's index, from the sharding spec: 4 x 2 inner chunks of
/// (4, 8) in a (16, 16) shard, each an offset and a length (2 x uint64),
/// then the crc32c checksum (4 bytes).
const INDEX_BYTES: u64 = 4 * 2 * 16 + 4;
/// Bytes of one inner chunk: 4 x 8 uint8 (after cast_value), `bytes` codec,
/// no compression.
const INNER_CHUNK_BYTES: u64 = 4 * 8;

#[test]
fn a_window_fetches_only_its_inner_chunk() {
    let report = read_over_http(&zarr_python_fixtures()).unwrap();
    let total = |m: &std::collections::BTreeMap<String, u64>| m.values().sum::<u64>();
    eprintln!(
        "whole array: {} bytes fetched ({} bytes of shards in the store); window {:?}: {} bytes ({:?})",
        total(&report.whole),
        report.store_chunks,
        read_http::window().to_ranges(),
        total(&report.window),
        report.window
    );
    // The whole array: every shard is fetched (its index and inner chunks;
    // none twice). Edge inner chunks are read only as far as the array
    // reaches (`scale_offset` / `cast_value` read whole rows of the part
    // inside), so the total can be below the shards' size.
    assert_eq!(report.store_chunks, 2 * 388 + 4 * 196);
    assert_eq!(report.whole.len(), 6, "every shard file: {report:?}");
    assert!(
        total(&report.whole) <= 2 * report.store_chunks,
        "{report:?}"
    );
    // The window: the first shard's index and one inner chunk, nothing else.
    let first_shard = format!("/{STORE}.zarr/c/0/0");
    assert_eq!(
        report.window.into_iter().collect::<Vec<_>>(),
        [(first_shard, INDEX_BYTES + INNER_CHUNK_BYTES)]
    );
}

/// Every subset zarr-python recorded, read over HTTP.
#[test]
fn subsets_over_http_are_zarr_pythons() {
    let fixture = common::fixtures(&zarr_python_fixtures())
        .into_iter()
        .find(|f| f.name == STORE)
        .unwrap();
    let server = read_http::http_server::HttpServer::serve(&zarr_python_fixtures()).unwrap();
    let store = zarrs_http::HTTPStore::new(&format!("{}/{STORE}.zarr", server.url())).unwrap();
    let array = Array::open(Arc::new(store), "/").unwrap();
    let shape = u64s(&fixture.meta["shape"]);
    let expected = le_to_ne(&fixture.expected, 8);
    let subsets = fixture.meta["subsets"].as_array().unwrap();
    assert!(subsets.len() >= 10);
    for subset in subsets {
        let (start, sub_shape) = (u64s(&subset["start"]), u64s(&subset["shape"]));
        let region = ArraySubset::new_with_start_shape(start.clone(), sub_shape.clone()).unwrap();
        let bytes: ArrayBytes<'static> = array.retrieve_array_subset(&region).unwrap();
        let bytes = bytes.into_fixed().unwrap();
        let want = slice(&expected, &shape, &start, &sub_shape, 8);
        compare(NumericType::Float64, &bytes, &want)
            .unwrap_or_else(|e| panic!("{}: {e}", subset["label"]));
    }
}
