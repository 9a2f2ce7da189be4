//! Open a store written by zarr-python with `scale_offset` + `cast_value`
//! (inside `sharding_indexed`) and print what zarrs decodes from it.
//!
//! ```sh
//! cargo run --release --example read_fixture [-- path/to/array.zarr]
//! ```

use std::sync::Arc;

use zarrs::array::ArraySubset;
use zarrs::filesystem::FilesystemStore;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/zarr-python/sharded_so_cv_f64_u8_nan.zarr"
        )
        .to_string()
    });
    let store = Arc::new(FilesystemStore::new(&path)?);
    // Opens the array and runs the codecs' data-type checks (fill value etc.).
    let array = zarrs_extension_codecs::open_array(store, "/")?;

    let metadata = serde_json::to_value(array.metadata())?;
    let codecs = |json: &serde_json::Value| -> Vec<String> {
        json.as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let name = c["name"].as_str().unwrap_or("?").to_string();
                match c["configuration"].get("codecs") {
                    Some(inner) => format!("{name}[{}]", codecs_of(inner).join(" -> ")),
                    None => name,
                }
            })
            .collect()
    };
    fn codecs_of(json: &serde_json::Value) -> Vec<String> {
        json.as_array()
            .into_iter()
            .flatten()
            .map(|c| c["name"].as_str().unwrap_or("?").to_string())
            .collect()
    }
    println!("array      {path}");
    println!("shape      {:?}", array.shape());
    println!("data type  {}", array.data_type());
    println!("fill value {}", metadata["fill_value"]);
    println!("codecs     {}", codecs(&metadata["codecs"]).join(" -> "));

    let values: Vec<f64> = array.retrieve_array_subset(&array.subset_all())?;
    let finite: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    println!(
        "elements   {} ({} NaN)",
        values.len(),
        values.len() - finite.len()
    );
    println!("min / max  {min} / {max}");

    let corner = ArraySubset::new_with_start_shape(vec![0, 0], vec![3, 6])?;
    let first: Vec<f64> = array.retrieve_array_subset(&corner)?;
    println!("values [0..3, 0..6]:");
    for row in first.chunks(6) {
        println!(
            "  {}",
            row.iter()
                .map(|v| format!("{v:8.1}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    Ok(())
}
