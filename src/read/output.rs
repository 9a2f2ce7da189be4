//! Output buffers for whole reads: zeroed by the allocator (no write pass)
//! and, when large, advised for transparent huge pages and faulted in over
//! the read's threads.
//!
//! A fresh 256 MiB output is touched for the first time by the decode, and
//! with 4 KiB pages that is 65,536 page faults, most of a warm read's time
//! on Linux. Linux backs a range with 2 MiB pages on first touch when it is
//! advised `MADV_HUGEPAGE` and THP is `madvise` or `always`, which is how
//! numpy's allocations avoid the same cost (it advises every array of 4 MiB
//! or more). Elsewhere the advice is skipped.

use bytemuck::Pod;

/// Outputs of at least this many bytes are advised for huge pages. A huge
/// page is 2 MiB on x86-64 and aarch64; below about twice that, the
/// page-aligned part holds at most one whole huge page.
pub(crate) const HUGE_PAGE_ADVICE_MIN_BYTES: usize = 4 << 20;

/// A zeroed `Vec<T>` of `len` elements, advised for huge pages when large,
/// and faulted in on up to `threads` threads.
///
/// The memory comes from `alloc_zeroed` (`calloc`), which for large sizes
/// maps fresh zero pages without writing them, so the advice still applies
/// when the pages are first touched.
pub(crate) fn zeroed_output<T: Pod>(len: usize, threads: usize) -> Vec<T> {
    let mut v = bytemuck::zeroed_vec::<T>(len);
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(v.as_mut_slice());
    if advise_huge_pages(bytes) {
        if streamed(bytes) {
            touch(bytes, threads);
        } else {
            fault_in(bytes, threads);
        }
    }
    v
}

/// Whether the fused decode writes into `bytes` with non-temporal stores
/// (`chunk_decode::table`): large enough, on x86-64.
fn streamed(bytes: &[u8]) -> bool {
    cfg!(all(target_arch = "x86_64", not(miri)))
        && bytes.len() >= crate::read::chunk_decode::STREAM_FROM_BYTES
}

/// Before a decode that may stream into `out` (see [`streamed`]): fault in
/// every page of it, on up to `threads` threads, keeping its contents (each
/// page's first byte is read and written back). A page faulted in by the
/// decode itself still has the kernel's zeroing in the cache, where
/// non-temporal stores are slow; one faulted in before is not. On a buffer
/// already in memory this costs a read and a write per 4 KiB page.
pub(crate) fn touch_for_streaming(out: &mut [u8], threads: usize) {
    if streamed(out) {
        touch(out, threads);
    }
}

/// Read and write back the first byte of every 4 KiB page of `bytes`, on
/// up to `threads` threads, each over a contiguous part.
fn touch(bytes: &mut [u8], threads: usize) {
    use rayon::prelude::*;
    if bytes.is_empty() {
        return;
    }
    let parts = threads.clamp(1, rayon::current_num_threads().max(1));
    let part = bytes
        .len()
        .div_ceil(parts)
        .next_multiple_of(FAULT_PART_BYTES);
    let one = |part: &mut [u8]| {
        for page in part.chunks_mut(4096) {
            let first = page.as_mut_ptr();
            // Volatile: a plain read and write of the same value would be
            // dropped by the compiler.
            // SAFETY: `page` is a live, exclusive, non-empty slice, so its
            // first byte may be read and written.
            unsafe { std::ptr::write_volatile(first, std::ptr::read_volatile(first)) };
        }
    };
    if parts <= 1 {
        one(bytes);
    } else {
        bytes.par_chunks_mut(part).for_each(one);
    }
}

/// Bytes per part of [`fault_in`]: whole huge pages.
const FAULT_PART_BYTES: usize = 2 << 20;

/// Touch every page of `bytes` (which reads as zero) on up to `threads`
/// threads, each over a contiguous part.
///
/// Left to the decode, the first touches come from zarrs' threads copying
/// chunks that lie side by side in the output: a 2 MiB page spans rows of
/// several chunks, so two threads fault the same huge page and one waits
/// while the kernel zeroes it. Faulting contiguous parts first keeps the
/// kernel's zeroing in parallel without that contention (measured: whole
/// reads of 256 MiB on two threads, docs/performance.md).
fn fault_in(bytes: &mut [u8], threads: usize) {
    use rayon::prelude::*;
    let parts = threads.clamp(1, rayon::current_num_threads().max(1));
    if parts <= 1 {
        return; // the decode faults the pages in as it goes, at no extra cost
    }
    let part = bytes
        .len()
        .div_ceil(parts)
        .next_multiple_of(FAULT_PART_BYTES);
    bytes.par_chunks_mut(part).for_each(|part| {
        for page in part.chunks_mut(4096) {
            // Volatile: the compiler may know that calloc's memory is zero
            // and drop a plain store of zero.
            // SAFETY: `page` is a live, exclusive, non-empty slice.
            unsafe { std::ptr::write_volatile(page.as_mut_ptr(), 0) };
        }
    });
}

