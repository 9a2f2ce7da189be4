//! Permuting the axes of a C-order array: the copy behind the `transpose`
//! codec.
//!
//! A permutation `perm` maps an input array of shape `shape` to an output
//! array whose axis `i` is input axis `perm[i]` (so the output shape is
//! `shape[perm[i]]`), both stored in C order. With `perm` the codec's
//! `order`, this is the encoding direction of the `transpose` codec; with the
//! inverse of `order` it is the decoding direction.
//!
//! ### How the copy is organised
//! 1. The problem is simplified first: axes of extent 1 are dropped, axes that
//!    are neighbours in both arrays (in the same order) are merged, and an
//!    innermost axis shared by both arrays is folded into the element, which
//!    then becomes a longer run of bytes. A permutation that leaves the
//!    layout unchanged becomes a single copy.
//! 2. What remains has two special axes: `x`, contiguous in the output, and
//!    `y`, contiguous in the input; every other axis is an outer loop. The
//!    `x`/`y` plane is copied in square tiles of about 256 bytes a side,
//!    visited in super-tiles of a few tiles a side: a tile's input rows are
//!    copied into a small local buffer, and the tile is then transposed from
//!    that buffer into the output in register-sized blocks, so both arrays
//!    are read and written in runs of whole cache lines and a super-tile's
//!    pages stay within the TLB.
//! 3. The block transposition is monomorphised for elements of 1, 2, 4, 8, 16
//!    and 32 bytes (as `[u8; N]`, so no alignment is needed), with SSE2
//!    shuffles on x86_64 (see `micro`); other sizes use the same tiling with
//!    a byte-slice copy per element.
//!    Elements of 4 bytes skip the tile buffer when the CPU has AVX2 (chosen
//!    at run time): 8 x 8 blocks go straight from input to output (see
//!    `direct`), except when output rows are a multiple of 16 KiB apart.
//! 4. The output may be uninitialised memory ([`permute_bytes_uninit`],
//!    [`permute_bytes_to_vec`]): zeroing a fresh buffer first would cost
//!    another pass over memory as large as the copy.

mod direct;
mod micro;

use std::mem::MaybeUninit;

use bytemuck::Pod;

use micro::{Block, copy_elements};

/// An error from the permutation kernels.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TransposeError {
    /// `perm` is not a permutation of `0..perm.len()`.
    #[error("{perm:?} is not a permutation of 0..{}", perm.len())]
    NotAPermutation {
        /// The offending permutation.
        perm: Vec<usize>,
    },
    /// `perm` and `shape` have different lengths.
    #[error("the permutation has {perm} axes but the array has {shape}")]
    Dimensionality {
        /// The length of the permutation.
        perm: usize,
        /// The dimensionality of the array.
        shape: usize,
    },
    /// A buffer does not hold the number of bytes the shape requires.
    #[error("the {buffer} buffer has {len} bytes, expected {expected}")]
    Length {
        /// `"input"` or `"output"`.
        buffer: &'static str,
        /// The actual length.
        len: usize,
        /// The length the shape requires.
        expected: usize,
    },
    /// The element offsets of variable-length data are invalid.
    #[error("invalid element offsets: {0}")]
    Offsets(String),
    /// The number of elements or bytes does not fit in `usize`.
    #[error("the array size overflows usize")]
    Overflow,
}

/// Whether `perm` is a permutation of `0..perm.len()`.
#[must_use]
pub fn is_permutation(perm: &[usize]) -> bool {
    let mut seen = vec![false; perm.len()];
    perm.iter().all(|&axis| match seen.get_mut(axis) {
        Some(seen) if !*seen => {
            *seen = true;
            true
        }
        _ => false,
    })
}

/// Whether permuting an array of `shape` by `perm` leaves its bytes in the
/// same order: the axes longer than 1 keep their relative order (e.g. the
/// identity, or moving an axis of extent 1). Such a permutation needs no
/// copy.
#[must_use]
pub fn preserves_layout(shape: &[usize], perm: &[usize]) -> bool {
    let mut axes = perm
        .iter()
        .filter(|&&axis| shape.get(axis).is_none_or(|&extent| extent != 1));
    let mut previous = axes.next();
    for axis in axes {
        if previous.is_some_and(|p| p > axis) {
            return false;
        }
        previous = Some(axis);
    }
    true
}

