//! Partial decoding for `vlen-utf8` / `vlen-bytes`: the whole chunk, then the
//! requested elements.
//!
//! The layout has no index, so finding element `j` means walking the length
//! fields of every element before it: the whole chunk is read (zarrs caches
//! it in front of this codec, since the codec reports no partial read),
//! decoded and checked, and the requested elements are copied out.

use std::num::NonZeroU64;
use std::sync::Arc;

use zarrs::array::codec::api::{
    ArrayBytes, ArrayPartialDecoderTraits, BytesPartialDecoderTraits, CodecError, CodecOptions,
};
#[cfg(feature = "async")]
use zarrs::array::codec::api::{AsyncArrayPartialDecoderTraits, AsyncBytesPartialDecoderTraits};
use zarrs::array::{DataType, FillValue, Indexer};
use zarrs::storage::StorageError;

use super::VlenV2Codec;
use crate::codec::vlen::vlen_partial_decoder::{extract_runs, request_runs};

/// Partial decoder of a `vlen-utf8` / `vlen-bytes` chunk read through `T`.
pub(super) struct VlenV2PartialDecoder<T: ?Sized> {
    codec: VlenV2Codec,
    input_handle: Arc<T>,
    shape: Vec<NonZeroU64>,
    data_type: DataType,
    fill_value: FillValue,
    /// The chunk's element count, checked to fit in `usize`.
    num_elements: usize,
}

impl<T: ?Sized> VlenV2PartialDecoder<T> {
    /// A partial decoder for a chunk of `shape`.
    pub(super) fn new(
        codec: VlenV2Codec,
        input_handle: Arc<T>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Self, CodecError> {
        let name = codec.kind().name();
        let num_elements = crate::codec::num_elements(name, shape)?;
        let num_elements = usize::try_from(num_elements).map_err(|_| {
            CodecError::Other(format!(
                "{name}: chunk shape {shape:?} has more elements than fit in memory"
            ))
        })?;
        Ok(Self {
            codec,
            input_handle,
            shape: shape.to_vec(),
            data_type: data_type.clone(),
            fill_value: fill_value.clone(),
            num_elements,
        })
    }

    /// The requested elements of `chunk`, or the fill value if it is absent.
    fn decode(
        &self,
        chunk: Option<&[u8]>,
        indexer: &dyn Indexer,
    ) -> Result<ArrayBytes<'static>, CodecError> {
        let Some(chunk) = chunk else {
            return Ok(ArrayBytes::new_fill_value(
                &self.data_type,
                indexer.len(),
                &self.fill_value,
            )?);
        };
        let name = self.codec.kind().name();
        let runs = request_runs(name, &self.shape, indexer)?;
        let decoded = self
            .codec
            .decode_chunk(chunk, &self.shape, &self.data_type)?;
        extract_runs(name, decoded, &runs, self.num_elements)
    }
}

impl ArrayPartialDecoderTraits for VlenV2PartialDecoder<dyn BytesPartialDecoderTraits> {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    fn exists(&self) -> Result<bool, StorageError> {
        self.input_handle.exists()
    }

    fn size_held(&self) -> usize {
        self.input_handle.size_held()
    }

    fn partial_decode(
        &self,
        indexer: &dyn Indexer,
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'_>, CodecError> {
        let chunk = self.input_handle.decode(options)?;
        self.decode(chunk.as_deref(), indexer)
    }

    fn supports_partial_decode(&self) -> bool {
        false
    }
}

#[cfg(feature = "async")]
#[async_trait::async_trait]
impl AsyncArrayPartialDecoderTraits for VlenV2PartialDecoder<dyn AsyncBytesPartialDecoderTraits> {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    async fn exists(&self) -> Result<bool, StorageError> {
        self.input_handle.exists().await
    }

    fn size_held(&self) -> usize {
        self.input_handle.size_held()
    }

    async fn partial_decode<'a>(
        &'a self,
        indexer: &dyn Indexer,
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let chunk = self.input_handle.decode(options).await?;
        self.decode(chunk.as_deref(), indexer)
    }

    fn supports_partial_decode(&self) -> bool {
        false
    }
}
