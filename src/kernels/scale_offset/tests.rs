//! Unit tests of the `scale_offset` kernels.

use super::*;
use crate::test_rng::SplitMix64;
use crate::test_support::{self, elements};

fn err_index(e: ScaleOffsetError) -> usize {
    match e {
        ScaleOffsetError::Element { index, .. } => index,
        e => panic!("unexpected error {e}"),
    }
}

#[test]
fn uint8_overflow_and_underflow() {
    // (200 - 0) * 2 = 400 > 255
    let mut data = [1u8, 200, 3];
    let e = encode(&mut data, 0, 2).unwrap_err();
    assert_eq!(
        e.to_string(),
        "element 1 = 200: (x - offset) * scale = 400 is outside the range [0, 255] of uint8"
    );
    // 5 - 10 = -5 < 0
    let mut data = [10u8, 11, 5];
    let e = encode(&mut data, 10, 1).unwrap_err();
    assert_eq!(err_index(e.clone()), 2);
    assert!(e.to_string().contains("x - offset = -5"), "{e}");
    // decode: 250 + 10 = 260 > 255
    let mut data = [0u8, 250];
    assert_eq!(err_index(decode(&mut data, 10, 1).unwrap_err()), 1);
    // in range: (12 - 10) * 3 = 6, and back
    let mut data = [10u8, 12, 95];
    encode(&mut data, 10, 3).unwrap();
    assert_eq!(data, [0, 6, 255]);
    decode(&mut data, 10, 3).unwrap();
    assert_eq!(data, [10, 12, 95]);
}

#[test]
fn uint8_lookup_table_path() {
    // 300 elements takes the 256-entry table; same results as the direct path.
    let mut data: Vec<u8> = (0..300u32).map(|i| (i % 128) as u8).collect();
    let expected: Vec<u8> = data.iter().map(|&x| x * 2).collect();
    encode(&mut data, 0, 2).unwrap();
    assert_eq!(data, expected);
    data[299] = 255; // odd: 255 / 2 is not exact
    assert_eq!(err_index(decode(&mut data, 0, 2).unwrap_err()), 299);
    data[299] = 254;
    decode(&mut data, 0, 2).unwrap();
    assert_eq!(data[299], 127);
}

#[test]
fn int8_min() {
    // -128 * -1 = 128 > 127
    let mut data = [5i8, -128];
    let e = encode(&mut data, 0, -1).unwrap_err();
    assert_eq!(err_index(e), 1);
    // -128 / -1 = 128 is an unrepresentable intermediate even though 128 + -1 = 127 fits
    let mut data = [-128i8];
    let e = decode(&mut data, -1, -1).unwrap_err();
    assert!(e.to_string().contains("x / scale = 128"), "{e}");
    // -128 - 1 = -129
    let mut data = [-128i8];
    assert!(encode(&mut data, 1, 1).is_err());
    // -128 - (-1) = -127, * -1 = 127
    let mut data = [-128i8];
    encode(&mut data, -1, -1).unwrap();
    assert_eq!(data, [127]);
    decode(&mut data, -1, -1).unwrap();
    assert_eq!(data, [-128]);
}

#[test]
fn int64_extremes() {
    let mut data = [i64::MIN];
    assert!(decode(&mut data, 0, -1).is_err()); // MIN / -1
    let mut data = [i64::MAX];
    assert!(encode(&mut data, -1, 1).is_err()); // MAX + 1
    let mut data = [i64::MAX / 2 + 1];
    assert!(encode(&mut data, 0, 2).is_err()); // 2^63
    let mut data = [u64::MAX];
    assert!(encode(&mut data, 0, 2).is_err());
    let mut data = [u64::MAX - 1];
    decode(&mut data, 1, 2).unwrap();
    assert_eq!(data, [u64::MAX / 2 + 1]); // (2^64 - 2) / 2 + 1 = 2^63
}

#[test]
fn non_exact_integer_decode() {
    let mut data = [8i16, 7];
    let e = decode(&mut data, 100, 2).unwrap_err();
    assert_eq!(err_index(e.clone()), 1);
    assert_eq!(
        e.to_string(),
        "element 1 = 7: x / scale = 7 / 2 is not an integer (decoding is not exact)"
    );
    let mut data = [8i32, -6];
    decode(&mut data, 100, 2).unwrap();
    assert_eq!(data, [104, 97]);
    let mut data = [-7i32];
    assert!(decode(&mut data, 0, 2).is_err()); // -7 / 2 truncates: not exact
    let mut data = [9u32];
    assert!(decode(&mut data, 0, 4).is_err());
}

