//! The versioned shard read: how a shard's inner chunks are read at the
//! version of the index their byte ranges came from.
//!
//! A partial read of a shard is two reads of one object: its index, then
//! the inner chunks at the offsets the index gives. Between the two, the
//! shard may be rewritten (new offsets) or deleted (zarr-python deletes a
//! shard that becomes all fill value). Decoding new bytes at old offsets
//! gives wrong values with no error, so the second read must be tied to
//! the version the first saw. The contract has two calls:
//!
//! 1. [`read_index`]: the shard's encoded index, whose bytes are the
//!    version (`None`: no such shard, which reads as the fill value);
//! 2. [`read_at`]: byte ranges of that shard at that version, answered as
//!    [`At::Ranges`] (the bytes, all of one version, whose index equals
//!    the one given), [`At::Gone`] (deleted meanwhile: the shard reads as
//!    the fill value, as a read that came a moment later would), or an
//!    [`ObjectChanged`] error (rewritten meanwhile).
//!
//! An [`ObjectChanged`] error is typed, not a phrase in a message: the read
//! calls of [`ArrayReadExt`](crate::ArrayReadExt) and
//! [`AsyncArrayReadExt`](crate::AsyncArrayReadExt) find it in an error
//! ([`ObjectChanged::in_error`]) and read once more,
//! which reads the new index. A store returns it inside
//! `StorageError::IOError` (`std::io::Error::other` holds any error type
//! and gives it back by `get_ref`: a promise of the standard library, so
//! the type survives zarrs' error enums, which carry a `StorageError`
//! unchanged).
//!
//! Why the version is the index's bytes, not an ETag: zarrs' storage traits
//! carry no version, and every store the crate reads must keep the
//! contract (file systems, memory, zarr-python's stores behind the Python
//! pipeline, remote stores). So [`read_at`] asks for the index range again,
//! first, in the same `get_partial_many` call as the chunks, and compares.
//! Equal bytes mean the chunks sit at the offsets the engine uses, when
//! the store answers one call from one version of the object. That is the
//! one thing a store promises here:
//!
//! - zarrs' file system store reads every range of a call through one file
//!   handle (a shard replaced by a rename is read whole from the old file
//!   or the new one; one overwritten in place may be torn, which nothing
//!   can prevent);
//! - its memory store clones the value once per call;
//! - the crate's remote store (feature `remote`) answers the index range
//!   from the entry it keeps, whose strong ETag every request of the call
//!   is conditional on (`If-Match`), and reports a mismatch (412, or
//!   another version shown) as [`ObjectChanged`] and a 404 as a missing
//!   object ([`At::Gone`]). Where it keeps nothing (a server with only
//!   weak validators or none, `shard_index_cache_bytes` 0, an index past
//!   the cache's limit whose version is gone too), the index range is a
//!   request of its own beside the chunks', with no condition: a rewrite
//!   before the call is seen, one landing between those requests is not
//!   (`docs/stores-and-remote.md`, "Shard-index cache").
//!
//! The cost is one range more per shard and window: no request for a
//! remote index that is kept, a `pread` of the index on a file system.

use std::sync::Arc;

use zarrs::array::ArrayError;
use zarrs::storage::byte_range::ByteRange;
use zarrs::storage::{Bytes, ReadableStorageTraits, StorageError, StoreKey};

/// What a store says when an object changed between two reads that belong
/// together (kept in the message, which users and logs search for).
pub(crate) const OBJECT_CHANGED: &str = "the object changed while it was being read";

/// An object (a shard) rewritten between two reads that belong together:
/// its index, then its inner chunks at the index's offsets.
///
/// The read that meets it has returned nothing decoded from the new bytes;
/// reading again reads the new index. [`ArrayReadExt`](crate::ArrayReadExt)
/// does so once; find it in an error with [`ObjectChanged::in_error`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("{location}: {OBJECT_CHANGED}: {how}")]
pub struct ObjectChanged {
    location: String,
    how: String,
}

impl ObjectChanged {
    /// The change of the object at `location` (a key or a redacted URL),
    /// with `how` it showed.
    #[must_use]
    pub fn new(location: impl Into<String>, how: impl Into<String>) -> Self {
        Self {
            location: location.into(),
            how: how.into(),
        }
    }

    /// The object: a store key, or the redacted URL of one.
    #[must_use]
    pub fn location(&self) -> &str {
        &self.location
    }

    /// How the change showed (another index, a `412`, another ETag).
    #[must_use]
    pub fn how(&self) -> &str {
        &self.how
    }

    /// The change `error` reports, if it reports one: directly, or as the
    /// storage error of a store or of a codec reading through one.
    #[must_use]
    pub fn in_error(error: &ArrayError) -> Option<&Self> {
        Self::in_io_error(super::os_error::io_error(error)?)
    }

    /// The change a store's `error` reports, if it reports one.
    #[must_use]
    pub fn in_storage_error(error: &StorageError) -> Option<&Self> {
        match error {
            StorageError::IOError(error) => Self::in_io_error(error),
            _ => None,
        }
    }

