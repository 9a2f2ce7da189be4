//! The native part of the Python package `zarrs_extension_codecs`: numpy
//! arrays in, the crate's kernels ([`zarrs_extension_codecs::slices`]) run
//! on their bytes with the GIL released, numpy arrays out.
//!
//! Glue only: every element is computed by the crate. This module checks
//! what numpy hands it (data types, byte order, layout, lengths, writeable
//! output, overlapping buffers) and turns every failure into a Python
//! exception: `TypeError` for a data type the kernels do not have,
//! `ValueError` for everything else, as zarr-python raises for these
//! codecs. The Python classes (`python/zarrs_extension_codecs/`) decide
//! byte order and layout, and allocate the output.

mod pipeline;

use std::num::NonZeroUsize;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use numpy::{
    PyArray1, PyArrayDescr, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use zarrs_extension_codecs::kernels::cast::{CastPlan as KernelPlan, OutOfRangeMode, RoundingMode};
use zarrs_extension_codecs::kernels::rounding::UnknownModeError;
use zarrs_extension_codecs::kernels::scale_offset::ScaleOffsetError;
use zarrs_extension_codecs::numeric::NumericType;
use zarrs_extension_codecs::slices::{self, SliceError};

/// The kernels' type for a numpy dtype: the integer and float types
/// zarr-python 3.4.2 has (`int8` ... `uint64`, `float16`, `float32`,
/// `float64`), in either byte order.
fn numeric_type(dtype: &Bound<'_, PyArrayDescr>) -> PyResult<NumericType> {
    use NumericType as T;
    Ok(match (dtype.kind(), dtype.itemsize()) {
        (b'i', 1) => T::Int8,
        (b'i', 2) => T::Int16,
        (b'i', 4) => T::Int32,
        (b'i', 8) => T::Int64,
        (b'u', 1) => T::UInt8,
        (b'u', 2) => T::UInt16,
        (b'u', 4) => T::UInt32,
        (b'u', 8) => T::UInt64,
        (b'f', 2) => T::Float16,
        (b'f', 4) => T::Float32,
        (b'f', 8) => T::Float64,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "unsupported dtype {dtype}: expected an integer or float dtype of 1 to 8 bytes"
            )));
        }
    })
}

/// The type of `array`'s elements, checked to be C-contiguous and in native
/// byte order, the layout the kernels read and write.
fn kernel_type(array: &Bound<'_, PyUntypedArray>, role: &str) -> PyResult<NumericType> {
    let dtype = array.dtype();
    let ty = numeric_type(&dtype)?;
    if dtype.is_native_byteorder() == Some(false) {
        return Err(PyValueError::new_err(format!(
            "{role} array has dtype {dtype}, not in native byte order"
        )));
    }
    if !array.is_c_contiguous() {
        return Err(PyValueError::new_err(format!(
            "{role} array is not C-contiguous"
        )));
    }
    Ok(ty)
}

/// `array`'s memory as a flat `uint8` view (no copy: `array` is
/// C-contiguous), so that any alignment is fine and numpy's borrow checks
/// see the same memory.
fn byte_view<'py>(array: &Bound<'py, PyUntypedArray>) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let py = array.py();
    let flat = array.call_method1(intern!(py, "reshape"), (-1,))?;
    let bytes = flat.call_method1(intern!(py, "view"), (intern!(py, "u1"),))?;
    Ok(bytes.cast_into::<PyArray1<u8>>()?)
}

fn same_shape(src: &Bound<'_, PyUntypedArray>, out: &Bound<'_, PyUntypedArray>) -> PyResult<()> {
    if src.shape() == out.shape() {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "output array has shape {:?}, input {:?}",
            out.shape(),
            src.shape()
        )))
    }
}

/// Kernel calls that may split their chunk running now, from all Python
/// threads together.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// The fewest bytes (of the wider of input and output) a chunk needs for
/// the crate to split it at all: two parts of its 1 MiB minimum.
const SPLITTABLE_BYTES: usize = 2 << 20;

/// One kernel call that may split its chunk, counted in [`RUNNING`] while
/// it lives.
struct Running {
    counted: bool,
}

