//! The direct copy of a plane of 4-byte elements with AVX2: 8 x 8 blocks
//! moved straight from the input to the output, without the tile buffer of
//! `run_typed`.
//!
//! Each block is loaded as eight 32-byte input rows and stored as eight
//! 32-byte output rows. Within a tile of 64 x 64 elements a strip of eight
//! input rows is read from start to end (whole cache lines, in order), so
//! the hardware prefetcher follows it, while the tile's 64 output rows each
//! receive one 32-byte half line per strip; the next strip completes those
//! lines while they are still in L1/L2. Saving the pass through the tile
//! buffer made 2048 x 2048 and 128^3 -> 16384 x 128 transposes 1.2-1.4x
//! faster than the buffered SSE2 path (see `benches/transpose.rs`).
//!
//! The half-written output lines must stay cached until the next strip. If
//! output rows lie a multiple of 16 KiB apart, the 64 lines of a tile fall
//! into a few cache sets (the L2 of the Zen 3 measured repeats its sets every
//! 64 KiB, an L1 every 4 KiB) and are evicted half written: the 3-D chunk
//! encoded with `[2, 0, 1]` (64 KiB output rows) ran at 0.7x the buffered
//! path. [`suits`] leaves such planes to the buffered path, which writes
//! only four output rows at a time.

use std::mem::MaybeUninit;

use super::micro::{copy_elements, fits};
use super::{Axis, Plane, for_each_outer};

/// Elements in the side of a block.
const M: usize = 8;
/// Elements in the side of a tile.
const TILE: usize = 64;
/// Elements in the side of a super-tile, which bounds the pages touched.
const SPAN: usize = 4 * TILE;
/// Output row strides (bytes) that are multiples of this are left to the
/// buffered path (see the module docs).
const CRITICAL_STRIDE: usize = 16 * 1024;

/// Whether [`run`] should copy `plane` (4-byte elements): the CPU has AVX2
/// and output rows are not a multiple of [`CRITICAL_STRIDE`] bytes apart.
pub(super) fn suits(plane: &Plane) -> bool {
    crate::kernels::simd::avx2_enabled()
        && plane
            .dy
            .checked_mul(4)
            .is_some_and(|bytes| bytes % CRITICAL_STRIDE != 0)
}