/// Advise the page-aligned part of `bytes` for transparent huge pages.
///
/// Returns whether advice was given (false for small buffers, on other
/// systems, under Miri, or if the kernel refused it). The advice never
/// changes the contents of the memory, only how it is backed.
pub(crate) fn advise_huge_pages(bytes: &mut [u8]) -> bool {
    if bytes.len() < HUGE_PAGE_ADVICE_MIN_BYTES {
        return false;
    }
    advise_huge_pages_impl(bytes)
}

#[cfg(all(target_os = "linux", not(miri)))]
fn advise_huge_pages_impl(bytes: &mut [u8]) -> bool {
    // `madvise` needs a page-aligned start; the part before the first page
    // boundary keeps normal pages.
    // SAFETY: `sysconf` has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => return false,
    };
    let start = bytes.as_mut_ptr() as usize;
    let aligned = start.next_multiple_of(page);
    let end = start + bytes.len();
    if aligned >= end {
        return false;
    }
    // SAFETY: [aligned, end) lies inside `bytes`, memory this process owns
    // and that the `&mut` borrow keeps alive for the call. MADV_HUGEPAGE
    // only changes how the kernel may back the range (it neither frees nor
    // changes contents, unlike MADV_DONTNEED), so every byte reads the same
    // afterwards; a partial page at the end is covered by madvise's rounding
    // of the length, and that page belongs to this mapping because `end` is
    // inside it.
    let rc = unsafe {
        libc::madvise(
            aligned as *mut libc::c_void,
            end - aligned,
            libc::MADV_HUGEPAGE,
        )
    };
    rc == 0
}

#[cfg(not(all(target_os = "linux", not(miri))))]
fn advise_huge_pages_impl(_bytes: &mut [u8]) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore)] // megabytes of buffer; the advice is a no-op under Miri
    fn small_outputs_are_not_advised() {
        let mut v = vec![0u8; HUGE_PAGE_ADVICE_MIN_BYTES - 1];
        assert!(!advise_huge_pages(&mut v));
    }

    #[test]
    fn zeroed_output_is_zero_and_sized() {
        let large = if cfg!(miri) {
            1000
        } else {
            (HUGE_PAGE_ADVICE_MIN_BYTES / 8) + 3
        };
        for len in [0usize, 1, 7, large] {
            let v = zeroed_output::<f64>(len, 2);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|x| x.to_bits() == 0));
        }
    }

    /// Touching pages keeps the contents, on one thread and on several,
    /// for lengths that do not end on a page; small enough for Miri.
    #[test]
    fn touch_keeps_contents() {
        for len in [0usize, 1, 4095, 4097, 3 * 4096 + 17] {
            let want: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            for threads in [1, 2, 3] {
                let mut v = want.clone();
                touch(&mut v, threads);
                assert_eq!(v, want, "len {len}, threads {threads}");
            }
        }
        // The streamed size: the caller's buffer, through the read's entry.
        if !cfg!(miri) {
            let len = crate::read::chunk_decode::STREAM_FROM_BYTES + 5;
            let want: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
            let mut v = want.clone();
            touch_for_streaming(&mut v, 2);
            assert!(v == want);
        }
    }

    /// The advice keeps the contents: write a pattern, advise, read it back.
    #[test]
    #[cfg_attr(miri, ignore)] // megabytes of buffer; the advice is a no-op under Miri
    fn advice_keeps_contents() {
        let len = HUGE_PAGE_ADVICE_MIN_BYTES * 2 + 12_345;
        let mut v: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let advised = advise_huge_pages(&mut v);
        if cfg!(all(target_os = "linux", not(miri))) {
            // The kernel accepts MADV_HUGEPAGE on private anonymous memory
            // whenever it was built with THP, as Linux distributions are.
            let thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
            assert_eq!(advised, thp.exists(), "madvise result vs THP support");
        }
        assert!(v.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
    }

    /// An unaligned start is rounded up to a page inside the buffer.
    #[test]
    #[cfg_attr(miri, ignore)] // megabytes of buffer; the advice is a no-op under Miri
    fn unaligned_start_is_advised_inside_the_buffer() {
        let mut v = vec![1u8; HUGE_PAGE_ADVICE_MIN_BYTES + 4096 * 3];
        let slice = &mut v[1..];
        advise_huge_pages(slice);
        assert!(v.iter().all(|&b| b == 1));
    }
}
