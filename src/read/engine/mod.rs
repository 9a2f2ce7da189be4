//! The crate's own read path: a window in one round trip per shard.
//!
//! zarrs 0.23's sharding partial decoder reads an inner chunk per request,
//! as many at once as there are cores, and decodes every chunk into
//! chunk-sized buffers before copying it out. This engine plans the I/O of
//! a window per shard instead:
//!
//! - a chunk of an unsharded array that the window needs whole (all of it
//!   inside the array): one `get`; a part of one: zarrs' partial decoder
//!   when the chunk's codecs can read part of its bytes (no compression;
//!   it fetches only what the part needs), else one `get`;
//! - a shard the window needs part of: its index (one request, which the
//!   store may serve from its cache), decoded through the sharding
//!   configuration's `index_codecs` (so `crc32c` is checked) and checked
//!   entry by entry (missing-chunk marker, `offset + nbytes` overflow, more
//!   bytes than the inner codecs can write), then every inner chunk the
//!   window needs in ONE `get_partial_many` call, whose ranges the store
//!   may coalesce and fetch concurrently (object_store does), whatever the
//!   core count; that call asks for the index range again (see below);
//! - a shard the window needs whole: one `get`, its index read from it and
//!   every range checked against its length.
//!
//! A shard rewritten or deleted between its index and its inner chunks:
//! the chunks are read at the version of the index their ranges came from
//! ([`versioned`](crate::read::versioned) says how, what a store promises
//! and what it costs); a rewrite fails the attempt with
//! [`ObjectChanged`](crate::read::ObjectChanged) and `ArrayReadExt` /
//! `AsyncArrayReadExt` read once more, a deletion reads as the fill value.
//! zarrs' own reads (below) read a shard's index and chunks with no such
//! check.
//!
//! Chunks and shards are fetched and decoded on up to
//! `CodecOptions::concurrent_target` threads at once (the sync API), each
//! decoded piece written straight into its window of the output; or (the
//! async API) with up to 16 units fetched or waiting for a decode within
//! 64 MiB of stored bytes as the codecs bound them (no fewer than decode
//! at once), beside decodes within 64 MiB of decoded buffers
//! (`async_engine`). Errors name the array, the chunk or shard key and
//! the inner chunk, from the first attempt.
//!
//! It is a path of [`ArrayReadExt`](crate::ArrayReadExt) /
//! [`AsyncArrayReadExt`](crate::AsyncArrayReadExt) rather than an
//! override of `sharding_indexed`: a codec sees one shard at a time, behind
//! zarrs' partial decoder, and can neither plan requests across the inner
//! chunks of a window nor write into the caller's buffer; the read call
//! sees the whole window, the store and the output. zarrs' own reads
//! (`retrieve_array_subset`, ...) are unchanged.
//!
//! What falls back to zarrs' `retrieve_array_subset_into_opt` (today's
//! path): data types without a fixed size or with a mask, arrays with
//! storage transformers, `sharding_indexed` behind array -> array codecs or
//! in front of bytes -> bytes codecs, nested sharding, and index codecs
//! that do not give an index of fixed size.

#[cfg(feature = "async")]
pub(crate) mod async_engine;
pub(crate) mod decode;
pub(crate) mod fetch;
pub(crate) mod plan;
pub(crate) mod shard_index;
#[cfg(feature = "async")]
pub(crate) mod shared_output;
pub(crate) mod workers;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use unsafe_cell_slice::UnsafeCellSlice;
use zarrs::array::{
    Array, ArrayBytesFixedDisjointView, ArrayError, ArraySubset, CodecError, CodecOptions,
};
use zarrs::storage::ReadableStorageTraits;

pub(crate) use plan::Engine;
pub(crate) use workers::for_each_parallel;

use super::placement::{self, WindowAt};
use super::versioned::ObjectChanged;

/// Units fetched or waiting for a decode at most on the async API, and
/// units decoded at once at most.
#[cfg(feature = "async")]
pub(crate) const ASYNC_IN_FLIGHT: usize = workers::IN_FLIGHT;

/// Read `window` of `array` into `out` (its bytes, C order, exactly the
/// window's size), with `engine` made for `array`.
pub(crate) fn read<S: ?Sized + ReadableStorageTraits + 'static>(
    array: &Array<S>,
    engine: &Engine,
    window: &ArraySubset,
    out: &mut [u8],
    options: &CodecOptions,
) -> Result<(), ArrayError> {
    let shape = window.shape().to_vec();
    let placed = [WindowAt {
        window: window.clone(),
        at: vec![0; shape.len()],
    }];
    read_placed(array, engine, &placed, out, &shape, None, options)
}