impl Running {
    /// The number of threads a call over a chunk of `bytes` (the wider side)
    /// may split it across: `threads` if the caller says; one for a chunk
    /// under [`SPLITTABLE_BYTES`]; else [`default_threads`] shared evenly
    /// among the calls of this kind running when this one starts, this one
    /// included (at least one each).
    ///
    /// Why: callers that already run on several threads (dask, a thread
    /// pool, zarr's pipeline decoding chunks at once) keep the cores busy by
    /// themselves. Splitting their chunks as well only hands parts back and
    /// forth between the same cores and puts twice the chunks in the shared
    /// cache at once: two threads decoding 8 MiB chunks were 10-20 % slower
    /// splitting them than not. The count is exact when the call starts; a
    /// call that starts alone keeps its threads if another starts later.
    fn enter(threads: Option<usize>, bytes: usize) -> (Self, usize) {
        if let Some(threads) = threads {
            return (Self { counted: false }, threads);
        }
        if bytes < SPLITTABLE_BYTES {
            return (Self { counted: false }, 1);
        }
        forget_counts_of_parent();
        let running = RUNNING.fetch_add(1, Ordering::Relaxed) + 1;
        let threads = (default_threads() / running).max(1);
        (Self { counted: true }, threads)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.counted {
            // Never below zero, even if a forked child's reset (below)
            // came between this call's count and now.
            let _ =
                RUNNING.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        }
    }
}

/// The number of threads a kernel call without `threads=` over a chunk of
/// `nbytes` (the wider of input and output) would split it across if it
/// started now, from this thread ([`Running::enter`]; this call counted as
/// that one).
#[pyfunction]
fn split_threads(nbytes: usize) -> usize {
    Running::enter(None, nbytes).1
}

/// The process [`RUNNING`] counts for (set when the module is loaded).
static COUNTING_FOR: AtomicU32 = AtomicU32::new(0);

/// In a process forked from the one that loaded the module, start the
/// counts afresh: a fork while another thread was inside a kernel copies a
/// count that no call in the child will ever take back, and the child would
/// never split a chunk again.
fn forget_counts_of_parent() {
    let pid = std::process::id();
    let owner = COUNTING_FOR.load(Ordering::Relaxed);
    if owner != pid
        && COUNTING_FOR
            .compare_exchange(owner, pid, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        RUNNING.store(0, Ordering::Relaxed);
    }
}

/// The number of threads a large chunk is split across by default: the
/// CPUs the calling thread may use, as some thread found at most
/// [`CPUS_FOR`] ago, and no more than `ZARRS_EXTENSION_CODECS_THREADS`, or
/// else `OMP_NUM_THREADS`, says when set.
///
/// `OMP_NUM_THREADS` because it is how a process is told that others share
/// its cores: dask.distributed starts every worker process with it set to
/// 1, and so do other schedulers that run a process per core, for numpy's
/// BLAS and the like. Two worker processes that each split their chunks
/// across both cores of a two-core machine only take turns on them.
/// `ZARRS_EXTENSION_CODECS_THREADS` sets this package's count alone (for a
/// process that limits BLAS but wants chunks split).
#[pyfunction]
fn default_threads() -> usize {
    // Not asked on every call: on Linux `available_parallelism` reads the
    // cgroup's CPU quota from files, about 27 µs, which every call used to
    // pay holding the GIL (more than the kernels take for a chunk of
    // 64 KiB). Not kept for good either: a process may be pinned to fewer
    // CPUs while it runs (`os.sched_setaffinity`), and splitting a chunk
    // across threads that share one CPU only costs.
    static CPUS: AtomicUsize = AtomicUsize::new(0);
    static ASKED: AtomicU64 = AtomicU64::new(0);
    let now = millis_since_epoch();
    let cpus = CPUS.load(Ordering::Relaxed);
    let asked = ASKED.load(Ordering::Relaxed);
    if cpus != 0 && Duration::from_millis(now.saturating_sub(asked)) < CPUS_FOR {
        return cpus;
    }
    let cpus = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let limit = thread_count_from("ZARRS_EXTENSION_CODECS_THREADS")
        .or_else(|| thread_count_from("OMP_NUM_THREADS"));
    let cpus = cpus.min(limit.unwrap_or(usize::MAX));
    CPUS.store(cpus, Ordering::Relaxed);
    ASKED.store(now, Ordering::Relaxed);
    cpus
}

/// The environment variable `name`, if it holds a whole number, at least
/// one. (OpenMP's `OMP_NUM_THREADS` may also be a list, one number per
/// nesting level: the first is this level's.)
fn thread_count_from(name: &str) -> Option<usize> {
    let value = std::env::var(name).ok()?;
    let first = value.split(',').next()?.trim();
    first.parse().ok().filter(|&n| n >= 1)
}

/// How long [`default_threads`] goes by the CPU count it last found.
const CPUS_FOR: Duration = Duration::from_millis(10);

