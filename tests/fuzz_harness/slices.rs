//! `slices`: the entry points of `zarrs_extension_codecs::slices` (whole
//! buffers split across threads, written out of place through an
//! uninitialised view) against the kernels run in one piece, in place.
//!
//! Input: the element type, the thread count, the direction, `offset` and
//! `scale` (or none), a few elements that are repeated past 2 MiB in a
//! quarter of the cases (so that the buffer is split), an output one byte
//! too long in an eighth; then a `cast_value` plan and its input. Property:
//! the same bytes, or the same error, naming the same element; a length
//! that does not fit is an error, never a panic.

use std::sync::atomic::{AtomicUsize, Ordering};

use arbitrary::Unstructured;
use zarrs_extension_codecs::kernels::cast::{CastPlan, OutOfRangeMode, RoundingMode};
use zarrs_extension_codecs::kernels::scale_offset::{decode_bytes, encode_bytes};
use zarrs_extension_codecs::numeric::NumericType;
use zarrs_extension_codecs::slices::{self, SliceError};

const TYPES: [NumericType; 12] = [
    NumericType::Int8,
    NumericType::Int16,
    NumericType::Int32,
    NumericType::Int64,
    NumericType::UInt8,
    NumericType::UInt16,
    NumericType::UInt32,
    NumericType::UInt64,
    NumericType::Float16,
    NumericType::BFloat16,
    NumericType::Float32,
    NumericType::Float64,
];

/// How many buffers of 2 MiB or more went to more than one thread (the
/// replay requires some: the split is what this target is for).
pub static SPLIT: AtomicUsize = AtomicUsize::new(0);

fn count_split(len: usize, threads: usize) {
    if len >= 2 << 20 && threads > 1 {
        SPLIT.fetch_add(1, Ordering::Relaxed);
    }
}

pub fn slices(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let _ = scale_offset_case(&mut u);
    let _ = cast_case(&mut u);
}

/// Elements of `size` bytes from the input, repeated past 2 MiB if `big`;
/// sometimes with a stray trailing byte.
fn buffer(u: &mut Unstructured, size: usize) -> arbitrary::Result<Vec<u8>> {
    let count = u.int_in_range(0..=48usize)?;
    let mut bytes = u.bytes(count * size)?.to_vec();
    if u.ratio(1, 4)? && !bytes.is_empty() {
        bytes = bytes.repeat((2 << 20) / bytes.len() + 2);
    }
    if u.ratio(1, 16)? {
        bytes.push(0);
    }
    Ok(bytes)
}

fn scalar(u: &mut Unstructured, size: usize) -> arbitrary::Result<Vec<u8>> {
    Ok(if u.arbitrary()? {
        u.bytes(size)?.to_vec()
    } else {
        Vec::new()
    })
}

fn scale_offset_case(u: &mut Unstructured) -> arbitrary::Result<()> {
    let ty = *u.choose(&TYPES)?;
    let threads = u.int_in_range(1..=3usize)?;
    let encode: bool = u.arbitrary()?;
    let offset = scalar(u, ty.size())?;
    let scale = scalar(u, ty.size())?;
    let src = buffer(u, ty.size())?;
    let longer = u.ratio(1, 8)?;
    count_split(src.len(), threads);
    let whole = |bytes: &mut Vec<u8>| {
        if encode {
            encode_bytes(ty, bytes, &offset, &scale)
        } else {
            decode_bytes(ty, bytes, &offset, &scale)
        }
    };
    let mut expected = src.clone();
    let expected = whole(&mut expected).map(|()| expected);

    let mut dst = vec![0u8; src.len() + usize::from(longer)];
    let out = if encode {
        slices::scale_offset_encode(ty, &src, &mut dst, &offset, &scale, threads)
    } else {
        slices::scale_offset_decode(ty, &src, &mut dst, &offset, &scale, threads)
    };
    let mut in_place = src.clone();
    let in_place_result = if encode {
        slices::scale_offset_encode_in_place(ty, &mut in_place, &offset, &scale, threads)
    } else {
        slices::scale_offset_decode_in_place(ty, &mut in_place, &offset, &scale, threads)
    };
    let whole_elements = src.len() % ty.size() == 0;
    if !whole_elements {
        assert!(matches!(out, Err(SliceError::Length { .. })), "{out:?}");
        assert!(
            matches!(in_place_result, Err(SliceError::Length { .. })),
            "{in_place_result:?}"
        );
        return Ok(());
    }
    check(ty, &in_place_result, &in_place, &expected);
    if longer {
        assert!(matches!(out, Err(SliceError::Length { .. })), "{out:?}");
    } else {
        check(ty, &out, &dst, &expected);
    }
    Ok(())
}

