//! Partial decoding for `transpose`: only the requested part of the chunk.
//!
//! A request for a region of the decoded chunk is a region of the encoded
//! chunk with its start and shape permuted, so that region alone is requested
//! from the input handle and the result is transposed back. A request for a
//! list of elements becomes the list of their permuted indices, and the
//! elements come back in the requested order with no copy.

use std::sync::Arc;

#[cfg(feature = "async")]
use zarrs::array::codec::api::AsyncArrayPartialDecoderTraits;
use zarrs::array::codec::api::{ArrayBytes, ArrayPartialDecoderTraits, CodecError, CodecOptions};
use zarrs::array::{ArrayIndices, ArraySubset, DataType, Indexer};
use zarrs::storage::StorageError;

use super::TRANSPOSE;
use super::transpose_codec::permute_array_bytes;
use crate::kernels::transpose::inverse_permutation;

/// Partial decoder of a transposed chunk read through `T`.
pub(super) struct TransposePartialDecoder<T: ?Sized> {
    input_handle: Arc<T>,
    /// The codec's permutation: encoded axis `i` is decoded axis `perm[i]`.
    perm: Vec<usize>,
    /// The inverse permutation, which decodes.
    inverse: Vec<usize>,
    data_type: DataType,
}

/// A request, translated to the encoded chunk.
enum Request {
    /// A region: the encoded region and its shape.
    Region(ArraySubset, Vec<usize>),
    /// Single elements, in the requested order.
    Elements(Vec<ArrayIndices>),
}

impl<T: ?Sized> TransposePartialDecoder<T> {
    /// Wrap `input_handle`, which decodes the encoded (transposed) chunk.
    pub(super) fn new(
        input_handle: Arc<T>,
        perm: Vec<usize>,
        data_type: DataType,
    ) -> Result<Self, CodecError> {
        let inverse = inverse_permutation(&perm)
            .map_err(|e| CodecError::Other(format!("{TRANSPOSE}: {e}")))?;
        Ok(Self {
            input_handle,
            perm,
            inverse,
            data_type,
        })
    }

    fn permute<V: Copy>(&self, values: &[V]) -> Vec<V> {
        self.perm.iter().map(|&axis| values[axis]).collect()
    }

    /// The request `indexer` makes of the encoded chunk.
    fn request(&self, indexer: &dyn Indexer) -> Result<Request, CodecError> {
        let dimensionality = self.perm.len();
        let wrong = |got: usize| {
            CodecError::Other(format!(
                "{TRANSPOSE}: a request of {got} dimensions for a chunk of {dimensionality}"
            ))
        };
        if indexer.dimensionality() != dimensionality {
            return Err(wrong(indexer.dimensionality()));
        }
        if let Some(subset) = indexer.as_array_subset() {
            let (start, shape) = (self.permute(&subset.start()), self.permute(&subset.shape()));
            let shape_usize = shape
                .iter()
                .map(|&d| usize::try_from(d))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| CodecError::Other(format!("{TRANSPOSE}: request too large")))?;
            let region = ArraySubset::new_with_start_shape(start, shape)
                .map_err(|e| CodecError::Other(format!("{TRANSPOSE}: {e}")))?;
            Ok(Request::Region(region, shape_usize))
        } else {
            indexer
                .iter_indices()
                .map(|index| {
                    if index.len() == dimensionality {
                        Ok(self.permute(&index))
                    } else {
                        Err(wrong(index.len()))
                    }
                })
                .collect::<Result<_, _>>()
                .map(Request::Elements)
        }
    }

    /// Transpose the encoded region `bytes` of `shape` back.
    fn finish<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[usize],
    ) -> Result<ArrayBytes<'a>, CodecError> {
        permute_array_bytes(bytes, shape, &self.inverse, &self.data_type)
    }
}

impl ArrayPartialDecoderTraits for TransposePartialDecoder<dyn ArrayPartialDecoderTraits> {
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
        match self.request(indexer)? {
            Request::Region(region, shape) => {
                let bytes = self.input_handle.partial_decode(&region, options)?;
                self.finish(bytes, &shape)
            }
            Request::Elements(indices) => self.input_handle.partial_decode(&indices, options),
        }
    }

    fn supports_partial_decode(&self) -> bool {
        self.input_handle.supports_partial_decode()
    }
}

#[cfg(feature = "async")]
#[async_trait::async_trait]
impl AsyncArrayPartialDecoderTraits
    for TransposePartialDecoder<dyn AsyncArrayPartialDecoderTraits>
{
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
        match self.request(indexer)? {
            Request::Region(region, shape) => {
                let bytes = self.input_handle.partial_decode(&region, options).await?;
                self.finish(bytes, &shape)
            }
            Request::Elements(indices) => self.input_handle.partial_decode(&indices, options).await,
        }
    }

    fn supports_partial_decode(&self) -> bool {
        self.input_handle.supports_partial_decode()
    }
}