    /// This change as an error of the read of `context` (the array, the
    /// chunk), which goes in front of the location.
    pub(crate) fn within(&self, context: &str) -> ArrayError {
        Self::new(format!("{context}: {}", self.location), self.how.clone()).into()
    }

    /// `error` as an error of the read of `context`: a change stays typed
    /// ([`within`](Self::within)), and so does an error number of the
    /// operating system ([`OsReadError`](super::OsReadError)); anything
    /// else becomes text after the context, with its causes.
    pub(crate) fn in_context(error: &ArrayError, context: &str) -> ArrayError {
        if let Some(changed) = Self::in_error(error) {
            return changed.within(context);
        }
        // The operating system's refusal stays typed too (its number).
        super::OsReadError::within(error, context).unwrap_or_else(|| {
            ArrayError::Other(format!("{context}: {}", crate::error_chain(error)))
        })
    }

    fn in_io_error(error: &std::io::Error) -> Option<&Self> {
        error.get_ref()?.downcast_ref::<Self>()
    }
}

impl From<ObjectChanged> for StorageError {
    fn from(changed: ObjectChanged) -> Self {
        StorageError::IOError(Arc::new(std::io::Error::other(changed)))
    }
}

impl From<ObjectChanged> for ArrayError {
    fn from(changed: ObjectChanged) -> Self {
        ArrayError::StorageError(changed.into())
    }
}

/// How many times a read is tried when an object changes under it: once
/// more, since each attempt reads the index anew and a store that reports
/// a change has dropped what it kept of the old version. A shard rewritten
/// again during the second attempt is reported, not chased.
pub(crate) const ATTEMPTS: usize = 2;

/// `attempt()`, tried again while it fails with [`ObjectChanged`], up to
/// [`ATTEMPTS`] in all: the retry of every sync read path.
pub(crate) fn again_if_changed<T>(
    mut attempt: impl FnMut() -> Result<T, ArrayError>,
) -> Result<T, ArrayError> {
    let mut tried = 0;
    loop {
        tried += 1;
        match attempt() {
            Err(error) if goes_again(&error, tried) => {}
            result => return result,
        }
    }
}

/// Whether a read that failed with `error` on its attempt number `tried`
/// (from 1) is tried again: the one rule of [`again_if_changed`] and its
/// async twin.
pub(crate) fn goes_again(error: &ArrayError, tried: usize) -> bool {
    tried < ATTEMPTS && ObjectChanged::in_error(error).is_some()
}

/// The async twin of [`again_if_changed`].
#[cfg(feature = "async")]
pub(crate) async fn again_if_changed_async<T, F>(
    mut attempt: impl FnMut() -> F,
) -> Result<T, ArrayError>
where
    F: std::future::Future<Output = Result<T, ArrayError>>,
{
    let mut tried = 0;
    loop {
        tried += 1;
        match attempt().await {
            Err(error) if goes_again(&error, tried) => {}
            result => return result,
        }
    }
}

/// The answer to [`read_at`].
pub enum At {
    /// The bytes of each range asked for, in order, of the version given.
    Ranges(Vec<Bytes>),
    /// The object is gone: it reads as absent.
    Gone,
}

/// The first call of the contract: a shard's encoded index (`index_range`
/// of the object at `key`), which is its version. `None`: no such object.
///
/// # Errors
/// The store's error.
pub fn read_index<S: ?Sized + ReadableStorageTraits>(
    store: &S,
    key: &StoreKey,
    index_range: ByteRange,
) -> Result<Option<Bytes>, StorageError> {
    let Some(mut answer) = store.get_partial_many(key, Box::new(std::iter::once(index_range)))?
    else {
        return Ok(None);
    };
    Ok(Some(answer.next().transpose()?.unwrap_or_default()))
}

/// The second call of the contract: `ranges` of the shard at `key`, at the
/// version whose encoded index (`index_range` of it) is `version`, in one
/// store call.
///
/// # Errors
/// [`ObjectChanged`] (inside a `StorageError`) if the index is no longer
/// `version`; the store's error.
pub fn read_at<S: ?Sized + ReadableStorageTraits>(
    store: &S,
    key: &StoreKey,
    index_range: ByteRange,
    version: &[u8],
    ranges: Vec<ByteRange>,
) -> Result<At, StorageError> {
    let call = std::iter::once(index_range).chain(ranges);
    let Some(answer) = store.get_partial_many(key, Box::new(call))? else {
        return Ok(At::Gone);
    };
    at_version(key, version, answer.collect::<Result<Vec<Bytes>, _>>()?)
}

/// The async twin of [`read_index`].
///
/// # Errors
/// The store's error.
#[cfg(feature = "async")]
pub async fn read_index_async<S: ?Sized + zarrs::storage::AsyncReadableStorageTraits>(
    store: &S,
    key: &StoreKey,
    index_range: ByteRange,
) -> Result<Option<Bytes>, StorageError> {
    use futures::StreamExt;
    let answer = store
        .get_partial_many(key, Box::new(std::iter::once(index_range)))
        .await?;
    let Some(mut answer) = answer else {
        return Ok(None);
    };
    Ok(Some(answer.next().await.transpose()?.unwrap_or_default()))
}

