//! An output that a read owns together with the decode jobs writing into
//! it, for the async API's reads that return a new `Vec`.
//!
//! An async read may be dropped at any await while its decodes run on
//! rayon's threads. Into a caller's buffer (`&mut [T]`) they therefore
//! decode into buffers of their own, copied out on the runtime. A `Vec`
//! the read allocates itself has no caller to outlive: each decode job
//! holds a [`SharedCells`] (the buffer's cells and a reference to the
//! buffer's owner), so the buffer lives until the last job ends, however
//! the read ends, and the jobs decode straight into it. The read takes the
//! `Vec` back ([`SharedOutput::into_vec`]) only once every job has ended.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::sync::Arc;

use bytemuck::Pod;
use unsafe_cell_slice::UnsafeCellSlice;

/// The `Vec<T>` of a read, taken apart while decode jobs write into it.
pub(crate) struct SharedOutput<T: Pod> {
    ptr: *mut T,
    len: usize,
    capacity: usize,
    _owns: PhantomData<Vec<T>>,
}

// SAFETY: `SharedOutput` owns its `Vec<T>` as the `Vec` would (and `T` is
// `Pod`, so plain data); it hands out no access itself: writes go through
// `SharedCells`, whose users keep views disjoint (`decode::decode_unit`'s
// contract).
unsafe impl<T: Pod + Send> Send for SharedOutput<T> {}
// SAFETY: as above; `&SharedOutput` gives no access to the elements.
unsafe impl<T: Pod + Sync> Sync for SharedOutput<T> {}

impl<T: Pod> Drop for SharedOutput<T> {
    fn drop(&mut self) {
        // SAFETY: the parts of a `Vec<T>` taken apart in `share`, put
        // together once (`into_vec` forgets `self`). This runs when the
        // last `Arc` goes, and every `SharedCells` holds one behind its
        // cells, so no view of the buffer is alive.
        drop(unsafe { Vec::from_raw_parts(self.ptr, self.len, self.capacity) });
    }
}

/// The cells of a [`SharedOutput`]'s buffer, as bytes, and a reference to
/// it that keeps the buffer alive as long as the cells are.
#[derive(Clone)]
pub(crate) struct SharedCells {
    /// Lent out by [`cells`](Self::cells) only, for no longer than `self`.
    cells: UnsafeCellSlice<'static, u8>,
    _owner: Arc<dyn Send + Sync>,
}

impl SharedCells {
    /// The buffer's cells, for as long as this holds the buffer.
    pub(crate) fn cells(&self) -> UnsafeCellSlice<'_, u8> {
        self.cells
    }
}

/// `out`, shared: its owner (for [`SharedOutput::into_vec`]) and its
/// cells (for the decode jobs).
pub(crate) fn share<T: Pod + Send + Sync>(out: Vec<T>) -> (Arc<SharedOutput<T>>, SharedCells) {
    let mut out = ManuallyDrop::new(out);
    let (ptr, len, capacity) = (out.as_mut_ptr(), out.len(), out.capacity());
    // SAFETY: `ptr` points to `len` initialised elements of the `Vec` whose
    // parts are kept in `owner`; the slice is the only access to them (the
    // `Vec` is not used again, `owner` gives none). It is valid for as long
    // as `owner` is alive, and `cells` is kept in `SharedCells` beside a
    // clone of `owner` and lent out for no longer than that: the `'static`
    // lifetime is never used past the buffer's life.
    let elements: &'static mut [T] = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
    let cells = UnsafeCellSlice::new(bytemuck::cast_slice_mut::<T, u8>(elements));
    let owner = Arc::new(SharedOutput {
        ptr,
        len,
        capacity,
        _owns: PhantomData,
    });
    let shared = SharedCells {
        cells,
        _owner: owner.clone(),
    };
    (owner, shared)
}

impl<T: Pod> SharedOutput<T> {
    /// The `Vec` back, if no [`SharedCells`] of it is left (every decode
    /// job ended); else `this`, unchanged.
    pub(crate) fn into_vec(this: Arc<Self>) -> Result<Vec<T>, Arc<Self>> {
        let owned = ManuallyDrop::new(Arc::try_unwrap(this)?);
        // SAFETY: the parts of the `Vec` taken apart in `share`, put
        // together once (`owned` is not dropped); the only `Arc` of it was
        // this one, so no `SharedCells`, hence no view, is left.
        Ok(unsafe { Vec::from_raw_parts(owned.ptr, owned.len, owned.capacity) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarrs::array::{ArrayBytesFixedDisjointView, ArraySubset};

    /// Write `value` over `range` (bytes) of the shared buffer.
    fn fill(shared: &SharedCells, range: std::ops::Range<u64>, value: u8) {
        let shape = [shared.cells().len() as u64];
        // SAFETY: the tests' writers take disjoint ranges.
        let mut view = unsafe {
            ArrayBytesFixedDisjointView::new(
                shared.cells(),
                1,
                &shape,
                ArraySubset::new_with_ranges(std::slice::from_ref(&range)),
            )
        }
        .unwrap();
        view.fill(&[value]).unwrap();
    }

    /// Jobs on other threads write disjoint halves while they hold the
    /// cells; the `Vec` comes back only after the last is gone, with what
    /// they wrote, its allocation unchanged.
    #[test]
    fn the_vec_comes_back_once_every_writer_is_gone() {
        let out: Vec<u16> = vec![0; 64];
        let address = out.as_ptr();
        let (owner, shared) = share(out);
        let (done, finished) = std::sync::mpsc::channel();
        for (half, value) in [(0..64, 1u8), (64..128, 2u8)] {
            let shared = shared.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                fill(&shared, half, value);
                drop(shared);
                done.send(()).unwrap();
            });
        }
        drop(shared);
        finished.recv().unwrap();
        finished.recv().unwrap();
        let out = SharedOutput::into_vec(owner).ok().unwrap();
        assert_eq!(out.as_ptr(), address);
        assert!(out[..32].iter().all(|&v| v == 0x0101));
        assert!(out[32..].iter().all(|&v| v == 0x0202));
    }

    /// A writer still holding the cells keeps the `Vec` from coming back;
    /// the read dropped first (its owner gone), the last writer frees it.
    #[test]
    fn a_writer_left_holds_the_buffer() {
        let (owner, shared) = share(vec![0u32; 16]);
        let owner = SharedOutput::into_vec(owner).err().unwrap();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let writer = std::thread::spawn(move || {
            wait.recv().unwrap();
            fill(&shared, 0..64, 7);
        });
        drop(owner);
        go.send(()).unwrap();
        writer.join().unwrap();
    }
}
