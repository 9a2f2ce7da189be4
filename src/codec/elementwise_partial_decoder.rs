//! A partial decoder for elementwise array->array codecs.
//!
//! `scale_offset` and `cast_value` map each element on its own, so decoding a
//! subset of a chunk only needs that subset of the encoded chunk: the request
//! is passed down and only the returned elements are decoded. A window that
//! cuts the chunk's rows is first widened to whole rows (see [`super::slab`]),
//! so the store is asked for one range instead of one per row, and the
//! window's elements are picked out before they are decoded.

use std::sync::Arc;

#[cfg(feature = "async")]
use zarrs::array::codec::api::AsyncArrayPartialDecoderTraits;
use zarrs::array::codec::api::{ArrayBytes, ArrayPartialDecoderTraits, CodecError, CodecOptions};
use zarrs::array::{ArraySubset, DataType, FillValue, Indexer};
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
    /// `encode` and `validate_codecs`, where zarrs passes the real fill
    /// value, and by the partial decoder (which tolerates a fill value the
    /// codec cannot carry).
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
    /// The chunk's shape, which the widened reads are laid out in.
    chunk_shape: Vec<u64>,
    /// The array's fill value, when decoding the encoded fill value does not
    /// give its bits back (`scale_offset` with an inexact `x / scale +
    /// offset`, `cast_value` turning `-0.0` into `+0.0`): a missing chunk
    /// then reads as this value, as it does in a whole-chunk read, where
    /// zarrs fills it without decoding. `None` when decoding gives it back.
    inexact_fill_value: Option<FillValue>,
}

impl<C, T: ?Sized> ElementwisePartialDecoder<C, T> {
    /// Wrap `input_handle`, which yields encoded elements of a chunk of
    /// `chunk_shape`; `inexact_fill_value` as the field says.
    pub(crate) fn new(
        codec: Arc<C>,
        input_handle: Arc<T>,
        decoded_data_type: DataType,
        chunk_shape: Vec<u64>,
        inexact_fill_value: Option<FillValue>,
    ) -> Self {
        Self {
            codec,
            input_handle,
            decoded_data_type,
            chunk_shape,
            inexact_fill_value,
        }
    }

    /// The slab to read for `indexer`, with `indexer` relative to it, if
    /// widening pays (see [`super::slab`]).
    fn widened(
        &self,
        indexer: &dyn Indexer,
        encoded_data_type: &DataType,
        supports_partial_decode: bool,
    ) -> Option<(ArraySubset, ArraySubset)> {
        // An input that decodes whole chunks anyway gains nothing.
        if !supports_partial_decode {
            return None;
        }
        let size = encoded_data_type.fixed_size()?;
        let slab = super::slab::slab(indexer, &self.chunk_shape, size)?;
        let relative = indexer.as_array_subset()?.relative_to(slab.start()).ok()?;
        Some((slab, relative))
    }

    /// The array's fill value for every element of `indexer`: what a
    /// missing chunk holds (see `inexact_fill_value`).
    fn fill(
        &self,
        indexer: &dyn Indexer,
        fill_value: &FillValue,
    ) -> Result<ArrayBytes<'static>, CodecError> {
        Ok(ArrayBytes::new_fill_value(
            &self.decoded_data_type,
            indexer.len(),
            fill_value,
        )?)
    }
}

/// The elements of `relative` out of `slab_bytes`, decoded from a slab of `slab_shape`.
fn pick<'a>(
    slab_bytes: &ArrayBytes<'_>,
    relative: &ArraySubset,
    slab_shape: &[u64],
    encoded_data_type: &DataType,
) -> Result<ArrayBytes<'a>, CodecError> {
    Ok(slab_bytes
        .extract_array_subset(relative, slab_shape, encoded_data_type)?
        .into_owned())
}

impl<C: ElementwiseDecode, T: ?Sized> ElementwisePartialDecoder<C, T> {
    /// Check the fill value, then wrap `input_handle`. A fill value the
    /// codec cannot carry (see [`FILL_VALUE_CLAUSE`](crate::codec::FILL_VALUE_CLAUSE))
    /// is inexact: missing chunks read as it, stored ones decode as stored.
    pub(crate) fn checked(
        codec: Arc<C>,
        input_handle: Arc<T>,
        chunk_shape: &[std::num::NonZeroU64],
        decoded_data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Arc<Self>, CodecError> {
        let exact = match codec.checked_fill_value(decoded_data_type, fill_value) {
            Ok(encoded) => {
                let decoded = codec.decode_elements(
                    ArrayBytes::new_flen(encoded.as_ne_bytes().to_vec()),
                    decoded_data_type,
                    &CodecOptions::default(),
                )?;
                decoded.into_fixed()?.as_ref() == fill_value.as_ne_bytes()
            }
            Err(e) if crate::codec::is_fill_value_error(&e.to_string()) => false,
            Err(e) => return Err(e),
        };
        Ok(Arc::new(Self::new(
            codec,
            input_handle,
            decoded_data_type.clone(),
            chunk_shape.iter().map(|n| n.get()).collect(),
            (!exact).then(|| fill_value.clone()),
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
        let input = &self.input_handle;
        // The store is asked whether the chunk exists only for an inexact
        // fill value.
        if let Some(fill_value) = &self.inexact_fill_value
            && !input.exists()?
        {
            return self.fill(indexer, fill_value);
        }
        let encoded_type = input.data_type();
        let encoded = match self.widened(indexer, encoded_type, input.supports_partial_decode()) {
            Some((slab, relative)) => {
                let slab_bytes = input.partial_decode(&slab, options)?;
                pick(&slab_bytes, &relative, slab.shape(), encoded_type)?
            }
            None => input.partial_decode(indexer, options)?,
        };
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
        let input = &self.input_handle;
        if let Some(fill_value) = &self.inexact_fill_value
            && !input.exists().await?
        {
            return self.fill(indexer, fill_value);
        }
        let encoded_type = input.data_type();
        let encoded = match self.widened(indexer, encoded_type, input.supports_partial_decode()) {
            Some((slab, relative)) => {
                let slab_bytes = input.partial_decode(&slab, options).await?;
                pick(&slab_bytes, &relative, slab.shape(), encoded_type)?
            }
            None => input.partial_decode(indexer, options).await?,
        };
        self.codec
            .decode_elements(encoded, &self.decoded_data_type, options)
    }

    fn supports_partial_decode(&self) -> bool {
        self.input_handle.supports_partial_decode()
    }
}
