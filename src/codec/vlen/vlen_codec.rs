//! The `zarrs.vlen` codec: glue between zarrs, the two codec chains and the
//! layout kernels.

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
use zarrs::array::{CodecChain, DataType, FillValue, data_type};
use zarrs::metadata::Configuration;
use zarrs::plugin::{ExtensionName, PluginCreateError, ZarrVersion};

use super::vlen_partial_decoder::VlenPartialDecoder;
use super::{VLEN, VlenCodecConfiguration, VlenIndexDataType, VlenIndexLocation};
use crate::codec::{check_variable_data_type, config_error, num_elements};
use crate::kernels::vlen::{
    self as kernel, Endian, INDEX_LEN_SIZE, IndexLocation, IndexType, VlenError,
};

/// The `zarrs.vlen` codec: variable-length elements as an index of offsets
/// and the concatenated element bytes, each through its own codec chain.
///
/// See the [module documentation](super) for the layout and the rules at the
/// edges.
#[derive(Clone, Debug)]
pub struct VlenCodec {
    index_codecs: Arc<CodecChain>,
    data_codecs: Arc<CodecChain>,
    index_data_type: VlenIndexDataType,
    index_location: VlenIndexLocation,
    /// `Some(order)` if the index chain is a lone `bytes` codec: the offsets
    /// are then written and read in place, without running the chain.
    index_endian: Option<Endian>,
    /// The data chain is a lone `bytes` codec, the identity on `uint8`.
    data_is_bytes: bool,
}

/// Whether `chain` is a single `bytes` codec, and if so its byte order
/// (`None` if it has none, which the chain refuses for multi-byte offsets).
fn lone_bytes_codec(chain: &CodecChain) -> Option<Option<Endian>> {
    let codec = chain.array_to_bytes_codec();
    let lone = chain.array_to_array_codecs().is_empty()
        && chain.bytes_to_bytes_codecs().is_empty()
        && codec.name_v3().as_deref() == Some("bytes");
    lone.then(|| {
        let configuration = codec.configuration_v3(&CodecMetadataOptions::default());
        match configuration?.get("endian")?.as_str()? {
            "little" => Some(Endian::Little),
            "big" => Some(Endian::Big),
            _ => None,
        }
    })
}

