//! Partial decoding for `packbits`: read only the bytes that hold the
//! requested elements.
//!
//! Element `i` of a chunk (C order) occupies bits `[i * k, (i + 1) * k)` of
//! the packed stream, which starts one byte in with `"first_byte"` padding.
//! Each contiguous run of requested elements is read as the bytes that span
//! its bits and unpacked from the bit where it starts. With a padding byte,
//! that byte is read too and checked against the chunk's element count.
//!
//! One exception: whole components (e.g. `float32` without a bit range)
//! with a padding byte. zarrs' built-in writes those chunks without the
//! padding byte, and only the chunk's length tells the two forms apart, so
//! the whole chunk is read and decoded (a configuration the specification
//! notes has no benefit over `bytes`).

use std::sync::Arc;

use zarrs::array::codec::api::{
    ArrayBytes, ArrayBytesRaw, ArrayPartialDecoderTraits, BytesPartialDecoderTraits, CodecError,
    CodecOptions,
};
#[cfg(feature = "async")]
use zarrs::array::codec::api::{AsyncArrayPartialDecoderTraits, AsyncBytesPartialDecoderTraits};
use zarrs::array::{DataType, FillValue, Indexer, IndexerError};
use zarrs::storage::StorageError;
use zarrs::storage::byte_range::ByteRange;

use super::PACKBITS;
use super::packbits_codec::ChunkPlan;
use crate::codec::read_error;
use crate::kernels::packbits::unpack;

/// Partial decoder of the `packbits` codec over an input handle `T`.
pub(super) struct PackBitsPartialDecoder<T: ?Sized> {
    input_handle: Arc<T>,
    shape: Vec<u64>,
    fill_value: FillValue,
    plan: ChunkPlan,
}

/// The encoded bytes of one contiguous run of requested elements.
struct Run {
    /// The first element (C order within the chunk).
    index: u64,
    /// Byte range within the encoded chunk.
    start: u64,
    end: u64,
    /// The bit of the first byte where the run's first element starts.
    bit_offset: u32,
    /// Elements in the run.
    elements: u64,
}

impl<T: ?Sized> PackBitsPartialDecoder<T> {
    /// Wrap `input_handle`, which yields the encoded chunk packed by `plan`.
    pub(super) fn new(
        input_handle: Arc<T>,
        shape: &[std::num::NonZeroU64],
        fill_value: &FillValue,
        plan: ChunkPlan,
    ) -> Self {
        Self {
            input_handle,
            shape: shape.iter().map(|d| d.get()).collect(),
            fill_value: fill_value.clone(),
            plan,
        }
    }

    /// The runs of encoded bytes that hold the elements `indexer` selects.
    fn runs(&self, indexer: &dyn Indexer) -> Result<Vec<Run>, CodecError> {
        if indexer.dimensionality() != self.shape.len() {
            return Err(IndexerError::new_incompatible_dimensionality(
                indexer.dimensionality(),
                self.shape.len(),
            )
            .into());
        }
        let k = self.plan.element_bits();
        let offset = self.plan.packed_offset();
        // Indices are within the chunk (checked by the indexer), whose
        // packed length did not overflow, so neither do these products.
        Ok(indexer
            .iter_contiguous_linearised_indices(&self.shape)?
            .map(|(index, elements)| {
                let bit_start = index * k;
                let bit_end = (index + elements) * k;
                Run {
                    index,
                    start: offset + bit_start / 8,
                    end: offset + bit_end.div_ceil(8),
                    bit_offset: (bit_start % 8) as u32,
                    elements,
                }
            })
            .collect())
    }

    /// The byte ranges to request: one per run, then the padding byte.
    fn requests(&self, runs: &[Run]) -> std::vec::IntoIter<ByteRange> {
        let mut requests: Vec<ByteRange> = runs
            .iter()
            .map(|run| ByteRange::FromStart(run.start, Some(run.end - run.start)))
            .collect();
        if let Some(offset) = self.plan.padding_byte_offset() {
            requests.push(ByteRange::FromStart(offset, Some(1)));
        }
        requests.into_iter()
    }

