//! Windows of an array placed in one output, for reads that fill several
//! parts of a buffer at once (zarr-python's `CodecPipeline` hands a batch of
//! chunks, each to its own part of one `out` array).
//!
//! Each window is decoded through its own view of the output, and views
//! may only be made of disjoint parts of one buffer, so every placement is
//! checked here first: inside the output, and no two sharing an element.

use zarrs::array::ArraySubset;

/// A window of an array and where it goes in a larger output: its first
/// element lands at `at`, the rest laid out as the window is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowAt {
    /// The part of the array to read.
    pub window: ArraySubset,
    /// Where the window's first element goes in the output.
    pub at: Vec<u64>,
}

impl WindowAt {
    /// The part of the output the window fills.
    ///
    /// # Errors
    /// If `at` and the window's shape have different lengths.
    pub fn destination(&self) -> Result<ArraySubset, String> {
        ArraySubset::new_with_start_shape(self.at.clone(), self.window.shape().to_vec())
            .map_err(|e| format!("window {} at {:?}: {e}", self.window, self.at))
    }
}

/// Check `placed` against an output of `out_shape` elements of
/// `element_size` bytes held in `out_len` bytes: the buffer has exactly
/// that size, every window's place lies inside the output, and no two
/// non-empty places share an element.
pub(crate) fn check(
    placed: &[WindowAt],
    out_shape: &[u64],
    out_len: usize,
    element_size: usize,
) -> Result<(), String> {
    let elements = out_shape
        .iter()
        .try_fold(1u64, |acc, &n| acc.checked_mul(n))
        .and_then(|n| usize::try_from(n).ok())
        .and_then(|n| n.checked_mul(element_size));
    if elements != Some(out_len) {
        return Err(format!(
            "output of {out_len} bytes for a shape of {out_shape:?} elements of {element_size} bytes"
        ));
    }
    let mut places = Vec::with_capacity(placed.len());
    for part in placed {
        if part.at.len() != out_shape.len() || part.window.dimensionality() != out_shape.len() {
            return Err(format!(
                "window {} at {:?}: the output has {} dimensions",
                part.window,
                part.at,
                out_shape.len()
            ));
        }
        if part.window.is_empty() {
            continue;
        }
        let outside = part
            .at
            .iter()
            .zip(part.window.shape())
            .zip(out_shape)
            .position(|((&at, &len), &extent)| at.checked_add(len).is_none_or(|end| end > extent));
        if let Some(d) = outside {
            return Err(format!(
                "window {} at {:?} reaches outside the output of shape {out_shape:?} (dimension {d})",
                part.window, part.at
            ));
        }
        places.push(part);
    }
    disjoint(&mut places)
}

/// Whether the places of `a` and `b` (both inside the output) share an
/// element.
fn overlap(a: &WindowAt, b: &WindowAt) -> bool {
    a.at.iter()
        .zip(a.window.shape())
        .zip(b.at.iter().zip(b.window.shape()))
        .all(|((&a0, &an), (&b0, &bn))| a0 < b0 + bn && b0 < a0 + an)
}

/// No two places share an element. Sorted by their start in the first
/// dimension, each is compared only with those that start before it ends
/// there: a grid of chunks costs about one row of the grid per place, not
/// the whole batch.
fn disjoint(places: &mut [&WindowAt]) -> Result<(), String> {
    if places.first().is_some_and(|p| p.at.is_empty()) {
        // Zero-dimensional: one element, so at most one place.
        return match places {
            [_, second, ..] => Err(format!(
                "window {} and another are both read into the one element of the output",
                second.window
            )),
            _ => Ok(()),
        };
    }
    places.sort_by_key(|p| p.at[0]);
    for (i, a) in places.iter().enumerate() {
        let end = a.at[0] + a.window.shape()[0];
        for b in &places[i + 1..] {
            if b.at[0] >= end {
                break;
            }
            if overlap(a, b) {
                return Err(format!(
                    "windows {} at {:?} and {} at {:?} are read into overlapping parts of the output",
                    a.window, a.at, b.window, b.at
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ranges: &[std::ops::Range<u64>], at: &[u64]) -> WindowAt {
        WindowAt {
            window: ArraySubset::new_with_ranges(ranges),
            at: at.to_vec(),
        }
    }

    #[test]
    fn a_grid_of_places_is_disjoint() {
        let placed = [
            at(&[0..2, 0..3], &[0, 0]),
            at(&[0..2, 0..3], &[0, 3]),
            at(&[5..7, 0..6], &[2, 0]),
        ];
        assert_eq!(check(&placed, &[4, 6], 24 * 2, 2), Ok(()));
    }

    #[test]
    fn overlapping_places_are_refused() {
        let placed = [at(&[0..2, 0..3], &[0, 0]), at(&[0..2, 0..3], &[1, 2])];
        let error = check(&placed, &[4, 6], 24, 1).unwrap_err();
        assert!(error.contains("overlapping"), "{error}");
        // The same places one column apart do not overlap.
        let placed = [at(&[0..2, 0..3], &[0, 0]), at(&[0..2, 0..3], &[1, 3])];
        assert_eq!(check(&placed, &[4, 6], 24, 1), Ok(()));
    }

    #[test]
    fn a_place_outside_the_output_is_refused() {
        let placed = [at(&[0..2, 0..3], &[3, 0])];
        let error = check(&placed, &[4, 6], 24, 1).unwrap_err();
        assert!(error.contains("dimension 0"), "{error}");
        let placed = [at(&[0..2, 0..3], &[0, u64::MAX])];
        assert!(check(&placed, &[4, 6], 24, 1).is_err());
    }

    #[test]
    fn a_buffer_of_the_wrong_size_is_refused() {
        assert!(check(&[], &[4, 6], 23, 1).is_err());
        assert!(check(&[], &[u64::MAX, 4], 0, 1).is_err());
    }

    #[test]
    fn empty_windows_take_no_place() {
        let placed = [at(&[0..0, 0..3], &[0, 0]), at(&[0..2, 0..3], &[0, 0])];
        assert_eq!(check(&placed, &[2, 3], 6, 1), Ok(()));
    }

    #[test]
    fn zero_dimensional_outputs_take_one_window() {
        let one = WindowAt {
            window: ArraySubset::new_with_shape(vec![]),
            at: vec![],
        };
        assert_eq!(check(std::slice::from_ref(&one), &[], 8, 8), Ok(()));
        assert!(check(&[one.clone(), one], &[], 8, 8).is_err());
    }
}