#[test]
fn zero_scale() {
    assert_eq!(encode(&mut [1i32], 0, 0), Err(ScaleOffsetError::ZeroScale));
    assert_eq!(decode(&mut [1i32], 0, 0), Err(ScaleOffsetError::ZeroScale));
    assert_eq!(
        decode(&mut [1.0f32], 0.0, -0.0),
        Err(ScaleOffsetError::ZeroScale)
    );
}

#[test]
fn int4_and_uint2_ranges() {
    let int4 = NumericType::Int4;
    let enc = |x: i8, off: i8, sc: i8| {
        let mut b = [x as u8];
        encode_bytes(int4, &mut b, &[off as u8], &[sc as u8]).map(|()| b[0] as i8)
    };
    assert_eq!(enc(3, 0, 2), Ok(6));
    assert!(enc(4, 0, 2).is_err()); // 8 > 7
    assert!(enc(-8, 0, -1).is_err()); // 8 > 7
    assert!(enc(7, -1, 1).is_err()); // 8 > 7
    assert_eq!(enc(-8, -1, -1), Ok(7)); // (-8 + 1) * -1
    let e = encode_bytes(int4, &mut [7], &[255], &[1]).unwrap_err();
    assert!(e.to_string().contains("range [-8, 7] of int4"), "{e}");
    let dec = |x: i8, off: i8, sc: i8| {
        let mut b = [x as u8];
        decode_bytes(int4, &mut b, &[off as u8], &[sc as u8]).map(|()| b[0] as i8)
    };
    assert_eq!(dec(-8, 7, 2), Ok(3));
    assert!(dec(-8, 0, -1).is_err()); // 8 > 7
    assert!(dec(6, 5, 2).is_err()); // 3 + 5 = 8 > 7
    // Decoding 300 elements goes through the lookup table: x / -1 + -1.
    let input: Vec<u8> = (0..300).map(|i| ((i % 15) as i8 - 7) as u8).collect(); // -7..=7
    let mut many = input.clone();
    decode_bytes(int4, &mut many, &[255], &[255]).unwrap();
    for (&x, &r) in input.iter().zip(&many) {
        assert_eq!(r as i8, -(x as i8) - 1);
    }
    // -8 / -1 = 8 is out of range.
    let mut many = input;
    many[290] = (-8i8) as u8;
    let e = decode_bytes(int4, &mut many, &[255], &[255]).unwrap_err();
    assert_eq!(err_index(e), 290);
    let uint2 = NumericType::UInt2;
    let mut b = [3u8];
    assert!(encode_bytes(uint2, &mut b, &[0], &[2]).is_err()); // 6 > 3
    let mut b = [3u8, 2];
    encode_bytes(uint2, &mut b, &[2], &[3]).unwrap();
    assert_eq!(b, [3, 0]); // (3 - 2) * 3, (2 - 2) * 3
}

#[test]
fn float16_rounds_after_each_operation() {
    // 2048 - (-1) = 2049 is a tie between 2048 and 2050 in float16 (spacing
    // 2 in [2048, 4096)); ties-to-even gives 2048. Then 2048 * 3 = 6144.
    // Computed once in f64: 2049 * 3 = 6147, which rounds to 6148
    // (spacing 4 in [4096, 8192)). The per-operation answer is 6144.
    let mut data = [f16::from_f32(2048.0)];
    encode(&mut data, f16::from_f32(-1.0), f16::from_f32(3.0)).unwrap();
    assert_eq!(data[0].to_f32(), 6144.0);
    assert_eq!(f16::from_f64((2048.0 + 1.0) * 3.0).to_f32(), 6148.0);
    // bfloat16 (8 significant bits): 256 + 1 = 257 -> 256 (tie, even);
    // 256 * 3 = 768. Once in f64: 771 -> 772 (spacing 4 in [512, 1024)).
    let mut data = [bf16::from_f32(256.0)];
    encode(&mut data, bf16::from_f32(-1.0), bf16::from_f32(3.0)).unwrap();
    assert_eq!(data[0].to_f32(), 768.0);
    // Decode: 6148 / 3 = 2049.33.. -> 2050; 2050 + -1 = 2049 -> 2048 (tie, even).
    let mut data = [f16::from_f32(6148.0)];
    decode(&mut data, f16::from_f32(-1.0), f16::from_f32(3.0)).unwrap();
    assert_eq!(data[0].to_f32(), 2048.0);
}

