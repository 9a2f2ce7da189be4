//! Helpers shared by the integration tests: fixture discovery, exact
//! element comparison, C-order subsets, store contents, and (in `packbits`)
//! the `packbits` specification's decode rule.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use zarrs_extension_codecs::numeric::NumericType;

pub mod packbits;

/// `fixtures/zarr-python` in the repository.
pub fn zarr_python_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/zarr-python")
}

/// A fixture: its store, the values zarr-python decoded, and its description.
pub struct Fixture {
    pub name: String,
    pub store: PathBuf,
    pub meta: serde_json::Value,
    pub expected: Vec<u8>,
}

/// The names of the `NAME.expected.json` fixtures under `dir`, sorted.
pub fn fixture_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("fixtures directory {}: {e}", dir.display()))
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".expected.json").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

/// The `count` fixtures under `dir` (names and parsed
/// `NAME.expected.json`), sorted by name, for stores whose expected values
/// live in the JSON alone.
pub fn fixtures_with_json(dir: &Path, count: usize) -> Vec<(String, serde_json::Value)> {
    let names = fixture_names(dir);
    assert_eq!(
        names.len(),
        count,
        "fixtures missing in {}: {names:?}",
        dir.display()
    );
    names
        .into_iter()
        .map(|name| {
            let path = dir.join(format!("{name}.expected.json"));
            let expected = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            (name, expected)
        })
        .collect()
}

/// Every fixture under `dir` with its `NAME.expected.json` and
/// `NAME.expected.bin`, sorted by name.
pub fn fixtures(dir: &Path) -> Vec<Fixture> {
    let mut names = fixture_names(dir);
    // `FIXTURE_FILTER=cv_` narrows a run while debugging.
    if let Ok(filter) = std::env::var("FIXTURE_FILTER") {
        names.retain(|n| n.contains(&filter));
    }
    assert!(!names.is_empty(), "no fixtures in {}", dir.display());
    names
        .into_iter()
        .map(|name| {
            let meta: serde_json::Value = serde_json::from_slice(
                &std::fs::read(dir.join(format!("{name}.expected.json"))).unwrap(),
            )
            .unwrap();
            let expected = std::fs::read(dir.join(format!("{name}.expected.bin"))).unwrap();
            Fixture {
                store: dir.join(format!("{name}.zarr")),
                name,
                meta,
                expected,
            }
        })
        .collect()
}

/// Little-endian element bytes to native-endian.
pub fn le_to_ne(bytes: &[u8], size: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if cfg!(target_endian = "big") {
        out.chunks_exact_mut(size).for_each(<[u8]>::reverse);
    }
    out
}

/// Compare element by element: bit-exact, except that any NaN equals any NaN.
/// Returns a description of the first difference.
pub fn compare(data_type: NumericType, actual: &[u8], expected: &[u8]) -> Result<(), String> {
    let size = data_type.size();
    if actual.len() != expected.len() {
        return Err(format!(
            "{} bytes, expected {}",
            actual.len(),
            expected.len()
        ));
    }
    for (i, (a, e)) in actual
        .chunks_exact(size)
        .zip(expected.chunks_exact(size))
        .enumerate()
    {
        if a == e {
            continue;
        }
        let (va, ve) = (data_type.read_value(a), data_type.read_value(e));
        let both_nan = matches!((va, ve), (
            zarrs_extension_codecs::numeric::Value::Float(x),
            zarrs_extension_codecs::numeric::Value::Float(y)
        ) if x.is_nan() && y.is_nan());
        if !both_nan {
            return Err(format!(
                "element {i}: got {va} ({a:02x?}), expected {ve} ({e:02x?})"
            ));
        }
    }
    Ok(())
}

/// The C-order subset `start`/`shape` of an array of `array_shape` elements of `size` bytes.
pub fn slice(
    bytes: &[u8],
    array_shape: &[u64],
    start: &[u64],
    shape: &[u64],
    size: usize,
) -> Vec<u8> {
    let mut out = Vec::new();
    let n: u64 = shape.iter().product();
    let mut index = vec![0u64; shape.len()];
    for _ in 0..n {
        let mut flat = 0u64;
        for d in 0..shape.len() {
            flat = flat * array_shape[d] + start[d] + index[d];
        }
        let flat = flat as usize * size;
        out.extend_from_slice(&bytes[flat..flat + size]);
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// `[u64]` from a JSON array.
pub fn u64s(json: &serde_json::Value) -> Vec<u64> {
    json.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

/// Every key of `store` with its value, sorted by key.
pub fn store_contents(store: &zarrs::storage::store::MemoryStore) -> Vec<(String, Vec<u8>)> {
    use zarrs::storage::{ListableStorageTraits, ReadableStorageTraits};
    let mut keys = store.list().unwrap();
    keys.sort();
    keys.into_iter()
        .map(|key| (key.to_string(), store.get(&key).unwrap().unwrap().to_vec()))
        .collect()
}

/// Codec options that make `sharding_indexed` write inner chunks in C order.
/// zarrs' default order is whatever its threads finish first, so the bytes of
/// two shards with the same content can differ between runs.
pub fn c_order() -> zarrs::array::codec::api::CodecSpecificOptions {
    use zarrs::array::codec::{ShardingCodecOptions, SubchunkWriteOrder};
    zarrs::array::codec::api::CodecSpecificOptions::default().with_option(
        ShardingCodecOptions::default().with_subchunk_write_order(SubchunkWriteOrder::C),
    )
}

/// Deterministic pseudo-random numbers (xorshift64*), so that failures replay.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn byte(&mut self) -> u8 {
        (self.next() >> 56) as u8
    }

    /// A number below `n` (> 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Variable-length array bytes holding `values`.
pub fn vlen<T: AsRef<[u8]>>(values: &[T]) -> zarrs::array::codec::api::ArrayBytes<'static> {
    use zarrs::array::codec::api::{ArrayBytes, ArrayBytesOffsets};
    let mut offsets = vec![0];
    let mut data = vec![];
    for v in values {
        data.extend_from_slice(v.as_ref());
        offsets.push(data.len());
    }
    ArrayBytes::new_vlen(data, ArrayBytesOffsets::new(offsets).unwrap()).unwrap()
}

/// Every key under a store directory other than `zarr.json`, with its bytes,
/// sorted (as [`store_contents`] lists a memory store).
pub fn chunk_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        for entry in std::fs::read_dir(&path).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().unwrap() != "zarr.json" {
                let key = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                files.push((key, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// `dims` as the non-zero extents zarrs' codec API takes (a zero extent is a
/// mistake in the test).
pub fn nonzero(dims: &[u64]) -> Vec<std::num::NonZeroU64> {
    dims.iter()
        .map(|&d| std::num::NonZeroU64::new(d).expect("a zero extent"))
        .collect()
}

/// The fill value of all-zero bytes for a fixed-size `data_type`.
pub fn zero_fill(data_type: &zarrs::array::DataType) -> zarrs::array::FillValue {
    zarrs::array::FillValue::new(vec![0; data_type.fixed_size().unwrap()])
}

/// Copy the directory tree `from` to `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every file under `dir`, in no particular order.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}