impl VlenCodec {
    /// Create a `zarrs.vlen` codec from its two codec chains.
    ///
    /// The index chain encodes `n + 1` offsets of `index_data_type` (a 1-D
    /// array), the data chain the concatenated element bytes (a 1-D `uint8`
    /// array).
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] if a chain cannot encode its input (e.g.
    /// a `bytes` codec without `endian` in `index_codecs`), naming the field:
    /// the index chain encodes the smallest index here.
    pub fn new(
        index_codecs: Arc<CodecChain>,
        data_codecs: Arc<CodecChain>,
        index_data_type: VlenIndexDataType,
        index_location: VlenIndexLocation,
    ) -> Result<Self, PluginCreateError> {
        let codec = Self {
            index_endian: lone_bytes_codec(&index_codecs).flatten(),
            data_is_bytes: lone_bytes_codec(&data_codecs).is_some(),
            index_codecs,
            data_codecs,
            index_data_type,
            index_location,
        };
        // Refuse, when the array is opened, chains that cannot encode their
        // input (e.g. `bytes` without `endian` for the index) rather than at
        // the first chunk. The index chain encodes the smallest index (two
        // zero offsets: a chunk of one empty element), which every usable
        // chain must encode; for the data chain, whose valid inputs depend on
        // the data, zarrs' representation check has to do.
        let options = CodecOptions::default();
        let (index_type, index_fill) = codec.index_array_type();
        let index = vec![0u8; 2 * codec.index_type().size()];
        let checks = [
            (
                "index_codecs",
                &codec.index_codecs,
                codec
                    .index_codecs
                    .encode(
                        ArrayBytes::new_flen(index),
                        &[NonZeroU64::MIN.saturating_add(1)],
                        &index_type,
                        &index_fill,
                        &options,
                    )
                    .map(|_| ()),
            ),
            (
                "data_codecs",
                &codec.data_codecs,
                codec
                    .data_codecs
                    .encoded_representation(
                        &[NonZeroU64::MIN],
                        &data_type::uint8(),
                        &FillValue::from(0u8),
                    )
                    .map(|_| ()),
            ),
        ];
        for (field, chain, check) in checks {
            if let Err(e) = check {
                let metadata = chain.create_metadatas(&CodecMetadataOptions::default());
                let value = serde_json::to_string(&metadata).unwrap_or_default();
                return Err(config_error(VLEN, field, value, e));
            }
        }
        Ok(codec)
    }

    /// Create a `zarrs.vlen` codec from a configuration, resolving both codec
    /// chains through zarrs' codec registry (so they may hold any registered
    /// codec, this crate's included).
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] naming the field and its value if a chain
    /// holds an unknown codec, no or several array->bytes codecs, or cannot
    /// encode its input.
    pub fn new_with_configuration(
        configuration: &VlenCodecConfiguration,
    ) -> Result<Self, PluginCreateError> {
        let chain = |field: &str, metadata: &[zarrs::metadata::v3::MetadataV3]| {
            CodecChain::from_metadata(metadata)
                .map(Arc::new)
                .map_err(|e| {
                    let value = serde_json::to_string(metadata).unwrap_or_default();
                    config_error(VLEN, field, value, e)
                })
        };
        Self::new(
            chain("index_codecs", &configuration.index_codecs)?,
            chain("data_codecs", &configuration.data_codecs)?,
            configuration.index_data_type,
            configuration.index_location(),
        )
    }

    /// The codecs of the index.
    #[must_use]
    pub fn index_codecs(&self) -> &Arc<CodecChain> {
        &self.index_codecs
    }

    /// The codecs of the element bytes.
    #[must_use]
    pub fn data_codecs(&self) -> &Arc<CodecChain> {
        &self.data_codecs
    }

    /// The integer type of the offsets.
    #[must_use]
    pub fn index_data_type(&self) -> VlenIndexDataType {
        self.index_data_type
    }

    /// Where the index is in a chunk.
    #[must_use]
    pub fn index_location(&self) -> VlenIndexLocation {
        self.index_location
    }

    fn index_type(&self) -> IndexType {
        self.index_data_type.into()
    }

    fn location(&self) -> IndexLocation {
        self.index_location.into()
    }

    /// The zarrs data type and fill value of the index array.
    fn index_array_type(&self) -> (DataType, FillValue) {
        match self.index_data_type {
            VlenIndexDataType::UInt32 => (data_type::uint32(), FillValue::from(0u32)),
            VlenIndexDataType::UInt64 => (data_type::uint64(), FillValue::from(0u64)),
        }
    }

    /// Whether a partial decode reads only the index and the requested
    /// elements' bytes (see [`VlenPartialDecoder`]), and if so the size of the
    /// encoded index ([`BytesRepresentation::FixedSize`] or
    /// [`BytesRepresentation::BoundedSize`]). The data chain must be the
    /// identity, the index at the start (where it is found without knowing
    /// the chunk size) and the encoded index of bounded size (so that a
    /// corrupt length field cannot ask for an unbounded read).
    pub(super) fn reads_partially(
        &self,
        index_shape: &[NonZeroU64],
    ) -> Option<BytesRepresentation> {
        if !self.data_is_bytes || self.index_location != VlenIndexLocation::Start {
            return None;
        }
        let (index_type, index_fill) = self.index_array_type();
        self.index_codecs
            .encoded_representation(index_shape, &index_type, &index_fill)
            .ok()
            .filter(|r| !matches!(r, BytesRepresentation::UnboundedSize))
    }

    /// Encode a chunk.
    fn encode_chunk(
        &self,
        bytes: ArrayBytes<'_>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        options: &CodecOptions,
    ) -> Result<Vec<u8>, CodecError> {
        check_data_type(data_type)?;
        let count = index_count(shape)?;
        let (data, offsets) = bytes.into_variable()?.into_parts();
        if offsets.len() as u64 != count.get() {
            return Err(CodecError::Other(format!(
                "{VLEN}: {} offsets for a chunk of {} elements",
                offsets.len(),
                count.get() - 1
            )));
        }
        let span = kernel::element_span(&offsets, data.len()).map_err(layout_error)?;
        let (index_type, location) = (self.index_type(), self.location());

        if let Some(endian) = self.index_endian
            && (self.data_is_bytes || span.is_empty())
        {
            // Both chains are the identity: the chunk is built in one buffer,
            // the offsets written straight into place, reusing an owned
            // input's buffer where that is cheaper.
            let index_len = offsets.len() * index_type.size();
            let len_field = (index_len as u64).to_le_bytes();
            let write = |dst: &mut [u8]| {
                kernel::write_offsets(&offsets, index_type, endian, dst).map_err(layout_error)
            };
            let chunk = match (data, location) {
                // Only without growing: a realloc that copies is no cheaper
                // than a fresh buffer.
                (Cow::Owned(mut chunk), IndexLocation::End)
                    if chunk.capacity() >= span.end + index_len + INDEX_LEN_SIZE =>
                {
                    chunk.truncate(span.end);
                    chunk.drain(..span.start);
                    // Appended into the spare capacity: no zeroing pass first.
                    kernel::encode_offsets(&offsets, index_type, endian, &mut chunk)
                        .map_err(layout_error)?;
                    chunk.extend_from_slice(&len_field);
                    chunk
                }
                // Growing it and moving the elements measured faster than a
                // fresh buffer, whose pages must all be faulted in anew.
                (Cow::Owned(mut chunk), IndexLocation::Start) => {
                    let prefix = INDEX_LEN_SIZE + index_len;
                    let data_len = span.len();
                    chunk.resize(span.end.max(prefix + data_len), 0);
                    chunk.copy_within(span, prefix);
                    chunk.truncate(prefix + data_len);
                    chunk[..INDEX_LEN_SIZE].copy_from_slice(&len_field);
                    write(&mut chunk[INDEX_LEN_SIZE..prefix])?;
                    chunk
                }
                (data, location) => {
                    let elements = data.get(span).unwrap_or_default();
                    let mut chunk = Vec::with_capacity(INDEX_LEN_SIZE + index_len + elements.len());
                    match location {
                        IndexLocation::Start => {
                            chunk.extend_from_slice(&len_field);
                            kernel::encode_offsets(&offsets, index_type, endian, &mut chunk)
                                .map_err(layout_error)?;
                            chunk.extend_from_slice(elements);
                        }
                        IndexLocation::End => {
                            chunk.extend_from_slice(elements);
                            kernel::encode_offsets(&offsets, index_type, endian, &mut chunk)
                                .map_err(layout_error)?;
                            chunk.extend_from_slice(&len_field);
                        }
                    }
                    chunk
                }
            };
            return Ok(chunk);
        }

        let elements = data.get(span).unwrap_or_default();
        let index = self.encode_index(&offsets, count, options)?;
        let data = match NonZeroU64::new(elements.len() as u64) {
            // No element bytes: nothing is written for them (as zarrs does),
            // since a chain cannot encode an empty array.
            None => Cow::Borrowed(&[][..]),
            Some(_) if self.data_is_bytes => Cow::Borrowed(elements),
            Some(len) => self.data_codecs.encode(
                ArrayBytes::new_flen(elements),
                &[len],
                &data_type::uint8(),
                &FillValue::from(0u8),
                options,
            )?,
        };
        Ok(kernel::assemble_chunk(&index, &data, location))
    }

    /// The encoded index of `offsets`.
    fn encode_index(
        &self,
        offsets: &[usize],
        count: NonZeroU64,
        options: &CodecOptions,
    ) -> Result<Vec<u8>, CodecError> {
        let index_type = self.index_type();
        let mut index = Vec::new();
        if let Some(endian) = self.index_endian {
            kernel::encode_offsets(offsets, index_type, endian, &mut index)
                .map_err(layout_error)?;
            return Ok(index);
        }
        // zarrs' array bytes are in this machine's byte order.
        kernel::encode_offsets(offsets, index_type, Endian::NATIVE, &mut index)
            .map_err(layout_error)?;
        let (index_data_type, index_fill) = self.index_array_type();
        Ok(self
            .index_codecs
            .encode(
                ArrayBytes::new_flen(index),
                &[count],
                &index_data_type,
                &index_fill,
                options,
            )?
            .into_owned())
    }

    /// Decode an encoded index of `count` offsets and check it: its size,
    /// that the first offset is 0 and that none decreases (in the one pass
    /// over the offsets that zarrs' `ArrayBytesOffsets` makes anyway). The
    /// offsets borrow from `index` when its bytes already have the layout of
    /// `[usize]`. That the last is the data length is up to the caller.
    pub(super) fn decode_index<'b>(
        &self,
        index: Cow<'b, [u8]>,
        count: NonZeroU64,
        options: &CodecOptions,
    ) -> Result<ArrayBytesOffsets<'b>, CodecError> {
        let index_type = self.index_type();
        let (index, endian) = match self.index_endian {
            Some(endian) => (index, endian),
            None => {
                let (index_data_type, index_fill) = self.index_array_type();
                let decoded = self
                    .index_codecs
                    .decode(index, &[count], &index_data_type, &index_fill, options)?
                    .into_fixed()?;
                (decoded, Endian::NATIVE)
            }
        };
        let count = usize::try_from(count.get()).map_err(|_| too_large(count.get()))?;
        kernel::check_index_size(&index, count, index_type).map_err(layout_error)?;
        let offsets: Cow<'b, [usize]> = match &index {
            Cow::Borrowed(bytes) => kernel::borrow_offsets(bytes, index_type, endian).map_or_else(
                || Cow::Owned(kernel::decode_offsets(bytes, index_type, endian)),
                Cow::Borrowed,
            ),
            Cow::Owned(bytes) => Cow::Owned(kernel::decode_offsets(bytes, index_type, endian)),
        };
        if let Some(&first) = offsets.first()
            && first != 0
        {
            return Err(layout_error(VlenError::FirstOffset {
                value: first as u64,
            }));
        }
        ArrayBytesOffsets::new(offsets).map_err(|_| {
            // Only on failure: decode again to say where.
            let offsets = kernel::decode_offsets(&index, index_type, endian);
            layout_error(
                kernel::validate_offsets(&offsets)
                    .err()
                    .unwrap_or_else(|| VlenError::Input("offsets decrease".to_string())),
            )
        })
    }

    /// Decode the element bytes, which the offsets say are `len` bytes.
    fn decode_data<'b>(
        &self,
        data: Cow<'b, [u8]>,
        len: usize,
        options: &CodecOptions,
    ) -> Result<Cow<'b, [u8]>, CodecError> {
        // A corrupt last offset must not reach the data chain as the size of
        // a buffer no allocation can hold.
        if isize::try_from(len).is_err() {
            return Err(layout_error(VlenError::LastOffset {
                last: len as u64,
                data_len: data.len(),
            }));
        }
        let data = match NonZeroU64::new(len as u64) {
            None if data.is_empty() => data,
            None => {
                return Err(CodecError::Other(format!(
                    "{VLEN}: {} bytes of encoded data, but the offsets say every element is empty",
                    data.len()
                )));
            }
            Some(_) if self.data_is_bytes => data,
            Some(len) => self
                .data_codecs
                .decode(
                    data,
                    &[len],
                    &data_type::uint8(),
                    &FillValue::from(0u8),
                    options,
                )?
                .into_fixed()?,
        };
        Ok(data)
    }

    /// Decode a chunk. A borrowed chunk is decoded without copying when the
    /// chains allow it; an owned one reuses its buffer for the element bytes.
    pub(super) fn decode_chunk<'a>(
        &self,
        chunk: ArrayBytesRaw<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        check_data_type(data_type)?;
        let count = index_count(shape)?;
        let parts = kernel::split_chunk(&chunk, self.location()).map_err(layout_error)?;
        let (data, offsets) = match chunk {
            Cow::Borrowed(chunk) => {
                let index = chunk.get(parts.index).unwrap_or_default();
                let offsets = self.decode_index(Cow::Borrowed(index), count, options)?;
                let data = chunk.get(parts.data).unwrap_or_default();
                (
                    self.decode_data(Cow::Borrowed(data), offsets.last(), options)?,
                    offsets,
                )
            }
            Cow::Owned(mut chunk) => {
                let index = chunk.get(parts.index).unwrap_or_default();
                let offsets = self
                    .decode_index(Cow::Borrowed(index), count, options)?
                    .into_owned();
                // The element bytes move to the front of the buffer, which
                // then becomes the decoded data.
                let len = parts.data.len();
                if parts.data.start > 0 {
                    chunk.copy_within(parts.data, 0);
                }
                chunk.truncate(len);
                chunk.shrink_to_fit();
                (
                    self.decode_data(Cow::Owned(chunk), offsets.last(), options)?,
                    offsets,
                )
            }
        };
        kernel::check_last_offset(&offsets, data.len()).map_err(layout_error)?;
        ArrayBytes::new_vlen(data, offsets).map_err(|e| CodecError::Other(format!("{VLEN}: {e}")))
    }
}

