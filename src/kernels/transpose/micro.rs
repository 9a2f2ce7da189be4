//! Micro-kernels: the transposition of one small square block.
//!
//! A block is `M` x `M` elements: input element `(x, y)` is at `x * sx + y`,
//! output element `(x, y)` at `y * dy + x`. On x86_64 the blocks of 1-, 2-,
//! 4- and 8-byte elements are transposed in SSE2 registers (part of the
//! x86_64 baseline, so no run-time detection is needed): a block of 8 x 8
//! bytes, 8 x 8 `u16`, 4 x 4 `u32` or 2 x 2 `u64` is loaded as one register
//! per input row, shuffled with `unpack` instructions and stored as one
//! register per output row. Elsewhere, and for larger elements (which are
//! whole-register moves already), the block is copied element by element.

use std::mem::MaybeUninit;
use std::ops::Range;

/// An element type with a block transposition.
pub(super) trait Block: Copy + Default {
    /// The side of a block, in elements.
    const M: usize;

    /// Transpose the region of `nx` x `ny` elements (`nx` and `ny` being
    /// multiples of [`M`](Self::M)) starting at `src[0]` into the one
    /// starting at `dst[0]`, block by block, in strips of `M` output rows.
    fn region(
        src: &[Self],
        sx: usize,
        dst: &mut [MaybeUninit<Self>],
        dy: usize,
        nx: usize,
        ny: usize,
    ) {
        copy_elements(src, sx, dst, dy, 0..nx, 0..ny);
    }
}

/// Copy the elements `(x, y)` with `x` in `xs` and `y` in `ys` one by one,
/// input element `(x, y)` being `src[x * sx + y]` and output element
/// `dst[y * dy + x]` (indexing is bounds checked): the fallback of the block
/// kernels, and the ragged edges that whole blocks leave.
#[inline]
pub(super) fn copy_elements<T: Copy>(
    src: &[T],
    sx: usize,
    dst: &mut [MaybeUninit<T>],
    dy: usize,
    xs: Range<usize>,
    ys: Range<usize>,
) {
    for y in ys {
        for x in xs.clone() {
            dst[y * dy + x] = MaybeUninit::new(src[x * sx + y]);
        }
    }
}

