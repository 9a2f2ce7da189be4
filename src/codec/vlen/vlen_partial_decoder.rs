//! Partial decoding for `zarrs.vlen`: the index, then only the bytes of the
//! requested elements.
//!
//! When the data chain is a lone `bytes` codec, the index is at the start and
//! its encoded size is bounded, a request reads the length field and the
//! index (one read when the index size is fixed), decodes the index once (it
//! is kept for later requests), and then reads only the byte ranges of the
//! requested runs of elements. Otherwise the whole chunk is read and decoded
//! (zarrs then caches it) and the requested elements are copied out.
//!
//! Before reading any element, the decoder reads the last byte the offsets
//! claim: zarrs' stores allocate a read's length before reading, so a
//! corrupt (but non-decreasing) offset must not reach them as the length of
//! a read.
//!
//! An `end` index is not read in pieces: finding it needs a suffix read, and
//! zarrs' partial-read interface does not give the chunk size to check a
//! corrupt length against (inside a shard, a suffix longer than the inner
//! chunk underflows in zarrs). In a partial read the last offset can only be
//! checked to lie within the stored bytes (inside a shard: within the
//! shard), not to end exactly at the chunk's end; the offsets are still
//! checked to start at 0 and never decrease, and each read must return the
//! bytes asked for.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use zarrs::array::codec::api::{
    ArrayBytes, ArrayBytesOffsets, ArrayPartialDecoderTraits, BytesPartialDecoderTraits,
    BytesRepresentation, CodecError, CodecOptions,
};
#[cfg(feature = "async")]
use zarrs::array::codec::api::{AsyncArrayPartialDecoderTraits, AsyncBytesPartialDecoderTraits};
use zarrs::array::{DataType, FillValue, Indexer};
use zarrs::storage::StorageError;
use zarrs::storage::byte_range::ByteRange;

use super::VLEN;
use super::VlenCodec;
use super::vlen_codec::{check_data_type, index_count, layout_error};
use crate::codec::read_error;
use crate::kernels::vlen::{self as kernel, INDEX_LEN_SIZE, VlenError};

/// What each read of a partial decode is for, in its errors.
const HEADER: &str = "the index length field and index";
const LAST: &str = "the byte at the last offset";
const ELEMENTS: &str = "the bytes of the requested elements";
const INDEX: &str = "the index";

/// Partial decoder of a `zarrs.vlen` chunk read through `T`.
pub(super) struct VlenPartialDecoder<T: ?Sized> {
    codec: Arc<VlenCodec>,
    input_handle: Arc<T>,
    shape: Vec<NonZeroU64>,
    data_type: DataType,
    fill_value: FillValue,
    count: NonZeroU64,
    /// The size of the encoded index if byte ranges are read, else `None`.
    index_size: Option<BytesRepresentation>,
    /// The decoded index, once read.
    index: OnceLock<Arc<Index>>,
}

/// The first read of a chunk.
struct Header<'b> {
    /// The length of the encoded index.
    encoded_len: u64,
    /// The encoded index, if the first read held it.
    index: Option<Cow<'b, [u8]>>,
}

/// A decoded index, kept for later requests.
struct Index {
    /// The length of the encoded index: the data starts after it.
    encoded_len: u64,
    /// The offsets, checked to start at 0 and never decrease.
    offsets: ArrayBytesOffsets<'static>,
}

impl<T: ?Sized> VlenPartialDecoder<T> {
    /// A partial decoder for a chunk of `shape`.
    pub(super) fn new(
        codec: Arc<VlenCodec>,
        input_handle: Arc<T>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Self, CodecError> {
        check_data_type(data_type)?;
        let count = index_count(shape)?;
        Ok(Self {
            index_size: codec.reads_partially(&[count]),
            codec,
            input_handle,
            shape: shape.to_vec(),
            data_type: data_type.clone(),
            fill_value: fill_value.clone(),
            count,
            index: OnceLock::new(),
        })
    }

    fn fill(&self, indexer: &dyn Indexer) -> Result<ArrayBytes<'static>, CodecError> {
        Ok(ArrayBytes::new_fill_value(
            &self.data_type,
            indexer.len(),
            &self.fill_value,
        )?)
    }