/// Refuse fixed-size and optional data types.
pub(super) fn check_data_type(data_type: &DataType) -> Result<(), CodecError> {
    check_variable_data_type(VLEN, data_type)
}

/// The number of offsets of a chunk of `shape`: elements + 1.
pub(super) fn index_count(shape: &[NonZeroU64]) -> Result<NonZeroU64, CodecError> {
    num_elements(VLEN, shape)?
        .checked_add(1)
        .filter(|&n| usize::try_from(n).is_ok())
        .and_then(NonZeroU64::new)
        .ok_or_else(|| CodecError::Other(format!("{VLEN}: chunk shape {shape:?} is too large")))
}

fn too_large(count: u64) -> CodecError {
    CodecError::Other(format!("{VLEN}: {count} offsets do not fit in memory"))
}

/// A chunk that does not follow the layout.
pub(super) fn layout_error(error: VlenError) -> CodecError {
    CodecError::Other(format!("{VLEN}: {error}"))
}

impl CodecTraits for VlenCodec {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// Always the current form, with `index_location`, as zarrs' built-in
    /// writes it, also for a codec read from the older form.
    fn configuration(
        &self,
        _version: ZarrVersion,
        options: &CodecMetadataOptions,
    ) -> Option<Configuration> {
        let configuration = VlenCodecConfiguration {
            index_codecs: self.index_codecs.create_metadatas(options),
            data_codecs: self.data_codecs.create_metadatas(options),
            index_data_type: self.index_data_type,
            index_location: Some(self.index_location),
        };
        Some(configuration.to_configuration())
    }

