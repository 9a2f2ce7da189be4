//! Errors of opening a remote store.

/// Why a URL could not be opened as a store.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The URL is not `http://`, `https://` or `s3://bucket[/prefix]`.
    #[error(
        "{url}: not a URL this crate opens: give http(s)://host/path/store.zarr or s3://bucket/prefix"
    )]
    UnsupportedUrl {
        /// The URL given.
        url: String,
    },
    /// object_store refused the configuration (a malformed URL, a bad
    /// environment variable, ...).
    #[error("{url}: {message}")]
    Configuration {
        /// The URL given.
        url: String,
        /// object_store's error with its causes.
        message: String,
    },
    /// The async runtime that sync reads block on could not be started.
    #[error("cannot start the runtime for reading {url}: {source}")]
    Runtime {
        /// The URL given.
        url: String,
        /// The I/O error tokio reported.
        source: std::io::Error,
    },
}
