//! The caller's memory as the encoder reads it: elements of a fixed size at
//! byte strides of any sign, checked once to lie inside one borrowed slice,
//! so that every later read is an ordinary (bounds-checked) slice index.

use std::fmt;

/// A view of `shape` elements of `item` bytes in `data`, element
/// `(i0, i1, ...)` at byte `origin + i0 * strides[0] + i1 * strides[1] + ...`.
///
/// [`c_contiguous`](Self::c_contiguous) views a buffer in C order (what
/// [`ArrayWriteExt`](super::ArrayWriteExt) is given); [`new`](Self::new)
/// takes any strides, e.g. those of a NumPy view, whose elements may be
/// spread out or in reverse.
#[derive(Clone)]
pub struct Strided<'a> {
    data: &'a [u8],
    origin: usize,
    shape: Vec<u64>,
    strides: Vec<isize>,
    item: usize,
}

impl fmt::Debug for Strided<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Strided")
            .field("bytes", &self.data.len())
            .field("origin", &self.origin)
            .field("shape", &self.shape)
            .field("strides", &self.strides)
            .field("item", &self.item)
            .finish()
    }
}

impl<'a> Strided<'a> {
    /// `data` holding `shape` elements of `item` bytes in C order.
    ///
    /// # Errors
    /// When `data` does not hold exactly that many bytes, or `item` is 0.
    pub fn c_contiguous(data: &'a [u8], shape: &[u64], item: usize) -> Result<Self, String> {
        let too_large = || format!("a shape of {shape:?} has more bytes than memory");
        let mut strides = vec![0isize; shape.len()];
        let mut step = item as u128;
        for (stride, &n) in strides.iter_mut().zip(shape).rev() {
            *stride = isize::try_from(step).map_err(|_| too_large())?;
            step = step.checked_mul(u128::from(n)).ok_or_else(too_large)?;
        }
        if step != data.len() as u128 {
            return Err(format!(
                "{} bytes, where a shape of {shape:?} of {item}-byte elements needs {step}",
                data.len()
            ));
        }
        Self::new(data, 0, shape, &strides, item)
    }

    /// A view with byte `strides` from `origin`.
    ///
    /// # Errors
    /// When an element of the view would lie outside `data`, the lengths of
    /// `shape` and `strides` differ, or `item` is 0.
    pub fn new(
        data: &'a [u8],
        origin: usize,
        shape: &[u64],
        strides: &[isize],
        item: usize,
    ) -> Result<Self, String> {
        if item == 0 {
            return Err("elements of 0 bytes".to_string());
        }
        if shape.len() != strides.len() {
            return Err(format!(
                "a shape of {} dimensions with {} strides",
                shape.len(),
                strides.len()
            ));
        }
        let view = Self {
            data,
            origin,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            item,
        };
        if shape.contains(&0) {
            return Ok(view);
        }
        // The lowest and highest byte offsets of an element, from `origin`
        // (a 64-bit stride times a 64-bit extent fits 128 bits; a sum that
        // does not is refused as reaching outside).
        let outside = || {
            format!(
                "a view of shape {shape:?} and strides {strides:?} from byte {origin} reaches outside {} bytes",
                data.len()
            )
        };
        let (mut low, mut high) = (0i128, 0i128);
        for (&n, &s) in shape.iter().zip(strides) {
            let reach = s as i128 * i128::from(n - 1);
            if reach < 0 {
                low = low.checked_add(reach).ok_or_else(outside)?;
            } else {
                high = high.checked_add(reach).ok_or_else(outside)?;
            }
        }
        let first = (origin as i128).checked_add(low).ok_or_else(outside)?;
        let end = (origin as i128 + item as i128)
            .checked_add(high)
            .ok_or_else(outside)?;
        if first < 0 || end > data.len() as i128 {
            return Err(format!(
                "a view of shape {shape:?} and strides {strides:?} from byte {origin} reaches bytes {first}..{end} of {}",
                data.len()
            ));
        }
        Ok(view)
    }

    /// The shape of the view.
    #[must_use]
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The size of an element, in bytes.
    #[must_use]
    pub fn item(&self) -> usize {
        self.item
    }

    /// The elements of the view in C order, as a new buffer.
    #[must_use]
    pub fn to_c_order(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.gather(&vec![0; self.shape.len()], &self.shape, &mut out);
        out
    }

    /// The box of `shape` at `start` of this view (inside it), as a view.
    pub(crate) fn sub(&self, start: &[u64], shape: &[u64]) -> Self {
        Self {
            data: self.data,
            origin: self.offset(start),
            shape: shape.to_vec(),
            strides: self.strides.clone(),
            item: self.item,
        }
    }

