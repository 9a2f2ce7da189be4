//! Write the `packbits` fixtures: stores written by zarrs' BUILT-IN
//! `PackBitsCodec` (zarrs 0.23.14), which no Python library writes.
//!
//! ```sh
//! cargo run --example make_packbits_fixtures
//! ```
//!
//! Deletes and re-creates `fixtures/zarrs-builtin/packbits/`. For each
//! fixture `NAME` it writes `NAME.zarr` (the array), `NAME.expected.bin` (the
//! values written, raw little-endian bytes in C order, with the fill value
//! where a chunk was erased) and `NAME.expected.json` (`shape`, `data_type`,
//! `fill_value`, `description`, `subsets`), plus `README.md`.
//!
//! This program does not use `zarrs_extension_codecs`: every byte under
//! `NAME.zarr` is what zarrs' built-in codec wrote.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zarrs::array::codec::api::{ArrayBytes, ArrayToBytesCodecTraits};
use zarrs::array::codec::{PackBitsCodec, ShardingCodecBuilder};
use zarrs::array::{ArrayBuilder, DataType, FillValue, data_type};
use zarrs::filesystem::FilesystemStore;
use zarrs::metadata_ext::codec::packbits::PackBitsPaddingEncoding as Padding;

/// One fixture.
struct Fixture {
    name: &'static str,
    description: &'static str,
    data_type: DataType,
    /// Bits per component, components per element, signed.
    bits: u32,
    components: usize,
    signed: bool,
    fill: Vec<u8>,
    shape: Vec<u64>,
    chunks: Vec<u64>,
    /// Sharded with these inner chunks.
    subchunks: Option<Vec<u64>>,
    padding: Padding,
    first_bit: Option<u64>,
    last_bit: Option<u64>,
    /// A chunk erased after writing, so that it reads as the fill value.
    erased_chunk: Option<Vec<u64>>,
    /// `(start, shape)` of subsets to read.
    subsets: Vec<(Vec<u64>, Vec<u64>)>,
}

impl Fixture {
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: &'static str,
        description: &'static str,
        data_type: DataType,
        (bits, components, signed): (u32, usize, bool),
        fill: Vec<u8>,
        shape: &[u64],
        chunks: &[u64],
        padding: Padding,
    ) -> Self {
        let subsets = default_subsets(shape, chunks);
        Self {
            name,
            description,
            data_type,
            bits,
            components,
            signed,
            fill,
            shape: shape.to_vec(),
            chunks: chunks.to_vec(),
            subchunks: None,
            padding,
            first_bit: None,
            last_bit: None,
            erased_chunk: None,
            subsets,
        }
    }

    fn bit_range(mut self, first_bit: Option<u64>, last_bit: Option<u64>) -> Self {
        self.first_bit = first_bit;
        self.last_bit = last_bit;
        self
    }

    fn sharded(mut self, subchunks: &[u64]) -> Self {
        self.subchunks = Some(subchunks.to_vec());
        self
    }

    fn erase(mut self, chunk: &[u64]) -> Self {
        self.erased_chunk = Some(chunk.to_vec());
        self
    }

    fn component_bytes(&self) -> usize {
        self.bits.div_ceil(8) as usize
    }

    fn element_bytes(&self) -> usize {
        self.components * self.component_bytes()
    }
}

/// The whole array, a block crossing the first chunk boundary in every
/// dimension, one element, and the last element (in the edge chunk).
fn default_subsets(shape: &[u64], chunks: &[u64]) -> Vec<(Vec<u64>, Vec<u64>)> {
    let crossing: (Vec<u64>, Vec<u64>) = shape
        .iter()
        .zip(chunks)
        .map(|(&s, &c)| {
            let start = c.saturating_sub(3).min(s - 1);
            (start, (s - start).min(7))
        })
        .unzip();
    vec![
        (vec![0; shape.len()], shape.to_vec()),
        crossing,
        (shape.iter().map(|s| s / 2).collect(), vec![1; shape.len()]),
        (shape.iter().map(|s| s - 1).collect(), vec![1; shape.len()]),
    ]
}

