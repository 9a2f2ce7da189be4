//! The real-number data types the array->array codecs of this crate work on.
//!
//! zarrs hands codecs a [`DataType`] trait object. The codecs here need to
//! know, once per chunk, which element type sits behind it so that they can
//! pick a monomorphised kernel; [`NumericType`] is that closed set.
//!
//! In-memory layout (what zarrs passes through array->array codecs):
//! - `int2` / `int4` are one `i8` per element, sign-extended;
//! - `uint2` / `uint4` are one `u8` per element;
//! - the 4-, 6- and 8-bit floats are one byte per element holding their bits
//!   in the low bits;
//! - all other types are their native-endian Rust counterpart.

use zarrs::array::DataType;
use zarrs::array::data_type as dt;

use crate::kernels::minifloat::MiniFloatFormat;

/// A real-number data type known to this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // the variant names are the Zarr data type names
pub enum NumericType {
    Int2,
    Int4,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt2,
    UInt4,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    BFloat16,
    Float32,
    Float64,
    /// A float of at most 8 bits, stored as one byte.
    Mini(MiniFloatFormat),
}

impl NumericType {
    /// Classify a zarrs data type, or `None` if it is not a real-number type.
    #[must_use]
    pub fn from_data_type(data_type: &DataType) -> Option<Self> {
        macro_rules! classify {
            ($($marker:ty => $variant:expr),* $(,)?) => {
                $(if data_type.is::<$marker>() { return Some($variant); })*
            };
        }
        classify!(
            dt::Int2DataType => Self::Int2,
            dt::Int4DataType => Self::Int4,
            dt::Int8DataType => Self::Int8,
            dt::Int16DataType => Self::Int16,
            dt::Int32DataType => Self::Int32,
            dt::Int64DataType => Self::Int64,
            dt::UInt2DataType => Self::UInt2,
            dt::UInt4DataType => Self::UInt4,
            dt::UInt8DataType => Self::UInt8,
            dt::UInt16DataType => Self::UInt16,
            dt::UInt32DataType => Self::UInt32,
            dt::UInt64DataType => Self::UInt64,
            dt::Float16DataType => Self::Float16,
            dt::BFloat16DataType => Self::BFloat16,
            dt::Float32DataType => Self::Float32,
            dt::Float64DataType => Self::Float64,
            dt::Float4E2M1FNDataType => Self::Mini(MiniFloatFormat::FLOAT4_E2M1FN),
            dt::Float6E2M3FNDataType => Self::Mini(MiniFloatFormat::FLOAT6_E2M3FN),
            dt::Float6E3M2FNDataType => Self::Mini(MiniFloatFormat::FLOAT6_E3M2FN),
            dt::Float8E3M4DataType => Self::Mini(MiniFloatFormat::FLOAT8_E3M4),
            dt::Float8E4M3DataType => Self::Mini(MiniFloatFormat::FLOAT8_E4M3),
            dt::Float8E4M3B11FNUZDataType => Self::Mini(MiniFloatFormat::FLOAT8_E4M3B11FNUZ),
            dt::Float8E4M3FNUZDataType => Self::Mini(MiniFloatFormat::FLOAT8_E4M3FNUZ),
            dt::Float8E5M2DataType => Self::Mini(MiniFloatFormat::FLOAT8_E5M2),
            dt::Float8E5M2FNUZDataType => Self::Mini(MiniFloatFormat::FLOAT8_E5M2FNUZ),
            dt::Float8E8M0FNUDataType => Self::Mini(MiniFloatFormat::FLOAT8_E8M0FNU),
        );
        None
    }

