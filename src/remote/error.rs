//! Errors of opening a remote store, and the cause chains that read errors
//! carry in their message.

use std::error::Error;

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

/// `error` and each of its causes, joined by `": "`, leaving out a cause
/// whose text the message already holds (object_store's errors often repeat
/// their source in their own text).
#[must_use]
pub fn error_chain(error: &dyn Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_chain;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Middle);

    #[derive(Debug, thiserror::Error)]
    #[error("middle repeats: {0}")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn every_cause_once() {
        let error = Outer(Middle(std::io::Error::other("connection refused")));
        assert_eq!(
            error_chain(&error),
            "outer: middle repeats: connection refused"
        );
    }
}
