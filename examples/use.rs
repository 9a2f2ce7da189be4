//! The README's "Use" program, kept identical to it by
//! `tests/local/readme_snippet.rs` and compiled by `cargo test --all-targets`.

use std::sync::Arc;

use zarrs::array::ArraySubset;
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::{ArrayReadExt, open_array};

fn main() {
    // Errors in words (Display), not `Error: MissingMetadata` (Debug).
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let store = Arc::new(FilesystemStore::new("product.zarr")?);
    // Installs this crate's codecs over zarrs' built-ins of the same names
    // (register_overrides: int4, packbits and transpose "C"/"F" read as
    // their specs say), opens the array and checks its codecs; an error
    // says what is missing (e.g. "codec zstd needs zarrs' `zstd` feature").
    let array = open_array(store, "/reflectance")?;
    let subset = ArraySubset::new_with_ranges(&[0..100, 0..200]);
    // Decodes straight into a new Vec<f64> (see "Reading fast"); a window
    // outside the array is an error, and a failing chunk names its key.
    let data: Vec<f64> = array.retrieve_array_subset_vec::<f64>(&subset)?;
    println!("{} values, first {:?}", data.len(), data.first());
    Ok(())
}