/// The inverse of the permutation `perm`: `inverse[perm[i]] == i`.
///
/// # Errors
/// [`TransposeError::NotAPermutation`] if `perm` is not a permutation.
pub fn inverse_permutation(perm: &[usize]) -> Result<Vec<usize>, TransposeError> {
    check_permutation(perm)?;
    let mut inverse = vec![0; perm.len()];
    for (i, &axis) in perm.iter().enumerate() {
        inverse[axis] = i;
    }
    Ok(inverse)
}

/// `values` permuted by `perm`: element `i` of the result is `values[perm[i]]`.
///
/// # Errors
/// If `perm` is not a permutation or its length differs from `values`'.
pub fn permute_shape<T: Copy>(values: &[T], perm: &[usize]) -> Result<Vec<T>, TransposeError> {
    check_dimensionality(values.len(), perm)?;
    Ok(perm.iter().map(|&axis| values[axis]).collect())
}

fn check_permutation(perm: &[usize]) -> Result<(), TransposeError> {
    if is_permutation(perm) {
        Ok(())
    } else {
        Err(TransposeError::NotAPermutation {
            perm: perm.to_vec(),
        })
    }
}

fn check_dimensionality(dimensionality: usize, perm: &[usize]) -> Result<(), TransposeError> {
    check_permutation(perm)?;
    if perm.len() == dimensionality {
        Ok(())
    } else {
        Err(TransposeError::Dimensionality {
            perm: perm.len(),
            shape: dimensionality,
        })
    }
}

/// The number of elements of `shape`.
fn num_elements(shape: &[usize]) -> Result<usize, TransposeError> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or(TransposeError::Overflow)
}

/// Copy `src`, a C-order array of `shape` with elements of `element_size`
/// bytes, into `dst` with its axes permuted: axis `i` of `dst` is axis
/// `perm[i]` of `src`.
///
/// # Errors
/// If `perm` is not a permutation of the axes of `shape`, or `src` or `dst`
/// does not hold exactly the bytes `shape` and `element_size` require.
pub fn permute_bytes(
    src: &[u8],
    dst: &mut [u8],
    shape: &[usize],
    perm: &[usize],
    element_size: usize,
) -> Result<(), TransposeError> {
    // SAFETY: `[u8]` and `[MaybeUninit<u8>]` have the same layout, and only
    // initialised bytes are ever written through the view.
    let dst = unsafe { &mut *(std::ptr::from_mut(dst) as *mut [MaybeUninit<u8>]) };
    permute_bytes_uninit(src, dst, shape, perm, element_size)
}

/// [`permute_bytes`] into a new `Vec`, without first zeroing it (which
/// costs a pass over memory as large as the copy).
///
/// # Errors
/// As [`permute_bytes`].
pub fn permute_bytes_to_vec(
    src: &[u8],
    shape: &[usize],
    perm: &[usize],
    element_size: usize,
) -> Result<Vec<u8>, TransposeError> {
    let mut out = Vec::with_capacity(src.len());
    permute_bytes_uninit(
        src,
        &mut out.spare_capacity_mut()[..src.len()],
        shape,
        perm,
        element_size,
    )?;
    // SAFETY: on success `permute_bytes_uninit` wrote all `src.len()` bytes.
    unsafe { out.set_len(src.len()) };
    Ok(out)
}

/// [`permute_bytes`] into uninitialised memory. On success every byte of
/// `dst` has been written.
///
/// # Errors
/// As [`permute_bytes`].
pub fn permute_bytes_uninit(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    shape: &[usize],
    perm: &[usize],
    element_size: usize,
) -> Result<(), TransposeError> {
    check_dimensionality(shape.len(), perm)?;
    let expected = num_elements(shape)?
        .checked_mul(element_size)
        .ok_or(TransposeError::Overflow)?;
    for (buffer, len) in [("input", src.len()), ("output", dst.len())] {
        if len != expected {
            return Err(TransposeError::Length {
                buffer,
                len,
                expected,
            });
        }
    }
    if expected == 0 {
        return Ok(());
    }
    let plan = Plan::new(shape, perm, element_size);
    plan.run(src, dst);
    Ok(())
}

