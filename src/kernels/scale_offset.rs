//! `scale_offset` arithmetic: `(x - offset) * scale` and `x / scale + offset`.
//!
//! Everything is computed in the arithmetic of the element type itself, as the
//! specification requires ("no implicit promotion"):
//!
//! - **Integers** use exact (checked) arithmetic. Any intermediate or final
//!   value outside the range of the type is an error, as is a decode where
//!   `x / scale` is not an integer (`x % scale != 0`). `int2` / `int4` /
//!   `uint2` / `uint4` are held as `i8` / `u8` but checked against their own
//!   ranges `[-2, 1]`, `[-8, 7]`, `[0, 3]` and `[0, 15]`.
//! - **`float32` / `float64`** use native IEEE 754 arithmetic.
//! - **`float16` / `bfloat16`** are computed in `f32` and rounded back to the
//!   type (to nearest, ties to even) after *each* operation, which is what
//!   numpy does and gives the correctly rounded result of each operation.
//! - **Floats of at most 8 bits** are computed in `f64` and rounded back after
//!   each operation with [`MiniFloatFormat::round_from_f64`] (nearest-even).
//!
//! # Non-finite results
//!
//! The specification makes an unrepresentable value an error, but does not
//! say whether a float result that overflows to infinity is one (infinity is
//! a value of every IEEE type). zarr-python 3.4.2 follows numpy: the result
//! becomes ±infinity (NaN for `inf - inf`), with no error, and decodes as
//! such. This module does the same for every type that has infinity and NaN
//! (`float16`, `bfloat16`, `float32`, `float64`, and the IEEE-style small
//! floats `float8_e3m4`, `float8_e4m3`, `float8_e5m2`), so arrays round-trip
//! between the two implementations. NaN and ±infinity inputs propagate.
//!
//! For small floats without infinity or NaN ("fn", "fnuz", `float8_e8m0fnu`)
//! such a result has no representation at all, and is an error naming the
//! element, as is a negative value in the unsigned `float8_e8m0fnu`.
//!
//! # Zero scale
//!
//! A scale of zero (`0`, `0.0` or `-0.0`) is an error in both directions: the
//! decode divides by it, and an encode with it cannot be decoded.
//!
//! # Signed zero
//!
//! Signed zeros follow IEEE 754: `-0.0 - 0.0 = -0.0`, but `-0.0 + 0.0 = +0.0`,
//! so decoding `-0.0` with a `+0.0` offset yields `+0.0` (as in numpy).
//!
//! # Performance
//!
//! Each entry point picks one monomorphised kernel per call, and runs its loop
//! through the crate's runtime dispatch, i.e. with AVX2 where the CPU has it
//! (twice the lanes, and for decoding twice the divider width; still plain
//! IEEE division, so the results are identical). Decoding `float64` on CPUs
//! with FMA sends every other vector through fused multiply-adds instead of
//! the divider (`divide_fma`): a reciprocal, a multiplication and four fused
//! multiply-adds give the same, correctly rounded quotient, and both units
//! work at once. Kernels that can fail process the
//! chunk in blocks through a stack buffer with a branch-free pass that
//! accumulates an error flag; only when the flag is set is the block scanned
//! again for the first offending element (whose input is still intact, since a
//! block is written back only when it is error-free). `float32` / `float64`
//! cannot fail, so they write their results directly. The `_into` entry
//! points read one buffer and append to another, so a caller holding borrowed
//! input needs one pass instead of a copy plus an in-place pass. `float16` is rounded with
//! `half`'s slice conversions (hardware instructions where available),
//! `bfloat16` with branch-free bit arithmetic in `f32` registers. Small floats
//! and integer division of one-byte types use a 256-entry lookup table for
//! large chunks. An offset of `+0` with a scale of `1` skips the pass when
//! encoding, and when decoding integers; decoding floats still computes
//! `x / 1 + 0`, which turns `-0.0` into `+0.0` as zarr-python does.
//!
//! # Layout
//!
//! This file holds the public entry points and the dispatch by data type;
//! the arithmetic is split by type family: `int` (checked integer
//! arithmetic), `float` (`float32` / `float64`, with `divide_fma` for
//! float64 decoding on AVX2 + FMA), `half_float` (`float16` / `bfloat16`)
//! and `mini` (floats of at most 8 bits). `drive` holds the block loops they
//! all run in, and `explain` the error messages.

