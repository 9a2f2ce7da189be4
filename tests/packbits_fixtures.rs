//! Stores written by zarrs' built-in `packbits` (`fixtures/zarrs-builtin/
//! packbits/`, made by `examples/make_packbits_fixtures.rs`), read through
//! zarrs after `register_overrides()`, so with this crate's codec.
//!
//! Each whole array and each listed subset must equal the values written,
//! with the specification's rule applied where a fixture stores only a bit
//! range: bits `first_bit..=last_bit` stay in place, signed integers are
//! sign-extended from `last_bit`, the other bits are zero. (zarrs' built-in
//! itself departs from that rule in several fixtures; see each fixture's
//! `description` and `tests/packbits_equivalence.rs`.)

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zarrs::array::codec::api::ArrayBytes;
use zarrs::array::{Array, ArraySubset};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::codec::packbits::PackBitsCodec;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/zarrs-builtin/packbits")
}

/// `(N, components, signed)` of the data types the fixtures use.
fn components(data_type: &str) -> (u64, usize, bool) {
    match data_type {
        "bool" => (1, 1, false),
        "int2" => (2, 1, true),
        "uint2" => (2, 1, false),
        "int4" => (4, 1, true),
        "uint4" | "float4_e2m1fn" => (4, 1, false),
        "float6_e2m3fn" | "float6_e3m2fn" => (6, 1, false),
        "complex_float4_e2m1fn" => (4, 2, false),
        "complex_float6_e2m3fn" | "complex_float6_e3m2fn" => (6, 2, false),
        "int8" => (8, 1, true),
        "uint8" => (8, 1, false),
        "int16" => (16, 1, true),
        "uint16" | "float16" | "bfloat16" => (16, 1, false),
        "int32" => (32, 1, true),
        "uint32" | "float32" => (32, 1, false),
        "int64" => (64, 1, true),
        "uint64" | "float64" => (64, 1, false),
        "complex_float32" => (32, 2, false),
        "complex_float64" => (64, 2, false),
        other => panic!("no packbits layout for {other} in this test"),
    }
}

fn mask(bits: u64) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// Little-endian components to native-endian ones.
fn le_to_ne(bytes: &[u8], component_bytes: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if cfg!(target_endian = "big") {
        out.chunks_exact_mut(component_bytes)
            .for_each(<[u8]>::reverse);
    }
    out
}

/// The specification's decode of `written` (native endian) after packing
/// bits `first..=last` of each component.
fn spec_values(written: &[u8], bits: u64, signed: bool, first: u64, last: u64) -> Vec<u8> {
    let c = bits.div_ceil(8) as usize;
    let width = 8 * c as u64;
    written
        .chunks_exact(c)
        .flat_map(|chunk| {
            let mut le = chunk.to_vec();
            if cfg!(target_endian = "big") {
                le.reverse();
            }
            let v = le
                .iter()
                .rev()
                .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
            let mut out = ((v >> first) & mask(last - first + 1)) << first;
            if signed && (out >> last) & 1 == 1 {
                out |= mask(width) & !mask(last + 1);
            }
            let mut bytes = out.to_le_bytes()[..c].to_vec();
            if cfg!(target_endian = "big") {
                bytes.reverse();
            }
            bytes
        })
        .collect()
}

/// The `packbits` codec metadata in `codecs`, looking inside sharding.
fn packbits_configuration(codecs: &serde_json::Value) -> Option<serde_json::Value> {
    codecs.as_array()?.iter().find_map(|codec| {
        if codec["name"] == "packbits" {
            Some(codec.get("configuration").cloned().unwrap_or_default())
        } else {
            packbits_configuration(&codec["configuration"]["codecs"])
        }
    })
}

