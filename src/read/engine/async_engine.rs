//! The engine on zarrs' async API: fetches in flight concurrently on the
//! caller's runtime, every decode on rayon's threads.
//!
//! A decode never runs on the runtime's threads, so a read does not stall
//! the other tasks of a current-thread runtime. It writes into a buffer it
//! owns (the unit's part of the window, not the whole output), handed back
//! through a channel and copied into the caller's output on the runtime:
//! the caller's output is borrowed by the future, which may be dropped at
//! any await, so no other thread may hold a pointer into it. A future
//! dropped mid-way leaves its decodes to finish into their own buffers,
//! which are then freed.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use unsafe_cell_slice::UnsafeCellSlice;
use zarrs::array::{
    Array, ArrayBytes, ArrayBytesFixedDisjointView, ArrayError, ArraySubset, CodecOptions,
};
use zarrs::storage::{AsyncReadableStorageTraits, Bytes};

use super::fetch::{Fetched, Plan, chunk_pieces, plan, storage_error, vanished};
use super::plan::{Engine, Unit, units};
use super::{ASYNC_IN_FLIGHT, at, decode};

/// Decoded bytes of units in flight at most (their buffers), unless one
/// unit alone is larger.
const IN_FLIGHT_BYTES: usize = 64 << 20;

/// Read `window` of `array` into `out` (its bytes, C order, exactly the
/// window's size).
pub(crate) async fn read<S: ?Sized + AsyncReadableStorageTraits + 'static>(
    array: &Array<S>,
    engine: Arc<Engine>,
    window: &ArraySubset,
    out: &mut [u8],
    options: &CodecOptions,
) -> Result<(), ArrayError> {
    let units = units(array, window)?;
    let store = array.storage();
    let shape = window.shape().to_vec();
    let expected = window.num_elements_usize() * engine.element_size;
    if out.len() != expected {
        return Err(ArrayError::Other(format!(
            "output of {} bytes for a window of {expected} bytes",
            out.len()
        )));
    }
    let largest = units
        .iter()
        .map(|u| u.part.num_elements_usize() * engine.element_size)
        .max()
        .unwrap_or(0);
    let in_flight = (IN_FLIGHT_BYTES / largest.max(1)).clamp(1, ASYNC_IN_FLIGHT);
    let threads = options.concurrent_target().max(1);
    let unit_options =
        options.with_concurrent_target((threads / in_flight.min(units.len()).max(1)).max(1));
    let jobs = units.into_iter().map(|unit| {
        let store = store.clone();
        let engine = engine.clone();
        let options = unit_options;
        async move {
            if engine.zarrs_reads(&unit) {
                // Part of an uncompressed chunk: little to decode.
                let bytes = array
                    .async_retrieve_array_subset_opt::<ArrayBytes<'static>>(&unit.part, &options)
                    .await
                    .and_then(|b| Ok(b.into_fixed()?.into_owned()))
                    .map_err(|e| super::zarrs_error(&engine, &unit, &e))?;
                return Ok((unit, bytes));
            }
            let fetched = fetch(&*store, &engine, &unit, &options)
                .await
                .map_err(|e| at(&engine, e))?;
            off_runtime(move || {
                let bytes = decode_owned(&engine, &unit, fetched, &options)?;
                Ok((unit, bytes))
            })
            .await
        }
    });
    let mut decoded = futures::stream::iter(jobs).buffer_unordered(in_flight);
    let cells = UnsafeCellSlice::new(out);
    while let Some(result) = decoded.next().await {
        let (unit, bytes) = result?;
        // SAFETY: units partition the window, and this is the only view of
        // `out` alive (decodes write into their own buffers).
        let mut view = unsafe {
            ArrayBytesFixedDisjointView::new(cells, engine.element_size, &shape, unit.out.clone())
        }
        .map_err(zarrs::array::CodecError::from)?;
        view.copy_from_slice(&bytes)
            .map_err(zarrs::array::CodecError::from)?;
    }
    Ok(())
}

/// Decode `fetched` into a new buffer holding `unit`'s part of the window.
fn decode_owned(
    engine: &Engine,
    unit: &Unit,
    fetched: Fetched,
    options: &CodecOptions,
) -> Result<Vec<u8>, ArrayError> {
    let mut bytes = vec![0u8; unit.part.num_elements_usize() * engine.element_size];
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
        // The receiver is gone if the read was dropped: nothing to do.
        let _ = sender.send(std::panic::catch_unwind(AssertUnwindSafe(job)));
    });
    match receiver.await {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => Err(ArrayError::Other(
            "a decode job ended without a result".to_string(),
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
    let encoded = store
        .get_partial_many(&unit.key, Box::new(std::iter::once(read.index_range())))
        .await
        .map_err(|e| storage_error(unit, "reading its index: ", &e))?;
    let Some(mut encoded) = encoded else {
        return Ok(Fetched::Absent);
    };
    let encoded: Bytes = encoded
        .next()
        .await
        .transpose()
        .map_err(|e| storage_error(unit, "reading its index: ", &e))?
        .unwrap_or_default();
    let Some((read, index, byte_ranges)) = read.after_index(engine, unit, &encoded, options)?
    else {
        return Ok(Fetched::Absent);
    };
    let fetched = match store
        .get_partial_many(&unit.key, Box::new(byte_ranges.into_iter()))
        .await
    {
        Ok(Some(stream)) => stream.try_collect::<Vec<Bytes>>().await,
        Ok(None) => return Err(vanished(unit)),
        Err(e) => Err(e),
    };
    match fetched {
        Ok(bytes) => read.assemble(unit, &index, &encoded, bytes),
        Err(e) => {
            let len = store.size_key(&unit.key).await.ok().flatten();
            Err(read.chunks_error(unit, &index, len, &e))
        }
    }
}
