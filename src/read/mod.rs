//! Typed reads that decode straight into the caller's memory.
//!
//! zarrs' `retrieve_array_subset::<Vec<T>>` decodes into a `Vec<u8>` and
//! then copies it into a fresh `Vec<T>` (a `u8` allocation cannot become a
//! `Vec<f64>`), and the fresh output is first touched 4 KiB page by 4 KiB
//! page. On a warm 256 MiB read those page faults are most of the time.
//! [`ArrayReadExt`] decodes into a typed buffer instead, through the
//! crate's read engine (`engine`: a window in one round trip per shard,
//! each chunk decoded straight into its window of the output; what it does
//! not read, zarrs' `retrieve_array_subset_into_opt` does):
//!
//! - [`retrieve_array_subset_vec`](ArrayReadExt::retrieve_array_subset_vec)
//!   returns a new `Vec<T>`, allocated zeroed by the allocator (no extra
//!   pass) and, from 4 MiB, advised for transparent huge pages on Linux and
//!   faulted in over the read's threads before the decode;
//! - [`retrieve_array_subset_into_slice`](ArrayReadExt::retrieve_array_subset_into_slice)
//!   fills a slice you own, so a reused buffer costs no allocation at all.
//!
//! Both work for every array zarrs opens (any codecs, sharded or not) whose
//! data type has a fixed size and matches `T` the way zarrs' own
//! [`Element`] rules say (`f64` for `float64`, `u8` for `uint8`, ...), and
//! give exactly what `retrieve_array_subset::<Vec<T>>` gives. Absent chunks
//! read as the fill value, as there.
//!
//! Unlike zarrs' own reads, a window that reaches outside the array is an
//! error (zarrs pads it with the fill value without a word: call zarrs'
//! `retrieve_array_subset` / `retrieve_array_subset_into_opt` where that is
//! what you want), and an error from a chunk names the array's path, the
//! chunk's (or shard's) key and the inner chunk. An array that zarrs' built-in `bytes` or `packbits` would
//! read wrong is refused with a message naming
//! [`register_overrides`](crate::register_overrides) (see
//! [`validate_codecs`](crate::validate_codecs)).
//!
//! ```no_run
//! use std::sync::Arc;
//! use zarrs::array::ArraySubset;
//! use zarrs_extension_codecs::{ArrayReadExt, open_array};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Arc::new(zarrs::filesystem::FilesystemStore::new("product.zarr")?);
//! let array = open_array(store, "/reflectance")?;
//!
//! // The whole array, into a new vector.
//! let all: Vec<f64> = array.retrieve_array_subset_vec::<f64>(&array.subset_all())?;
//!
//! // 256 x 256 windows into one reused buffer.
//! let mut tile = vec![0.0f64; 256 * 256];
//! for y in 0..4 {
//!     let window = ArraySubset::new_with_ranges(&[y * 256..(y + 1) * 256, 0..256]);
//!     array.retrieve_array_subset_into_slice::<f64>(&window, &mut tile)?;
//! }
//! # Ok(()) }
//! ```
//!
//! Under the `async` feature, [`AsyncArrayReadExt`] has the same calls for
//! arrays over async stores; its decoding runs on rayon's threads, never on
//! the async runtime's.

#[cfg(feature = "async")]
mod async_read;
#[doc(hidden)] // `pub` for benches/chunk_decode.rs only
pub mod chunk_decode;
pub(crate) mod engine;
mod os_error;
pub(crate) mod output;
mod placement;
pub mod versioned;

pub use os_error::OsReadError;
pub use placement::WindowAt;
pub use versioned::ObjectChanged;

use bytemuck::Pod;
use std::sync::atomic::AtomicBool;
use unsafe_cell_slice::UnsafeCellSlice;
use zarrs::array::{
    Array, ArrayBytes, ArrayBytesFixedDisjointView, ArrayError, ArraySubset, ArraySubsetTraits,
    CodecOptions, DataType, Element, ElementError,
};

use zarrs::storage::{ReadableStorageTraits, StorageError};

#[cfg(feature = "async")]
pub use async_read::AsyncArrayReadExt;

/// Why the crate's read engine does not read `array`, in words that finish
/// "the engine does not read ..." (e.g. `variable-length data types:
/// string`, `sharding_indexed behind array -> array codecs: scale_offset ->
/// cast_value`), or `None` when it does. [`ArrayReadExt`] then reads the
/// array through zarrs' `retrieve_array_subset_into_opt` (a fixed-size
/// data type without a mask), or refuses it (the others). For tools that
/// say which path a read takes (`examples/inspect.rs`); the decision is the
/// engine's own, made once per array.
#[must_use]
pub fn engine_refusal<S: ?Sized>(array: &Array<S>) -> Option<String> {
    engine::plan::refusal(array)
}

