//! Read a sharded store written by zarr-python (`scale_offset` +
//! `cast_value` inside `sharding_indexed`) over HTTP, through zarrs' HTTP
//! store (`zarrs_http`), from a small range-answering server this example
//! starts on 127.0.0.1; compare with zarr-python's values, and show how many
//! bytes a window fetched compared with the whole array.
//!
//! ```sh
//! cargo run --release --example read_http
//! ```
//!
//! For a store on a real server, open it the same way:
//! `zarrs_http::HTTPStore::new("https://host/path/store.zarr")`.

#[path = "../tests/common/http_server.rs"]
pub mod http_server;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use zarrs::array::{Array, ArraySubset};
use zarrs_extension_codecs as _; // links the crate: its codecs are registered

/// The fixture store under `fixtures/zarr-python`.
pub const STORE: &str = "sharded_so_cv_f64_u8_nan";

/// The window read: one inner chunk (4 x 8) of the first shard.
pub fn window() -> ArraySubset {
    ArraySubset::new_with_ranges(&[0..4, 0..8])
}

/// What reading over HTTP fetched.
#[derive(Debug)]
pub struct Report {
    /// Body bytes served for reading the whole array, per path.
    pub whole: BTreeMap<String, u64>,
    /// Body bytes served for reading [`window`], per path.
    pub window: BTreeMap<String, u64>,
    /// The sizes of the store's chunk (shard) files.
    pub store_chunks: u64,
}

fn main() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/zarr-python");
    let report = read_over_http(&fixtures).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1);
    });
    let total = |m: &BTreeMap<String, u64>| m.values().sum::<u64>();
    println!("store      {STORE}.zarr over HTTP (zarrs_http, range requests)");
    println!("values     equal to zarr-python's, whole array and window");
    println!(
        "whole      {} bytes fetched ({} bytes of shards in the store)",
        total(&report.whole),
        report.store_chunks
    );
    println!(
        "window     {:?}: {} bytes fetched",
        window().to_ranges(),
        total(&report.window)
    );
    for (path, bytes) in &report.window {
        println!("             {bytes:>5} bytes of {path}");
    }
}

/// Serve `fixtures` (a copy of `fixtures/zarr-python`) on 127.0.0.1, read
/// [`STORE`] whole and [`window`] through `zarrs_http`, check both against
/// the values zarr-python wrote beside the store, and count the bytes.
pub fn read_over_http(fixtures: &Path) -> Result<Report, Box<dyn std::error::Error>> {
    let server = http_server::HttpServer::serve(fixtures)?;
    let store = zarrs_http::HTTPStore::new(&format!("{}/{STORE}.zarr", server.url()))?;
    let array = Array::open(Arc::new(store), "/")?;

    // zarr-python's decoded values: little-endian float64, C order.
    let expected: Vec<f64> = std::fs::read(fixtures.join(format!("{STORE}.expected.bin")))?
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let same = |a: &[f64], b: &[f64]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
    };

    server.reset_counts();
    let whole: Vec<f64> = array.retrieve_array_subset(&array.subset_all())?;
    if !same(&whole, &expected) {
        return Err("the whole array differs from zarr-python's values".into());
    }
    let whole_counts = server.bytes_served();

    server.reset_counts();
    let window = window();
    let values: Vec<f64> = array.retrieve_array_subset(&window)?;
    let width = array.shape()[1] as usize;
    let (rows, cols) = match window.to_ranges().as_slice() {
        [rows, cols] => (rows.clone(), cols.start as usize..cols.end as usize),
        _ => return Err("the window is 2-D".into()),
    };
    let expected_window: Vec<f64> = rows
        .flat_map(|row| {
            let start = row as usize * width;
            expected[start + cols.start..start + cols.end].to_vec()
        })
        .collect();
    if !same(&values, &expected_window) {
        return Err("the window differs from zarr-python's values".into());
    }
    let window_counts = server.bytes_served();

    let mut store_chunks = 0;
    for key in array
        .chunks_in_array_subset(&array.subset_all())?
        .into_iter()
        .flat_map(|c| c.indices().into_iter())
    {
        let path = fixtures
            .join(format!("{STORE}.zarr"))
            .join(array.chunk_key(&key).as_str());
        store_chunks += std::fs::metadata(path).map_or(0, |m| m.len());
    }
    Ok(Report {
        whole: whole_counts,
        window: window_counts,
        store_chunks,
    })
}
