//! The caller's output window: a subset of a C-order array of fixed-size
//! elements, written segment by segment.
//!
//! zarrs' `ArrayBytesFixedDisjointView` keeps its bytes private (it can only
//! be filled or copied into from a contiguous buffer), so a decoder that
//! writes its results straight into the output needs its own view of the
//! same memory, with the same contract: windows over one buffer never
//! overlap.

use std::ops::Range;

use unsafe_cell_slice::UnsafeCellSlice;
use zarrs::array::codec::api::CodecError;
use zarrs::array::{ArrayBytesFixedDisjointView, ArraySubset};

/// A window (`subset`) of an output array of `shape`, `element_size` bytes
/// per element, in C order.
pub(crate) struct OutputWindow<'a> {
    bytes: UnsafeCellSlice<'a, u8>,
    element_size: usize,
    shape: &'a [u64],
    subset: ArraySubset,
}

impl<'a> OutputWindow<'a> {
    /// A window of `bytes`, which hold an array of `shape` with elements of
    /// `element_size` bytes.
    ///
    /// # Errors
    /// If `subset` does not lie inside `shape` (or has another number of
    /// dimensions), `element_size` is zero, or `bytes` is not exactly the
    /// array's size.
    ///
    /// # Safety
    /// No other window or zarrs view over the same `bytes` may cover any
    /// element of `subset` while this window lives (the contract of zarrs'
    /// `ArrayBytesFixedDisjointView::new`).
    pub(crate) unsafe fn new(
        bytes: UnsafeCellSlice<'a, u8>,
        element_size: usize,
        shape: &'a [u64],
        subset: ArraySubset,
    ) -> Result<Self, CodecError> {
        if element_size == 0 {
            return Err(CodecError::Other(
                "output window: elements of zero bytes".to_string(),
            ));
        }
        if subset.dimensionality() != shape.len() || !subset.inbounds_shape(shape) {
            return Err(CodecError::Other(format!(
                "output window: subset {subset} does not lie inside an output of shape {shape:?}"
            )));
        }
        let want = shape
            .iter()
            .try_fold(element_size as u64, |n, &d| n.checked_mul(d))
            .and_then(|n| usize::try_from(n).ok());
        if want != Some(bytes.len()) {
            return Err(CodecError::Other(format!(
                "output window: {} bytes for an output of shape {shape:?} with {element_size}-byte \
                 elements",
                bytes.len()
            )));
        }
        Ok(Self {
            bytes,
            element_size,
            shape,
            subset,
        })
    }

    /// A window over all of `bytes`, an array of `shape` (the common case
    /// of one chunk decoded into a buffer of its own).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub(crate) fn whole(
        bytes: &'a mut [u8],
        element_size: usize,
        shape: &'a [u64],
    ) -> Result<Self, CodecError> {
        let subset = ArraySubset::new_with_shape(shape.to_vec());
        // SAFETY: `bytes` is borrowed mutably for `'a`, so this window is the
        // only way to reach it while it lives.
        unsafe { Self::new(UnsafeCellSlice::new(bytes), element_size, shape, subset) }
    }

    /// The window within the output.
    pub(crate) fn subset(&self) -> &ArraySubset {
        &self.subset
    }

    /// The output's shape.
    pub(crate) fn shape(&self) -> &[u64] {
        self.shape
    }

    /// Bytes per element.
    pub(crate) fn element_size(&self) -> usize {
        self.element_size
    }

    /// The window as a zarrs view, for zarrs' own decoders.
    ///
    /// # Errors
    /// If zarrs refuses the view (it checks what [`new`](Self::new) checked).
    pub(crate) fn view(&mut self) -> Result<ArrayBytesFixedDisjointView<'_>, CodecError> {
        // SAFETY: the view covers exactly this window's subset, which no
        // other window or view covers (this window's contract), and it
        // borrows the window mutably, so no segment of the window is
        // written through `self` while it lives.
        Ok(unsafe {
            ArrayBytesFixedDisjointView::new(
                self.bytes,
                self.element_size,
                self.shape,
                self.subset.clone(),
            )
        }?)
    }

    /// The bytes of elements `elements` (linear indices in the output), which
    /// must be a run inside the window. Takes `&self` so that several
    /// threads can write disjoint runs of one window.
    ///
    /// # Safety
    /// `elements` must be a run of elements inside the window's subset, and
    /// no other slice from this window covering any of them may be alive
    /// (on any thread).
    #[allow(clippy::mut_from_ref)] // the window hands out disjoint runs, as zarrs' views do
    pub(crate) unsafe fn segment_mut(&self, elements: Range<usize>) -> &mut [u8] {
        let size = self.element_size;
        // SAFETY: by the caller's contract the run lies inside this window,
        // which no other window covers (the contract of `new`), and no other
        // slice of it is alive; the range is inside `bytes` because the
        // window lies inside `shape`, whose size `bytes` is.
        unsafe {
            self.bytes
                .index_mut(elements.start * size..elements.end * size)
        }
    }

    /// Every element of the window set to `fill` (one element's bytes).
    ///
    /// # Errors
    /// If `fill` is not one element.
    pub(crate) fn fill(&mut self, fill: &[u8]) -> Result<(), CodecError> {
        if fill.len() != self.element_size {
            return Err(CodecError::Other(format!(
                "output window: a fill value of {} bytes for {}-byte elements",
                fill.len(),
                self.element_size
            )));
        }
        let runs = Runs::new(self.subset.start(), self.subset.shape(), self.shape);
        let all_zero = fill.iter().all(|&b| b == 0);
        for start in runs.starts() {
            // SAFETY: `Runs` yields disjoint runs inside the window, and the
            // slice is dropped before the next is made.
            let segment = unsafe { self.segment_mut(start..start + runs.len) };
            if all_zero {
                segment.fill(0);
            } else {
                for element in segment.chunks_exact_mut(fill.len()) {
                    element.copy_from_slice(fill);
                }
            }
        }
        Ok(())
    }
}