/// [`permute_bytes`] for typed elements.
///
/// # Errors
/// As [`permute_bytes`].
pub fn permute_elements<T: Pod>(
    src: &[T],
    dst: &mut [T],
    shape: &[usize],
    perm: &[usize],
) -> Result<(), TransposeError> {
    permute_bytes(
        bytemuck::cast_slice(src),
        bytemuck::cast_slice_mut(dst),
        shape,
        perm,
        size_of::<T>(),
    )
}

/// Permute variable-length elements: `bytes` holds the elements of a C-order
/// array of `shape` back to back, element `i` being
/// `bytes[offsets[i]..offsets[i + 1]]`. Returns the permuted bytes and their
/// offsets (starting at 0, ending at the length of the bytes).
///
/// The offsets are checked (one more than the number of elements,
/// non-decreasing, within `bytes`), so corrupt offsets are an error, never a
/// panic.
///
/// # Errors
/// As [`permute_bytes`], or [`TransposeError::Offsets`].
pub fn permute_variable(
    bytes: &[u8],
    offsets: &[usize],
    shape: &[usize],
    perm: &[usize],
) -> Result<(Vec<u8>, Vec<usize>), TransposeError> {
    check_dimensionality(shape.len(), perm)?;
    let n = num_elements(shape)?;
    if offsets.len() != n.saturating_add(1) {
        return Err(TransposeError::Offsets(format!(
            "{} offsets for {n} elements",
            offsets.len()
        )));
    }
    // The (start, end) range of every element, permuted with the fixed-size
    // kernel; the bytes are then gathered in output order.
    let mut ranges = Vec::with_capacity(n);
    for pair in offsets.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        if start > end || end > bytes.len() {
            return Err(TransposeError::Offsets(format!(
                "element range {start}..{end} in {} bytes",
                bytes.len()
            )));
        }
        ranges.push([start, end]);
    }
    let mut permuted = vec![[0usize; 2]; n];
    permute_elements(&ranges, &mut permuted, shape, perm)?;
    let total = permuted.iter().map(|[start, end]| end - start).sum();
    let mut out = Vec::with_capacity(total);
    let mut out_offsets = Vec::with_capacity(n + 1);
    out_offsets.push(0);
    for &[start, end] in &permuted {
        // In range: every range was checked above.
        out.extend_from_slice(&bytes[start..end]);
        out_offsets.push(out.len());
    }
    Ok((out, out_offsets))
}

/// One axis of the simplified problem; strides in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Axis {
    extent: usize,
    src_stride: usize,
    dst_stride: usize,
}

/// The simplified copy: an element size and the remaining axes in output
/// order (outermost first).
#[derive(Debug)]
struct Plan {
    element_size: usize,
    axes: Vec<Axis>,
}

impl Plan {
    /// Simplify the permutation of a non-empty array (see the module docs).
    fn new(shape: &[usize], perm: &[usize], element_size: usize) -> Self {
        let mut src_strides = vec![0; shape.len()];
        let mut stride = element_size;
        for (s, &extent) in src_strides.iter_mut().zip(shape).rev() {
            *s = stride;
            stride *= extent;
        }
        let mut axes: Vec<Axis> = Vec::with_capacity(perm.len());
        for &a in perm {
            let axis = Axis {
                extent: shape[a],
                src_stride: src_strides[a],
                dst_stride: 0,
            };
            if axis.extent == 1 {
                continue;
            }
            // Neighbours in the output that are also neighbours, in the same
            // order, in the input form one axis.
            match axes.last_mut() {
                Some(last) if last.src_stride == axis.src_stride * axis.extent => {
                    last.extent *= axis.extent;
                    last.src_stride = axis.src_stride;
                }
                _ => axes.push(axis),
            }
        }
        let mut element_size = element_size;
        if let Some(last) = axes.last()
            && last.src_stride == element_size
        {
            // The innermost axis is contiguous in both arrays: its rows move
            // as whole elements.
            element_size *= last.extent;
            axes.pop();
        }
        let mut stride = element_size;
        for axis in axes.iter_mut().rev() {
            axis.dst_stride = stride;
            stride *= axis.extent;
        }
        Self { element_size, axes }
    }

