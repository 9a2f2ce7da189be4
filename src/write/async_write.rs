//! The async twin of [`ArrayWriteExt`](super::ArrayWriteExt), for arrays
//! over async stores (e.g. `zarrs_object_store`).

use std::sync::Arc;

use bytemuck::Pod;
use futures::{StreamExt, TryStreamExt, future, stream};
use zarrs::array::{Array, ArrayBytes, ArrayError, ArraySubset, CodecOptions, Element};
use zarrs::storage::AsyncReadableWritableStorageTraits;

use super::encoder::ChunkEncoder;
use super::piece::{Piece, check_window, chunks_of, encoder_and_source};
use super::strided::Strided;
use crate::read::engine::ASYNC_IN_FLIGHT;
use crate::read::engine::async_engine::off_runtime;
use crate::read::engine::plan::has_storage_transformers;

/// Bytes of the window copied for the chunks in flight at most, unless one
/// chunk's part alone is larger (see [`AsyncArrayWriteExt`]).
const COPIED_BYTES: usize = 64 << 20;

/// Writes from the caller's memory, for [`Array`] over an async store.
///
/// The same calls as [`ArrayWriteExt`](super::ArrayWriteExt), each `async`
/// and prefixed `async_`, writing the same bytes (zarr-python's shard
/// layout, fill-value chunks not stored, partial chunks merged with what is
/// stored).
///
/// They do not block the runtime with encoding: each chunk is encoded on
/// rayon's threads (a shard's inner chunks in parallel there), while the
/// runtime reads what partial chunks hold and stores what is encoded, for
/// up to 16 chunks at once. The window is borrowed by the future, which
/// may be dropped at any await, so no other thread may read it: each
/// chunk's part of the window is copied on the runtime (a memory copy, a
/// small share of an encode) and the copy goes to the encoder. Copies in
/// flight are bounded to 64 MiB, or to one chunk's part when that is
/// larger. A future dropped mid-way leaves the chunks it stored stored and
/// those being encoded unstored.
///
/// ```no_run
/// # async fn write(array: &zarrs::array::Array<dyn zarrs::storage::AsyncReadableWritableStorageTraits>) -> Result<(), zarrs::array::ArrayError> {
/// use zarrs::array::ArraySubset;
/// use zarrs_extension_codecs::AsyncArrayWriteExt;
///
/// let tile = vec![0.25f64; 256 * 256];
/// array
///     .async_store_window(&ArraySubset::new_with_ranges(&[0..256, 256..512]), &tile)
///     .await?;
/// # Ok(()) }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
#[allow(async_fn_in_trait)] // Implemented here only; callers await it directly.
pub trait AsyncArrayWriteExt {
    /// Async [`store_window`](super::ArrayWriteExt::store_window).
    ///
    /// # Errors
    /// As the sync call.
    async fn async_store_window<T: Element + Pod + Send + Sync>(
        &self,
        window: &ArraySubset,
        elements: &[T],
    ) -> Result<(), ArrayError>;

    /// Async [`store_window_bytes_opt`](super::ArrayWriteExt::store_window_bytes_opt).
    ///
    /// # Errors
    /// As the sync call.
    async fn async_store_window_bytes_opt(
        &self,
        window: &ArraySubset,
        bytes: &[u8],
        options: &CodecOptions,
    ) -> Result<(), ArrayError>;
}

impl<S: ?Sized + AsyncReadableWritableStorageTraits + 'static> AsyncArrayWriteExt for Array<S> {
    async fn async_store_window<T: Element + Pod + Send + Sync>(
        &self,
        window: &ArraySubset,
        elements: &[T],
    ) -> Result<(), ArrayError> {
        T::validate_data_type(self.data_type())?;
        self.async_store_window_bytes_opt(
            window,
            bytemuck::cast_slice(elements),
            &CodecOptions::default(),
        )
        .await
    }

    async fn async_store_window_bytes_opt(
        &self,
        window: &ArraySubset,
        bytes: &[u8],
        options: &CodecOptions,
    ) -> Result<(), ArrayError> {
        check_window(self, window)?;
        if has_storage_transformers(self) {
            return self
                .async_store_array_subset_opt(window, ArrayBytes::new_flen(bytes), options)
                .await;
        }
        let (encoder, source) = encoder_and_source(self, window, bytes)?;
        let encoder = Arc::new(encoder);
        let chunks = chunks_of(self, window)?;
        let Some(first) = chunks.first() else {
            return Ok(());
        };
        // A chunk's part of the window is at most the first chunk's shape
        // (the grid's, for the regular grids zarr writes) cut to the
        // window's: the copies' bound, without a `Piece` per chunk first.
        let largest = self
            .chunk_shape(first)?
            .iter()
            .zip(window.shape())
            .fold(encoder.item() as u64, |n, (c, &w)| {
                n.saturating_mul(c.get().min(w))
            })
            .max(1);
        let in_flight = usize::try_from(COPIED_BYTES as u64 / largest)
            .unwrap_or(usize::MAX)
            .clamp(1, ASYNC_IN_FLIGHT);
        let (encoder, source) = (&encoder, &source);
        stream::iter(chunks)
            .map(|indices| async move {
                let piece = Piece::new(self, window, &indices)?;
                store_piece(self, encoder, source, piece, *options).await
            })
            .buffer_unordered(in_flight)
            .try_for_each(|()| future::ready(Ok(())))
            .await
    }
}

/// Encode and store (or erase) the chunk of `piece`: from the window alone
/// when it covers the chunk, else merged with what is stored.
async fn store_piece<S: ?Sized + AsyncReadableWritableStorageTraits + 'static>(
    array: &Array<S>,
    encoder: &Arc<ChunkEncoder>,
    source: &Strided<'_>,
    piece: Piece,
    options: CodecOptions,
) -> Result<(), ArrayError> {
    let store = array.storage();
    let stored = if piece.covered {
        None
    } else {
        store.get(&piece.key).await?
    };
    // A copy, not a borrow: the encoding job may outlive this future.
    let part = source.sub(&piece.from, &piece.part).to_c_order();
    let encoder = Arc::clone(encoder);
    let key = piece.key.clone();
    let encoded = off_runtime(move || {
        let view = Strided::c_contiguous(&part, &piece.part, encoder.item())
            .map_err(|why| ArrayError::Other(format!("chunk {}: {why}", piece.key)))?;
        if piece.covered {
            encoder.encode(piece.key.as_str(), &piece.shape, &view, &options)
        } else {
            encoder.encode_update(
                piece.key.as_str(),
                &piece.shape,
                stored.as_deref(),
                &piece.at,
                &view,
                &options,
            )
        }
    })
    .await?;
    match encoded {
        Some(bytes) => store.set(&key, bytes.into()).await,
        None => store.erase(&key).await,
    }
    .map_err(ArrayError::StorageError)
}
