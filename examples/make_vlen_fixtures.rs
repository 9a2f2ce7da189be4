//! Write the `zarrs.vlen` fixtures: stores written by zarrs' BUILT-IN
//! `VlenCodec` (zarrs 0.23.14), which no Python library writes.
//!
//! ```sh
//! cargo run --example make_vlen_fixtures
//! ```
//!
//! Deletes and re-creates `fixtures/zarrs-builtin/vlen/`. For each fixture
//! `NAME` it writes `NAME.zarr` (the array) and `NAME.expected.json`
//! (`shape`, `chunk_shape`, `data_type`, `fill_value`, `description`,
//! `value_encoding`, `values`: the values written, in C order, with the fill
//! value where nothing was written, and `subsets`: `{"start", "shape",
//! "values"}`), plus `README.md`. The expected values come from the input
//! of the writer, not from reading the store back.
//!
//! This program does not use `zarrs_extension_codecs`: every byte under
//! `NAME.zarr` is what zarrs' built-in codecs wrote. The one exception is
//! the `zarr.json` of the fixture of the older configuration form, from
//! which `index_location` is removed afterwards (zarrs always writes it; the
//! chunks are the same, since the older form means `"start"`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use zarrs::array::codec::api::ArrayToBytesCodecTraits;
use zarrs::array::codec::{ShardingCodecBuilder, VlenCodec, VlenCodecConfiguration};
use zarrs::array::{ArrayBuilder, ArraySubset, DataType, FillValue, data_type};
use zarrs::filesystem::FilesystemStore;

/// The element values: strings or raw bytes.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    String,
    Bytes,
}

/// One fixture.
struct Fixture {
    name: &'static str,
    description: &'static str,
    kind: Kind,
    /// The `zarrs.vlen` configuration, as JSON.
    configuration: serde_json::Value,
    shape: Vec<u64>,
    chunks: Vec<u64>,
    /// Sharded with these inner chunks.
    subchunks: Option<Vec<u64>>,
    fill: Vec<u8>,
    /// `(start, shape)` of the region written; the rest is never written.
    written: (Vec<u64>, Vec<u64>),
    /// Remove `index_location` from `zarr.json` (the older form).
    old_form: bool,
    /// `(start, shape)` of subsets to read.
    subsets: Vec<(Vec<u64>, Vec<u64>)>,
}

fn bytes_codec(endian: &str) -> serde_json::Value {
    json!({"name": "bytes", "configuration": {"endian": endian}})
}

fn configuration(
    index_codecs: serde_json::Value,
    data_codecs: serde_json::Value,
    index_data_type: &str,
    index_location: &str,
) -> serde_json::Value {
    json!({
        "index_codecs": index_codecs,
        "data_codecs": data_codecs,
        "index_data_type": index_data_type,
        "index_location": index_location,
    })
}