#[test]
fn float16_blocks_and_unaligned() {
    // More than one block, through an unaligned byte buffer.
    let values: Vec<f16> = (0..1100).map(|i| f16::from_f32(i as f32 * 0.5)).collect();
    let mut storage = vec![0u8; values.len() * 2 + 1];
    storage[1..].copy_from_slice(bytemuck::cast_slice(&values));
    let bytes = &mut storage[1..];
    let off = f16::from_f32(1.0).to_ne_bytes();
    let sc = f16::from_f32(2.0).to_ne_bytes();
    encode_bytes(NumericType::Float16, bytes, &off, &sc).unwrap();
    let encoded: Vec<f16> = bytes
        .chunks_exact(2)
        .map(bytemuck::pod_read_unaligned)
        .collect();
    for (v, e) in values.iter().zip(&encoded) {
        assert_eq!(*e, f16::from_f32((v.to_f32() - 1.0) * 2.0));
    }
    // 60000 * 2 = 120000 overflows float16 (max 65504) to +inf, as numpy does.
    let mut data = values.clone();
    data[1040] = f16::from_f32(60000.0);
    encode(&mut data, f16::from_f32(0.0), f16::from_f32(2.0)).unwrap();
    assert_eq!(data[1040], f16::INFINITY);
}

#[test]
fn nan_and_infinity_propagate() {
    let mut data = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.0];
    encode(&mut data, 1.0, 2.0).unwrap();
    assert!(data[0].is_nan());
    assert_eq!(&data[1..], &[f32::INFINITY, f32::NEG_INFINITY, 0.0]);
    decode(&mut data, 1.0, -2.0).unwrap();
    assert!(data[0].is_nan());
    assert_eq!(&data[1..], &[f32::NEG_INFINITY, f32::INFINITY, 1.0]);
    let mut data = [f16::NAN, f16::INFINITY];
    encode(&mut data, f16::ONE, f16::from_f32(2.0)).unwrap();
    assert!(data[0].is_nan());
    assert_eq!(data[1], f16::INFINITY);
    let mut data = [f64::NAN];
    decode(&mut data, 3.0, 0.5).unwrap();
    assert!(data[0].is_nan());
}

#[test]
fn overflow_to_infinity_follows_ieee() {
    // 3e38 - (-1e38) = 4e38 > f32::MAX (3.4028e38): +inf, as zarr-python stores it.
    let mut data = [0.0f32, 3e38];
    encode(&mut data, -1e38, 1.0).unwrap();
    assert_eq!(data, [1e38, f32::INFINITY]);
    // 1e300 / 1e-10 = 1e310 > f64::MAX: +inf.
    let mut data = [1e300f64];
    decode(&mut data, 0.0, 1e-10).unwrap();
    assert_eq!(data, [f64::INFINITY]);
    // A NaN offset turns finite input into NaN.
    let mut data = [1.0f64];
    encode(&mut data, f64::NAN, 2.0).unwrap();
    assert!(data[0].is_nan());
}

#[test]
fn negative_zero() {
    // (-0.0 - 0.0) * 2 = -0.0
    let mut data = [-0.0f32];
    encode(&mut data, 0.0, 2.0).unwrap();
    assert!(data[0] == 0.0 && data[0].is_sign_negative());
    // -0.0 / 2 + 0.0 = +0.0 (IEEE: -0 + +0 = +0)
    decode(&mut data, 0.0, 2.0).unwrap();
    assert!(data[0] == 0.0 && data[0].is_sign_positive());
    // -0.0 / 2 + -0.0 = -0.0
    let mut data = [-0.0f64];
    decode(&mut data, -0.0, 2.0).unwrap();
    assert!(data[0] == 0.0 && data[0].is_sign_negative());
    // offset -0.0, scale 1 is not the identity: -0.0 - -0.0 = +0.0
    assert!(!is_identity(
        NumericType::Float32,
        &(-0.0f32).to_ne_bytes(),
        &1.0f32.to_ne_bytes()
    ));
    let mut data = [-0.0f32];
    encode(&mut data, -0.0, 1.0).unwrap();
    assert!(data[0].is_sign_positive());
    // offset +0.0, scale 1 is the identity and keeps -0.0
    let mut data = [-0.0f32];
    encode(&mut data, 0.0, 1.0).unwrap();
    assert!(data[0].is_sign_negative());
}

#[test]
fn length_errors() {
    let e = encode_bytes(NumericType::UInt16, &mut [0u8; 3], &[0, 0], &[1, 0]).unwrap_err();
    assert!(matches!(e, ScaleOffsetError::DataLength { len: 3, .. }));
    let e = encode_bytes(NumericType::UInt16, &mut [0u8; 4], &[0], &[1, 0]).unwrap_err();
    assert!(matches!(
        e,
        ScaleOffsetError::ScalarLength {
            field: "offset",
            ..
        }
    ));
}

