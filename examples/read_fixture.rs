//! The main job: open a store written by zarr-python with `scale_offset` +
//! `cast_value` (inside `sharding_indexed`) and print what zarrs decodes
//! from it, with `examples/inspect.rs` (which reads any store).
//!
//! ```sh
//! cargo run --release --example read_fixture [-- PATH_OR_URL [--array /group/array]]
//! ```

#[path = "inspect.rs"]
mod inspect;

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
}