    fn runs(&self, indexer: &dyn Indexer) -> Result<Vec<(usize, usize)>, CodecError> {
        request_runs(VLEN, &self.shape, indexer)
    }

    /// The first read: the length field and, if the index has a fixed size,
    /// the index with it.
    fn header_range(&self) -> ByteRange {
        let index_len = match self.index_size {
            Some(BytesRepresentation::FixedSize(n)) => n,
            _ => 0,
        };
        ByteRange::FromStart(0, Some(INDEX_LEN_SIZE as u64 + index_len))
    }

    /// The index length from the first read, checked against what the index
    /// chain can produce; and the index, if the first read held it.
    fn parse_header<'b>(&self, header: Cow<'b, [u8]>) -> Result<Header<'b>, CodecError> {
        let field = header.get(..INDEX_LEN_SIZE).unwrap_or_default();
        let index_len = kernel::read_index_len(field)
            .ok_or(VlenError::TooShort { len: header.len() })
            .map_err(layout_error)?;
        let mismatch = |expected: String| {
            layout_error(VlenError::IndexLenMismatch {
                index_len,
                expected,
            })
        };
        match self.index_size {
            Some(BytesRepresentation::FixedSize(n)) if n != index_len => {
                Err(mismatch(format!("exactly {n} bytes")))
            }
            Some(BytesRepresentation::FixedSize(_)) => {
                let index = match header {
                    Cow::Borrowed(h) => Cow::Borrowed(h.get(INDEX_LEN_SIZE..).unwrap_or_default()),
                    Cow::Owned(mut h) => {
                        h.drain(..INDEX_LEN_SIZE.min(h.len()));
                        Cow::Owned(h)
                    }
                };
                Ok(Header {
                    encoded_len: index_len,
                    index: Some(index),
                })
            }
            Some(BytesRepresentation::BoundedSize(n)) if index_len > n => {
                Err(mismatch(format!("at most {n} bytes")))
            }
            _ => Ok(Header {
                encoded_len: index_len,
                index: None,
            }),
        }
    }

    /// Decode the index and check its offsets.
    fn decode_index(
        &self,
        encoded_len: u64,
        index: Cow<'_, [u8]>,
        options: &CodecOptions,
    ) -> Result<Index, CodecError> {
        if index.len() as u64 != encoded_len {
            return Err(layout_error(VlenError::IndexLenOutOfRange {
                index_len: encoded_len,
                available: index.len(),
            }));
        }
        let offsets = self
            .codec
            .decode_index(index, self.count, options)?
            .into_owned();
        Ok(Index {
            encoded_len,
            offsets,
        })
    }

    /// The read of the last data byte the offsets claim, if any: before any
    /// element is read, it shows that the chunk holds that many bytes, so
    /// that a corrupt offset cannot make the store allocate for a read of an
    /// impossible length.
    fn probe_range(index: &Index) -> Result<Option<ByteRange>, CodecError> {
        let last = index.offsets.last() as u64;
        if last == 0 {
            return Ok(None);
        }
        (INDEX_LEN_SIZE as u64)
            .checked_add(index.encoded_len)
            .and_then(|start| start.checked_add(last - 1))
            .map(|at| Some(ByteRange::FromStart(at, Some(1))))
            .ok_or_else(|| layout_error(VlenError::LastOffset { last, data_len: 0 }))
    }

    /// Check the probe's read and keep the index.
    fn keep_index(&self, index: Index, probe: Option<&[u8]>) -> Result<Arc<Index>, CodecError> {
        if let Some(probe) = probe
            && probe.len() != 1
        {
            let last = index.offsets.last();
            return Err(CodecError::Other(format!(
                "{VLEN}: the chunk is shorter than its last offset {last} says"
            )));
        }
        let index = Arc::new(index);
        Ok(self.index.get_or_init(|| index).clone())
    }

    /// The read of an index of `len` bytes.
    fn index_range(len: u64) -> ByteRange {
        ByteRange::FromStart(INDEX_LEN_SIZE as u64, Some(len))
    }

    /// The non-empty byte ranges of the data (relative to the data) and the
    /// output offsets of `runs`.
    fn plan(
        index: &Index,
        runs: &[(usize, usize)],
    ) -> Result<(Vec<Range<usize>>, Vec<usize>), CodecError> {
        let (ranges, out_offsets) =
            kernel::plan_runs(&index.offsets, runs).map_err(layout_error)?;
        Ok((
            ranges.into_iter().filter(|r| !r.is_empty()).collect(),
            out_offsets,
        ))
    }

    /// Decode a whole chunk and take the requested elements.
    fn decode_whole<'a>(
        &self,
        chunk: Cow<'a, [u8]>,
        runs: &[(usize, usize)],
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let decoded = self
            .codec
            .decode_chunk(chunk, &self.shape, &self.data_type, options)?;
        // `count - 1` elements: `index_count` checked it fits in `usize`.
        extract_runs(VLEN, decoded, runs, (self.count.get() - 1) as usize)
    }
}

