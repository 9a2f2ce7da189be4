//! The native half of `zarrs_extension_codecs.CodecPipeline`: one zarrs
//! [`Array`] per zarr array, made from the array's metadata, that decodes
//! the chunks of a batch straight into zarr's output and encodes chunks for
//! writes.
//!
//! Glue only: the crate's read engine, through
//! [`ArrayReadExt::retrieve_windows_into_bytes_opt`] (the path of the
//! crate's own `ArrayReadExt` reads: a shard's inner chunks in one request,
//! each chunk decoded straight into its place in zarr's output), and zarrs
//! with this crate's codecs and
//! [`register_overrides`](zarrs_extension_codecs::register_overrides) for
//! encoding. This module checks what Python hands it ([`regions`]) and runs
//! a batch's chunks together on one pool of threads ([`threads`]) with the
//! GIL released.
//!
//! The chunks come from one of three places:
//! - the array's directory (zarr's `LocalStore`, read by [`local::Directory`]):
//!   Rust reads the files, and reads only the inner chunks a sharded read
//!   needs;
//! - the crate's remote store at the array's URL (zarr's HTTP and S3 stores
//!   that Python could map, see [`remote`]): the same, over the network;
//! - bytes Python fetched through zarr's store API (any other store): put in
//!   an in-memory store for the call, so that all take the same path.
//!
//! Writes encode with the crate's `ChunkEncoder` and hand the bytes back to
//! Python for zarr's store API, but in zarr's `LocalStore`, whose
//! directory Rust writes itself as `LocalStore` does ([`local`]): each
//! call's chunks once they are all encoded, in parallel.

mod encode;
mod local;
mod regions;
mod remote;
mod threads;
mod validated;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{Arc, PoisonError, RwLock};

use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;
use zarrs::array::codec::api::ArrayToBytesCodecTraits;
use zarrs::array::{Array, ArrayBytes, ArrayError, ArrayMetadata, CodecOptions};
use zarrs::storage::store::MemoryStore;
use zarrs::storage::{ReadableStorageTraits, WritableStorageTraits};
use zarrs_extension_codecs::remote::RemoteStore;
use zarrs_extension_codecs::write::{ChunkEncoder, InnerOrder};
use zarrs_extension_codecs::{
    ArrayReadExt, OsReadError, WindowAt, error_chain, register_overrides,
    validate_codecs_for_reading_with_warning,
};

use regions::Region;
pub use threads::pipeline_threads;

/// Add the pipeline's class and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ChunkArray>()?;
    m.add(
        "StoredChunkError",
        m.py().get_type::<encode::StoredChunkError>(),
    )?;
    m.add_class::<remote::SharedRemoteStore>()?;
    m.add_function(wrap_pyfunction!(pipeline_threads, m)?)?;
    Ok(())
}

/// A region as Python passes it: chunk coordinates, the chunk's part and
/// the output's part as `(start, stop)` pairs.
type PyRegion = (Vec<u64>, Vec<(u64, u64)>, Vec<(u64, u64)>);

fn ranges(pairs: Vec<(u64, u64)>) -> Vec<Range<u64>> {
    pairs.into_iter().map(|(a, b)| a..b).collect()
}

/// One zarr array, opened by zarrs from its metadata, for the pipeline.
#[pyclass(frozen, name = "ChunkArray", module = "zarrs_extension_codecs._native")]
pub struct ChunkArray {
    /// Behind a lock: the shape only grows (see `cover`), and a read holds
    /// the array it started with.
    array: RwLock<Arc<Array<dyn ReadableStorageTraits>>>,
    /// Whether `array` reads its chunks from a store of its own (else
    /// every read is given the chunks' bytes).
    has_store: bool,
    /// That store, when it is remote (for its request counts).
    remote: Option<Arc<RemoteStore>>,
    /// Why zarrs refuses to write the array, if it does (see
    /// `write_refusal`).
    write_refusal: Option<String>,
    /// The array's directory in zarr's `LocalStore`, when it has one: the
    /// writes that `store` Rust puts there itself.
    directory: Option<Arc<local::Directory>>,
}

