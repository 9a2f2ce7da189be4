//! The fused path: from the stored elements of a `[scale_offset?,
//! cast_value?] + bytes + bytes->bytes*` chain (`bytes` alone included) to
//! the final values in the output window, block by block, with the crate's
//! kernels.
//!
//! Per block of at most [`BLOCK`] elements of one run of the window: the
//! stored bytes are read where they lie (copied to a stack buffer only to
//! reverse their byte order or to align them), `cast_value`'s decode plan
//! writes the cast values into the output, and `scale_offset` decodes them
//! there in place (without `cast_value`, the stored values are copied into
//! the output first). The kernels are the ones the codecs run, applied to
//! the same elements, so the values are those of zarrs' chain decode bit
//! for bit; only the buffers differ.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::ops::Range;
use std::sync::Arc;

use zarrs::array::codec::api::{
    ArrayToBytesCodecTraits, BytesRepresentation, BytesToBytesCodecTraits, CodecError,
    CodecMetadataOptions, CodecOptions, CodecTraits,
};
use zarrs::array::codec::{BytesCodec as ZarrsBytesCodec, CodecChain};
use zarrs::array::{ArraySubset, DataType, Endianness, FillValue};
use zarrs::plugin::ZarrVersion;

use super::table::{STREAM_FROM_BYTES, Tables};
use super::window::{OutputWindow, Runs};
use crate::codec::bytes::BytesCodec;
use crate::codec::cast_value::CastValueCodec;
use crate::codec::parallel::{part_count, try_ranges};
use crate::codec::scale_offset::ScaleOffsetCodec;
use crate::kernels::bytes::swap_in_place;
use crate::kernels::cast::CastPlan;
use crate::kernels::scale_offset::{Direction, apply_bytes};
use crate::numeric::NumericType;

/// Elements per block: the stack buffer holds one block of the widest
/// stored type (8 bytes), 32 KiB, which stays in the L1/L2 cache between
/// the passes over it.
const BLOCK: usize = 4096;

/// `scale_offset`'s decode: the data type, and `offset` / `scale` as
/// native-endian elements of it (empty when absent).
struct ScaleOffset {
    data_type: NumericType,
    offset: Vec<u8>,
    scale: Vec<u8>,
}

/// A chain the fused path decodes, ready to run.
pub(super) struct Fused {
    /// The element type `bytes` stores.
    stored: NumericType,
    /// Whether the stored byte order is not the machine's.
    swap: bool,
    /// `cast_value`'s decode plan (stored type to the array's), if any.
    cast: Option<CastPlan>,
    /// `scale_offset`'s decode, if any.
    scale_offset: Option<ScaleOffset>,
    /// The bytes->bytes codecs in decode order (last in the chain first),
    /// each with the representation it decodes to.
    bytes_to_bytes: Vec<(Arc<dyn BytesToBytesCodecTraits>, BytesRepresentation)>,
    /// The decode as a lookup table, for stored types of one or two bytes.
    tables: Option<Tables>,
    /// Whether the bytes->bytes codecs are zarrs' zstd alone, which
    /// [`super::zstd`] decompresses without a buffer of its own per chunk.
    #[cfg(feature = "zstd")]
    zstd: bool,
}

/// Stored types whose `bytes` encoding is the element's bytes in the given
/// order, with nothing to fix (sub-byte, small-float and `bool` layouts
/// are left to zarrs' chain).
fn plain_stored_type(t: NumericType) -> bool {
    use NumericType as N;
    matches!(
        t,
        N::Int8
            | N::Int16
            | N::Int32
            | N::Int64
            | N::UInt8
            | N::UInt16
            | N::UInt32
            | N::UInt64
            | N::Float16
            | N::BFloat16
            | N::Float32
            | N::Float64
    )
}