use std::mem::MaybeUninit;

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

use crate::kernels::minifloat::{MiniFloatFormat, MiniRound};
use crate::kernels::rounding::RoundingMode;
use crate::kernels::simd;
use crate::numeric::{NumericType, Value};

#[cfg(target_arch = "x86_64")]
mod divide_fma;
mod drive;
mod explain;
mod float;
mod half_float;
mod int;
mod mini;
#[cfg(test)]
mod tests;

use {drive::*, explain::*, float::*, half_float::*, int::*, mini::*};

/// An error from the `scale_offset` kernels.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScaleOffsetError {
    /// The scale is zero.
    #[error("scale is zero")]
    ZeroScale,
    /// An element whose result (or an intermediate result) is not representable.
    #[error("element {index} = {value}: {reason}")]
    Element {
        /// The index of the first offending element.
        index: usize,
        /// Its (input) value.
        value: Value,
        /// Which step failed and why.
        reason: String,
    },
    /// The data is not a whole number of elements.
    #[error("{len} bytes is not a whole number of {data_type} elements")]
    DataLength {
        /// The number of data bytes.
        len: usize,
        /// The element type.
        data_type: NumericType,
    },
    /// The offset or scale is not one element of the data type.
    #[error("{field} has {len} bytes, expected one {data_type} element")]
    ScalarLength {
        /// `"offset"` or `"scale"`.
        field: &'static str,
        /// The number of bytes given.
        len: usize,
        /// The element type.
        data_type: NumericType,
    },
}

impl ScaleOffsetError {
    /// The same error, for elements numbered from `start` (a part of a chunk
    /// that begins at element `start`).
    pub(crate) fn offset_by(self, start: usize) -> Self {
        match self {
            Self::Element {
                index,
                value,
                reason,
            } => Self::Element {
                index: index + start,
                value,
                reason,
            },
            e => e,
        }
    }
}

/// The direction of the transformation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Encode,
    Decode,
}

/// Apply `out = (x - offset) * scale` in place to native-endian elements of
/// `data_type`.
///
/// `offset` and `scale` are one native-endian element each (as returned by
/// [`parse_scalar`](crate::scalar::parse_scalar)), or empty for a field absent
/// from the configuration: an empty `offset` is the additive identity (zero,
/// even for `float8_e8m0fnu`, which cannot hold it), an empty `scale` the
/// multiplicative identity (one). `bytes` need not be aligned.
///
/// # Errors
/// Returns [`ScaleOffsetError`] if the scale is zero, the lengths do not match
/// the type, or an element's result is not representable. On error the contents
/// of `bytes` are unspecified.
pub fn encode_bytes(
    data_type: NumericType,
    bytes: &mut [u8],
    offset: &[u8],
    scale: &[u8],
) -> Result<(), ScaleOffsetError> {
    apply_bytes(Direction::Encode, data_type, bytes, offset, scale)
}

/// Apply `out = x / scale + offset` in place to native-endian elements of
/// `data_type`.
///
/// See [`encode_bytes`] for the arguments.
///
/// # Errors
/// Returns [`ScaleOffsetError`] if the scale is zero, the lengths do not match
/// the type, an element's result is not representable, or (integers) `x` is
/// not a multiple of `scale`. On error the contents of `bytes` are unspecified.
pub fn decode_bytes(
    data_type: NumericType,
    bytes: &mut [u8],
    offset: &[u8],
    scale: &[u8],
) -> Result<(), ScaleOffsetError> {
    apply_bytes(Direction::Decode, data_type, bytes, offset, scale)
}

