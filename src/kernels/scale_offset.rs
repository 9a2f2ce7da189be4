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
//! large chunks. An offset of `+0` with a scale of
//! `1` is a no-op and skips the pass entirely.

use std::mem::MaybeUninit;

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

use crate::kernels::minifloat::{MiniFloatFormat, MiniRound};
use crate::kernels::rounding::RoundingMode;
use crate::kernels::simd;
use crate::numeric::{NumericType, Value};

#[cfg(target_arch = "x86_64")]
mod divide_fma;

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
fn skips(direction: Direction, data_type: NumericType, offset: &[u8], scale: &[u8]) -> bool {
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

// ---------------------------------------------------------------------------
// The block drivers
// ---------------------------------------------------------------------------

/// Elements per block of the stack buffers.
const BLOCK: usize = 512;

/// Where a driver reads the elements and puts the results.
///
/// Every driver, when it returns `Ok`, has written every byte of the output
/// (`InPlace`: the input itself; `Out`: all of `dst`), with initialised
/// values only.
enum Io<'a> {
    /// Overwrite the input, a block at a time.
    InPlace(&'a mut [u8]),
    /// Write the results to `dst` and leave `src` alone: one pass over
    /// memory instead of a copy followed by an in-place pass.
    Out {
        /// The input.
        src: &'a [u8],
        /// Where the results go: as many bytes as `src`, not yet written.
        dst: &'a mut [MaybeUninit<u8>],
    },
}

impl Io<'_> {
    /// The same buffers for a shorter time, so that the input can be read
    /// after a driver has consumed the reborrow.
    fn reborrow(&mut self) -> Io<'_> {
        match self {
            Io::InPlace(bytes) => Io::InPlace(bytes),
            Io::Out { src, dst } => Io::Out { src, dst },
        }
    }

    /// The whole input; its blocks are intact up to the first bad element.
    #[inline(always)]
    fn input(&self) -> &[u8] {
        match self {
            Io::InPlace(bytes) => bytes,
            Io::Out { src, .. } => src,
        }
    }

    /// The identity transformation.
    fn copy(self) {
        if let Io::Out { src, dst } = self {
            write_bytes(dst, src);
        }
    }

    /// The input elements in `range` (bytes) as `[T]`: the bytes themselves
    /// if aligned, otherwise copied into `scratch`.
    #[inline(always)]
    fn block<'s, T: bytemuck::Pod>(
        &'s self,
        range: std::ops::Range<usize>,
        scratch: &'s mut [T; BLOCK],
    ) -> &'s [T] {
        let bytes = &self.input()[range];
        match bytemuck::try_cast_slice(bytes) {
            Ok(xs) => xs,
            Err(_) => {
                let xs = &mut scratch[..bytes.len() / size_of::<T>()];
                bytemuck::cast_slice_mut(xs).copy_from_slice(bytes);
                xs
            }
        }
    }

    /// Put the results of the block at `range` (bytes).
    #[inline(always)]
    fn put<T: bytemuck::Pod>(&mut self, range: std::ops::Range<usize>, out: &[T]) {
        let out: &[u8] = bytemuck::cast_slice(out);
        match self {
            Io::InPlace(bytes) => bytes[range].copy_from_slice(out),
            Io::Out { dst, .. } => write_bytes(&mut dst[range], out),
        }
    }
}

/// `dst = src` for a not yet initialised `dst` of the same length.
#[inline(always)]
fn write_bytes(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    // SAFETY: both are `src.len()` bytes long (checked), and `dst` is an
    // exclusive borrow, so they do not overlap; `MaybeUninit<u8>` has the
    // layout of `u8`.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast(), src.len()) };
}

/// Byte ranges of the blocks of `len` bytes of `T`.
#[inline(always)]
fn block_ranges<T>(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let step = BLOCK * size_of::<T>();
    (0..len)
        .step_by(step)
        .map(move |start| start..len.min(start + step))
}