/// `got` (with its output `bytes`, elements of `ty`) is what the one-piece
/// kernel gave.
fn check<E>(
    ty: NumericType,
    got: &Result<(), SliceError>,
    bytes: &[u8],
    expected: &Result<Vec<u8>, E>,
) where
    E: std::fmt::Debug + Clone,
    SliceError: From<E>,
{
    match (got, expected) {
        (Ok(()), Ok(expected)) => assert!(same_values(ty, bytes, expected), "different bytes"),
        // By their text: a NaN value is not equal to itself.
        (Err(got), Err(expected)) => {
            assert_eq!(
                got.to_string(),
                SliceError::from(expected.clone()).to_string()
            );
        }
        _ => panic!("{got:?} but in one piece {expected:?}"),
    }
}

fn cast_case(u: &mut Unstructured) -> arbitrary::Result<()> {
    let source = *u.choose(&TYPES)?;
    let target = *u.choose(&TYPES)?;
    let rounding = *u.choose(&[
        RoundingMode::NearestEven,
        RoundingMode::TowardsZero,
        RoundingMode::TowardsPositive,
        RoundingMode::TowardsNegative,
        RoundingMode::NearestAway,
    ])?;
    let out_of_range = *u.choose(&[
        None,
        Some(OutOfRangeMode::Clamp),
        Some(OutOfRangeMode::Wrap),
    ])?;
    let mut entries = Vec::new();
    for _ in 0..u.int_in_range(0..=2u8)? {
        entries.push((
            u.bytes(source.size())?.to_vec(),
            u.bytes(target.size())?.to_vec(),
        ));
    }
    let Ok(plan) = CastPlan::new(source, target, rounding, out_of_range, entries) else {
        return Ok(());
    };
    let threads = u.int_in_range(1..=3usize)?;
    let src = buffer(u, source.size())?;
    let n = src.len() / source.size();
    count_split(src.len(), threads);
    let longer = u.ratio(1, 8)?;
    let mut dst = vec![0u8; n * target.size() + usize::from(longer)];
    let got = slices::cast_value(&plan, &src, &mut dst, threads);
    if src.len() % source.size() != 0 || longer {
        assert!(matches!(got, Err(SliceError::Length { .. })), "{got:?}");
        return Ok(());
    }
    check(target, &got, &dst, &plan.cast_to_vec(&src));
    Ok(())
}

/// The same bytes, but that a NaN equals any NaN: Rust does not promise
/// which NaN an operation on a NaN gives (its sign and payload may differ
/// between a vectorised loop and the scalar one that finishes a part, so
/// between a buffer in one piece and split).
fn same_values(ty: NumericType, got: &[u8], want: &[u8]) -> bool {
    if got.len() != want.len() {
        return false;
    }
    // The exponent's bits (all set in a NaN) and the mantissa's, of an
    // element read as an integer.
    let (exponent, mantissa): (u64, u64) = match ty {
        NumericType::Float16 => (0x7c00, 0x03ff),
        NumericType::BFloat16 => (0x7f80, 0x007f),
        NumericType::Float32 => (0x7f80_0000, 0x007f_ffff),
        NumericType::Float64 => (0x7ff0_0000_0000_0000, 0x000f_ffff_ffff_ffff),
        _ => return got == want,
    };
    let size = ty.size();
    let bits = |e: &[u8]| {
        let mut word = [0u8; 8];
        if cfg!(target_endian = "little") {
            word[..size].copy_from_slice(e);
        } else {
            word[8 - size..].copy_from_slice(e);
        }
        u64::from_ne_bytes(word)
    };
    let nan = |b: u64| b & exponent == exponent && b & mantissa != 0;
    got.chunks(size)
        .zip(want.chunks(size))
        .all(|(g, w)| g == w || (nan(bits(g)) && nan(bits(w))))
}