/// xorshift64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Deterministic valid elements, native endian: each component an `N`-bit
/// value, sign-extended to its byte for `int2` / `int4` (as zarrs holds
/// them).
fn values(fixture: &Fixture, seed: u64) -> Vec<u8> {
    let n: u64 = fixture.shape.iter().product();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let c = fixture.component_bytes();
    let width = 8 * c as u32;
    let mask = |bits: u32| {
        if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        }
    };
    (0..n as usize * fixture.components)
        .flat_map(|_| {
            let mut v = rng.next() & mask(fixture.bits);
            if fixture.signed && (v >> (fixture.bits - 1)) & 1 == 1 {
                v |= mask(width) & !mask(fixture.bits);
            }
            let bytes = v.to_ne_bytes();
            if cfg!(target_endian = "big") {
                bytes[8 - c..].to_vec()
            } else {
                bytes[..c].to_vec()
            }
        })
        .collect()
}

/// Native-endian components to little-endian ones.
fn to_le(bytes: &[u8], component_bytes: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if cfg!(target_endian = "big") {
        out.chunks_exact_mut(component_bytes)
            .for_each(<[u8]>::reverse);
    }
    out
}

fn fixtures() -> Vec<Fixture> {
    use data_type as d;
    vec![
        Fixture::new(
            "bool_first_byte",
            "bool, padding_encoding first_byte (the numcodecs-compatible form); the chunk (1, 2) is erased and reads as the fill value false.",
            d::bool(),
            (1, 1, false),
            vec![0],
            &[37, 23],
            &[16, 8],
            Padding::FirstByte,
        )
        .erase(&[1, 2]),
        Fixture::new(
            "bool_sharded_last_byte",
            "bool inside sharding_indexed (shards 32x32, inner chunks 8x8), padding_encoding last_byte.",
            d::bool(),
            (1, 1, false),
            vec![1],
            &[40, 50],
            &[32, 32],
            Padding::LastByte,
        )
        .sharded(&[8, 8]),
        Fixture::new(
            "int2",
            "int2 in [-2, 1], fill -1, no padding byte. The built-in's partial decoder (used for the edge chunks) returns negative values without sign extension (-1 as 3); the values here are the ones written, which the specification decodes.",
            d::int2(),
            (2, 1, true),
            vec![0xFF],
            &[50, 40],
            &[16, 16],
            Padding::None,
        ),
        Fixture::new(
            "uint2_last_byte",
            "uint2, padding_encoding last_byte; 33-element chunks leave 2 padding bits.",
            d::uint2(),
            (2, 1, false),
            vec![3],
            &[100],
            &[33],
            Padding::LastByte,
        ),
        Fixture::new(
            "int4_sharded_last_byte",
            "int4 in [-8, 7] inside sharding_indexed (shards 32x32, inner chunks 8x8), padding_encoding last_byte; the shard (1, 0) is erased and reads as the fill value -3.",
            d::int4(),
            (4, 1, true),
            vec![0xFD],
            &[64, 48],
            &[32, 32],
            Padding::LastByte,
        )
        .sharded(&[8, 8])
        .erase(&[1, 0]),
        Fixture::new(
            "uint4_first_byte",
            "uint4, padding_encoding first_byte.",
            d::uint4(),
            (4, 1, false),
            vec![0],
            &[30, 30],
            &[16, 16],
            Padding::FirstByte,
        ),
        Fixture::new(
            "float4_e2m1fn",
            "float4_e2m1fn (every bit pattern 0..15), no padding byte.",
            d::float4_e2m1fn(),
            (4, 1, false),
            vec![0],
            &[40],
            &[16],
            Padding::None,
        ),
        Fixture::new(
            "float6_e2m3fn_last_byte",
            "float6_e2m3fn (6 bits), padding_encoding last_byte.",
            d::float6_e2m3fn(),
            (6, 1, false),
            vec![0],
            &[45],
            &[20],
            Padding::LastByte,
        ),
        Fixture::new(
            "float6_e3m2fn",
            "float6_e3m2fn (6 bits), no padding byte.",
            d::float6_e3m2fn(),
            (6, 1, false),
            vec![0],
            &[9, 11],
            &[4, 5],
            Padding::None,
        ),
        Fixture::new(
            "complex_float4_e2m1fn",
            "complex_float4_e2m1fn: two 4-bit components per element.",
            d::complex_float4_e2m1fn(),
            (4, 2, false),
            vec![0, 0],
            &[25],
            &[10],
            Padding::None,
        ),
        Fixture::new(
            "complex_float6_e3m2fn_first_byte",
            "complex_float6_e3m2fn: two 6-bit components per element, padding_encoding first_byte.",
            d::complex_float6_e3m2fn(),
            (6, 2, false),
            vec![0, 0],
            &[25],
            &[10],
            Padding::FirstByte,
        ),
        Fixture::new(
            "int4_bits_1_2",
            "int4 with first_bit 1, last_bit 2: only bits 1..=2 are stored. The specification decodes them back at bit 1, sign-extended from bit 2 (6 -> -2); the values in expected.bin are the ones written, and a reader must compare with that rule applied. zarrs' built-in partial decoder (edge chunks) departs: it neither shifts nor sign-extends them.",
            d::int4(),
            (4, 1, true),
            vec![0],
            &[40],
            &[16],
            Padding::None,
        )
        .bit_range(Some(1), Some(2)),
        Fixture::new(
            "int16_bits_4_11_first_byte",
            "int16 with first_bit 4, last_bit 11, padding_encoding first_byte. The specification decodes bits 4..=11 back at bit 4, sign-extended from bit 11; expected.bin holds the values written (compare with that rule applied).",
            d::int16(),
            (16, 1, true),
            vec![0, 0],
            &[20, 20],
            &[8, 8],
            Padding::FirstByte,
        )
        .bit_range(Some(4), Some(11)),
        Fixture::new(
            "int32_last_bit_11",
            "int32 with last_bit 11: the specification sign-extends bit 11 through all 32 bits; zarrs' built-in full decode extends only to bit 15. expected.bin holds the values written (compare with the rule applied).",
            d::int32(),
            (32, 1, true),
            vec![0, 0, 0, 0],
            &[100],
            &[32],
            Padding::None,
        )
        .bit_range(None, Some(11)),
        Fixture::new(
            "uint8_last_bit_5",
            "uint8 with last_bit 5 (6 bits stored), padding_encoding last_byte; expected.bin holds the values written (the top two bits are not stored).",
            d::uint8(),
            (8, 1, false),
            vec![0],
            &[50],
            &[17],
            Padding::LastByte,
        )
        .bit_range(None, Some(5)),
        Fixture::new(
            "bfloat16_high_byte",
            "bfloat16 with first_bit 8: only the high byte (sign, exponent, top mantissa bit) is stored; expected.bin holds the values written (the low byte decodes as zero).",
            d::bfloat16(),
            (16, 1, false),
            vec![0, 0],
            &[30],
            &[16],
            Padding::None,
        )
        .bit_range(Some(8), None),
        Fixture::new(
            "float32_first_byte",
            "float32 (whole components), padding_encoding first_byte. zarrs' built-in departs from the specification here: it writes the plain little-endian bytes with no padding byte (its encoded_representation counts one). A reader that follows the spec strictly rejects these chunks as one byte short.",
            d::float32(),
            (32, 1, false),
            vec![0, 0, 0, 0],
            &[50],
            &[16],
            Padding::FirstByte,
        ),
        Fixture::new(
            "complex_float64",
            "complex_float64 (two 64-bit components), no padding byte: the little-endian bytes.",
            d::complex_float64(),
            (64, 2, false),
            vec![0; 16],
            &[12],
            &[5],
            Padding::None,
        ),
    ]
}