/// Typed reads into the caller's memory, for [`Array`] over any readable store.
///
/// See the [module documentation](self) for what they save over
/// `retrieve_array_subset::<Vec<T>>`.
pub trait ArrayReadExt {
    /// Read `subset` into a new `Vec<T>` (C order).
    ///
    /// # Errors
    /// If `T` does not match the array's data type (see [`Element`]), the
    /// data type has no fixed size, `subset` reaches outside the array (use
    /// zarrs' `retrieve_array_subset` to read it padded with the fill
    /// value), the array needs [`register_overrides`](crate::register_overrides)
    /// to read right, or a chunk cannot be read or decoded (the error names
    /// the array's path and the chunk's key).
    fn retrieve_array_subset_vec<T: Element + Pod>(
        &self,
        subset: &dyn ArraySubsetTraits,
    ) -> Result<Vec<T>, ArrayError> {
        self.retrieve_array_subset_vec_opt(subset, &CodecOptions::default())
    }

    /// [`retrieve_array_subset_vec`](Self::retrieve_array_subset_vec) with
    /// explicit codec options (e.g. a thread budget).
    ///
    /// # Errors
    /// As [`retrieve_array_subset_vec`](Self::retrieve_array_subset_vec).
    fn retrieve_array_subset_vec_opt<T: Element + Pod>(
        &self,
        subset: &dyn ArraySubsetTraits,
        options: &CodecOptions,
    ) -> Result<Vec<T>, ArrayError>;

    /// Read `subset` into `out` (C order), which must hold exactly as many
    /// elements as `subset`. Reusing `out` across reads costs no allocation.
    ///
    /// # Errors
    /// As [`retrieve_array_subset_vec`](Self::retrieve_array_subset_vec), and
    /// if `out` has the wrong length. On error `out` may be partly written.
    fn retrieve_array_subset_into_slice<T: Element + Pod>(
        &self,
        subset: &dyn ArraySubsetTraits,
        out: &mut [T],
    ) -> Result<(), ArrayError> {
        self.retrieve_array_subset_into_slice_opt(subset, out, &CodecOptions::default())
    }

    /// [`retrieve_array_subset_into_slice`](Self::retrieve_array_subset_into_slice)
    /// with explicit codec options.
    ///
    /// # Errors
    /// As [`retrieve_array_subset_into_slice`](Self::retrieve_array_subset_into_slice).
    fn retrieve_array_subset_into_slice_opt<T: Element + Pod>(
        &self,
        subset: &dyn ArraySubsetTraits,
        out: &mut [T],
        options: &CodecOptions,
    ) -> Result<(), ArrayError>;

    /// Read several windows of the array, each into its place in one
    /// output of `out_shape` elements (C order, native byte order), given
    /// as its bytes: the shape of a batch of chunks read into one array,
    /// as zarr-python's `CodecPipeline` hands it. The windows are read
    /// together, by one pool of `options.concurrent_target()` threads.
    ///
    /// For a typed buffer, pass `bytemuck::cast_slice_mut(&mut out)`.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use zarrs::array::{ArrayBuilder, ArraySubset, CodecOptions, data_type};
    /// use zarrs_extension_codecs::{ArrayReadExt, WindowAt};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = Arc::new(zarrs::storage::store::MemoryStore::new());
    /// let array = ArrayBuilder::new(vec![4, 4], vec![2, 2], data_type::uint8(), 0u8)
    ///     .build(store, "/")?;
    /// array.store_array_subset(&array.subset_all(), (0..16u8).collect::<Vec<_>>())?;
    ///
    /// // Rows 0..2 and rows 2..4 of column 3, side by side in a 2 x 2 output.
    /// let windows = [
    ///     WindowAt { window: ArraySubset::new_with_ranges(&[0..2, 3..4]), at: vec![0, 0] },
    ///     WindowAt { window: ArraySubset::new_with_ranges(&[2..4, 3..4]), at: vec![0, 1] },
    /// ];
    /// let mut out = [0u8; 4];
    /// array.retrieve_windows_into_bytes_opt(&windows, &mut out, &[2, 2], &CodecOptions::default())?;
    /// assert_eq!(out, [3, 11, 7, 15]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// If the data type has no fixed size or has a mask, a window reaches
    /// outside the array, `out` does not hold `out_shape`'s elements, a
    /// place reaches outside the output or two places share an element,
    /// the array needs [`register_overrides`](crate::register_overrides)
    /// to read right, or a chunk cannot be read or decoded (the error
    /// names the array's path and the chunk's key). On error `out` may be
    /// partly written.
    fn retrieve_windows_into_bytes_opt(
        &self,
        windows: &[WindowAt],
        out: &mut [u8],
        out_shape: &[u64],
        options: &CodecOptions,
    ) -> Result<(), ArrayError>;

