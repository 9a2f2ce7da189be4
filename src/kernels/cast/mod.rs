//! `cast_value` conversions between the real-number types.
//!
//! Four typed paths, one private file each: float -> int (`float_to_int.rs`),
//! int -> int (`int_to_int.rs`), float -> float (`float_to_float.rs`) and
//! int -> float (`int_to_float.rs`), plus small-float targets
//! (`to_minifloat.rs`). Each is generic over the source and target element
//! types and the rounding mode, so [`CastPlan::cast_bytes`] picks one
//! monomorphised loop per chunk
//! and nothing is dispatched per element.
//!
//! The order of the spec is kept for every element: the `scalar_map` first,
//! then exact values, then rounding (in the source precision) followed by the
//! `out_of_range` rule; anything left is an error.

#[cfg(test)]
mod dispatch_tests;
mod driver;
mod elements;
mod float_to_float;
mod float_to_int;
mod float_to_small_int;
mod int_to_float;
mod int_to_int;
#[cfg(test)]
mod tests;
mod to_minifloat;

use std::borrow::Cow;
use std::mem::MaybeUninit;

use half::{bf16, f16};

pub use crate::kernels::rounding::{OutOfRangeMode, RoundingMode};
use crate::numeric::{NumericType, Value};
use driver::Entry;

/// The range and width of an integer target (sub-byte types included).
#[derive(Clone, Copy, Debug)]
pub(crate) struct IntTarget {
    pub lo: i128,
    pub hi: i128,
    pub bits: u32,
    pub signed: bool,
}

impl IntTarget {
    fn of(data_type: NumericType) -> Self {
        let (lo, hi) = data_type.int_range().expect("integer type");
        Self {
            lo,
            hi,
            bits: data_type.int_bits().expect("integer type"),
            signed: lo < 0,
        }
    }
}

/// Run `$body` with `$mode` bound to the const-generic form of `$rounding`.
macro_rules! with_rounding {
    ($rounding:expr, $mode:ident => $body:expr) => {{
        use $crate::kernels::cast::elements as e;
        use $crate::kernels::rounding::RoundingMode as R;
        match $rounding {
            R::NearestEven => {
                const $mode: u8 = e::NEAREST_EVEN;
                $body
            }
            R::TowardsZero => {
                const $mode: u8 = e::TOWARDS_ZERO;
                $body
            }
            R::TowardsPositive => {
                const $mode: u8 = e::TOWARDS_POSITIVE;
                $body
            }
            R::TowardsNegative => {
                const $mode: u8 = e::TOWARDS_NEGATIVE;
                $body
            }
            R::NearestAway => {
                const $mode: u8 = e::NEAREST_AWAY;
                $body
            }
        }
    }};
}
pub(crate) use with_rounding;

/// The float16 nearest to `x` (ties to even), rounded once.
///
/// `half::f16::from_f64` may go through float32 (its F16C path) and round
/// twice; configuration values and fill values must round as numpy does.
pub(crate) fn f16_nearest(x: f64) -> f16 {
    <f16 as elements::FloatElem>::from_f64_nearest(x)
}

/// The bfloat16 nearest to `x` (ties to even), rounded once (see
/// [`f16_nearest`]; `half::bf16::from_f64` drops the low bits of a float32).
pub(crate) fn bf16_nearest(x: f64) -> bf16 {
    <bf16 as elements::FloatElem>::from_f64_nearest(x)
}

/// Why an element could not be cast.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastFailure {
    /// NaN or ±infinity into a type without them, and no `scalar_map` entry.
    NotFinite,
    /// Outside the target's range, and no `out_of_range` rule that applies.
    OutOfRange,
}

/// A value that the cast rules do not cover.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("element {index} ({value}) of {source_type} {}", match .failure {
    CastFailure::NotFinite => format!("has no {target_type} representation and no scalar_map entry"),
    CastFailure::OutOfRange => format!("is out of the range of {target_type}"),
})]
pub struct CastError {
    /// Index of the element in the chunk (C order).
    pub index: usize,
    /// The element's value.
    pub value: Value,
    /// The source data type.
    pub source_type: NumericType,
    /// The target data type.
    pub target_type: NumericType,
    /// What went wrong.
    pub failure: CastFailure,
}