/// The runs of consecutive elements (in C order) that make up a subset of
/// an array: every run has `len` elements, and the runs start at the
/// linear indices `starts()` yields, in C order of the subset.
#[derive(Clone, Debug)]
pub(crate) struct Runs {
    /// Elements per run: the subset's extent over the trailing dimensions
    /// it covers whole, times its extent in the first one it does not.
    pub(crate) len: usize,
    /// Outer dimensions (those not merged into a run): extent of the subset
    /// and stride (in elements) in the array.
    outer: Vec<(u64, u64)>,
    /// Linear index of the subset's first element.
    first: u64,
    /// Number of runs.
    count: u64,
}

impl Runs {
    /// Runs of the subset `start` / `extent` of an array of `shape` (all
    /// three of one length; the subset lies inside the array).
    pub(crate) fn new(start: &[u64], extent: &[u64], shape: &[u64]) -> Self {
        Self::merged(start, extent, shape, extent.len())
    }

    /// Runs no longer than those of an array of `shape` over the trailing
    /// `merge` dimensions at most (for two arrays walked together, see
    /// [`Runs::common`]).
    fn merged(start: &[u64], extent: &[u64], shape: &[u64], max_merge: usize) -> Self {
        let ndim = extent.len();
        let mut strides = vec![1u64; ndim];
        for d in (0..ndim.saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * shape[d + 1];
        }
        let first = start.iter().zip(&strides).map(|(s, st)| s * st).sum();
        // Merge the last dimension always, then earlier ones while every
        // later one is covered whole.
        let mut merged = 0;
        let mut len = 1u64;
        for d in (0..ndim).rev() {
            if merged == max_merge {
                break;
            }
            len *= extent[d];
            merged += 1;
            if extent[d] != shape[d] {
                break;
            }
        }
        let outer: Vec<(u64, u64)> = (0..ndim - merged)
            .map(|d| (extent[d], strides[d]))
            .collect();
        let count = if len == 0 {
            0
        } else {
            outer.iter().map(|(e, _)| e).product()
        };
        Self {
            len: usize::try_from(len).expect("a run of an addressable output"),
            outer,
            first,
            count,
        }
    }

    /// Runs for walking a subset of `extent` at `a_start` in an array of
    /// `a_shape` and at `b_start` in one of `b_shape` together: the same
    /// number of runs of the same length in both.
    pub(crate) fn common(
        extent: &[u64],
        (a_start, a_shape): (&[u64], &[u64]),
        (b_start, b_shape): (&[u64], &[u64]),
    ) -> (Self, Self) {
        let (a, b) = (
            Self::new(a_start, extent, a_shape),
            Self::new(b_start, extent, b_shape),
        );
        let merge = (extent.len() - a.outer.len()).min(extent.len() - b.outer.len());
        (
            Self::merged(a_start, extent, a_shape, merge),
            Self::merged(b_start, extent, b_shape, merge),
        )
    }

