//! One chunk split into parts that run on several threads, for the
//! elementwise codecs (`scale_offset`, `cast_value`).
//!
//! # When
//!
//! zarrs tells a codec how many threads it may use for one chunk:
//! `CodecOptions::concurrent_target`. Reading or writing a single chunk
//! (`retrieve_chunk`, or a subset that lies in one chunk) passes the caller's
//! whole target, by default every core; reading many chunks divides the
//! target between chunks and codecs by the codecs' recommended concurrency.
//! These codecs recommend 1, so that there the threads go to whole chunks:
//! a compressor later in the chain cannot split its work, and would leave
//! threads idle if chunks were decoded fewer at a time.
//!
//! A chunk is split only into parts of about [`MIN_PART_BYTES`] or more:
//! below that, waking a thread costs more than it saves. And it is never
//! split when the codec already runs on a thread of a rayon pool (zarrs
//! decoding many chunks, the inner chunks of a shard, or a caller's own
//! `par_iter`): the threads are busy with that outer work already, and a
//! worker waiting for its parts may be handed another outer task, which
//! would deadlock if the caller holds a lock across the decode (zarrs'
//! thread-local chunk caches do).
//!
//! A subset read from one chunk (`retrieve_chunk_subset`) goes through the
//! partial decoder, which splits the decoded subset the same way.
//!
//! # Why it pays
//!
//! zarrs runs a codec chain one codec at a time, and each codec reads and
//! writes the whole chunk, so `scale_offset` + `cast_value` make two passes
//! over memory where a copy makes one. One core cannot do better than about
//! half of memcpy's speed that way (`docs/performance.md`); two cores move
//! about twice the data.
//!
//! # Where
//!
//! Parts run on a pool of this crate's own ([`parts_pool`], as many threads
//! as rayon's global pool, started on first use), not on rayon's global
//! pool. The caller may hold a lock while it decodes: zarrs' chunk caches
//! (`ChunkCacheDecodedLruChunkLimit` and the others) hold a per-chunk lock
//! while the chunk is decoded, and other readers wait for that lock, some of
//! them on the global pool's workers (zarrs reads many chunks with
//! `par_iter`). Parts handed to the global pool would then wait for workers
//! that wait for the caller: a deadlock (`tests/threads.rs` met it with two
//! cores and eight readers). The parts only run this crate's kernels, which
//! never wait on anything, so the crate's pool always makes progress.

use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use rayon::iter::{IndexedParallelIterator, ParallelIterator};
use rayon::slice::ParallelSliceMut;

/// The smallest part worth a thread of its own, in bytes of the wider of
/// the input and output elements (about 30 µs of work at memory speed,
/// against a few µs to hand it to another thread).
const MIN_PART_BYTES: usize = 1 << 20;

/// Parts start at multiples of this many elements: a multiple of 64 bytes
/// for every element size, so that threads share at most the one cache line
/// at each boundary (none when the buffer is 64-byte aligned).
const PART_ALIGN: usize = 64;

/// Into how many parts to split `n` elements whose wider side (input or
/// output) has `widest` bytes each, when zarrs allows `threads` threads:
/// 1 on a thread of a rayon pool (see the module doc).
pub(crate) fn part_count(n: usize, widest: usize, threads: usize) -> usize {
    if rayon::current_thread_index().is_some() {
        return 1;
    }
    let by_size = n.saturating_mul(widest) / MIN_PART_BYTES;
    threads.min(by_size).max(1)
}

/// Run `f(elements, part)` on consecutive parts of `out`, whose elements are
/// `size` bytes each, in parallel when `parts > 1`. `elements` is the range
/// of element indices that `part` holds. `out` must hold whole elements
/// (callers check the length first).
///
/// Returns the error of the first failing part in element order (a later
/// part may fail too), as a single call over the whole of `out` would.
///
/// # Panics
/// If `size` is zero.
pub(crate) fn try_parts<T, E, F>(out: &mut [T], size: usize, parts: usize, f: F) -> Result<(), E>
where
    T: Send,
    E: Send,
    F: Fn(Range<usize>, &mut [T]) -> Result<(), E> + Sync,
{
    let n = out.len() / size;
    if parts <= 1 || n == 0 {
        return f(0..n, out);
    }
    let Some(pool) = parts_pool() else {
        return f(0..n, out);
    };
    let step = n.div_ceil(parts).next_multiple_of(PART_ALIGN);
    let results: Vec<Result<(), E>> = pool.install(|| {
        out.par_chunks_mut(step * size)
            .enumerate()
            .map(|(i, part)| {
                let start = i * step;
                f(start..start + part.len() / size, part)
            })
            .collect()
    });
    results.into_iter().collect()
}

/// Run `f(elements)` on consecutive ranges of `0..n` (about `parts` of
/// them, starting at multiples of [`PART_ALIGN`]), in parallel when
/// `parts > 1`, on the same pool as [`try_parts`]: for callers that write
/// their own outputs (`read::chunk_decode`). Returns the error of the
/// first failing range in element order.
pub(crate) fn try_ranges<E, F>(n: usize, parts: usize, f: F) -> Result<(), E>
where
    E: Send,
    F: Fn(Range<usize>) -> Result<(), E> + Sync,
{
    if parts <= 1 || n == 0 {
        return f(0..n);
    }
    let Some(pool) = parts_pool() else {
        return f(0..n);
    };
    let step = n.div_ceil(parts).next_multiple_of(PART_ALIGN);
    let results: Vec<Result<(), E>> = pool.install(|| {
        use rayon::iter::IntoParallelIterator;
        (0..n.div_ceil(step))
            .into_par_iter()
            .map(|i| f(i * step..((i + 1) * step).min(n)))
            .collect()
    });
    results.into_iter().collect()
}