/// Map every element through `f` (`(result, bad)`), block by block.
///
/// A block's results are put only if none of its elements is bad; otherwise
/// the index of the first bad element is returned and the block is left
/// intact.
#[inline(always)]
fn drive<T: bytemuck::Pod, F: Fn(T) -> (T, bool)>(mut io: Io<'_>, f: F) -> Result<(), usize> {
    let mut scratch = [T::zeroed(); BLOCK];
    let mut buffer = [T::zeroed(); BLOCK];
    for (block_index, range) in block_ranges::<T>(io.input().len()).enumerate() {
        let xs = io.block(range.clone(), &mut scratch);
        let out = &mut buffer[..xs.len()];
        let mut bad = false;
        for (o, &x) in out.iter_mut().zip(xs) {
            let (r, b) = f(x);
            *o = r;
            bad |= b;
        }
        if bad {
            let i = xs.iter().position(|&x| f(x).1).unwrap_or(0);
            return Err(block_index * BLOCK + i);
        }
        io.put(range, out);
    }
    Ok(())
}

/// [`drive`] for an `f` that cannot fail: in place (and aligned) there is no
/// input to keep, so the elements are overwritten directly instead of going
/// through the stack buffer, which saves a copy of every block.
#[inline(always)]
fn drive_infallible<T: bytemuck::Pod, F: Fn(T) -> T>(io: Io<'_>, f: F) -> Result<(), usize> {
    match io {
        Io::InPlace(bytes) => {
            if let Ok(data) = bytemuck::try_cast_slice_mut::<u8, T>(&mut *bytes) {
                for x in data {
                    *x = f(*x);
                }
                return Ok(());
            }
            drive(Io::InPlace(bytes), move |x| (f(x), false))
        }
        Io::Out { src, dst } => {
            if let Ok(xs) = bytemuck::try_cast_slice::<u8, T>(src)
                && dst.as_ptr().cast::<T>().is_aligned()
            {
                // SAFETY: `dst` is `src.len()` bytes (see `Io`), aligned for
                // `T` (checked), so it holds `xs.len()` values of `T`, which
                // are plain data; `MaybeUninit<T>` has the layout of `T`.
                let out = unsafe {
                    std::slice::from_raw_parts_mut(
                        dst.as_mut_ptr().cast::<MaybeUninit<T>>(),
                        xs.len(),
                    )
                };
                // Writes every byte of `dst`, as `Io` requires.
                for (o, &x) in out.iter_mut().zip(xs) {
                    o.write(f(x));
                }
                return Ok(());
            }
            drive(Io::Out { src, dst }, move |x| (f(x), false))
        }
    }
}

/// [`drive_infallible`] as a [`simd::Kernel`].
struct DriveInfallible<'a, T, F> {
    io: Io<'a>,
    f: F,
    element: std::marker::PhantomData<T>,
}

impl<T: bytemuck::Pod, F: Fn(T) -> T> simd::Kernel for DriveInfallible<'_, T, F> {
    type Output = Result<(), usize>;

    #[inline(always)]
    fn run(self) -> Result<(), usize> {
        drive_infallible(self.io, self.f)
    }
}

/// [`drive`] as a [`simd::Kernel`]: `f` is held by value, so that its
/// captures are known not to alias the output.
struct Drive<'a, T, F> {
    io: Io<'a>,
    f: F,
    element: std::marker::PhantomData<T>,
}

impl<T: bytemuck::Pod, F: Fn(T) -> (T, bool)> simd::Kernel for Drive<'_, T, F> {
    type Output = Result<(), usize>;

    #[inline(always)]
    fn run(self) -> Result<(), usize> {
        drive(self.io, self.f)
    }
}

/// [`drive`], compiled for AVX2 where the CPU has it. `f` and what it calls
/// must be `#[inline(always)]` (or trivial) to benefit.
#[inline(always)]
fn drive_simd<T: bytemuck::Pod, F: Fn(T) -> (T, bool)>(io: Io<'_>, f: F) -> Result<(), usize> {
    simd::dispatch(Drive {
        io,
        f,
        element: std::marker::PhantomData,
    })
}

/// One-byte types whose arithmetic does not vectorise (division, small
/// floats): through a 256-entry lookup table for large chunks.
#[inline(always)]
fn byte_kernel<F: Fn(u8) -> (u8, bool)>(io: Io<'_>, f: F) -> Result<(), usize> {
    if io.input().len() < 256 {
        return drive(io, f);
    }
    let mut values = [0u8; 256];
    let mut bad = [false; 256];
    for b in 0..=255u8 {
        (values[usize::from(b)], bad[usize::from(b)]) = f(b);
    }
    drive_simd(io, move |b: u8| {
        (values[usize::from(b)], bad[usize::from(b)])
    })
}

