//! The README's "Use" program, kept identical to it by
//! `tests/readme_snippet.rs` and compiled by `cargo test --all-targets`.

use std::sync::Arc;

use zarrs::array::{Array, ArraySubset};
use zarrs::filesystem::FilesystemStore;
// Naming the crate links it, which registers its codecs with zarrs.
use zarrs_extension_codecs::ArrayReadExt;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store = Arc::new(FilesystemStore::new("product.zarr")?);
    let array = Array::open(store, "/reflectance")?;
    let subset = ArraySubset::new_with_ranges(&[0..100, 0..200]);
    // Decodes straight into a new Vec<f64> (see "Reading fast").
    let data: Vec<f64> = array.retrieve_array_subset_vec::<f64>(&subset)?;
    println!("{} values, first {:?}", data.len(), data.first());
    Ok(())
}