#[pymethods]
impl ChunkArray {
    /// The array whose `zarr.json` is `metadata` (a Zarr v3 array's
    /// metadata, JSON), with its chunks in the directory `root` (the array's
    /// own directory, as zarr's `LocalStore` lays it out), at `path` (the
    /// array's path, `""` for the root) in the remote store `store`, or
    /// handed to each read when neither is given.
    ///
    /// Raises `ValueError` when zarrs cannot open the array (a codec or data
    /// type it does not have: the message says which), or when its codecs
    /// need this crate's overrides to read right (`RemoteStore` raises for
    /// a remote store that cannot be set up).
    #[new]
    #[pyo3(signature = (metadata, root=None, *, store=None, path=String::new()))]
    fn new(
        metadata: &str,
        root: Option<std::path::PathBuf>,
        store: Option<PyRef<'_, remote::SharedRemoteStore>>,
        path: String,
    ) -> PyResult<Self> {
        register_overrides();
        // Parsed once: for zarrs, and for the key of the codec check.
        let document: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(metadata)
                .map_err(|e| PyValueError::new_err(format!("array metadata: {e}")))?;
        let key = validated::key(&document);
        let parsed: ArrayMetadata = serde_json::from_value(serde_json::Value::Object(document))
            .map_err(|e| PyValueError::new_err(format!("array metadata: {e}")))?;
        let mut remote_store = None;
        let mut array_path = "/".to_string();
        // One directory: zarrs reads the chunks through it, writes put them.
        let directory = root
            .clone()
            .map(|root| Arc::new(local::Directory::new(root)));
        let storage: Option<Arc<dyn ReadableStorageTraits>> = match (&root, store) {
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err("give a root or a store, not both"));
            }
            (Some(_), None) => directory
                .clone()
                .map(|directory| directory as Arc<dyn ReadableStorageTraits>),
            (None, Some(shared)) => {
                let store = shared.store.clone();
                // zarrs gets the metadata from zarr, not through the store:
                // the store learns from it how large the array's shards are
                // (whether reading ahead of their indexes pays).
                let key = if path.is_empty() {
                    "zarr.json".to_string()
                } else {
                    array_path.push_str(&path);
                    format!("{path}/zarr.json")
                };
                store.note_metadata(&key, metadata.as_bytes());
                remote_store = Some(store.clone());
                Some(store)
            }
            (None, None) => None,
        };
        let has_store = storage.is_some();
        let storage = storage.unwrap_or_else(|| Arc::new(MemoryStore::new()));
        let array = Array::new_with_metadata(storage, &array_path, parsed).map_err(|e| {
            let hint = zarrs_extension_codecs::open_error_hint(&e)
                .map(|h| format!(" ({h})"))
                .unwrap_or_default();
            PyValueError::new_err(format!(
                "zarrs cannot open the array: {}{hint}",
                error_chain(&e)
            ))
        })?;
        // Checking the codecs encodes a sample chunk, which zarrs' sharding
        // codec splits with `par_iter`: on one of the pipeline's pools, not
        // on rayon's global pool, whose threads a child made by `fork()`
        // does not have (it would wait for them forever; see `threads`).
        let write_refusal = match validated::get(&key) {
            Some(warning) => warning,
            None => {
                let warning = threads::pool(1)?
                    .install(|| validate_codecs_for_reading_with_warning(&array))
                    .map_err(|e| PyValueError::new_err(error_chain(&e)))?;
                validated::insert(key, warning.clone());
                warning
            }
        };
        if !array.data_type().is_fixed() {
            return Err(PyTypeError::new_err(format!(
                "data type {} has no fixed size",
                array.data_type()
            )));
        }
        Ok(Self {
            array: RwLock::new(Arc::new(array)),
            has_store,
            remote: remote_store,
            write_refusal,
            directory,
        })
    }

    /// `(requests, bytes)` the remote store has fetched since it was opened
    /// (`None` for an array that is not read from a remote store).
    fn remote_fetched(&self) -> Option<(u64, u64)> {
        self.remote.as_ref().map(|store| {
            let fetched = store.fetched();
            (fetched.requests, fetched.bytes)
        })
    }

    /// The key of the chunk at `coords`, relative to the array.
    fn chunk_key(&self, coords: Vec<u64>) -> String {
        // The encoding alone: `Array::chunk_key` puts the array's path in
        // front, which a remote array has.
        self.array()
            .chunk_key_encoding()
            .encode(&coords)
            .as_str()
            .to_owned()
    }

    /// Whether the chunks are read from a store of the array's own.
    #[getter]
    fn has_store(&self) -> bool {
        self.has_store
    }

    /// Whether the crate's `ChunkEncoder` lays out this array's shards (its
    /// chain ends in `sharding_indexed` with no bytes -> bytes codecs
    /// after it): then a shard's inner chunks of fill values are left out
    /// as zarr counts them (any NaN for a NaN fill value), and
    /// `update_chunks` encodes again only the inner chunks a write touches.
    #[getter]
    fn lays_out_shards(&self) -> PyResult<bool> {
        Ok(encoder(&self.array(), "morton", false)?.lays_out_shards())
    }

    /// Why zarrs refuses to write this array, if it does: its fill value
    /// does not come back through its codecs (`cast_value`'s spec makes
    /// that an error for writes; zarr writes anyway), as the codec check
    /// at open found. `None` when the crate writes it.
    #[getter]
    fn write_refusal(&self) -> Option<String> {
        self.write_refusal.clone()
    }

    /// Decode the `regions` of a batch into `out` (C-contiguous, writable,
    /// with the array's number of dimensions and element size) with the GIL
    /// released, the chunks in parallel on `threads` threads.
    ///
    /// Each region is `(coords, chunk_ranges, out_ranges)`. The chunks come
    /// from the array's store, or from `encoded` (one entry per region:
    /// the chunk's bytes, or `None` for a chunk that is not stored, read as
    /// the fill value). Raises `ValueError` naming the chunk's key when a
    /// region does not fit, two output parts overlap, or a chunk cannot be
    /// decoded; `out` may then be partly written. Returns, for each
    /// region, whether its chunk is stored (else it read as the fill value);
    /// `None` when `presence` is false and the chunks come from the array's
    /// store (asking a remote store costs a request per chunk).
    ///
    /// `io_threads` (if more than `threads`) is the size of the pool: a
    /// read from a remote store that waits on the network keeps up to that
    /// many fetches in flight, while no more than `threads` decode.
    #[pyo3(signature = (out, regions, encoded=None, threads=1, presence=true, io_threads=0))]
    // Each one a (keyword) argument of the Python method.
    #[allow(clippy::too_many_arguments)]
    fn read_into(
        &self,
        py: Python<'_>,
        out: &Bound<'_, PyUntypedArray>,
        regions: Vec<PyRegion>,
        encoded: Option<Vec<Option<Bound<'_, PyBytes>>>>,
        threads: usize,
        presence: bool,
        io_threads: usize,
    ) -> PyResult<Option<Vec<bool>>> {
        let regions: Vec<Region> = regions
            .into_iter()
            .map(|(coords, chunk, out)| Region {
                coords,
                chunk: ranges(chunk),
                out: ranges(out),
            })
            .collect();
        let out_shape: Vec<u64> = out.shape().iter().map(|&n| n as u64).collect();
        let key = |coords: &[u64]| self.chunk_key(coords.to_vec());
        let own = self.array();
        regions::check(&own, &regions, &out_shape, key).map_err(PyValueError::new_err)?;
        self.element_size(out)?;

        let given;
        let mut present: Option<Vec<bool>> = None;
        let array: &Array<dyn ReadableStorageTraits> = match encoded {
            None if self.has_store => &own,
            None => {
                return Err(PyValueError::new_err(
                    "the array has no store: pass the chunks' bytes as `encoded`",
                ));
            }
            Some(chunks) => {
                if chunks.len() != regions.len() {
                    return Err(PyValueError::new_err(format!(
                        "{} regions, {} encoded chunks",
                        regions.len(),
                        chunks.len()
                    )));
                }
                let store = MemoryStore::new();
                present = Some(chunks.iter().map(Option::is_some).collect());
                for (region, bytes) in regions.iter().zip(chunks) {
                    if let Some(bytes) = bytes {
                        let key = own.chunk_key(&region.coords);
                        store
                            .set(&key, bytes::Bytes::copy_from_slice(bytes.as_bytes()))
                            .map_err(|e| PyValueError::new_err(format!("chunk {key}: {e}")))?;
                    }
                }
                given = own.with_storage(Arc::new(store) as Arc<dyn ReadableStorageTraits>);
                &given
            }
        };

        let bytes_view = byte_view(out)?;
        let mut rw = bytes_view
            .try_readwrite()
            .map_err(|e| PyValueError::new_err(format!("output array: {e}")))?;
        let dst = rw
            .as_slice_mut()
            .map_err(|e| PyValueError::new_err(format!("output array: {e}")))?;
        let pool = threads::pool(threads.max(io_threads))?;
        // The engine says which chunks are stored as it fetches them; with
        // the chunks given, whether each was is known already.
        let ask = presence && present.is_none();
        let stored = py
            .detach(|| read_regions(array, &regions, dst, &out_shape, &pool, threads, ask))
            .map_err(|e| self.read_error(&e))?;
        Ok(present.or(stored))
    }

    /// The stored bytes of `chunk` (C-contiguous, the chunk's full shape,
    /// the array's element size) at `coords`, encoded by the array's codecs
    /// with the GIL released.
    fn encode<'py>(
        &self,
        py: Python<'py>,
        coords: Vec<u64>,
        chunk: &Bound<'py, PyUntypedArray>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let array = self.array();
        let (key, shape) = self.key_and_shape(&array, &coords)?;
        let want: Vec<usize> = shape.iter().map(|n| n.get() as usize).collect();
        if chunk.shape() != want.as_slice() {
            return Err(PyValueError::new_err(format!(
                "chunk {key}: shape {:?}, the chunk's is {want:?}",
                chunk.shape()
            )));
        }
        self.element_size(chunk)?;
        let view = byte_view(chunk)?;
        let ro = view
            .try_readonly()
            .map_err(|e| PyValueError::new_err(format!("chunk {key}: {e}")))?;
        let src = ro
            .as_slice()
            .map_err(|e| PyValueError::new_err(format!("chunk {key}: {e}")))?;
        let encoded = py
            .detach(|| {
                array.codecs().encode(
                    ArrayBytes::new_flen(Cow::Borrowed(src)),
                    &shape,
                    array.data_type(),
                    array.fill_value(),
                    &CodecOptions::default(),
                )
            })
            .map_err(|e| PyValueError::new_err(format!("chunk {key}: {}", error_chain(&e))))?;
        Ok(PyBytes::new(py, &encoded))
    }

    /// The stored bytes of each of `chunks`, `(coords, chunk)` (a chunk:
    /// the chunk's full shape, the array's element type in native byte
    /// order, any memory layout), encoded by the crate's `ChunkEncoder`
    /// with the GIL released, the chunks in parallel on `threads` threads;
    /// each as a `uint8` numpy array that owns the encoder's output (no
    /// copy), or `None` where nothing is to be stored (a chunk, or every
    /// inner chunk of a shard, of fill values, unless
    /// `write_empty_chunks`).
    ///
    /// Each chunk (each inner chunk of a shard) is gathered from the
    /// caller's memory by the thread that encodes it (no copy of the whole
    /// batch); a shard's inner chunks are laid out in `order`, zarr's
    /// `subchunk_write_order` (`morton`, its default, `lexicographic`,
    /// `colexicographic`, `unordered`); with `write_empty_chunks`, every
    /// inner chunk is stored, fill values or not, as zarr stores the inner
    /// chunks a write touches (the caller sends a shard at the array's far
    /// edge with nothing stored to `update_chunks`, its part inside the
    /// array the box). Raises `ValueError` naming the chunk's key when a
    /// shape does not fit (nothing is encoded then).
    ///
    /// A chunk that fails has, in its place, the exception it raised (an
    /// instance, not raised, so that the caller can store the others and
    /// then raise it, as zarr's pipeline does): `StoredChunkError` (a
    /// `ValueError`) for stored bytes that do not read, `ValueError` naming
    /// the chunk's key for a value the codecs refuse, the `OSError`
    /// subclass of the system's error number for a file of the directory.
    ///
    /// With `store` (an array opened on its directory), once every chunk
    /// is encoded, those that encoded are written into the directory as
    /// zarr's `LocalStore` writes them (a new file renamed over the key),
    /// or their files deleted, in parallel, each then `None`.
    #[pyo3(signature = (chunks, threads, order = "morton", write_empty_chunks = false, *, store = false))]
    fn encode_chunks<'py>(
        &self,
        py: Python<'py>,
        chunks: Vec<(Vec<u64>, Bound<'py, PyUntypedArray>)>,
        threads: usize,
        order: &str,
        write_empty_chunks: bool,
        store: bool,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let sink = self.sink(store)?;
        let array = self.array();
        let encoder = encoder(&array, order, write_empty_chunks)?;
        let mut jobs = Vec::with_capacity(chunks.len());
        for (coords, chunk) in &chunks {
            let (key, shape) = self.key_and_shape(&array, coords)?;
            let want: Vec<usize> = shape.iter().map(|n| n.get() as usize).collect();
            if chunk.shape() != want.as_slice() {
                return Err(PyValueError::new_err(format!(
                    "chunk {key}: shape {:?}, the chunk's is {want:?}",
                    chunk.shape()
                )));
            }
            let size = self.element_type(chunk)?;
            jobs.push(encode::Job {
                key,
                shape,
                source: encode::Memory::of(chunk, size),
            });
        }
        // `chunks` holds every array alive until the call returns.
        encoded_off_gil(py, threads, jobs.len(), |options| {
            encode::encode_all(&encoder, &jobs, options, sink)
        })
    }

    /// The stored bytes of each chunk of `updates`, `(coords, value, stored,
    /// at)`: the chunk at `coords`, whose stored bytes are `stored` (`None`
    /// when nothing is stored), with the box of `value`'s shape at `at`
    /// (its first element's place in the chunk) overwritten by `value` (the
    /// array's element type in native byte order, any memory layout,
    /// broadcast views included); `None` where nothing is to be stored. Of
    /// a shard, only the inner chunks the box touches are encoded again
    /// (those it covers in part decoded first); the others keep their
    /// stored bytes, laid out in `order` (as `encode_chunks`). With the GIL
    /// released, the chunks in parallel on `threads` threads. Chunks and
    /// inner chunks of fill values the box touches are left out, or with
    /// `write_empty_chunks` stored (zarr's sharding codec stores those, and
    /// keeps the rest as they are).
    ///
    /// With `store`, as `encode_chunks` with it, and each chunk's stored
    /// bytes are read from the directory by the thread that encodes it
    /// (`stored` must then be `None`).
    #[pyo3(signature = (updates, threads, order = "morton", write_empty_chunks = false, *, store = false))]
    #[allow(clippy::type_complexity)]
    fn update_chunks<'py>(
        &self,
        py: Python<'py>,
        updates: Vec<(
            Vec<u64>,
            Bound<'py, PyUntypedArray>,
            Option<Bound<'py, PyBytes>>,
            Vec<u64>,
        )>,
        threads: usize,
        order: &str,
        write_empty_chunks: bool,
        store: bool,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let sink = self.sink(store)?;
        let array = self.array();
        let encoder = encoder(&array, order, write_empty_chunks)?;
        let mut jobs = Vec::with_capacity(updates.len());
        for (coords, value, stored, at) in &updates {
            let (key, shape) = self.key_and_shape(&array, coords)?;
            let size = self.element_type(value)?;
            if store && stored.is_some() {
                return Err(PyValueError::new_err(format!(
                    "chunk {key}: stored bytes given to a write that reads them from the directory"
                )));
            }
            jobs.push(encode::Update {
                key,
                shape,
                stored: stored.as_ref().map(|b| b.as_bytes()),
                at: at.clone(),
                source: encode::Memory::of(value, size),
            });
        }
        // `updates` holds every array and bytes object alive until the
        // call returns.
        encoded_off_gil(py, threads, jobs.len(), |options| {
            encode::update_all(&encoder, &jobs, options, sink)
        })
    }

    /// Delete the chunks at `coords` from the array's directory, as zarr's
    /// `LocalStore` deletes a key (a chunk not stored is no error), with the
    /// GIL released. Every key is tried, as zarr deletes each chunk of a
    /// write whatever happens to the others; then the first failure is
    /// raised: `OSError` naming its chunk. `ValueError` for an array not
    /// opened on a directory.
    fn delete_chunks(&self, py: Python<'_>, coords: Vec<Vec<u64>>) -> PyResult<()> {
        let directory = self.directory()?;
        let keys: Vec<String> = coords.into_iter().map(|c| self.chunk_key(c)).collect();
        let failures = py.detach(|| {
            keys.iter()
                .filter_map(|key| directory.settle(key, None).err())
                .collect::<Vec<_>>()
        });
        match failures.into_iter().next() {
            Some(first) => Err(first.into_py()),
            None => Ok(()),
        }
    }

    /// For each chunk at `coords`, how many of its elements, from its
    /// origin, lie inside the array in each dimension: the chunk's shape,
    /// less at the array's far edges. zarr hands the pipeline an edge
    /// chunk's full shape, while a read must stay inside the array.
    fn extents(&self, coords: Vec<Vec<u64>>) -> PyResult<Vec<Vec<u64>>> {
        let array = self.array();
        coords
            .into_iter()
            .map(|c| match array.chunk_subset_bounded(&c) {
                Ok(subset) => Ok(subset.shape().to_vec()),
                Err(e) => Err(PyValueError::new_err(format!(
                    "chunk {}: {e}",
                    self.chunk_key(c)
                ))),
            })
            .collect()
    }

    /// Grow the array's shape, in each dimension, to at least `shape`.
    ///
    /// zarr changes an array's shape in place (`resize`, `append`) without
    /// telling its codec pipeline, so the shape given at opening may have
    /// grown since; the pipeline covers the chunks zarr asks for before
    /// reading or writing them. A shape that has shrunk needs nothing:
    /// zarr's selections stay inside the array it has now.
    fn cover(&self, shape: Vec<u64>) -> PyResult<()> {
        let mut array = self.array.write().unwrap_or_else(PoisonError::into_inner);
        if shape.len() != array.dimensionality()
            || shape.iter().zip(array.shape()).all(|(n, s)| n <= s)
        {
            return Ok(());
        }
        let grown: Vec<u64> = shape
            .iter()
            .zip(array.shape())
            .map(|(&n, &s)| n.max(s))
            .collect();
        let mut next = array.with_storage(array.storage());
        next.set_shape(grown)
            .map_err(|e| PyValueError::new_err(format!("array shape: {e}")))?;
        *array = Arc::new(next);
        Ok(())
    }

    /// Decode each of `chunks`, `(coords, stored bytes)`, whole into
    /// `out[i]` (`out`: C-contiguous, `(len(chunks), *chunk shape)`), with
    /// the GIL released, the chunks in parallel on `threads` threads.
    ///
    /// Whole means the chunk's full shape, the part of an edge chunk
    /// outside the array included: a partial write keeps what is stored
    /// there, as zarr's own pipeline does. Raises `ValueError` naming the
    /// chunk's key when a chunk's shape does not fit or it cannot be
    /// decoded.
    #[pyo3(signature = (out, chunks, threads=1))]
    fn decode_chunks(
        &self,
        py: Python<'_>,
        out: &Bound<'_, PyUntypedArray>,
        chunks: Vec<(Vec<u64>, Bound<'_, PyBytes>)>,
        threads: usize,
    ) -> PyResult<()> {
        let size = self.element_size(out)?;
        let (count, chunk_dims) = out.shape().split_first().unwrap_or((&0, &[]));
        if *count != chunks.len() {
            return Err(PyValueError::new_err(format!(
                "an output of {count} chunks for {} chunks",
                chunks.len()
            )));
        }
        let array = self.array();
        let mut jobs = Vec::with_capacity(chunks.len());
        for (coords, bytes) in &chunks {
            let (key, shape) = self.key_and_shape(&array, coords)?;
            let dims: Vec<usize> = shape.iter().map(|n| n.get() as usize).collect();
            // A zero-dimensional array's chunk is one element: `out` is (n,).
            if dims.as_slice() != chunk_dims {
                return Err(PyValueError::new_err(format!(
                    "chunk {key}: shape {dims:?}, the output's chunks are {chunk_dims:?}"
                )));
            }
            jobs.push((key, shape, bytes.as_bytes()));
        }
        let view = byte_view(out)?;
        let mut rw = view
            .try_readwrite()
            .map_err(|e| PyValueError::new_err(format!("output array: {e}")))?;
        let dst = rw
            .as_slice_mut()
            .map_err(|e| PyValueError::new_err(format!("output array: {e}")))?;
        let per_chunk = chunk_dims.iter().product::<usize>() * size;
        let pool = threads::pool(threads)?;
        py.detach(|| {
            pool.install(|| {
                dst.par_chunks_mut(per_chunk.max(1)).zip(jobs).try_for_each(
                    |(slot, (key, shape, bytes))| {
                        decode_whole(&array, &shape, bytes, slot)
                            .map_err(|e| format!("chunk {key}: {e}"))
                    },
                )
            })
        })
        .map_err(PyValueError::new_err)
    }
}

