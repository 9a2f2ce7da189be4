//! The workers of a sync read: items taken in order by a few threads, the
//! first error (by item) returned; and, for a read whose fetches turn out
//! to wait on I/O, more workers to keep more fetches in flight while the
//! decodes stay within the thread budget ([`Permits`]).
//!
//! Why grow: a sync read has as many workers as `concurrent_target`
//! (the cores, by default), each fetching a unit and then decoding it. On
//! a local file system that is the right number; on a remote store each
//! fetch waits a round trip, so only that many requests are in flight
//! (zarr-python keeps 10, the async API 16), and a store of many small
//! shards reads at a fraction of the speed it could. So when fetches take
//! longer than the bytes they brought would take from memory ([`is_slow`],
//! [`SLOW_TO_GROW`] of them), the read starts workers up to [`IN_FLIGHT`]
//! (fewer for large units: at most [`GROWN_BYTES`] fetched and waiting),
//! and a decode waits for one of as many permits as the read had workers
//! (`concurrent_target`, or fewer units). The measure only picks how many
//! threads wait on I/O: what is read, and its order of errors, is the same
//! either way; a thread the system refuses is not started.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use zarrs::array::ArrayError;

/// Fetches in flight at most once a read grows (as on the async API).
pub(crate) const IN_FLIGHT: usize = 16;

/// Slow fetches before a read grows (one alone may be a thread that was
/// not scheduled for a while on a busy machine).
pub(crate) const SLOW_TO_GROW: usize = 2;

/// Encoded bytes that the workers of a grown read may hold, fetched and
/// waiting for a permit, by the size of the slow fetches seen.
pub(crate) const GROWN_BYTES: usize = 64 << 20;

/// A fetch of `bytes` that took `elapsed` waited on I/O: longer than
/// 2 ms plus the bytes at 1 GB/s (a page-cached file gives them at several
/// GB/s; a round trip to a server takes milliseconds).
pub(crate) fn is_slow(elapsed: Duration, bytes: usize) -> bool {
    let allowed = Duration::from_millis(2) + Duration::from_nanos(bytes as u64);
    elapsed > allowed
}

/// At most so many decodes at once.
pub(crate) struct Permits {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Permits {
    /// `n` permits (at least one).
    pub(crate) fn new(n: usize) -> Self {
        Self {
            free: Mutex::new(n.max(1)),
            freed: Condvar::new(),
        }
    }

    /// Run `job` with a permit, waiting for one first. The permit is given
    /// back however `job` ends (a panic too).
    pub(crate) fn run<R>(&self, job: impl FnOnce() -> R) -> R {
        struct Held<'a>(&'a Permits);
        impl Drop for Held<'_> {
            fn drop(&mut self) {
                *self.0.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
                self.0.freed.notify_one();
            }
        }
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        drop(free);
        let _held = Held(self);
        job()
    }
}

/// Whether a read may start more workers, and whether it should.
pub(crate) struct Grow {
    /// Fetches found to wait on I/O ([`is_slow`]).
    slow: AtomicUsize,
    /// The most bytes one of them brought.
    largest: AtomicUsize,
    /// Workers at most, once grown.
    to: usize,
}

impl Grow {
    /// Workers up to `to`, once fetches are found slow.
    pub(crate) fn up_to(to: usize) -> Self {
        Self {
            slow: AtomicUsize::new(0),
            largest: AtomicUsize::new(0),
            to,
        }
    }

    /// A fetch of `bytes` waited on I/O.
    pub(crate) fn slow_fetch(&self, bytes: usize) {
        self.largest.fetch_max(bytes, Ordering::Relaxed);
        self.slow.fetch_add(1, Ordering::Relaxed);
    }

    /// Workers to have once grown: `to`, fewer if the fetched bytes they
    /// could hold would pass [`GROWN_BYTES`]; `None` while too few fetches
    /// were slow.
    fn workers(&self) -> Option<usize> {
        if self.slow.load(Ordering::Relaxed) < SLOW_TO_GROW {
            return None;
        }
        let by_bytes = GROWN_BYTES / self.largest.load(Ordering::Relaxed).max(1);
        Some(self.to.min(by_bytes))
    }
}

