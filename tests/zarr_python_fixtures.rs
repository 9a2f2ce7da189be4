//! Arrays written by zarr-python 3.4.2 (with `cast-value-rs`), read through
//! zarrs with nothing but `use zarrs_extension_codecs as _;`: this also proves
//! that the codecs register themselves from an external crate via
//! `inventory`. Every value is compared exactly with what zarr-python itself
//! decoded from the same store (`fixtures/zarr-python/*.expected.bin`).

mod common;

use std::sync::Arc;

use common::{compare, fixtures, le_to_ne, slice, u64s, zarr_python_fixtures};
use zarrs::array::{Array, ArrayBytes, ArraySubset};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs as _;
use zarrs_extension_codecs::numeric::NumericType;

fn open(path: &std::path::Path) -> Array<FilesystemStore> {
    let store = Arc::new(FilesystemStore::new(path).unwrap());
    Array::open(store, "/").unwrap_or_else(|e| panic!("open {} failed: {e}", path.display()))
}

fn read(array: &Array<FilesystemStore>, subset: &ArraySubset) -> Result<Vec<u8>, String> {
    let bytes: ArrayBytes<'static> = array
        .retrieve_array_subset(subset)
        .map_err(|e| e.to_string())?;
    Ok(bytes.into_fixed().map_err(|e| e.to_string())?.into_owned())
}

#[test]
fn whole_arrays_and_subsets_match_zarr_python() {
    let mut failures = Vec::new();
    let all = fixtures(&zarr_python_fixtures());
    for fixture in &all {
        let array = open(&fixture.store);
        let data_type = NumericType::from_data_type(array.data_type()).expect("numeric fixture");
        let expected = le_to_ne(&fixture.expected, data_type.size());
        let shape = array.shape().to_vec();
        match read(&array, &array.subset_all()) {
            Ok(actual) => {
                if let Err(e) = compare(data_type, &actual, &expected) {
                    failures.push(format!("{}: whole array: {e}", fixture.name));
                }
            }
            Err(e) => failures.push(format!("{}: whole array: {e}", fixture.name)),
        }
        for subset in fixture.meta["subsets"].as_array().into_iter().flatten() {
            let (start, sub_shape) = (u64s(&subset["start"]), u64s(&subset["shape"]));
            let subset_expected = slice(&expected, &shape, &start, &sub_shape, data_type.size());
            let array_subset =
                ArraySubset::new_with_start_shape(start.clone(), sub_shape.clone()).unwrap();
            match read(&array, &array_subset) {
                Ok(actual) => {
                    if let Err(e) = compare(data_type, &actual, &subset_expected) {
                        failures.push(format!(
                            "{}: subset {start:?}+{sub_shape:?}: {e}",
                            fixture.name
                        ));
                    }
                }
                Err(e) => failures.push(format!(
                    "{}: subset {start:?}+{sub_shape:?}: {e}",
                    fixture.name
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures differ:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
    if std::env::var("FIXTURE_FILTER").is_err() {
        assert!(
            all.len() >= 20,
            "expected the full fixture set, found {}",
            all.len()
        );
    }
}

/// Stores whose chunks zarr-python refuses to decode must fail here too, with
/// an error that names the codec.
#[test]
fn undecodable_chunks_are_errors() {
    let dir = zarr_python_fixtures().join("decode_errors");
    for (name, codec) in [
        ("so_nonexact_division", "scale_offset"),
        ("cv_u64_f16_clamp_inf", "cast_value"),
    ] {
        let array = open(&dir.join(format!("{name}.zarr")));
        let error = read(&array, &array.subset_all()).expect_err(name);
        assert!(
            error.contains(codec),
            "{name}: error does not name {codec}: {error}"
        );
    }
}
