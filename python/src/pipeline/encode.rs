//! The chunks of a write, encoded together by the crate's
//! [`ChunkEncoder`]: each chunk read where zarr hands it (often a strided
//! view of the value being written), each inner chunk of a shard gathered
//! on the worker that encodes it, so that no copy of a chunk or shard is
//! made first and the gathers run in parallel too.

use std::num::NonZeroU64;

use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use rayon::prelude::*;
use zarrs::array::{ArrayError, CodecOptions};
use zarrs_extension_codecs::write::{ChunkEncoder, StoredChunkDamaged, Strided};

use super::local::{self, Directory};

pyo3::create_exception!(
    _native,
    StoredChunkError,
    pyo3::exceptions::PyValueError,
    "A write met stored bytes of a chunk or shard that do not read (a damaged index or inner chunk): nothing of that chunk was written."
);

/// Why a batch was not encoded: the stored bytes of a chunk it had to read
/// do not read (`Damaged`), the array's directory could not be read or
/// written (`Io`), or anything else (a value the codecs refuse, a shape
/// that does not fit).
pub enum Failure {
    Damaged(String),
    Io(local::Failure),
    Other(String),
}

impl Failure {
    fn of(error: &ArrayError) -> Self {
        if StoredChunkDamaged::in_error(error).is_some() {
            Self::Damaged(error.to_string())
        } else {
            Self::Other(error.to_string())
        }
    }

    /// As the Python exception: `StoredChunkError`, `OSError` (as zarr's
    /// `LocalStore` raises for a file it cannot read or write) or
    /// `ValueError`.
    pub fn into_py(self) -> PyErr {
        match self {
            Self::Damaged(message) => StoredChunkError::new_err(message),
            Self::Io(failure) => failure.into_py(),
            Self::Other(message) => pyo3::exceptions::PyValueError::new_err(message),
        }
    }
}

/// A chunk's memory as numpy has it: the span of bytes its elements lie
/// in, where its first element is in that span, its shape and its strides
/// in bytes (any sign), read on a worker thread without the GIL.
pub struct Memory {
    span: *const u8,
    len: usize,
    origin: usize,
    shape: Vec<u64>,
    strides: Vec<isize>,
    item: usize,
}

// SAFETY: `Memory` only reads the memory of a numpy array that the caller
// keeps alive (a reference is held for the whole call), as zarr's own
// pipeline reads the value being written from its thread pool.
unsafe impl Send for Memory {}
// SAFETY: as above: the memory is only read.
unsafe impl Sync for Memory {}

impl Memory {
    /// The memory of `array`, whose element size is `item` bytes.
    pub fn of(array: &Bound<'_, PyUntypedArray>, item: usize) -> Self {
        // SAFETY: a numpy array object; its `data` points at its first element.
        let data = unsafe { (*array.as_array_ptr()).fields.data }.cast::<u8>();
        let shape: Vec<u64> = array.shape().iter().map(|&n| n as u64).collect();
        let strides = array.strides().to_vec();
        // The lowest and highest byte offsets of an element from the first
        // (`None` if they do not fit an `isize`: numpy's `as_strided` makes
        // views it does not check).
        let reach = || -> Option<(isize, usize)> {
            let (mut low, mut high) = (0isize, 0isize);
            for (&n, &s) in shape.iter().zip(&strides) {
                let r = s.checked_mul(isize::try_from(n.checked_sub(1)?).ok()?)?;
                if r < 0 {
                    low = low.checked_add(r)?;
                } else {
                    high = high.checked_add(r)?;
                }
            }
            let len = usize::try_from(high.checked_sub(low)?)
                .ok()?
                .checked_add(item)?;
            Some((low, len))
        };
        let (low, len) = if shape.contains(&0) {
            (0, 0)
        } else {
            reach().unwrap_or((0, usize::MAX))
        };
        Self {
            // The span starts at the lowest element, `-low` bytes before the
            // first: inside the array's memory.
            span: data.cast_const().wrapping_offset(low),
            len,
            origin: low.unsigned_abs(),
            shape,
            strides,
            item,
        }
    }