    /// [`retrieve_windows_into_bytes_opt`](Self::retrieve_windows_into_bytes_opt),
    /// and for each window whether a chunk (or shard) it reads is stored:
    /// `false`, it read as the fill value because nothing of it is stored
    /// (zarr-python's `read_missing_chunks = false` raises for those). The
    /// read engine finds out as it fetches; a part it leaves to zarrs (a
    /// part of an uncompressed chunk, say) costs a size asked of the store
    /// while its window has no stored chunk yet, and for an array the
    /// engine does not read (see [`engine_refusal`]) each window's chunks
    /// are asked for their size after the read.
    ///
    /// # Errors
    /// As [`retrieve_windows_into_bytes_opt`](Self::retrieve_windows_into_bytes_opt).
    fn retrieve_windows_into_bytes_stored_opt(
        &self,
        windows: &[WindowAt],
        out: &mut [u8],
        out_shape: &[u64],
        options: &CodecOptions,
    ) -> Result<Vec<bool>, ArrayError>;
}

impl<S: ?Sized + ReadableStorageTraits + 'static> ArrayReadExt for Array<S> {
    fn retrieve_array_subset_vec_opt<T: Element + Pod>(
        &self,
        subset: &dyn ArraySubsetTraits,
        options: &CodecOptions,
    ) -> Result<Vec<T>, ArrayError> {
        let len = checked_output_len::<T>("retrieve_array_subset_vec", self, subset)?;
        let mut out = output::zeroed_output::<T>(len, options.concurrent_target());
        read_checked(self, subset, &mut out, options)?;
        Ok(out)
    }

    fn retrieve_array_subset_into_slice_opt<T: Element + Pod>(
        &self,
        subset: &dyn ArraySubsetTraits,
        out: &mut [T],
        options: &CodecOptions,
    ) -> Result<(), ArrayError> {
        let call = "retrieve_array_subset_into_slice";
        check_output::<T>(call, self, subset, out.len())?;
        output::touch_for_streaming(bytemuck::cast_slice_mut(out), options.concurrent_target());
        read_checked(self, subset, out, options)
    }

    fn retrieve_windows_into_bytes_opt(
        &self,
        windows: &[WindowAt],
        out: &mut [u8],
        out_shape: &[u64],
        options: &CodecOptions,
    ) -> Result<(), ArrayError> {
        read_windows(self, windows, out, out_shape, false, options).map(drop)
    }

    fn retrieve_windows_into_bytes_stored_opt(
        &self,
        windows: &[WindowAt],
        out: &mut [u8],
        out_shape: &[u64],
        options: &CodecOptions,
    ) -> Result<Vec<bool>, ArrayError> {
        read_windows(self, windows, out, out_shape, true, options).map(Option::unwrap_or_default)
    }
}

/// The windows of [`ArrayReadExt::retrieve_windows_into_bytes_opt`] read
/// into their places; with `stored`, whether each window's chunks are.
fn read_windows<S: ?Sized + ReadableStorageTraits + 'static>(
    array: &Array<S>,
    windows: &[WindowAt],
    out: &mut [u8],
    out_shape: &[u64],
    stored: bool,
    options: &CodecOptions,
) -> Result<Option<Vec<bool>>, ArrayError> {
    let call = "retrieve_windows_into_bytes";
    let data_type = array.data_type();
    let size = match data_type.fixed_size() {
        Some(size) if !data_type.is_optional() => size,
        _ => {
            return Err(element_error(format!(
                "{call}: data type {data_type} has no fixed size or has a mask; read it \
                 with retrieve_array_subset::<ArrayBytes>() instead"
            )));
        }
    };
    for part in windows {
        if part.window.dimensionality() != array.dimensionality() {
            return Err(ArrayError::InvalidArraySubset(
                part.window.clone(),
                array.shape().to_vec(),
            ));
        }
        check_inside(call, array, &part.window)?;
    }
    crate::validate::check_overrides(array)?;
    placement::check(windows, out_shape, out.len(), size)
        .map_err(|e| element_error(format!("{call}: array {}: {e}", array.path())))?;
    output::touch_for_streaming(out, options.concurrent_target());
    let engine = engine::Engine::for_array(array);
    versioned::again_if_changed(|| match &engine {
        Some(engine) => {
            // Flags of this attempt only: a retry reads every window again.
            let flags: Vec<AtomicBool> = if stored {
                windows.iter().map(|_| AtomicBool::new(false)).collect()
            } else {
                Vec::new()
            };
            let flags_given = stored.then_some(flags.as_slice());
            engine::read_placed(array, engine, windows, out, out_shape, flags_given, options)?;
            Ok(stored.then(|| flags.into_iter().map(AtomicBool::into_inner).collect()))
        }
        None => {
            read_placed_by_zarrs(array, windows, out, out_shape, size, options)?;
            stored.then(|| windows_stored(array, windows)).transpose()
        }
    })
}

