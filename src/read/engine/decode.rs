//! Decoding the pieces a unit fetched into the output, each by
//! [`ChunkDecoder`] straight into its window of the output.

use rayon::prelude::*;
use unsafe_cell_slice::UnsafeCellSlice;
use zarrs::array::{ArrayError, ArraySubset, CodecError, CodecOptions};
use zarrs::storage::Bytes;

use super::fetch::Fetched;
use super::plan::{Engine, Layout, Piece, Unit};
use crate::read::chunk_decode::OutputWindow;

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
    fetched: Fetched,
    target: Target<'_>,
    options: &CodecOptions,
) -> Result<(), ArrayError> {
    let fetched = match fetched {
        Fetched::Pieces(pieces) => pieces,
        Fetched::Missing | Fetched::Absent => {
            let start: Vec<u64> = target.offset.to_vec();
            let subset = ArraySubset::new_with_start_shape(start, unit.part.shape().to_vec())?;
            // SAFETY: the units of a read partition the window (the
            // caller's guarantee for the unit).
            return unsafe {
                OutputWindow::new(target.cells, engine.element_size, target.shape, subset)
            }
            .and_then(|mut window| window.fill(engine.fill_value.as_ne_bytes()))
            .map_err(|e| absent_error(engine, unit, &e));
        }
    };
    // Made at the array's first read, kept with its engine.
    let shape = match &engine.layout {
        Layout::Chunks => &unit.shape,
        Layout::Shards(shards) => &shards.subchunk_shape,
    };
    let decoder = engine.decoder(shape);
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
        let mut window =
            unsafe { OutputWindow::new(target.cells, engine.element_size, target.shape, subset) }
                .map_err(|e| piece_error(engine, unit, piece, &e))?;
        decoder
            .decode_into(bytes.as_deref(), &piece.chunk_subset, &mut window, options)
            .map_err(|e| piece_error(engine, unit, piece, &e))
    };
    if threads > 1 && fetched.len() > 1 {
        let per_piece = options.with_concurrent_target((threads / fetched.len()).max(1));
        fetched.par_iter().try_for_each(|p| one(p, &per_piece))
    } else {
        fetched.iter().try_for_each(|p| one(p, options))
    }
}

fn absent_error(engine: &Engine, unit: &Unit, error: &CodecError) -> ArrayError {
    ArrayError::Other(format!(
        "array {}: {} (absent): {}",
        engine.path,
        unit.key,
        crate::error_chain(error)
    ))
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
