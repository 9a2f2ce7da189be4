//! Writes from the caller's memory: the write counterpart of
//! [`ArrayReadExt`](crate::ArrayReadExt).
//!
//! zarrs' `store_array_subset` copies each chunk out of the caller's window,
//! and its `sharding_indexed` encoder copies each inner chunk out of that
//! copy again before encoding it, and lays the inner chunks out in C order.
//! [`ArrayWriteExt`] encodes every chunk (or shard) that the window covers
//! straight from the caller's memory, chunks and the inner chunks of each
//! shard in parallel on rayon's threads, and stores each with one `set`:
//!
//! - a shard's inner chunks are laid out in zarr-python's order (Morton,
//!   [`InnerOrder`]), so a shard whose codecs do not compress is byte for
//!   byte the one zarr-python writes, and a compressed one decodes to the
//!   same values;
//! - a chunk, or a shard's inner chunk, all of whose elements are the fill
//!   value is not stored, and a chunk or shard left with nothing stored is
//!   erased, as zarr-python does by default (`write_empty_chunks` false);
//! - a chunk the window covers only in part (edge chunks included) keeps
//!   what it held outside the window: of a shard (`sharding_indexed` the
//!   array's only codec, no bytes -> bytes codec after it), the inner
//!   chunks the window does not touch keep their stored bytes, those it
//!   covers are encoded from the caller's memory and only those it covers
//!   in part are decoded and merged (zarr-python's sharding codec does the
//!   same); any other chunk is decoded, merged and encoded whole. Stored
//!   bytes that do not read fail the write of that chunk with a
//!   [`StoredChunkDamaged`].
//!
//! [`AsyncArrayWriteExt`] (feature `async`) writes the same bytes through an
//! async store, encoding off the runtime.
//!
//! Arrays with storage transformers are written by zarrs'
//! `store_array_subset_opt`. A window outside the array is an error, as for
//! reads; an error names the chunk (and inner chunk) whose encoding failed.
//!
//! ```no_run
//! use std::sync::Arc;
//! use zarrs::array::ArraySubset;
//! use zarrs_extension_codecs::{ArrayWriteExt, open_array};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Arc::new(zarrs::filesystem::FilesystemStore::new("product.zarr")?);
//! let array = open_array(store, "/reflectance")?;
//! let tile = vec![0.25f64; 256 * 256];
//! array.store_window(&ArraySubset::new_with_ranges(&[0..256, 256..512]), &tile)?;
//! # Ok(()) }
//! ```

#[cfg(feature = "async")]
mod async_write;
mod damaged;
mod encoder;
mod order;
mod piece;
mod strided;
#[cfg(test)]
mod tests;

#[cfg(feature = "async")]
pub use async_write::AsyncArrayWriteExt;
pub use damaged::StoredChunkDamaged;
pub use encoder::ChunkEncoder;
pub use order::InnerOrder;
pub use strided::Strided;

use bytemuck::Pod;
use rayon::prelude::*;
use zarrs::array::{Array, ArrayBytes, ArrayError, ArraySubset, CodecOptions, Element};
use zarrs::storage::{ReadableWritableStorageTraits, StorageError};

use crate::read::engine::plan::has_storage_transformers;
use piece::{Piece, check_window, chunks_of, encoder_and_source};

/// Writes from the caller's memory, for [`Array`] over any readable and
/// writable store. See the [module documentation](self).
pub trait ArrayWriteExt {
    /// Store `elements`, in C order, as the window `window` of the array.
    ///
    /// # Errors
    /// When the window is not inside the array, `elements` does not fit it,
    /// `T` is not the array's element type, or a chunk cannot be read,
    /// encoded or stored.
    fn store_window<T: Element + Pod>(
        &self,
        window: &ArraySubset,
        elements: &[T],
    ) -> Result<(), ArrayError>;

    /// [`store_window`](Self::store_window) of elements given as their
    /// native-endian bytes, with `options` for the codecs.
    ///
    /// # Errors
    /// As [`store_window`](Self::store_window).
    fn store_window_bytes_opt(
        &self,
        window: &ArraySubset,
        bytes: &[u8],
        options: &CodecOptions,
    ) -> Result<(), ArrayError>;
}

impl<S: ?Sized + ReadableWritableStorageTraits + 'static> ArrayWriteExt for Array<S> {
    fn store_window<T: Element + Pod>(
        &self,
        window: &ArraySubset,
        elements: &[T],
    ) -> Result<(), ArrayError> {
        T::validate_data_type(self.data_type())?;
        self.store_window_bytes_opt(
            window,
            bytemuck::cast_slice(elements),
            &CodecOptions::default(),
        )
    }

    fn store_window_bytes_opt(
        &self,
        window: &ArraySubset,
        bytes: &[u8],
        options: &CodecOptions,
    ) -> Result<(), ArrayError> {
        check_window(self, window)?;
        if has_storage_transformers(self) {
            return self.store_array_subset_opt(window, ArrayBytes::new_flen(bytes), options);
        }
        let (encoder, source) = encoder_and_source(self, window, bytes)?;
        chunks_of(self, window)?.par_iter().try_for_each(|indices| {
            let piece = Piece::new(self, window, indices)?;
            let view = source.sub(&piece.from, &piece.part);
            let encoded = if piece.covered {
                encoder.encode(piece.key.as_str(), &piece.shape, &view, options)?
            } else {
                // Only the window's part of the chunk is new: the rest is
                // kept as stored (of a shard, the inner chunks the window
                // does not touch keep their stored bytes).
                let stored = self.storage().get(&piece.key)?;
                encoder.encode_update(
                    piece.key.as_str(),
                    &piece.shape,
                    stored.as_deref(),
                    &piece.at,
                    &view,
                    options,
                )?
            };
            let store = self.storage();
            match encoded {
                Some(bytes) => store.set(&piece.key, bytes.into()),
                None => store.erase(&piece.key),
            }
            .map_err(|e: StorageError| ArrayError::StorageError(e))
        })
    }
}