    /// The fill value for every element `indexer` selects: the answer when
    /// the chunk does not exist.
    fn fill(&self, indexer: &dyn Indexer) -> Result<ArrayBytes<'static>, CodecError> {
        Ok(ArrayBytes::new_fill_value(
            &self.plan.data_type,
            indexer.len(),
            &self.fill_value,
        )?)
    }

    /// Decode the bytes read for `runs` (`None`: the chunk does not exist).
    fn decode_parts(
        &self,
        indexer: &dyn Indexer,
        runs: &[Run],
        parts: Option<Vec<ArrayBytesRaw<'_>>>,
    ) -> Result<ArrayBytes<'static>, CodecError> {
        let Some(parts) = parts else {
            return self.fill(indexer);
        };
        let expected_parts = runs.len() + usize::from(self.plan.padding_byte_offset().is_some());
        if parts.len() != expected_parts {
            return Err(CodecError::Other(format!(
                "{PACKBITS}: {expected_parts} byte ranges requested, {} returned",
                parts.len()
            )));
        }
        if self.plan.padding_byte_offset().is_some() {
            match parts.last().map(|p| p.as_ref()) {
                Some(&[byte]) => self.plan.check_padding_byte(byte)?,
                _ => return Err(truncated("the padding byte")),
            }
        }
        let element_bytes = self.plan.element_bytes();
        let mut decoded = vec![0u8; self.plan.decoded_len(indexer.len())?];
        let mut out = decoded.as_mut_slice();
        for (run, part) in runs.iter().zip(&parts) {
            if part.len() as u64 != run.end - run.start {
                return Err(truncated(&format!("bytes {}..{}", run.start, run.end)));
            }
            let run_len = usize::try_from(run.elements)
                .ok()
                .and_then(|n| n.checked_mul(element_bytes))
                .filter(|&n| n <= out.len())
                .ok_or_else(|| {
                    CodecError::Other(format!(
                        "{PACKBITS}: the indexer selects more elements than it reports"
                    ))
                })?;
            let (target, rest) = out.split_at_mut(run_len);
            unpack(&self.plan.layout, part, run.bit_offset, target)
                .map_err(|e| self.plan.kernel_error(&e))?;
            out = rest;
        }
        if !out.is_empty() {
            return Err(CodecError::Other(format!(
                "{PACKBITS}: the indexer selects fewer elements than it reports"
            )));
        }
        Ok(ArrayBytes::new_flen(decoded))
    }

    /// Decode the runs from the whole encoded chunk (`None`: it does not exist).
    fn decode_from_whole(
        &self,
        indexer: &dyn Indexer,
        runs: &[Run],
        whole: Option<ArrayBytesRaw<'_>>,
    ) -> Result<ArrayBytes<'static>, CodecError> {
        let Some(whole) = whole else {
            return self.fill(indexer);
        };
        let chunk = self.plan.decode_chunk(whole)?;
        let element_bytes = self.plan.element_bytes() as u64;
        let mut decoded = Vec::with_capacity(self.plan.decoded_len(indexer.len())?);
        for run in runs {
            let range = usize::try_from(run.index * element_bytes)
                .ok()
                .zip(usize::try_from((run.index + run.elements) * element_bytes).ok());
            let part = range
                .and_then(|(start, end)| chunk.get(start..end))
                .ok_or_else(|| {
                    CodecError::Other(format!(
                        "{PACKBITS}: the indexer selects elements outside the chunk"
                    ))
                })?;
            decoded.extend_from_slice(part);
        }
        Ok(ArrayBytes::new_flen(decoded))
    }
}

fn truncated(what: &str) -> CodecError {
    CodecError::Other(format!(
        "{PACKBITS}: the encoded chunk is truncated: {what} could not be read"
    ))
}

impl ArrayPartialDecoderTraits for PackBitsPartialDecoder<dyn BytesPartialDecoderTraits> {
    fn data_type(&self) -> &DataType {
        &self.plan.data_type
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
        let runs = self.runs(indexer)?;
        if self.plan.padding_byte_may_be_missing() {
            let whole = self.input_handle.decode(options)?;
            return self.decode_from_whole(indexer, &runs, whole);
        }
        let parts = self
            .input_handle
            .partial_decode_many(Box::new(self.requests(&runs)), options)
            .map_err(read_error(PACKBITS, "the bytes of the requested elements"))?;
        self.decode_parts(indexer, &runs, parts)
    }

    fn supports_partial_decode(&self) -> bool {
        self.input_handle.supports_partial_decode()
    }
}

#[cfg(feature = "async")]
#[async_trait::async_trait]
impl AsyncArrayPartialDecoderTraits for PackBitsPartialDecoder<dyn AsyncBytesPartialDecoderTraits> {
    fn data_type(&self) -> &DataType {
        &self.plan.data_type
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
        let runs = self.runs(indexer)?;
        if self.plan.padding_byte_may_be_missing() {
            let whole = self.input_handle.decode(options).await?;
            return self.decode_from_whole(indexer, &runs, whole);
        }
        let parts = self
            .input_handle
            .partial_decode_many(Box::new(self.requests(&runs)), options)
            .await
            .map_err(read_error(PACKBITS, "the bytes of the requested elements"))?;
        self.decode_parts(indexer, &runs, parts)
    }

    fn supports_partial_decode(&self) -> bool {
        self.input_handle.supports_partial_decode()
    }
}