// ---------------------------------------------------------------------------
// Integers
// ---------------------------------------------------------------------------

/// Checked `scale_offset` arithmetic of one integer type. Each function returns
/// the (wrapped) result and whether it is invalid; `lo` / `hi` bound every
/// intermediate and final value. The scale is never zero.
trait IntArith: bytemuck::Pod + PartialEq {
    const ONE: Self;
    /// `(x - off) * sc`
    fn enc(x: Self, off: Self, sc: Self, lo: Self, hi: Self) -> (Self, bool);
    /// `x / sc + off`, exact division only
    fn dec(x: Self, off: Self, sc: Self, lo: Self, hi: Self) -> (Self, bool);
    /// `x + off` (decode with a scale of one, no division)
    fn dec_add(x: Self, off: Self, lo: Self, hi: Self) -> (Self, bool);
    const MIN: Self;
    const MAX: Self;
}

/// Signed types up to 32 bits: computed exactly in the wider type `$w`
/// (`|x - off| * |sc|` always fits), which vectorises well.
macro_rules! int_signed_wide {
    ($t:ty, $w:ty) => {
        impl IntArith for $t {
            const ONE: Self = 1;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation)]
            fn enc(x: Self, off: Self, sc: Self, lo: Self, hi: Self) -> (Self, bool) {
                let (lo, hi) = (<$w>::from(lo), <$w>::from(hi));
                let d = <$w>::from(x) - <$w>::from(off);
                let r = d * <$w>::from(sc);
                let bad = (d < lo) | (d > hi) | (r < lo) | (r > hi);
                (r as $t, bad)
            }
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation)]
            fn dec(x: Self, off: Self, sc: Self, lo: Self, hi: Self) -> (Self, bool) {
                let (lo, hi) = (<$w>::from(lo), <$w>::from(hi));
                let (x, sc) = (<$w>::from(x), <$w>::from(sc));
                let q = x / sc;
                let r = q + <$w>::from(off);
                let bad = (x % sc != 0) | (q < lo) | (q > hi) | (r < lo) | (r > hi);
                (r as $t, bad)
            }
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation)]
            fn dec_add(x: Self, off: Self, lo: Self, hi: Self) -> (Self, bool) {
                let r = <$w>::from(x) + <$w>::from(off);
                ((r as $t), (r < <$w>::from(lo)) | (r > <$w>::from(hi)))
            }
        }
    };
}

int_signed_wide!(i8, i16);
int_signed_wide!(i16, i32);
int_signed_wide!(i32, i64);

/// Unsigned types up to 32 bits: the subtraction checks for borrow, the product
/// of two values below `2^n` fits the type `$w` of twice the width.
macro_rules! int_unsigned_wide {
    ($t:ty, $w:ty) => {
        impl IntArith for $t {
            const ONE: Self = 1;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation)]
            fn enc(x: Self, off: Self, sc: Self, _lo: Self, hi: Self) -> (Self, bool) {
                let (d, borrow) = x.overflowing_sub(off);
                let r = <$w>::from(d) * <$w>::from(sc);
                let bad = borrow | (d > hi) | (r > <$w>::from(hi));
                (r as $t, bad)
            }
            #[inline(always)]
            fn dec(x: Self, off: Self, sc: Self, _lo: Self, hi: Self) -> (Self, bool) {
                let q = x / sc;
                let (r, carry) = q.overflowing_add(off);
                let bad = (x % sc != 0) | (q > hi) | carry | (r > hi);
                (r, bad)
            }
            #[inline(always)]
            fn dec_add(x: Self, off: Self, _lo: Self, hi: Self) -> (Self, bool) {
                let (r, carry) = x.overflowing_add(off);
                (r, carry | (r > hi))
            }
        }
    };
}

int_unsigned_wide!(u8, u16);
int_unsigned_wide!(u16, u32);
int_unsigned_wide!(u32, u64);

