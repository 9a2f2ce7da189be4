//! The other direction: arrays written through zarrs with this crate's codecs
//! are read by zarr-python 3.4.2, which must decode the same values as from
//! its own write of the same data, and must have written the same chunk
//! bytes (`scripts/python/check_zarrs_written.py`).
//!
//! This needs the Python environment from `scripts/python/setup_venv.sh`
//! (the README's test command creates it) and fails, never skips, without it.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::{fixtures, le_to_ne, zarr_python_fixtures};
use zarrs::array::{Array, ArrayBytes};
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

#[test]
fn zarr_python_reads_what_zarrs_writes() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let all = fixtures(&zarr_python_fixtures());
    for fixture in &all {
        write_with_zarrs(fixture, dir.path());
    }
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
    assert_eq!(ok_lines, all.len(), "checker output:\n{report}");
}
