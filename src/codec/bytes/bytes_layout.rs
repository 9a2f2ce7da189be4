//! Which kernel the `bytes` codec runs for a data type and byte order.

use std::any::TypeId;
use std::borrow::Cow;

use zarrs::array::codec::BytesDataTypeExt;
use zarrs::array::codec::api::CodecError;
use zarrs::array::data_type as dt;
use zarrs::array::{DataType, Endianness};

use super::BYTES;
use crate::codec::data_type_name;
use crate::kernels::bytes::{
    ElementLayout, LowBits, canonicalize_cow, first_invalid_bool, swap_cow,
};

/// What the codec does to a chunk of one data type with one `endian`,
/// worked out once per chunk (or per partial decoder).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Plan {
    /// Bytes per element.
    pub size: usize,
    /// The transformation, identical for encode and decode.
    pub step: Step,
}

/// The transformation of a chunk; every one is its own inverse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Nothing: the stored bytes are the in-memory bytes.
    Identity,
    /// Check that every byte is `0x00` or `0x01`.
    Bool,
    /// Canonicalise the upper bits of sub-byte values.
    LowBits(LowBits),
    /// Reverse the bytes of each component of this size.
    Swap(usize),
    /// A data type this crate does not know, which implements zarrs'
    /// `BytesDataTypeTraits` itself (e.g. from another plugin crate).
    DataType,
}

/// The direction of a transformation, for error messages and for the
/// [`Step::DataType`] hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Direction {
    Encode,
    Decode,
}

impl Direction {
    fn verb(self) -> &'static str {
        match self {
            Self::Encode => "encoding",
            Self::Decode => "decoding",
        }
    }
}

/// The layout of the data types zarrs 0.23 has, `None` for others.
///
/// One dynamic call for the type's identity, then plain comparisons: this
/// runs for every chunk, and a chain of `DataType::is` calls (one dynamic
/// call each) would cost more than passing a native-order chunk through.
pub(super) fn known_layout(data_type: &DataType) -> Option<ElementLayout> {
    use ElementLayout::{Bool, Components, Verbatim};
    let id = data_type.as_any().type_id();
    macro_rules! table {
        ($($($marker:ident)|+ => $layout:expr),* $(,)?) => {
            $(if $(id == TypeId::of::<dt::$marker>())||+ { return Some($layout); })*
        };
    }
    table!(
        BoolDataType => Bool,
        Int2DataType => ElementLayout::LowBits(LowBits::INT2),
        Int4DataType => ElementLayout::LowBits(LowBits::INT4),
        UInt2DataType => ElementLayout::LowBits(LowBits::UINT2),
        UInt4DataType => ElementLayout::LowBits(LowBits::UINT4),
        Float4E2M1FNDataType | ComplexFloat4E2M1FNDataType => ElementLayout::LowBits(LowBits::FLOAT4),
        Float6E2M3FNDataType | Float6E3M2FNDataType
            | ComplexFloat6E2M3FNDataType | ComplexFloat6E3M2FNDataType
            => ElementLayout::LowBits(LowBits::FLOAT6),
        Int8DataType | UInt8DataType | RawBitsDataType
            | Float8E3M4DataType | Float8E4M3DataType | Float8E4M3B11FNUZDataType
            | Float8E4M3FNUZDataType | Float8E5M2DataType | Float8E5M2FNUZDataType
            | Float8E8M0FNUDataType
            | ComplexFloat8E3M4DataType | ComplexFloat8E4M3DataType
            | ComplexFloat8E4M3B11FNUZDataType | ComplexFloat8E4M3FNUZDataType
            | ComplexFloat8E5M2DataType | ComplexFloat8E5M2FNUZDataType
            | ComplexFloat8E8M0FNUDataType
            => Verbatim,
        Int16DataType | UInt16DataType | Float16DataType | BFloat16DataType
            | ComplexBFloat16DataType | ComplexFloat16DataType
            => Components(2),
        Int32DataType | UInt32DataType | Float32DataType
            | Complex64DataType | ComplexFloat32DataType
            // UTF-32 code points.
            | FixedLengthUTF32DataType
            => Components(4),
        Int64DataType | UInt64DataType | Float64DataType
            | Complex128DataType | ComplexFloat64DataType
            | NumpyDateTime64DataType | NumpyTimeDelta64DataType
            => Components(8),
    );
    None
}