/// Append `(x - offset) * scale` of every native-endian element of `src` to
/// `dst`, leaving `src` as it is.
///
/// The same as copying `src` to the end of `dst` and calling [`encode_bytes`]
/// on the copy, in one pass instead of two. `src` need not be aligned; the
/// output is aligned if the end of `dst` is.
///
/// # Errors
/// As [`encode_bytes`]; on error `dst` keeps its original length.
pub fn encode_bytes_into(
    data_type: NumericType,
    src: &[u8],
    dst: &mut Vec<u8>,
    offset: &[u8],
    scale: &[u8],
) -> Result<(), ScaleOffsetError> {
    apply_bytes_into(Direction::Encode, data_type, src, dst, offset, scale)
}

/// Append `x / scale + offset` of every native-endian element of `src` to
/// `dst`, leaving `src` as it is.
///
/// See [`encode_bytes_into`] for the arguments.
///
/// # Errors
/// As [`decode_bytes`]; on error `dst` keeps its original length.
pub fn decode_bytes_into(
    data_type: NumericType,
    src: &[u8],
    dst: &mut Vec<u8>,
    offset: &[u8],
    scale: &[u8],
) -> Result<(), ScaleOffsetError> {
    apply_bytes_into(Direction::Decode, data_type, src, dst, offset, scale)
}

/// `true` if `offset` / `scale` (as for [`encode_bytes`]) make encoding the
/// identity: an offset of integer `0` or `+0.0` (or empty) and a scale of `1`
/// (or empty). Decoding is then the identity too for integer types; for
/// float types it maps `-0.0` to `+0.0` (`-0.0 / 1 + 0.0`).
///
/// Returns `false` if a length does not match the type.
#[must_use]
pub fn is_identity(data_type: NumericType, offset: &[u8], scale: &[u8]) -> bool {
    let size = data_type.size();
    let offset_is_zero = offset.is_empty()
        || offset.len() == size
            && match data_type.read_value(offset) {
                Value::Int(v) => v == 0,
                Value::Float(v) => v == 0.0 && v.is_sign_positive(),
            };
    let scale_is_one = scale.is_empty()
        || scale.len() == size
            && match data_type.read_value(scale) {
                Value::Int(v) => v == 1,
                Value::Float(v) => v == 1.0,
            };
    offset_is_zero && scale_is_one
}

/// `true` if the pass in `direction` can be skipped: [`is_identity`], and for
/// float types only when encoding. Decoding computes `x / 1 + 0`, which IEEE
/// arithmetic (and zarr-python, which always computes it) maps from `-0.0`
/// to `+0.0`; encoding computes `(x - 0) * 1`, which keeps every value.
pub(crate) fn skips(
    direction: Direction,
    data_type: NumericType,
    offset: &[u8],
    scale: &[u8],
) -> bool {
    is_identity(data_type, offset, scale)
        && (direction == Direction::Encode || !data_type.is_float())
}

/// An element type with a native Rust counterpart, for the typed entry points
/// [`encode`] and [`decode`]. Sealed.
pub trait ScaleOffsetElement: bytemuck::Pod + private::Sealed {
    /// The data type of the element.
    const NUMERIC_TYPE: NumericType;
}

mod private {
    pub trait Sealed {}
}

macro_rules! impl_element {
    ($($ty:ty => $variant:ident),* $(,)?) => {
        $(
            impl private::Sealed for $ty {}
            impl ScaleOffsetElement for $ty {
                const NUMERIC_TYPE: NumericType = NumericType::$variant;
            }
        )*
    };
}

impl_element!(
    i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
    u8 => UInt8, u16 => UInt16, u32 => UInt32, u64 => UInt64,
    f16 => Float16, bf16 => BFloat16, f32 => Float32, f64 => Float64,
);

/// Apply `out = (x - offset) * scale` in place to a typed slice.
///
/// # Errors
/// See [`encode_bytes`].
pub fn encode<T: ScaleOffsetElement>(
    data: &mut [T],
    offset: T,
    scale: T,
) -> Result<(), ScaleOffsetError> {
    encode_bytes(
        T::NUMERIC_TYPE,
        bytemuck::cast_slice_mut(data),
        bytemuck::bytes_of(&offset),
        bytemuck::bytes_of(&scale),
    )
}

