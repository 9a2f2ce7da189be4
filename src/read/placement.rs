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

/// No two places share an element.
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
    // The sweep's work, bounded by what comparing every pair would cost:
    // past it, the pairs are compared (see `clash`).
    let budget = places.len().saturating_mul(places.len()).max(64);
    match first_clash(places, budget) {
        Some((a, b)) => Err(format!(
            "windows {} at {:?} and {} at {:?} are read into overlapping parts of the output",
            a.window, a.at, b.window, b.at
        )),
        None => Ok(()),
    }
}

/// Two of `places` that share an element, if any, where every two of them
/// overlap in the dimensions before `dim`.
///
/// A sweep along `dim`: at each place's start, the places alive there
/// (started, not ended) all hold that coordinate, so they must be disjoint
/// in the dimensions after `dim`, checked by the same sweep one dimension
/// further; and two places that overlap in `dim` are alive together at the
/// later of their starts, so no pair is missed. In the last dimension,
/// sorted intervals overlap somewhere only if two neighbours do. A batch
/// laid out on a grid (the chunks of a selection, the points of a
/// `vindex`) costs a sort per dimension, `O(n log n)`; only places whose
/// extents overlap without being equal are seen more than once, and a
/// batch made to be seen again and again (tall places beside many short
/// ones) would cost `O(n^d log n)`: the sweep gives up once it has sorted
/// `n^2` places in all (`budget`), and the pairs are compared instead, at
/// most `O(n^2)` as before the sweep.
fn clash<'a>(places: &mut [&'a WindowAt], dim: usize, budget: &mut usize) -> Sweep<'a> {
    let start = |p: &WindowAt| p.at[dim];
    let end = |p: &WindowAt| p.at[dim] + p.window.shape()[dim];
    match budget.checked_sub(places.len()) {
        Some(left) => *budget = left,
        None => return Sweep::TooLong,
    }
    places.sort_unstable_by_key(|p| start(p));
    let Some(first) = places.first() else {
        return Sweep::Done(None);
    };
    if dim + 1 == first.at.len() {
        return Sweep::Done(
            places
                .windows(2)
                .find(|pair| end(pair[0]) > start(pair[1]))
                .map(|pair| (pair[0], pair[1])),
        );
    }
    let mut alive: Vec<&WindowAt> = Vec::new();
    let mut next = 0;
    while next < places.len() {
        let here = start(places[next]);
        alive.retain(|p| end(p) > here);
        while next < places.len() && start(places[next]) == here {
            alive.push(places[next]);
            next += 1;
        }
        if alive.len() > 1 {
            let mut together = alive.clone();
            match clash(&mut together, dim + 1, budget) {
                Sweep::Done(None) => {}
                found => return found,
            }
        }
    }
    Sweep::Done(None)
}

/// Two of `places` that share an element: by the sweep within `budget`,
/// else pair by pair.
fn first_clash<'a>(
    places: &mut [&'a WindowAt],
    mut budget: usize,
) -> Option<(&'a WindowAt, &'a WindowAt)> {
    match clash(places, 0, &mut budget) {
        Sweep::Done(found) => found,
        Sweep::TooLong => pairwise(places),
    }
}

/// What [`clash`] found, or that it gave up past its budget.
enum Sweep<'a> {
    Done(Option<(&'a WindowAt, &'a WindowAt)>),
    TooLong,
}

/// Whether the places of `a` and `b` (both inside the output) share an
/// element.
fn overlap(a: &WindowAt, b: &WindowAt) -> bool {
    a.at.iter()
        .zip(a.window.shape())
        .zip(b.at.iter().zip(b.window.shape()))
        .all(|((&a0, &an), (&b0, &bn))| a0 < b0 + bn && b0 < a0 + an)
}

/// Two of `places` that share an element, if any, by comparing pairs:
/// sorted by their start in the first dimension, each is compared with
/// those that start before it ends there.
fn pairwise<'a>(places: &mut [&'a WindowAt]) -> Option<(&'a WindowAt, &'a WindowAt)> {
    places.sort_unstable_by_key(|p| p.at[0]);
    for (i, a) in places.iter().enumerate() {
        let end = a.at[0] + a.window.shape()[0];
        for b in &places[i + 1..] {
            if b.at[0] >= end {
                break;
            }
            if overlap(a, b) {
                return Some((a, b));
            }
        }
    }
    None
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

    /// The sweep finds an overlap exactly when some pair of places
    /// overlaps (checked pair by pair), on random places in one to four
    /// dimensions, few enough to collide often.
    #[test]
    fn the_sweep_finds_what_the_pairs_find() {
        let mut rng = crate::test_rng::SplitMix64(33);
        let mut found = [0usize; 2];
        for round in 0..4000 {
            let dims = 1 + round % 4;
            let out_shape = vec![12u64; dims];
            let places: Vec<WindowAt> = (0..1 + rng.below(7))
                .map(|_| {
                    let (mut ranges, mut place) = (Vec::new(), Vec::new());
                    for _ in 0..dims {
                        let len = 1 + rng.below(5) as u64;
                        ranges.push(0..len);
                        place.push(rng.below((13 - len) as usize) as u64);
                    }
                    at(&ranges, &place)
                })
                .collect();
            let pairwise = places
                .iter()
                .enumerate()
                .any(|(i, a)| places[i + 1..].iter().any(|b| overlap(a, b)));
            let swept = check(&places, &out_shape, 12usize.pow(dims as u32), 1);
            assert_eq!(swept.is_err(), pairwise, "{places:?}: {swept:?}");
            // And when the sweep gives up part way (the pairs compared).
            for budget in [0, 3, 9] {
                let mut refs: Vec<&WindowAt> = places.iter().collect();
                let found = first_clash(&mut refs, budget);
                assert_eq!(found.is_some(), pairwise, "budget {budget}: {places:?}");
                if let Some((a, b)) = found {
                    assert!(overlap(a, b), "{a:?} and {b:?} do not overlap");
                }
            }
            found[usize::from(pairwise)] += 1;
        }
        assert!(found[0] > 500 && found[1] > 500, "{found:?}");
    }

    /// A row of places that share their start and extent in the first
    /// dimension (one row of chunks) is checked in the second; a clash at
    /// its end is found.
    #[test]
    fn a_long_row_is_checked_in_its_own_dimension() {
        let row: Vec<WindowAt> = (0..5000u64)
            .map(|i| at(&[0..4, 0..2], &[0, 2 * i]))
            .collect();
        assert_eq!(check(&row, &[4, 10_000], 40_000, 1), Ok(()));
        let mut clashing = row;
        clashing.push(at(&[0..1, 0..1], &[3, 9_999]));
        let error = check(&clashing, &[4, 10_000], 40_000, 1).unwrap_err();
        assert!(error.contains("[3, 9999]"), "{error}");
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
