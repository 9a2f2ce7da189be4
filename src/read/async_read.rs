//! The async twins of [`ArrayReadExt`](super::ArrayReadExt), for arrays over
//! async stores (e.g. `zarrs_object_store`).

use bytemuck::Pod;
use zarrs::array::{Array, ArrayBytes, ArrayError, ArraySubsetTraits, CodecOptions, Element};
use zarrs::storage::AsyncReadableStorageTraits;

use super::engine::Engine;
use super::engine::async_engine::{self, Output, off_runtime};
use super::engine::shared_output::{self, SharedOutput};
use super::versioned::goes_again;
use super::{check_output, checked_output_len, chunk_parts, located, output, whole_view};

/// Typed reads into the caller's memory, for [`Array`] over an async store.
///
/// The same calls as [`ArrayReadExt`](super::ArrayReadExt), each `async` and
/// prefixed `async_`.
///
/// They do not block the runtime: faulting in a new output and decoding
/// run on rayon's threads (for the arrays the read engine reads: all but
/// nested sharding, sharding behind array -> array or before bytes -> bytes
/// codecs, and storage transformers, which zarrs' own async read decodes on
/// the calling thread). A future dropped at an await leaves no thread
/// writing into the caller's output. The `_vec` calls decode straight into
/// the `Vec` they return (the read and its decode jobs own it together);
/// the `_into_slice` calls decode into buffers of their own, copied into
/// the caller's slice on the runtime.
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
#[allow(async_fn_in_trait)] // Implemented here only; callers await it directly.
pub trait AsyncArrayReadExt {
    /// Async [`retrieve_array_subset_vec`](super::ArrayReadExt::retrieve_array_subset_vec).
    ///
    /// # Errors
    /// As the sync call.
    async fn async_retrieve_array_subset_vec<T: Element + Pod + Send + Sync>(
        &self,
        subset: &dyn ArraySubsetTraits,
    ) -> Result<Vec<T>, ArrayError> {
        self.async_retrieve_array_subset_vec_opt(subset, &CodecOptions::default())
            .await
    }

    /// Async [`retrieve_array_subset_vec_opt`](super::ArrayReadExt::retrieve_array_subset_vec_opt).
    ///
    /// # Errors
    /// As the sync call.
    async fn async_retrieve_array_subset_vec_opt<T: Element + Pod + Send + Sync>(
        &self,
        subset: &dyn ArraySubsetTraits,
        options: &CodecOptions,
    ) -> Result<Vec<T>, ArrayError>;

    /// Async [`retrieve_array_subset_into_slice`](super::ArrayReadExt::retrieve_array_subset_into_slice).
    ///
    /// # Errors
    /// As the sync call.
    async fn async_retrieve_array_subset_into_slice<T: Element + Pod + Send + Sync>(
        &self,
        subset: &dyn ArraySubsetTraits,
        out: &mut [T],
    ) -> Result<(), ArrayError> {
        self.async_retrieve_array_subset_into_slice_opt(subset, out, &CodecOptions::default())
            .await
    }

    /// Async [`retrieve_array_subset_into_slice_opt`](super::ArrayReadExt::retrieve_array_subset_into_slice_opt).
    ///
    /// # Errors
    /// As the sync call.
    async fn async_retrieve_array_subset_into_slice_opt<T: Element + Pod + Send + Sync>(
        &self,
        subset: &dyn ArraySubsetTraits,
        out: &mut [T],
        options: &CodecOptions,
    ) -> Result<(), ArrayError>;
}

impl<S: ?Sized + AsyncReadableStorageTraits + 'static> AsyncArrayReadExt for Array<S> {
    async fn async_retrieve_array_subset_vec_opt<T: Element + Pod + Send + Sync>(
        &self,
        subset: &dyn ArraySubsetTraits,
        options: &CodecOptions,
    ) -> Result<Vec<T>, ArrayError> {
        let len = checked_output_len::<T>("async_retrieve_array_subset_vec", self, subset)?;
        // Faulting the pages in is CPU work: off the runtime's threads.
        let threads = options.concurrent_target();
        let mut out = off_runtime(move || Ok(output::zeroed_output::<T>(len, threads))).await?;
        if let Some(engine) = Engine::for_array(self) {
            // The read owns this output with its decode jobs, which decode
            // straight into it (see `shared_output`).
            let (owner, shared) = shared_output::share(out);
            let window = subset.to_array_subset();
            async_engine::read(self, engine, &window, Output::Shared(shared), options).await?;
            // Every decode job ended before the read did (see
            // `async_engine::read`), so the buffer is the read's alone.
            return SharedOutput::into_vec(owner).map_err(|_| {
                ArrayError::Other(
                    "async_retrieve_array_subset_vec: a decode job still holds the output"
                        .to_string(),
                )
            });
        }
        self.async_retrieve_array_subset_into_slice_opt(subset, &mut out, options)
            .await?;
        Ok(out)
    }

    async fn async_retrieve_array_subset_into_slice_opt<T: Element + Pod + Send + Sync>(
        &self,
        subset: &dyn ArraySubsetTraits,
        out: &mut [T],
        options: &CodecOptions,
    ) -> Result<(), ArrayError> {
        check_output::<T>(
            "async_retrieve_array_subset_into_slice",
            self,
            subset,
            out.len(),
        )?;
        if let Some(engine) = Engine::for_array(self) {
            let window = subset.to_array_subset();
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
            // Once more if an object changed (see `async_engine::read`).
            return async_engine::read(self, engine, &window, Output::Borrowed(bytes), options)
                .await;
        }
        // zarrs' own read, for what the engine does not read (see
        // `super::engine`): it decodes on the runtime's thread.
        let shape = subset.shape().to_vec();
        // The retry of `again_if_changed_async`, written out: each attempt
        // borrows `out` anew, which a closure's future cannot.
        let mut tried = 0;
        let result = loop {
            tried += 1;
            let mut view = whole_view(out, &shape)?;
            match self
                .async_retrieve_array_subset_into_opt(subset, (&mut view).into(), options)
                .await
            {
                Err(error) if goes_again(&error, tried) => {}
                result => break result,
            }
        };
        match result {
            Ok(()) => Ok(()),
            Err(error) => Err(locate(self, subset, error, options).await),
        }
    }
}

/// The async twin of [`super::locate`]: `error` with the array's path and
/// the key of the first chunk that fails when read alone.
async fn locate<S: ?Sized + AsyncReadableStorageTraits + 'static>(
    array: &Array<S>,
    subset: &dyn ArraySubsetTraits,
    error: ArrayError,
    options: &CodecOptions,
) -> ArrayError {
    if let Some(changed) = super::ObjectChanged::in_error(&error) {
        return changed.within(&format!("array {}", array.path()));
    }
    let mut failing = None;
    for (key, part) in chunk_parts(array, subset) {
        if let Err(e) = array
            .async_retrieve_array_subset_opt::<ArrayBytes<'static>>(&part, options)
            .await
        {
            failing = Some((key, e));
            break;
        }
    }
    located(array.path(), failing, error)
}
