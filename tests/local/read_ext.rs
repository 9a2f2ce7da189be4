//! `ArrayReadExt` against zarrs' `retrieve_array_subset::<Vec<T>>` on every
//! bundled fixture store (zarr-python, tensorstore, zarrs' built-ins), and
//! against the values zarr-python decoded where the fixture has them.
//!
//! Windows cut chunks and shards, reach into edge chunks, and cover chunks
//! that were never written (fill value). The slice form is filled with a
//! pattern first, so every element it returns must have been written.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytemuck::Pod;
use zarrs::array::{Array, ArraySubset, CodecOptions, Element, ElementOwned};
use zarrs::filesystem::FilesystemStore;
use zarrs::plugin::ZarrVersion;
use zarrs_extension_codecs::ArrayReadExt;

type FsArray = Array<FilesystemStore>;

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Every `*.zarr` array under `fixtures/` (stores may be nested one level).
fn stores() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.extension().is_some_and(|e| e == "zarr") {
                    out.push(path);
                } else {
                    walk(&path, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&fixture_root(), &mut out);
    out.sort();
    out
}

fn open(path: &Path) -> FsArray {
    let store = Arc::new(FilesystemStore::new(path).unwrap());
    Array::open(store, "/").unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Windows of `array`: the whole array, one cutting the first chunks, one in
/// the last (edge) chunks, a single element at the end, and one element per
/// dimension less than a chunk from the origin.
fn windows(array: &FsArray) -> Vec<ArraySubset> {
    let shape = array.shape().to_vec();
    let chunk: Vec<u64> = array
        .chunk_shape(&vec![0; shape.len()])
        .unwrap()
        .iter()
        .map(|c| c.get())
        .collect();
    let mut out = vec![array.subset_all()];
    // Across the first chunk boundary in every dimension.
    let cut: Vec<_> = shape
        .iter()
        .zip(&chunk)
        .map(|(&s, &c)| {
            let start = (c / 2).min(s - 1);
            start..(start + c + 1).min(s)
        })
        .collect();
    out.push(ArraySubset::new_with_ranges(&cut));
    // The last elements, inside the edge chunks.
    let edge: Vec<_> = shape
        .iter()
        .zip(&chunk)
        .map(|(&s, &c)| s.saturating_sub(c / 3 + 1)..s)
        .collect();
    out.push(ArraySubset::new_with_ranges(&edge));
    let last: Vec<_> = shape.iter().map(|&s| s - 1..s).collect();
    out.push(ArraySubset::new_with_ranges(&last));
    // A thin slab: one index in dimension 0, the whole of the others.
    if shape.len() > 1 {
        let mut slab: Vec<_> = shape.iter().map(|&s| 0..s).collect();
        slab[0] = shape[0] / 2..shape[0] / 2 + 1;
        out.push(ArraySubset::new_with_ranges(&slab));
    }
    out
}

/// Equal as zarrs' element type, bit for bit (NaNs included: both sides
/// decode the same bytes).
fn same<T: Pod>(a: &[T], b: &[T]) -> bool {
    bytemuck::cast_slice::<T, u8>(a) == bytemuck::cast_slice::<T, u8>(b)
}

/// A pattern no decoder writes by accident: every byte 0xA5.
fn pattern<T: Pod>(len: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); len];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).fill(0xA5);
    v
}

/// Compare the three ways of reading every window; returns the whole array,
/// or `None` if zarrs refuses it (stores of chunks that must not decode), in
/// which case the typed reads must refuse it with the same error.
fn check<T: Element + ElementOwned + Pod>(path: &Path, array: &FsArray) -> Option<Vec<T>> {
    let one_thread = CodecOptions::default().with_concurrent_target(1);
    let mut whole = None;
    for (i, window) in windows(array).into_iter().enumerate() {
        let at = format!("{}: {window}", path.display());
        let reference: Vec<T> = match array.retrieve_array_subset(&window) {
            Ok(v) => v,
            Err(e) => {
                // zarrs' error, after the array's path and the failing
                // chunk's key.
                let named = |error: String| {
                    assert!(
                        error.starts_with("array /: chunk c") && error.ends_with(&e.to_string()),
                        "{at}: {error}"
                    );
                };
                let vec = array.retrieve_array_subset_vec::<T>(&window).map(|_| ());
                named(vec.unwrap_err().to_string());
                let mut out = pattern::<T>(window.num_elements_usize());
                let slice = array.retrieve_array_subset_into_slice(&window, &mut out);
                named(slice.unwrap_err().to_string());
                continue;
            }
        };
        let vec: Vec<T> = array.retrieve_array_subset_vec(&window).unwrap();
        assert!(same(&vec, &reference), "{at}: vec");
        let vec1: Vec<T> = array
            .retrieve_array_subset_vec_opt(&window, &one_thread)
            .unwrap();
        assert!(same(&vec1, &reference), "{at}: vec, 1 thread");
        let mut out = pattern::<T>(reference.len());
        array
            .retrieve_array_subset_into_slice(&window, &mut out)
            .unwrap();
        assert!(same(&out, &reference), "{at}: slice");
        if i == 0 {
            whole = Some(vec);
        }
    }
    whole
}