/// 64-bit types: overflow flags of the native operations (always full range).
macro_rules! int_64 {
    ($t:ty) => {
        impl IntArith for $t {
            const ONE: Self = 1;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn enc(x: Self, off: Self, sc: Self, _lo: Self, _hi: Self) -> (Self, bool) {
                let (d, o1) = x.overflowing_sub(off);
                let (r, o2) = d.overflowing_mul(sc);
                (r, o1 | o2)
            }
            #[inline(always)]
            fn dec(x: Self, off: Self, sc: Self, _lo: Self, _hi: Self) -> (Self, bool) {
                let (q, o1) = x.overflowing_div(sc);
                let (r, o2) = q.overflowing_add(off);
                (r, (x.wrapping_rem(sc) != 0) | o1 | o2)
            }
            #[inline(always)]
            fn dec_add(x: Self, off: Self, _lo: Self, _hi: Self) -> (Self, bool) {
                x.overflowing_add(off)
            }
        }
    };
}

int_64!(i64);
int_64!(u64);

/// Multi-byte integer types (always their full range).
fn int_kernel<T: IntArith>(
    enc: bool,
    io: Io<'_>,
    offset: &[u8],
    scale: &[u8],
) -> Result<(), usize> {
    let (off, sc): (T, T) = (read(offset), read(scale));
    let (lo, hi) = (T::MIN, T::MAX);
    if enc {
        drive_simd(io, move |x| T::enc(x, off, sc, lo, hi))
    } else if sc == T::ONE {
        drive_simd(io, move |x| T::dec_add(x, off, lo, hi))
    } else {
        drive_simd(io, move |x| T::dec(x, off, sc, lo, hi))
    }
}

// ---------------------------------------------------------------------------
// float32 / float64
// ---------------------------------------------------------------------------

trait FloatArith:
    bytemuck::Pod
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Add<Output = Self>
{
}

impl FloatArith for f32 {}

impl FloatArith for f64 {}

/// `float32` / `float64`. Every result is the correctly rounded IEEE result
/// of each step, with or without AVX2: the division is a division (never a
/// multiplication by `1 / scale`), except that float64 decoding on CPUs
/// with FMA computes half of the quotients with `divide_fma`, which is
/// proven to give the same correctly rounded quotient.
fn float_kernel<T: FloatArith>(
    enc: bool,
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))] mut io: Io<'_>,
    offset: &[u8],
    scale: &[u8],
) -> Result<(), usize> {
    let (off, sc): (T, T) = (read(offset), read(scale));
    // IEEE arithmetic: overflow gives ±infinity, as in zarr-python, so no
    // element fails.
    if enc {
        simd::dispatch(DriveInfallible {
            io,
            f: move |x: T| (x - off) * sc,
            element: std::marker::PhantomData,
        })
    } else {
        #[cfg(target_arch = "x86_64")]
        if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f64>()
            && decode_f64_fma(io.reborrow(), read(offset), read(scale))
        {
            return Ok(());
        }
        simd::dispatch(DriveInfallible {
            io,
            f: move |x: T| x / sc + off,
            element: std::marker::PhantomData,
        })
    }
}

/// float64 decoding through `divide_fma` (the same results, half without the
/// divider), if the CPU and the scale allow; `false` if it did nothing.
#[cfg(target_arch = "x86_64")]
fn decode_f64_fma(io: Io<'_>, offset: f64, scale: f64) -> bool {
    if !divide_fma::usable(scale) {
        return false;
    }
    match io {
        Io::InPlace(bytes) => {
            let p = bytes.as_mut_ptr().cast::<f64>();
            // SAFETY: `usable` checked the CPU and the scale; `p` is valid
            // for reading and writing the `len / 8` whole elements of
            // `bytes`, unaligned accesses included.
            unsafe { divide_fma::decode(p, p, bytes.len() / 8, scale, offset) };
        }
        Io::Out { src, dst } => {
            let n = src.len() / 8;
            let out = dst.as_mut_ptr().cast::<f64>();
            // SAFETY: as above for `src`; `out` is `dst`, `src.len()` bytes
            // (see `Io`), written in full.
            unsafe { divide_fma::decode(src.as_ptr().cast(), out, n, scale, offset) };
        }
    }
    true
}