fn fixtures() -> Vec<Fixture> {
    let le = bytes_codec("little");
    let be = bytes_codec("big");
    let plain = json!([{"name": "bytes"}]);
    let crc = json!({"name": "crc32c"});
    vec![
        Fixture {
            name: "string_u64_start",
            description: "2-D strings (empty and non-ASCII ones among them), uint64 offsets at \
                          the start, `bytes` for both chains (zarrs' default configuration); \
                          partial edge chunks",
            kind: Kind::String,
            configuration: configuration(json!([le]), plain.clone(), "uint64", "start"),
            shape: vec![7, 5],
            chunks: vec![3, 2],
            subchunks: None,
            fill: Vec::new(),
            written: (vec![0, 0], vec![7, 5]),
            old_form: false,
            subsets: vec![(vec![1, 1], vec![5, 3]), (vec![6, 4], vec![1, 1])],
        },
        Fixture {
            name: "string_u32_end",
            description: "1-D strings, uint32 offsets at the end, a non-empty fill value; \
                          elements 30.. never written (the last chunk is missing)",
            kind: Kind::String,
            configuration: configuration(json!([le]), plain.clone(), "uint32", "end"),
            shape: vec![40],
            chunks: vec![16],
            subchunks: None,
            fill: "∅".as_bytes().to_vec(),
            written: (vec![0], vec![30]),
            old_form: false,
            subsets: vec![(vec![10], vec![25]), (vec![33], vec![4])],
        },
        Fixture {
            name: "string_u32_old_form",
            description: "1-D strings, uint32 offsets, the older configuration without \
                          `index_location` (which means start; written by zarrs with \
                          `\"index_location\": \"start\"`, then removed from zarr.json)",
            kind: Kind::String,
            configuration: configuration(json!([le]), plain.clone(), "uint32", "start"),
            shape: vec![12],
            chunks: vec![5],
            subchunks: None,
            fill: Vec::new(),
            written: (vec![0], vec![12]),
            old_form: true,
            subsets: vec![(vec![3], vec![6])],
        },
        Fixture {
            name: "string_u64_start_index_big_endian",
            description: "1-D strings, uint64 offsets stored big-endian (`bytes` with \
                          `endian: big` in index_codecs), at the start",
            kind: Kind::String,
            configuration: configuration(json!([be]), plain.clone(), "uint64", "start"),
            shape: vec![10],
            chunks: vec![4],
            subchunks: None,
            fill: Vec::new(),
            written: (vec![0], vec![10]),
            old_form: false,
            subsets: vec![(vec![2], vec![5])],
        },
        Fixture {
            name: "bytes_u64_end_crc32c",
            description: "2-D raw bytes, uint64 offsets at the end, `crc32c` after `bytes` in \
                          both chains",
            kind: Kind::Bytes,
            configuration: configuration(
                json!([le, crc]),
                json!([{"name": "bytes"}, crc]),
                "uint64",
                "end",
            ),
            shape: vec![4, 6],
            chunks: vec![2, 3],
            subchunks: None,
            fill: Vec::new(),
            written: (vec![0, 0], vec![4, 6]),
            old_form: false,
            subsets: vec![(vec![1, 2], vec![2, 3])],
        },
        Fixture {
            name: "bytes_u32_start_shuffle",
            description: "1-D raw bytes, uint32 offsets at the start, the index byte-shuffled \
                          (`numcodecs.shuffle`, elementsize 4) and the data checksummed \
                          (`crc32c`); a fill value of two bytes and elements 16.. never written",
            kind: Kind::Bytes,
            configuration: configuration(
                json!([le, {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}]),
                json!([{"name": "bytes"}, crc]),
                "uint32",
                "start",
            ),
            shape: vec![20],
            chunks: vec![8],
            subchunks: None,
            fill: vec![0xfe, 0x00],
            written: (vec![0], vec![16]),
            old_form: false,
            subsets: vec![(vec![5], vec![14])],
        },
        Fixture {
            name: "string_sharded_u32_start",
            description: "2-D strings in `sharding_indexed` (shards 4 x 4, inner chunks 2 x 2) \
                          with inner `zarrs.vlen`: uint32 offsets at the start, `bytes` only \
                          (the inner chunks can be read in part)",
            kind: Kind::String,
            configuration: configuration(json!([le]), plain.clone(), "uint32", "start"),
            shape: vec![7, 5],
            chunks: vec![4, 4],
            subchunks: Some(vec![2, 2]),
            fill: Vec::new(),
            written: (vec![0, 0], vec![7, 5]),
            old_form: false,
            subsets: vec![(vec![1, 1], vec![5, 3]), (vec![3, 3], vec![2, 2])],
        },
        Fixture {
            name: "string_sharded_u64_end_crc32c",
            description: "2-D strings in `sharding_indexed` (shards 4 x 4, inner chunks 2 x 2) \
                          with inner `zarrs.vlen`: uint64 offsets at the end, `crc32c` in the \
                          data chain, a non-empty fill value; row 6 never written",
            kind: Kind::String,
            configuration: configuration(
                json!([le]),
                json!([{"name": "bytes"}, crc]),
                "uint64",
                "end",
            ),
            shape: vec![7, 5],
            chunks: vec![4, 4],
            subchunks: Some(vec![2, 2]),
            fill: b"n/a".to_vec(),
            written: (vec![0, 0], vec![6, 5]),
            old_form: false,
            subsets: vec![(vec![2, 1], vec![5, 4])],
        },
    ]
}

