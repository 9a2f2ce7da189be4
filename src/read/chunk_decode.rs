//! Decode a chunk (or a part of it) straight into the caller's output window.
//!
//! zarrs decodes a chunk through each array->array codec into a new
//! chunk-sized buffer, then copies the result into the output. For a large
//! chunk most of that time goes to the kernel zeroing the fresh pages of
//! those buffers, and to the copy. `ChunkDecoder` writes the final values
//! into the output window instead, for the chains where that pays:
//!
//! - **Fused path**: a chain of `scale_offset` and/or `cast_value` (in that
//!   order; either alone, both, or neither) over `bytes` (this crate's or
//!   zarrs'), followed by any bytes->bytes codecs. The bytes->bytes codecs run
//!   through zarrs (giving the stored bytes; without any, the encoded chunk
//!   is read where it lies; with feature `zstd`, zstd alone is decompressed
//!   by the module `zstd` without a buffer per chunk, and straight into
//!   the output where nothing is left to do but copy), then each run of the
//!   window's elements is
//!   decoded from the stored integers or floats to the final values by the
//!   crate's kernels (byte order, then `cast_value`'s plan, then
//!   `scale_offset`), through a small buffer on the stack, and written into
//!   the output. No chunk-sized buffer is allocated beyond the decompressed
//!   bytes.
//! - **Fallback**: every other chain (transpose, packbits, sharding,
//!   `cast_value` before `scale_offset`, sub-byte or small-float stored
//!   types, ...) is decoded by zarrs' codec chain into the output through
//!   zarrs' own view: a whole chunk with `decode_into`, a part through the
//!   chain's partial decoder, or, when the chain has a bytes->bytes codec
//!   (which decodes the whole chunk anyway), by decoding the whole chunk
//!   and copying the part.
//!
//! The output window is an `OutputWindow`, not zarrs'
//! `ArrayBytesFixedDisjointView`: that view keeps its bytes private (it can
//! only be filled, or copied into from a contiguous buffer), so nothing can
//! be decoded straight into it. An `OutputWindow` is made under the same
//! contract (windows over one buffer never overlap) and gives zarrs a view
//! of itself for the fallback.
//!
//! Both give the same values bit for bit (tested against zarrs' chain decode
//! with this crate's codecs). A missing chunk reads as the array's fill
//! value, as zarrs and zarr-python read it, including a fill value that the
//! codecs cannot carry (see `codec::FILL_VALUE_CLAUSE`).

// The read engine calls this module; until it does, only the tests do.
#![allow(dead_code)]

mod fused;
mod table;
pub(crate) use table::STREAM_FROM_BYTES;
#[cfg(test)]
mod tests;
mod window;
#[cfg(feature = "zstd")]
mod zstd;

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::Arc;

use zarrs::array::codec::CodecChain;
use zarrs::array::codec::api::{
    ArrayToBytesCodecTraits, BytesPartialDecoderTraits, CodecError, CodecOptions,
};
use zarrs::array::{ArraySubset, DataType, FillValue};

pub(crate) use window::OutputWindow;

/// Decodes chunks of one codec chain, chunk shape, data type and fill value
/// into output windows.
///
/// Make one per array (or per inner chain of a shard) and chunk shape, and
/// share it between threads: [`new`](Self::new) works out once whether the
/// fused path applies. For each chunk, make an [`OutputWindow`] over the
/// part of the caller's output that the chunk fills (with
/// [`OutputWindow::new`], over the `UnsafeCellSlice` of the whole output,
/// as zarrs' views are made), then call [`decode_into`](Self::decode_into)
/// with the chunk's bytes (or `None` if it is absent) and the part of the
/// chunk that falls in the window. Decoding large chunks off rayon's
/// threads splits them over `options.concurrent_target()` threads; on a
/// rayon thread (chunks decoded in parallel) each chunk runs on its own.
pub(crate) struct ChunkDecoder {
    codecs: Arc<CodecChain>,
    chunk_shape: Vec<NonZeroU64>,
    /// `chunk_shape` as zarrs' subsets take it.
    chunk_shape_u64: Vec<u64>,
    data_type: DataType,
    fill_value: FillValue,
    /// The fused decode, when the chain is one it handles.
    fused: Option<fused::Fused>,
}