/// The values another implementation decoded (zarr-python, tensorstore),
/// where the fixture has them. `fixtures/zarrs-builtin` holds the values
/// written instead (lossy for `packbits` bit ranges), so it is left out.
fn expected_bytes(path: &Path) -> Option<Vec<u8>> {
    if path.starts_with(fixture_root().join("zarrs-builtin")) {
        return None;
    }
    let name = path.file_stem()?.to_str()?;
    std::fs::read(path.with_file_name(format!("{name}.expected.bin"))).ok()
}

#[test]
fn equals_zarrs_on_every_fixture_store() {
    zarrs_extension_codecs::register_overrides();
    let mut checked = 0;
    let mut with_expected = 0;
    let mut refused = Vec::new();
    for path in stores() {
        let array = open(&path);
        let dt = array
            .data_type()
            .name(ZarrVersion::V3)
            .map(|n| n.to_string())
            .unwrap_or_default();
        let whole_bytes: Option<Vec<u8>> = match dt.as_str() {
            "int8" => check::<i8>(&path, &array).map(bytemuck::cast_vec),
            "int16" => check::<i16>(&path, &array).map(|v| bytemuck::cast_slice(&v).to_vec()),
            "int32" => check::<i32>(&path, &array).map(|v| bytemuck::cast_slice(&v).to_vec()),
            "int64" => check::<i64>(&path, &array).map(|v| bytemuck::cast_slice(&v).to_vec()),
            "uint8" => check::<u8>(&path, &array),
            "uint16" => check::<u16>(&path, &array).map(|v| bytemuck::cast_slice(&v).to_vec()),
            "uint32" => check::<u32>(&path, &array).map(|v| bytemuck::cast_slice(&v).to_vec()),
            "uint64" => check::<u64>(&path, &array).map(|v| bytemuck::cast_slice(&v).to_vec()),
            "float16" => {
                check::<half::f16>(&path, &array).map(|v| bytemuck::cast_slice(&v).to_vec())
            }
            "bfloat16" => {
                check::<half::bf16>(&path, &array).map(|v| bytemuck::cast_slice(&v).to_vec())
            }
            "float32" => check::<f32>(&path, &array).map(|v| bytemuck::cast_slice(&v).to_vec()),
            "float64" => check::<f64>(&path, &array).map(|v| bytemuck::cast_slice(&v).to_vec()),
            _ => {
                // Types without a plain Rust element type here (bool,
                // strings, sub-byte, complex, float8): a one-byte read is
                // either what zarrs gives or refused in words, never a panic.
                let all = array.subset_all();
                match array.retrieve_array_subset_vec::<u8>(&all) {
                    Ok(ours) => {
                        let reference: Vec<u8> = array.retrieve_array_subset(&all).unwrap();
                        assert_eq!(ours, reference, "{}", path.display());
                    }
                    Err(e) => {
                        let err = e.to_string();
                        assert!(
                            err.contains("retrieve_array_subset_vec") && err.contains(&dt),
                            "{}: {err}",
                            path.display()
                        );
                        refused.push(dt);
                    }
                }
                None
            }
        };
        if let (Some(ours), Some(expected)) = (whole_bytes, expected_bytes(&path)) {
            // The fixtures store little-endian bytes.
            let nt =
                zarrs_extension_codecs::numeric::NumericType::from_data_type(array.data_type())
                    .expect("a numeric type");
            let expected = common::le_to_ne(&expected, nt.size());
            common::compare(nt, &ours, &expected)
                .unwrap_or_else(|e| panic!("{}: vs its writer: {e}", path.display()));
            with_expected += 1;
        }
        checked += 1;
    }
    // Every fixture directory contributes.
    assert!(checked >= 80, "only {checked} stores");
    assert!(
        with_expected >= 60,
        "only {with_expected} stores compared with expected values"
    );
    assert!(!refused.is_empty(), "no store exercised the refusal path");
}