#[test]
fn int_blocks() {
    // Multi-block i32 with the error in a later block.
    let mut data: Vec<i32> = (0..2000).collect();
    encode(&mut data, 1000, -3).unwrap();
    assert_eq!(data[0], 3000);
    assert_eq!(data[1999], -2997);
    decode(&mut data, 1000, -3).unwrap();
    assert!(data.iter().enumerate().all(|(i, &v)| v == i as i32));
    data[1500] = i32::MAX;
    assert_eq!(err_index(encode(&mut data, 0, 2).unwrap_err()), 1500);
    assert_eq!(data[1000], 1000 * 2); // earlier blocks were written
    assert_eq!(data[1499], 1499); // the failing block (1024..1536) is intact
    assert_eq!(data[1500], i32::MAX); // the failing block is intact
}

#[test]
fn minifloat_rounds_after_each_operation() {
    let e5m2 = MiniFloatFormat::FLOAT8_E5M2;
    let ty = NumericType::Mini(e5m2);
    // float8_e5m2 (bias 15, 2 mantissa bits): 0x48 = 8, 0xbc = -1, 0x3e = 1.5, 0x4a = 12.
    assert_eq!(
        [0x48, 0xbc, 0x3e, 0x4a].map(|b| e5m2.to_f64(b)),
        [8.0, -1.0, 1.5, 12.0]
    );
    // 8 - (-1) = 9 is a tie between 8 and 10 -> 8 (even); 8 * 1.5 = 12.
    // Once in f64: 9 * 1.5 = 13.5 -> 14. Per operation gives 12.
    let mut b = [0x48];
    encode_bytes(ty, &mut b, &[0xbc], &[0x3e]).unwrap();
    assert_eq!(e5m2.to_f64(b[0]), 12.0);
    // Decode: 12 / 1.5 = 8; 8 + -1 = 7 (0x47).
    decode_bytes(ty, &mut b, &[0xbc], &[0x3e]).unwrap();
    assert_eq!(e5m2.to_f64(b[0]), 7.0);
    // 57344 (0x7b, the largest finite) * 2 (0x40) overflows to +inf (0x7c).
    let mut b = [0x00, 0x7b];
    encode_bytes(ty, &mut b, &[], &[0x40]).unwrap();
    assert_eq!(b, [0x00, 0x7c]);
    // NaN (0x7e) propagates, infinity (0x7c) too.
    let mut b = [0x7e, 0x7c];
    encode_bytes(ty, &mut b, &[0xbc], &[0x40]).unwrap();
    assert!(e5m2.to_f64(b[0]).is_nan());
    assert_eq!(e5m2.to_f64(b[1]), f64::INFINITY);
    // float8_e4m3fnuz: the only NaN is 0x80.
    let fnuz = NumericType::Mini(MiniFloatFormat::FLOAT8_E4M3FNUZ);
    let mut b = [0x80];
    encode_bytes(fnuz, &mut b, &[], &[0x48]).unwrap(); // scale 2 (bias 8)
    assert_eq!(b, [0x80]);
}

#[test]
fn minifloat_lookup_table_matches_direct_path() {
    let format = MiniFloatFormat::FLOAT8_E4M3;
    let ty = NumericType::Mini(format);
    let (off, sc) = (0x38u8, 0x30u8); // 1.0 and 0.5 (bias 7)
    assert_eq!((format.to_f64(off), format.to_f64(sc)), (1.0, 0.5));
    let all: Vec<u8> = (0..=255).cycle().take(600).collect();
    let mut table = all.clone();
    encode_bytes(ty, &mut table, &[off], &[sc]).unwrap();
    for (i, &x) in all.iter().enumerate() {
        let mut one = [x];
        encode_bytes(ty, &mut one, &[off], &[sc]).unwrap();
        assert_eq!(one[0], table[i], "element {i} = {x:#04x}");
    }
}

#[test]
fn e8m0_without_offset() {
    // float8_e8m0fnu has no zero: an absent offset is still exactly zero.
    let ty = NumericType::Mini(MiniFloatFormat::FLOAT8_E8M0FNU);
    let mut b = [0x80u8, 0x7f]; // 2, 1
    encode_bytes(ty, &mut b, &[], &[0x80]).unwrap(); // * 2
    assert_eq!(b, [0x81, 0x80]);
    decode_bytes(ty, &mut b, &[], &[0x80]).unwrap();
    assert_eq!(b, [0x80, 0x7f]);
    // 1 - 1 = 0 has no representation.
    let e = encode_bytes(ty, &mut [0x80, 0x7f], &[0x7f], &[0x80]).unwrap_err();
    assert_eq!(err_index(e.clone()), 1);
    assert!(
        e.to_string()
            .contains("x - offset = 0.0 is not representable in float8_e8m0fnu"),
        "{e}"
    );
}