    fn run(&self, src: &[u8], dst: &mut [MaybeUninit<u8>]) {
        let es = self.element_size;
        let Some(x) = self.axes.last().copied() else {
            // Nothing moves: the layout is unchanged.
            write_slice(dst, src);
            return;
        };
        // `x`: contiguous in the output; `y`: contiguous in the input. After
        // simplification they always exist and differ (an innermost axis
        // shared by both would have been folded into the element).
        let last = self.axes.len() - 1;
        let Some(y_index) = self
            .axes
            .iter()
            .position(|a| a.src_stride == es)
            .filter(|&i| i != last)
        else {
            run_elementwise(src, dst, es, &self.axes);
            return;
        };
        let y = self.axes[y_index];
        let outer: Vec<Axis> = self
            .axes
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != y_index && i != last)
            .map(|(_, &a)| Axis {
                extent: a.extent,
                src_stride: a.src_stride / es,
                dst_stride: a.dst_stride / es,
            })
            .collect();
        let plane = Plane {
            nx: x.extent,
            sx: x.src_stride / es,
            ny: y.extent,
            dy: y.dst_stride / es,
        };
        // Tile sides of about 256 bytes, super-tiles of about 1 KiB (measured
        // on 2-D and 3-D chunks of several MiB; see benches/transpose.rs).
        match es {
            1 => run_typed::<[u8; 1], 256, 2>(src, dst, &plane, &outer),
            2 => run_typed::<[u8; 2], 128, 2>(src, dst, &plane, &outer),
            4 if direct::suits(&plane) => {
                direct::run(
                    bytemuck::cast_slice(src),
                    uninit_elements(dst),
                    &plane,
                    &outer,
                );
            }
            4 => run_typed::<[u8; 4], 64, 4>(src, dst, &plane, &outer),
            8 => run_typed::<[u8; 8], 64, 2>(src, dst, &plane, &outer),
            16 => run_typed::<[u8; 16], 16, 4>(src, dst, &plane, &outer),
            32 => run_typed::<[u8; 32], 8, 4>(src, dst, &plane, &outer),
            _ => run_generic(src, dst, es, &plane, &outer),
        }
    }
}

/// One element at a time over every axis: correct for any plan, used only if
/// the plan lacks the `x`/`y` structure (which simplification guarantees).
fn run_elementwise(src: &[u8], dst: &mut [MaybeUninit<u8>], es: usize, axes: &[Axis]) {
    for_each_outer(axes, |s, d| {
        write_slice(&mut dst[d..d + es], &src[s..s + es]);
    });
}

/// `dst.copy_from_slice(src)` for uninitialised `dst`.
fn write_slice<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "slices of equal length");
    // SAFETY: both slices hold `src.len()` elements (checked above) and a
    // `&mut` cannot overlap a `&`.
    unsafe {
        std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast::<T>(), src.len());
    }
}

/// View uninitialised bytes as uninitialised elements of `T`, a byte array.
fn uninit_elements<T: Pod>(bytes: &mut [MaybeUninit<u8>]) -> &mut [MaybeUninit<T>] {
    assert_eq!(align_of::<T>(), 1, "byte-array elements");
    let len = bytes.len() / size_of::<T>();
    // SAFETY: `T` has alignment 1 (checked above), so any byte address is
    // aligned for it, and the `len * size_of::<T>() <= bytes.len()` bytes
    // viewed belong to `bytes`.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), len) }
}

/// The `x`/`y` plane in element units: input element `(x, y)` is at
/// `x * sx + y`, output element `(x, y)` at `y * dy + x` (plus the outer
/// offsets).
#[derive(Clone, Copy, Debug)]
struct Plane {
    nx: usize,
    sx: usize,
    ny: usize,
    dy: usize,
}

/// Call `f(src_offset, dst_offset)` (in elements) for every position of the
/// outer axes.
fn for_each_outer(outer: &[Axis], mut f: impl FnMut(usize, usize)) {
    let mut index = vec![0usize; outer.len()];
    let (mut src, mut dst) = (0usize, 0usize);
    loop {
        f(src, dst);
        // Odometer: advance the innermost outer axis, carrying outwards.
        let mut d = outer.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            let axis = &outer[d];
            index[d] += 1;
            src += axis.src_stride;
            dst += axis.dst_stride;
            if index[d] < axis.extent {
                break;
            }
            src -= axis.src_stride * axis.extent;
            dst -= axis.dst_stride * axis.extent;
            index[d] = 0;
        }
    }
}

