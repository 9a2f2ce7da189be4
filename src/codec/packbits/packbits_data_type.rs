//! What `packbits` needs to know about a data type: the bits of a component,
//! how many components an element has, and whether it is sign-extended.

use zarrs::array::DataType;
use zarrs::array::codec::PackBitsDataTypeExt;
use zarrs::array::codec::api::CodecError;
use zarrs::array::data_type as dt;

use super::PACKBITS;

/// The components of one element of a data type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Components {
    /// `N`: bits per component.
    pub bits: u32,
    /// Components per element: 2 for complex types, 1 otherwise.
    pub count: u32,
    /// Signed integers are sign-extended when decoded.
    pub signed: bool,
}

impl Components {
    const fn new(bits: u32, count: u32, signed: bool) -> Self {
        Self {
            bits,
            count,
            signed,
        }
    }

    /// Bytes per component in memory: the smallest whole number of bytes
    /// (a 4-bit value takes a byte).
    pub fn bytes(self) -> usize {
        self.bits.div_ceil(8) as usize
    }

    /// The components of `data_type`.
    ///
    /// The types the specification lists, plus `float16`, the 8-bit floats
    /// and their complex forms, are known here; any other data type that
    /// declares `packbits` support to zarrs (e.g. `numpy.datetime64`) is
    /// taken at its word.
    ///
    /// # Errors
    /// If the data type is not supported or its in-memory size does not
    /// match its components.
    pub fn of(data_type: &DataType) -> Result<Self, CodecError> {
        let components = match Self::known(data_type) {
            Some(components) => components,
            None => {
                let traits = data_type
                    .codec_packbits()
                    .map_err(|_| unsupported(data_type))?;
                Self::new(
                    u32::try_from(traits.component_size_bits()).unwrap_or(u32::MAX),
                    u32::try_from(traits.num_components()).unwrap_or(u32::MAX),
                    traits.sign_extension(),
                )
            }
        };
        let size = (components.count as usize).checked_mul(components.bytes());
        if components.bits == 0
            || components.bits > 64
            || !matches!(components.count, 1 | 2)
            || size != data_type.fixed_size()
        {
            return Err(CodecError::Other(format!(
                "{PACKBITS}: data type {data_type} ({} components of {} bits, {:?} bytes) has no \
                 supported packing",
                components.count,
                components.bits,
                data_type.fixed_size(),
            )));
        }
        Ok(components)
    }

    /// The data types whose packing this crate states itself.
    fn known(data_type: &DataType) -> Option<Self> {
        macro_rules! table {
            ($($($marker:ty)|+ => ($bits:expr, $count:expr, $signed:expr)),* $(,)?) => {
                $($(if data_type.is::<$marker>() {
                    return Some(Self::new($bits, $count, $signed));
                })+)*
            };
        }
        table!(
            dt::BoolDataType => (1, 1, false),
            dt::Int2DataType => (2, 1, true),
            dt::UInt2DataType => (2, 1, false),
            dt::Int4DataType => (4, 1, true),
            dt::UInt4DataType | dt::Float4E2M1FNDataType => (4, 1, false),
            dt::Float6E2M3FNDataType | dt::Float6E3M2FNDataType => (6, 1, false),
            dt::Int8DataType => (8, 1, true),
            dt::UInt8DataType
                | dt::Float8E3M4DataType
                | dt::Float8E4M3DataType
                | dt::Float8E4M3B11FNUZDataType
                | dt::Float8E4M3FNUZDataType
                | dt::Float8E5M2DataType
                | dt::Float8E5M2FNUZDataType
                | dt::Float8E8M0FNUDataType => (8, 1, false),
            dt::Int16DataType => (16, 1, true),
            dt::UInt16DataType | dt::Float16DataType | dt::BFloat16DataType => (16, 1, false),
            dt::Int32DataType => (32, 1, true),
            dt::UInt32DataType | dt::Float32DataType => (32, 1, false),
            dt::Int64DataType => (64, 1, true),
            dt::UInt64DataType | dt::Float64DataType => (64, 1, false),
            dt::ComplexFloat4E2M1FNDataType => (4, 2, false),
            dt::ComplexFloat6E2M3FNDataType | dt::ComplexFloat6E3M2FNDataType => (6, 2, false),
            dt::ComplexFloat8E3M4DataType
                | dt::ComplexFloat8E4M3DataType
                | dt::ComplexFloat8E4M3B11FNUZDataType
                | dt::ComplexFloat8E4M3FNUZDataType
                | dt::ComplexFloat8E5M2DataType
                | dt::ComplexFloat8E5M2FNUZDataType
                | dt::ComplexFloat8E8M0FNUDataType => (8, 2, false),
            dt::ComplexBFloat16DataType | dt::ComplexFloat16DataType => (16, 2, false),
            dt::ComplexFloat32DataType | dt::Complex64DataType => (32, 2, false),
            dt::ComplexFloat64DataType | dt::Complex128DataType => (64, 2, false),
        );
        None
    }
}

fn unsupported(data_type: &DataType) -> CodecError {
    CodecError::Other(format!(
        "{PACKBITS}: data type {data_type} is not supported (supported: bool, integers, \
         floats and complex floats of fixed size)"
    ))
}