/// Decode one chunk's stored `bytes` (of chunk shape `shape`) into `slot`.
fn decode_whole(
    array: &Array<dyn ReadableStorageTraits>,
    shape: &[std::num::NonZeroU64],
    bytes: &[u8],
    slot: &mut [u8],
) -> Result<(), String> {
    let decoded = array
        .codecs()
        .decode(
            Cow::Borrowed(bytes),
            shape,
            array.data_type(),
            array.fill_value(),
            &CodecOptions::default(),
        )
        .map_err(|e| error_chain(&e))?
        .into_fixed()
        .map_err(|e| e.to_string())?;
    if decoded.len() != slot.len() {
        return Err(format!(
            "decoded to {} bytes, the chunk holds {}",
            decoded.len(),
            slot.len()
        ));
    }
    slot.copy_from_slice(&decoded);
    Ok(())
}

impl ChunkArray {
    /// Where a write's encoded chunks go: into the array's directory with
    /// `store`, else back to the caller.
    fn sink(&self, store: bool) -> PyResult<encode::Sink<'_>> {
        Ok(if store {
            encode::Sink::Directory(self.directory()?)
        } else {
            encode::Sink::Caller
        })
    }

    /// The array's directory, or an error if it was not opened on one.
    /// A read's `error` for Python: where the operating system refused a
    /// file of the array's directory, the `OSError` subclass Python gives
    /// its number (as zarr's `LocalStore` raises), with what was being
    /// read as a note; otherwise `ValueError` with the error and its
    /// causes. (A remote store's errors stay `ValueError`: the pipeline
    /// reads them as the remote layer's failure.)
    fn read_error(&self, error: &ArrayError) -> PyErr {
        match OsReadError::in_error(error) {
            Some(os) if self.directory.is_some() => {
                local::os_error(os.errno(), None, os.context().to_string())
            }
            _ => PyValueError::new_err(error_chain(error)),
        }
    }

    fn directory(&self) -> PyResult<&local::Directory> {
        self.directory
            .as_deref()
            .ok_or_else(|| PyValueError::new_err("the array was not opened on a directory"))
    }

    /// The key of the chunk at `coords` of `array` and its shape, or an
    /// error naming the key.
    fn key_and_shape(
        &self,
        array: &Array<dyn ReadableStorageTraits>,
        coords: &[u64],
    ) -> PyResult<(String, zarrs::array::ChunkShape)> {
        let key = self.chunk_key(coords.to_vec());
        let shape = array
            .chunk_shape(coords)
            .map_err(|e| PyValueError::new_err(format!("chunk {key}: {e}")))?;
        Ok((key, shape))
    }

    /// The zarrs array as it is now (its shape may grow later).
    fn array(&self) -> Arc<Array<dyn ReadableStorageTraits>> {
        self.array
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The array's element size, checked against `array`'s, which must be
    /// C-contiguous.
    fn element_size(&self, array: &Bound<'_, PyUntypedArray>) -> PyResult<usize> {
        let size = self.element_type(array)?;
        if !array.is_c_contiguous() {
            return Err(PyValueError::new_err("array is not C-contiguous"));
        }
        Ok(size)
    }

    /// The array's element size, checked against `array`'s (any layout).
    fn element_type(&self, array: &Bound<'_, PyUntypedArray>) -> PyResult<usize> {
        let data_type = self.array().data_type().clone();
        let size = data_type.fixed_size().unwrap_or(0);
        let dtype = array.dtype();
        if dtype.itemsize() != size {
            return Err(PyTypeError::new_err(format!(
                "array of dtype {dtype} ({} bytes an element) for data type {data_type} ({size} bytes)",
                dtype.itemsize(),
            )));
        }
        // Bytes in another order, or of another kind of the same size
        // (`>f8`, `<i8` for float64), would be reinterpreted silently.
        if dtype.is_native_byteorder() == Some(false) {
            return Err(PyTypeError::new_err(format!(
                "array of dtype {dtype} is not in native byte order: zarrs decodes into native order (use dtype.newbyteorder('='))"
            )));
        }
        let name = data_type.name(zarrs::plugin::ZarrVersion::V3);
        if let Some(kind) = name.as_deref().and_then(numpy_kind)
            && dtype.kind() != kind
        {
            return Err(PyTypeError::new_err(format!(
                "array of dtype {dtype} (kind '{}') for data type {data_type} (kind '{}')",
                dtype.kind() as char,
                kind as char
            )));
        }
        Ok(size)
    }
}

