//! The part of a window that falls in one chunk: what the sync and async
//! writes share before they encode.

use std::num::NonZeroU64;

use zarrs::array::{Array, ArrayError, ArraySubset};
use zarrs::storage::StoreKey;

use super::encoder::ChunkEncoder;
use super::strided::Strided;

/// The chunk at some indices of an array, and the box of a window inside
/// it.
pub(crate) struct Piece {
    /// The chunk's key in the store.
    pub key: StoreKey,
    /// The chunk's shape (an edge chunk's is its full grid shape: zarr
    /// stores edge chunks whole).
    pub shape: Vec<NonZeroU64>,
    /// Where the box starts in the window, and in the chunk.
    pub from: Vec<u64>,
    pub at: Vec<u64>,
    /// The box's shape.
    pub part: Vec<u64>,
    /// Whether the box is the whole chunk: it is then encoded from the
    /// window alone, with nothing stored read first.
    pub covered: bool,
}

impl Piece {
    /// The chunk of `array` at `indices`, which `window` (inside the
    /// array) overlaps.
    pub fn new<S: ?Sized>(
        array: &Array<S>,
        window: &ArraySubset,
        indices: &[u64],
    ) -> Result<Self, ArrayError> {
        let key = array.chunk_key(indices);
        let chunk = array.chunk_subset(indices)?;
        let shape = chunk
            .shape()
            .iter()
            .map(|&n| NonZeroU64::new(n))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                ArrayError::Other(format!(
                    "chunk {key}: a chunk of shape {:?} holds no element",
                    chunk.shape()
                ))
            })?;
        let part = chunk.overlap(window)?;
        let from = part
            .start()
            .iter()
            .zip(window.start())
            .map(|(p, w)| p - w)
            .collect();
        let at: Vec<u64> = part
            .start()
            .iter()
            .zip(chunk.start())
            .map(|(p, c)| p - c)
            .collect();
        let covered = part.shape() == chunk.shape();
        Ok(Self {
            key,
            shape,
            from,
            at,
            part: part.shape().to_vec(),
            covered,
        })
    }
}

/// The chunks of `array` that `window` (inside it) overlaps, by indices.
pub(crate) fn chunks_of<S: ?Sized>(
    array: &Array<S>,
    window: &ArraySubset,
) -> Result<Vec<Vec<u64>>, ArrayError> {
    let Some(chunks) = array.chunks_in_array_subset(window)? else {
        return Err(ArrayError::Other(format!(
            "array {}: the chunks of window {window:?} are not known",
            array.path()
        )));
    };
    Ok(chunks.indices().into_iter().map(|c| c.to_vec()).collect())
}

/// Refuse a window that is not inside `array`.
pub(crate) fn check_window<S: ?Sized>(
    array: &Array<S>,
    window: &ArraySubset,
) -> Result<(), ArrayError> {
    if window.dimensionality() != array.dimensionality() || !window.inbounds_shape(array.shape()) {
        return Err(ArrayError::InvalidArraySubset(
            window.clone(),
            array.shape().to_vec(),
        ));
    }
    Ok(())
}

/// The encoder of `array`'s chunks, and `bytes` (the window's elements in
/// C order) as the view it encodes from.
pub(crate) fn encoder_and_source<'a, S: ?Sized>(
    array: &Array<S>,
    window: &ArraySubset,
    bytes: &'a [u8],
) -> Result<(ChunkEncoder, Strided<'a>), ArrayError> {
    let encoder = ChunkEncoder::new(array)?;
    let source = Strided::c_contiguous(bytes, window.shape(), encoder.item())
        .map_err(|why| ArrayError::Other(format!("array {}: {why}", array.path())))?;
    Ok((encoder, source))
}
