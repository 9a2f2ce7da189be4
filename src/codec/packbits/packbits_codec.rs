//! The `packbits` codec: glue between zarrs and the packing kernels.

use std::borrow::Cow;
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
use zarrs::array::{DataType, FillValue};
use zarrs::metadata::Configuration;
use zarrs::plugin::{PluginCreateError, ZarrVersion};

use super::packbits_data_type::Components;
use super::packbits_partial_decoder::PackBitsPartialDecoder;
use super::{PACKBITS, PackBitsCodecConfiguration, PaddingEncoding};
use crate::codec::{config_error, configuration_from_json, num_elements};
use crate::kernels::packbits::{BitLayout, PackBitsError, pack, unpack};

/// The `packbits` codec: packs each component's bits `first_bit ..=
/// last_bit` into a bit stream, with an optional byte recording the
/// padding.
///
/// See the [module documentation](super) for the rules at the edges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PackBitsCodec {
    configuration: PackBitsCodecConfiguration,
}

impl PackBitsCodec {
    /// Create a `packbits` codec.
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] if a bit index is 64 or more, or
    /// `last_bit < first_bit`.
    pub fn new(
        padding_encoding: PaddingEncoding,
        first_bit: Option<u64>,
        last_bit: Option<u64>,
    ) -> Result<Self, PluginCreateError> {
        Self::new_with_configuration(&PackBitsCodecConfiguration {
            padding_encoding,
            first_bit,
            last_bit,
        })
    }

    /// Create a `packbits` codec from a configuration.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn new_with_configuration(
        configuration: &PackBitsCodecConfiguration,
    ) -> Result<Self, PluginCreateError> {
        configuration.validate()?;
        Ok(Self {
            configuration: *configuration,
        })
    }

    /// Create a `packbits` codec from configuration JSON, in any published
    /// spelling (see [`PackBitsCodecConfiguration::parse`]).
    ///
    /// # Errors
    /// If the configuration is invalid; the error names the field and value.
    pub fn new_with_json(configuration: &serde_json::Value) -> Result<Self, PluginCreateError> {
        let configuration = configuration_from_json(PACKBITS, configuration)?;
        Self::new_with_configuration(&PackBitsCodecConfiguration::parse(&configuration)?)
    }

    /// How the number of padding bits is recorded.
    #[must_use]
    pub fn padding_encoding(&self) -> PaddingEncoding {
        self.configuration.padding_encoding
    }

    /// The first encoded bit of each component, if set.
    #[must_use]
    pub fn first_bit(&self) -> Option<u64> {
        self.configuration.first_bit
    }

    /// The last encoded bit of each component, if set.
    #[must_use]
    pub fn last_bit(&self) -> Option<u64> {
        self.configuration.last_bit
    }

    /// The packing of one chunk of `shape` and `data_type`.
    pub(super) fn plan(
        &self,
        shape: &[NonZeroU64],
        data_type: &DataType,
    ) -> Result<ChunkPlan, CodecError> {
        let components = Components::of(data_type)?;
        let n = u64::from(components.bits);
        let first_bit = self.configuration.first_bit.unwrap_or(0);
        let last_bit = self.configuration.last_bit.unwrap_or(n.saturating_sub(1));
        for (field, value) in [("first_bit", first_bit), ("last_bit", last_bit)] {
            if value >= n {
                return Err(CodecError::Other(
                    config_error(
                        PACKBITS,
                        field,
                        value,
                        format!("must be less than {n}, the bits per component of {data_type}"),
                    )
                    .to_string(),
                ));
            }
        }
        if last_bit < first_bit {
            return Err(CodecError::Other(
                config_error(
                    PACKBITS,
                    "first_bit",
                    first_bit,
                    format!("must not exceed last_bit ({last_bit}) for {data_type}"),
                )
                .to_string(),
            ));
        }
        // Both are below 64 here.
        let layout = BitLayout::new(
            components.bytes(),
            first_bit as u32,
            (last_bit - first_bit + 1) as u32,
            components.signed,
        )
        .map_err(|e| CodecError::Other(format!("{PACKBITS}: {data_type}: {e}")))?;
        let num_elements = num_elements(PACKBITS, shape)?;
        let num_components = num_elements.checked_mul(u64::from(components.count));
        let (Some(num_components), Some(packed_len)) = (
            num_components,
            num_components.and_then(|c| layout.packed_len(c, 0)),
        ) else {
            return Err(CodecError::Other(format!(
                "{PACKBITS}: a chunk of shape {shape:?} of {data_type} is too large"
            )));
        };
        Ok(ChunkPlan {
            layout,
            components_per_element: u64::from(components.count),
            num_elements,
            num_components,
            packed_len,
            padding_encoding: self.configuration.padding_encoding,
            data_type: data_type.clone(),
        })
    }
}