impl ChunkDecoder {
    /// A decoder for chunks of `chunk_shape` encoded by `codecs` (an array's
    /// chain, or the inner chain of a shard), decoding to `data_type` with
    /// the array's `fill_value`.
    pub(crate) fn new(
        codecs: Arc<CodecChain>,
        chunk_shape: Vec<NonZeroU64>,
        data_type: DataType,
        fill_value: FillValue,
    ) -> Self {
        let chunk_shape_u64 = chunk_shape.iter().map(|n| n.get()).collect();
        let fused = fused::Fused::plan(&codecs, &chunk_shape, &data_type, &fill_value);
        Self {
            fused,
            codecs,
            chunk_shape,
            chunk_shape_u64,
            data_type,
            fill_value,
        }
    }

    /// Decode the part `chunk_subset` of the chunk into `out`, which must
    /// have the same shape as `chunk_subset`. `encoded` `None` is a missing
    /// chunk: `out` is filled with the fill value.
    ///
    /// # Errors
    /// If `chunk_subset` does not lie inside the chunk, `out` has another
    /// shape or element size, or the chunk cannot be decoded.
    pub(crate) fn decode_into(
        &self,
        encoded: Option<&[u8]>,
        chunk_subset: &ArraySubset,
        out: &mut OutputWindow<'_>,
        options: &CodecOptions,
    ) -> Result<(), CodecError> {
        self.check(chunk_subset, out)?;
        let Some(encoded) = encoded else {
            return out.fill(self.fill_value.as_ne_bytes());
        };
        match &self.fused {
            Some(fused) => fused.decode(encoded, &self.chunk_shape_u64, chunk_subset, out, options),
            None => self.decode_fallback(encoded, chunk_subset, out, options),
        }
    }

    /// Whether chunks are decoded by the fused path (for tests and benches).
    pub(crate) fn is_fused(&self) -> bool {
        self.fused.is_some()
    }

    /// `chunk_subset` must lie inside the chunk, and `out` must be its shape
    /// and hold elements of the data type.
    fn check(&self, chunk_subset: &ArraySubset, out: &OutputWindow<'_>) -> Result<(), CodecError> {
        if chunk_subset.dimensionality() != self.chunk_shape.len()
            || !chunk_subset.inbounds_shape(&self.chunk_shape_u64)
        {
            return Err(CodecError::Other(format!(
                "chunk subset {chunk_subset} does not lie inside a chunk of shape {:?}",
                self.chunk_shape_u64
            )));
        }
        if out.subset().shape() != chunk_subset.shape() {
            return Err(CodecError::Other(format!(
                "output window {} has another shape than chunk subset {chunk_subset}",
                out.subset()
            )));
        }
        let size = self.data_type.fixed_size();
        if size != Some(out.element_size()) {
            return Err(CodecError::Other(format!(
                "output window of {}-byte elements for data type {}",
                out.element_size(),
                self.data_type
            )));
        }
        Ok(())
    }