/// Elements `[start, start + shape)` of a C-order array of `array_shape`.
fn select(all: &[u8], array_shape: &[u64], size: usize, start: &[u64], shape: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    let count: u64 = shape.iter().product();
    let mut index = vec![0u64; shape.len()];
    for _ in 0..count {
        let linear = index
            .iter()
            .zip(start)
            .zip(array_shape)
            .fold(0u64, |acc, ((&i, &s), &dim)| acc * dim + s + i);
        let at = linear as usize * size;
        out.extend_from_slice(&all[at..at + size]);
        // Odometer, last dimension fastest.
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

fn as_u64s(json: &serde_json::Value) -> Vec<u64> {
    json.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

#[test]
fn builtin_written_fixtures_read_through_the_override() {
    zarrs_extension_codecs::register_overrides();
    let dir = fixtures_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures/zarrs-builtin/packbits (cargo run --example make_packbits_fixtures)")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".expected.json").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 15, "fixtures missing: {names:?}");

    let mut bit_range_fixtures = 0;
    for name in &names {
        let meta: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.join(format!("{name}.expected.json"))).unwrap(),
        )
        .unwrap();
        let data_type = meta["data_type"].as_str().unwrap();
        let (bits, count, signed) = components(data_type);
        let component_bytes = bits.div_ceil(8) as usize;
        let element_bytes = count * component_bytes;
        let shape = as_u64s(&meta["shape"]);
        let written = le_to_ne(
            &std::fs::read(dir.join(format!("{name}.expected.bin"))).unwrap(),
            component_bytes,
        );

        let store_path = dir.join(format!("{name}.zarr"));
        let zarr_json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(store_path.join("zarr.json")).unwrap()).unwrap();
        let configuration = packbits_configuration(&zarr_json["codecs"]).expect("a packbits codec");
        let first = configuration["first_bit"].as_u64().unwrap_or(0);
        let last = configuration["last_bit"].as_u64().unwrap_or(bits - 1);
        if (first, last) != (0, bits - 1) {
            bit_range_fixtures += 1;
        }
        let expected = spec_values(&written, bits, signed, first, last);

        let array = Array::open(Arc::new(FilesystemStore::new(&store_path).unwrap()), "/").unwrap();
        let codecs = array.codecs();
        let a2b = codecs.array_to_bytes_codec();
        if zarr_json["codecs"][0]["name"] == "packbits" {
            assert!(
                a2b.as_any().is::<PackBitsCodec>(),
                "{name}: opened with this crate's codec"
            );
        }

        let all: ArrayBytes<'static> = array.retrieve_array_subset(&array.subset_all()).unwrap();
        let all = all.into_fixed().unwrap();
        assert_eq!(all.as_ref(), expected.as_slice(), "{name}: whole array");

        for subset in meta["subsets"].as_array().unwrap() {
            let start = as_u64s(&subset["start"]);
            let subset_shape = as_u64s(&subset["shape"]);
            let ranges: Vec<_> = start
                .iter()
                .zip(&subset_shape)
                .map(|(&s, &n)| s..s + n)
                .collect();
            let got: ArrayBytes<'static> = array
                .retrieve_array_subset(&ArraySubset::new_with_ranges(&ranges))
                .unwrap();
            let want = select(&expected, &shape, element_bytes, &start, &subset_shape);
            assert_eq!(
                got.into_fixed().unwrap().as_ref(),
                want.as_slice(),
                "{name}: subset {ranges:?}"
            );
        }
    }
    assert!(bit_range_fixtures >= 4, "{bit_range_fixtures}");
}

#[test]
fn bit_range_fixtures_differ_from_the_values_written() {
    // The rule matters for these fixtures: the spec's values are not the
    // values written (else the comparison above could not catch a reader
    // that ignores first_bit / last_bit). Worked example from
    // int4_bits_1_2: 6 = 0b0110 keeps bits 1..=2 = 0b11 -> 0b110 with bit 2
    // set -> sign-extended 0b1111_1110 = -2.
    assert_eq!(spec_values(&[6], 4, true, 1, 2), [(-2i8) as u8]);
    let dir = fixtures_dir();
    for (name, bits, signed, first, last) in [
        ("int4_bits_1_2", 4u64, true, 1, 2),
        ("int16_bits_4_11_first_byte", 16, true, 4, 11),
        ("int32_last_bit_11", 32, true, 0, 11),
        ("uint8_last_bit_5", 8, false, 0, 5),
        ("bfloat16_high_byte", 16, false, 8, 15),
    ] {
        let written = le_to_ne(
            &std::fs::read(dir.join(format!("{name}.expected.bin"))).unwrap(),
            bits.div_ceil(8) as usize,
        );
        assert_ne!(
            spec_values(&written, bits, signed, first, last),
            written,
            "{name}"
        );
    }
}