// ---------------------------------------------------------------------------
// float16 / bfloat16
// ---------------------------------------------------------------------------

/// Round `x` to the nearest `bfloat16` value (ties to even), staying in `f32`.
///
/// Branch-free so that it vectorises; equal to `bf16::from_f32(x).to_f32()`
/// (checked against `half` in the tests). NaN is returned unchanged.
#[inline(always)]
fn round_bf16(x: f32) -> f32 {
    let bits = x.to_bits();
    // bfloat16 is f32 with 7 mantissa bits: round the low 16 bits away. A carry
    // out of the largest finite value gives infinity, as it should.
    let r = f32::from_bits(bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) & 0xffff_0000);
    if x.is_nan() { x } else { r }
}

/// `float16` / `bfloat16` block operations in `f32`.
trait HalfArith: bytemuck::Pod {
    /// `dst[i] = src[i]` as `f32` (exact).
    fn widen(src: &[Self], dst: &mut [f32]);
    /// Round every value of `values` to the nearest value of `Self` (ties to
    /// even), in place; `scratch` has the same length.
    fn round(values: &mut [f32], scratch: &mut [Self]);
    /// `dst[i]` = `src[i]` rounded to the nearest value of `Self`.
    fn narrow(src: &[f32], dst: &mut [Self]);
}

/// `float16` uses the slice conversions of `half`, which use the hardware
/// conversion instructions (F16C, FP16) where available.
impl HalfArith for f16 {
    #[inline(always)]
    fn widen(src: &[Self], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst);
    }
    #[inline(always)]
    fn round(values: &mut [f32], scratch: &mut [Self]) {
        scratch.convert_from_f32_slice(values);
        scratch.convert_to_f32_slice(values);
    }
    #[inline(always)]
    fn narrow(src: &[f32], dst: &mut [Self]) {
        dst.convert_from_f32_slice(src);
    }
}

/// `bfloat16` is the upper half of an `f32`: plain bit arithmetic.
impl HalfArith for bf16 {
    #[inline(always)]
    fn widen(src: &[Self], dst: &mut [f32]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = f32::from_bits(u32::from(s.to_bits()) << 16);
        }
    }
    #[inline(always)]
    fn round(values: &mut [f32], _scratch: &mut [Self]) {
        for v in values {
            *v = round_bf16(*v);
        }
    }
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)]
    fn narrow(src: &[f32], dst: &mut [Self]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            let r = round_bf16(s);
            // Keep a NaN a NaN even if its payload were only in the low bits.
            let quiet = if r.is_nan() { 0x0040 } else { 0 };
            *d = bf16::from_bits((r.to_bits() >> 16) as u16 | quiet);
        }
    }
}

fn half_kernel<H: HalfArith>(
    enc: bool,
    io: Io<'_>,
    offset: &[u8],
    scale: &[u8],
) -> Result<(), usize> {
    let mut pair = [0f32; 2];
    H::widen(&[read::<H>(offset), read::<H>(scale)], &mut pair);
    let [off, sc] = pair;
    if enc {
        simd::dispatch(HalfBlocks::<H, true>::new(io, off, sc))
    } else {
        simd::dispatch(HalfBlocks::<H, false>::new(io, off, sc))
    }
}

/// [`half_blocks`] as a [`simd::Kernel`]. `float16`'s conversions are
/// `half`'s own (with their own CPU detection); the arithmetic and
/// `bfloat16`'s rounding get AVX2.
struct HalfBlocks<'a, H, const ENC: bool> {
    io: Io<'a>,
    off: f32,
    sc: f32,
    element: std::marker::PhantomData<H>,
}

impl<'a, H, const ENC: bool> HalfBlocks<'a, H, ENC> {
    fn new(io: Io<'a>, off: f32, sc: f32) -> Self {
        Self {
            io,
            off,
            sc,
            element: std::marker::PhantomData,
        }
    }
}

impl<H: HalfArith, const ENC: bool> simd::Kernel for HalfBlocks<'_, H, ENC> {
    type Output = Result<(), usize>;

    #[inline(always)]
    fn run(self) -> Result<(), usize> {
        half_blocks::<H, ENC>(self.io, self.off, self.sc)
    }
}