#[test]
fn mismatched_element_type_is_refused_in_words() {
    let path = fixture_root().join("zarr-python/so_cv_f64_u8_nan.zarr");
    let array = open(&path);
    let all = array.subset_all();
    let err = array
        .retrieve_array_subset_vec::<i64>(&all)
        .unwrap_err()
        .to_string();
    assert!(err.contains("i64") && err.contains("float64"), "{err}");
    let err = array
        .retrieve_array_subset_vec::<f32>(&all)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("f32 (4 bytes)") && err.contains("(8 bytes)"),
        "{err}"
    );
}

#[test]
fn wrong_output_length_and_subset_are_errors() {
    let array = open(&fixture_root().join("zarr-python/so_cv_f64_u8_nan.zarr"));
    let all = array.subset_all();
    let n = all.num_elements_usize();
    let mut short = vec![0f64; n - 1];
    let err = array
        .retrieve_array_subset_into_slice(&all, &mut short)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("output holds {} elements", n - 1)),
        "{err}"
    );
    // Wrong dimensionality.
    #[allow(clippy::single_range_in_vec_init)] // a one-dimensional subset
    let err = array
        .retrieve_array_subset_vec::<f64>(&ArraySubset::new_with_ranges(&[0..1]))
        .unwrap_err();
    assert!(err.to_string().contains("not compatible"), "{err}");
    // Past the end: zarrs reads the fill value there (kept for callers who
    // want it); the typed reads refuse, naming the window, the array, the
    // dimension and where to get zarrs' behaviour.
    let shape = array.shape().to_vec();
    let past = ArraySubset::new_with_ranges(&shape.iter().map(|&s| 0..s + 1).collect::<Vec<_>>());
    let reference: Vec<f64> = array.retrieve_array_subset(&past).unwrap();
    assert!(
        reference.last().unwrap().is_nan(),
        "fill value NaN past the end"
    );
    let err = array
        .retrieve_array_subset_vec::<f64>(&past)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "retrieve_array_subset_vec: window [0..41, 0..51] reaches outside array / of shape \
         [40, 50] (dimension 0: 0..41 against 40); zarrs' own retrieve_array_subset reads it \
         padded with the fill value"
    );
    // A window that starts past the end, in the last dimension, and one
    // whose end overflows u64.
    for (window, dimension) in [
        (
            ArraySubset::new_with_ranges(&[40..41, 0..1]),
            "dimension 0: 40..41 against 40",
        ),
        (
            ArraySubset::new_with_ranges(&[0..1, 49..51]),
            "dimension 1: 49..51 against 50",
        ),
    ] {
        let mut out = vec![0f64; window.num_elements_usize()];
        let err = array
            .retrieve_array_subset_into_slice(&window, &mut out)
            .unwrap_err()
            .to_string();
        assert!(err.contains(dimension), "{err}");
    }
    let huge = ArraySubset::new_with_start_shape(vec![1, u64::MAX], vec![1, 2]).unwrap();
    let err = array
        .retrieve_array_subset_vec::<f64>(&huge)
        .unwrap_err()
        .to_string();
    assert!(err.contains("reaches outside"), "{err}");
}

/// A chunk that fails to decode is named by its key, after the array's
/// path: a copy of a zarr-python store (gzip + crc32c) with one byte of
/// chunk `c/1/2` flipped.
#[test]
fn a_corrupt_chunk_is_named_by_its_key() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/zarr-python-products/gzip_crc32c_i16.zarr");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("product.zarr");
    for entry in common::files_under(&source) {
        let to = copy.join(entry.strip_prefix(&source).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &to).unwrap();
    }
    let chunk = copy.join("c/1/2");
    let mut bytes = std::fs::read(&chunk).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&chunk, bytes).unwrap();
    let store = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    let array = zarrs_extension_codecs::open_array(store, "/product.zarr").unwrap();
    // zarrs' own read does not say which chunk.
    let plain = array
        .retrieve_array_subset::<Vec<i16>>(&array.subset_all())
        .unwrap_err()
        .to_string();
    assert!(!plain.contains("c/1/2"), "{plain}");
    for window in [
        array.subset_all(),
        ArraySubset::new_with_ranges(&[20..30, 40..41]),
    ] {
        let err = array
            .retrieve_array_subset_vec::<i16>(&window)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("array /product.zarr: chunk product.zarr/c/1/2: "),
            "{err}"
        );
    }
    // A window that does not touch the chunk reads.
    let fine = ArraySubset::new_with_ranges(&[0..16, 0..32]);
    array.retrieve_array_subset_vec::<i16>(&fine).unwrap();
}

