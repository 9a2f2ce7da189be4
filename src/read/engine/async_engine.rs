//! The engine on zarrs' async API: fetches in flight concurrently on the
//! caller's runtime, every decode on rayon's threads.
//!
//! A decode never runs on the runtime's threads, so a read does not stall
//! the other tasks of a current-thread runtime. Into the caller's buffer
//! ([`Output::Borrowed`]) it writes into a buffer it owns (the unit's part
//! of the window, not the whole output), handed back through a channel and
//! copied into the caller's output on the runtime: the caller's output is
//! borrowed by the future, which may be dropped at any await, so no other
//! thread may hold a pointer into it. A future dropped mid-way leaves its
//! decodes to finish into their own buffers, which are then freed. Into an
//! output the read owns with its decode jobs ([`Output::Shared`], the
//! `Vec` of the `_vec` calls) it writes straight, with no copy: each job
//! holds the buffer alive, and a read that fails because an object changed
//! waits for its jobs before it returns, so that its second attempt writes
//! alone.
//!
//! Fetching and decoding are two stages with a memory budget each, so
//! that a read of large units keeps fetching while it decodes: a unit
//! decoded into 32 MiB may be stored in 8 MiB or less (a cast to a
//! narrower type, then compression), and one budget for both kept 2 such
//! units in flight, waiting on one round trip after another. Into the
//! caller's buffer, buffers copied out are reused by the next decodes (a
//! fresh large buffer is fresh pages, each zeroed by the kernel on first
//! touch).

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use unsafe_cell_slice::UnsafeCellSlice;
use zarrs::array::{
    Array, ArrayBytes, ArrayBytesFixedDisjointView, ArrayError, ArraySubset, CodecOptions,
};
use zarrs::storage::AsyncReadableStorageTraits;

use super::fetch::{Fetched, Plan, chunk_pieces, plan, storage_error};
use super::plan::{Engine, Unit, units};
use super::shared_output::SharedCells;
use super::{ASYNC_IN_FLIGHT, at, decode};
use crate::read::versioned::{
    At, ObjectChanged, again_if_changed_async, read_at_async, read_index_async,
};

/// Decoded bytes of units being decoded at most (their buffers), unless
/// one unit alone is larger.
const DECODING_BYTES: usize = 64 << 20;

/// Stored bytes of units being fetched or waiting for a decode at most, as
/// far as their codecs bound them (see `Engine::fetched_bytes_bound`),
/// unless one unit alone is larger; units being decoded hold theirs beside
/// their decoded buffers. Kept apart from the decoded budget: a cast to a
/// narrower type stores a fraction of the decoded bytes (a compressor's
/// bound does not count what it saves), and a read that fetched only as
/// many units as it can decode at once waited on one round trip after
/// another.
const FETCHING_BYTES: usize = 64 << 20;

/// What a unit's job gives back.
enum Done {
    /// Its pieces, to decode.
    Fetched(Unit, Fetched),
    /// Its part of the window, decoded (by zarrs, or by a decode job), to
    /// copy into the output; `None` when written there already.
    Decoded(Unit, Option<Vec<u8>>),
}

/// Where a read writes the window (its bytes, C order, exactly the
/// window's size).
pub(crate) enum Output<'a> {
    /// The caller's buffer: decodes write into buffers of their own, which
    /// are copied into it on the runtime.
    Borrowed(&'a mut [u8]),
    /// A buffer the read owns with its decode jobs: they write into it.
    Shared(SharedCells),
}

/// Read `window` of `array` into `out`: once more if the store or the
/// engine says an object changed while it was being read
/// ([`ObjectChanged`]); the errors name the chunk.
pub(crate) async fn read<S: ?Sized + AsyncReadableStorageTraits + 'static>(
    array: &Array<S>,
    engine: Arc<Engine>,
    window: &ArraySubset,
    mut out: Output<'_>,
    options: &CodecOptions,
) -> Result<(), ArrayError> {
    let (cells, shared) = match &mut out {
        Output::Borrowed(out) => (UnsafeCellSlice::new(out), None),
        Output::Shared(shared) => (shared.cells(), Some(&*shared)),
    };
    again_if_changed_async(|| read_once(array, engine.clone(), window, cells, shared, options))
        .await
}