/// Whether each of `windows` reads a chunk of `array` that is stored: a
/// size asked of the store for each chunk, until one is found.
fn windows_stored<S: ?Sized + ReadableStorageTraits + 'static>(
    array: &Array<S>,
    windows: &[WindowAt],
) -> Result<Vec<bool>, ArrayError> {
    let store = array.storage();
    windows
        .iter()
        .map(|part| {
            if part.window.is_empty() {
                return Ok(false);
            }
            for (key, _) in chunk_parts(array, &part.window) {
                let key = zarrs::storage::StoreKey::new(key).map_err(StorageError::from)?;
                if store.size_key(&key)?.is_some() {
                    return Ok(true);
                }
            }
            Ok(false)
        })
        .collect()
}

/// [`ArrayReadExt::retrieve_windows_into_bytes_opt`] for an array the
/// engine does not read: zarrs reads each window into its place, the
/// windows spread over the threads of `options`.
fn read_placed_by_zarrs<S: ?Sized + ReadableStorageTraits + 'static>(
    array: &Array<S>,
    windows: &[WindowAt],
    out: &mut [u8],
    out_shape: &[u64],
    size: usize,
    options: &CodecOptions,
) -> Result<(), ArrayError> {
    let live: Vec<&WindowAt> = windows.iter().filter(|w| !w.window.is_empty()).collect();
    let threads = options.concurrent_target().max(1);
    let workers = threads.min(live.len()).max(1);
    let inner = options.with_concurrent_target((threads / workers).max(1));
    let cells = UnsafeCellSlice::new(out);
    engine::for_each_parallel(&live, workers, None, |part| {
        let place = part.destination().map_err(ArrayError::Other)?;
        // SAFETY: `placement::check` found every place inside `out_shape`
        // and no two non-empty places sharing an element, so this view
        // overlaps no other alive; `out` stays mutably borrowed by `cells`
        // until every view is dropped.
        let mut view = unsafe { ArrayBytesFixedDisjointView::new(cells, size, out_shape, place) }?;
        array
            .retrieve_array_subset_into_opt(&part.window, (&mut view).into(), &inner)
            .map_err(|error| locate(array, &part.window, error, &inner))
    })
}

/// Decode `subset` into `out`, whose length and element type are checked:
/// through the [`engine`] where it reads the array, else through zarrs.
fn read_checked<S: ?Sized + ReadableStorageTraits + 'static, T: Pod>(
    array: &Array<S>,
    subset: &dyn ArraySubsetTraits,
    out: &mut [T],
    options: &CodecOptions,
) -> Result<(), ArrayError> {
    let shape = subset.shape().to_vec();
    let window = subset.to_array_subset();
    let engine = engine::Engine::for_array(array);
    let attempt = || match &engine {
        Some(engine) => engine::read(
            array,
            engine,
            &window,
            bytemuck::cast_slice_mut(&mut *out),
            options,
        ),
        None => {
            let mut view = whole_view(out, &shape)?;
            array.retrieve_array_subset_into_opt(subset, (&mut view).into(), options)
        }
    };
    // A shard rewritten between its index and its chunks, seen by the
    // store (which has dropped what it knew of the old version) or by the
    // engine (the index read again with the chunks differs): one more read
    // sees the new.
    let result = versioned::again_if_changed(attempt);
    match engine {
        // The engine's errors name the chunk already.
        Some(_) => result,
        None => result.map_err(|error| locate(array, subset, error, options)),
    }
}