/// Whether `rows` rows of `len` elements, `stride` apart, fit in a slice of
/// `available` elements. The SIMD kernels read and write through raw
/// pointers, so they check this first.
#[inline]
pub(super) fn fits(available: usize, rows: usize, stride: usize, len: usize) -> bool {
    rows == 0
        || (rows - 1)
            .checked_mul(stride)
            .and_then(|start| start.checked_add(len))
            .is_some_and(|end| end <= available)
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_loadl_epi64, _mm_loadu_si128, _mm_srli_si128, _mm_storel_epi64,
        _mm_storeu_si128, _mm_unpackhi_epi16, _mm_unpackhi_epi32, _mm_unpackhi_epi64,
        _mm_unpacklo_epi8, _mm_unpacklo_epi16, _mm_unpacklo_epi32, _mm_unpacklo_epi64,
    };

    // SAFETY (all functions): SSE2 is part of the x86_64 baseline, and the
    // callers check with `fits` that every row read (`M` elements at
    // `src + x * sx`) and written (`M` elements at `dst + y * dy`) lies in
    // its slice. Unaligned loads and stores are used throughout.

    /// 8 x 8 bytes; `sx` / `dy` in bytes.
    pub(super) unsafe fn block_u8(src: *const u8, sx: usize, dst: *mut u8, dy: usize) {
        unsafe {
            let r = |x: usize| _mm_loadl_epi64(src.add(x * sx).cast::<__m128i>());
            // Pairs of rows interleaved: a0 b0 a1 b1 ... a7 b7.
            let t0 = _mm_unpacklo_epi8(r(0), r(1));
            let t1 = _mm_unpacklo_epi8(r(2), r(3));
            let t2 = _mm_unpacklo_epi8(r(4), r(5));
            let t3 = _mm_unpacklo_epi8(r(6), r(7));
            // Quads: a0 b0 c0 d0 a1 b1 c1 d1 ... (columns 0-3, then 4-7).
            let u0 = _mm_unpacklo_epi16(t0, t1);
            let u1 = _mm_unpackhi_epi16(t0, t1);
            let u2 = _mm_unpacklo_epi16(t2, t3);
            let u3 = _mm_unpackhi_epi16(t2, t3);
            // Two whole output rows per register.
            let rows = [
                _mm_unpacklo_epi32(u0, u2),
                _mm_unpackhi_epi32(u0, u2),
                _mm_unpacklo_epi32(u1, u3),
                _mm_unpackhi_epi32(u1, u3),
            ];
            for (i, v) in rows.into_iter().enumerate() {
                _mm_storel_epi64(dst.add(2 * i * dy).cast::<__m128i>(), v);
                let high = _mm_srli_si128::<8>(v);
                _mm_storel_epi64(dst.add((2 * i + 1) * dy).cast::<__m128i>(), high);
            }
        }
    }

    /// 8 x 8 `u16`; `sx` / `dy` in bytes.
    pub(super) unsafe fn block_u16(src: *const u8, sx: usize, dst: *mut u8, dy: usize) {
        // SAFETY: see the module comment above (SSE2 baseline, rows checked
        // by `fits`).
        unsafe {
            let r = |x: usize| _mm_loadu_si128(src.add(x * sx).cast::<__m128i>());
            let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3));
            let (r4, r5, r6, r7) = (r(4), r(5), r(6), r(7));
            // a0 b0 a1 b1 a2 b2 a3 b3 / a4 b4 ... a7 b7, and so on.
            let t0 = _mm_unpacklo_epi16(r0, r1);
            let t1 = _mm_unpackhi_epi16(r0, r1);
            let t2 = _mm_unpacklo_epi16(r2, r3);
            let t3 = _mm_unpackhi_epi16(r2, r3);
            let t4 = _mm_unpacklo_epi16(r4, r5);
            let t5 = _mm_unpackhi_epi16(r4, r5);
            let t6 = _mm_unpacklo_epi16(r6, r7);
            let t7 = _mm_unpackhi_epi16(r6, r7);
            // a0 b0 c0 d0 a1 b1 c1 d1, ... (two columns of four rows).
            let u0 = _mm_unpacklo_epi32(t0, t2);
            let u1 = _mm_unpackhi_epi32(t0, t2);
            let u2 = _mm_unpacklo_epi32(t1, t3);
            let u3 = _mm_unpackhi_epi32(t1, t3);
            let u4 = _mm_unpacklo_epi32(t4, t6);
            let u5 = _mm_unpackhi_epi32(t4, t6);
            let u6 = _mm_unpacklo_epi32(t5, t7);
            let u7 = _mm_unpackhi_epi32(t5, t7);
            let rows = [
                _mm_unpacklo_epi64(u0, u4),
                _mm_unpackhi_epi64(u0, u4),
                _mm_unpacklo_epi64(u1, u5),
                _mm_unpackhi_epi64(u1, u5),
                _mm_unpacklo_epi64(u2, u6),
                _mm_unpackhi_epi64(u2, u6),
                _mm_unpacklo_epi64(u3, u7),
                _mm_unpackhi_epi64(u3, u7),
            ];
            for (y, v) in rows.into_iter().enumerate() {
                _mm_storeu_si128(dst.add(y * dy).cast::<__m128i>(), v);
            }
        }
    }

    /// 4 x 4 `u32`; `sx` / `dy` in bytes.
    pub(super) unsafe fn block_u32(src: *const u8, sx: usize, dst: *mut u8, dy: usize) {
        // SAFETY: see the module comment above (SSE2 baseline, rows checked
        // by `fits`).
        unsafe {
            let r = |x: usize| _mm_loadu_si128(src.add(x * sx).cast::<__m128i>());
            let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3));
            // a0 b0 a1 b1 / c0 d0 c1 d1 / a2 b2 a3 b3 / c2 d2 c3 d3.
            let t0 = _mm_unpacklo_epi32(r0, r1);
            let t1 = _mm_unpacklo_epi32(r2, r3);
            let t2 = _mm_unpackhi_epi32(r0, r1);
            let t3 = _mm_unpackhi_epi32(r2, r3);
            let rows = [
                _mm_unpacklo_epi64(t0, t1),
                _mm_unpackhi_epi64(t0, t1),
                _mm_unpacklo_epi64(t2, t3),
                _mm_unpackhi_epi64(t2, t3),
            ];
            for (y, v) in rows.into_iter().enumerate() {
                _mm_storeu_si128(dst.add(y * dy).cast::<__m128i>(), v);
            }
        }
    }

    /// 2 x 2 `u64`; `sx` / `dy` in bytes.
    pub(super) unsafe fn block_u64(src: *const u8, sx: usize, dst: *mut u8, dy: usize) {
        // SAFETY: see the module comment above (SSE2 baseline, rows checked
        // by `fits`).
        unsafe {
            let r0 = _mm_loadu_si128(src.cast::<__m128i>());
            let r1 = _mm_loadu_si128(src.add(sx).cast::<__m128i>());
            _mm_storeu_si128(dst.cast::<__m128i>(), _mm_unpacklo_epi64(r0, r1));
            _mm_storeu_si128(dst.add(dy).cast::<__m128i>(), _mm_unpackhi_epi64(r0, r1));
        }
    }
}

/// `Block` for `[u8; N]` with an SSE2 kernel on x86_64.
macro_rules! simd_block {
    ($n:literal, $m:literal, $kernel:ident) => {
        impl Block for [u8; $n] {
            const M: usize = $m;

            #[inline]
            fn region(
                src: &[Self],
                sx: usize,
                dst: &mut [MaybeUninit<Self>],
                dy: usize,
                nx: usize,
                ny: usize,
            ) {
                #[cfg(target_arch = "x86_64")]
                if nx % $m == 0
                    && ny % $m == 0
                    && fits(src.len(), nx, sx, ny)
                    && fits(dst.len(), ny, dy, nx)
                {
                    let (src, dst) = (src.as_ptr().cast::<u8>(), dst.as_mut_ptr().cast::<u8>());
                    for y in (0..ny).step_by($m) {
                        for x in (0..nx).step_by($m) {
                            // SAFETY: see `sse2`: the whole region was
                            // checked above, and the block at (x, y) lies
                            // in it.
                            unsafe {
                                sse2::$kernel(
                                    src.add((x * sx + y) * $n),
                                    sx * $n,
                                    dst.add((y * dy + x) * $n),
                                    dy * $n,
                                );
                            }
                        }
                    }
                    return;
                }
                copy_elements(src, sx, dst, dy, 0..nx, 0..ny);
            }
        }
    };
}

simd_block!(1, 8, block_u8);
simd_block!(2, 8, block_u16);
simd_block!(4, 4, block_u32);
simd_block!(8, 2, block_u64);

impl Block for [u8; 16] {
    const M: usize = 2;
}

impl Block for [u8; 32] {
    const M: usize = 2;
}
