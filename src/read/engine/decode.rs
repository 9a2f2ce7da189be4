//! Decoding the pieces a unit fetched into the output.
//!
//! [`ChunkDecoder`] decodes one chunk (or inner chunk) through its zarrs
//! codec chain; a piece covering the whole chunk is decoded straight into
//! the output, a partial one through a chunk-sized buffer.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::Arc;

use rayon::prelude::*;
use unsafe_cell_slice::UnsafeCellSlice;
use zarrs::array::ArrayToBytesCodecTraits;
use zarrs::array::{
    ArrayBytesDecodeIntoTarget, ArrayBytesFixedDisjointView, ArrayError, ArraySubset, CodecChain,
    CodecError, CodecOptions, DataType, FillValue,
};
use zarrs::storage::Bytes;

use super::plan::{Engine, Layout, Piece, Unit};

/// Decodes one stored chunk, or one inner chunk of a shard, into a window
/// of the output.
pub(crate) struct ChunkDecoder {
    codecs: Arc<CodecChain>,
    shape: Vec<NonZeroU64>,
    data_type: DataType,
    fill_value: FillValue,
}

impl ChunkDecoder {
    /// For a chunk codec chain, the chunk's shape, data type and fill value.
    pub(crate) fn new(
        codecs: Arc<CodecChain>,
        shape: Vec<NonZeroU64>,
        data_type: DataType,
        fill_value: FillValue,
    ) -> Self {
        Self {
            codecs,
            shape,
            data_type,
            fill_value,
        }
    }

    /// Decode the part `chunk_subset` of the chunk `encoded` (`None`:
    /// missing, the fill value) into `out`.
    pub(crate) fn decode_into(
        &self,
        encoded: Option<&[u8]>,
        chunk_subset: &ArraySubset,
        out: &mut ArrayBytesFixedDisjointView<'_>,
        options: &CodecOptions,
    ) -> Result<(), CodecError> {
        let Some(encoded) = encoded else {
            out.fill(self.fill_value.as_ne_bytes())?;
            return Ok(());
        };
        let whole = chunk_subset.start().iter().all(|&s| s == 0)
            && chunk_subset
                .shape()
                .iter()
                .zip(&self.shape)
                .all(|(&n, s)| n == s.get());
        if whole {
            // SAFETY: the new view covers exactly `out`'s subset, and `out`
            // is mutably borrowed and unused while it lives.
            let mut view = unsafe { out.subdivide(out.subset().clone()) }?;
            return self.codecs.decode_into(
                Cow::Borrowed(encoded),
                &self.shape,
                &self.data_type,
                &self.fill_value,
                ArrayBytesDecodeIntoTarget::Fixed(&mut view),
                options,
            );
        }
        let decoded = self.codecs.decode(
            Cow::Borrowed(encoded),
            &self.shape,
            &self.data_type,
            &self.fill_value,
            options,
        )?;
        let shape: Vec<u64> = self.shape.iter().map(|s| s.get()).collect();
        let part = decoded.extract_array_subset(chunk_subset, &shape, &self.data_type)?;
        out.copy_from_slice(&part.into_fixed()?)?;
        Ok(())
    }
}

/// Where a unit's pieces go: an output buffer of `shape` (C order), the
/// unit's part starting at `offset` in it.
#[derive(Clone, Copy)]
pub(crate) struct Target<'a> {
    pub(crate) cells: UnsafeCellSlice<'a, u8>,
    pub(crate) shape: &'a [u64],
    pub(crate) offset: &'a [u64],
}

/// Decode `fetched` (the pieces of `unit` with their encoded bytes) into
/// `target`, over up to `options.concurrent_target()` threads.
///
/// The caller guarantees that no other view of `target` overlaps the
/// unit's part while this runs.
pub(crate) fn decode_unit(
    engine: &Engine,
    unit: &Unit,
    fetched: Vec<(Piece, Option<Bytes>)>,
    target: Target<'_>,
    options: &CodecOptions,
) -> Result<(), ArrayError> {
    let decoder = match &engine.layout {
        Layout::Chunks => ChunkDecoder::new(
            engine.codecs.clone(),
            unit.shape.clone(),
            engine.data_type.clone(),
            engine.fill_value.clone(),
        ),
        Layout::Shards(shards) => ChunkDecoder::new(
            shards.inner_codecs.clone(),
            shards.subchunk_shape.clone(),
            engine.data_type.clone(),
            engine.fill_value.clone(),
        ),
    };
    let threads = options.concurrent_target().max(1);
    let one = |(piece, bytes): &(Piece, Option<Bytes>), options: &CodecOptions| {
        let start: Vec<u64> = piece
            .out
            .start()
            .iter()
            .zip(target.offset)
            .map(|(a, b)| a + b)
            .collect();
        let subset = ArraySubset::new_with_start_shape(start, piece.out.shape().to_vec())?;
        // SAFETY: the units of a read partition the window and the pieces of
        // a unit partition its part, so this view overlaps no other view
        // alive at the same time (the caller's guarantee for the unit).
        let mut view = unsafe {
            ArrayBytesFixedDisjointView::new(
                target.cells,
                engine.element_size,
                target.shape,
                subset,
            )
        }
        .map_err(CodecError::from)?;
        decoder
            .decode_into(bytes.as_deref(), &piece.chunk_subset, &mut view, options)
            .map_err(|e| piece_error(engine, unit, piece, &e))
    };
    if threads > 1 && fetched.len() > 1 {
        let per_piece = options.with_concurrent_target((threads / fetched.len()).max(1));
        fetched.par_iter().try_for_each(|p| one(p, &per_piece))
    } else {
        fetched.iter().try_for_each(|p| one(p, options))
    }
}

fn piece_error(engine: &Engine, unit: &Unit, piece: &Piece, error: &CodecError) -> ArrayError {
    let cause = crate::error_chain(error);
    match piece.inner {
        None => ArrayError::Other(format!(
            "array {}: chunk {}: {cause}",
            engine.path, unit.key
        )),
        Some(_) => ArrayError::Other(format!(
            "array {}: shard {}: inner chunk {:?}: {cause}",
            engine.path, unit.key, piece.inner_indices
        )),
    }
}