/// What the workers of one call share.
struct Shared<'a, I, F> {
    items: &'a [I],
    run: F,
    next: AtomicUsize,
    failed: AtomicBool,
    first_error: Mutex<Option<(usize, ArrayError)>>,
    grow: Option<&'a Grow>,
    grown: AtomicBool,
    workers: usize,
    /// Workers at most however much the read grows: a rayon pool's threads.
    most: usize,
}

impl<I: Sync, F: Fn(&I) -> Result<(), ArrayError> + Sync> Shared<'_, I, F> {
    /// Take items until none is left or one failed; once the read is found
    /// slow (once per call), `spawn_more(n)` starts `n` more workers.
    fn work(&self, mut spawn_more: impl FnMut(usize)) {
        while !self.failed.load(Ordering::Relaxed) {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = self.items.get(i) else { break };
            if let Err(e) = (self.run)(item) {
                self.failed.store(true, Ordering::Relaxed);
                let mut first = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
                if first.as_ref().is_none_or(|(j, _)| i < *j) {
                    *first = Some((i, e));
                }
            }
            if let Some(more) = self.to_grow() {
                spawn_more(more);
            }
        }
    }

    /// How many workers to start now: once, after enough slow fetches and
    /// no failure, up to the limit (and the items no worker has taken).
    fn to_grow(&self) -> Option<usize> {
        let grow = self.grow?;
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        let to = grow.workers()?.min(self.most);
        if self.grown.swap(true, Ordering::Relaxed) {
            return None;
        }
        let left = self
            .items
            .len()
            .saturating_sub(self.next.load(Ordering::Relaxed));
        Some(to.saturating_sub(self.workers).min(left))
    }

    /// [`work`](Self::work) on a thread of `scope`'s, growing on threads
    /// of its own.
    fn work_std<'scope, 'env>(&'env self, scope: &'scope std::thread::Scope<'scope, 'env>) {
        self.work(|more| {
            for _ in 0..more {
                // A thread the system refuses (a limit of processes) is a
                // worker less, not a failed read.
                let started =
                    std::thread::Builder::new().spawn_scoped(scope, move || self.work_std(scope));
                if started.is_err() {
                    break;
                }
            }
        });
    }

    /// [`work`](Self::work) on a thread of the caller's rayon pool, growing
    /// by jobs of `scope` (on that pool: its threads, its limit).
    fn work_rayon<'s>(&'s self, scope: &rayon::Scope<'s>) {
        self.work(|more| {
            for _ in 0..more {
                scope.spawn(move |scope| self.work_rayon(scope));
            }
        });
    }
}

