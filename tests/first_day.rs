//! A first-time user's program (the README's "Use" program, `open_array`)
//! reads the stores that zarrs' built-ins read wrong or refuse: int4 written
//! by tensorstore (upper bits not the sign extension), `packbits` on signed
//! integers, and `transpose` with order "C" / "F". Without the overrides,
//! each is an error that names `register_overrides()`, never wrong values.
//!
//! One test function: `register_overrides()` is process-wide, and the first
//! half must run before anything installs it.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{compare, fixtures, le_to_ne, slice, u64s};
use zarrs::array::{Array, ArrayBytes, ArraySubset};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::numeric::NumericType;
use zarrs_extension_codecs::{
    ArrayReadExt, open_array, open_error_hint, registered_codecs, validate_codecs,
};

fn fixture(dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(dir)
        .join(format!("{name}.zarr"))
}

fn store(path: &Path) -> Arc<FilesystemStore> {
    Arc::new(FilesystemStore::new(path).unwrap())
}

/// The stores of the issue: what zarrs' built-ins read wrong or refuse.
const SILENT: [(&str, &str); 4] = [
    // built-in bytes reads 0x0f as 15 where the spec says -1
    ("tensorstore", "bytes_int4"),
    ("tensorstore", "bytes_int4_upper_bits_set"),
    // built-in packbits loses the sign in a partial read
    ("zarrs-builtin/packbits", "int4_sharded_last_byte"),
    ("zarrs-builtin/packbits", "int2"),
];
const REFUSED: [(&str, &str); 2] = [
    ("tensorstore", "transpose_C_literal_f32_le"),
    ("tensorstore", "transpose_F_literal_i32_be"),
];

#[test]
fn without_overrides_errors_name_register_overrides_then_open_array_reads_right() {
    assert!(
        registered_codecs()
            .iter()
            .filter(|c| c.needs_overrides)
            .all(|c| !c.registered),
        "this test must start before register_overrides()"
    );
    // 1. What a user who does not call register_overrides() gets: errors.
    for (dir, name) in SILENT {
        let array = Array::open(store(&fixture(dir, name)), "/")
            .unwrap_or_else(|e| panic!("{name}: zarrs opens it: {e}"));
        let error = validate_codecs(&array).expect_err(name).to_string();
        assert!(error.contains("register_overrides()"), "{name}: {error}");
        let error = array
            .retrieve_array_subset_vec::<i8>(&array.subset_all())
            .expect_err(name)
            .to_string();
        assert!(error.contains("register_overrides()"), "{name}: {error}");
    }
    for (dir, name) in REFUSED {
        let error = Array::open(store(&fixture(dir, name)), "/").expect_err(name);
        let hint = open_error_hint(&error).unwrap_or_default();
        assert!(
            hint.contains("register_overrides()"),
            "{name}: {error}: {hint}"
        );
    }

    // 2. open_array installs the overrides: every value as the writer read it.
    for (dir, name) in SILENT.iter().chain(&REFUSED) {
        let all = fixtures(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures")
                .join(dir),
        );
        let fixture = all.iter().find(|f| f.name == *name).unwrap();
        let array = open_array(store(&fixture.store), "/").unwrap_or_else(|e| panic!("{e}"));
        let data_type = NumericType::from_data_type(array.data_type()).unwrap();
        let expected = le_to_ne(&fixture.expected, data_type.size());
        let read = |subset: &ArraySubset| -> Vec<u8> {
            let bytes: ArrayBytes<'static> = array.retrieve_array_subset(subset).unwrap();
            bytes.into_fixed().unwrap().into_owned()
        };
        compare(data_type, &read(&array.subset_all()), &expected)
            .unwrap_or_else(|e| panic!("{name}: whole: {e}"));
        for subset in fixture.meta["subsets"].as_array().into_iter().flatten() {
            let (start, shape) = (u64s(&subset["start"]), u64s(&subset["shape"]));
            let want = slice(&expected, array.shape(), &start, &shape, data_type.size());
            let got = read(&ArraySubset::new_with_start_shape(start.clone(), shape).unwrap());
            compare(data_type, &got, &want)
                .unwrap_or_else(|e| panic!("{name}: subset at {start:?}: {e}"));
        }
    }
}
