//! The harness's way to the async read engine (`AsyncArrayReadExt`): a
//! sync store seen through zarrs' async storage traits, and a one-future
//! executor, so a target reads the same store both ways with no runtime.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use zarrs::storage::byte_range::ByteRangeIterator;
use zarrs::storage::{
    AsyncMaybeBytesIterator, AsyncReadableStorageTraits, MaybeBytes, ReadableStorageTraits,
    StorageError, StoreKey,
};

/// `S` through the async traits: every call answered at once by the sync
/// store.
pub struct AsyncOf<S>(pub Arc<S>);

#[async_trait::async_trait]
impl<S: ReadableStorageTraits + 'static> AsyncReadableStorageTraits for AsyncOf<S> {
    async fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        self.0.get(key)
    }

    async fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<AsyncMaybeBytesIterator<'a>, StorageError> {
        // Collected here: the sync iterator need not be `Sync`.
        let Some(ranges) = self.0.get_partial_many(key, byte_ranges)? else {
            return Ok(None);
        };
        let ranges: Vec<_> = ranges.collect();
        Ok(Some(Box::pin(futures::stream::iter(ranges))))
    }

    async fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        self.0.size_key(key)
    }

    fn supports_get_partial(&self) -> bool {
        self.0.supports_get_partial()
    }
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