    /// zarrs' chain decode into `out`: whole chunks with `decode_into`,
    /// parts through the chain's partial decoder (which decodes only the
    /// part where the codecs can).
    fn decode_fallback(
        &self,
        encoded: &[u8],
        chunk_subset: &ArraySubset,
        out: &mut OutputWindow<'_>,
        options: &CodecOptions,
    ) -> Result<(), CodecError> {
        let whole = chunk_subset.start().iter().all(|&s| s == 0)
            && chunk_subset.shape() == self.chunk_shape_u64.as_slice();
        let mut view = out.view()?;
        if whole {
            self.codecs.decode_into(
                Cow::Borrowed(encoded),
                &self.chunk_shape,
                &self.data_type,
                &self.fill_value,
                (&mut view).into(),
                options,
            )
        } else if !self.codecs.bytes_to_bytes_codecs().is_empty() {
            // A compressor or checksum has to decode the whole chunk anyway;
            // and zarrs 0.23.14's crc32c partial decoder panics on a chunk
            // shorter than its checksum (`strip_suffix_partial_decoder.rs`,
            // "attempt to subtract with overflow"), where the whole decode
            // returns an error.
            let decoded = self.codecs.decode(
                Cow::Borrowed(encoded),
                &self.chunk_shape,
                &self.data_type,
                &self.fill_value,
                options,
            )?;
            let part = decoded.extract_array_subset(
                chunk_subset,
                &self.chunk_shape_u64,
                &self.data_type,
            )?;
            let part = part.into_fixed()?;
            Ok(view.copy_from_slice(&part)?)
        } else {
            // zarrs' partial decoders take an owned input; this copies the
            // encoded bytes, not the decoded chunk.
            let input: Arc<dyn BytesPartialDecoderTraits> = Arc::new(encoded.to_vec());
            self.codecs
                .clone()
                .partial_decoder(
                    input,
                    &self.chunk_shape,
                    &self.data_type,
                    &self.fill_value,
                    options,
                )?
                .partial_decode_into(chunk_subset, (&mut view).into(), options)
        }
    }
}

/// For `benches/chunk_decode.rs` and the `chunk_decode` fuzz target only
/// (not an API): the [`ChunkDecoder`] of one chunk of an array.
#[doc(hidden)]
pub struct ExposedChunkDecoder(ChunkDecoder);

impl ExposedChunkDecoder {
    /// The decoder for chunk `indices` of `array`.
    ///
    /// # Errors
    /// If the array has no such chunk.
    pub fn new<S: ?Sized>(
        array: &zarrs::array::Array<S>,
        indices: &[u64],
    ) -> Result<Self, zarrs::array::ArrayError> {
        Ok(Self(ChunkDecoder::new(
            array.codecs(),
            array.chunk_shape(indices)?.to_vec(),
            array.data_type().clone(),
            array.fill_value().clone(),
        )))
    }

    /// Whether the fused path decodes the chunks.
    #[must_use]
    pub fn is_fused(&self) -> bool {
        self.0.is_fused()
    }

    /// Decode the whole chunk `encoded` into `out` (the chunk's size).
    ///
    /// # Errors
    /// As [`ChunkDecoder::decode_into`].
    pub fn decode_whole_into(
        &self,
        encoded: &[u8],
        out: &mut [u8],
        options: &CodecOptions,
    ) -> Result<(), CodecError> {
        let shape = self.0.chunk_shape_u64.clone();
        let size = self.0.data_type.fixed_size().unwrap_or(1);
        let mut window = OutputWindow::whole(out, size, &shape)?;
        self.0.decode_into(
            Some(encoded),
            &ArraySubset::new_with_shape(shape.clone()),
            &mut window,
            options,
        )
    }

    /// Decode `chunk_subset` of `encoded` (`None`: a missing chunk) into the
    /// window of `out` (an array of `out_shape`) that starts at `start` and
    /// has the subset's shape.
    ///
    /// # Errors
    /// As [`ChunkDecoder::decode_into`], and if the window does not fit.
    pub fn decode_window(
        &self,
        encoded: Option<&[u8]>,
        chunk_subset: &ArraySubset,
        out: &mut [u8],
        out_shape: &[u64],
        start: &[u64],
        options: &CodecOptions,
    ) -> Result<(), CodecError> {
        let size = self.0.data_type.fixed_size().ok_or_else(|| {
            CodecError::Other(format!("data type {} has no fixed size", self.0.data_type))
        })?;
        let window =
            ArraySubset::new_with_start_shape(start.to_vec(), chunk_subset.shape().to_vec())
                .map_err(|e| CodecError::Other(e.to_string()))?;
        let cells = unsafe_cell_slice::UnsafeCellSlice::new(out);
        // SAFETY: `out` is borrowed mutably for this call, and this is the
        // only window over it.
        let mut window = unsafe { OutputWindow::new(cells, size, out_shape, window) }?;
        self.0
            .decode_into(encoded, chunk_subset, &mut window, options)
    }
}