/// The pool the parts run on (see the module doc), or `None` if it cannot be
/// started (the chunk is then converted in one piece).
///
/// A child made by `fork()` has none of its parent's threads, so a pool
/// inherited from the parent would never run what it is given (Python's
/// `multiprocessing` forks): the pool belongs to a process id, and a child
/// starts its own. The parent's is left alone in the child (dropping it
/// would wait for threads that do not exist there).
fn parts_pool() -> Option<Arc<rayon::ThreadPool>> {
    static POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);
    let pid = std::process::id();
    // A panic while the lock was held cannot leave it half-changed (it is
    // only ever replaced whole), so a poisoned lock is still good to use.
    let mut pool = POOL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match &*pool {
        Some((owner, pool)) if *owner == pid => return Some(pool.clone()),
        Some(_) => std::mem::forget(pool.take()),
        None => {}
    }
    let built = rayon::ThreadPoolBuilder::new()
        // Sized like the global pool (`RAYON_NUM_THREADS` included):
        // `part_count` is only above 1 off every rayon pool, where this is
        // the global pool's size.
        .num_threads(rayon::current_num_threads())
        .thread_name(|i| format!("zarrs_extension_codecs-parts-{i}"))
        .build()
        .ok()
        .map(Arc::new)?;
    *pool = Some((pid, built.clone()));
    Some(built)
}

/// A new buffer of `len` bytes (elements of `size` bytes), written part by
/// part by `f` as in [`try_parts`], without zeroing it first.
///
/// # Errors
/// The first error of `f`, as in [`try_parts`].
///
/// # Safety
/// Whenever `f` returns `Ok`, it must have written every byte of the part it
/// was given.
pub(crate) unsafe fn try_collect_parts<E, F>(
    len: usize,
    size: usize,
    parts: usize,
    f: F,
) -> Result<Vec<u8>, E>
where
    E: Send,
    F: Fn(Range<usize>, &mut [MaybeUninit<u8>]) -> Result<(), E> + Sync,
{
    let mut out = Vec::with_capacity(len);
    try_parts(&mut out.spare_capacity_mut()[..len], size, parts, f)?;
    // SAFETY: `len <= capacity` (reserved above); `try_parts` returned `Ok`,
    // so every part returned `Ok`, and the caller guarantees that each then
    // wrote all of its bytes. The parts cover `0..len` (`try_parts` splits
    // the whole slice).
    unsafe { out.set_len(len) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_counts() {
        const MIB: usize = 1 << 20;
        // Limited by the threads...
        assert_eq!(part_count(MIB, 8, 2), 2);
        assert_eq!(part_count(MIB, 8, 1), 1);
        // ...by the size (whole MiB of the wider side)...
        assert_eq!(part_count(MIB, 1, 8), 1);
        assert_eq!(part_count(3 * MIB / 2, 2, 8), 3);
        assert_eq!(part_count(MIB - 1, 1, 8), 1);
        // ...and never zero, nor overflowing.
        assert_eq!(part_count(0, 8, 4), 1);
        assert_eq!(part_count(10, 8, 0), 1);
        assert_eq!(part_count(usize::MAX, 8, 4), 4);
        // Not on a thread of a rayon pool.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert_eq!(pool.install(|| part_count(MIB, 8, 2)), 1);
    }

    /// Every element is visited once, by the part that holds it, and parts
    /// start on multiples of `PART_ALIGN` elements.
    #[test]
    fn parts_cover_the_buffer() {
        for (n, size, parts) in [(1000, 4, 3), (64 * 5 + 7, 2, 4), (10, 8, 4), (129, 1, 2)] {
            let mut out = vec![0u16; n * size];
            let starts = std::sync::Mutex::new(Vec::new());
            try_parts::<_, (), _>(&mut out, size, parts, |range, part| {
                assert_eq!(part.len(), range.len() * size);
                starts.lock().unwrap().push(range.start);
                for (i, chunk) in part.chunks_exact_mut(size).enumerate() {
                    chunk.fill(u16::try_from(range.start + i).unwrap() + 1);
                }
                Ok(())
            })
            .unwrap();
            for (i, chunk) in out.chunks_exact(size).enumerate() {
                assert!(chunk.iter().all(|&v| usize::from(v) == i + 1), "{n} {i}");
            }
            let starts = starts.into_inner().unwrap();
            assert!(starts.len() <= parts);
            assert!(starts.iter().all(|s| s % PART_ALIGN == 0));
        }
    }

    /// Of several failing parts, the first one's error is returned.
    #[test]
    fn first_error_wins() {
        let mut out = vec![0u8; 64 * 4];
        let result = try_parts(&mut out, 1, 4, |range, _| {
            if range.start == 0 {
                Ok(())
            } else {
                Err(range.start)
            }
        });
        assert_eq!(result, Err(64));
        let result = try_parts(&mut out, 1, 1, |range, _| Err(range.start));
        assert_eq!(result, Err(0));
    }

    #[test]
    fn collect_parts() {
        // SAFETY: the closure writes every byte of its part.
        let out = unsafe {
            try_collect_parts::<(), _>(300, 3, 2, |range, part| {
                for (i, b) in part.iter_mut().enumerate() {
                    b.write(u8::try_from((range.start * 3 + i) % 251).unwrap());
                }
                Ok(())
            })
        }
        .unwrap();
        let expected: Vec<u8> = (0..300).map(|i| u8::try_from(i % 251).unwrap()).collect();
        assert_eq!(out, expected);
        // SAFETY: it never returns `Ok`.
        let err = unsafe { try_collect_parts(300, 3, 2, |range, _| Err(range.start)) };
        assert_eq!(err, Err(0));
    }
}
