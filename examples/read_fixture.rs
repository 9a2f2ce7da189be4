//! The main job: open a store written by zarr-python with `scale_offset` +
//! `cast_value` (inside `sharding_indexed`) and print what zarrs decodes
//! from it, with `examples/inspect.rs` (which reads any store), then read
//! it whole the fast way, through `ArrayReadExt` (README "Reading fast").
//!
//! ```sh
//! cargo run --release --example read_fixture [-- PATH_OR_URL [--array /group/array]]
//! ```

#[path = "inspect.rs"]
mod inspect;

use std::sync::Arc;
use std::time::Instant;

use zarrs::array::ArrayError;
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::{ArrayReadExt, open_array};

/// Read a local float64 array whole into a new `Vec<f64>`, the way an
/// application would, and say what came back.
fn typed_read(path: &str, array_path: &str) -> Result<Option<String>, Box<dyn std::error::Error>> {
    if path.contains("://") {
        return Ok(None);
    }
    let array = open_array(Arc::new(FilesystemStore::new(path)?), array_path)?;
    let start = Instant::now();
    let values = match array.retrieve_array_subset_vec::<f64>(&array.subset_all()) {
        Ok(values) => values,
        // Not float64: inspect's output above is the whole story.
        Err(ArrayError::ElementError(_)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let nan = values.iter().filter(|v| v.is_nan()).count();
    Ok(Some(format!(
        "typed read {} float64 values ({nan} NaN) with retrieve_array_subset_vec in {:.1} ms",
        values.len(),
        start.elapsed().as_secs_f64() * 1e3
    )))
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        args.push(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/fixtures/zarr-python/sharded_so_cv_f64_u8_nan.zarr"
            )
            .to_string(),
        );
    }
    if let Err(e) = inspect::inspect_to_stdout(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    let array_path = match args.iter().position(|a| a == "--array") {
        Some(i) => args.get(i + 1).map_or("/", String::as_str),
        None => "/",
    };
    match typed_read(&args[0], array_path) {
        Ok(Some(line)) => println!("{line}"),
        Ok(None) => {}
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