fn write(fixture: &Fixture, dir: &Path, seed: u64) -> Result<(), Box<dyn std::error::Error>> {
    let store_path = dir.join(format!("{}.zarr", fixture.name));
    std::fs::create_dir_all(&store_path)?;
    let store = Arc::new(FilesystemStore::new(&store_path)?);

    let packbits: Arc<dyn ArrayToBytesCodecTraits> = Arc::new(PackBitsCodec::new(
        fixture.padding,
        fixture.first_bit,
        fixture.last_bit,
    )?);
    let mut builder = ArrayBuilder::new(
        fixture.shape.clone(),
        fixture.chunks.clone(),
        fixture.data_type.clone(),
        FillValue::new(fixture.fill.clone()),
    );
    match &fixture.subchunks {
        Some(subchunks) => {
            let subchunks = subchunks
                .iter()
                .map(|&s| std::num::NonZeroU64::new(s).ok_or("zero subchunk"))
                .collect::<Result<Vec<_>, _>>()?;
            let sharding = ShardingCodecBuilder::new(subchunks, &fixture.data_type)
                .array_to_bytes_codec(packbits)
                .build_arc();
            builder.array_to_bytes_codec(sharding)
        }
        None => builder.array_to_bytes_codec(packbits),
    };
    let array = builder.build(store, "/")?;
    array.store_metadata()?;

    let mut data = values(fixture, seed);
    array.store_array_subset(&array.subset_all(), ArrayBytes::new_flen(data.clone()))?;
    if let Some(chunk) = &fixture.erased_chunk {
        array.erase_chunk(chunk)?;
        // The erased region reads as the fill value.
        let region = array.chunk_subset_bounded(chunk)?;
        let size = fixture.element_bytes();
        for index in region.linearised_indices(&fixture.shape)?.into_iter() {
            let start = index as usize * size;
            data[start..start + size].copy_from_slice(&fixture.fill);
        }
    }
    std::fs::write(
        dir.join(format!("{}.expected.bin", fixture.name)),
        to_le(&data, fixture.component_bytes()),
    )?;

    let zarr_json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store_path.join("zarr.json"))?)?;
    let expected = serde_json::json!({
        "shape": fixture.shape,
        "data_type": zarr_json["data_type"],
        "fill_value": zarr_json["fill_value"],
        "description": fixture.description,
        "subsets": fixture
            .subsets
            .iter()
            .map(|(start, shape)| serde_json::json!({"start": start, "shape": shape}))
            .collect::<Vec<_>>(),
    });
    std::fs::write(
        dir.join(format!("{}.expected.json", fixture.name)),
        serde_json::to_string_pretty(&expected)? + "\n",
    )?;
    Ok(())
}