/// Apply `out = x / scale + offset` in place to a typed slice.
///
/// # Errors
/// See [`decode_bytes`].
pub fn decode<T: ScaleOffsetElement>(
    data: &mut [T],
    offset: T,
    scale: T,
) -> Result<(), ScaleOffsetError> {
    decode_bytes(
        T::NUMERIC_TYPE,
        bytemuck::cast_slice_mut(data),
        bytemuck::bytes_of(&offset),
        bytemuck::bytes_of(&scale),
    )
}

// ---------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------

/// [`encode_bytes`] or [`decode_bytes`], by `direction`.
pub(crate) fn apply_bytes(
    direction: Direction,
    data_type: NumericType,
    bytes: &mut [u8],
    offset: &[u8],
    scale: &[u8],
) -> Result<(), ScaleOffsetError> {
    apply(direction, data_type, Io::InPlace(bytes), offset, scale)
}

fn apply_bytes_into(
    direction: Direction,
    data_type: NumericType,
    src: &[u8],
    dst: &mut Vec<u8>,
    offset: &[u8],
    scale: &[u8],
) -> Result<(), ScaleOffsetError> {
    dst.reserve(src.len());
    let spare = &mut dst.spare_capacity_mut()[..src.len()];
    apply_uninit(direction, data_type, src, spare, offset, scale)?;
    // SAFETY: `apply_uninit` returned `Ok`, so it wrote all of `spare`:
    // the `src.len()` bytes after the old length, within the capacity
    // reserved above.
    unsafe { dst.set_len(dst.len() + src.len()) };
    Ok(())
}

/// `(x - offset) * scale` (encode) or `x / scale + offset` (decode) of every
/// element of `src`, written to `dst` (as many bytes), for callers that split
/// one output buffer into parts.
///
/// # Errors
/// As [`encode_bytes_into`] / [`decode_bytes_into`]; `dst` is then partly
/// written.
///
/// # Panics
/// If `dst` and `src` differ in length.
pub(crate) fn apply_uninit(
    direction: Direction,
    data_type: NumericType,
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    offset: &[u8],
    scale: &[u8],
) -> Result<(), ScaleOffsetError> {
    assert_eq!(src.len(), dst.len());
    apply(direction, data_type, Io::Out { src, dst }, offset, scale)
}

fn apply(
    direction: Direction,
    data_type: NumericType,
    mut io: Io<'_>,
    offset: &[u8],
    scale: &[u8],
) -> Result<(), ScaleOffsetError> {
    let size = data_type.size();
    for (field, value) in [("offset", offset), ("scale", scale)] {
        if !value.is_empty() && value.len() != size {
            return Err(ScaleOffsetError::ScalarLength {
                field,
                len: value.len(),
                data_type,
            });
        }
    }
    let len = io.input().len();
    if !len.is_multiple_of(size) {
        return Err(ScaleOffsetError::DataLength { len, data_type });
    }
    if skips(direction, data_type, offset, scale) {
        io.copy();
        return Ok(());
    }
    let one;
    let scale = if scale.is_empty() {
        one = if data_type.is_float() {
            crate::scalar::float_bytes(1.0, data_type).expect("every float type has 1")
        } else {
            crate::scalar::int_bytes(1, data_type)
        };
        &one[..]
    } else {
        scale
    };
    let scale_value = data_type.read_value(scale);
    if matches!(scale_value, Value::Int(0)) || matches!(scale_value, Value::Float(v) if v == 0.0) {
        return Err(ScaleOffsetError::ZeroScale);
    }
    if len == 0 {
        return Ok(());
    }
    let offset = (!offset.is_empty()).then_some(offset);
    let offset_value = match offset {
        Some(offset) => data_type.read_value(offset),
        None if data_type.is_float() => Value::Float(0.0),
        None => Value::Int(0),
    };

    let result = run_kernel(direction, data_type, io.reborrow(), offset, scale);
    result.map_err(|index| {
        // The block holding the offending element was not written back, so its
        // input is still intact.
        let x = data_type.read_value(&io.input()[index * size..(index + 1) * size]);
        let reason = explain(direction, data_type, x, offset_value, scale_value);
        ScaleOffsetError::Element {
            index,
            value: x,
            reason,
        }
    })
}

