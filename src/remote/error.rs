//! Errors of opening a remote store. Every URL in them is shown redacted
//! ([`redact_url`](super::redact_url)): no user-info, no query string.

/// Why a URL could not be opened as a store.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The URL is not `http://`, `https://` or `s3://bucket[/prefix]`.
    #[error(
        "{url}: not a URL this crate opens: give http(s)://host/path/store.zarr or s3://bucket/prefix"
    )]
    UnsupportedUrl {
        /// The URL given, redacted.
        url: String,
    },
    /// object_store refused the configuration (a malformed URL, a bad
    /// environment variable, ...), or the S3 credentials asked for cannot
    /// be read (a profile named by `AWS_PROFILE` that is missing, or of a
    /// kind this crate does not read).
    #[error("{url}: {message}")]
    Configuration {
        /// The URL given, redacted.
        url: String,
        /// What is wrong (object_store's error with its causes), secrets
        /// redacted.
        message: String,
    },
    /// The async runtime that sync reads block on could not be started.
    #[error("cannot start the runtime for reading {url}: {source}")]
    Runtime {
        /// The URL given, redacted.
        url: String,
        /// The I/O error tokio reported.
        source: std::io::Error,
    },
}