    /// The Zarr V3 name of the type.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Int2 => "int2",
            Self::Int4 => "int4",
            Self::Int8 => "int8",
            Self::Int16 => "int16",
            Self::Int32 => "int32",
            Self::Int64 => "int64",
            Self::UInt2 => "uint2",
            Self::UInt4 => "uint4",
            Self::UInt8 => "uint8",
            Self::UInt16 => "uint16",
            Self::UInt32 => "uint32",
            Self::UInt64 => "uint64",
            Self::Float16 => "float16",
            Self::BFloat16 => "bfloat16",
            Self::Float32 => "float32",
            Self::Float64 => "float64",
            Self::Mini(format) => format.name,
        }
    }

    /// Bytes per element in memory.
    #[must_use]
    pub fn size(self) -> usize {
        match self {
            Self::Int2
            | Self::Int4
            | Self::Int8
            | Self::UInt2
            | Self::UInt4
            | Self::UInt8
            | Self::Mini(_) => 1,
            Self::Int16 | Self::UInt16 | Self::Float16 | Self::BFloat16 => 2,
            Self::Int32 | Self::UInt32 | Self::Float32 => 4,
            Self::Int64 | Self::UInt64 | Self::Float64 => 8,
        }
    }

    /// `true` for the floating-point types.
    #[must_use]
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Self::Float16 | Self::BFloat16 | Self::Float32 | Self::Float64 | Self::Mini(_)
        )
    }

    /// The inclusive value range of an integer type, `None` for floats.
    #[must_use]
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Self::Int2 => (-2, 1),
            Self::Int4 => (-8, 7),
            Self::Int8 => (i8::MIN.into(), i8::MAX.into()),
            Self::Int16 => (i16::MIN.into(), i16::MAX.into()),
            Self::Int32 => (i32::MIN.into(), i32::MAX.into()),
            Self::Int64 => (i64::MIN.into(), i64::MAX.into()),
            Self::UInt2 => (0, 3),
            Self::UInt4 => (0, 15),
            Self::UInt8 => (0, u8::MAX.into()),
            Self::UInt16 => (0, u16::MAX.into()),
            Self::UInt32 => (0, u32::MAX.into()),
            Self::UInt64 => (0, u64::MAX.into()),
            _ => return None,
        })
    }

    /// The number of value bits of an integer type (`N` in "modulo 2^N").
    #[must_use]
    pub fn int_bits(self) -> Option<u32> {
        Some(match self {
            Self::Int2 | Self::UInt2 => 2,
            Self::Int4 | Self::UInt4 => 4,
            Self::Int8 | Self::UInt8 => 8,
            Self::Int16 | Self::UInt16 => 16,
            Self::Int32 | Self::UInt32 => 32,
            Self::Int64 | Self::UInt64 => 64,
            _ => return None,
        })
    }

    /// Decode one element from native-endian bytes into an exact wide value.
    ///
    /// Used off the hot path only (fill values, scalar maps, error messages).
    ///
    /// # Panics
    /// If `bytes` is shorter than one element ([`size`](Self::size)).
    #[must_use]
    pub fn read_value(self, bytes: &[u8]) -> Value {
        fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
            let mut a = [0u8; N];
            a.copy_from_slice(&b[..N]);
            a
        }
        match self {
            Self::Int2 | Self::Int4 | Self::Int8 => {
                Value::Int(i8::from_ne_bytes(arr(bytes)).into())
            }
            Self::Int16 => Value::Int(i16::from_ne_bytes(arr(bytes)).into()),
            Self::Int32 => Value::Int(i32::from_ne_bytes(arr(bytes)).into()),
            Self::Int64 => Value::Int(i64::from_ne_bytes(arr(bytes)).into()),
            Self::UInt2 | Self::UInt4 | Self::UInt8 => Value::Int(bytes[0].into()),
            Self::UInt16 => Value::Int(u16::from_ne_bytes(arr(bytes)).into()),
            Self::UInt32 => Value::Int(u32::from_ne_bytes(arr(bytes)).into()),
            Self::UInt64 => Value::Int(u64::from_ne_bytes(arr(bytes)).into()),
            Self::Float16 => Value::Float(half::f16::from_ne_bytes(arr(bytes)).to_f64()),
            Self::BFloat16 => Value::Float(half::bf16::from_ne_bytes(arr(bytes)).to_f64()),
            Self::Float32 => Value::Float(f32::from_ne_bytes(arr(bytes)).into()),
            Self::Float64 => Value::Float(f64::from_ne_bytes(arr(bytes))),
            Self::Mini(format) => Value::Float(format.to_f64(bytes[0])),
        }
    }
}

impl std::fmt::Display for NumericType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An element value widened without loss: every integer type fits `i128`,
/// every float type fits `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer value.
    Int(i128),
    /// A floating-point value (NaN payloads are not kept).
    Float(f64),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Int(v) => write!(f, "{v}"),
            Self::Float(v) if v.is_nan() => f.write_str("NaN"),
            Self::Float(v) if v.is_infinite() => {
                f.write_str(if *v > 0.0 { "Infinity" } else { "-Infinity" })
            }
            Self::Float(v) => write!(f, "{v:?}"),
        }
    }
}