    /// The byte offset in `data` of the element at `at`, which lies in the
    /// view (checked by `new`'s bounds on every element).
    fn offset(&self, at: &[u64]) -> usize {
        let mut offset = self.origin as isize;
        for (&i, &s) in at.iter().zip(&self.strides) {
            offset += i as isize * s;
        }
        offset as usize
    }

    /// Append the elements of the box of `shape` at `start` (inside the
    /// view) to `out`, in C order.
    pub(crate) fn gather(&self, start: &[u64], shape: &[u64], out: &mut Vec<u8>) {
        out.reserve(shape.iter().product::<u64>() as usize * self.item);
        self.rows(start, shape, |row, n| {
            self.read_row(row, n, |bytes| out.extend_from_slice(bytes));
        });
    }

    /// Write this view, its first element placed at `at`, into `dst`: the
    /// C-order elements of the region of `dst_dims` whose first element is
    /// at `dst_origin` (both in one frame, e.g. a shard's). Only the part
    /// of the view inside the region is written.
    pub(crate) fn overlay(&self, at: &[u64], dst: &mut [u8], dst_dims: &[u64], dst_origin: &[u64]) {
        let n = at.len();
        let lo: Vec<u64> = (0..n).map(|d| at[d].max(dst_origin[d])).collect();
        let hi: Vec<u64> = (0..n)
            .map(|d| (at[d] + self.shape[d]).min(dst_origin[d] + dst_dims[d]))
            .collect();
        if lo.iter().zip(&hi).any(|(l, h)| l >= h) {
            return;
        }
        let part: Vec<u64> = lo.iter().zip(&hi).map(|(l, h)| h - l).collect();
        let from: Vec<u64> = lo.iter().zip(at).map(|(l, a)| l - a).collect();
        let to: Vec<u64> = lo.iter().zip(dst_origin).map(|(l, o)| l - o).collect();
        self.scatter(&from, &part, dst, dst_dims, &to);
    }

    /// Copy the box of `shape` at `start` (inside the view) into `dst`, a
    /// C-order buffer of `dst_shape` elements, at `dst_start`.
    pub(crate) fn scatter(
        &self,
        start: &[u64],
        shape: &[u64],
        dst: &mut [u8],
        dst_shape: &[u64],
        dst_start: &[u64],
    ) {
        let item = self.item;
        let mut at = vec![0u64; dst_shape.len()];
        self.rows(start, shape, |row, n| {
            for (d, a) in at.iter_mut().enumerate() {
                *a = dst_start[d] + row[d] - start[d];
            }
            let mut index = 0u64;
            for (&a, &len) in at.iter().zip(dst_shape) {
                index = index * len + a;
            }
            let mut to = index as usize * item;
            self.read_row(row, n, |bytes| {
                dst[to..to + bytes.len()].copy_from_slice(bytes);
                to += bytes.len();
            });
        });
    }

    /// Call `f` with the first element of every row (along the last
    /// dimension) of the box of `shape` at `start`, in C order, and the
    /// row's length (1 for a zero-dimensional view).
    fn rows(&self, start: &[u64], shape: &[u64], mut f: impl FnMut(&[u64], u64)) {
        if shape.contains(&0) {
            return;
        }
        let ndim = shape.len();
        if ndim == 0 {
            f(&[], 1);
            return;
        }
        let mut row = start.to_vec();
        let outer = ndim - 1;
        loop {
            f(&row, shape[outer]);
            // The next row: the outer dimensions counted in C order.
            if !next_in_c_order(&mut row[..outer], &start[..outer], &shape[..outer]) {
                return;
            }
        }
    }

    /// The `n` elements of the row from `first`, as one slice when they are
    /// contiguous, else element by element.
    fn read_row(&self, first: &[u64], n: u64, mut f: impl FnMut(&[u8])) {
        let item = self.item;
        let at = self.offset(first);
        let step = self.strides.last().copied().unwrap_or(0);
        if step == item as isize || n == 1 {
            f(&self.data[at..at + n as usize * item]);
        } else {
            for j in 0..n as isize {
                let e = (at as isize + j * step) as usize;
                f(&self.data[e..e + item]);
            }
        }
    }
}

/// Step `c` to the next coordinates of the box of `shape` from `start`, in
/// C order (the last dimension fastest); `false`, and `c` back at `start`,
/// after the last.
pub(super) fn next_in_c_order(c: &mut [u64], start: &[u64], shape: &[u64]) -> bool {
    for d in (0..c.len()).rev() {
        c[d] += 1;
        if c[d] < start[d] + shape[d] {
            return true;
        }
        c[d] = start[d];
    }
    false
}