    fn partial_decoder_capability(&self) -> PartialDecoderCapability {
        // The chain caches the whole chunk in front of this codec, and its
        // decoded elements behind it, unless it reads byte ranges.
        let partial = self.reads_partially(&[NonZeroU64::MIN]).is_some();
        PartialDecoderCapability {
            partial_read: partial,
            partial_decode: partial,
        }
    }

    fn partial_encoder_capability(&self) -> PartialEncoderCapability {
        PartialEncoderCapability {
            partial_encode: false,
        }
    }
}

impl ArrayCodecTraits for VlenCodec {
    fn recommended_concurrency(
        &self,
        _shape: &[NonZeroU64],
        _data_type: &DataType,
    ) -> Result<RecommendedConcurrency, CodecError> {
        Ok(RecommendedConcurrency::new_maximum(1))
    }
}

#[cfg_attr(feature = "async", async_trait::async_trait)]
impl ArrayToBytesCodecTraits for VlenCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToBytesCodecTraits> {
        self as Arc<dyn ArrayToBytesCodecTraits>
    }

    fn encoded_representation(
        &self,
        _shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
    ) -> Result<BytesRepresentation, CodecError> {
        check_data_type(data_type)?;
        Ok(BytesRepresentation::UnboundedSize)
    }

    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        self.encode_chunk(bytes, shape, data_type, options)
            .map(Cow::Owned)
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytesRaw<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        self.decode_chunk(bytes, shape, data_type, options)
    }

    fn partial_decoder(
        self: Arc<Self>,
        input_handle: Arc<dyn BytesPartialDecoderTraits>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<Arc<dyn ArrayPartialDecoderTraits>, CodecError> {
        Ok(Arc::new(VlenPartialDecoder::new(
            self,
            input_handle,
            shape,
            data_type,
            fill_value,
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
        Ok(Arc::new(VlenPartialDecoder::new(
            self,
            input_handle,
            shape,
            data_type,
            fill_value,
        )?))
    }
}