/// Concatenate the bytes read for `ranges`, checking each read's length.
fn concat(
    parts: Vec<Cow<'_, [u8]>>,
    ranges: &[Range<usize>],
    out_offsets: Vec<usize>,
) -> Result<ArrayBytes<'static>, CodecError> {
    let len = out_offsets.last().copied().unwrap_or_default();
    let mut data = Vec::with_capacity(len);
    if parts.len() != ranges.len() {
        return Err(CodecError::Other(format!(
            "{VLEN}: {} byte ranges read, {} requested",
            parts.len(),
            ranges.len()
        )));
    }
    for (part, range) in parts.iter().zip(ranges) {
        if part.len() != range.len() {
            return Err(CodecError::Other(format!(
                "{VLEN}: read {} bytes of element data at {range:?}, expected {}",
                part.len(),
                range.len()
            )));
        }
        data.extend_from_slice(part);
    }
    finish(VLEN, data, out_offsets)
}

/// Variable-length array bytes from `data` and its offsets, errors named for `codec`.
fn finish(
    codec: &str,
    data: Vec<u8>,
    offsets: Vec<usize>,
) -> Result<ArrayBytes<'static>, CodecError> {
    let offsets = ArrayBytesOffsets::new(offsets)?;
    ArrayBytes::new_vlen(data, offsets).map_err(|e| CodecError::Other(format!("{codec}: {e}")))
}

/// The runs `(first element, count)` of a request for a chunk of `shape`,
/// in output order.
pub(crate) fn request_runs(
    codec: &str,
    shape: &[NonZeroU64],
    indexer: &dyn Indexer,
) -> Result<Vec<(usize, usize)>, CodecError> {
    let shape: Vec<u64> = shape.iter().map(|d| d.get()).collect();
    let too_large = || CodecError::Other(format!("{codec}: element index exceeds usize::MAX"));
    indexer
        .iter_contiguous_linearised_indices(&shape)?
        .map(|(start, count)| {
            Ok((
                usize::try_from(start).map_err(|_| too_large())?,
                usize::try_from(count).map_err(|_| too_large())?,
            ))
        })
        .collect()
}

/// The requested elements (`runs` from [`request_runs`]) of a whole decoded
/// chunk of `num_elements`.
pub(crate) fn extract_runs<'a>(
    codec: &str,
    decoded: ArrayBytes<'a>,
    runs: &[(usize, usize)],
    num_elements: usize,
) -> Result<ArrayBytes<'a>, CodecError> {
    if runs == [(0, num_elements)] {
        return Ok(decoded);
    }
    let (data, offsets) = decoded.into_variable()?.into_parts();
    let (data, offsets) = kernel::gather_runs(&data, &offsets, runs)
        .map_err(|e| CodecError::Other(format!("{codec}: {e}")))?;
    finish(codec, data, offsets)
}

/// The reads of the element bytes, shifted past the length field and index.
fn data_ranges(ranges: &[Range<usize>], index_len: u64) -> Vec<ByteRange> {
    let start = INDEX_LEN_SIZE as u64 + index_len;
    ranges
        .iter()
        .map(|r| ByteRange::FromStart(start.saturating_add(r.start as u64), Some(r.len() as u64)))
        .collect()
}

