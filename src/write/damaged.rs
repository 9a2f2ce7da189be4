//! The typed error of a write that meets stored bytes it cannot read.

use std::sync::Arc;

use zarrs::array::ArrayError;
use zarrs::array::codec::api::CodecError;
use zarrs::storage::StorageError;

/// A chunk or shard whose stored bytes a write had to read (the index of a
/// shard it covers in part, an inner chunk it covers in part, a chunk it
/// merges into) and could not: an index too short or pointing outside the
/// shard, bytes the codecs do not decode.
///
/// Nothing of that chunk was written. It travels as an
/// [`ArrayError::StorageError`] (inside `std::io::Error::other`), so that
/// callers can tell it from a value the codecs refuse to encode; find it
/// with [`StoredChunkDamaged::in_error`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("{key}: the stored bytes do not read: {why}")]
pub struct StoredChunkDamaged {
    key: String,
    why: String,
}

impl StoredChunkDamaged {
    /// The damage of the chunk at `key` (with the inner chunk, if any, in
    /// `why`).
    #[must_use]
    pub fn new(key: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            why: why.into(),
        }
    }

    /// The chunk's key (and the word `shard` or `chunk` before it).
    #[must_use]
    pub fn key(&self) -> &str {
        &self.key
    }

    /// What did not read.
    #[must_use]
    pub fn why(&self) -> &str {
        &self.why
    }

    /// The damage `error` reports, if it reports one.
    #[must_use]
    pub fn in_error(error: &ArrayError) -> Option<&Self> {
        match error {
            ArrayError::StorageError(StorageError::IOError(error))
            | ArrayError::CodecError(CodecError::StorageError(StorageError::IOError(error))) => {
                error.get_ref()?.downcast_ref::<Self>()
            }
            _ => None,
        }
    }
}

impl From<StoredChunkDamaged> for ArrayError {
    fn from(damaged: StoredChunkDamaged) -> Self {
        ArrayError::StorageError(StorageError::IOError(Arc::new(std::io::Error::other(
            damaged,
        ))))
    }
}