/// `run` on every item of `items`, taken in order by `workers` threads
/// (more, up to `grow`'s limit, once enough fetches were slow, on threads
/// of this function's own); the first error (by item) is returned and
/// stops the others at their next item.
///
/// The workers are threads of their own (a sync read may block on a
/// remote store for a while, which would idle a rayon pool's threads),
/// except when the caller runs on a rayon pool (the Python pipeline's, in
/// one per process): then they are jobs on that pool, so that every
/// parallel loop under them (rayon's `par_iter` in the decode, zarrs' own)
/// stays in the caller's pool and its limit, and a process made by
/// `fork()` never waits for threads it does not have; such a read grows by
/// more jobs, up to the pool's threads (a pool larger than the decodes'
/// budget keeps more fetches in flight).
pub(crate) fn for_each_parallel<I: Sync>(
    items: &[I],
    workers: usize,
    grow: Option<&Grow>,
    run: impl Fn(&I) -> Result<(), ArrayError> + Sync,
) -> Result<(), ArrayError> {
    let workers = workers.clamp(1, items.len().max(1));
    let on_rayon = rayon::current_thread_index().is_some();
    let shared = Shared {
        items,
        run,
        next: AtomicUsize::new(0),
        failed: AtomicBool::new(false),
        first_error: Mutex::new(None),
        grow,
        grown: AtomicBool::new(false),
        workers,
        most: if on_rayon {
            rayon::current_num_threads()
        } else {
            usize::MAX
        },
    };
    let shared = &shared;
    if workers <= 1 && shared.grow.is_none() {
        shared.work(|_| {});
    } else if on_rayon {
        rayon::in_place_scope(|scope| {
            for _ in 1..workers {
                scope.spawn(move |scope| shared.work_rayon(scope));
            }
            shared.work_rayon(scope);
        });
    } else {
        std::thread::scope(|scope| {
            for _ in 1..workers {
                scope.spawn(move || shared.work_std(scope));
            }
            shared.work_std(scope);
        });
    }
    let first = shared
        .first_error
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    match first {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_fetch_is_one_that_waited_beyond_its_bytes() {
        assert!(!is_slow(Duration::from_micros(300), 1 << 20));
        assert!(!is_slow(Duration::from_millis(30), 32 << 20));
        assert!(is_slow(Duration::from_millis(20), 90_000));
        assert!(is_slow(Duration::from_millis(25), 5 << 20));
    }

    /// 40 items on 2 workers, each fetch slow (2 ms), each decode within
    /// 2 permits, growing up to `to`, inside `pool` if given: the threads
    /// that ran items and the most decodes at once.
    fn slow_read(pool: Option<&rayon::ThreadPool>, to: usize) -> (usize, usize) {
        let grow = Grow::up_to(to);
        let permits = Permits::new(2);
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let threads = Mutex::new(std::collections::HashSet::new());
        let items: Vec<usize> = (0..40).collect();
        let read = || {
            for_each_parallel(&items, 2, Some(&grow), |_| {
                assert_eq!(rayon::current_thread_index().is_some(), pool.is_some());
                grow.slow_fetch(1000);
                threads.lock().unwrap().insert(std::thread::current().id());
                std::thread::sleep(Duration::from_millis(2));
                permits.run(|| {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(1));
                    running.fetch_sub(1, Ordering::SeqCst);
                });
                Ok(())
            })
        };
        match pool {
            Some(pool) => pool.install(read),
            None => read(),
        }
        .unwrap();
        let used = threads.lock().unwrap().len();
        (used, most.load(Ordering::SeqCst))
    }

    /// Items that set the read slow: more workers join, at most `to`, and
    /// at most as many decode at once as there are permits.
    #[test]
    fn a_slow_read_grows_and_decodes_within_its_permits() {
        let (used, most) = slow_read(None, 6);
        assert!(used > 2 && used <= 6, "{used} threads");
        assert!(most <= 2, "{most} decodes at once");
    }

    /// On a rayon pool the read grows by jobs of that pool: more of its
    /// threads fetch, never more than it has, and the decodes stay within
    /// their permits.
    #[test]
    fn a_slow_read_on_a_rayon_pool_grows_within_the_pool() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(5)
            .build()
            .unwrap();
        let (used, most) = slow_read(Some(&pool), 16);
        assert!(used > 2 && used <= 5, "{used} threads");
        assert!(most <= 2, "{most} decodes at once");
    }

    /// The first error by item is the one returned, grown or not, even
    /// when a later item fails first; a read that is never slow keeps its
    /// workers, a slow one grows no further than asked.
    #[test]
    fn the_first_error_by_item_is_returned() {
        let items: Vec<usize> = (0..50).collect();
        for slow in [false, true] {
            let grow = Grow::up_to(8);
            let threads = Mutex::new(std::collections::HashSet::new());
            let got = for_each_parallel(&items, 3, Some(&grow), |&i| {
                threads.lock().unwrap().insert(std::thread::current().id());
                if slow {
                    grow.slow_fetch(1000);
                }
                match i {
                    5 => {
                        std::thread::sleep(Duration::from_millis(50));
                        Err(ArrayError::Other("item 5".to_string()))
                    }
                    6 => Err(ArrayError::Other("item 6".to_string())),
                    _ => {
                        std::thread::sleep(Duration::from_millis(1));
                        Ok(())
                    }
                }
            });
            assert_eq!(got.unwrap_err().to_string(), "item 5");
            let used = threads.lock().unwrap().len();
            assert!(used <= if slow { 8 } else { 3 }, "{used} threads");
        }
    }

    /// One slow fetch does not grow a read; large units grow it less.
    #[test]
    fn growth_needs_slow_fetches_and_room_for_their_bytes() {
        let grow = Grow::up_to(16);
        assert_eq!(grow.workers(), None);
        grow.slow_fetch(1 << 20);
        assert_eq!(grow.workers(), None);
        grow.slow_fetch(1 << 20);
        assert_eq!(grow.workers(), Some(16));
        grow.slow_fetch(16 << 20);
        assert_eq!(grow.workers(), Some(4));
        grow.slow_fetch(usize::MAX);
        assert_eq!(grow.workers(), Some(0));
    }
}