/// Deterministic element `i`: strings of 0 to 12 characters, some non-ASCII;
/// raw bytes of 0 to 9 bytes covering every byte value.
///
/// zarrs 0.23.14 treats a variable-length chunk as all fill value when its
/// concatenated bytes are copies of the fill value, whatever the offsets
/// say, and then does not store it: so no chunk here holds only empty
/// elements and the fill value (it would read back as all fill value).
fn element(kind: Kind, i: u64) -> Vec<u8> {
    match kind {
        Kind::String => {
            let words = [
                "",
                "a",
                "zarr",
                "vlen ✓",
                "日本語",
                "Ω≈ç√",
                "line\nbreak",
                "0123456789ab",
            ];
            let word = words[(i * 5 % words.len() as u64) as usize];
            if word.is_empty() {
                Vec::new()
            } else {
                format!("{word}{i}").into_bytes()
            }
        }
        Kind::Bytes => (0..(i * 7 % 10))
            .map(|j| (i * 37 + j * 101) as u8)
            .collect(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How an element is written in `expected.json`.
fn encode_value(kind: Kind, value: &[u8]) -> serde_json::Value {
    match kind {
        Kind::String => json!(String::from_utf8(value.to_vec()).expect("utf-8")),
        Kind::Bytes => json!(hex(value)),
    }
}

fn contains(start: &[u64], shape: &[u64], index: &[u64]) -> bool {
    index
        .iter()
        .zip(start.iter().zip(shape))
        .all(|(&i, (&s, &n))| i >= s && i < s + n)
}

/// C-order multi-indices of a box.
fn indices(start: &[u64], shape: &[u64]) -> Vec<Vec<u64>> {
    let count: u64 = shape.iter().product();
    (0..count)
        .map(|mut linear| {
            let mut index = vec![0; shape.len()];
            for d in (0..shape.len()).rev() {
                index[d] = start[d] + linear % shape[d];
                linear /= shape[d];
            }
            index
        })
        .collect()
}

/// The value at `index` after writing: the element or the fill value.
fn value_at(fixture: &Fixture, index: &[u64]) -> Vec<u8> {
    let (start, shape) = &fixture.written;
    if contains(start, shape, index) {
        let linear = index
            .iter()
            .zip(&fixture.shape)
            .fold(0, |acc, (&i, &n)| acc * n + i);
        element(fixture.kind, linear)
    } else {
        fixture.fill.clone()
    }
}

fn write_fixture(dir: &Path, fixture: &Fixture) -> Result<(), Box<dyn std::error::Error>> {
    let store_path = dir.join(format!("{}.zarr", fixture.name));
    let store = Arc::new(FilesystemStore::new(&store_path)?);
    let data_type: DataType = match fixture.kind {
        Kind::String => data_type::string(),
        Kind::Bytes => data_type::bytes(),
    };
    let configuration: VlenCodecConfiguration =
        serde_json::from_value(fixture.configuration.clone())?;
    let vlen: Arc<dyn ArrayToBytesCodecTraits> =
        Arc::new(VlenCodec::new_with_configuration(&configuration)?);
    let codec = match &fixture.subchunks {
        None => vlen,
        Some(subchunks) => {
            let subchunks: Vec<_> = subchunks
                .iter()
                .map(|&d| std::num::NonZeroU64::new(d).expect("non-zero"))
                .collect();
            ShardingCodecBuilder::new(subchunks, &data_type)
                .array_to_bytes_codec(vlen)
                .build_arc()
        }
    };
    let mut builder = ArrayBuilder::new(
        fixture.shape.clone(),
        fixture.chunks.clone(),
        data_type,
        FillValue::new(fixture.fill.clone()),
    );
    builder.array_to_bytes_codec(codec);
    let array = builder.build(store, "/")?;
    array.store_metadata()?;

    let (start, shape) = &fixture.written;
    let written = ArraySubset::new_with_start_shape(start.clone(), shape.clone())?;
    let values: Vec<Vec<u8>> = indices(start, shape)
        .iter()
        .map(|index| value_at(fixture, index))
        .collect();
    match fixture.kind {
        Kind::String => {
            let strings: Vec<String> = values
                .into_iter()
                .map(|v| String::from_utf8(v).expect("utf-8"))
                .collect();
            array.store_array_subset(&written, strings)?;
        }
        Kind::Bytes => array.store_array_subset(&written, values)?,
    }

    if fixture.old_form {
        let path = store_path.join("zarr.json");
        let mut metadata: serde_json::Value = serde_json::from_slice(&std::fs::read(&path)?)?;
        let codec = &mut metadata["codecs"][0];
        assert_eq!(codec["name"], "zarrs.vlen");
        let removed = codec["configuration"]
            .as_object_mut()
            .and_then(|c| c.remove("index_location"));
        assert_eq!(removed, Some(json!("start")));
        std::fs::write(&path, serde_json::to_string_pretty(&metadata)? + "\n")?;
    }

    let all = indices(&vec![0; fixture.shape.len()], &fixture.shape);
    let expected_values: Vec<_> = all
        .iter()
        .map(|index| encode_value(fixture.kind, &value_at(fixture, index)))
        .collect();
    let subsets: Vec<_> = fixture
        .subsets
        .iter()
        .map(|(start, shape)| {
            let values: Vec<_> = indices(start, shape)
                .iter()
                .map(|index| encode_value(fixture.kind, &value_at(fixture, index)))
                .collect();
            json!({"start": start, "shape": shape, "values": values})
        })
        .collect();
    let expected = json!({
        "shape": fixture.shape,
        "chunk_shape": fixture.chunks,
        "inner_chunk_shape": fixture.subchunks,
        "data_type": match fixture.kind { Kind::String => "string", Kind::Bytes => "bytes" },
        "fill_value": encode_value(fixture.kind, &fixture.fill),
        "value_encoding": match fixture.kind { Kind::String => "utf-8", Kind::Bytes => "hex" },
        "description": fixture.description,
        "vlen_configuration": fixture.configuration,
        "old_form": fixture.old_form,
        "written_region": {"start": start, "shape": shape},
        "values": expected_values,
        "subsets": subsets,
        "writer": "zarrs 0.23.14 built-in VlenCodec",
    });
    std::fs::write(
        dir.join(format!("{}.expected.json", fixture.name)),
        serde_json::to_string_pretty(&expected)? + "\n",
    )?;
    Ok(())
}

const README: &str = r#"# zarrs built-in `zarrs.vlen` fixtures

Written by zarrs 0.23.14's built-in `VlenCodec` (no Python library writes
`zarrs.vlen`), by `examples/make_vlen_fixtures.rs`. Do not edit by hand:
every file under `NAME.zarr/` is what zarrs wrote, except that
`string_u32_old_form.zarr/zarr.json` has `index_location` removed to give the
older configuration form (zarrs always writes it; the chunks are the same).

Regenerate (from the repository root; deletes and re-creates this directory):

```sh
cargo run --example make_vlen_fixtures
```

`tests/local/vlen_fixtures.rs` opens each store through zarrs after
`zarrs_extension_codecs::register_overrides()` and compares the whole array
and each subset with the expected values, and checks that this crate's codec
writes the same chunks.

## Files

For each fixture `NAME`:

| file | what |
| --- | --- |
| `NAME.zarr/` | Zarr v3 array store (filesystem layout, default `/` chunk keys) |
| `NAME.expected.json` | `shape`, `chunk_shape`, `inner_chunk_shape` (sharded), `data_type` (`string` or `bytes`), `fill_value`, `value_encoding` (`utf-8`: JSON strings; `hex`: lowercase hex of the raw bytes), `description`, `vlen_configuration` (as given to the writer), `old_form`, `written_region`, `values` (the whole array in C order: the values written, the fill value elsewhere), `subsets` (list of `{"start", "shape", "values"}`) |

The expected values are the writer's input, not what it reads back.

## Fixtures

"#;

fn main() {
    // Errors in words (Display), not Debug.
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/zarrs-builtin/vlen");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let mut readme = README.to_string();
    for fixture in fixtures() {
        write_fixture(&dir, &fixture)?;
        readme += &format!("- `{}`: {}.\n", fixture.name, fixture.description);
        println!("wrote {}", fixture.name);
    }
    std::fs::write(dir.join("README.md"), readme)?;
    Ok(())
}