/// One attempt of [`read`], into `cells`: those of `shared` when given.
///
/// Fetches and decodes are two stages with budgets of their own: up to
/// [`ASYNC_IN_FLIGHT`] units fetched (or fetched and waiting) within
/// [`FETCHING_BYTES`] (no fewer than decode at once), and as many decoded
/// at once as fit in [`DECODING_BYTES`]; fetches go on while units decode.
async fn read_once<S: ?Sized + AsyncReadableStorageTraits + 'static>(
    array: &Array<S>,
    engine: Arc<Engine>,
    window: &ArraySubset,
    cells: UnsafeCellSlice<'_, u8>,
    shared: Option<&SharedCells>,
    options: &CodecOptions,
) -> Result<(), ArrayError> {
    let units = units(array, window)?;
    let store = array.storage();
    let shape: Arc<[u64]> = window.shape().into();
    let expected = window.num_elements_usize() * engine.element_size;
    if cells.len() != expected {
        return Err(ArrayError::Other(format!(
            "output of {} bytes for a window of {expected} bytes",
            cells.len()
        )));
    }
    let largest = |bytes: &dyn Fn(&Unit) -> usize| units.iter().map(bytes).max().unwrap_or(0);
    let decoded_bytes = |u: &Unit| u.part.num_elements_usize() * engine.element_size;
    let decoding = (DECODING_BYTES / largest(&decoded_bytes).max(1)).clamp(1, ASYNC_IN_FLIGHT);
    // At least as many fetches as decodes: a compressor's bound is the
    // decoded size and more, so compressed units get no fewer fetches than
    // one budget for both gave.
    let fetching = (FETCHING_BYTES / largest(&|u| engine.fetched_bytes_bound(u)).max(1))
        .clamp(decoding, ASYNC_IN_FLIGHT);
    let threads = options.concurrent_target().max(1);
    let unit_options =
        options.with_concurrent_target((threads / decoding.min(units.len()).max(1)).max(1));

    let fetch_job = |unit: Unit| {
        let store = store.clone();
        let engine = engine.clone();
        async move {
            if engine.zarrs_reads(&unit) {
                // Part of an uncompressed chunk: little to decode.
                let bytes = array
                    .async_retrieve_array_subset_opt::<ArrayBytes<'static>>(
                        &unit.part,
                        &unit_options,
                    )
                    .await
                    .and_then(|b| Ok(b.into_fixed()?.into_owned()))
                    .map_err(|e| super::zarrs_error(&engine, &unit, &e))?;
                return Ok(Done::Decoded(unit, Some(bytes)));
            }
            let fetched = fetch(&*store, &engine, &unit, &unit_options)
                .await
                .map_err(|e| at(&engine, e))?;
            Ok::<_, ArrayError>(Done::Fetched(unit, fetched))
        }
    };
    let decode_job = |unit: Unit, fetched: Fetched, buffer: Vec<u8>| {
        let engine = engine.clone();
        let shared = shared.cloned();
        let shape = shape.clone();
        off_runtime(move || match shared {
            Some(shared) => {
                let target = decode::Target {
                    cells: shared.cells(),
                    shape: &shape,
                    offset: unit.out.start(),
                };
                // The units partition the window and each is decoded by
                // one job: no other view of this unit's part is alive.
                decode::decode_unit(&engine, &unit, fetched, target, &unit_options)?;
                Ok((unit, None))
            }
            None => {
                let bytes = decode_owned(&engine, &unit, fetched, buffer, &unit_options)?;
                Ok((unit, Some(bytes)))
            }
        })
    };

    let mut waiting = units.into_iter();
    let mut in_fetch = FuturesUnordered::new();
    let mut awaiting_decode = VecDeque::new();
    let mut in_decode = FuturesUnordered::new();
    // Buffers copied out, for the next decodes: a fresh buffer of a large
    // unit is fresh pages, each zeroed by the kernel on first touch.
    let mut spare: Vec<Vec<u8>> = Vec::new();
    let result = async {
        loop {
            // Decodes start first, so that a fetched unit whose decode starts
            // frees its fetch slot for the fetch started next.
            while in_decode.len() < decoding {
                let Some((unit, pieces)) = awaiting_decode.pop_front() else {
                    break;
                };
                in_decode.push(decode_job(unit, pieces, spare.pop().unwrap_or_default()));
            }
            // Fetched units waiting for a decode keep their bytes: they count
            // against the fetch budget until their decode starts.
            while in_fetch.len() + awaiting_decode.len() < fetching {
                let Some(unit) = waiting.next() else { break };
                in_fetch.push(fetch_job(unit));
            }
            if in_fetch.is_empty() && in_decode.is_empty() {
                break;
            }
            // Whichever finishes first; an empty set answers `None` and waits
            // on nothing, so the other one's wake-up is the one registered.
            let done = futures::future::poll_fn(|cx| {
                if let Poll::Ready(Some(result)) = in_decode.poll_next_unpin(cx) {
                    return Poll::Ready(result.map(|(unit, bytes)| Done::Decoded(unit, bytes)));
                }
                if let Poll::Ready(Some(result)) = in_fetch.poll_next_unpin(cx) {
                    return Poll::Ready(result);
                }
                Poll::Pending
            })
            .await?;
            let (unit, bytes) = match done {
                Done::Fetched(unit, pieces) => {
                    awaiting_decode.push_back((unit, pieces));
                    continue;
                }
                Done::Decoded(unit, bytes) => (unit, bytes),
            };
            let Some(bytes) = bytes else { continue };
            // SAFETY: units partition the window, and this is the only view of
            // the unit's part alive (decodes into the caller's buffer write
            // into their own buffers; into a shared one, a unit copied here is
            // decoded by no job).
            let mut view = unsafe {
                ArrayBytesFixedDisjointView::new(
                    cells,
                    engine.element_size,
                    &shape,
                    unit.out.clone(),
                )
            }
            .map_err(zarrs::array::CodecError::from)?;
            view.copy_from_slice(&bytes)
                .map_err(zarrs::array::CodecError::from)?;
            // Buffers decoding and spare stay within the decoded budget
            // (decodes into a shared output take none).
            if shared.is_none() && in_decode.len() + spare.len() < decoding {
                spare.push(bytes);
            }
        }
        Ok(())
    }
    .await;
    if let Err(error) = &result
        && shared.is_some()
        && ObjectChanged::in_error(error).is_some()
    {
        // Decode jobs still writing into the shared output: `read` reads
        // again into it (see the module's documentation).
        while in_decode.next().await.is_some() {}
    }
    result
}

