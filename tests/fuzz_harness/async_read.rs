//! The harness's way to the async read engine (`AsyncArrayReadExt`): a
//! sync store seen through zarrs' async storage traits, and a one-future
//! executor, so a target reads the same store both ways with no runtime.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use zarrs::storage::storage_adapter::sync_to_async::{
    SyncToAsyncSpawnBlocking, SyncToAsyncStorageAdapter,
};

/// zarrs' sync-to-async adapter with no runtime under it: each call is
/// answered at once, on the polling thread, by the sync store.
pub struct Inline;

impl SyncToAsyncSpawnBlocking for Inline {
    fn spawn_blocking<F, R>(&self, f: F) -> impl Future<Output = R> + Send
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        std::future::ready(f())
    }
}

/// `store` through zarrs' async storage traits, answered by [`Inline`].
pub fn async_of<S>(store: Arc<S>) -> SyncToAsyncStorageAdapter<S, Inline> {
    SyncToAsyncStorageAdapter::new(store, Inline)
}

/// Wakes the thread that waits in [`block_on`].
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Run `future` to its end on this thread (the engine's decodes run on
/// rayon's threads and wake it through their channel).
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        // A wake-up before this park leaves its token: no wake is lost.
        std::thread::park();
    }
}
