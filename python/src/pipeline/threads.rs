//! The thread pool the pipeline decodes chunks on.
//!
//! One rayon pool per thread count asked for (in practice one or two: the
//! count comes from the process's configuration, see [`pipeline_threads`]),
//! kept for the life of the process (at most [`KEPT_POOLS`] at once), so
//! that a read never pays for starting threads. zarrs' own parallel loops inside a codec run on the pool of the
//! thread that calls them, so they stay inside the same limit.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

/// The number of threads the pipeline reads with: `max_workers` (zarr's
/// `threading.max_workers`) if given, else `ZARRS_EXTENSION_CODECS_THREADS`,
/// else `OMP_NUM_THREADS`, and never more than the CPUs this process may
/// run on.
#[pyfunction]
#[pyo3(signature = (max_workers=None))]
pub fn pipeline_threads(max_workers: Option<usize>) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let limit = max_workers
        .filter(|&n| n >= 1)
        .or_else(|| count_from("ZARRS_EXTENSION_CODECS_THREADS"))
        .or_else(|| count_from("OMP_NUM_THREADS"));
    cpus.min(limit.unwrap_or(usize::MAX)).max(1)
}

/// The environment variable `name`, if it holds a whole number, at least
/// one (the first entry of OpenMP's per-level list).
fn count_from(name: &str) -> Option<usize> {
    let value = std::env::var(name).ok()?;
    value
        .split(',')
        .next()?
        .trim()
        .parse()
        .ok()
        .filter(|&n| n >= 1)
}

/// The pool of `threads` threads, made on first use in this process.
///
/// A child made by `fork()` has none of its parent's threads: a pool
/// inherited from the parent would never run what it is given (zarr's own
/// tests read in forked children). So pools belong to a process id, and a
/// child starts its own (the parent's are left alone: dropping them would
/// wait for threads that do not exist there).
pub fn pool(threads: usize) -> PyResult<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<(u32, Vec<Arc<ThreadPool>>)>> = OnceLock::new();
    let threads = threads.max(1);
    let pid = std::process::id();
    let pools = POOLS.get_or_init(|| Mutex::new((pid, Vec::new())));
    // A panic while the lock was held cannot leave the list half-changed
    // (a push is all it does), so a poisoned lock is still good to use.
    let mut guard = pools
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (owner, pools) = &mut *guard;
    if *owner != pid {
        std::mem::forget(std::mem::take(pools));
        *owner = pid;
    }
    if let Some(i) = pools
        .iter()
        .position(|p| p.current_num_threads() == threads)
    {
        // Last to go: the pools in use stay, the ones left behind go.
        let pool = pools.remove(i);
        pools.push(pool.clone());
        return Ok(pool);
    }
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("zec-pipeline-{i}"))
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start {threads} threads: {e}")))?;
    let pool = Arc::new(pool);
    if pools.len() >= KEPT_POOLS {
        // The least recently used goes: a read still running on it holds its `Arc`, and
        // its threads end when the last holder lets go.
        pools.remove(0);
    }
    pools.push(pool.clone());
    Ok(pool)
}

/// Pools kept at once. A process asks for one or two sizes (the thread
/// count, and the I/O pool of remote reads); a caller that changes
/// `threading.max_workers` again and again gets new pools, and the threads
/// of the old ones are released rather than kept for the process's life.
const KEPT_POOLS: usize = 4;
