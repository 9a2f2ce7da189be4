//! The store of an array that zarr reads over HTTP or S3 (obstore's
//! `HTTPStore` / `S3Store`, fsspec's HTTP file system), opened again by the
//! crate's remote layer from what Python found in zarr's store: its URL and
//! S3 settings.
//!
//! Read through it, a window of a shard costs what it costs the crate's own
//! reads: the shard's index kept (with its version, later reads conditional
//! on it), the inner chunks of a shard in one call, decoded straight into
//! zarr's output. Python decides which stores may be mapped (only those
//! whose every setting it can carry over), so a store configured beyond
//! that is read through zarr's store API as before.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use zarrs_extension_codecs::remote::{RemoteOptions, RemoteStore};

/// Open the store at `url` (the array's own directory: `http(s)://...` or
/// `s3://bucket/prefix`), with object_store's S3 settings `s3_config`
/// (obstore's names, which object_store takes as they are), the signing
/// choice `anonymous` and the remote layer's `shard_read_ahead_bytes`
/// (its default when `None`). Nothing is fetched yet.
pub fn open(
    url: &str,
    s3_config: Vec<(String, String)>,
    anonymous: Option<bool>,
    read_ahead: Option<u64>,
) -> PyResult<Arc<RemoteStore>> {
    let mut options = RemoteOptions::default();
    options.s3_config = s3_config;
    options.anonymous = anonymous;
    if let Some(read_ahead) = read_ahead {
        options.shard_read_ahead_bytes = read_ahead;
    }
    // The error shows the URL redacted and no credential value.
    RemoteStore::open(url, &options)
        .map(Arc::new)
        .map_err(|e| PyValueError::new_err(zarrs_extension_codecs::error_chain(&e)))
}
