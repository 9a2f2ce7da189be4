//! A read the operating system refused (a chunk's file that cannot be
//! opened or read: its permissions, a loop of links, a failing disk),
//! kept typed through the context the engine puts in front of its errors,
//! so that a caller can tell it by the system's error number. The Python
//! pipeline raises the `OSError` subclass Python gives that number
//! (`PermissionError`, ...), as zarr's `LocalStore` does, instead of a
//! `ValueError` that only says it in words.
//!
//! It travels as [`ObjectChanged`](super::ObjectChanged) does: inside
//! `StorageError::IOError`, an `std::io::Error` of the same kind holding
//! this type, which the standard library gives back by `get_ref`.

use std::fmt;
use std::sync::Arc;

use zarrs::array::ArrayError;
use zarrs::array::codec::api::CodecError;
use zarrs::storage::StorageError;

/// A read that failed with an error number of the operating system, and
/// what was being read (the array, the chunk).
#[derive(Debug, Clone)]
pub struct OsReadError {
    context: String,
    source: Arc<std::io::Error>,
}

impl OsReadError {
    /// The system's error number (`errno`).
    #[must_use]
    pub fn errno(&self) -> i32 {
        // Only errors with a number are made into this type (`within`).
        self.source.raw_os_error().unwrap_or(0)
    }

    /// What was being read: the array's path and the chunk's key.
    #[must_use]
    pub fn context(&self) -> &str {
        &self.context
    }

    /// The operating system's error in `error`, if that is what it is.
    #[must_use]
    pub fn in_error(error: &ArrayError) -> Option<&Self> {
        io_error(error)?.get_ref()?.downcast_ref::<Self>()
    }

    /// `error` with `context` in front, kept typed when the operating
    /// system refused the read (it has an error number); `None` otherwise.
    pub(crate) fn within(error: &ArrayError, context: &str) -> Option<ArrayError> {
        let io = io_error(error)?;
        let typed = match io.get_ref().and_then(|e| e.downcast_ref::<Self>()) {
            Some(inner) => Self {
                context: format!("{context}: {}", inner.context),
                source: inner.source.clone(),
            },
            None if io.raw_os_error().is_some() => Self {
                context: context.to_string(),
                source: io.clone(),
            },
            None => return None,
        };
        let kind = typed.source.kind();
        Some(ArrayError::StorageError(StorageError::IOError(Arc::new(
            std::io::Error::new(kind, typed),
        ))))
    }
}

/// The I/O error a store or a codec reading through one reports in
/// `error`, if any (where [`ObjectChanged`](super::ObjectChanged) travels
/// too).
pub(super) fn io_error(error: &ArrayError) -> Option<&Arc<std::io::Error>> {
    match error {
        ArrayError::StorageError(StorageError::IOError(io))
        | ArrayError::CodecError(CodecError::StorageError(StorageError::IOError(io)))
        | ArrayError::CodecError(CodecError::IOError(io)) => Some(io),
        _ => None,
    }
}

impl fmt::Display for OsReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.context, self.source)
    }
}

impl std::error::Error for OsReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_system_error_keeps_its_number_through_contexts() {
        let denied = std::io::Error::from_raw_os_error(13);
        let error = ArrayError::StorageError(StorageError::IOError(Arc::new(denied)));
        let once = OsReadError::within(&error, "chunk c/0").unwrap();
        let twice = OsReadError::within(&once, "array /").unwrap();
        let typed = OsReadError::in_error(&twice).unwrap();
        assert_eq!(typed.errno(), 13);
        assert_eq!(typed.context(), "array /: chunk c/0");
        let text = twice.to_string();
        assert!(text.starts_with("array /: chunk c/0: "), "{text}");
        assert!(text.contains("os error 13"), "{text}");
        // Through a codec reading from a store, too.
        let denied = std::io::Error::from_raw_os_error(13);
        let codec = ArrayError::CodecError(CodecError::StorageError(StorageError::IOError(
            Arc::new(denied),
        )));
        assert!(OsReadError::within(&codec, "chunk c/1").is_some());
    }

    #[test]
    fn other_errors_are_not_system_errors() {
        let other = ArrayError::StorageError(StorageError::IOError(Arc::new(
            std::io::Error::other("no number"),
        )));
        assert!(OsReadError::within(&other, "chunk c/0").is_none());
        assert!(OsReadError::in_error(&other).is_none());
        let text = ArrayError::Other("x".to_string());
        assert!(OsReadError::within(&text, "chunk c/0").is_none());
    }
}