#[test]
fn absent_offset_and_scale() {
    let mut b = 300u16.to_ne_bytes();
    encode_bytes(NumericType::UInt16, &mut b, &[], &2u16.to_ne_bytes()).unwrap();
    assert_eq!(u16::from_ne_bytes(b), 600);
    encode_bytes(NumericType::UInt16, &mut b, &100u16.to_ne_bytes(), &[]).unwrap();
    assert_eq!(u16::from_ne_bytes(b), 500);
    assert!(is_identity(NumericType::Float32, &[], &[]));
    assert!(!is_identity(NumericType::Float32, &[], &2f32.to_ne_bytes()));
}

#[test]
fn decoding_negative_zero_without_offset_gives_positive_zero() {
    // Found by the `round_trip` fuzz target: `x / 1 + 0` is `+0.0` for
    // `x = -0.0` in IEEE arithmetic (numpy, so zarr-python, agrees);
    // encoding `(x - 0) * 1` keeps `-0.0`.
    for (offset, scale) in [
        (vec![], vec![]),
        (0f64.to_ne_bytes().to_vec(), 1f64.to_ne_bytes().to_vec()),
    ] {
        let mut bytes = (-0.0f64).to_ne_bytes().to_vec();
        encode_bytes(NumericType::Float64, &mut bytes, &offset, &scale).unwrap();
        assert_eq!(bytes, (-0.0f64).to_ne_bytes());
        decode_bytes(NumericType::Float64, &mut bytes, &offset, &scale).unwrap();
        assert_eq!(bytes, 0.0f64.to_ne_bytes());
    }
    let mut bytes = (-0.0f32).to_ne_bytes().to_vec();
    decode_bytes(NumericType::Float32, &mut bytes, &[], &[]).unwrap();
    assert_eq!(bytes, 0.0f32.to_ne_bytes());
    // Integers have one zero: still skipped, still exact.
    let mut bytes = (-5i16).to_ne_bytes().to_vec();
    decode_bytes(NumericType::Int16, &mut bytes, &[], &[]).unwrap();
    assert_eq!(bytes, (-5i16).to_ne_bytes());
}

/// Reproducible random bit patterns.
#[allow(clippy::cast_possible_truncation)]
fn random_bits(n: usize) -> impl Iterator<Item = u32> {
    let mut rng = SplitMix64(0x1234_5678_9abc_def0);
    (0..n).map(move |_| rng.next() as u32)
}

/// Every half value, the midpoints between neighbours (ties) and the f32
/// values next to them, and random f32 bit patterns.
fn rounding_probes(to_f32: impl Fn(u16) -> f32) -> Vec<f32> {
    let mut probes = Vec::new();
    // Under Miri, every 257th pattern: each exponent, a few mantissas.
    for bits in (0..=u16::MAX).step_by(test_support::size(1, 257)) {
        let (a, b) = (to_f32(bits), to_f32(bits.wrapping_add(1)));
        probes.push(a);
        if a.is_finite() && b.is_finite() && a.is_sign_positive() == b.is_sign_positive() {
            let mid = (a + b) / 2.0; // exact: both have few mantissa bits
            probes.extend([
                mid,
                f32::from_bits(mid.to_bits() + 1),
                f32::from_bits(mid.to_bits() - 1),
            ]);
        }
    }
    probes.extend([
        65504.0,
        65519.996,
        65520.0,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
    ]);
    probes.extend(random_bits(test_support::size(1 << 20, 256)).map(f32::from_bits));
    let negated: Vec<f32> = probes.iter().map(|x| -x).collect();
    probes.extend(negated);
    probes
}