/// `error`, from reading `subset` of `array`, with the array's path and the
/// key of the first chunk that fails when read alone (zarrs' errors do not
/// say which chunk failed). Costs a second read of the chunks up to that
/// one, on the error path only. A change of an object ([`ObjectChanged`])
/// stays typed, with the array's path in front.
fn locate<S: ?Sized + ReadableStorageTraits + 'static>(
    array: &Array<S>,
    subset: &dyn ArraySubsetTraits,
    error: ArrayError,
    options: &CodecOptions,
) -> ArrayError {
    if let Some(changed) = ObjectChanged::in_error(&error) {
        // Kept typed, so that the read goes again (the store names the key).
        return changed.within(&format!("array {}", array.path()));
    }
    let failing = chunk_parts(array, subset).find_map(|(key, part)| {
        array
            .retrieve_array_subset_opt::<ArrayBytes<'static>>(&part, options)
            .err()
            .map(|e| (key, e))
    });
    located(array.path(), failing, error)
}

/// The chunks `subset` touches, in C order, each with its key and the part
/// of `subset` inside it (for [`locate`] and its async twin); ends early at
/// a chunk whose bounds cannot be worked out.
fn chunk_parts<'a, S: ?Sized>(
    array: &'a Array<S>,
    subset: &'a dyn ArraySubsetTraits,
) -> impl Iterator<Item = (String, ArraySubset)> + 'a {
    let chunks = array.chunks_in_array_subset(subset).ok().flatten();
    chunks
        .into_iter()
        .flat_map(|chunks| chunks.indices())
        .map_while(move |indices| {
            let part = array
                .chunk_subset_bounded(&indices)
                .ok()?
                .overlap(subset)
                .ok()?;
            Some((array.chunk_key(&indices).to_string(), part))
        })
}

/// What [`locate`] returns: `error` with the array's path, or, if a chunk
/// failed when read alone, that chunk's key and error.
fn located(
    path: &zarrs::node::NodePath,
    failing: Option<(String, ArrayError)>,
    error: ArrayError,
) -> ArrayError {
    match failing {
        Some((key, e)) => ArrayError::Other(format!("array {path}: chunk {key}: {e}")),
        None => ArrayError::Other(format!("array {path}: {error}")),
    }
}

/// Check `T` against the array and `subset`, and return the output length.
pub(crate) fn checked_output_len<T: Element + Pod>(
    call: &str,
    array: &Array<impl ?Sized>,
    subset: &dyn ArraySubsetTraits,
) -> Result<usize, ArrayError> {
    check_element::<T>(call, array.data_type())?;
    if subset.dimensionality() != array.dimensionality() {
        return Err(ArrayError::InvalidArraySubset(
            subset.to_array_subset(),
            array.shape().to_vec(),
        ));
    }
    check_inside(call, array, subset)?;
    crate::validate::check_overrides(array)?;
    let elements = subset.num_elements();
    usize::try_from(elements)
        .ok()
        .filter(|n| {
            n.checked_mul(size_of::<T>())
                .is_some_and(|b| b <= isize::MAX as usize)
        })
        .ok_or_else(|| {
            element_error(format!(
                "{call}: subset {} has {elements} elements, more than this machine can address",
                subset.to_array_subset()
            ))
        })
}

/// `subset` must lie inside the array: zarrs pads the part outside with the
/// fill value, which hides an off-by-one in the caller's window.
fn check_inside(
    call: &str,
    array: &Array<impl ?Sized>,
    subset: &dyn ArraySubsetTraits,
) -> Result<(), ArrayError> {
    let shape = array.shape();
    let start = subset.start();
    let outside = subset
        .shape()
        .iter()
        .zip(start.iter())
        .zip(shape)
        .position(|((&len, &start), &dim)| start.checked_add(len).is_none_or(|end| end > dim));
    if let Some(axis) = outside {
        // Not `ArraySubset`'s Display, whose `start + len` overflows.
        let ranges: Vec<String> = start
            .iter()
            .zip(subset.shape().iter())
            .map(|(&s, &len)| format!("{s}..{}", s.saturating_add(len)))
            .collect();
        return Err(ArrayError::Other(format!(
            "{call}: window {} reaches outside array {} of shape {shape:?} (dimension {axis}: \
             {}..{} against {}); zarrs' own retrieve_array_subset reads it padded with the fill \
             value",
            format_args!("[{}]", ranges.join(", ")),
            array.path(),
            start[axis],
            start[axis].saturating_add(subset.shape()[axis]),
            shape[axis],
        )));
    }
    Ok(())
}