/// `float16` / `bfloat16` through `f32` blocks, rounding to `H` after each
/// operation. `f32` has more than twice the precision of either type, so an
/// `f32` operation followed by rounding to `H` is the correctly rounded `H`
/// operation (and what numpy computes for `float16`).
#[inline(always)]
fn half_blocks<H: HalfArith, const ENC: bool>(
    mut io: Io<'_>,
    off: f32,
    sc: f32,
) -> Result<(), usize> {
    let mut scratch = [H::zeroed(); BLOCK];
    let mut xs = [0f32; BLOCK];
    let mut ts = [0f32; BLOCK];
    let mut out = [H::zeroed(); BLOCK];
    for range in block_ranges::<H>(io.input().len()) {
        let block = io.block(range.clone(), &mut scratch);
        let n = block.len();
        let (xs, ts, out) = (&mut xs[..n], &mut ts[..n], &mut out[..n]);
        H::widen(block, xs);
        for (t, &x) in ts.iter_mut().zip(xs.iter()) {
            *t = if ENC { x - off } else { x / sc };
        }
        H::round(ts, out);
        for t in ts.iter_mut() {
            *t = if ENC { *t * sc } else { *t + off };
        }
        // IEEE arithmetic: overflow gives ±infinity, as in zarr-python.
        H::narrow(ts, out);
        io.put(range, out);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Floats of at most 8 bits
// ---------------------------------------------------------------------------

/// Round `value` into `format` (nearest-even); an overflow becomes ±infinity
/// where the format has it (IEEE, as for the other float types); `None` if
/// the value has no representation.
fn mini_round(format: MiniFloatFormat, value: f64) -> Option<u8> {
    match format.round_from_f64(value, RoundingMode::NearestEven) {
        MiniRound::Value(bits) => Some(bits),
        MiniRound::Overflow { negative } => format.infinity_bits(negative),
        MiniRound::NotRepresentable => None,
    }
}

/// One small-float element: `second(round(first(x)))`, rounded, in `f64`.
#[inline(always)]
fn mini_step(
    format: MiniFloatFormat,
    bits: u8,
    first: impl Fn(f64) -> f64,
    second: impl Fn(f64) -> f64,
) -> (u8, bool) {
    let x = format.to_f64(bits);
    let Some(d) = mini_round(format, first(x)) else {
        return (bits, true);
    };
    let Some(r) = mini_round(format, second(format.to_f64(d))) else {
        return (bits, true);
    };
    (r, false)
}

// ---------------------------------------------------------------------------
// Error messages (off the hot path)
// ---------------------------------------------------------------------------

/// Say which step of the transformation fails for `x`.
fn explain(
    direction: Direction,
    data_type: NumericType,
    x: Value,
    off: Value,
    sc: Value,
) -> String {
    match (x, off, sc) {
        (Value::Int(x), Value::Int(off), Value::Int(sc)) => {
            explain_int(direction, data_type, x, off, sc)
        }
        (Value::Float(x), Value::Float(off), Value::Float(sc)) => {
            explain_float(direction, data_type, x, off, sc)
        }
        _ => format!("the result is not representable in {data_type}"),
    }
}

fn explain_int(
    direction: Direction,
    data_type: NumericType,
    x: i128,
    off: i128,
    sc: i128,
) -> String {
    let (lo, hi) = data_type.int_range().expect("integer type");
    let check = |step: &str, v: Option<i128>| -> Result<i128, String> {
        match v {
            Some(v) if (lo..=hi).contains(&v) => Ok(v),
            Some(v) => Err(format!(
                "{step} = {v} is outside the range [{lo}, {hi}] of {data_type}"
            )),
            None => Err(format!("{step} overflows {data_type}")),
        }
    };
    let result = match direction {
        Direction::Encode => check("x - offset", x.checked_sub(off))
            .and_then(|d| check("(x - offset) * scale", d.checked_mul(sc))),
        Direction::Decode => {
            if sc != 0 && x % sc != 0 {
                Err(format!(
                    "x / scale = {x} / {sc} is not an integer (decoding is not exact)"
                ))
            } else {
                check("x / scale", x.checked_div(sc))
                    .and_then(|q| check("x / scale + offset", q.checked_add(off)))
            }
        }
    };
    result
        .err()
        .unwrap_or_else(|| format!("the result is not representable in {data_type}"))
}

/// Round `value` to `data_type` (nearest-even); ±infinity if it overflows,
/// `None` if a small float cannot represent it.
#[allow(clippy::cast_possible_truncation)]
fn round_float(data_type: NumericType, value: f64) -> Option<f64> {
    match data_type {
        NumericType::Float32 => Some(f64::from(value as f32)),
        // Rounded once from the f64 (see `cast::f16_nearest`).
        NumericType::Float16 => Some(crate::kernels::cast::f16_nearest(value).to_f64()),
        NumericType::BFloat16 => Some(crate::kernels::cast::bf16_nearest(value).to_f64()),
        NumericType::Mini(format) => {
            match format.round_from_f64(value, RoundingMode::NearestEven) {
                MiniRound::Value(bits) => Some(format.to_f64(bits)),
                MiniRound::Overflow { negative } => Some(if negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }),
                MiniRound::NotRepresentable => None,
            }
        }
        _ => Some(value),
    }
}

fn explain_float(
    direction: Direction,
    data_type: NumericType,
    x: f64,
    off: f64,
    sc: f64,
) -> String {
    let step = |name: &str, exact: f64| -> Result<f64, String> {
        let shown = Value::Float(exact);
        match round_float(data_type, exact) {
            Some(r) if r.is_finite() || !x.is_finite() => Ok(r),
            _ if exact.is_nan() => Err(format!("{name} is NaN")),
            _ if exact.is_infinite() => Err(format!("{name} overflows {data_type}")),
            Some(_) => Err(format!("{name} = {shown} overflows {data_type}")),
            None => Err(format!(
                "{name} = {shown} is not representable in {data_type}"
            )),
        }
    };
    let result = match direction {
        Direction::Encode => {
            step("x - offset", x - off).and_then(|d| step("(x - offset) * scale", d * sc))
        }
        Direction::Decode => {
            step("x / scale", x / sc).and_then(|q| step("x / scale + offset", q + off))
        }
    };
    result
        .err()
        .unwrap_or_else(|| format!("the result is not representable in {data_type}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::SplitMix64;

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
        for bits in 0..=u16::MAX {
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
        probes.extend(random_bits(1 << 20).map(f32::from_bits));
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
        results.extend(simd::portable(all_ways));
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
    const EDGE_LEN: usize = 3 * BLOCK + 7;

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
                for (off, sc) in pairs {
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

    /// Native-endian bytes to elements.
    fn elements<T: bytemuck::Pod>(bytes: &[u8]) -> Vec<T> {
        bytes
            .chunks_exact(size_of::<T>())
            .map(bytemuck::pod_read_unaligned)
            .collect()
    }

    #[test]
    fn half_types_every_way_match_half() {
        // Every bit pattern, each step computed in f64 and rounded as numpy
        // does: to float32, then to the type (`half`'s `from_f32`). Rounding
        // the f64 result to f32 equals rounding the exact result to f32 (f64
        // has more than 2 * 24 + 2 bits, so double rounding is innocuous for
        // + - * /). Not `from_f64`: `half` may or may not go through f32
        // there, depending on the CPU (F16C), so the reference would depend
        // on the machine.
        let patterns: Vec<u16> = (0..=u16::MAX).collect();
        let bytes: Vec<u8> = bytemuck::cast_slice(&patterns).to_vec();
        for (off, sc) in [(-10.0f32, 0.1f32), (0.5, -3.0), (1.0, 1000.0)] {
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
                                (expected.is_nan() && y.is_nan())
                                    || expected.to_bits() == y.to_bits(),
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
        let all: Vec<i16> = (i16::MIN..=i16::MAX).collect();
        for (off, sc) in [(0i16, 1i16), (-10, 1), (100, 3), (i16::MIN, -1), (7, -2)] {
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
        for (off, sc) in [(10u8, 1u8), (10, 3), (0, 2), (200, 1)] {
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
                    let e =
                        every_way(direction, NumericType::UInt8, &all, &[off], &[sc]).unwrap_err();
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
        assert!(
            decode_bytes_into(NumericType::UInt16, &[1, 2, 3], &mut dst, &[], &[2, 0]).is_err()
        );
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
}
