//! Partial decoding for `bytes`: read only the bytes of the requested
//! elements.
//!
//! Element `i` of a chunk (in C order) is stored at bytes
//! `i * size .. (i + 1) * size`, so a request is turned into the contiguous
//! byte runs it covers, only those runs are read from the layer below (the
//! store, or a bytes->bytes codec that can serve byte ranges), and only the
//! read elements are decoded.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::ops::Range;
use std::sync::Arc;

use zarrs::array::codec::api::{
    ArrayBytes, ArrayBytesRaw, ArrayPartialDecoderTraits, BytesPartialDecoderTraits, CodecError,
    CodecOptions,
};
#[cfg(feature = "async")]
use zarrs::array::codec::api::{AsyncArrayPartialDecoderTraits, AsyncBytesPartialDecoderTraits};
use zarrs::array::{DataType, Endianness, FillValue, Indexer, IndexerError};
use zarrs::storage::StorageError;
use zarrs::storage::byte_range::ByteRange;

use super::BYTES;
use super::bytes_layout::{Direction, Plan};
use crate::codec::read_error;

/// Partial decoder of the `bytes` codec over an input handle `T`.
pub(super) struct BytesPartialDecoder<T: ?Sized> {
    input_handle: Arc<T>,
    shape: Vec<u64>,
    data_type: DataType,
    fill_value: FillValue,
    endian: Option<Endianness>,
    plan: Plan,
}

impl<T: ?Sized> BytesPartialDecoder<T> {
    /// Wrap `input_handle`, which yields the encoded chunk.
    ///
    /// # Errors
    /// If the codec cannot store `data_type` (see [`Plan::new`]).
    pub(super) fn new(
        input_handle: Arc<T>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        endian: Option<Endianness>,
    ) -> Result<Self, CodecError> {
        Ok(Self {
            input_handle,
            shape: shape.iter().map(|d| d.get()).collect(),
            data_type: data_type.clone(),
            fill_value: fill_value.clone(),
            endian,
            plan: Plan::new(data_type, endian)?,
        })
    }

    /// The byte runs of the chunk that hold the elements `indexer` selects.
    fn byte_ranges(&self, indexer: &dyn Indexer) -> Result<Vec<Range<u64>>, CodecError> {
        if indexer.dimensionality() != self.shape.len() {
            return Err(IndexerError::new_incompatible_dimensionality(
                indexer.dimensionality(),
                self.shape.len(),
            )
            .into());
        }
        Ok(indexer
            .iter_contiguous_byte_ranges(&self.shape, self.plan.size)?
            .collect())
    }

    /// Decode the runs read for `ranges` (`None`: the chunk does not exist).
    fn decode_parts<'a>(
        &self,
        indexer: &dyn Indexer,
        ranges: &[Range<u64>],
        parts: Option<Vec<ArrayBytesRaw<'a>>>,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let Some(mut parts) = parts else {
            return Ok(ArrayBytes::new_fill_value(
                &self.data_type,
                indexer.len(),
                &self.fill_value,
            )?);
        };
        if parts.len() != ranges.len() {
            return Err(CodecError::Other(format!(
                "{BYTES}: {} byte ranges requested, {} returned",
                ranges.len(),
                parts.len()
            )));
        }
        for (part, range) in parts.iter().zip(ranges) {
            if part.len() as u64 != range.end - range.start {
                return Err(CodecError::Other(format!(
                    "{BYTES}: the encoded chunk is truncated: bytes {range:?} requested, {} \
                     returned",
                    part.len()
                )));
            }
        }
        // One run (a whole chunk, or a contiguous slab) passes through as it
        // came, borrowed or owned; several are joined.
        let bytes: Cow<'a, [u8]> = if parts.len() == 1 {
            parts.swap_remove(0)
        } else {
            Cow::Owned(parts.concat())
        };
        self.plan
            .check_len(Direction::Decode, &bytes, indexer.len(), &self.data_type)?;
        let decoded = self
            .plan
            .apply(Direction::Decode, bytes, &self.data_type, self.endian)?;
        Ok(ArrayBytes::new_flen(decoded))
    }
}

/// The byte ranges to request from the input handle (owned: the async
/// handle keeps the iterator for as long as its answer lives).
fn request(ranges: &[Range<u64>]) -> std::vec::IntoIter<ByteRange> {
    let requests: Vec<ByteRange> = ranges.iter().cloned().map(ByteRange::new).collect();
    requests.into_iter()
}

impl ArrayPartialDecoderTraits for BytesPartialDecoder<dyn BytesPartialDecoderTraits> {
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
        let ranges = self.byte_ranges(indexer)?;
        let parts = self
            .input_handle
            .partial_decode_many(Box::new(request(&ranges)), options)
            .map_err(read_error(BYTES, "the bytes of the requested elements"))?;
        self.decode_parts(indexer, &ranges, parts)
    }

    fn supports_partial_decode(&self) -> bool {
        self.input_handle.supports_partial_decode()
    }
}

#[cfg(feature = "async")]
#[async_trait::async_trait]
impl AsyncArrayPartialDecoderTraits for BytesPartialDecoder<dyn AsyncBytesPartialDecoderTraits> {
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
        let ranges = self.byte_ranges(indexer)?;
        let parts = self
            .input_handle
            .partial_decode_many(Box::new(request(&ranges)), options)
            .await
            .map_err(read_error(BYTES, "the bytes of the requested elements"))?;
        self.decode_parts(indexer, &ranges, parts)
    }

    fn supports_partial_decode(&self) -> bool {
        self.input_handle.supports_partial_decode()
    }
}
