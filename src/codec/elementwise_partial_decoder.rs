//! A partial decoder for elementwise array->array codecs.
//!
//! `scale_offset` and `cast_value` map each element on its own, so decoding a
//! subset of a chunk only needs that subset of the encoded chunk: the request
//! is passed down unchanged and only the returned elements are decoded.

use std::sync::Arc;

#[cfg(feature = "async")]
use zarrs::array::codec::api::AsyncArrayPartialDecoderTraits;
use zarrs::array::codec::api::{ArrayBytes, ArrayPartialDecoderTraits, CodecError, CodecOptions};
use zarrs::array::{DataType, FillValue, Indexer};
use zarrs::storage::StorageError;

/// The decode step of an elementwise codec.
pub(crate) trait ElementwiseDecode: Send + Sync + 'static {
    /// Decode `bytes` (any number of whole elements) to `decoded_data_type`,
    /// on up to `options.concurrent_target()` threads.
    fn decode_elements<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        decoded_data_type: &DataType,
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError>;

    /// Encode the array's fill value, or say why it cannot be: the strict
    /// check that `encoded_fill_value` cannot make (see
    /// [`tolerant_fill_value`](crate::codec::tolerant_fill_value)). Run by
    /// `encode`, `decode` and the partial decoder, where zarrs passes the
    /// real fill value.
    fn checked_fill_value(
        &self,
        decoded_data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<FillValue, CodecError>;
}

/// Partial decoder for an elementwise codec `C` over an input handle `T`.
pub(crate) struct ElementwisePartialDecoder<C, T: ?Sized> {
    codec: Arc<C>,
    input_handle: Arc<T>,
    decoded_data_type: DataType,
}

impl<C, T: ?Sized> ElementwisePartialDecoder<C, T> {
    /// Wrap `input_handle`, which yields encoded elements.
    pub(crate) fn new(codec: Arc<C>, input_handle: Arc<T>, decoded_data_type: DataType) -> Self {
        Self {
            codec,
            input_handle,
            decoded_data_type,
        }
    }
}

impl<C: ElementwiseDecode, T: ?Sized> ElementwisePartialDecoder<C, T> {
    /// Check the fill value, then wrap `input_handle`.
    pub(crate) fn checked(
        codec: Arc<C>,
        input_handle: Arc<T>,
        decoded_data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Arc<Self>, CodecError> {
        codec.checked_fill_value(decoded_data_type, fill_value)?;
        Ok(Arc::new(Self::new(
            codec,
            input_handle,
            decoded_data_type.clone(),
        )))
    }
}

impl<C: ElementwiseDecode> ArrayPartialDecoderTraits
    for ElementwisePartialDecoder<C, dyn ArrayPartialDecoderTraits>
{
    fn data_type(&self) -> &DataType {
        &self.decoded_data_type
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
        let encoded = self.input_handle.partial_decode(indexer, options)?;
        self.codec
            .decode_elements(encoded, &self.decoded_data_type, options)
    }

    fn supports_partial_decode(&self) -> bool {
        self.input_handle.supports_partial_decode()
    }
}

#[cfg(feature = "async")]
#[async_trait::async_trait]
impl<C: ElementwiseDecode> AsyncArrayPartialDecoderTraits
    for ElementwisePartialDecoder<C, dyn AsyncArrayPartialDecoderTraits>
{
    fn data_type(&self) -> &DataType {
        &self.decoded_data_type
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
        let encoded = self.input_handle.partial_decode(indexer, options).await?;
        self.codec
            .decode_elements(encoded, &self.decoded_data_type, options)
    }

    fn supports_partial_decode(&self) -> bool {
        self.input_handle.supports_partial_decode()
    }
}