impl Fused {
    /// The fused decode of `codecs` for chunks of `chunk_shape`, or `None` if
    /// the chain is not one it decodes (or is invalid for the data type: the
    /// fallback then reports why).
    pub(super) fn plan(
        codecs: &CodecChain,
        chunk_shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Option<Self> {
        let (scale_offset, cast) = match codecs.array_to_array_codecs() {
            // `bytes` alone: the stored elements are the values, copied run
            // by run into the output (zarrs' chain would decode the chunk
            // into a buffer and copy it through an index iterator that
            // costs more than the copy).
            [] => (None, None),
            [a] => {
                let a = a.as_any();
                match (
                    a.downcast_ref::<ScaleOffsetCodec>(),
                    a.downcast_ref::<CastValueCodec>(),
                ) {
                    (Some(so), None) => (Some(so), None),
                    (None, Some(cv)) => (None, Some(cv)),
                    _ => return None,
                }
            }
            [a, b] => (
                Some(a.as_any().downcast_ref::<ScaleOffsetCodec>()?),
                Some(b.as_any().downcast_ref::<CastValueCodec>()?),
            ),
            _ => return None,
        };
        let scale_offset = match scale_offset {
            Some(codec) => {
                let (data_type, offset, scale) = codec.decode_parameters(data_type).ok()?;
                Some(ScaleOffset {
                    data_type,
                    offset,
                    scale,
                })
            }
            None => None,
        };
        // `scale_offset` keeps the data type, so `cast_value` decodes to the
        // array's.
        let cast = match cast {
            Some(codec) => Some(codec.decode_plan(data_type).ok()?),
            None => None,
        };
        let stored = match &cast {
            Some(plan) => plan.source(),
            None => NumericType::from_data_type(data_type)?,
        };
        if !plain_stored_type(stored) {
            return None;
        }

        // What `bytes` and the bytes->bytes codecs see, as zarrs' chain
        // works it out.
        let mut representation = (chunk_shape.to_vec(), data_type.clone(), fill_value.clone());
        for codec in codecs.array_to_array_codecs() {
            let (shape, data_type, fill_value) = &representation;
            let (shape, data_type, fill_value) = codec
                .encoded_representation(shape, data_type, fill_value)
                .ok()?;
            representation = (shape.to_vec(), data_type, fill_value);
        }
        let (shape, stored_data_type, stored_fill_value) = &representation;
        if NumericType::from_data_type(stored_data_type) != Some(stored)
            || shape.as_slice() != chunk_shape
        {
            return None;
        }
        let array_to_bytes = codecs.array_to_bytes_codec();
        let endian = stored_endian(&**array_to_bytes)?;
        let swap = if stored.size() == 1 {
            false
        } else {
            !endian?.is_native()
        };
        let mut representations = vec![
            array_to_bytes
                .encoded_representation(shape, stored_data_type, stored_fill_value)
                .ok()?,
        ];
        for codec in codecs.bytes_to_bytes_codecs() {
            let last = representations.last().expect("one at least");
            representations.push(codec.encoded_representation(last));
        }
        let bytes_to_bytes: Vec<_> = codecs
            .bytes_to_bytes_codecs()
            .iter()
            .cloned()
            .zip(representations)
            .rev()
            .collect();
        #[cfg(feature = "zstd")]
        let zstd =
            matches!(bytes_to_bytes.as_slice(), [(codec, _)] if super::zstd::is_zstd(&**codec));
        let mut fused = Self {
            stored,
            swap,
            cast,
            scale_offset,
            bytes_to_bytes,
            tables: None,
            #[cfg(feature = "zstd")]
            zstd,
        };
        let out_size = data_type.fixed_size()?;
        // A copy needs no table (a table would only be slower than it).
        if fused.cast.is_some() || fused.scale_offset.is_some() {
            fused.tables = Tables::new(stored.size(), out_size, |src, dst| {
                fused.decode_kernels(src, dst).is_ok()
            });
        }
        Some(fused)
    }

    /// Decode `chunk_subset` of the chunk `encoded` (of `chunk_shape`) into
    /// `out` (checked by the caller to have the subset's shape and the
    /// data type's element size).
    pub(super) fn decode(
        &self,
        encoded: &[u8],
        chunk_shape: &[u64],
        chunk_subset: &ArraySubset,
        out: &mut OutputWindow<'_>,
        options: &CodecOptions,
    ) -> Result<(), CodecError> {
        let elements: u64 = chunk_shape.iter().product();
        let want = usize::try_from(elements)
            .ok()
            .and_then(|n| n.checked_mul(self.stored.size()))
            .ok_or_else(|| {
                CodecError::Other(format!(
                    "bytes: {elements} elements of {} take more than this machine can address",
                    self.stored
                ))
            })?;
        #[cfg(feature = "zstd")]
        if self.zstd {
            if let Some(run) = self.one_plain_run(chunk_shape, chunk_subset, out) {
                // SAFETY: the run is the whole window (`one_plain_run`), and
                // no other slice of the window is alive: this is the only
                // one this call makes, and it is dropped before it returns.
                let target = unsafe { out.segment_mut(run) };
                return super::zstd::decompress_into(encoded, target);
            }
            return super::zstd::with_decompressed(encoded, want, |stored| {
                self.decode_stored(stored, chunk_shape, chunk_subset, out, options)
            });
        }
        let stored = self.stored_bytes(encoded, options)?;
        if stored.len() != want {
            return Err(CodecError::Other(format!(
                "bytes: the chunk holds {} bytes, {elements} elements of {} take {want}",
                stored.len(),
                self.stored
            )));
        }
        self.decode_stored(&stored, chunk_shape, chunk_subset, out, options)
    }

    /// The output's elements the window is, when they are one run, the
    /// window is the whole chunk and the stored bytes are the values as
    /// they are (no kernel, no byte swap): the stored bytes can then be
    /// decompressed straight into the output.
    #[cfg(feature = "zstd")]
    fn one_plain_run(
        &self,
        chunk_shape: &[u64],
        chunk_subset: &ArraySubset,
        out: &OutputWindow<'_>,
    ) -> Option<Range<usize>> {
        if self.cast.is_some()
            || self.scale_offset.is_some()
            || self.swap
            || self.stored.size() != out.element_size()
            || chunk_subset.shape() != chunk_shape
        {
            return None;
        }
        let (src_runs, dst_runs) = Runs::common(
            chunk_subset.shape(),
            (chunk_subset.start(), chunk_shape),
            (out.subset().start(), out.shape()),
        );
        if src_runs.count() != 1 {
            return None;
        }
        let start = dst_runs.start_of(0);
        Some(start..start + dst_runs.len)
    }

    /// Decode `chunk_subset` of the chunk whose stored bytes (the bytes
    /// `bytes` encodes, of the chunk's size) are `stored` into `out`.
    fn decode_stored(
        &self,
        stored: &[u8],
        chunk_shape: &[u64],
        chunk_subset: &ArraySubset,
        out: &mut OutputWindow<'_>,
        options: &CodecOptions,
    ) -> Result<(), CodecError> {
        let size = self.stored.size();
        let (src_runs, dst_runs) = Runs::common(
            chunk_subset.shape(),
            (chunk_subset.start(), chunk_shape),
            (out.subset().start(), out.shape()),
        );
        let total = usize::try_from(src_runs.count())
            .ok()
            .and_then(|count| count.checked_mul(src_runs.len))
            .expect("a window of an addressable output");
        let widest = size.max(out.element_size());
        let parts = part_count(total, widest, options.concurrent_target());
        let output_bytes = out.shape().iter().product::<u64>() * out.element_size() as u64;
        let stream = output_bytes >= STREAM_FROM_BYTES as u64;
        let out = &*out;
        try_ranges(total, parts, |elements| {
            self.decode_elements(stored, &src_runs, &dst_runs, elements, out, stream)
        })
    }

    /// The stored bytes: `encoded` through the bytes->bytes codecs.
    fn stored_bytes<'a>(
        &self,
        encoded: &'a [u8],
        options: &CodecOptions,
    ) -> Result<Cow<'a, [u8]>, CodecError> {
        let mut bytes = Cow::Borrowed(encoded);
        for (codec, representation) in &self.bytes_to_bytes {
            bytes = codec.decode(bytes, representation, options)?;
        }
        Ok(bytes)
    }

    /// Decode the elements `elements` of the window (numbered in C order of
    /// the window), which `src_runs` / `dst_runs` place in the chunk and in
    /// the output.
    fn decode_elements(
        &self,
        stored: &[u8],
        src_runs: &Runs,
        dst_runs: &Runs,
        elements: Range<usize>,
        out: &OutputWindow<'_>,
        stream: bool,
    ) -> Result<(), CodecError> {
        let size = self.stored.size();
        let len = src_runs.len;
        // Once per part, not per run: a window of short rows has many runs.
        let mut buffer = [0u64; BLOCK];
        let mut at = elements.start;
        while at < elements.end {
            let (run, within) = (at / len, at % len);
            let n = (len - within).min(elements.end - at);
            let src = src_runs.start_of(run) + within;
            let dst = dst_runs.start_of(run) + within;
            let run = &stored[src * size..(src + n) * size];
            self.decode_run(run, src, dst, out, &mut buffer, stream)?;
            at += n;
        }
        Ok(())
    }

    /// Decode the stored elements `src` (the first of which is element
    /// `first` of the chunk) into the output's elements from `dst` on;
    /// `buffer` holds a block that has to be byte swapped or aligned.
    fn decode_run(
        &self,
        src: &[u8],
        first: usize,
        dst: usize,
        out: &OutputWindow<'_>,
        buffer: &mut [u64; BLOCK],
        stream: bool,
    ) -> Result<(), CodecError> {
        let size = self.stored.size();
        let n = src.len() / size;
        let mut start = 0;
        while start < n {
            let end = (start + BLOCK).min(n);
            let block = &src[start * size..end * size];
            // An unaligned block is copied so that the kernels view it as
            // elements without a copy of their own (a plain copy, `bytes`
            // alone, takes bytes where they lie).
            let kernels = self.cast.is_some() || self.scale_offset.is_some();
            let misaligned = kernels && block.as_ptr().align_offset(size) != 0;
            let block: &[u8] = if self.swap || misaligned {
                let copy = &mut bytemuck::cast_slice_mut::<u64, u8>(buffer)[..block.len()];
                copy.copy_from_slice(block);
                if self.swap {
                    swap_in_place(copy, size);
                }
                copy
            } else {
                block
            };
            // SAFETY: the runs lie inside the window (`Runs::common` of the
            // window's subset), the runs of the window are disjoint, and
            // every call covers a different part of them (the parts of
            // `try_ranges` do not overlap, and a run is walked block by
            // block); the slice is dropped before the next block.
            let target = unsafe { out.segment_mut(dst + start..dst + end) };
            self.decode_block(block, target, stream)
                .map_err(|e| e.at(first + start, self))?;
            start = end;
        }
        Ok(())
    }

    /// Decode one block of stored elements (native byte order) into
    /// `target`, as many elements of the array's type: by the table where
    /// there is one (`stream`: into an output large enough for
    /// non-temporal stores), else by the kernels.
    fn decode_block(
        &self,
        block: &[u8],
        target: &mut [u8],
        stream: bool,
    ) -> Result<(), BlockError> {
        let elements = block.len() / self.stored.size();
        if let Some(tables) = &self.tables
            && let Some(table) =
                tables.get(elements, |src, dst| self.decode_kernels(src, dst).is_ok())
        {
            table.decode(block, target, stream);
            return Ok(());
        }
        self.decode_kernels(block, target)
    }

    /// [`decode_block`](Self::decode_block) by the kernels.
    fn decode_kernels(&self, block: &[u8], target: &mut [u8]) -> Result<(), BlockError> {
        if let Some(plan) = &self.cast {
            plan.cast_bytes(block, target).map_err(BlockError::Cast)?;
        } else {
            target.copy_from_slice(block);
        }
        if let Some(so) = &self.scale_offset {
            apply_bytes(
                Direction::Decode,
                so.data_type,
                target,
                &so.offset,
                &so.scale,
            )
            .map_err(BlockError::ScaleOffset)?;
        }
        Ok(())
    }
}