    /// The linear index of each run's first element, in C order.
    pub(crate) fn starts(&self) -> impl Iterator<Item = usize> + '_ {
        let mut index = vec![0u64; self.outer.len()];
        let mut offset = self.first;
        let mut left = self.count;
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            left -= 1;
            let current = offset;
            // Advance the outer index, last dimension fastest.
            for (d, (extent, stride)) in self.outer.iter().enumerate().rev() {
                index[d] += 1;
                offset += stride;
                if index[d] < *extent {
                    break;
                }
                offset -= stride * extent;
                index[d] = 0;
            }
            Some(usize::try_from(current).expect("an index of an addressable output"))
        })
    }

    /// The linear index of the first element of run `k` (`k < count()`).
    pub(crate) fn start_of(&self, mut k: usize) -> usize {
        let mut offset = self.first;
        for (extent, stride) in self.outer.iter().rev() {
            let extent = usize::try_from(*extent).expect("an extent of an addressable output");
            offset += (k % extent) as u64 * stride;
            k /= extent;
        }
        usize::try_from(offset).expect("an index of an addressable output")
    }

    /// The number of runs.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every run start and length against the subset's elements listed one
    /// by one (worked out from the definition of C order).
    #[test]
    fn runs_cover_the_subset_in_c_order() {
        let cases: [(&[u64], &[u64], &[u64]); 7] = [
            (&[0, 0], &[3, 4], &[3, 4]),
            (&[1, 1], &[2, 2], &[3, 4]),
            (&[0, 0, 0], &[2, 3, 4], &[2, 3, 4]),
            (&[1, 0, 0], &[1, 3, 4], &[2, 3, 4]),
            (&[0, 1, 0], &[2, 2, 4], &[2, 3, 4]),
            (&[], &[], &[]),
            (&[0, 2], &[0, 1], &[2, 3]),
        ];
        for (start, extent, shape) in cases {
            let runs = Runs::new(start, extent, shape);
            let got: Vec<usize> = runs.starts().flat_map(|s| s..s + runs.len).collect();
            let want = elements(start, extent, shape);
            let by_index: Vec<usize> = (0..runs.count() as usize)
                .map(|k| runs.start_of(k))
                .collect();
            assert_eq!(by_index, runs.starts().collect::<Vec<_>>());
            assert_eq!(got, want, "{start:?} {extent:?} {shape:?}");
        }
    }

    #[test]
    fn common_runs_walk_both_arrays_together() {
        let extent = [2u64, 3, 4];
        let (a, b) = Runs::common(&extent, (&[0, 0, 0], &[2, 3, 4]), (&[1, 2, 0], &[4, 5, 4]));
        assert_eq!(a.len, b.len);
        assert_eq!(a.count(), b.count());
        let ga: Vec<usize> = a.starts().flat_map(|s| s..s + a.len).collect();
        let gb: Vec<usize> = b.starts().flat_map(|s| s..s + b.len).collect();
        assert_eq!(ga, elements(&[0, 0, 0], &extent, &[2, 3, 4]));
        assert_eq!(gb, elements(&[1, 2, 0], &extent, &[4, 5, 4]));
    }

    /// Two windows over one buffer, written from two threads at once
    /// (runs through `segment_mut`, the fill value, and zarrs' view): each
    /// writes its own elements and nothing else. Small enough for Miri.
    #[test]
    fn disjoint_windows_write_their_own_elements() {
        let shape = [4u64, 5];
        let mut out = vec![0u16; 20];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
        let cells = UnsafeCellSlice::new(bytes);
        let top = ArraySubset::new_with_ranges(&[0..2, 1..4]);
        let bottom = ArraySubset::new_with_ranges(&[2..4, 0..5]);
        // SAFETY: `top` and `bottom` do not overlap, and `out` is reached
        // only through these two windows until they are dropped.
        let mut a = unsafe { OutputWindow::new(cells, 2, &shape, top) }.unwrap();
        let mut b = unsafe { OutputWindow::new(cells, 2, &shape, bottom) }.unwrap();
        std::thread::scope(|scope| {
            scope.spawn(|| a.fill(&7u16.to_ne_bytes()).unwrap());
            scope.spawn(|| {
                let values: Vec<u8> = (0..10u16).flat_map(u16::to_ne_bytes).collect();
                b.view().unwrap().copy_from_slice(&values).unwrap();
            });
        });
        assert_eq!(
            out,
            [0, 7, 7, 7, 0, 0, 7, 7, 7, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        );
    }

    #[test]
    fn windows_that_do_not_fit_are_refused() {
        let shape = [2u64, 3];
        let mut out = vec![0u8; 6];
        let outside = ArraySubset::new_with_ranges(&[1..3, 0..3]);
        let cells = UnsafeCellSlice::new(out.as_mut_slice());
        // SAFETY: the only window over `out` (and it is refused).
        assert!(unsafe { OutputWindow::new(cells, 1, &shape, outside) }.is_err());
        assert!(OutputWindow::whole(&mut out, 2, &shape).is_err()); // 6 bytes, 12 needed
        assert!(OutputWindow::whole(&mut out, 0, &shape).is_err());
        let mut whole = OutputWindow::whole(&mut out, 1, &shape).unwrap();
        assert!(whole.fill(&[1, 2]).is_err()); // a 2-byte fill value for 1-byte elements
    }

    /// The linear indices of a subset's elements, one by one.
    fn elements(start: &[u64], extent: &[u64], shape: &[u64]) -> Vec<usize> {
        let n: u64 = extent.iter().product();
        (0..n)
            .map(|mut i| {
                let mut linear = 0u64;
                let mut stride = 1u64;
                for d in (0..extent.len()).rev() {
                    let k = i % extent[d];
                    i /= extent[d];
                    linear += (start[d] + k) * stride;
                    stride *= shape[d];
                }
                linear as usize
            })
            .collect()
    }
}