/// `scalar_map` entries as `(input, output)` native-endian element bytes.
pub type ScalarMapBytes = Vec<(Vec<u8>, Vec<u8>)>;

/// A `scalar_map` entry that [`CastPlan::new`] refuses.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CastPlanError {
    /// A key or value is not exactly one element of its type.
    #[error(
        "scalar_map entry {index}: the {side} has {len} bytes, expected one {data_type} element"
    )]
    EntryLength {
        /// The entry's position in the list given.
        index: usize,
        /// `"key"` or `"value"`.
        side: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The type it should be an element of.
        data_type: NumericType,
    },
    /// A value outside the range of an integer type narrower than its
    /// storage (`int2`, `int4`, `uint2`, `uint4`).
    #[error("scalar_map entry {index}: {value} is not a {data_type} value")]
    ValueOutOfRange {
        /// The entry's position in the list given.
        index: usize,
        /// The value.
        value: Value,
        /// The target type.
        data_type: NumericType,
    },
}

/// One direction of a `cast_value` codec, ready to run over chunks.
#[derive(Clone, Debug)]
pub struct CastPlan {
    source: NumericType,
    target: NumericType,
    rounding: RoundingMode,
    out_of_range: Option<OutOfRangeMode>,
    /// `scalar_map` entries as native-endian element bytes, first occurrence
    /// of each key only.
    entries: ScalarMapBytes,
}