const README: &str = "# zarrs built-in `packbits` fixtures

Written by zarrs 0.23.14's built-in `PackBitsCodec` (no Python library
writes `packbits`), by `examples/make_packbits_fixtures.rs`. Do not edit by
hand: every file under `NAME.zarr/` is what zarrs wrote.

Regenerate (from the repository root; deletes and re-creates this directory):

```sh
cargo run --example make_packbits_fixtures
```

`tests/local/packbits_fixtures.rs` opens each store through zarrs after
`zarrs_extension_codecs::register_overrides()` and compares the whole array
and each subset with the expected values.

## Files

For each fixture `NAME`:

| file | what |
| --- | --- |
| `NAME.zarr/` | Zarr v3 array store (filesystem layout, default `/` chunk keys) |
| `NAME.expected.bin` | the values written: raw little-endian bytes, C order (one byte per `bool` / `int2` / `int4` / `uint2` / `uint4` / 4- or 6-bit float component, `int2` / `int4` sign-extended), with the fill value where a chunk was erased |
| `NAME.expected.json` | `shape`, `data_type`, `fill_value` (as in `zarr.json`), `description`, `subsets` (list of `{\"start\", \"shape\"}`) |

Where a fixture uses `first_bit` / `last_bit`, only those bits are stored:
a reader compares with the specification's rule applied to the values
written (keep bits `first_bit..=last_bit` in place, sign-extend signed
integers from `last_bit`, zero the rest). The descriptions say where zarrs'
built-in itself departs from the specification (`float32_first_byte`:
no padding byte is written).
";

fn main() {
    // Errors in words (Display), not Debug.
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let dir: PathBuf =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/zarrs-builtin/packbits");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    for (seed, fixture) in fixtures().iter().enumerate() {
        write(fixture, &dir, seed as u64 + 1)?;
        println!("{}", fixture.name);
    }
    std::fs::write(dir.join("README.md"), README)?;
    Ok(())
}