/// An error of a block's kernels, with indices relative to the block.
enum BlockError {
    Cast(crate::kernels::cast::CastError),
    ScaleOffset(crate::kernels::scale_offset::ScaleOffsetError),
}

impl BlockError {
    /// The error as the codecs word theirs, for a block that starts at
    /// element `start` of the chunk, decoded by `fused`.
    fn at(self, start: usize, fused: &Fused) -> CodecError {
        match self {
            Self::Cast(mut e) => {
                e.index += start;
                CodecError::Other(format!("cast_value: decode: {e}"))
            }
            Self::ScaleOffset(e) => {
                let data_type = fused
                    .scale_offset
                    .as_ref()
                    .map_or(fused.stored, |so| so.data_type);
                let e = e.offset_by(start);
                CodecError::Other(format!("scale_offset: decoding {data_type}: {e}"))
            }
        }
    }
}

/// The byte order `codec` stores elements in: `Some(None)` if it is a
/// `bytes` codec (this crate's or zarrs') without one, `None` if it is not
/// a `bytes` codec.
fn stored_endian(codec: &dyn ArrayToBytesCodecTraits) -> Option<Option<Endianness>> {
    let any = codec.as_any();
    if let Some(codec) = any.downcast_ref::<BytesCodec>() {
        return Some(codec.endian());
    }
    let codec = any.downcast_ref::<ZarrsBytesCodec>()?;
    // zarrs' codec has no accessor: its configuration says the order.
    let configuration = codec.configuration(ZarrVersion::V3, &CodecMetadataOptions::default())?;
    match configuration.get("endian") {
        None | Some(serde_json::Value::Null) => Some(None),
        Some(serde_json::Value::String(s)) if s == "little" => Some(Some(Endianness::Little)),
        Some(serde_json::Value::String(s)) if s == "big" => Some(Some(Endianness::Big)),
        Some(_) => None,
    }
}