/// The tiled copy for elements of type `T`, in tiles of `B` x `B` elements
/// visited in super-tiles of `S` x `S` tiles.
///
/// Tiles are about 256 bytes on a side, so every row a tile reads or writes
/// is a run of whole cache lines, and a super-tile keeps the pages it touches
/// within the TLB. A tile's input rows (contiguous along `y`) are first
/// copied into a local buffer, so the block kernels read from a contiguous
/// buffer rather than from rows a power-of-two stride apart (which compete
/// for the same cache sets), and each output row of the tile is written as
/// one run.
fn run_typed<T: Block + Pod, const B: usize, const S: usize>(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    plane: &Plane,
    outer: &[Axis],
) {
    let src: &[T] = bytemuck::cast_slice(src);
    let dst = uninit_elements::<T>(dst);
    let (m, dy) = (T::M, plane.dy);
    // The tile buffer: up to `B` input rows of up to `B` elements, no larger
    // than the plane (small chunks should not pay for a large buffer).
    let row_len = B.min(plane.ny);
    let mut tile = vec![T::default(); B.min(plane.nx) * row_len];
    let span = S * B;
    for_each_outer(outer, |src_base, dst_base| {
        for sy in (0..plane.ny).step_by(span) {
            let sy_end = plane.ny.min(sy + span);
            for sx in (0..plane.nx).step_by(span) {
                let sx_end = plane.nx.min(sx + span);
                for y0 in (sy..sy_end).step_by(B) {
                    let by = B.min(sy_end - y0);
                    for x0 in (sx..sx_end).step_by(B) {
                        let bx = B.min(sx_end - x0);
                        let rows = tile.chunks_exact_mut(row_len).take(bx).enumerate();
                        if by == B {
                            // A constant length, so the copy is inlined: a
                            // call to `memcpy` per short row costs more than
                            // the copy.
                            for (x, row) in rows {
                                let start = src_base + (x0 + x) * plane.sx + y0;
                                let from: &[T; B] =
                                    src[start..start + B].try_into().expect("B elements");
                                let row: &mut [T; B] = row.try_into().expect("B elements");
                                *row = *from;
                            }
                        } else {
                            for (x, row) in rows {
                                let start = src_base + (x0 + x) * plane.sx + y0;
                                row[..by].copy_from_slice(&src[start..start + by]);
                            }
                        }
                        // Whole blocks, in strips of `m` output rows...
                        let out = dst_base + y0 * dy + x0;
                        let (fx, fy) = (bx - bx % m, by - by % m);
                        T::region(&tile, row_len, &mut dst[out..], dy, fx, fy);
                        // ...then the ragged edges of a partial tile: the
                        // columns right of the blocks, then the rows below.
                        let dst = &mut dst[out..];
                        copy_elements(&tile, row_len, dst, dy, fx..bx, 0..fy);
                        copy_elements(&tile, row_len, dst, dy, 0..bx, fy..by);
                    }
                }
            }
        }
    });
}

/// The tiled copy for elements of any other size.
fn run_generic(src: &[u8], dst: &mut [MaybeUninit<u8>], es: usize, plane: &Plane, outer: &[Axis]) {
    // Large elements are long runs already: a small tile keeps the working
    // set in cache.
    const B: usize = 16;
    for_each_outer(outer, |src_base, dst_base| {
        for y0 in (0..plane.ny).step_by(B) {
            let by = B.min(plane.ny - y0);
            for x0 in (0..plane.nx).step_by(B) {
                let bx = B.min(plane.nx - x0);
                for y in y0..y0 + by {
                    let out_start = (dst_base + y * plane.dy + x0) * es;
                    let out_row = &mut dst[out_start..out_start + bx * es];
                    for (x, out) in (x0..x0 + bx).zip(out_row.chunks_exact_mut(es)) {
                        let start = (src_base + x * plane.sx + y) * es;
                        write_slice(out, &src[start..start + es]);
                    }
                }
            }
        }
    });
}

#[cfg(test)]
mod tests;