/// Copy every plane of 4-byte elements: input element `(x, y)` at
/// `src_base + x * sx + y`, output element at `dst_base + y * dy + x` (in
/// elements), `src_base` / `dst_base` from `outer`.
///
/// Only call this if [`suits`] returned true (it checks for AVX2). Panics,
/// rather than touching memory out of bounds, if a plane does not fit in
/// `src` or `dst`, which the callers' length checks rule out.
pub(super) fn run(
    src: &[[u8; 4]],
    dst: &mut [MaybeUninit<[u8; 4]>],
    plane: &Plane,
    outer: &[Axis],
) {
    let &Plane { nx, sx, ny, dy } = plane;
    // The extents covered by whole blocks; the rest is copied element-wise.
    let (fx, fy) = (nx - nx % M, ny - ny % M);
    for_each_outer(outer, |src_base, dst_base| {
        let (src, dst) = (&src[src_base..], &mut dst[dst_base..]);
        assert!(
            fits(src.len(), nx, sx, ny) && fits(dst.len(), ny, dy, nx),
            "the plane lies within both buffers"
        );
        #[cfg(target_arch = "x86_64")]
        if crate::kernels::simd::avx2_enabled() {
            // SAFETY: the CPU has AVX2 (checked just above). Input element
            // (x, y) with x < nx, y < ny is at x * sx + y, and
            // (nx - 1) * sx + ny <= src.len() by `fits`; output element
            // (x, y) is at y * dy + x, and (ny - 1) * dy + nx <= dst.len().
            // `blocks` only touches elements with x < fx <= nx and
            // y < fy <= ny.
            unsafe {
                avx2::blocks(
                    src.as_ptr().cast(),
                    sx * 4,
                    dst.as_mut_ptr().cast(),
                    dy * 4,
                    fx,
                    fy,
                );
            }
        } else {
            copy_elements(src, sx, dst, dy, 0..fx, 0..fy);
        }
        #[cfg(not(target_arch = "x86_64"))]
        copy_elements(src, sx, dst, dy, 0..fx, 0..fy);
        // The ragged edges: the last `nx % M` columns for every row, and the
        // last `ny % M` rows of the other columns.
        copy_elements(src, sx, dst, dy, fx..nx, 0..ny);
        copy_elements(src, sx, dst, dy, 0..fx, fy..ny);
    });
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        _mm_loadu_ps, _mm256_castps128_ps256, _mm256_insertf128_ps, _mm256_shuffle_ps,
        _mm256_storeu_ps, _mm256_unpackhi_ps, _mm256_unpacklo_ps,
    };

    use super::{M, SPAN, TILE};

    /// Transpose the `nx` x `ny` elements of 4 bytes (`nx`, `ny` multiples
    /// of 8) from `src` (input element `(x, y)` at byte `x * sx + 4 * y`) to
    /// `dst` (output element `(x, y)` at byte `y * dy + 4 * x`), in 8 x 8
    /// blocks, tiles and super-tiles.
    ///
    /// # Safety
    /// The CPU must support AVX2; every input byte `x * sx + 4 * y + k` and
    /// output byte `y * dy + 4 * x + k` with `x < nx`, `y < ny`, `k < 4`
    /// must lie in the allocation behind `src` / `dst`; the two must not
    /// overlap.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn blocks(
        src: *const u8,
        sx: usize,
        dst: *mut u8,
        dy: usize,
        nx: usize,
        ny: usize,
    ) {
        for sy in (0..ny).step_by(SPAN) {
            for sx0 in (0..nx).step_by(SPAN) {
                for y0 in (sy..ny.min(sy + SPAN)).step_by(TILE) {
                    let y_end = ny.min(y0 + TILE);
                    for x0 in (sx0..nx.min(sx0 + SPAN)).step_by(TILE) {
                        // A strip of eight input rows, read in order.
                        for x in (x0..nx.min(x0 + TILE)).step_by(M) {
                            for y in (y0..y_end).step_by(M) {
                                // SAFETY: x + 8 <= nx and y + 8 <= ny (both
                                // are multiples of 8), so the block's rows
                                // are within the region the caller vouched
                                // for; AVX2 is enabled in this function.
                                unsafe {
                                    block(src.add(x * sx + 4 * y), sx, dst.add(y * dy + 4 * x), dy);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// One 8 x 8 block of 4-byte elements; `sx` / `dy` in bytes.
    ///
    /// The first 128-bit step of the transposition is done by the loads:
    /// register `i` holds columns 0-3 (or 4-7) of input rows `i` and `i + 4`
    /// in its two halves, so only in-lane shuffles follow. Single-precision
    /// shuffles only move bits, so any 4-byte pattern (NaN payloads
    /// included) is copied exactly.
    ///
    /// # Safety
    /// AVX2 must be available (only called from `blocks`); bytes
    /// `[x * sx, x * sx + 32)` for `x < 8` must be readable at `src`, and
    /// `[y * dy, y * dy + 32)` for `y < 8` writable at `dst`.
    #[inline(always)]
    unsafe fn block(src: *const u8, sx: usize, dst: *mut u8, dy: usize) {
        // SAFETY: the rows read and written are those of the contract.
        unsafe {
            let half = |x: usize, column: usize| {
                let low = _mm_loadu_ps(src.add(x * sx + 4 * column).cast());
                let high = _mm_loadu_ps(src.add((x + 4) * sx + 4 * column).cast());
                _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(low), high)
            };
            // Output rows 0-3 come from input columns 0-3, rows 4-7 from 4-7.
            for column in [0, 4] {
                let (r0, r1, r2, r3) = (
                    half(0, column),
                    half(1, column),
                    half(2, column),
                    half(3, column),
                );
                // a0 b0 a1 b1 | e0 f0 e1 f1, and so on.
                let t0 = _mm256_unpacklo_ps(r0, r1);
                let t1 = _mm256_unpackhi_ps(r0, r1);
                let t2 = _mm256_unpacklo_ps(r2, r3);
                let t3 = _mm256_unpackhi_ps(r2, r3);
                let rows = [
                    _mm256_shuffle_ps::<0x44>(t0, t2),
                    _mm256_shuffle_ps::<0xEE>(t0, t2),
                    _mm256_shuffle_ps::<0x44>(t1, t3),
                    _mm256_shuffle_ps::<0xEE>(t1, t3),
                ];
                for (i, row) in rows.into_iter().enumerate() {
                    _mm256_storeu_ps(dst.add((column + i) * dy).cast(), row);
                }
            }
        }
    }
}