/// As [`checked_output_len`], and the caller's buffer must hold exactly the subset.
pub(crate) fn check_output<T: Element + Pod>(
    call: &str,
    array: &Array<impl ?Sized>,
    subset: &dyn ArraySubsetTraits,
    out_len: usize,
) -> Result<(), ArrayError> {
    let len = checked_output_len::<T>(call, array, subset)?;
    if out_len != len {
        return Err(element_error(format!(
            "{call}: output holds {out_len} elements, subset {} has {len}",
            subset.to_array_subset()
        )));
    }
    Ok(())
}

/// `T` must be zarrs' element type for `data_type`, which must have a fixed size.
fn check_element<T: Element + Pod>(call: &str, data_type: &DataType) -> Result<(), ArrayError> {
    let type_name = std::any::type_name::<T>();
    if data_type.fixed_size().is_none() {
        return Err(element_error(format!(
            "{call}: data type {data_type} has variable-length elements; read it with \
             retrieve_array_subset::<ArrayBytes>() or a Vec<String> / Vec<Vec<u8>> instead"
        )));
    }
    if data_type.is_optional() {
        return Err(element_error(format!(
            "{call}: data type {data_type} is optional (has a mask); read it with \
             retrieve_array_subset::<ArrayBytes>() instead"
        )));
    }
    T::validate_data_type(data_type).map_err(|_| {
        element_error(format!(
            "{call}: element type {type_name} ({} bytes) does not match data type {data_type}{}",
            size_of::<T>(),
            data_type
                .fixed_size()
                .map(|s| format!(" ({s} bytes)"))
                .unwrap_or_default()
        ))
    })
}

fn element_error(message: String) -> ArrayError {
    ArrayError::ElementError(ElementError::Other(message))
}

/// A decode target spanning all of `out`, laid out as `shape` (C order).
pub(crate) fn whole_view<'a, T: Pod>(
    out: &'a mut [T],
    shape: &'a [u64],
) -> Result<ArrayBytesFixedDisjointView<'a>, ArrayError> {
    let whole = ArraySubset::new_with_shape(shape.to_vec());
    let cells = UnsafeCellSlice::new(bytemuck::cast_slice_mut::<T, u8>(out));
    // SAFETY: this is the only view of `out`, which stays mutably borrowed
    // for the view's lifetime, so no other view can overlap it. zarrs checks
    // that `whole` fits `shape` and that the byte length is the shape's size
    // times `size_of::<T>()`, and returns an error otherwise.
    Ok(unsafe { ArrayBytesFixedDisjointView::new(cells, size_of::<T>(), shape, whole) }?)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use zarrs::array::{ArrayBuilder, data_type};
    use zarrs::storage::store::MemoryStore;

    use super::*;

    /// A 5 x 7 uint16 array of 2 x 3 chunks (edge chunks, one never
    /// written): the slice form writes every element through the view that
    /// `whole_view` makes, values worked out from the writes. Small enough
    /// for Miri.
    #[test]
    fn reads_through_the_view() {
        let store = Arc::new(MemoryStore::new());
        let array = ArrayBuilder::new(vec![5, 7], vec![2, 3], data_type::uint16(), 999u16)
            .build(store, "/")
            .unwrap();
        let values: Vec<u16> = (0..35).collect();
        array
            .store_array_subset(&array.subset_all(), values.clone())
            .unwrap();
        array.erase_chunk(&[1, 1]).unwrap(); // rows 2..4, columns 3..6: fill value
        let mut out = vec![u16::MAX; 35];
        array
            .retrieve_array_subset_into_slice(&array.subset_all(), &mut out)
            .unwrap();
        let want: Vec<u16> = (0..35)
            .map(|i| {
                if (2..4).contains(&(i / 7)) && (3..6).contains(&(i % 7)) {
                    999
                } else {
                    i
                }
            })
            .collect();
        assert_eq!(out, want);
        let window = ArraySubset::new_with_ranges(&[1..4, 2..5]);
        let got = array.retrieve_array_subset_vec::<u16>(&window).unwrap();
        assert_eq!(got, [9, 10, 11, 16, 999, 999, 23, 999, 999]);
    }

    #[test]
    fn a_short_buffer_is_refused_before_any_view() {
        let mut out = [0u8; 3];
        let shape = [2u64, 2];
        assert!(whole_view(&mut out, &shape).is_err());
    }
}