/// How one chunk is packed.
#[derive(Clone, Debug)]
pub(super) struct ChunkPlan {
    pub layout: BitLayout,
    pub components_per_element: u64,
    pub num_elements: u64,
    pub num_components: u64,
    /// Bytes of packed bits (without the padding byte).
    pub packed_len: u64,
    pub padding_encoding: PaddingEncoding,
    pub data_type: DataType,
}

impl ChunkPlan {
    /// Bits per element, `k` in the specification.
    pub fn element_bits(&self) -> u64 {
        self.components_per_element * u64::from(self.layout.bits())
    }

    /// Bytes per element in memory.
    pub fn element_bytes(&self) -> usize {
        self.components_per_element as usize * self.layout.component_bytes()
    }

    /// The length of the encoded chunk.
    pub fn encoded_len(&self) -> u64 {
        self.packed_len + self.padding_encoding.extra_bytes()
    }

    /// Where the packed bits start in the encoded chunk.
    pub fn packed_offset(&self) -> u64 {
        match self.padding_encoding {
            PaddingEncoding::FirstByte => 1,
            PaddingEncoding::None | PaddingEncoding::LastByte => 0,
        }
    }

    /// Where the padding byte is, if there is one.
    pub fn padding_byte_offset(&self) -> Option<u64> {
        match self.padding_encoding {
            PaddingEncoding::None => None,
            PaddingEncoding::FirstByte => Some(0),
            PaddingEncoding::LastByte => Some(self.packed_len),
        }
    }

    /// The number of zero bits that complete the last byte.
    pub fn padding_bits(&self) -> u8 {
        // `packed_len` did not overflow, so neither does this product.
        let total = self.num_components * u64::from(self.layout.bits());
        ((8 - total % 8) % 8) as u8
    }

    /// The decoded length of `num_elements` elements, if it fits in memory.
    pub fn decoded_len(&self, num_elements: u64) -> Result<usize, CodecError> {
        usize::try_from(num_elements)
            .ok()
            .and_then(|n| n.checked_mul(self.element_bytes()))
            .ok_or_else(|| {
                CodecError::Other(format!(
                    "{PACKBITS}: {num_elements} elements of {} do not fit in memory",
                    self.data_type
                ))
            })
    }

    /// Check the padding byte read from the chunk.
    pub fn check_padding_byte(&self, byte: u8) -> Result<(), CodecError> {
        let expected = self.padding_bits();
        if byte != expected {
            return Err(CodecError::Other(format!(
                "{PACKBITS}: the {} padding byte is {byte}, but {} elements of {} at {} bits \
                 each leave {expected} padding bits: the chunk is corrupt or has a different \
                 shape",
                self.padding_encoding.name(),
                self.num_elements,
                self.data_type,
                self.element_bits(),
            )));
        }
        Ok(())
    }

    /// A kernel error, with the data type.
    pub fn kernel_error(&self, error: &PackBitsError) -> CodecError {
        CodecError::Other(format!("{PACKBITS}: {}: {error}", self.data_type))
    }

    /// Whether whole components are packed (so the packed bits are the
    /// little-endian bytes of the elements).
    fn is_whole_components(&self) -> bool {
        u64::from(self.layout.bits()) == 8 * self.layout.component_bytes() as u64
    }

    /// Whether the packed bits are the elements' bytes as in memory.
    fn is_memory_layout(&self) -> bool {
        cfg!(target_endian = "little") && self.is_whole_components()
    }

    /// Whether a chunk may lack its padding byte: zarrs' built-in (0.23.14)
    /// encodes whole components with a padding encoding as plain bytes,
    /// without the byte its own `encoded_representation` counts. Such chunks
    /// are one byte shorter than the specification's, so the length tells
    /// the two forms apart.
    pub fn padding_byte_may_be_missing(&self) -> bool {
        self.is_whole_components() && self.padding_encoding != PaddingEncoding::None
    }

