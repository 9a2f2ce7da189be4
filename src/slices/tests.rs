use super::*;
use crate::kernels::cast::RoundingMode;
use crate::kernels::scale_offset::{decode_bytes, encode_bytes};
use crate::numeric::Value;
use crate::test_rng::SplitMix64;
use crate::test_support::size;

fn f64_bytes(values: &[f64]) -> Vec<u8> {
    bytemuck::cast_slice(values).to_vec()
}

/// Values worked out by hand from the formulas, out of place and in place.
#[test]
fn scale_offset_by_hand() {
    let (offset, scale) = (1.5f64.to_ne_bytes(), 4.0f64.to_ne_bytes());
    let src = f64_bytes(&[1.5, 2.0, -0.5, 101.5]);
    let mut dst = vec![0u8; src.len()];
    scale_offset_encode(NumericType::Float64, &src, &mut dst, &offset, &scale, 1).unwrap();
    assert_eq!(dst, f64_bytes(&[0.0, 2.0, -8.0, 400.0]));
    let mut back = vec![0u8; src.len()];
    scale_offset_decode(NumericType::Float64, &dst, &mut back, &offset, &scale, 1).unwrap();
    assert_eq!(back, src);
    scale_offset_decode_in_place(NumericType::Float64, &mut dst, &offset, &scale, 1).unwrap();
    assert_eq!(dst, src);
    scale_offset_encode_in_place(NumericType::Float64, &mut dst, &offset, &scale, 1).unwrap();
    assert_eq!(dst, f64_bytes(&[0.0, 2.0, -8.0, 400.0]));
    // int16: (x - 3) * -2 and back; 7 / -2 is not an integer.
    let src: Vec<u8> = bytemuck::cast_slice(&[3i16, 10, -100]).to_vec();
    let mut dst = vec![0u8; 6];
    let (offset, scale) = (3i16.to_ne_bytes(), (-2i16).to_ne_bytes());
    scale_offset_encode(NumericType::Int16, &src, &mut dst, &offset, &scale, 1).unwrap();
    assert_eq!(dst, bytemuck::cast_slice::<i16, u8>(&[0i16, -14, 206]));
    let odd: Vec<u8> = bytemuck::cast_slice(&[2i16, 7]).to_vec();
    let err = scale_offset_decode(NumericType::Int16, &odd, &mut dst[..4], &offset, &scale, 1);
    assert!(
        matches!(
            err,
            Err(SliceError::ScaleOffset(ScaleOffsetError::Element {
                index: 1,
                ..
            }))
        ),
        "{err:?}"
    );
}

/// `f64 -> u8`, nearest-even, NaN mapped to 255: worked out by hand.
#[test]
fn cast_by_hand() {
    let plan = CastPlan::new(
        NumericType::Float64,
        NumericType::UInt8,
        RoundingMode::NearestEven,
        None,
        vec![(f64::NAN.to_ne_bytes().to_vec(), vec![255])],
    )
    .unwrap();
    let src = f64_bytes(&[0.5, 1.5, 2.5, f64::NAN, 254.49]);
    let mut dst = [0u8; 5];
    cast_value(&plan, &src, &mut dst, 1).unwrap();
    assert_eq!(dst, [0, 2, 2, 255, 254]);
    let err = cast_value(&plan, &f64_bytes(&[1.0, 256.0]), &mut dst[..2], 1).unwrap_err();
    assert!(
        matches!(&err, SliceError::Cast(e) if e.index == 1 && e.value == Value::Float(256.0)),
        "{err}"
    );
}

#[test]
fn lengths_are_errors() {
    let mut dst = [0u8; 16];
    let one = 1.0f64.to_ne_bytes();
    for (src_len, dst_len) in [(16, 8), (12, 12), (8, 16)] {
        let src = vec![0u8; src_len];
        let err = scale_offset_encode(
            NumericType::Float64,
            &src,
            &mut dst[..dst_len],
            &[],
            &one,
            1,
        )
        .unwrap_err();
        assert!(matches!(err, SliceError::Length { .. }), "{err}");
    }
    let err =
        scale_offset_decode_in_place(NumericType::Float64, &mut dst[..9], &[], &[], 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "input has 9 bytes, expected 8 (float64 elements)"
    );
    let plan = CastPlan::new(
        NumericType::Float64,
        NumericType::UInt16,
        RoundingMode::NearestEven,
        None,
        vec![],
    )
    .unwrap();
    for (src_len, dst_len) in [(16, 2), (16, 6), (12, 3), (9, 2)] {
        let src = vec![0u8; src_len];
        let err = cast_value(&plan, &src, &mut dst[..dst_len], 1).unwrap_err();
        assert!(
            matches!(err, SliceError::Length { .. }),
            "{src_len} {dst_len}: {err}"
        );
    }
    // Zero-scale and scalar-length errors come from the kernel.
    let err = scale_offset_encode(
        NumericType::Float64,
        &[0; 8],
        &mut dst[..8],
        &[],
        &0.0f64.to_ne_bytes(),
        1,
    )
    .unwrap_err();
    assert_eq!(err, SliceError::ScaleOffset(ScaleOffsetError::ZeroScale));
}