fn same(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

#[test]
fn round_bf16_matches_half() {
    for x in rounding_probes(|b| bf16::from_bits(b).to_f32()) {
        let expected = bf16::from_f32(x).to_f32();
        assert!(
            same(round_bf16(x), expected),
            "{x:e} ({:#010x}): {} vs {expected}",
            x.to_bits(),
            round_bf16(x)
        );
    }
}

/// `data_type` elements of `input` through every way in: in place and
/// appended, aligned and not, with the AVX2 copy (where the CPU has it)
/// and forced to baseline x86-64. All must agree; the common result is
/// returned.
fn every_way(
    direction: Direction,
    data_type: NumericType,
    input: &[u8],
    offset: &[u8],
    scale: &[u8],
) -> Result<Vec<u8>, ScaleOffsetError> {
    let in_place = |shift: usize| {
        let mut storage = vec![0u8; input.len() + shift];
        let bytes = &mut storage[shift..];
        bytes.copy_from_slice(input);
        apply_bytes(direction, data_type, bytes, offset, scale).map(|()| bytes.to_vec())
    };
    // `prefix` bytes already in `dst`: the results go after them, at an
    // aligned (0, 8) or unaligned (3) address.
    let appended = |shift: usize, prefix: usize| {
        let mut storage = vec![0u8; input.len() + shift];
        storage[shift..].copy_from_slice(input);
        let mut dst = vec![0xa5u8; prefix];
        let result = apply_bytes_into(
            direction,
            data_type,
            &storage[shift..],
            &mut dst,
            offset,
            scale,
        );
        assert!(dst[..prefix].iter().all(|&b| b == 0xa5));
        if result.is_err() {
            assert_eq!(dst.len(), prefix, "dst is restored on error");
        }
        assert_eq!(&storage[shift..], input, "src is left alone");
        result.map(|()| dst[prefix..].to_vec())
    };
    let all_ways = || {
        [
            in_place(0),
            in_place(1),
            appended(0, 0),
            appended(0, 8),
            appended(0, 3),
            appended(1, 0),
        ]
    };
    let mut results = all_ways().to_vec();
    // Without AVX2 (under Miri too) the first six are the portable copy
    // already.
    if simd::avx2_enabled() {
        results.extend(simd::portable(all_ways));
    }
    // Compared as exact values, element by element, so that NaN results
    // compare as NaN and not by their bits: Rust leaves the sign and
    // payload of a NaN from arithmetic unspecified, and the two copies
    // do differ there in release builds (e.g. which of two NaN operands
    // an instruction passes on depends on operand order). Every other
    // float compares by the bits of its exact f64 value (-0.0 included).
    let exact = |v: Value| match v {
        Value::Int(i) => (false, i),
        Value::Float(x) if x.is_nan() => (true, -1),
        Value::Float(x) => (true, i128::from(x.to_bits())),
    };
    let bits = |r: &Result<Vec<u8>, ScaleOffsetError>| {
        r.as_ref()
            .map(|bytes| {
                bytes
                    .chunks_exact(data_type.size())
                    .map(|c| exact(data_type.read_value(c)))
                    .collect::<Vec<_>>()
            })
            .map_err(ToString::to_string)
    };
    for (way, result) in results.iter().enumerate() {
        assert_eq!(bits(result), bits(&results[0]), "way {way} of {data_type}");
    }
    results.swap_remove(0)
}

/// More than one block and not a whole number of blocks.
const EDGE_LEN: usize = test_support::size(3 * BLOCK + 7, BLOCK + 7);

/// IEEE special values (zeros, subnormals, extremes, infinities, NaN)
/// followed by random bit patterns (from `bits`), `EDGE_LEN` in all.
fn float_edge_values<T: Copy>(specials: &[T], bits: impl Fn(u64) -> T) -> Vec<T> {
    let mut rng = SplitMix64(0x0123_4567_89ab_cdef);
    let mut values = specials.to_vec();
    while values.len() < EDGE_LEN {
        values.push(bits(rng.next()));
    }
    values
}

macro_rules! float_every_way_test {
    ($name:ident, $t:ty, $data_type:expr, $to_bits:ident, $from_bits:ident) => {
        #[test]
        fn $name() {
            let specials: Vec<$t> = vec![
                0.0,
                -0.0,
                1.0,
                -1.0,
                0.1,
                <$t>::MIN_POSITIVE,
                <$t>::from_bits(1),
                -<$t>::from_bits(1),
                <$t>::MAX,
                <$t>::MIN,
                <$t>::INFINITY,
                <$t>::NEG_INFINITY,
                <$t>::NAN,
                -<$t>::NAN,
                <$t>::EPSILON,
                1e30,
                -1e-30,
            ];
            #[allow(clippy::cast_possible_truncation)]
            let input = float_edge_values(&specials, |z| <$t>::$from_bits(z as _));
            let bytes: Vec<u8> = bytemuck::cast_slice(&input).to_vec();
            // Including scales and offsets that overflow, underflow to
            // subnormals, a negative zero offset and a NaN offset.
            let pairs: [($t, $t); 7] = [
                (-10.0, 0.1),
                (3.5, -3.0),
                (0.0, 1e-30),
                (-1.0, 1e30),
                (-0.0, 1.0),
                (<$t>::NAN, 2.0),
                (1.0, <$t>::MIN_POSITIVE),
            ];
            // Under Miri, the first two (the block loops are the same for all).
            for (off, sc) in test_support::first(&pairs, 2) {
                for direction in [Direction::Encode, Direction::Decode] {
                    let out = every_way(
                        direction,
                        $data_type,
                        &bytes,
                        &off.to_ne_bytes(),
                        &sc.to_ne_bytes(),
                    )
                    .unwrap();
                    let out: Vec<$t> = elements(&out);
                    for (i, (&x, &y)) in input.iter().zip(&out).enumerate() {
                        // The scalar IEEE reference, one operation at a time.
                        let expected = match direction {
                            Direction::Encode => (x - off) * sc,
                            Direction::Decode => x / sc + off,
                        };
                        assert!(
                            (expected.is_nan() && y.is_nan())
                                || expected.$to_bits() == y.$to_bits(),
                            "{direction:?} {i}: {x:e} with ({off}, {sc}): {y:e}, expected \
                             {expected:e}"
                        );
                    }
                }
            }
        }
    };
}

float_every_way_test!(
    float32_every_way_matches_scalar_ieee,
    f32,
    NumericType::Float32,
    to_bits,
    from_bits
);
float_every_way_test!(
    float64_every_way_matches_scalar_ieee,
    f64,
    NumericType::Float64,
    to_bits,
    from_bits
);

#[test]
fn half_types_every_way_match_half() {
    // Every bit pattern, each step computed in f64 and rounded as numpy
    // does: to float32, then to the type (`half`'s `from_f32`). Rounding
    // the f64 result to f32 equals rounding the exact result to f32 (f64
    // has more than 2 * 24 + 2 bits, so double rounding is innocuous for
    // + - * /). Not `from_f64`: `half` may or may not go through f32
    // there, depending on the CPU (F16C), so the reference would depend
    // on the machine.
    let patterns: Vec<u16> = (0..=u16::MAX).step_by(test_support::size(1, 257)).collect();
    let bytes: Vec<u8> = bytemuck::cast_slice(&patterns).to_vec();
    let pairs = [(-10.0f32, 0.1f32), (0.5, -3.0), (1.0, 1000.0)];
    for (off, sc) in test_support::first(&pairs, 1) {
        for direction in [Direction::Encode, Direction::Decode] {
            // The offset and scale as the type holds them.
            let step = |x: f64, round: &dyn Fn(f64) -> f64| -> f64 {
                let (off, sc) = (round(f64::from(off)), round(f64::from(sc)));
                match direction {
                    Direction::Encode => round(round(x - off) * sc),
                    Direction::Decode => round(round(x / sc) + off),
                }
            };
            // The same check for both types (no common trait in `half`).
            macro_rules! check {
                ($T:ty, $data_type:expr, $name:literal) => {
                    let out = every_way(
                        direction,
                        $data_type,
                        &bytes,
                        &<$T>::from_f32(off).to_ne_bytes(),
                        &<$T>::from_f32(sc).to_ne_bytes(),
                    )
                    .unwrap();
                    for (&p, y) in patterns.iter().zip(elements::<$T>(&out)) {
                        let x = <$T>::from_bits(p).to_f64();
                        #[allow(clippy::cast_possible_truncation)]
                        let numpy = |v: f64| <$T>::from_f32(v as f32);
                        let expected = numpy(step(x, &|v| numpy(v).to_f64()));
                        assert!(
                            (expected.is_nan() && y.is_nan()) || expected.to_bits() == y.to_bits(),
                            "{} {direction:?} {x:e}: {y} vs {expected}",
                            $name
                        );
                    }
                };
            }
            check!(f16, NumericType::Float16, "float16");
            check!(bf16, NumericType::BFloat16, "bfloat16");
        }
    }
}

/// The exact integer reference: `None` if a step leaves `[lo, hi]` or the
/// division is not exact.
fn int_reference(
    direction: Direction,
    x: i128,
    off: i128,
    sc: i128,
    lo: i128,
    hi: i128,
) -> Option<i128> {
    let check = |v: i128| (lo..=hi).contains(&v).then_some(v);
    match direction {
        Direction::Encode => check(check(x - off)? * sc),
        Direction::Decode => {
            if x % sc != 0 {
                return None;
            }
            check(check(x / sc)? + off)
        }
    }
}

#[test]
fn int16_every_way_matches_exact_arithmetic() {
    // Every int16 value, and parameters that fail for some of them.
    // Under Miri, every 97th value (and the extremes).
    let mut all: Vec<i16> = (i16::MIN..=i16::MAX)
        .step_by(test_support::size(1, 97))
        .collect();
    if cfg!(miri) {
        all.push(i16::MAX);
    }
    // Under Miri, the first three: the identity, an inexact division and
    // an overflowing negation.
    let pairs = [(0i16, 1i16), (100, 3), (i16::MIN, -1), (-10, 1), (7, -2)];
    for (off, sc) in test_support::first(&pairs, 3) {
        for direction in [Direction::Encode, Direction::Decode] {
            // Without the failing elements (the whole chunk must succeed)...
            let (lo, hi) = (i128::from(i16::MIN), i128::from(i16::MAX));
            let reference =
                |x: i16| int_reference(direction, x.into(), off.into(), sc.into(), lo, hi);
            let good: Vec<i16> = all
                .iter()
                .copied()
                .filter(|&x| reference(x).is_some())
                .collect();
            let out = every_way(
                direction,
                NumericType::Int16,
                bytemuck::cast_slice(&good),
                &off.to_ne_bytes(),
                &sc.to_ne_bytes(),
            );
            if off == 0 && sc == 1 {
                assert_eq!(out.unwrap(), bytemuck::cast_slice::<i16, u8>(&good));
                continue;
            }
            for (&x, y) in good.iter().zip(elements::<i16>(&out.unwrap())) {
                assert_eq!(Some(i128::from(y)), reference(x), "{direction:?} {x}");
            }
            // ...and with them: the first one is named.
            let Some(first_bad) = all.iter().position(|&x| reference(x).is_none()) else {
                continue;
            };
            let e = every_way(
                direction,
                NumericType::Int16,
                bytemuck::cast_slice(&all),
                &off.to_ne_bytes(),
                &sc.to_ne_bytes(),
            )
            .unwrap_err();
            assert_eq!(err_index(e), first_bad, "{direction:?} ({off}, {sc})");
        }
    }
}

#[test]
fn uint8_every_way_matches_exact_arithmetic() {
    // Long enough for the lookup table, every value several times.
    let all: Vec<u8> = (0..EDGE_LEN).map(|i| (i * 7 % 256) as u8).collect();
    let pairs = [(10u8, 1u8), (10, 3), (0, 2), (200, 1)];
    for (off, sc) in test_support::first(&pairs, 2) {
        for direction in [Direction::Encode, Direction::Decode] {
            let reference =
                |x: u8| int_reference(direction, x.into(), off.into(), sc.into(), 0, 255);
            let good: Vec<u8> = all
                .iter()
                .copied()
                .filter(|&x| reference(x).is_some())
                .collect();
            let out = every_way(direction, NumericType::UInt8, &good, &[off], &[sc]).unwrap();
            for (&x, &y) in good.iter().zip(&out) {
                assert_eq!(Some(i128::from(y)), reference(x), "{direction:?} {x}");
            }
            if let Some(first_bad) = all.iter().position(|&x| reference(x).is_none()) {
                let e = every_way(direction, NumericType::UInt8, &all, &[off], &[sc]).unwrap_err();
                assert_eq!(err_index(e), first_bad, "{direction:?} ({off}, {sc})");
            }
        }
    }
}

#[test]
fn appended_error_names_the_element_and_restores_dst() {
    let src: Vec<u8> = (0..=255).collect();
    let mut dst = vec![1, 2];
    let e = encode_bytes_into(NumericType::UInt8, &src, &mut dst, &[0], &[2]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "element 128 = 128: (x - offset) * scale = 256 is outside the range [0, 255] of uint8"
    );
    assert_eq!(dst, [1, 2]);
    // The identity appends a copy; length errors leave `dst` alone.
    decode_bytes_into(NumericType::UInt16, &[1, 2], &mut dst, &[], &[]).unwrap();
    assert_eq!(dst, [1, 2, 1, 2]);
    assert!(decode_bytes_into(NumericType::UInt16, &[1, 2, 3], &mut dst, &[], &[2, 0]).is_err());
    assert_eq!(dst, [1, 2, 1, 2]);
}

#[test]
fn bfloat16_nan_and_overflow() {
    // 3e38 * 2 = 6e38 > bfloat16 max (3.39e38): +inf.
    let mut data = [bf16::NAN, bf16::NEG_INFINITY, bf16::from_f32(3e38)];
    encode(&mut data, bf16::ZERO, bf16::from_f32(2.0)).unwrap();
    assert_eq!(data[2], bf16::INFINITY);
    let mut data = [bf16::NAN, bf16::NEG_INFINITY, bf16::from_f32(-1.5)];
    encode(&mut data, bf16::ONE, bf16::from_f32(2.0)).unwrap();
    assert!(data[0].is_nan());
    assert_eq!(data[1], bf16::NEG_INFINITY);
    assert_eq!(data[2].to_f32(), -5.0);
}
