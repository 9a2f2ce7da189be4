//! Whole chunks from one buffer into another, split across threads as the
//! codecs split them.
//!
//! The entry points for callers that hold chunk data in buffers of their own
//! rather than in zarrs' `ArrayBytes`: the Python package (`python/`) runs
//! zarr-python's `scale_offset` and `cast_value` through these, on numpy
//! arrays. Each call runs the same kernels as the codecs
//! ([`kernels::scale_offset`](crate::kernels::scale_offset),
//! [`CastPlan`]) and, like them, splits a buffer of a few MiB or more into
//! parts for up to `threads` threads of the crate's own pool; on a thread of
//! a rayon pool it runs in one piece (see the codecs' module docs).
//!
//! Elements are native-endian, as for the kernels; the buffers need not be
//! aligned. The output is written in one pass over the input, without
//! being zeroed or copied first. Lengths are checked: a mismatch is an
//! error, never a panic.

use crate::codec::parallel::{part_count, try_parts};
use crate::kernels::cast::{CastError, CastPlan};
use crate::kernels::scale_offset::{Direction, ScaleOffsetError, apply_bytes, apply_uninit};
use crate::numeric::NumericType;

/// An error of the entry points of this module.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SliceError {
    /// `scale_offset` failed: an element, the scalars or the input length.
    #[error("scale_offset: {0}")]
    ScaleOffset(#[from] ScaleOffsetError),
    /// `cast_value` failed on an element.
    #[error("cast_value: {0}")]
    Cast(#[from] CastError),
    /// A buffer whose length does not fit the other one, or the data type.
    #[error("{buffer} has {len} bytes, expected {expected} ({data_type} elements)")]
    Length {
        /// `"input"` or `"output"`.
        buffer: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The length it needs.
        expected: usize,
        /// The element type of that buffer.
        data_type: NumericType,
    },
}

/// `(x - offset) * scale` of every element of `src`, written to `dst`.
///
/// `offset` and `scale` are as for
/// [`encode_bytes`](crate::kernels::scale_offset::encode_bytes) (one
/// native-endian element each, or empty for the identity). `dst` must be
/// as long as `src`.
///
/// # Errors
/// [`SliceError::Length`] if `dst` is not as long as `src`; otherwise the
/// kernel's error ([`SliceError::ScaleOffset`]), naming the first element
/// that fails. `dst` is then partly written.
pub fn scale_offset_encode(
    data_type: NumericType,
    src: &[u8],
    dst: &mut [u8],
    offset: &[u8],
    scale: &[u8],
    threads: usize,
) -> Result<(), SliceError> {
    scale_offset_to(
        Direction::Encode,
        data_type,
        src,
        dst,
        offset,
        scale,
        threads,
    )
}

/// `x / scale + offset` of every element of `src`, written to `dst`.
///
/// See [`scale_offset_encode`] for the arguments.
///
/// # Errors
/// As [`scale_offset_encode`]; for integers also an `x` that `scale` does
/// not divide.
pub fn scale_offset_decode(
    data_type: NumericType,
    src: &[u8],
    dst: &mut [u8],
    offset: &[u8],
    scale: &[u8],
    threads: usize,
) -> Result<(), SliceError> {
    scale_offset_to(
        Direction::Decode,
        data_type,
        src,
        dst,
        offset,
        scale,
        threads,
    )
}

/// [`scale_offset_encode`] in place.
///
/// # Errors
/// As [`scale_offset_encode`]; `data` is then partly transformed.
pub fn scale_offset_encode_in_place(
    data_type: NumericType,
    data: &mut [u8],
    offset: &[u8],
    scale: &[u8],
    threads: usize,
) -> Result<(), SliceError> {
    scale_offset_in_place(Direction::Encode, data_type, data, offset, scale, threads)
}

/// [`scale_offset_decode`] in place.
///
/// # Errors
/// As [`scale_offset_decode`]; `data` is then partly transformed.
pub fn scale_offset_decode_in_place(
    data_type: NumericType,
    data: &mut [u8],
    offset: &[u8],
    scale: &[u8],
    threads: usize,
) -> Result<(), SliceError> {
    scale_offset_in_place(Direction::Decode, data_type, data, offset, scale, threads)
}

/// Cast every element of `src` (of `plan`'s source type) into `dst` (as many
/// elements of its target type).
///
/// # Errors
/// [`SliceError::Length`] if `src` is not a whole number of elements or
/// `dst` does not hold as many; otherwise the first element that no rule
/// covers ([`SliceError::Cast`]). `dst` is then partly written.
pub fn cast_value(
    plan: &CastPlan,
    src: &[u8],
    dst: &mut [u8],
    threads: usize,
) -> Result<(), SliceError> {
    let (source, target) = (plan.source(), plan.target());
    let (from, to) = (source.size(), target.size());
    let n = whole_elements("input", src.len(), source)?;
    // `n * to` cannot overflow when it matches a real buffer: check by division.
    if !dst.len().is_multiple_of(to) || dst.len() / to != n {
        return Err(SliceError::Length {
            buffer: "output",
            len: dst.len(),
            expected: n.saturating_mul(to),
            data_type: target,
        });
    }
    let parts = part_count(n, from.max(to), threads);
    try_parts(dst, to, parts, |elements, part| {
        let src = &src[elements.start * from..elements.end * from];
        plan.cast_bytes(src, part).map_err(|mut e| {
            e.index += elements.start;
            e
        })
    })?;
    Ok(())
}

fn scale_offset_to(
    direction: Direction,
    data_type: NumericType,
    src: &[u8],
    dst: &mut [u8],
    offset: &[u8],
    scale: &[u8],
    threads: usize,
) -> Result<(), SliceError> {
    let size = data_type.size();
    let n = whole_elements("input", src.len(), data_type)?;
    if dst.len() != src.len() {
        return Err(SliceError::Length {
            buffer: "output",
            len: dst.len(),
            expected: src.len(),
            data_type,
        });
    }
    let parts = part_count(n, size, threads);
    try_parts(dst, size, parts, |elements, part| {
        let src = &src[elements.start * size..elements.end * size];
        // SAFETY: `MaybeUninit<u8>` has the layout of `u8`, so this is the
        // same memory under the same exclusive borrow. Viewing initialised
        // bytes as possibly uninitialised is sound as long as nothing writes
        // an uninitialised byte through the view (`part` is read as `u8`
        // afterwards): `apply_uninit` only ever writes initialised bytes
        // (its drivers write computed values or copies of `src`).
        let part =
            unsafe { &mut *(std::ptr::from_mut::<[u8]>(part) as *mut [std::mem::MaybeUninit<u8>]) };
        apply_uninit(direction, data_type, src, part, offset, scale)
            .map_err(|e| e.offset_by(elements.start))
    })?;
    Ok(())
}

fn scale_offset_in_place(
    direction: Direction,
    data_type: NumericType,
    data: &mut [u8],
    offset: &[u8],
    scale: &[u8],
    threads: usize,
) -> Result<(), SliceError> {
    let size = data_type.size();
    let n = whole_elements("input", data.len(), data_type)?;
    let parts = part_count(n, size, threads);
    try_parts(data, size, parts, |elements, part| {
        apply_bytes(direction, data_type, part, offset, scale)
            .map_err(|e| e.offset_by(elements.start))
    })?;
    Ok(())
}

/// The number of `data_type` elements in `len` bytes, if whole.
fn whole_elements(
    buffer: &'static str,
    len: usize,
    data_type: NumericType,
) -> Result<usize, SliceError> {
    let size = data_type.size();
    if len.is_multiple_of(size) {
        Ok(len / size)
    } else {
        Err(SliceError::Length {
            buffer,
            len,
            expected: len / size * size,
            data_type,
        })
    }
}

#[cfg(test)]
mod tests;