/// numpy's kind of the data types whose memory numpy has one type for;
/// `None` for the others (raw bits, small floats, structs: numpy may hold
/// them as `V` or a type of an extension).
fn numpy_kind(data_type: &str) -> Option<u8> {
    Some(match data_type {
        "bool" => b'b',
        "int8" | "int16" | "int32" | "int64" => b'i',
        "uint8" | "uint16" | "uint32" | "uint64" => b'u',
        "float16" | "float32" | "float64" => b'f',
        "complex64" | "complex128" => b'c',
        _ => return None,
    })
}

/// `array`'s memory as a flat `uint8` view (no copy: `array` is
/// C-contiguous), so that numpy's borrow checks see the same memory.
fn byte_view<'py>(array: &Bound<'py, PyUntypedArray>) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let py = array.py();
    let flat = array.call_method1(intern!(py, "reshape"), (-1,))?;
    let bytes = flat.call_method1(intern!(py, "view"), (intern!(py, "u1"),))?;
    Ok(bytes.cast_into::<PyArray1<u8>>()?)
}

/// The crate's encoder of `array`'s chunks, its shards' inner chunks in
/// zarr-python's `order`, keeping chunks of fill values if `keep_fill`
/// (`write_empty_chunks`).
fn encoder(
    array: &Array<dyn ReadableStorageTraits>,
    order: &str,
    keep_fill: bool,
) -> PyResult<ChunkEncoder> {
    let order = InnerOrder::from_zarr_python(order).map_err(PyValueError::new_err)?;
    Ok(ChunkEncoder::new(array)
        .map_err(|e| PyValueError::new_err(e.to_string()))?
        .with_order(order)
        .keep_fill_chunks(keep_fill))
}

