//! `cast_value` conversions between the real-number types.
//!
//! Four typed paths, one file each: [float -> int](float_to_int),
//! [int -> int](int_to_int), [float -> float](float_to_float) and
//! [int -> float](int_to_float), plus [small-float targets](to_minifloat).
//! Each is generic over the source and target element types and the
//! rounding mode, so [`cast_bytes`] picks one monomorphised loop per chunk
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
mod int_to_float;
mod int_to_int;
#[cfg(test)]
mod tests;
mod to_minifloat;

use std::borrow::Cow;

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
    #[must_use]
    pub fn new(
        source: NumericType,
        target: NumericType,
        rounding: RoundingMode,
        out_of_range: Option<OutOfRangeMode>,
        entries: ScalarMapBytes,
    ) -> Self {
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
        Self {
            source,
            target,
            rounding,
            out_of_range,
            entries: unique,
        }
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
    /// # Errors
    /// Returns the first element that no rule covers.
    ///
    /// # Panics
    /// If the buffer lengths do not hold the same number of elements.
    pub fn cast_bytes(&self, src: &[u8], dst: &mut [u8]) -> Result<(), CastError> {
        assert_eq!(
            src.len() / self.source.size(),
            dst.len() / self.target.size()
        );
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

    /// Cast into a new buffer.
    ///
    /// # Errors
    /// As [`cast_bytes`](Self::cast_bytes).
    pub fn cast_to_vec(&self, src: &[u8]) -> Result<Vec<u8>, CastError> {
        let mut out = vec![0u8; src.len() / self.source.size() * self.target.size()];
        self.cast_bytes(src, &mut out)?;
        Ok(out)
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

    fn dispatch(&self, src: &[u8], dst: &mut [u8]) -> Result<(), usize> {
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
        dst: &mut [u8],
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
fn with_typed_out<D: bytemuck::Pod>(
    out: &mut [u8],
    f: impl FnOnce(&mut [D]) -> Result<(), usize>,
) -> Result<(), usize> {
    if let Ok(d) = bytemuck::try_cast_slice_mut(out) {
        return f(d);
    }
    let mut tmp = vec![D::zeroed(); out.len() / size_of::<D>()];
    let result = f(&mut tmp);
    out.copy_from_slice(bytemuck::cast_slice(&tmp));
    result
}