    /// Decode a whole encoded chunk, checking its length and padding byte.
    pub fn decode_chunk<'a>(
        &self,
        bytes: ArrayBytesRaw<'a>,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        let builtin_form =
            self.padding_byte_may_be_missing() && bytes.len() as u64 == self.packed_len;
        if bytes.len() as u64 != self.encoded_len() && !builtin_form {
            return Err(CodecError::Other(format!(
                "{PACKBITS}: the encoded chunk has {} bytes, expected {} for {} elements of {} \
                 at {} bits each (padding_encoding {})",
                bytes.len(),
                self.encoded_len(),
                self.num_elements,
                self.data_type,
                self.element_bits(),
                self.padding_encoding.name(),
            )));
        }
        let packed_offset = if builtin_form {
            0
        } else {
            if let Some(offset) = self.padding_byte_offset() {
                self.check_padding_byte(bytes.get(offset as usize).copied().unwrap_or_default())?;
            }
            self.packed_offset()
        };
        // The length is checked and the chunk is in memory, so these fit.
        let packed_range = packed_offset as usize..(packed_offset + self.packed_len) as usize;
        if self.is_memory_layout() {
            return Ok(strip(bytes, packed_range));
        }
        let mut decoded = vec![0u8; self.decoded_len(self.num_elements)?];
        let packed = bytes.get(packed_range).unwrap_or_default();
        unpack(&self.layout, packed, 0, &mut decoded).map_err(|e| self.kernel_error(&e))?;
        Ok(Cow::Owned(decoded))
    }
}

impl CodecTraits for PackBitsCodec {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn configuration(
        &self,
        _version: ZarrVersion,
        _options: &CodecMetadataOptions,
    ) -> Option<Configuration> {
        Some(self.configuration.to_configuration())
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

impl ArrayCodecTraits for PackBitsCodec {
    fn recommended_concurrency(
        &self,
        _shape: &[NonZeroU64],
        _data_type: &DataType,
    ) -> Result<RecommendedConcurrency, CodecError> {
        Ok(RecommendedConcurrency::new_maximum(1))
    }
}

#[cfg_attr(feature = "async", async_trait::async_trait)]
impl ArrayToBytesCodecTraits for PackBitsCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToBytesCodecTraits> {
        self as Arc<dyn ArrayToBytesCodecTraits>
    }

    fn encoded_representation(
        &self,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
    ) -> Result<BytesRepresentation, CodecError> {
        Ok(BytesRepresentation::FixedSize(
            self.plan(shape, data_type)?.encoded_len(),
        ))
    }

    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        let plan = self.plan(shape, data_type)?;
        let bytes = bytes.into_fixed()?;
        let expected = plan.decoded_len(plan.num_elements)?;
        if bytes.len() != expected {
            return Err(CodecError::Other(format!(
                "{PACKBITS}: the chunk has {} bytes, expected {expected} for {} elements of {}",
                bytes.len(),
                plan.num_elements,
                data_type
            )));
        }
        if plan.is_memory_layout() && plan.padding_encoding == PaddingEncoding::None {
            return Ok(bytes);
        }
        let encoded_len = usize::try_from(plan.encoded_len())
            .map_err(|_| CodecError::Other(format!("{PACKBITS}: the chunk is too large")))?;
        let mut encoded = vec![0u8; encoded_len];
        let packed_offset = plan.packed_offset() as usize;
        let packed = encoded
            .get_mut(packed_offset..packed_offset + plan.packed_len as usize)
            .unwrap_or_default();
        pack(&plan.layout, &bytes, packed).map_err(|e| plan.kernel_error(&e))?;
        if let Some(offset) = plan.padding_byte_offset()
            && let Some(byte) = encoded.get_mut(offset as usize)
        {
            *byte = plan.padding_bits();
        }
        Ok(Cow::Owned(encoded))
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytesRaw<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let decoded = self.plan(shape, data_type)?.decode_chunk(bytes)?;
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
        Ok(Arc::new(PackBitsPartialDecoder::new(
            input_handle,
            shape,
            fill_value,
            self.plan(shape, data_type)?,
        )))
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
        Ok(Arc::new(PackBitsPartialDecoder::new(
            input_handle,
            shape,
            fill_value,
            self.plan(shape, data_type)?,
        )))
    }
}

/// `bytes[range]`, without a copy where the bytes allow it.
fn strip(bytes: ArrayBytesRaw<'_>, range: std::ops::Range<usize>) -> ArrayBytesRaw<'_> {
    if range.start == 0 && range.end == bytes.len() {
        return bytes;
    }
    match bytes {
        Cow::Borrowed(b) => Cow::Borrowed(b.get(range).unwrap_or_default()),
        Cow::Owned(mut v) => {
            v.truncate(range.end);
            v.drain(..range.start.min(v.len()));
            Cow::Owned(v)
        }
    }
}
