//! The regions of one batch: which part of which chunk goes where in the
//! output, checked before any view of the output is made.
//!
//! The views zarrs decodes into may only be made for disjoint parts of one
//! buffer ([`ArrayBytesFixedDisjointView`](zarrs::array::ArrayBytesFixedDisjointView)
//! is `unsafe` to make for that reason), so every region is checked here:
//! chunk coordinates inside the chunk grid, the chunk part inside the chunk,
//! the output part inside the output, both of one shape, and no two output
//! parts sharing an element.

use std::ops::Range;

use zarrs::array::{Array, ArraySubset};

/// One chunk's part of a batch.
pub struct Region {
    /// The chunk's coordinates in the chunk grid.
    pub coords: Vec<u64>,
    /// The part of the chunk to read, relative to the chunk's origin.
    pub chunk: Vec<Range<u64>>,
    /// Where it goes in the output.
    pub out: Vec<Range<u64>>,
}

impl Region {
    /// Whether the region holds no element (nothing to read or write).
    pub fn is_empty(&self) -> bool {
        self.out.iter().any(|r| r.start >= r.end)
    }

    /// The part of the array this region reads.
    pub fn array_subset<S: ?Sized>(&self, array: &Array<S>) -> Result<ArraySubset, String> {
        let origin = array
            .chunk_origin(&self.coords)
            .map_err(|e| e.to_string())?;
        let ranges: Vec<Range<u64>> = self
            .chunk
            .iter()
            .zip(origin)
            .map(|(r, o)| r.start + o..r.end + o)
            .collect();
        Ok(ArraySubset::new_with_ranges(&ranges))
    }

    /// The output part as a subset of the output.
    pub fn out_subset(&self) -> ArraySubset {
        ArraySubset::new_with_ranges(&self.out)
    }
}

/// Check every region of a batch against `array` and the output's shape
/// `out_shape`. `key` names a chunk in the messages.
pub fn check<S: ?Sized>(
    array: &Array<S>,
    regions: &[Region],
    out_shape: &[u64],
    key: impl Fn(&[u64]) -> String,
) -> Result<(), String> {
    let ndim = array.dimensionality();
    if out_shape.len() != ndim {
        return Err(format!(
            "the output has {} dimensions, the array {ndim}",
            out_shape.len()
        ));
    }
    let grid = array.chunk_grid_shape();
    for region in regions {
        if region.coords.len() != ndim || region.chunk.len() != ndim || region.out.len() != ndim {
            return Err(format!(
                "chunk coordinates {:?}: a region needs {ndim} coordinates and ranges",
                region.coords
            ));
        }
        if region.coords.iter().zip(grid).any(|(c, g)| c >= g) {
            return Err(format!(
                "chunk coordinates {:?} are outside the chunk grid {grid:?}",
                region.coords
            ));
        }
        let name = key(&region.coords);
        let chunk_shape = array
            .chunk_shape(&region.coords)
            .map_err(|e| format!("chunk {name}: {e}"))?;
        for (d, ((c, o), (&size, &extent))) in region
            .chunk
            .iter()
            .zip(&region.out)
            .zip(chunk_shape.iter().zip(out_shape))
            .enumerate()
        {
            if c.start > c.end || c.end > size.get() {
                return Err(format!(
                    "chunk {name}: range {c:?} of dimension {d} is outside the chunk's {size} elements"
                ));
            }
            if o.start > o.end || o.end > extent {
                return Err(format!(
                    "chunk {name}: output range {o:?} of dimension {d} is outside the output's {extent} elements"
                ));
            }
            if c.end - c.start != o.end - o.start {
                return Err(format!(
                    "chunk {name}: dimension {d} reads {} elements into {}",
                    c.end - c.start,
                    o.end - o.start
                ));
            }
        }
    }
    disjoint(regions, key)
}

/// Whether two boxes share an element.
fn overlap(a: &[Range<u64>], b: &[Range<u64>]) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| x.start < y.end && y.start < x.end)
}

/// No two non-empty output parts share an element. Sorted by their start in
/// the first dimension, each part is compared only with those that start
/// before it ends there: a grid of chunks costs one row per part, not the
/// whole batch.
fn disjoint(regions: &[Region], key: impl Fn(&[u64]) -> String) -> Result<(), String> {
    let mut order: Vec<&Region> = regions.iter().filter(|r| !r.is_empty()).collect();
    if order.first().is_none_or(|r| r.out.is_empty()) {
        // Zero-dimensional: at most one element, so at most one region.
        return if order.len() > 1 {
            Err(format!(
                "chunks {} and {} are both read into the one element of the output",
                key(&order[0].coords),
                key(&order[1].coords)
            ))
        } else {
            Ok(())
        };
    }
    order.sort_by_key(|r| r.out[0].start);
    for (i, a) in order.iter().enumerate() {
        for b in &order[i + 1..] {
            if b.out[0].start >= a.out[0].end {
                break;
            }
            if overlap(&a.out, &b.out) {
                return Err(format!(
                    "chunks {} and {} are read into overlapping parts of the output ({:?} and {:?})",
                    key(&a.coords),
                    key(&b.coords),
                    a.out,
                    b.out
                ));
            }
        }
    }
    Ok(())
}