/// The async twin of [`read_at`].
///
/// # Errors
/// As [`read_at`].
#[cfg(feature = "async")]
pub async fn read_at_async<S: ?Sized + zarrs::storage::AsyncReadableStorageTraits>(
    store: &S,
    key: &StoreKey,
    index_range: ByteRange,
    version: &[u8],
    ranges: Vec<ByteRange>,
) -> Result<At, StorageError> {
    use futures::TryStreamExt;
    let call = std::iter::once(index_range).chain(ranges);
    let Some(answer) = store.get_partial_many(key, Box::new(call)).await? else {
        return Ok(At::Gone);
    };
    at_version(key, version, answer.try_collect::<Vec<Bytes>>().await?)
}

/// The answer of a [`read_at`] call: its first range, the index read again,
/// compared with `version`; the others returned.
fn at_version(key: &StoreKey, version: &[u8], mut answer: Vec<Bytes>) -> Result<At, StorageError> {
    if answer.is_empty() {
        return Err(StorageError::Other(format!(
            "shard {key}: the store returned no bytes for its index, asked for with its inner chunks"
        )));
    }
    if *answer[0] != *version {
        return Err(ObjectChanged::new(
            format!("shard {key}"),
            "its index, read again with its inner chunks, is not the one their ranges came from (rewritten meanwhile)",
        )
        .into());
    }
    answer.remove(0);
    Ok(At::Ranges(answer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarrs::array::CodecError;
    use zarrs::storage::store::MemoryStore;
    use zarrs::storage::{ReadableStorageTraits, WritableStorageTraits};

    fn key() -> StoreKey {
        StoreKey::new("c/0").unwrap()
    }

    #[test]
    fn a_change_is_found_through_the_error_enums() {
        let changed = ObjectChanged::new("s3://b/c/0", "412");
        let storage: StorageError = changed.clone().into();
        assert!(storage.to_string().contains(OBJECT_CHANGED), "{storage}");
        assert_eq!(
            ObjectChanged::in_storage_error(&storage).map(ObjectChanged::how),
            Some("412")
        );
        let codec = ArrayError::CodecError(CodecError::StorageError(storage.clone()));
        assert!(ObjectChanged::in_error(&codec).is_some());
        assert!(ObjectChanged::in_error(&ArrayError::StorageError(storage)).is_some());
        // The phrase alone is not the type: only a store's typed report
        // makes a read go again.
        let text = ArrayError::Other(format!("s3://b/c/0: {OBJECT_CHANGED}"));
        assert!(ObjectChanged::in_error(&text).is_none());
        let io = StorageError::IOError(Arc::new(std::io::Error::other("other")));
        assert!(ObjectChanged::in_storage_error(&io).is_none());
    }

    #[test]
    fn a_read_goes_again_once_on_a_change_only() {
        let mut calls = 0;
        let result: Result<(), ArrayError> = again_if_changed(|| {
            calls += 1;
            Err(ObjectChanged::new("c/0", "test").into())
        });
        assert!(result.is_err());
        assert_eq!(calls, ATTEMPTS);
        let mut calls = 0;
        let result: Result<(), ArrayError> = again_if_changed(|| {
            calls += 1;
            Err(ArrayError::Other("broken".into()))
        });
        assert!(result.is_err());
        assert_eq!(calls, 1);
    }

    #[test]
    fn ranges_at_a_version_are_the_ranges_changed_or_gone() {
        let store = MemoryStore::new();
        store
            .set(&key(), Bytes::from_static(b"IDX1abcdef"))
            .unwrap();
        let index = ByteRange::FromStart(0, Some(4));
        let version = read_index(&store, &key(), index).unwrap().unwrap();
        assert_eq!(&*version, b"IDX1");
        let ranges = || vec![ByteRange::FromStart(4, Some(3))];
        match read_at(&store, &key(), index, &version, ranges()).unwrap() {
            At::Ranges(bytes) => assert_eq!(bytes, vec![Bytes::from_static(b"abc")]),
            At::Gone => panic!("gone"),
        }
        store
            .set(&key(), Bytes::from_static(b"IDX2uvwxyz"))
            .unwrap();
        let Err(error) = read_at(&store, &key(), index, &version, ranges()) else {
            panic!("a rewritten shard read at its old version");
        };
        assert!(ObjectChanged::in_storage_error(&error).is_some(), "{error}");
        store.erase(&key()).unwrap();
        assert!(matches!(
            read_at(&store, &key(), index, &version, ranges()).unwrap(),
            At::Gone
        ));
        assert!(read_index(&store, &key(), index).unwrap().is_none());
        assert!(store.get(&key()).unwrap().is_none());
    }
}