impl Plan {
    /// The plan for `data_type` stored with `endian`.
    ///
    /// # Errors
    /// If the data type is variable-sized, optional, or unknown without its
    /// own `bytes` support, or if it has multi-byte elements and `endian` is
    /// `None`.
    pub(super) fn new(
        data_type: &DataType,
        endian: Option<Endianness>,
    ) -> Result<Self, CodecError> {
        let refuse = |reason: &str| {
            CodecError::Other(format!(
                "{BYTES}: data type {} is not supported: {reason}",
                data_type_name(data_type)
            ))
        };
        let unsupported = || refuse("it declares no `bytes` encoding");
        if data_type.is_optional() {
            return Err(refuse(
                "it is optional (wrap this codec in the `optional` codec)",
            ));
        }
        let size = data_type.fixed_size().ok_or_else(|| {
            refuse(
                "its elements have variable length (use `vlen-utf8`, `vlen-bytes` or `zarrs.vlen`)",
            )
        })?;
        let step = match known_layout(data_type) {
            Some(ElementLayout::Verbatim) => Step::Identity,
            Some(ElementLayout::Bool) => Step::Bool,
            Some(ElementLayout::LowBits(layout)) => Step::LowBits(layout),
            Some(ElementLayout::Components(component)) => match endian {
                None => return Err(missing_endian(data_type)),
                Some(endian) if endian.is_native() => Step::Identity,
                Some(_) => Step::Swap(component),
            },
            None => {
                // Ask the data type: its hook refuses a missing `endian` for
                // multi-byte types even on no bytes at all.
                data_type
                    .codec_bytes()
                    .map_err(|_| unsupported())?
                    .encode(Cow::Borrowed(&[]), endian)
                    .map_err(|_| missing_endian(data_type))?;
                Step::DataType
            }
        };
        Ok(Self { size, step })
    }

    /// Number of bytes of `num_elements` elements, or an error on overflow.
    pub(super) fn len_of(&self, num_elements: u64) -> Result<usize, CodecError> {
        num_elements
            .checked_mul(self.size as u64)
            .and_then(|len| usize::try_from(len).ok())
            .ok_or_else(|| {
                CodecError::Other(format!(
                    "{BYTES}: {num_elements} elements of {} bytes do not fit in memory",
                    self.size
                ))
            })
    }

    /// Check that `bytes` holds exactly `num_elements` elements.
    pub(super) fn check_len(
        &self,
        direction: Direction,
        bytes: &[u8],
        num_elements: u64,
        data_type: &DataType,
    ) -> Result<(), CodecError> {
        let expected = self.len_of(num_elements)?;
        if bytes.len() != expected {
            let what = match direction {
                Direction::Encode => "the decoded chunk",
                Direction::Decode => "the encoded chunk",
            };
            return Err(CodecError::Other(format!(
                "{BYTES}: {what} has {} bytes, expected {num_elements} {data_type} elements \
                 ({expected} bytes)",
                bytes.len()
            )));
        }
        Ok(())
    }

    /// Apply the plan to whole elements (the length is checked by the caller).
    pub(super) fn apply<'a>(
        &self,
        direction: Direction,
        bytes: Cow<'a, [u8]>,
        data_type: &DataType,
        endian: Option<Endianness>,
    ) -> Result<Cow<'a, [u8]>, CodecError> {
        match self.step {
            Step::Identity => Ok(bytes),
            Step::Swap(component) => Ok(swap_cow(bytes, component)),
            Step::LowBits(layout) => Ok(canonicalize_cow(bytes, layout)),
            Step::Bool => match first_invalid_bool(&bytes) {
                None => Ok(bytes),
                Some(index) => Err(CodecError::Other(format!(
                    "{BYTES}: {} bool: element {index} is {:#04x}, but a bool must be 0x00 \
                     (false) or 0x01 (true)",
                    direction.verb(),
                    bytes.get(index).copied().unwrap_or_default(),
                ))),
            },
            Step::DataType => {
                let hooks = data_type.codec_bytes()?;
                let result = match direction {
                    Direction::Encode => hooks.encode(bytes, endian),
                    Direction::Decode => hooks.decode(bytes, endian),
                };
                result.map_err(|_| missing_endian(data_type))
            }
        }
    }
}

/// The error for a multi-byte data type without `endian`.
fn missing_endian(data_type: &DataType) -> CodecError {
    CodecError::Other(format!(
        "{BYTES}: endian is missing, but data type {data_type} has multi-byte elements: \
         the configuration needs \"endian\": \"little\" or \"big\""
    ))
}