    /// The elements as the crate's checked view, or why not, naming the
    /// chunk `key`.
    fn view_of(&self, key: &str) -> Result<Strided<'_>, Failure> {
        let refused = |why: String| Failure::Other(format!("chunk {key}: {why}"));
        if self.len == usize::MAX {
            return Err(refused(format!(
                "a numpy view of shape {:?} and strides {:?} reaches past the address space",
                self.shape, self.strides
            )));
        }
        let span: &[u8] = if self.len == 0 {
            &[]
        } else {
            // SAFETY: every element of the numpy array lies in these `len`
            // bytes from the lowest one (computed from its shape and
            // strides without overflow), which the caller keeps alive for
            // the call. zarr does not write the value it hands the pipeline
            // while the write runs; a Python thread of the caller's own
            // that wrote the same array meanwhile would race with this
            // read as it races with zarr's own pipeline, whose worker
            // threads read the value without the GIL too.
            unsafe { std::slice::from_raw_parts(self.span, self.len) }
        };
        Strided::new(span, self.origin, &self.shape, &self.strides, self.item).map_err(refused)
    }
}

/// One chunk to encode: its key (for messages), shape and memory.
pub struct Job {
    pub key: String,
    pub shape: Vec<NonZeroU64>,
    pub source: Memory,
}

/// Each chunk's outcome: the bytes to store (`None`: nothing to store, or
/// the sink stored it), or why it failed.
pub type Outcome = Result<Option<Vec<u8>>, Failure>;

/// Where the encoded chunks go: back to the caller, or (the array in
/// zarr's `LocalStore`) into its directory, in parallel once every chunk of
/// the call is encoded. A chunk that fails leaves the others to be
/// stored, as zarr's pipeline stores every chunk of a batch that encodes
/// and raises for the one that does not.
#[derive(Clone, Copy)]
pub enum Sink<'a> {
    Caller,
    Directory(&'a Directory),
}

impl Sink<'_> {
    /// The `outcomes` of the chunks of `keys` as the caller gets them:
    /// themselves, or, once the directory has the chunk, `None` (a failure
    /// to write it in its place).
    fn take<'k>(
        self,
        keys: impl IndexedParallelIterator<Item = &'k str>,
        outcomes: Vec<Outcome>,
    ) -> Vec<Outcome> {
        match self {
            Self::Caller => outcomes,
            Self::Directory(directory) => keys
                .zip(outcomes.into_par_iter())
                .map(|(key, outcome)| {
                    let bytes = outcome?;
                    directory
                        .settle(key, bytes.as_deref())
                        .map_err(Failure::Io)?;
                    Ok(None)
                })
                .collect(),
        }
    }
}

/// Encode every job on the current rayon pool, each chunk by one task
/// (the inner chunks of a shard as tasks of their own on the same pool):
/// each chunk's outcome, into `sink`.
pub fn encode_all(
    encoder: &ChunkEncoder,
    jobs: &[Job],
    options: &CodecOptions,
    sink: Sink<'_>,
) -> Vec<Outcome> {
    let outcomes = jobs
        .par_iter()
        .map(|job| {
            let view = job.source.view_of(&job.key)?;
            encoder
                .encode(&job.key, &job.shape, &view, options)
                .map_err(|e| Failure::of(&e))
        })
        .collect();
    sink.take(jobs.par_iter().map(|job| job.key.as_str()), outcomes)
}

/// One chunk of which a box is written: its key, shape, stored bytes (if
/// any; into a directory, what it holds is read instead), where the box
/// starts in it and the box's new elements.
pub struct Update<'a> {
    pub key: String,
    pub shape: Vec<NonZeroU64>,
    pub stored: Option<&'a [u8]>,
    pub at: Vec<u64>,
    pub source: Memory,
}

/// [`ChunkEncoder::encode_update`] of every update, in parallel on the
/// current rayon pool, into `sink` (from which, if it is a directory, each
/// chunk's stored bytes are read by the task that encodes it).
pub fn update_all(
    encoder: &ChunkEncoder,
    updates: &[Update<'_>],
    options: &CodecOptions,
    sink: Sink<'_>,
) -> Vec<Outcome> {
    let outcomes = updates
        .par_iter()
        .map(|update| {
            let view = update.source.view_of(&update.key)?;
            let read;
            let stored = match sink {
                Sink::Caller => update.stored,
                Sink::Directory(directory) => {
                    read = directory.read(&update.key).map_err(Failure::Io)?;
                    read.as_deref()
                }
            };
            encoder
                .encode_update(
                    &update.key,
                    &update.shape,
                    stored,
                    &update.at,
                    &view,
                    options,
                )
                .map_err(|e| Failure::of(&e))
        })
        .collect();
    sink.take(
        updates.par_iter().map(|update| update.key.as_str()),
        outcomes,
    )
}
