//! One contiguous read instead of one read per row.
//!
//! A window that cuts a chunk (a tile over an inner chunk of a shard, say)
//! is, in the chunk's C order, one run of elements per row. Passed down as
//! it is, the `bytes` codec's partial decoder asks the store for every run
//! on its own: measured on a 256 x 256 window of a zarr-python product
//! (uint8 inner chunks of 256 x 256), about 500 `pread` calls per window on
//! a filesystem store, and as many ranges for an HTTP or object store.
//!
//! [`slab`] widens such a request to the smallest run of whole rows that
//! holds it (a "slab", contiguous in the chunk), so it is read in one range;
//! the elementwise partial decoder then keeps only the window's elements,
//! before decoding them. It widens only while the slab stays small (see
//! [`SLAB_MAX_BYTES`] and [`SLAB_MAX_RATIO`]), so a thin column of a huge
//! chunk still reads only its own bytes.

use zarrs::array::{ArraySubset, Indexer};

/// A slab of up to this many encoded bytes is always read whole.
pub(crate) const SLAB_MAX_BYTES: u64 = 1 << 20;

/// Above [`SLAB_MAX_BYTES`], a slab is read whole if it is at most this many
/// times the requested bytes.
pub(crate) const SLAB_MAX_RATIO: u64 = 4;

/// The slab to read instead of `indexer` in a chunk of `chunk_shape` whose
/// encoded elements have `element_size` bytes, or `None` to read `indexer`
/// as it is (one run already, not a rectangular subset, or a slab too large).
pub(crate) fn slab(
    indexer: &dyn Indexer,
    chunk_shape: &[u64],
    element_size: usize,
) -> Option<ArraySubset> {
    let subset = indexer.as_array_subset()?;
    let (start, shape) = (subset.start(), subset.shape());
    if start.len() != chunk_shape.len() || subset.num_elements() == 0 {
        return None;
    }
    // The first dimension the request spans more than one index of; the
    // dimensions before it are single indices.
    let d = shape.iter().position(|&n| n > 1)?;
    let whole_after =
        (d + 1..chunk_shape.len()).all(|k| start[k] == 0 && shape[k] == chunk_shape[k]);
    if whole_after {
        return None; // one contiguous run already
    }
    let row: u64 = chunk_shape[d + 1..].iter().product();
    let size = element_size as u64;
    let slab_bytes = shape[d].checked_mul(row)?.checked_mul(size)?;
    let wanted_bytes = subset.num_elements().checked_mul(size)?;
    if slab_bytes > SLAB_MAX_BYTES && slab_bytes / SLAB_MAX_RATIO > wanted_bytes {
        return None;
    }
    let mut ranges: Vec<std::ops::Range<u64>> =
        (0..=d).map(|k| start[k]..start[k] + shape[k]).collect();
    ranges.extend(chunk_shape[d + 1..].iter().map(|&n| 0..n));
    Some(ArraySubset::new_with_ranges(&ranges))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subset(ranges: &[std::ops::Range<u64>]) -> ArraySubset {
        ArraySubset::new_with_ranges(ranges)
    }

    #[test]
    fn a_window_widens_to_whole_rows() {
        let s = subset(&[10..20, 3..7]);
        assert_eq!(slab(&s, &[256, 256], 1), Some(subset(&[10..20, 0..256])));
        let s = subset(&[1..2, 5..9, 3..4]);
        // Dimension 0 is a single index; dimension 1 spans 4; 2 is cut.
        assert_eq!(slab(&s, &[4, 16, 8], 2), Some(subset(&[1..2, 5..9, 0..8])));
    }

    #[test]
    fn one_run_is_left_alone() {
        for s in [
            subset(&[10..20, 0..256]),
            subset(&[0..256, 0..256]),
            subset(&[7..8, 3..9]), // one row piece
            subset(&[7..8, 3..4]), // one element
            subset(&[2..3, 4..5, 0..8]),
        ] {
            let shape: &[u64] = if s.dimensionality() == 2 {
                &[256, 256]
            } else {
                &[4, 16, 8]
            };
            assert_eq!(slab(&s, shape, 4), None, "{s}");
        }
    }

    #[test]
    fn a_large_slab_needs_a_large_request() {
        // One column of a 4096 x 4096 uint8 chunk: a 16 MiB slab for 4 KiB.
        assert_eq!(slab(&subset(&[0..4096, 5..6]), &[4096, 4096], 1), None);
        // Half the width: an 8 MiB slab for 4 MiB, within the ratio.
        assert_eq!(
            slab(&subset(&[0..2048, 0..2048]), &[4096, 4096], 1),
            Some(subset(&[0..2048, 0..4096]))
        );
        // Exactly at the byte limit: 1 MiB slab, whatever the request.
        assert_eq!(
            slab(&subset(&[0..256, 0..1]), &[256, 4096], 1),
            Some(subset(&[0..256, 0..4096]))
        );
        assert_eq!(slab(&subset(&[0..257, 0..1]), &[257, 4096], 1), None);
    }
}