impl CastPlan {
    /// A plan casting `source` elements to `target`.
    ///
    /// `entries` are `(source value, target value)` pairs as native-endian
    /// element bytes; a repeated key keeps its first value.
    ///
    /// # Errors
    /// If a key or value is not one element of its type, or a value lies
    /// outside the range of a sub-byte integer target.
    pub fn new(
        source: NumericType,
        target: NumericType,
        rounding: RoundingMode,
        out_of_range: Option<OutOfRangeMode>,
        entries: ScalarMapBytes,
    ) -> Result<Self, CastPlanError> {
        for (index, (key, value)) in entries.iter().enumerate() {
            for (side, bytes, data_type) in [("key", key, source), ("value", value, target)] {
                if bytes.len() != data_type.size() {
                    return Err(CastPlanError::EntryLength {
                        index,
                        side,
                        len: bytes.len(),
                        data_type,
                    });
                }
            }
            if let (Some((lo, hi)), Value::Int(v)) = (target.int_range(), target.read_value(value))
                && !(lo..=hi).contains(&v)
            {
                return Err(CastPlanError::ValueOutOfRange {
                    index,
                    value: Value::Int(v),
                    data_type: target,
                });
            }
        }
        let mut unique: ScalarMapBytes = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let k = source.read_value(&key);
            if !unique
                .iter()
                .any(|(u, _)| same_key(source.read_value(u), k))
            {
                unique.push((key, value));
            }
        }
        Ok(Self {
            source,
            target,
            rounding,
            out_of_range,
            entries: unique,
        })
    }

    /// The source type.
    #[must_use]
    pub fn source(&self) -> NumericType {
        self.source
    }

    /// The target type.
    #[must_use]
    pub fn target(&self) -> NumericType {
        self.target
    }

    /// Cast `src` (elements of the source type) into `dst` (as many elements
    /// of the target type).
    ///
    /// Trailing bytes that do not make up a whole element are ignored, in
    /// `src` and in `dst`.
    ///
    /// # Errors
    /// Returns the first element that no rule covers. The contents of `dst`
    /// are then unspecified.
    ///
    /// # Panics
    /// If the buffer lengths do not hold the same number of elements.
    pub fn cast_bytes(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CastError> {
        assert_eq!(
            src.len() / self.source.size(),
            dst.len() / self.target.size()
        );
        // SAFETY: `MaybeUninit<u8>` has the layout of `u8`, so this is the same
        // memory under the same exclusive borrow. Viewing initialised bytes
        // as possibly uninitialised is sound as long as nothing writes an
        // uninitialised byte through the view (the caller would then read it
        // as `u8`): `cast_into` only ever writes initialised bytes.
        let dst = unsafe { &mut *(std::ptr::from_mut::<[u8]>(dst) as *mut [MaybeUninit<u8>]) };
        self.cast_into(src, dst)
    }

    /// Cast into a new buffer.
    ///
    /// Trailing bytes of `src` that do not make up a whole element are
    /// ignored.
    ///
    /// # Errors
    /// As [`cast_bytes`](Self::cast_bytes).
    pub fn cast_to_vec(&self, src: &[u8]) -> Result<Vec<u8>, CastError> {
        // Overflow needs a source of over `usize::MAX / 8` bytes, which no
        // allocation can hold; `with_capacity` would fail on it just the same.
        let len = (src.len() / self.source.size())
            .checked_mul(self.target.size())
            .expect("capacity overflow");
        // Not zeroed: the cast writes every byte, and zeroing a large output
        // first would be a full extra pass over it.
        let mut out = Vec::with_capacity(len);
        self.cast_into(src, &mut out.spare_capacity_mut()[..len])?;
        // SAFETY: `len <= capacity` (reserved above). `cast_into` returned
        // `Ok`, so it wrote all `len / target size` whole elements of the
        // `len`-byte slice it was given, i.e. bytes `0..len`, with
        // initialised values (see `cast_into`).
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// Cast the first `n = dst.len() / target size` elements of `src` into
    /// `dst`.
    ///
    /// Only initialised bytes are ever written into `dst`. On `Ok`, bytes
    /// `0..n * target size` of `dst` have all been written.
    ///
    /// # Errors
    /// As [`cast_bytes`](Self::cast_bytes); `dst` is then partly written.
    ///
    /// # Panics
    /// If `src` holds fewer than `n` elements.
    pub(crate) fn cast_into(
        &self,
        src: &[u8],
        dst: &mut [MaybeUninit<u8>],
    ) -> Result<(), CastError> {
        let n = dst.len() / self.target.size();
        // Exactly `n` elements on both sides, so that the kernels, which
        // write one output per input, cover all of `dst`.
        let src = &src[..n * self.source.size()];
        let dst = &mut dst[..n * self.target.size()];
        self.dispatch(src, dst).map_err(|index| {
            let value = self.source.read_value(&src[index * self.source.size()..]);
            let failure = match value {
                Value::Float(v) if !v.is_finite() => CastFailure::NotFinite,
                _ => CastFailure::OutOfRange,
            };
            CastError {
                index,
                value,
                source_type: self.source,
                target_type: self.target,
                failure,
            }
        })
    }

    fn typed_entries<S: bytemuck::Pod, D: bytemuck::Pod>(&self) -> Vec<Entry<S, D>> {
        self.entries
            .iter()
            .map(|(k, v)| Entry {
                key: bytemuck::pod_read_unaligned(k),
                value: bytemuck::pod_read_unaligned(v),
            })
            .collect()
    }

    /// Cast `src` into `dst`, which hold the same number of elements.
    ///
    /// Only initialised bytes are ever written into `dst`; on `Ok` all of it
    /// has been written.
    fn dispatch(&self, src: &[u8], dst: &mut [MaybeUninit<u8>]) -> Result<(), usize> {
        use NumericType as T;
        let (rounding, oor) = (self.rounding, self.out_of_range);
        if let T::Mini(format) = self.source {
            // Small floats widen exactly to f32; run the f32 path on that.
            let table = format.decode_table();
            let wide: Vec<f32> = src.iter().map(|b| table[usize::from(*b)]).collect();
            let plan = Self {
                source: T::Float32,
                entries: self
                    .entries
                    .iter()
                    .map(|(k, v)| (table[usize::from(k[0])].to_ne_bytes().to_vec(), v.clone()))
                    .collect(),
                ..self.clone()
            };
            return plan.dispatch(bytemuck::cast_slice(&wide), dst);
        }
        if let T::Mini(format) = self.target {
            return self.dispatch_to_mini(src, dst, format);
        }
        macro_rules! go {
            ($f:ident, $S:ty, $D:ty $(, $arg:expr)*) => {{
                let s = typed::<$S>(src);
                let entries = self.typed_entries::<$S, $D>();
                with_typed_out::<$D>(dst, |d| $f::$f::<$S, $D>(&s, d, &entries $(, $arg)*))
            }};
        }
        macro_rules! int_target {
            ($f:ident, $S:ty, $($arg:expr),*) => {{
                let target = IntTarget::of(self.target);
                match self.target {
                    T::Int2 | T::Int4 | T::Int8 => go!($f, $S, i8, $($arg,)* target),
                    T::Int16 => go!($f, $S, i16, $($arg,)* target),
                    T::Int32 => go!($f, $S, i32, $($arg,)* target),
                    T::Int64 => go!($f, $S, i64, $($arg,)* target),
                    T::UInt2 | T::UInt4 | T::UInt8 => go!($f, $S, u8, $($arg,)* target),
                    T::UInt16 => go!($f, $S, u16, $($arg,)* target),
                    T::UInt32 => go!($f, $S, u32, $($arg,)* target),
                    T::UInt64 => go!($f, $S, u64, $($arg,)* target),
                    _ => unreachable!(),
                }
            }};
        }
        macro_rules! float_target {
            ($f:ident, $S:ty, $($arg:expr),*) => {
                match self.target {
                    T::Float16 => go!($f, $S, f16, $($arg),*),
                    T::BFloat16 => go!($f, $S, bf16, $($arg),*),
                    T::Float32 => go!($f, $S, f32, $($arg),*),
                    T::Float64 => go!($f, $S, f64, $($arg),*),
                    _ => unreachable!(),
                }
            };
        }
        macro_rules! from_source {
            ($S:ty, $to_int:ident, $to_float:ident, [$($int_arg:expr),*], [$($float_arg:expr),*]) => {
                if self.target.is_float() {
                    float_target!($to_float, $S, $($float_arg),*)
                } else {
                    int_target!($to_int, $S, $($int_arg),*)
                }
            };
        }
        match self.source {
            T::Float16 => from_source!(
                f16,
                float_to_int,
                float_to_float,
                [rounding, oor],
                [rounding, oor]
            ),
            T::BFloat16 => from_source!(
                bf16,
                float_to_int,
                float_to_float,
                [rounding, oor],
                [rounding, oor]
            ),
            T::Float32 => from_source!(
                f32,
                float_to_int,
                float_to_float,
                [rounding, oor],
                [rounding, oor]
            ),
            T::Float64 => from_source!(
                f64,
                float_to_int,
                float_to_float,
                [rounding, oor],
                [rounding, oor]
            ),
            T::Int2 | T::Int4 | T::Int8 => {
                from_source!(i8, int_to_int, int_to_float, [oor], [rounding, oor])
            }
            T::Int16 => from_source!(i16, int_to_int, int_to_float, [oor], [rounding, oor]),
            T::Int32 => from_source!(i32, int_to_int, int_to_float, [oor], [rounding, oor]),
            T::Int64 => from_source!(i64, int_to_int, int_to_float, [oor], [rounding, oor]),
            T::UInt2 | T::UInt4 | T::UInt8 => {
                from_source!(u8, int_to_int, int_to_float, [oor], [rounding, oor])
            }
            T::UInt16 => from_source!(u16, int_to_int, int_to_float, [oor], [rounding, oor]),
            T::UInt32 => from_source!(u32, int_to_int, int_to_float, [oor], [rounding, oor]),
            T::UInt64 => from_source!(u64, int_to_int, int_to_float, [oor], [rounding, oor]),
            T::Mini(_) => unreachable!("handled above"),
        }
    }

    fn dispatch_to_mini(
        &self,
        src: &[u8],
        dst: &mut [MaybeUninit<u8>],
        format: crate::kernels::minifloat::MiniFloatFormat,
    ) -> Result<(), usize> {
        use NumericType as T;
        let (rounding, oor) = (self.rounding, self.out_of_range);
        macro_rules! go {
            ($f:ident, $S:ty) => {{
                let s = typed::<$S>(src);
                let entries = self.typed_entries::<$S, u8>();
                to_minifloat::$f::<$S>(&s, dst, &entries, format, rounding, oor)
            }};
        }
        match self.source {
            T::Float16 => go!(from_float, f16),
            T::BFloat16 => go!(from_float, bf16),
            T::Float32 => go!(from_float, f32),
            T::Float64 => go!(from_float, f64),
            T::Int2 | T::Int4 | T::Int8 => go!(from_int, i8),
            T::Int16 => go!(from_int, i16),
            T::Int32 => go!(from_int, i32),
            T::Int64 => go!(from_int, i64),
            T::UInt2 | T::UInt4 | T::UInt8 => go!(from_int, u8),
            T::UInt16 => go!(from_int, u16),
            T::UInt32 => go!(from_int, u32),
            T::UInt64 => go!(from_int, u64),
            T::Mini(_) => unreachable!("small float sources are widened first"),
        }
    }
}

/// `scalar_map` keys are the same if they are numerically equal or both NaN.
fn same_key(a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

/// View native-endian bytes as elements, copying only if misaligned.
fn typed<S: bytemuck::Pod>(bytes: &[u8]) -> Cow<'_, [S]> {
    match bytemuck::try_cast_slice(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(bytemuck::pod_collect_to_vec(bytes)),
    }
}

/// Run `f` on `out` viewed as elements, through a copy only if misaligned.
///
/// `f` must write only initialised values; then so does this, and on `Ok`
/// all whole elements of `out` have been written if `f` wrote all of its
/// slice. On `Err` a misaligned `out` is left untouched.
fn with_typed_out<D: bytemuck::Pod>(
    out: &mut [MaybeUninit<u8>],
    f: impl FnOnce(&mut [MaybeUninit<D>]) -> Result<(), usize>,
) -> Result<(), usize> {
    let count = out.len() / size_of::<D>();
    let out = &mut out[..count * size_of::<D>()];
    let ptr = out.as_mut_ptr().cast::<MaybeUninit<D>>();
    if ptr.is_aligned() {
        // SAFETY: `ptr` is aligned for `D` (checked) and points to
        // `count * size_of::<D>()` bytes, all within `out`, which we borrow
        // exclusively for the lifetime of the new slice. `MaybeUninit<D>`
        // has the size and alignment of `D` and is valid for any bytes,
        // initialised or not. A `D: Pod` has no padding, so every `D` that
        // `f` writes leaves all of its bytes initialised in `out`.
        let typed = unsafe { std::slice::from_raw_parts_mut(ptr, count) };
        return f(typed);
    }
    let mut tmp = Box::<[D]>::new_uninit_slice(count);
    f(&mut tmp)?;
    // SAFETY: `tmp` is one allocation of `count` `MaybeUninit<D>`, i.e.
    // `count * size_of::<D>() == out.len()` bytes, borrowed shared here;
    // `MaybeUninit<u8>` has alignment 1 and is valid for any byte. `f`
    // returned `Ok`, so (by this function's contract) it wrote every element
    // of `tmp`, and as `D: Pod` has no padding, every byte copied into
    // `out` is initialised.
    let bytes =
        unsafe { std::slice::from_raw_parts(tmp.as_ptr().cast::<MaybeUninit<u8>>(), out.len()) };
    out.copy_from_slice(bytes);
    Ok(())
}
