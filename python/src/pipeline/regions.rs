//! The regions of one batch: which part of which chunk goes where in the
//! output, checked before any view of the output is made.
//!
//! Every region is checked here, so that a message names its chunk:
//! chunk coordinates inside the chunk grid, the chunk part inside the
//! chunk, the output part inside the output, both of one shape. That no
//! two output parts share an element, the crate's read checks itself
//! before it makes any view of the output.

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
    Ok(())
}
