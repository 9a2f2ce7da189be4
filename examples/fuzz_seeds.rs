//! Writes seed inputs for the fuzz targets in `fuzz/` from the stores in
//! `fixtures/`, in the input formats `tests/fuzz_harness` reads:
//!
//! - `configuration`: a byte naming the codec, then the configuration JSON
//!   of every codec of this crate found in a fixture's `zarr.json`
//!   (nested in `sharding_indexed` and `zarrs.vlen` too);
//! - `decode`: mode byte 0, the fixture's `zarr.json` (length-prefixed), 8
//!   window bytes and the bytes of its chunk 0; and the same with the mode
//!   byte that also reads chunk 0 as part of an output of 4 MiB or more;
//! - `round_trip` / `differential`: structured input has no fixture form, so
//!   a few deterministic pseudo-random byte strings.
//!
//! `cargo run --example fuzz_seeds [OUT_DIR]` (default `fuzz/seeds`);
//! `scripts/fuzz.sh` runs the targets from them, the committed replay set
//! (`fuzz/replay/<target>/`) and the local corpus (`fuzz/corpus/<target>/`),
//! and `scripts/fuzz_replay_set.sh` folds what coverage they add into the
//! replay set.

use std::path::{Path, PathBuf};

use serde_json::Value;

// The harness the targets share, for its codec names (the `configuration`
// target's first byte indexes them).
#[path = "../tests/fuzz_harness/mod.rs"]
mod fuzz_harness;

use fuzz_harness::targets::{CODEC_NAMES, LARGE_READ_MODE};

fn stores(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "zarr") {
            out.push(path);
        } else if path.is_dir() {
            stores(&path, out);
        }
    }
}

/// Every codec metadata object anywhere in `value`.
fn codecs<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
    match value {
        Value::Object(map) => {
            if map.get("name").and_then(Value::as_str).is_some() {
                out.push(value);
            }
            map.values().for_each(|v| codecs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| codecs(v, out)),
        _ => {}
    }
}

/// The bytes of chunk 0 of the array at `store`, if written.
fn chunk_zero(store: &Path, ndim: usize) -> Option<Vec<u8>> {
    let zeros = vec!["0"; ndim];
    [
        format!("c/{}", zeros.join("/")),
        format!("c.{}", zeros.join(".")),
    ]
    .iter()
    .find_map(|key| std::fs::read(store.join(key)).ok())
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::args()
        .nth(1)
        .map_or_else(|| root.join("fuzz/seeds"), PathBuf::from);
    let mut all = Vec::new();
    stores(&root.join("fixtures"), &mut all);
    all.sort();
    let (mut n_config, mut n_decode) = (0, 0);
    for store in &all {
        let tag = store.file_stem().unwrap().to_string_lossy().into_owned();
        let Ok(text) = std::fs::read(store.join("zarr.json")) else {
            continue;
        };
        let metadata: Value = serde_json::from_slice(&text).unwrap();
        let mut found = Vec::new();
        codecs(&metadata["codecs"], &mut found);
        for (i, codec) in found.iter().enumerate() {
            let name = codec["name"].as_str().unwrap();
            let Some(index) = CODEC_NAMES.iter().position(|n| *n == name) else {
                continue;
            };
            let mut seed = vec![index as u8];
            seed.extend(serde_json::to_vec(&codec["configuration"]).unwrap());
            write(&out.join("configuration"), &format!("{tag}-{i}"), &seed);
            n_config += 1;
        }
        let ndim = metadata["shape"].as_array().map_or(0, Vec::len);
        let Some(chunk) = chunk_zero(store, ndim) else {
            continue;
        };
        let compact = serde_json::to_vec(&metadata).unwrap();
        let mut seed = vec![0u8];
        seed.extend(u16::try_from(compact.len()).unwrap().to_le_bytes());
        seed.extend(&compact);
        seed.extend([1, 2, 3, 4, 5, 6, 7, 8]);
        seed.extend(&chunk);
        write(&out.join("decode"), &tag, &seed);
        seed[0] = LARGE_READ_MODE;
        write(&out.join("decode"), &format!("{tag}-large"), &seed);
        n_decode += 2;
    }
    // xorshift64*: fixed seeds, so the corpus is reproducible.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for target in ["round_trip", "differential", "decode"] {
        for i in 0..16 {
            let bytes: Vec<u8> = (0..64 + 32 * i)
                .map(|_| {
                    state ^= state >> 12;
                    state ^= state << 25;
                    state ^= state >> 27;
                    (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
                })
                .collect();
            write(&out.join(target), &format!("random-{i}"), &bytes);
        }
    }
    println!(
        "{n_config} configuration seeds, {n_decode} decode seeds from {} stores, in {}",
        all.len(),
        out.display()
    );
}