/// A chunk's file the operating system will not open (a link to itself:
/// `ELOOP`; as root, permissions would not refuse) is an error that keeps
/// the system's number ([`OsReadError`]) and names the chunk, on the read
/// paths of plain chunks and of shards.
///
/// [`OsReadError`]: zarrs_extension_codecs::OsReadError
#[test]
fn a_chunk_the_system_refuses_keeps_its_error_number() {
    use zarrs::array::ArrayError;
    use zarrs_extension_codecs::OsReadError;
    let check = |name: &str, chunk: &str, read: &dyn Fn(&FsArray) -> ArrayError| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/zarr-python-products")
            .join(name);
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("product.zarr");
        for entry in common::files_under(&source) {
            let to = copy.join(entry.strip_prefix(&source).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&entry, &to).unwrap();
        }
        let path = copy.join(chunk);
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&path, &path).unwrap();
        let store = Arc::new(FilesystemStore::new(dir.path()).unwrap());
        let array = zarrs_extension_codecs::open_array(store, "/product.zarr").unwrap();
        let err = read(&array);
        let os = OsReadError::in_error(&err).unwrap_or_else(|| panic!("{name}: {err:?}"));
        assert_eq!(os.errno(), 40, "{name}: {err}"); // ELOOP
        let context = os.context();
        assert!(
            context.contains(&format!("product.zarr/{chunk}")),
            "{name}: {context}"
        );
    };
    check("gzip_crc32c_i16.zarr", "c/1/2", &|array| {
        array
            .retrieve_array_subset_vec::<i16>(&array.subset_all())
            .unwrap_err()
    });
    check("sharded_so_cv_blosc.zarr", "c/0/2", &|array| {
        array
            .retrieve_array_subset_vec::<f64>(&array.subset_all())
            .unwrap_err()
    });
}

#[test]
fn variable_length_is_refused_in_words() {
    zarrs_extension_codecs::register_overrides();
    let vlen: Vec<PathBuf> = stores()
        .into_iter()
        .filter(|p| open(p).data_type().fixed_size().is_none())
        .collect();
    assert!(!vlen.is_empty(), "no variable-length fixture store");
    for path in vlen {
        let array = open(&path);
        let err = array
            .retrieve_array_subset_vec::<u8>(&array.subset_all())
            .unwrap_err()
            .to_string();
        assert!(err.contains("variable-length"), "{}: {err}", path.display());
    }
}

/// A large output (advised for huge pages) decodes the same as zarrs does,
/// with absent chunks as fill value: a 1024 x 1024 float64 array of
/// 256 x 256 chunks, written through zarrs' own codecs with one chunk left
/// out.
#[test]
fn large_output_with_absent_chunk() {
    use zarrs::array::ArrayBuilder;
    use zarrs::storage::store::MemoryStore;
    let store = Arc::new(MemoryStore::new());
    let array = ArrayBuilder::new(
        vec![1024, 1024],
        vec![256, 256],
        zarrs::array::data_type::float64(),
        f64::NAN,
    )
    .build(store, "/")
    .unwrap();
    for cy in 0..4u64 {
        for cx in 0..4u64 {
            if (cy, cx) == (2, 1) {
                continue;
            }
            let values: Vec<f64> = (0..256 * 256)
                .map(|i| (cy * 4 + cx) as f64 * 1e6 + i as f64)
                .collect();
            array.store_chunk(&[cy, cx], values).unwrap();
        }
    }
    let all = array.subset_all();
    let reference: Vec<f64> = array.retrieve_array_subset(&all).unwrap();
    let ours = array.retrieve_array_subset_vec::<f64>(&all).unwrap();
    assert!(same(&ours, &reference));
    // The left-out chunk reads as NaN, the others as written.
    assert!(ours[2 * 256 * 1024 + 256].is_nan());
    // Row 1, column 1 is chunk (0, 0)'s element 1 * 256 + 1.
    assert_eq!(ours[1024 + 1], 257.0);
}