impl ArrayPartialDecoderTraits for VlenPartialDecoder<dyn BytesPartialDecoderTraits> {
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
        let runs = self.runs(indexer)?;
        let input = &self.input_handle;
        if self.index_size.is_none() {
            return match input.decode(options)? {
                Some(chunk) => self.decode_whole(chunk, &runs, options),
                None => self.fill(indexer),
            };
        }
        let index = match self.index.get() {
            Some(index) => index.clone(),
            None => {
                let Some(header) = input
                    .partial_decode(self.header_range(), options)
                    .map_err(read_error(VLEN, HEADER))?
                else {
                    return self.fill(indexer);
                };
                let Header { encoded_len, index } = self.parse_header(header)?;
                let index = match index {
                    Some(index) => index,
                    None => match input
                        .partial_decode(Self::index_range(encoded_len), options)
                        .map_err(read_error(VLEN, INDEX))?
                    {
                        Some(index) => index,
                        None => return self.fill(indexer),
                    },
                };
                let index = self.decode_index(encoded_len, index, options)?;
                let probe = match Self::probe_range(&index)? {
                    None => None,
                    Some(range) => match input.partial_decode(range, options).map_err(
                        read_error(VLEN, format!("{LAST} ({})", index.offsets.last())),
                    )? {
                        Some(probe) => Some(probe),
                        None => return self.fill(indexer),
                    },
                };
                self.keep_index(index, probe.as_deref())?
            }
        };
        let (ranges, out_offsets) = Self::plan(&index, &runs)?;
        let parts = if ranges.is_empty() {
            Vec::new()
        } else {
            let reads = data_ranges(&ranges, index.encoded_len);
            match input
                .partial_decode_many(Box::new(reads.into_iter()), options)
                .map_err(read_error(VLEN, ELEMENTS))?
            {
                Some(parts) => parts,
                None => return self.fill(indexer),
            }
        };
        concat(parts, &ranges, out_offsets)
    }

    fn supports_partial_decode(&self) -> bool {
        self.index_size.is_some() && self.input_handle.supports_partial_decode()
    }
}

#[cfg(feature = "async")]
#[async_trait::async_trait]
impl AsyncArrayPartialDecoderTraits for VlenPartialDecoder<dyn AsyncBytesPartialDecoderTraits> {
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
        let runs = self.runs(indexer)?;
        let input = &self.input_handle;
        if self.index_size.is_none() {
            return match input.decode(options).await? {
                Some(chunk) => self.decode_whole(chunk, &runs, options),
                None => self.fill(indexer),
            };
        }
        let index =
            match self.index.get() {
                Some(index) => index.clone(),
                None => {
                    let Some(header) = input
                        .partial_decode(self.header_range(), options)
                        .await
                        .map_err(read_error(VLEN, HEADER))?
                    else {
                        return self.fill(indexer);
                    };
                    let Header { encoded_len, index } = self.parse_header(header)?;
                    let index = match index {
                        Some(index) => index,
                        None => match input
                            .partial_decode(Self::index_range(encoded_len), options)
                            .await
                            .map_err(read_error(VLEN, INDEX))?
                        {
                            Some(index) => index,
                            None => return self.fill(indexer),
                        },
                    };
                    let index = self.decode_index(encoded_len, index, options)?;
                    let probe =
                        match Self::probe_range(&index)? {
                            None => None,
                            Some(range) => {
                                match input.partial_decode(range, options).await.map_err(
                                    read_error(VLEN, format!("{LAST} ({})", index.offsets.last())),
                                )? {
                                    Some(probe) => Some(probe),
                                    None => return self.fill(indexer),
                                }
                            }
                        };
                    self.keep_index(index, probe.as_deref())?
                }
            };
        let (ranges, out_offsets) = Self::plan(&index, &runs)?;
        let parts = if ranges.is_empty() {
            Vec::new()
        } else {
            let reads = data_ranges(&ranges, index.encoded_len);
            match input
                .partial_decode_many(Box::new(reads.into_iter()), options)
                .await
                .map_err(read_error(VLEN, ELEMENTS))?
            {
                Some(parts) => parts,
                None => return self.fill(indexer),
            }
        };
        concat(parts, &ranges, out_offsets)
    }

    fn supports_partial_decode(&self) -> bool {
        self.index_size.is_some() && self.input_handle.supports_partial_decode()
    }
}