/// Run the kernel for `data_type`; `Err(index)` names the first bad element.
/// An offset of `None` is zero.
fn run_kernel(
    direction: Direction,
    data_type: NumericType,
    io: Io<'_>,
    offset_or_zero: Option<&[u8]>,
    scale: &[u8],
) -> Result<(), usize> {
    use NumericType as N;
    let enc = direction == Direction::Encode;
    // All-zero bits are zero in every type except `float8_e8m0fnu`, which is
    // handled through `offset_or_zero` below.
    let offset = offset_or_zero.unwrap_or(&[0u8; 8][..data_type.size()]);
    // The closures are `move`: `Drive` must hold plain values, not references
    // (see `simd`).
    match data_type {
        N::Int2 | N::Int4 | N::Int8 => {
            byte_int_kernel::<i8>(enc, data_type, io, offset[0], scale[0])
        }
        N::UInt2 | N::UInt4 | N::UInt8 => {
            byte_int_kernel::<u8>(enc, data_type, io, offset[0], scale[0])
        }
        N::Int16 => int_kernel::<i16>(enc, io, offset, scale),
        N::Int32 => int_kernel::<i32>(enc, io, offset, scale),
        N::Int64 => int_kernel::<i64>(enc, io, offset, scale),
        N::UInt16 => int_kernel::<u16>(enc, io, offset, scale),
        N::UInt32 => int_kernel::<u32>(enc, io, offset, scale),
        N::UInt64 => int_kernel::<u64>(enc, io, offset, scale),
        N::Float32 => float_kernel::<f32>(enc, io, offset, scale),
        N::Float64 => float_kernel::<f64>(enc, io, offset, scale),
        N::Float16 => half_kernel::<f16>(enc, io, offset, scale),
        N::BFloat16 => half_kernel::<bf16>(enc, io, offset, scale),
        N::Mini(format) => {
            let off = offset_or_zero.map_or(0.0, |offset| format.to_f64(offset[0]));
            let sc = format.to_f64(scale[0]);
            if enc {
                byte_kernel(io, |b| mini_step(format, b, |x| x - off, |d| d * sc))
            } else {
                byte_kernel(io, |b| mini_step(format, b, |x| x / sc, |q| q + off))
            }
        }
    }
}

/// One-byte integers: `int2` / `int4` / `int8` as `T = i8`, `uint2` /
/// `uint4` / `uint8` as `T = u8`, checked against the range of `data_type`.
fn byte_int_kernel<T: IntArith>(
    enc: bool,
    data_type: NumericType,
    io: Io<'_>,
    offset: u8,
    scale: u8,
) -> Result<(), usize> {
    // `T` is a one-byte integer: its value is the byte reinterpreted, and the
    // closures below keep bytes in and out so the drivers work on `u8`.
    let of = |byte: u8| bytemuck::cast::<u8, T>(byte);
    let to_byte = |v: T| bytemuck::cast::<T, u8>(v);
    let (lo, hi) = narrow_range(data_type);
    // The bounds are within `T`'s range, so their low byte is their value.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (lo, hi) = (of(lo as u8), of(hi as u8));
    let (off, sc) = (of(offset), of(scale));
    if enc {
        drive_simd(io, move |b: u8| {
            let (r, bad) = T::enc(of(b), off, sc, lo, hi);
            (to_byte(r), bad)
        })
    } else if scale == 1 {
        drive_simd(io, move |b: u8| {
            let (r, bad) = T::dec_add(of(b), off, lo, hi);
            (to_byte(r), bad)
        })
    } else {
        // Division does not vectorise: a table is faster.
        byte_kernel(io, move |b| {
            let (r, bad) = T::dec(of(b), off, sc, lo, hi);
            (to_byte(r), bad)
        })
    }
}

/// The range of a one-byte integer type, as `i16` (fits both `i8` and `u8`).
#[allow(clippy::cast_possible_truncation)]
fn narrow_range(data_type: NumericType) -> (i16, i16) {
    let (lo, hi) = data_type.int_range().expect("integer type");
    (lo as i16, hi as i16)
}

fn read<T: bytemuck::Pod>(bytes: &[u8]) -> T {
    bytemuck::pod_read_unaligned(bytes)
}
