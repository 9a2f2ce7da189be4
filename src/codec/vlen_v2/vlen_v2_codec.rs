//! The `vlen-utf8` / `vlen-bytes` codec: glue between zarrs and the layout
//! kernels.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::Arc;

use zarrs::array::codec::api::{
    ArrayBytes, ArrayBytesOffsets, ArrayBytesRaw, ArrayCodecTraits, ArrayPartialDecoderTraits,
    ArrayToBytesCodecTraits, BytesPartialDecoderTraits, BytesRepresentation, CodecError,
    CodecMetadataOptions, CodecOptions, CodecTraits, PartialDecoderCapability,
    PartialEncoderCapability, RecommendedConcurrency,
};
#[cfg(feature = "async")]
use zarrs::array::codec::api::{AsyncArrayPartialDecoderTraits, AsyncBytesPartialDecoderTraits};
use zarrs::array::{DataType, FillValue};
use zarrs::metadata::Configuration;
use zarrs::plugin::{ExtensionName, ZarrVersion};

use super::vlen_v2_partial_decoder::VlenV2PartialDecoder;
use crate::codec::{check_variable_data_type, num_elements};
use crate::kernels::vlen_v2::{self as kernel, VlenV2Error};

/// Which of the two codecs: they share the layout, `vlen-utf8` also checks
/// that every element is UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VlenV2Kind {
    /// `vlen-utf8`
    Utf8,
    /// `vlen-bytes`
    Bytes,
}

impl VlenV2Kind {
    /// The codec name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Utf8 => "vlen-utf8",
            Self::Bytes => "vlen-bytes",
        }
    }
}

/// The `vlen-utf8` or `vlen-bytes` codec: variable-length elements as a
/// `u32` item count and, per element, a `u32` length and the element bytes.
///
/// See the [module documentation](super) for the layout and the rules at the
/// edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlenV2Codec {
    kind: VlenV2Kind,
}

impl VlenV2Codec {
    /// Create a `vlen-utf8` or `vlen-bytes` codec.
    #[must_use]
    pub const fn new(kind: VlenV2Kind) -> Self {
        Self { kind }
    }

    /// Which of the two codecs this is.
    #[must_use]
    pub const fn kind(&self) -> VlenV2Kind {
        self.kind
    }

    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn error(&self, error: VlenV2Error) -> CodecError {
        CodecError::Other(format!("{}: {error}", self.name()))
    }

    /// The element count of a chunk of `shape`, after checking the data type.
    fn count(&self, shape: &[NonZeroU64], data_type: &DataType) -> Result<u64, CodecError> {
        self.check_data_type(data_type)?;
        num_elements(self.name(), shape)
    }

    /// Refuse fixed-size and optional data types.
    fn check_data_type(&self, data_type: &DataType) -> Result<(), CodecError> {
        check_variable_data_type(self.name(), data_type)
    }

    /// Encode a chunk.
    fn encode_chunk(
        &self,
        bytes: ArrayBytes<'_>,
        shape: &[NonZeroU64],
        data_type: &DataType,
    ) -> Result<Vec<u8>, CodecError> {
        let count = self.count(shape, data_type)?;
        let (data, offsets) = bytes.into_variable()?.into_parts();
        if offsets.len() as u64 != count.saturating_add(1) {
            return Err(CodecError::Other(format!(
                "{}: {} offsets for a chunk of {count} elements",
                self.name(),
                offsets.len(),
            )));
        }
        if self.kind == VlenV2Kind::Utf8 {
            kernel::check_utf8(&data, &offsets).map_err(|e| self.error(e))?;
        }
        let mut chunk = Vec::new();
        kernel::encode(&data, &offsets, &mut chunk).map_err(|e| self.error(e))?;
        Ok(chunk)
    }

    /// Decode a chunk, checking it against the layout (and, for
    /// `vlen-utf8`, that every element is UTF-8).
    pub(super) fn decode_chunk(
        &self,
        chunk: &[u8],
        shape: &[NonZeroU64],
        data_type: &DataType,
    ) -> Result<ArrayBytes<'static>, CodecError> {
        let count = self.count(shape, data_type)?;
        let (data, offsets) = kernel::decode(chunk, count).map_err(|e| self.error(e))?;
        if self.kind == VlenV2Kind::Utf8 {
            kernel::check_utf8(&data, &offsets).map_err(|e| self.error(e))?;
        }
        let offsets = ArrayBytesOffsets::new(offsets)?;
        ArrayBytes::new_vlen(data, offsets)
            .map_err(|e| CodecError::Other(format!("{}: {e}", self.name())))
    }
}

impl ExtensionName for VlenV2Codec {
    /// The same name in Zarr V2 and V3, as zarrs' built-ins.
    fn name(&self, _version: ZarrVersion) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(self.kind.name()))
    }
}

impl CodecTraits for VlenV2Codec {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// Empty, as zarrs' built-ins write it.
    fn configuration(
        &self,
        _version: ZarrVersion,
        _options: &CodecMetadataOptions,
    ) -> Option<Configuration> {
        Some(Configuration::default())
    }

    fn partial_decoder_capability(&self) -> PartialDecoderCapability {
        // Without an index, every request needs the whole chunk: zarrs then
        // caches it in front of this codec.
        PartialDecoderCapability {
            partial_read: false,
            partial_decode: false,
        }
    }

    fn partial_encoder_capability(&self) -> PartialEncoderCapability {
        PartialEncoderCapability {
            partial_encode: false,
        }
    }
}

impl ArrayCodecTraits for VlenV2Codec {
    fn recommended_concurrency(
        &self,
        _shape: &[NonZeroU64],
        _data_type: &DataType,
    ) -> Result<RecommendedConcurrency, CodecError> {
        Ok(RecommendedConcurrency::new_maximum(1))
    }
}

#[cfg_attr(feature = "async", async_trait::async_trait)]
impl ArrayToBytesCodecTraits for VlenV2Codec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToBytesCodecTraits> {
        self as Arc<dyn ArrayToBytesCodecTraits>
    }

    fn encoded_representation(
        &self,
        _shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
    ) -> Result<BytesRepresentation, CodecError> {
        self.check_data_type(data_type)?;
        Ok(BytesRepresentation::UnboundedSize)
    }

    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        self.encode_chunk(bytes, shape, data_type).map(Cow::Owned)
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytesRaw<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        self.decode_chunk(&bytes, shape, data_type)
    }

    fn partial_decoder(
        self: Arc<Self>,
        input_handle: Arc<dyn BytesPartialDecoderTraits>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<Arc<dyn ArrayPartialDecoderTraits>, CodecError> {
        Ok(Arc::new(VlenV2PartialDecoder::new(
            *self,
            input_handle,
            shape,
            data_type,
            fill_value,
        )?))
    }

    #[cfg(feature = "async")]
    async fn async_partial_decoder(
        self: Arc<Self>,
        input_handle: Arc<dyn AsyncBytesPartialDecoderTraits>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<Arc<dyn AsyncArrayPartialDecoderTraits>, CodecError> {
        Ok(Arc::new(VlenV2PartialDecoder::new(
            *self,
            input_handle,
            shape,
            data_type,
            fill_value,
        )?))
    }
}
