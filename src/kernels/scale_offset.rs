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
//! Each entry point picks one monomorphised kernel per call. Chunks are
//! processed in blocks through a stack buffer with a branch-free pass that
//! accumulates an error flag; only when the flag is set is the block scanned
//! again for the first offending element (whose input is still intact, since a
//! block is written back only when it is error-free). `float16` is rounded with
//! `half`'s slice conversions (hardware instructions where available),
//! `bfloat16` with branch-free bit arithmetic in `f32` registers. Small floats
//! and integer division of one-byte types use a 256-entry lookup table for
//! large chunks. An offset of `+0` with a scale of
//! `1` is a no-op and skips the pass entirely.

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

use crate::kernels::minifloat::{MiniFloatFormat, MiniRound};
use crate::kernels::rounding::RoundingMode;
use crate::numeric::{NumericType, Value};

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

/// The direction of the transformation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
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

/// `true` if `offset` / `scale` (as for [`encode_bytes`]) make the codec the
/// identity: an offset of integer `0` or `+0.0` (or empty) and a scale of `1`
/// (or empty).
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

fn apply_bytes(
    direction: Direction,
    data_type: NumericType,
    bytes: &mut [u8],
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
    if !bytes.len().is_multiple_of(size) {
        return Err(ScaleOffsetError::DataLength {
            len: bytes.len(),
            data_type,
        });
    }
    if is_identity(data_type, offset, scale) {
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
    if bytes.is_empty() {
        return Ok(());
    }
    let offset = (!offset.is_empty()).then_some(offset);
    let offset_value = match offset {
        Some(offset) => data_type.read_value(offset),
        None if data_type.is_float() => Value::Float(0.0),
        None => Value::Int(0),
    };

    let result = dispatch(direction, data_type, bytes, offset, scale);
    result.map_err(|index| {
        // The block holding the offending element was not written back, so its
        // input is still in `bytes`.
        let x = data_type.read_value(&bytes[index * size..(index + 1) * size]);
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
fn dispatch(
    direction: Direction,
    data_type: NumericType,
    bytes: &mut [u8],
    offset_or_zero: Option<&[u8]>,
    scale: &[u8],
) -> Result<(), usize> {
    use NumericType as N;
    let enc = direction == Direction::Encode;
    // All-zero bits are zero in every type except `float8_e8m0fnu`, which is
    // handled through `offset_or_zero` below.
    let offset = offset_or_zero.unwrap_or(&[0u8; 8][..data_type.size()]);
    match data_type {
        N::Int2 | N::Int4 | N::Int8 => {
            let (lo, hi) = narrow_range(data_type);
            let (lo, hi) = (lo as i8, hi as i8);
            let (off, sc) = (offset[0] as i8, scale[0] as i8);
            if enc {
                drive(bytes, |b| {
                    let (r, bad) = i8::enc(b as i8, off, sc, lo, hi);
                    (r as u8, bad)
                })
            } else if sc == 1 {
                drive(bytes, |b| {
                    let (r, bad) = i8::dec_add(b as i8, off, lo, hi);
                    (r as u8, bad)
                })
            } else {
                // Division does not vectorise: a table is faster.
                byte_kernel(bytes, |b| {
                    let (r, bad) = i8::dec(b as i8, off, sc, lo, hi);
                    (r as u8, bad)
                })
            }
        }
        N::UInt2 | N::UInt4 | N::UInt8 => {
            let (lo, hi) = narrow_range(data_type);
            let (lo, hi) = (lo as u8, hi as u8);
            let (off, sc) = (offset[0], scale[0]);
            if enc {
                drive(bytes, |b| u8::enc(b, off, sc, lo, hi))
            } else if sc == 1 {
                drive(bytes, |b| u8::dec_add(b, off, lo, hi))
            } else {
                byte_kernel(bytes, |b| u8::dec(b, off, sc, lo, hi))
            }
        }
        N::Int16 => int_kernel::<i16>(enc, bytes, offset, scale),
        N::Int32 => int_kernel::<i32>(enc, bytes, offset, scale),
        N::Int64 => int_kernel::<i64>(enc, bytes, offset, scale),
        N::UInt16 => int_kernel::<u16>(enc, bytes, offset, scale),
        N::UInt32 => int_kernel::<u32>(enc, bytes, offset, scale),
        N::UInt64 => int_kernel::<u64>(enc, bytes, offset, scale),
        N::Float32 => float_kernel::<f32>(enc, bytes, offset, scale),
        N::Float64 => float_kernel::<f64>(enc, bytes, offset, scale),
        N::Float16 => half_kernel::<f16>(enc, bytes, offset, scale),
        N::BFloat16 => half_kernel::<bf16>(enc, bytes, offset, scale),
        N::Mini(format) => {
            let off = offset_or_zero.map_or(0.0, |offset| format.to_f64(offset[0]));
            let sc = format.to_f64(scale[0]);
            if enc {
                byte_kernel(bytes, |b| mini_step(format, b, |x| x - off, |d| d * sc))
            } else {
                byte_kernel(bytes, |b| mini_step(format, b, |x| x / sc, |q| q + off))
            }
        }
    }
}

/// The range of a one-byte integer type, as `i16` (fits both `i8` and `u8`).
#[allow(clippy::cast_possible_truncation)]
fn narrow_range(data_type: NumericType) -> (i16, i16) {
    let (lo, hi) = data_type.int_range().expect("integer type");
    (lo as i16, hi as i16)
}

/// View `bytes` as `[T]` (copying through an aligned buffer if unaligned) and
/// run `f` over it.
fn with_typed<T: bytemuck::Pod>(
    bytes: &mut [u8],
    f: impl FnOnce(&mut [T]) -> Result<(), usize>,
) -> Result<(), usize> {
    if let Ok(data) = bytemuck::try_cast_slice_mut::<u8, T>(bytes) {
        return f(data);
    }
    // Unaligned (the length was checked by the caller).
    let mut data: Vec<T> = bytes
        .chunks_exact(size_of::<T>())
        .map(bytemuck::pod_read_unaligned)
        .collect();
    f(&mut data)?;
    bytes.copy_from_slice(bytemuck::cast_slice(&data));
    Ok(())
}

fn read<T: bytemuck::Pod>(bytes: &[u8]) -> T {
    bytemuck::pod_read_unaligned(bytes)
}

// ---------------------------------------------------------------------------
// The block driver
// ---------------------------------------------------------------------------

/// Elements per block of the stack buffer.
const BLOCK: usize = 512;

/// Map every element of `data` through `f` (`(result, bad)`), block by block.
///
/// A block is written back only if none of its elements is bad; otherwise the
/// index of the first bad element is returned and the block is left intact.
#[inline(always)]
fn drive<T: bytemuck::Pod, F: Fn(T) -> (T, bool)>(data: &mut [T], f: F) -> Result<(), usize> {
    let mut buffer = [T::zeroed(); BLOCK];
    for (block_index, block) in data.chunks_mut(BLOCK).enumerate() {
        let out = &mut buffer[..block.len()];
        let mut bad = false;
        for (o, &x) in out.iter_mut().zip(block.iter()) {
            let (r, b) = f(x);
            *o = r;
            bad |= b;
        }
        if bad {
            let i = block.iter().position(|&x| f(x).1).unwrap_or(0);
            return Err(block_index * BLOCK + i);
        }
        block.copy_from_slice(out);
    }
    Ok(())
}

/// One-byte types whose arithmetic does not vectorise (division, small
/// floats): through a 256-entry lookup table for large chunks.
#[inline(always)]
fn byte_kernel<F: Fn(u8) -> (u8, bool)>(bytes: &mut [u8], f: F) -> Result<(), usize> {
    if bytes.len() < 256 {
        return drive(bytes, f);
    }
    let mut values = [0u8; 256];
    let mut bad = [false; 256];
    for b in 0..=255u8 {
        (values[usize::from(b)], bad[usize::from(b)]) = f(b);
    }
    drive(bytes, |b| (values[usize::from(b)], bad[usize::from(b)]))
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
    bytes: &mut [u8],
    offset: &[u8],
    scale: &[u8],
) -> Result<(), usize> {
    let (off, sc): (T, T) = (read(offset), read(scale));
    let (lo, hi) = (T::MIN, T::MAX);
    with_typed::<T>(bytes, |data| {
        if enc {
            drive(data, |x| T::enc(x, off, sc, lo, hi))
        } else if sc == T::ONE {
            drive(data, |x| T::dec_add(x, off, lo, hi))
        } else {
            drive(data, |x| T::dec(x, off, sc, lo, hi))
        }
    })
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

fn float_kernel<T: FloatArith>(
    enc: bool,
    bytes: &mut [u8],
    offset: &[u8],
    scale: &[u8],
) -> Result<(), usize> {
    let (off, sc): (T, T) = (read(offset), read(scale));
    with_typed::<T>(bytes, |data| {
        if enc {
            // IEEE arithmetic: overflow gives ±infinity, as in zarr-python.
            drive(data, |x| ((x - off) * sc, false))
        } else {
            drive(data, |x| (x / sc + off, false))
        }
    })
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
    bytes: &mut [u8],
    offset: &[u8],
    scale: &[u8],
) -> Result<(), usize> {
    let mut pair = [0f32; 2];
    H::widen(&[read::<H>(offset), read::<H>(scale)], &mut pair);
    let [off, sc] = pair;
    with_typed::<H>(bytes, |data| {
        if enc {
            half_blocks::<H, true>(data, off, sc)
        } else {
            half_blocks::<H, false>(data, off, sc)
        }
    })
}

/// `float16` / `bfloat16` through `f32` blocks, rounding to `H` after each
/// operation. `f32` has more than twice the precision of either type, so an
/// `f32` operation followed by rounding to `H` is the correctly rounded `H`
/// operation (and what numpy computes for `float16`).
#[inline(always)]
fn half_blocks<H: HalfArith, const ENC: bool>(
    data: &mut [H],
    off: f32,
    sc: f32,
) -> Result<(), usize> {
    let mut xs = [0f32; BLOCK];
    let mut ts = [0f32; BLOCK];
    let mut out = [H::zeroed(); BLOCK];
    for block in data.chunks_mut(BLOCK) {
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
        block.copy_from_slice(out);
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
        NumericType::Float16 => Some(f16::from_f64(value).to_f64()),
        NumericType::BFloat16 => Some(bf16::from_f64(value).to_f64()),
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

    /// splitmix64, for reproducible random bit patterns.
    fn random_bits(n: usize) -> impl Iterator<Item = u32> {
        let mut state = 0x1234_5678_9abc_def0u64;
        (0..n).map(move |_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u32
        })
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
