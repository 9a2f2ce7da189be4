//! The `bytes` codec: glue between zarrs and the byte-order kernels.

use std::num::NonZeroU64;
use std::sync::Arc;

use zarrs::array::codec::api::{
    ArrayBytes, ArrayBytesRaw, ArrayCodecTraits, ArrayPartialDecoderTraits,
    ArrayToBytesCodecTraits, BytesPartialDecoderTraits, BytesRepresentation, CodecError,
    CodecMetadataOptions, CodecOptions, CodecTraits, PartialDecoderCapability,
    PartialEncoderCapability, RecommendedConcurrency,
};
#[cfg(feature = "async")]
use zarrs::array::codec::api::{AsyncArrayPartialDecoderTraits, AsyncBytesPartialDecoderTraits};
use zarrs::array::{DataType, Endianness, FillValue};
use zarrs::metadata::Configuration;
use zarrs::plugin::ZarrVersion;

use super::bytes_layout::{Direction, Plan};
use super::bytes_partial_decoder::BytesPartialDecoder;
use super::{BYTES, BytesCodecConfiguration};
use crate::codec::num_elements;

/// The `bytes` codec: each element as its fixed-size binary representation,
/// multi-byte components in the configured byte order.
///
/// See the [module documentation](super) for the data types and the rules
/// at the edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BytesCodec {
    endian: Option<Endianness>,
}

impl BytesCodec {
    /// A `bytes` codec with the given byte order. `None` is only valid for
    /// data types with single-byte elements, which is checked when the codec
    /// meets the data type.
    #[must_use]
    pub const fn new(endian: Option<Endianness>) -> Self {
        Self { endian }
    }

    /// A little-endian `bytes` codec.
    #[must_use]
    pub const fn little() -> Self {
        Self::new(Some(Endianness::Little))
    }

    /// A big-endian `bytes` codec.
    #[must_use]
    pub const fn big() -> Self {
        Self::new(Some(Endianness::Big))
    }

    /// A `bytes` codec from its configuration.
    #[must_use]
    pub const fn new_with_configuration(configuration: &BytesCodecConfiguration) -> Self {
        Self::new(configuration.endian)
    }

    /// The configured byte order, if any.
    #[must_use]
    pub const fn endian(&self) -> Option<Endianness> {
        self.endian
    }

    /// Encode or decode a whole chunk with `plan`.
    fn apply<'a>(
        &self,
        plan: Plan,
        direction: Direction,
        bytes: ArrayBytesRaw<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        plan.check_len(direction, &bytes, num_elements(BYTES, shape)?, data_type)?;
        plan.apply(direction, bytes, data_type, self.endian)
    }
}

impl CodecTraits for BytesCodec {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// `{"endian": ...}`, or `{}` without `endian`, as zarrs' built-in writes.
    fn configuration(
        &self,
        _version: ZarrVersion,
        _options: &CodecMetadataOptions,
    ) -> Option<Configuration> {
        Some(
            BytesCodecConfiguration {
                endian: self.endian,
            }
            .to_configuration(),
        )
    }

    fn partial_decoder_capability(&self) -> PartialDecoderCapability {
        PartialDecoderCapability {
            partial_read: true,
            partial_decode: true,
        }
    }

    fn partial_encoder_capability(&self) -> PartialEncoderCapability {
        PartialEncoderCapability {
            partial_encode: false,
        }
    }
}

impl ArrayCodecTraits for BytesCodec {
    fn recommended_concurrency(
        &self,
        _shape: &[NonZeroU64],
        _data_type: &DataType,
    ) -> Result<RecommendedConcurrency, CodecError> {
        // A memory-bound pass at most: splitting it gains nothing.
        Ok(RecommendedConcurrency::new_maximum(1))
    }
}

#[cfg_attr(feature = "async", async_trait::async_trait)]
impl ArrayToBytesCodecTraits for BytesCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToBytesCodecTraits> {
        self as Arc<dyn ArrayToBytesCodecTraits>
    }

    /// The size of an encoded chunk. This is the first call that sees the
    /// data type, so it refuses what the codec cannot store: a missing
    /// `endian` for a multi-byte type, variable-sized and optional types.
    fn encoded_representation(
        &self,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
    ) -> Result<BytesRepresentation, CodecError> {
        let plan = Plan::new(data_type, self.endian)?;
        let len = plan.len_of(num_elements(BYTES, shape)?)?;
        Ok(BytesRepresentation::FixedSize(len as u64))
    }

    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        // Refuse optional and variable-sized types before looking at bytes.
        let plan = Plan::new(data_type, self.endian)?;
        self.apply(
            plan,
            Direction::Encode,
            bytes.into_fixed()?,
            shape,
            data_type,
        )
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytesRaw<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let plan = Plan::new(data_type, self.endian)?;
        let decoded = self.apply(plan, Direction::Decode, bytes, shape, data_type)?;
        Ok(ArrayBytes::new_flen(decoded))
    }

    fn partial_decoder(
        self: Arc<Self>,
        input_handle: Arc<dyn BytesPartialDecoderTraits>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<Arc<dyn ArrayPartialDecoderTraits>, CodecError> {
        Ok(Arc::new(BytesPartialDecoder::new(
            input_handle,
            shape,
            data_type,
            fill_value,
            self.endian,
        )?))
    }

    #[cfg(feature = "async")]
    #[cfg_attr(docsrs, doc(cfg(feature = "async")))]
    async fn async_partial_decoder(
        self: Arc<Self>,
        input_handle: Arc<dyn AsyncBytesPartialDecoderTraits>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<Arc<dyn AsyncArrayPartialDecoderTraits>, CodecError> {
        Ok(Arc::new(BytesPartialDecoder::new(
            input_handle,
            shape,
            data_type,
            fill_value,
            self.endian,
        )?))
    }
}