/// Buffers of several MiB split across two threads give what the in-place
/// kernels give in one piece, and an error names the element the whole
/// buffer would name.
#[test]
#[cfg_attr(
    miri,
    ignore = "megabytes across threads; the small tests above reach the same code"
)]
fn split_matches_one_piece() {
    type Kernel = fn(NumericType, &mut [u8], &[u8], &[u8]) -> Result<(), ScaleOffsetError>;
    type OutOfPlace =
        fn(NumericType, &[u8], &mut [u8], &[u8], &[u8], usize) -> Result<(), SliceError>;
    type InPlace = fn(NumericType, &mut [u8], &[u8], &[u8], usize) -> Result<(), SliceError>;
    let n = size(3 << 20, 64) / 8 + 13;
    let mut rng = SplitMix64(7);
    let values: Vec<f64> = (0..n)
        .map(|_| f64::from(u32::try_from(rng.next() >> 40).unwrap()) - 1e6)
        .collect();
    let src = f64_bytes(&values);
    let (offset, scale) = (0.25f64.to_ne_bytes(), 0.1f64.to_ne_bytes());
    let directions: [(bool, Kernel, OutOfPlace, InPlace); 2] = [
        (
            true,
            encode_bytes,
            scale_offset_encode,
            scale_offset_encode_in_place,
        ),
        (
            false,
            decode_bytes,
            scale_offset_decode,
            scale_offset_decode_in_place,
        ),
    ];
    for threads in [1, 2, 4] {
        for (encode, kernel, out_of_place, in_place_fn) in directions {
            let mut expected = src.clone();
            let mut dst = vec![0u8; src.len()];
            let mut in_place = src.clone();
            kernel(NumericType::Float64, &mut expected, &offset, &scale).unwrap();
            out_of_place(
                NumericType::Float64,
                &src,
                &mut dst,
                &offset,
                &scale,
                threads,
            )
            .unwrap();
            in_place_fn(
                NumericType::Float64,
                &mut in_place,
                &offset,
                &scale,
                threads,
            )
            .unwrap();
            assert!(dst == expected, "threads {threads}, encode {encode}");
            assert!(in_place == expected, "threads {threads}, encode {encode}");
        }
    }

    // int8 encode with scale 2 fails on 100 (and on every later 100): the
    // first one lies in the second half.
    let mut bytes = vec![1u8; size(4 << 20, 256)];
    let bad = bytes.len() * 3 / 4 + 5;
    bytes[bad] = 100;
    bytes[bad + 1000] = 100;
    let mut dst = vec![0u8; bytes.len()];
    let err = scale_offset_encode(NumericType::Int8, &bytes, &mut dst, &[], &[2], 2).unwrap_err();
    assert!(
        matches!(err, SliceError::ScaleOffset(ScaleOffsetError::Element { index, .. }) if index == bad),
        "{err}"
    );
    let err =
        scale_offset_encode_in_place(NumericType::Int8, &mut bytes, &[], &[2], 2).unwrap_err();
    assert!(
        matches!(err, SliceError::ScaleOffset(ScaleOffsetError::Element { index, .. }) if index == bad),
        "{err}"
    );

    // cast f64 -> u16 (towards-zero, clamp) against the plan in one piece;
    // then an unmapped NaN in the second half.
    let plan = CastPlan::new(
        NumericType::Float64,
        NumericType::UInt16,
        RoundingMode::TowardsZero,
        Some(crate::kernels::cast::OutOfRangeMode::Clamp),
        vec![],
    )
    .unwrap();
    let expected = plan.cast_to_vec(&src).unwrap();
    for threads in [1, 2] {
        let mut dst = vec![0u8; n * 2];
        cast_value(&plan, &src, &mut dst, threads).unwrap();
        assert!(dst == expected, "threads {threads}");
    }
    let mut values = values;
    values[n - 3] = f64::NAN;
    let err = cast_value(&plan, &f64_bytes(&values), &mut vec![0u8; n * 2], 2).unwrap_err();
    assert!(
        matches!(&err, SliceError::Cast(e) if e.index == n - 3),
        "{err}"
    );
}