/// Milliseconds since the first call (at least 1, so that 0 can mean never).
fn millis_since_epoch() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let since = EPOCH.get_or_init(Instant::now).elapsed().as_millis();
    u64::try_from(since).unwrap_or(u64::MAX).max(1)
}

fn kernel_error(e: SliceError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A `scale_offset` error in the words zarr-python uses for the same failure
/// (its tests match them), followed by the kernel's own account of the
/// first element that fails.
fn scale_offset_error(e: SliceError, ty: NumericType, scale: &[u8]) -> PyErr {
    let SliceError::ScaleOffset(error) = &e else {
        return kernel_error(e);
    };
    match error {
        ScaleOffsetError::ZeroScale => {
            PyValueError::new_err("scale_offset scale must be non-zero.")
        }
        // The kernels say "is not an integer" for exactly this failure: an
        // integer decode that `scale` does not divide.
        ScaleOffsetError::Element { reason, .. } if reason.contains("not an integer") => {
            let scale = if scale.len() == ty.size() {
                ty.read_value(scale).to_string()
            } else {
                "1".to_owned()
            };
            PyValueError::new_err(format!(
                "scale_offset decode produced a non-zero remainder when dividing by \
                 scale={scale}; result is not exactly representable in dtype {ty}: {error}"
            ))
        }
        ScaleOffsetError::Element { .. } => {
            let range = ty
                .int_range()
                .map(|(lo, hi)| format!(" [{lo}, {hi}]"))
                .unwrap_or_default();
            PyValueError::new_err(format!(
                "scale_offset produced a value outside the range of dtype {ty}{range}: {error}"
            ))
        }
        _ => kernel_error(e),
    }
}

/// Flat byte views of `src` (read) and `out` (written), or of `out` alone
/// when `src` is `out` (in place), then `run` on them without the GIL.
/// numpy refuses a read-only `out` and a `src` that overlaps `out`.
fn with_bytes<T: Send>(
    py: Python<'_>,
    src: &Bound<'_, PyUntypedArray>,
    out: &Bound<'_, PyUntypedArray>,
    run: impl FnOnce(Option<&[u8]>, &mut [u8]) -> T + Send,
) -> PyResult<T> {
    let out_bytes = byte_view(out)?;
    let mut out_rw = out_bytes
        .try_readwrite()
        .map_err(|e| PyValueError::new_err(format!("output array: {e}")))?;
    let dst = out_rw
        .as_slice_mut()
        .map_err(|e| PyValueError::new_err(format!("output array: {e}")))?;
    if src.is(out) {
        return Ok(py.detach(|| run(None, dst)));
    }
    let src_bytes = byte_view(src)?;
    let src_ro = src_bytes
        .try_readonly()
        .map_err(|e| PyValueError::new_err(format!("input array overlaps the output: {e}")))?;
    let src = src_ro
        .as_slice()
        .map_err(|e| PyValueError::new_err(format!("input array: {e}")))?;
    Ok(py.detach(|| run(Some(src), dst)))
}

/// `scale_offset` of `src` into `out`: `(x - offset) * scale` when `encode`,
/// else `x / scale + offset`.
///
/// Both arrays have the same dtype (native byte order) and shape and are
/// C-contiguous; `src` may be `out` itself (in place). `offset` and `scale`
/// are one element of that dtype each, as bytes in native order (empty for
/// the identity). An array of 2 MiB or more is split across `threads`
/// threads (default: [`default_threads`] shared among the calls running at
/// once, see [`Running::enter`]). Raises `ValueError` for an element whose
/// result the dtype cannot hold, an integer that `scale` does not divide,
/// a zero scale, or mismatched arrays; `TypeError` for a dtype the kernels
/// do not have.
#[pyfunction]
#[pyo3(signature = (encode, src, out, offset, scale, threads=None))]
fn scale_offset(
    py: Python<'_>,
    encode: bool,
    src: &Bound<'_, PyUntypedArray>,
    out: &Bound<'_, PyUntypedArray>,
    offset: &[u8],
    scale: &[u8],
    threads: Option<usize>,
) -> PyResult<()> {
    let ty = kernel_type(out, "output")?;
    let src_ty = kernel_type(src, "input")?;
    if src_ty != ty {
        return Err(PyValueError::new_err(format!(
            "input array is {src_ty}, output {ty}: scale_offset keeps the dtype"
        )));
    }
    same_shape(src, out)?;
    let (_running, threads) = Running::enter(threads, out.len() * ty.size());
    let result = with_bytes(py, src, out, |src, dst| match (src, encode) {
        (Some(src), true) => slices::scale_offset_encode(ty, src, dst, offset, scale, threads),
        (Some(src), false) => slices::scale_offset_decode(ty, src, dst, offset, scale, threads),
        (None, true) => slices::scale_offset_encode_in_place(ty, dst, offset, scale, threads),
        (None, false) => slices::scale_offset_decode_in_place(ty, dst, offset, scale, threads),
    })?;
    result.map_err(|e| scale_offset_error(e, ty, scale))
}

/// One direction of a `cast_value` codec: source and target dtypes,
/// rounding, out-of-range rule and `scalar_map` entries, checked once.
#[pyclass(frozen, name = "CastPlan", module = "zarrs_extension_codecs._native")]
struct CastPlan {
    plan: KernelPlan,
}

#[pymethods]
impl CastPlan {
    /// A plan casting `source` elements to `target`.
    ///
    /// `entries` are `scalar_map` pairs `(source element, target element)`
    /// as native-endian bytes; of a repeated key the first wins. Raises
    /// `ValueError` for an unknown mode or an entry of the wrong length;
    /// `TypeError` for an unsupported dtype. (`wrap` applies to integer
    /// targets; a float target, as when decoding with a codec that wraps,
    /// treats out-of-range values as without a rule.)
    #[new]
    #[pyo3(signature = (source, target, rounding, out_of_range=None, entries=Vec::new()))]
    fn new(
        source: &Bound<'_, PyArrayDescr>,
        target: &Bound<'_, PyArrayDescr>,
        rounding: &str,
        out_of_range: Option<&str>,
        entries: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> PyResult<Self> {
        let (source, target) = (numeric_type(source)?, numeric_type(target)?);
        let mode_error = |e: UnknownModeError| PyValueError::new_err(e.to_string());
        let rounding = rounding.parse::<RoundingMode>().map_err(mode_error)?;
        let out_of_range = out_of_range
            .map(str::parse::<OutOfRangeMode>)
            .transpose()
            .map_err(mode_error)?;
        let plan = KernelPlan::new(source, target, rounding, out_of_range, entries)
            .map_err(|e| PyValueError::new_err(format!("cast_value: {e}")))?;
        Ok(Self { plan })
    }

    /// Cast `src` into `out`.
    ///
    /// `src` has the plan's source dtype, `out` its target dtype and the
    /// shape of `src`, both in native byte order and C-contiguous. An array
    /// of 2 MiB or more (the wider side) is split across `threads` threads
    /// (default: [`default_threads`] shared among the calls running at once,
    /// see [`Running::enter`]). Raises `ValueError` for the first
    /// element no rule covers (NaN or infinity into an integer without a
    /// `scalar_map` entry, out of range without `out_of_range`) or
    /// mismatched arrays; `TypeError` for a wrong dtype.
    #[pyo3(signature = (src, out, threads=None))]
    fn cast(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyUntypedArray>,
        out: &Bound<'_, PyUntypedArray>,
        threads: Option<usize>,
    ) -> PyResult<()> {
        let plan = &self.plan;
        for (array, role, want) in [
            (src, "input", plan.source()),
            (out, "output", plan.target()),
        ] {
            let ty = kernel_type(array, role)?;
            if ty != want {
                return Err(PyTypeError::new_err(format!(
                    "{role} array is {ty}, this cast_value plan needs {want}"
                )));
            }
        }
        if src.is(out) {
            return Err(PyValueError::new_err(
                "cast_value cannot run in place: the output must be another array",
            ));
        }
        same_shape(src, out)?;
        let widest = plan.source().size().max(plan.target().size());
        let (_running, threads) = Running::enter(threads, src.len() * widest);
        let result = with_bytes(py, src, out, |src, dst| {
            slices::cast_value(plan, src.unwrap_or_default(), dst, threads)
        })?;
        result.map_err(kernel_error)
    }

    fn __repr__(&self) -> String {
        format!("CastPlan({} -> {})", self.plan.source(), self.plan.target())
    }
}

/// The module `zarrs_extension_codecs._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    COUNTING_FOR.store(std::process::id(), Ordering::Relaxed);
    m.add_function(wrap_pyfunction!(scale_offset, m)?)?;
    m.add_function(wrap_pyfunction!(default_threads, m)?)?;
    m.add_function(wrap_pyfunction!(split_threads, m)?)?;
    m.add_class::<CastPlan>()?;
    pipeline::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Whether this is a debug build: the benchmarks refuse to time one.
    m.add("_debug_build", cfg!(debug_assertions))?;
    Ok(())
}
