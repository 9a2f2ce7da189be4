//! An [`ObjectStore`] wrapper that counts the requests it passes on and the
//! body bytes that come back, so that a reader can say what a read cost.
//!
//! Every read of object_store's HTTP and S3 stores is one `get_opts` call
//! (a `HEAD` too, with `head: true`), and their `get_ranges` is the trait's
//! default (coalesce, then one `get_range` each), so wrapping `get_opts`
//! and keeping the default `get_ranges` counts every request they send.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};

/// Requests sent and body bytes received, shared between a store and its
/// owner.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl Counters {
    pub(crate) fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    pub(crate) fn reset(&self) {
        self.requests.store(0, Ordering::Relaxed);
        self.bytes.store(0, Ordering::Relaxed);
    }
}

/// `inner`, counting into `counters`.
#[derive(Debug)]
pub(crate) struct CountingStore {
    inner: Arc<dyn ObjectStore>,
    counters: Arc<Counters>,
}

impl CountingStore {
    pub(crate) fn new(inner: Arc<dyn ObjectStore>, counters: Arc<Counters>) -> Self {
        Self { inner, counters }
    }
}

impl fmt::Display for CountingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for CountingStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        let mut result = self.inner.get_opts(location, options).await?;
        let counters = self.counters.clone();
        result.payload = match result.payload {
            GetResultPayload::Stream(stream) => GetResultPayload::Stream(
                stream
                    .inspect_ok(move |bytes| {
                        counters
                            .bytes
                            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                    })
                    .boxed(),
            ),
            // A local file (the `fs` store, in tests): what it will read.
            #[allow(unreachable_patterns)]
            other => {
                let len = result.range.end - result.range.start;
                counters.bytes.fetch_add(len, Ordering::Relaxed);
                other
            }
        };
        Ok(result)
    }

    // `get_ranges` stays the trait's default (coalesce, then `get_range`,
    // which is `get_opts` above), so every coalesced range is counted.

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}