/// Decode every region into `dst`, the bytes of an output of `out_shape`
/// elements, through the crate's read engine: the regions are read
/// together by `threads` threads, each inner chunk or chunk decoded
/// straight into its place in `dst`. With `presence`, whether each
/// region's chunk is stored, as the engine found out.
fn read_regions(
    array: &Array<dyn ReadableStorageTraits>,
    regions: &[Region],
    dst: &mut [u8],
    out_shape: &[u64],
    pool: &rayon::ThreadPool,
    threads: usize,
    presence: bool,
) -> Result<Option<Vec<bool>>, ArrayError> {
    let windows = regions
        .iter()
        .map(|region| {
            let window = region.array_subset(array).map_err(|e| {
                ArrayError::Other(format!(
                    "chunk {}: {e}",
                    array.chunk_key(&region.coords).as_str()
                ))
            })?;
            Ok(WindowAt {
                window,
                at: region.out.iter().map(|r| r.start).collect(),
            })
        })
        .collect::<Result<Vec<_>, ArrayError>>()?;
    let options = CodecOptions::default().with_concurrent_target(threads);
    // The engine's own threads decode; inside the pool, the codecs' parallel
    // loops (zarrs', this crate's kernels) stay within its limit.
    pool.install(|| {
        if presence {
            array
                .retrieve_windows_into_bytes_stored_opt(&windows, dst, out_shape, &options)
                .map(Some)
        } else {
            array
                .retrieve_windows_into_bytes_opt(&windows, dst, out_shape, &options)
                .map(|()| None)
        }
    })
}

/// Run `encode` on a pool of `threads` threads with the GIL released, for
/// `count` chunks, and hand each chunk's outcome to Python: its bytes as a
/// `uint8` array (owned by it, no copy), `None`, or the exception it
/// raised (an instance, not raised: the other chunks are still to store).
fn encoded_off_gil<'py>(
    py: Python<'py>,
    threads: usize,
    count: usize,
    encode: impl FnOnce(&CodecOptions) -> Vec<encode::Outcome> + Send,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let threads = threads.max(1);
    // Few large chunks (shards): each may split its inner chunks over the
    // threads the others leave (rayon shares one pool among both).
    let options =
        CodecOptions::default().with_concurrent_target(threads.div_ceil(count.max(1)).max(1));
    let pool = threads::pool(threads)?;
    let outcomes = py.detach(|| pool.install(|| encode(&options)));
    Ok(outcomes
        .into_iter()
        .map(|outcome| match outcome {
            Ok(Some(bytes)) => PyArray1::from_vec(py, bytes).into_any(),
            Ok(None) => py.None().into_bound(py),
            Err(failure) => failure.into_py().into_value(py).into_bound(py).into_any(),
        })
        .collect())
}
