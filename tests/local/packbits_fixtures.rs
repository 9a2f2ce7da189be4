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

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::packbits::spec_round_trip;
use common::{fixtures, le_to_ne, slice, u64s};
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

#[test]
fn builtin_written_fixtures_read_through_the_override() {
    zarrs_extension_codecs::register_overrides();
    let all_fixtures = fixtures(&fixtures_dir());
    // `FIXTURE_FILTER` (see `common::fixtures`) narrows the set while
    // debugging; the counts below hold for the full set only.
    let full_set = std::env::var("FIXTURE_FILTER").is_err();
    if full_set {
        assert!(all_fixtures.len() >= 15, "fixtures missing");
    }

    let mut bit_range_fixtures = 0;
    for fixture in &all_fixtures {
        let (name, meta, store_path) = (&fixture.name, &fixture.meta, &fixture.store);
        let data_type = meta["data_type"].as_str().unwrap();
        let (bits, count, signed) = components(data_type);
        let component_bytes = bits.div_ceil(8) as usize;
        let element_bytes = count * component_bytes;
        let shape = u64s(&meta["shape"]);
        let written = le_to_ne(&fixture.expected, component_bytes);

        let zarr_json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(store_path.join("zarr.json")).unwrap()).unwrap();
        let configuration = packbits_configuration(&zarr_json["codecs"]).expect("a packbits codec");
        let first = configuration["first_bit"].as_u64().unwrap_or(0);
        let last = configuration["last_bit"].as_u64().unwrap_or(bits - 1);
        if (first, last) != (0, bits - 1) {
            bit_range_fixtures += 1;
        }
        let expected = spec_round_trip(&written, bits, signed, first, last);

        let array = Array::open(Arc::new(FilesystemStore::new(store_path).unwrap()), "/").unwrap();
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
            let start = u64s(&subset["start"]);
            let subset_shape = u64s(&subset["shape"]);
            let ranges: Vec<_> = start
                .iter()
                .zip(&subset_shape)
                .map(|(&s, &n)| s..s + n)
                .collect();
            let got: ArrayBytes<'static> = array
                .retrieve_array_subset(&ArraySubset::new_with_ranges(&ranges))
                .unwrap();
            let want = slice(&expected, &shape, &start, &subset_shape, element_bytes);
            assert_eq!(
                got.into_fixed().unwrap().as_ref(),
                want.as_slice(),
                "{name}: subset {ranges:?}"
            );
        }
    }
    if full_set {
        assert!(bit_range_fixtures >= 4, "{bit_range_fixtures}");
    }
}

#[test]
fn bit_range_fixtures_differ_from_the_values_written() {
    // The rule matters for these fixtures: the spec's values are not the
    // values written (else the comparison above could not catch a reader
    // that ignores first_bit / last_bit). Worked example from
    // int4_bits_1_2: 6 = 0b0110 keeps bits 1..=2 = 0b11 -> 0b110 with bit 2
    // set -> sign-extended 0b1111_1110 = -2.
    assert_eq!(spec_round_trip(&[6], 4, true, 1, 2), [(-2i8) as u8]);
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
            spec_round_trip(&written, bits, signed, first, last),
            written,
            "{name}"
        );
    }
}
