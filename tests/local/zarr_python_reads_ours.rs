//! The other direction: arrays written through zarrs with this crate's codecs
//! are read by zarr-python 3.4.2, which must decode the same values as from
//! its own write of the same data, and must have written the same chunk
//! bytes (`scripts/python/check_zarrs_written.py`).
//!
//! This needs the Python environment from `scripts/python/setup_venv.sh`
//! (the README's test command creates it) and fails, never skips, without it.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::{fixtures, le_to_ne, zarr_python_fixtures};
use zarrs::array::{Array, ArrayBytes, CodecOptions};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs as _;
use zarrs_extension_codecs::numeric::NumericType;

fn python() -> std::path::PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `bash scripts/python/setup_venv.sh` (the README's test command does)",
        python.display()
    );
    python
}

/// Write `fixture`'s input through zarrs into `dir`, with the fixture's metadata.
fn write_with_zarrs(fixture: &common::Fixture, dir: &Path) {
    let store_dir = dir.join(format!("{}.zarr", fixture.name));
    std::fs::create_dir_all(&store_dir).unwrap();
    std::fs::copy(fixture.store.join("zarr.json"), store_dir.join("zarr.json")).unwrap();
    let source = fixture.store.parent().unwrap();
    for ext in ["input.bin", "input.json"] {
        std::fs::copy(
            source.join(format!("{}.{ext}", fixture.name)),
            dir.join(format!("{}.{ext}", fixture.name)),
        )
        .unwrap();
    }
    let store = Arc::new(FilesystemStore::new(&store_dir).unwrap());
    let array = Array::open(store, "/").unwrap();
    let data_type = NumericType::from_data_type(array.data_type()).unwrap();
    let input = std::fs::read(source.join(format!("{}.input.bin", fixture.name))).unwrap();
    let input = le_to_ne(&input, data_type.size());
    array
        .store_array_subset(&array.subset_all(), ArrayBytes::from(input))
        .unwrap_or_else(|e| panic!("{}: zarrs could not write the input: {e}", fixture.name));
}

/// The name of the store that [`write_large_chunk`] makes.
const LARGE: &str = "large_chunk_so_cast_u8";

/// One 4 MiB float64 chunk through `scale_offset` + `cast_value` (the chain
/// zarr-python writes for reflectance products), written through zarrs with
/// a `concurrent_target` of 4, so the codecs split it into four parts;
/// zarr-python must write the same chunk bytes. zarrs' read of it (also in
/// parts) is checked against the spec's arithmetic, done here with std.
fn write_large_chunk(dir: &Path) {
    const ROWS: u32 = 1024;
    const COLS: u32 = 512;
    // The chain `benches/chain.rs` measures.
    let codecs: serde_json::Value =
        serde_json::from_str(include_str!("../data/scale_offset_cast_u8_codecs.json")).unwrap();
    let metadata = serde_json::json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": [ROWS, COLS],
        "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [ROWS, COLS]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "NaN",
        "codecs": codecs,
        "attributes": {}
    });
    // Values in [-5, 2540) with a NaN every 997 elements; some are ties
    // after scaling (x = 10k - 5 gives (x + 10) * 0.1 = k + 0.5, up to the
    // rounding of 0.1).
    let values: Vec<f64> = (0..ROWS * COLS)
        .map(|i| {
            if i % 997 == 3 {
                f64::NAN
            } else {
                f64::from(i % 25_450) / 10.0 - 5.0
            }
        })
        .collect();
    let input: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.join(format!("{LARGE}.input.bin")), &input).unwrap();
    std::fs::write(
        dir.join(format!("{LARGE}.input.json")),
        format!(r#"{{"shape": [{ROWS}, {COLS}], "data_type": "float64"}}"#),
    )
    .unwrap();
    let store_dir = dir.join(format!("{LARGE}.zarr"));
    std::fs::create_dir_all(&store_dir).unwrap();
    // The metadata as written here, not re-serialised by zarrs (which
    // writes a codec without configuration as a bare name, a form that
    // zarr-python 3.4.2 does not accept).
    std::fs::write(store_dir.join("zarr.json"), metadata.to_string()).unwrap();
    let store = Arc::new(FilesystemStore::new(&store_dir).unwrap());
    let array = Array::open(store, "/").unwrap();
    let options = CodecOptions::default().with_concurrent_target(4);
    let bytes = le_to_ne(&input, 8);
    // Borrowed, as a caller's slice is: `scale_offset` then writes a new
    // buffer part by part (an owned chunk is transformed in place, which the
    // read below covers).
    let borrowed = ArrayBytes::new_flen(std::borrow::Cow::Borrowed(&bytes[..]));
    array
        .store_array_subset_opt(&array.subset_all(), borrowed, &options)
        .unwrap();
    let read: Vec<f64> = array
        .retrieve_array_subset_opt(&array.subset_all(), &options)
        .unwrap();
    for (i, (x, y)) in values.iter().zip(read).enumerate() {
        let stored = if x.is_nan() {
            0.0
        } else {
            ((x - -10.0) * 0.1).round_ties_even()
        };
        let expected = if stored == 0.0 {
            f64::NAN
        } else {
            stored / 0.1 + -10.0
        };
        assert!(
            y.to_bits() == expected.to_bits() || (y.is_nan() && expected.is_nan()),
            "element {i}: {x} read back as {y}, expected {expected}"
        );
    }
}

#[test]
fn zarr_python_reads_what_zarrs_writes() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let all = fixtures(&zarr_python_fixtures());
    for fixture in &all {
        write_with_zarrs(fixture, dir.path());
    }
    write_large_chunk(dir.path());
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/python/check_zarrs_written.py");
    // zarrs lays out the inner chunks of a shard in its own order; the
    // checker still requires every inner chunk to be byte-identical.
    let output = Command::new(&python)
        .arg(&script)
        .arg(dir.path())
        .arg("--allow-shard-layout")
        .output()
        .expect("run the zarr-python checker");
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "zarr-python disagrees with what zarrs wrote:\n{report}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let ok_lines = report.lines().filter(|l| l.starts_with("OK")).count();
    assert_eq!(ok_lines, all.len() + 1, "checker output:\n{report}");
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("OK") && l.contains(LARGE)),
        "checker output:\n{report}"
    );
}
