//! Arrays written by zarr-python 3.4.2 (with `cast-value-rs`), read through
//! zarrs with nothing but `use zarrs_extension_codecs as _;`: this also proves
//! that the codecs register themselves from an external crate via
//! `inventory`. Every value is compared exactly with what zarr-python itself
//! decoded from the same store (`fixtures/zarr-python/*.expected.bin`).

use crate::common;

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

fn products_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/zarr-python-products")
}

/// A read through `ArrayReadExt` (into the element type of the fixture's
/// data type), as native-endian bytes.
fn read_typed(
    array: &Array<FilesystemStore>,
    data_type: &str,
    subset: &ArraySubset,
) -> Result<Vec<u8>, String> {
    use zarrs_extension_codecs::ArrayReadExt;
    fn bytes<T: Copy, const N: usize>(values: Vec<T>, to: fn(T) -> [u8; N]) -> Vec<u8> {
        values.into_iter().flat_map(to).collect()
    }
    let e = |e: zarrs::array::ArrayError| e.to_string();
    Ok(match data_type {
        "float64" => bytes(
            array.retrieve_array_subset_vec::<f64>(subset).map_err(e)?,
            f64::to_ne_bytes,
        ),
        "float32" => bytes(
            array.retrieve_array_subset_vec::<f32>(subset).map_err(e)?,
            f32::to_ne_bytes,
        ),
        "int16" => bytes(
            array.retrieve_array_subset_vec::<i16>(subset).map_err(e)?,
            i16::to_ne_bytes,
        ),
        other => return Err(format!("no typed read for {other}")),
    })
}

/// Stores shaped like real products, written by zarr-python 3.4.2
/// (`scripts/python/make_fixtures_products.py`): blosc and zstd inside
/// sharding, zarr-python's default zstd, gzip + crc32c, and fill values that
/// do not survive scale_offset + cast_value (unsharded and inside
/// sharding). Whole and in windows, through zarrs' own read after
/// `Array::open` and through `open_array` + `ArrayReadExt`, every value
/// equals what zarr-python read.
#[test]
fn products_match_zarr_python() {
    let all = fixtures(&products_dir());
    let mut failures = Vec::new();
    for fixture in &all {
        let data_type = {
            let array = open(&fixture.store);
            NumericType::from_data_type(array.data_type()).expect("numeric fixture")
        };
        let expected = le_to_ne(&fixture.expected, data_type.size());
        let store = Arc::new(FilesystemStore::new(&fixture.store).unwrap());
        let opened = match zarrs_extension_codecs::open_array(store, "/") {
            Ok(array) => array,
            Err(e) => {
                failures.push(format!("{}: open_array: {e}", fixture.name));
                continue;
            }
        };
        let plain = open(&fixture.store);
        let shape = plain.shape().to_vec();
        let name = fixture.meta["data_type"].as_str().unwrap();
        let mut windows = vec![(vec![0; shape.len()], shape.clone())];
        for subset in fixture.meta["subsets"].as_array().into_iter().flatten() {
            windows.push((u64s(&subset["start"]), u64s(&subset["shape"])));
        }
        for (start, sub_shape) in windows {
            let want = slice(&expected, &shape, &start, &sub_shape, data_type.size());
            let subset = ArraySubset::new_with_start_shape(start.clone(), sub_shape).unwrap();
            for (how, got) in [
                ("zarrs' read", read(&plain, &subset)),
                ("ArrayReadExt", read_typed(&opened, name, &subset)),
            ] {
                if let Err(e) = got.and_then(|got| compare(data_type, &got, &want)) {
                    failures.push(format!("{}: {how} at {start:?}: {e}", fixture.name));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(all.len(), 7, "expected every product fixture");
}

/// The arrays whose fill value does not survive the codecs read (above),
/// but writing stays refused, and `validate_codecs` / `fill_value_warning`
/// say why, quoting the spec.
#[test]
fn a_fill_value_that_does_not_survive_refuses_writes_only() {
    for name in [
        "fill_so_cv_u16_clamp",
        "fill_so_cv_u16_wrap",
        "sharded_fill_so_cv_u16_clamp",
    ] {
        let path = products_dir().join(format!("{name}.zarr"));
        // A copy: the write below must not touch the fixture.
        let dir = tempfile::tempdir().unwrap();
        for entry in std::fs::read_dir(&path).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_file() {
                std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
            }
        }
        let store = Arc::new(FilesystemStore::new(dir.path()).unwrap());
        let array = zarrs_extension_codecs::open_array(store, "/").unwrap();
        let error = zarrs_extension_codecs::validate_codecs(&array)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("cast_value: fill value -1000.0 does not survive encode then decode")
                && error.contains("MUST treat this as an error")
                && error.contains("reading is allowed"),
            "{name}: {error}"
        );
        let warning = zarrs_extension_codecs::fill_value_warning(&array).unwrap();
        assert_eq!(warning, error);
        // The same warning from the one-pass check reading makes.
        assert_eq!(
            zarrs_extension_codecs::validate_codecs_for_reading_with_warning(&array).unwrap(),
            Some(warning)
        );
        let write = array
            .store_array_subset(
                &ArraySubset::new_with_ranges(&[0..2, 0..2]),
                vec![150.0f64; 4],
            )
            .unwrap_err()
            .to_string();
        assert!(write.contains("writing is refused"), "{name}: {write}");
    }
    // An array whose fill value survives has no warning.
    let array = open(&products_dir().join("sharded_so_cv_zstd.zarr"));
    assert_eq!(zarrs_extension_codecs::fill_value_warning(&array), None);
    assert_eq!(
        zarrs_extension_codecs::validate_codecs_for_reading_with_warning(&array).unwrap(),
        None
    );
}