/// Decode `fetched` into `buffer` (its allocation reused), which then
/// holds `unit`'s part of the window.
fn decode_owned(
    engine: &Engine,
    unit: &Unit,
    fetched: Fetched,
    mut bytes: Vec<u8>,
    options: &CodecOptions,
) -> Result<Vec<u8>, ArrayError> {
    // Every byte is written by the decode (the pieces partition the
    // part); a reused buffer is zeroed first all the same, so that no
    // mistake there could show an earlier unit's values. A new one comes
    // zeroed from the allocator (fresh pages, no pass over them).
    let len = unit.part.num_elements_usize() * engine.element_size;
    if bytes.capacity() < len {
        bytes = vec![0u8; len];
    } else {
        bytes.clear();
        bytes.resize(len, 0);
    }
    let origin = vec![0; unit.part.dimensionality()];
    let target = decode::Target {
        cells: UnsafeCellSlice::new(&mut bytes),
        shape: unit.part.shape(),
        offset: &origin,
    };
    decode::decode_unit(engine, unit, fetched, target, options)?;
    Ok(bytes)
}

/// Run `job` on rayon's threads and wait for it without blocking the
/// runtime. A panic in `job` resumes here.
pub(crate) async fn off_runtime<R: Send + 'static>(
    job: impl FnOnce() -> Result<R, ArrayError> + Send + 'static,
) -> Result<R, ArrayError> {
    let (sender, receiver) = futures::channel::oneshot::channel();
    rayon::spawn(move || {
        // The receiver is gone if the read or write was dropped: nothing
        // to do.
        let _ = sender.send(std::panic::catch_unwind(AssertUnwindSafe(job)));
    });
    match receiver.await {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => Err(ArrayError::Other(
            "a job on rayon's threads ended without a result".to_string(),
        )),
    }
}

/// Fetch `unit` from an async store (see [`super::fetch`]).
async fn fetch<S: ?Sized + AsyncReadableStorageTraits>(
    store: &S,
    engine: &Engine,
    unit: &Unit,
    options: &CodecOptions,
) -> Result<Fetched, ArrayError> {
    let read = match plan(engine, unit)? {
        Plan::Chunk(pieces) => {
            let bytes = store
                .get(&unit.key)
                .await
                .map_err(|e| storage_error(unit, "", &e))?;
            return Ok(chunk_pieces(pieces, bytes));
        }
        Plan::Shard(read) => read,
    };
    if read.whole {
        let shard = store
            .get(&unit.key)
            .await
            .map_err(|e| storage_error(unit, "reading it: ", &e))?;
        return read.pieces_of_whole(engine, unit, shard, options);
    }
    let encoded = read_index_async(store, &unit.key, read.index_range())
        .await
        .map_err(|e| storage_error(unit, "reading its index: ", &e))?;
    let Some(encoded) = encoded else {
        return Ok(Fetched::Missing);
    };
    let Some((read, index, ranges)) = read.after_index(engine, unit, &encoded, options)? else {
        return Ok(Fetched::Absent);
    };
    match read_at_async(store, &unit.key, read.index_range(), &encoded, ranges).await {
        Ok(At::Ranges(bytes)) => read.assemble(unit, &index, bytes),
        Ok(At::Gone) => Ok(Fetched::Missing),
        Err(e) if ObjectChanged::in_storage_error(&e).is_some() => Err(e.into()),
        Err(e) => {
            let len = store.size_key(&unit.key).await.ok().flatten();
            Err(read.chunks_error(unit, &index, len, &e))
        }
    }
}