/// Read each window of `placed` into its place in `out`, the bytes of an
/// output of `out_shape` elements (C order), with `engine` made for
/// `array`: the units of every window planned together, so that one pool
/// of workers reads them all.
///
/// The windows must lie inside the array; their places are checked here
/// (inside the output, no two sharing an element) before any view of
/// `out` is made. With `stored` (one flag per window, false on entry),
/// a window's flag is set when a chunk or shard it reads is stored, as the
/// fetch finds (a stat for a unit zarrs reads).
pub(crate) fn read_placed<S: ?Sized + ReadableStorageTraits + 'static>(
    array: &Array<S>,
    engine: &Engine,
    placed: &[WindowAt],
    out: &mut [u8],
    out_shape: &[u64],
    stored: Option<&[AtomicBool]>,
    options: &CodecOptions,
) -> Result<(), ArrayError> {
    placement::check(placed, out_shape, out.len(), engine.element_size)
        .map_err(ArrayError::Other)?;
    let mut units = Vec::new();
    for (w, part) in placed.iter().enumerate() {
        if part.window.is_empty() {
            continue;
        }
        for mut unit in plan::units(array, &part.window)? {
            // The unit's part, from the window's coordinates to the output's.
            let start: Vec<u64> = unit
                .out
                .start()
                .iter()
                .zip(&part.at)
                .map(|(a, b)| a + b)
                .collect();
            unit.out = ArraySubset::new_with_start_shape(start, unit.out.shape().to_vec())?;
            units.push((w, unit));
        }
    }
    let store = array.storage();
    let cells = UnsafeCellSlice::new(out);
    let threads = options.concurrent_target().max(1);
    let workers = threads.min(units.len()).max(1);
    let inner = options.with_concurrent_target((threads / workers).max(1));
    // Decodes at once: the workers the thread budget gives, however many
    // more wait on fetches once the read grows (see `workers`). Units that
    // zarrs reads are not timed: they fetch and decode in one call.
    let permits = workers::Permits::new(workers);
    let grow = workers::Grow::up_to(workers::IN_FLIGHT.max(workers));
    let note = |w: usize, is_stored: bool| {
        if let Some(flag) = stored.and_then(|s| s.get(w))
            && is_stored
        {
            flag.store(true, Ordering::Relaxed);
        }
    };
    let run = |(w, unit): &(usize, plan::Unit)| -> Result<(), ArrayError> {
        if engine.zarrs_reads(unit) {
            // Asked only while the window has no stored unit yet.
            if stored
                .and_then(|s| s.get(*w))
                .is_some_and(|flag| !flag.load(Ordering::Relaxed))
            {
                let is_stored = store
                    .size_key(&unit.key)
                    .map_err(|e| at(engine, e.into()))?
                    .is_some();
                note(*w, is_stored);
            }
            // SAFETY: `placement::check` found the windows' places disjoint
            // and inside the output, and the units of a window partition
            // it: this view is the only one of the unit's part while it
            // lives.
            let mut view = unsafe {
                ArrayBytesFixedDisjointView::new(
                    cells,
                    engine.element_size,
                    out_shape,
                    unit.out.clone(),
                )
            }
            .map_err(CodecError::from)?;
            // zarrs fetches and decodes in one: a decode's permit for both.
            return permits.run(|| {
                array
                    .retrieve_array_subset_into_opt(&unit.part, (&mut view).into(), &inner)
                    .map_err(|e| zarrs_error(engine, unit, &e))
            });
        }
        let started = Instant::now();
        let fetched = fetch::fetch(&*store, engine, unit, &inner).map_err(|e| at(engine, e))?;
        note(*w, fetched.stored());
        let bytes = fetched.bytes();
        if workers::is_slow(started.elapsed(), bytes) {
            grow.slow_fetch(bytes);
        }
        let target = decode::Target {
            cells,
            shape: out_shape,
            offset: unit.out.start(),
        };
        permits.run(|| decode::decode_unit(engine, unit, fetched, target, &inner))
    };
    for_each_parallel(&units, workers, Some(&grow), run)
}

/// `error` from zarrs' read of `unit`'s part, with the array's path and
/// the chunk's key.
fn zarrs_error(engine: &Engine, unit: &plan::Unit, error: &ArrayError) -> ArrayError {
    ObjectChanged::in_context(error, &format!("array {}: chunk {}", engine.path, unit.key))
}

/// `error`, from fetching, with the array's path in front (a change of an
/// object stays typed, so that the read goes again).
fn at(engine: &Engine, error: ArrayError) -> ArrayError {
    ObjectChanged::in_context(&error, &format!("array {}", engine.path))
}
