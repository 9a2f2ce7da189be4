//! The chunks of a write, encoded together: each chunk as zarr hands it
//! (often a strided view of the value being written), gathered into
//! contiguous memory on the worker that encodes it, so that no copy of a
//! whole batch is made and the gathers run in parallel too.

use std::borrow::Cow;
use std::num::NonZeroU64;

use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use rayon::prelude::*;
use zarrs::array::codec::api::ArrayToBytesCodecTraits;
use zarrs::array::{Array, ArrayBytes, CodecOptions};
use zarrs::storage::ReadableStorageTraits;
use zarrs_extension_codecs::error_chain;

/// A chunk's memory as numpy has it: where, its shape and its strides in
/// bytes (any sign), read on a worker thread without the GIL.
pub struct Strided {
    data: *const u8,
    shape: Vec<usize>,
    strides: Vec<isize>,
    item: usize,
    contiguous: bool,
}

// SAFETY: `Strided` only reads the memory of a numpy array that the caller
// keeps alive (a reference is held for the whole call), as zarr's own
// pipeline reads the value being written from its thread pool.
unsafe impl Send for Strided {}
// SAFETY: as above: the memory is only read.
unsafe impl Sync for Strided {}

impl Strided {
    /// The memory of `array`, whose element size is `item` bytes.
    pub fn of(array: &Bound<'_, PyUntypedArray>, item: usize) -> Self {
        // SAFETY: a numpy array object; its `data` points at its first element.
        let data = unsafe { (*array.as_array_ptr()).fields.data }.cast::<u8>();
        Self {
            data: data.cast_const(),
            shape: array.shape().to_vec(),
            strides: array.strides().to_vec(),
            item,
            contiguous: array.is_c_contiguous(),
        }
    }

    fn len(&self) -> usize {
        self.shape.iter().product::<usize>() * self.item
    }

    /// The elements in C order: the memory itself for a C-contiguous
    /// array, else a gathered copy.
    pub fn bytes(&self) -> Cow<'_, [u8]> {
        if self.contiguous || self.len() == 0 {
            // SAFETY: C-contiguous: `len` bytes from `data`, kept alive by
            // the caller.
            return Cow::Borrowed(unsafe { std::slice::from_raw_parts(self.data, self.len()) });
        }
        let mut out = Vec::with_capacity(self.len());
        let ndim = self.shape.len();
        let (last_n, last_stride) = (self.shape[ndim - 1], self.strides[ndim - 1]);
        let run = last_stride == self.item as isize;
        let mut index = vec![0usize; ndim - 1];
        loop {
            let base: isize = index
                .iter()
                .zip(&self.strides)
                .map(|(&i, &s)| i as isize * s)
                .sum();
            // SAFETY: every offset is that of an element of the array.
            unsafe {
                let row = self.data.offset(base);
                if run {
                    out.extend_from_slice(std::slice::from_raw_parts(row, last_n * self.item));
                } else {
                    for j in 0..last_n {
                        let at = row.offset(j as isize * last_stride);
                        out.extend_from_slice(std::slice::from_raw_parts(at, self.item));
                    }
                }
            }
            // The next index of the outer dimensions, in C order.
            let mut d = ndim - 1;
            loop {
                if d == 0 {
                    return Cow::Owned(out);
                }
                d -= 1;
                index[d] += 1;
                if index[d] < self.shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
    }
}

/// One chunk to encode: its key (for messages), shape and memory.
pub struct Job {
    pub key: String,
    pub shape: Vec<NonZeroU64>,
    pub source: Strided,
}

/// Encode every job on the current rayon pool, each chunk by one task
/// (its codecs' own parallel loops, sharding's inner chunks, on the same
/// pool within `options`' target).
pub fn encode_all(
    array: &Array<dyn ReadableStorageTraits>,
    jobs: &[Job],
    options: &CodecOptions,
) -> Result<Vec<Vec<u8>>, String> {
    jobs.par_iter()
        .map(|job| {
            let bytes = job.source.bytes();
            array
                .codecs()
                .encode(
                    ArrayBytes::new_flen(bytes),
                    &job.shape,
                    array.data_type(),
                    array.fill_value(),
                    options,
                )
                .map(Cow::into_owned)
                .map_err(|e| format!("chunk {}: {}", job.key, error_chain(&e)))
        })
        .collect()
}
