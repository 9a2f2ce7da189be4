//! The array's directory in zarr's `LocalStore`, read and written from Rust
//! the way `LocalStore` does it, so that a write from the pipeline needs no
//! round trip through Python per chunk:
//!
//! - a chunk is written to a new file beside its key, then renamed over the
//!   key (readers see the old bytes or the new, never part of either);
//!   the directories on the way are made first;
//! - deleting a key removes its file (a directory at the key, with what is
//!   in it), and a key with nothing there is not an error (a key below a
//!   file is: `NotADirectoryError`, as from `LocalStore`);
//! - a key that is missing, a directory, or below a file reads as nothing
//!   stored.
//!
//! Errors carry the system's error number, so that Python raises the
//! subclass of `OSError` `LocalStore` would (`PermissionError`,
//! `IsADirectoryError`, ...). Not as `LocalStore`: no retry of a rename
//! that Windows refuses for a moment (the package is built for Linux), and
//! a key that is a link to a directory is deleted as a link.

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use std::os::unix::fs::FileExt;
use zarrs::storage::byte_range::{ByteRange, ByteRangeIterator, InvalidByteRangeError};
use zarrs::storage::{MaybeBytesIterator, ReadableStorageTraits, StorageError, StoreKey};

/// Why a file of the directory could not be read, written or deleted: the
/// system's error number (if it gave one), the path, and what was being
/// done to which chunk.
#[derive(Debug)]
pub struct Failure {
    pub errno: Option<i32>,
    /// The error in words (Rust's, with the number).
    pub text: String,
    pub path: PathBuf,
    /// `chunk <key>: <what>`.
    pub doing: String,
}

impl Failure {
    /// As the `OSError` Python raises for a file ([`os_error`]), with the
    /// chunk and what was being done to it as a note; `OSError` with the
    /// whole message when there is no number.
    pub fn into_py(self) -> pyo3::PyErr {
        match self.errno {
            Some(errno) => os_error(errno, Some(self.path.display().to_string()), self.doing),
            None => pyo3::exceptions::PyOSError::new_err(self.message()),
        }
    }

    /// The whole account in one line.
    pub fn message(&self) -> String {
        format!("{} {}: {}", self.doing, self.path.display(), self.text)
    }

    fn new(key: &str, what: &str, path: &Path, e: &std::io::Error) -> Self {
        Self {
            errno: e.raw_os_error(),
            text: e.to_string(),
            path: path.to_path_buf(),
            doing: format!("chunk {key}: {what}"),
        }
    }
}

/// `OSError(errno, os.strerror(errno), filename)`, as Python raises for a
/// file (Python makes it the subclass the number stands for:
/// `PermissionError`, ...), with `note` added: what was being done.
pub fn os_error(errno: i32, filename: Option<String>, note: String) -> pyo3::PyErr {
    use pyo3::exceptions::PyOSError;
    use pyo3::prelude::*;
    Python::attach(|py| {
        let strerror = py
            .import("os")
            .and_then(|os| os.call_method1("strerror", (errno,)))
            .and_then(|s| s.extract::<String>())
            .unwrap_or_else(|_| format!("error {errno}"));
        let error = match filename {
            Some(filename) => PyOSError::new_err((errno, strerror, filename)),
            None => PyOSError::new_err((errno, strerror)),
        };
        // A note that cannot be added leaves the error as it is.
        let _ = error.add_note(py, note);
        error
    })
}

/// A directory of chunk files, keyed by their path below it.
pub struct Directory {
    root: PathBuf,
}

impl Directory {
    /// The directory at `root`.
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }

    /// The file at `key` and its size, or `None` when nothing is stored
    /// there: nothing at the key, a directory, or a path below a file (as
    /// `LocalStore.get` reads them; zarrs' `FilesystemStore` fails).
    fn open(&self, key: &str) -> std::io::Result<Option<(fs::File, u64)>> {
        let file = match fs::File::open(self.path(key)) {
            Ok(file) => file,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        Ok((!meta.is_dir()).then_some((file, meta.len())))
    }

    /// The bytes stored at `key`, `None` if nothing is.
    pub fn read(&self, key: &str) -> Result<Option<Vec<u8>>, Failure> {
        let read = self.open(key).and_then(|opened| {
            opened
                .map(|(mut file, size)| {
                    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
                    file.read_to_end(&mut bytes).map(|_| bytes)
                })
                .transpose()
        });
        read.map_err(|e| Failure::new(key, "reading", &self.path(key), &e))
    }

    /// Store `bytes` at `key`, or (`None`) delete what is there.
    pub fn settle(&self, key: &str, bytes: Option<&[u8]>) -> Result<(), Failure> {
        match bytes {
            Some(bytes) => self.put(key, bytes),
            None => self.delete(key),
        }
    }

    fn put(&self, key: &str, bytes: &[u8]) -> Result<(), Failure> {
        let path = self.path(key);
        let failed = |what: &str, at: &Path, e: std::io::Error| Failure::new(key, what, at, &e);
        let parent = path.parent().unwrap_or(&self.root);
        fs::create_dir_all(parent).map_err(|e| failed("making", parent, e))?;
        let (temporary, mut file) = loop {
            let candidate = temporary_name(&path);
            // A new file only: never one another writer is filling.
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&candidate)
            {
                Ok(file) => break (candidate, file),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
                Err(e) => return Err(failed("creating", &candidate, e)),
            }
        };
        // Closed with its error seen: a network file system may report a
        // write that failed only at close, and renaming that file over the
        // key would replace a good chunk with a short one (Python's `with
        // open(...)`, as zarr writes, raises it too).
        let written = file
            .write_all(bytes)
            .and_then(|()| nix::unistd::close(file).map_err(std::io::Error::from))
            .and_then(|()| fs::rename(&temporary, &path));
        if let Err(e) = written {
            // Nothing of a failed write is left behind (zarr removes its
            // temporary file likewise).
            let _ = fs::remove_file(&temporary);
            return Err(failed("writing", &path, e));
        }
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<(), Failure> {
        let path = self.path(key);
        let removed = match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => fs::remove_dir_all(&path),
            Ok(_) => fs::remove_file(&path),
            Err(e) => Err(e),
        };
        match removed {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Failure::new(key, "deleting", &path, &e)),
        }
    }
}

/// zarrs reads the array's chunks through the directory, as zarr's
/// `LocalStore` reads them: a key with nothing stored (see `open`) reads as
/// the fill value; every other failure is an error with the system's error
/// number. A byte range is one positioned read of the open file.
///
/// Not zarrs' `FilesystemStore`: it keeps a lock for every key it has read
/// for as long as it lives (about 100 bytes a chunk file), and the arrays
/// the pipeline keeps across opens (`_kept_arrays`) would hold one for
/// every chunk a long-running reader ever read. Reads need no lock here:
/// the pipeline's writes (`put`) and zarr's `LocalStore` replace a file by
/// renaming a new one over it, so an open file is the old bytes or the
/// new, never part of either.
impl ReadableStorageTraits for Directory {
    fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<MaybeBytesIterator<'a>, StorageError> {
        let Some((file, size)) = self.open(key.as_str())? else {
            return Ok(None);
        };
        let parts: Vec<Result<Bytes, StorageError>> = byte_ranges
            .map(|range| read_range(&file, size, range))
            .collect();
        Ok(Some(Box::new(parts.into_iter())))
    }

    fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        Ok(self.open(key.as_str())?.map(|(_, size)| size))
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

/// `range` of the file of `size` bytes, read with one positioned read; a
/// range that does not fit in the file is an error, as from zarrs' store.
fn read_range(file: &fs::File, size: u64, range: ByteRange) -> Result<Bytes, StorageError> {
    // Checked here: `ByteRange`'s own `start` and `length` overflow on a
    // range that does not fit.
    let fits = match range {
        ByteRange::FromStart(offset, None) => (offset <= size).then(|| (offset, size - offset)),
        ByteRange::FromStart(offset, Some(length)) => offset
            .checked_add(length)
            .filter(|&end| end <= size)
            .map(|_| (offset, length)),
        ByteRange::Suffix(length) => (length <= size).then(|| (size - length, length)),
    };
    let invalid = || StorageError::from(InvalidByteRangeError::new(range, size));
    let (start, length) = fits.ok_or_else(invalid)?;
    let length = usize::try_from(length).map_err(|_| invalid())?;
    let mut buffer = vec![0u8; length];
    file.read_exact_at(&mut buffer, start)?;
    Ok(Bytes::from(buffer))
}

/// A name beside `path` for a file to fill before it is renamed over
/// `path`: `path`'s file name, a number that no other call of this process
/// gives, and `.partial`, the ending of zarr's temporary files (a tool that
/// cleans up after zarr finds ours too). The process id and the clock keep
/// it apart from other processes' names; `create_new` keeps it apart from
/// any name that is taken all the same.
fn temporary_name(path: &Path) -> PathBuf {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let count = COUNT.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(
        ".{:08x}{nanos:016x}{count:08x}.partial",
        std::process::id()
    ));
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "zec-local-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn put_makes_the_directories_and_replaces_whole() {
        let root = scratch("put");
        let dir = Directory::new(root.clone());
        assert_eq!(dir.read("c/0/1").unwrap(), None);
        dir.settle("c/0/1", Some(b"first")).unwrap();
        assert_eq!(fs::read(root.join("c/0/1")).unwrap(), b"first");
        dir.settle("c/0/1", Some(b"2")).unwrap();
        assert_eq!(dir.read("c/0/1").unwrap().as_deref(), Some(&b"2"[..]));
        // No temporary file is left beside the key.
        let names: Vec<_> = fs::read_dir(root.join("c/0"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["1"]);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn delete_and_read_follow_local_store() {
        let root = scratch("delete");
        let dir = Directory::new(root.clone());
        // Nothing there: not an error, as zarr's `delete` of a missing key.
        dir.settle("c/9", None).unwrap();
        dir.settle("c/0", Some(b"x")).unwrap();
        // A key below a file reads as nothing; deleting it is
        // `NotADirectoryError`, as from `LocalStore`.
        assert_eq!(dir.read("c/0/1").unwrap(), None);
        let e = dir.settle("c/0/1", None).unwrap_err();
        assert_eq!(e.errno, Some(20), "{e:?}"); // ENOTDIR
        dir.settle("c/0", None).unwrap();
        assert!(!root.join("c/0").exists());
        // A directory at the key reads as nothing; deleting it removes it.
        fs::create_dir_all(root.join("d/0")).unwrap();
        fs::write(root.join("d/0/x"), b"y").unwrap();
        assert_eq!(dir.read("d").unwrap(), None);
        dir.settle("d", None).unwrap();
        assert!(!root.join("d").exists());
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_failed_write_names_the_chunk_and_leaves_nothing() {
        let root = scratch("fail");
        let dir = Directory::new(root.clone());
        // The key's parent is a file: the directories cannot be made.
        fs::write(root.join("c"), b"file").unwrap();
        let error = dir.settle("c/0", Some(b"x")).unwrap_err();
        assert_eq!(error.doing, "chunk c/0: making", "{error:?}");
        assert_eq!(error.path, root.join("c"), "{error:?}");
        assert!(error.errno.is_some(), "{error:?}");
        // The key is a directory: the rename fails, the temporary goes.
        fs::create_dir_all(root.join("e/0/sub")).unwrap();
        let error = dir.settle("e/0", Some(b"x")).unwrap_err();
        assert_eq!(error.doing, "chunk e/0: writing", "{error:?}");
        assert_eq!(error.errno, Some(21), "{error:?}"); // EISDIR
        assert!(error.errno.is_some(), "{error:?}");
        let names: Vec<_> = fs::read_dir(root.join("e"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["0"]);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn reads_as_local_store_reads() {
        use zarrs::filesystem::FilesystemStore;
        use zarrs::storage::byte_range::ByteRange;
        let root = scratch("reads");
        fs::create_dir_all(root.join("c/0/sub")).unwrap();
        fs::write(root.join("c/1"), b"chunk").unwrap();
        let store = Directory::new(root.clone());
        let zarrs_store = FilesystemStore::new(&root).unwrap();
        let key = |k: &str| StoreKey::new(k).unwrap();
        // zarrs' store alone fails for the first two.
        assert!(zarrs_store.get(&key("c/0")).is_err());
        assert!(zarrs_store.get(&key("c/1/2")).is_err());
        // A directory, a path below a file, nothing there: nothing stored.
        for k in ["c/0", "c/1/2", "c/9"] {
            assert_eq!(store.get(&key(k)).unwrap(), None, "{k}");
            assert_eq!(store.size_key(&key(k)).unwrap(), None, "{k}");
        }
        let part = store.get_partial(&key("c/1"), ByteRange::FromStart(1, Some(3)));
        assert_eq!(part.unwrap().as_deref(), Some(&b"hun"[..]));
        assert_eq!(store.size_key(&key("c/1")).unwrap(), Some(5));
        // Every kind of range, in one call, as zarrs' store reads them.
        let ranges = [
            ByteRange::FromStart(0, None),
            ByteRange::FromStart(5, None),
            ByteRange::Suffix(2),
            ByteRange::FromStart(2, Some(3)),
            ByteRange::FromStart(3, Some(3)),
            ByteRange::FromStart(6, None),
            ByteRange::Suffix(6),
            ByteRange::FromStart(u64::MAX, Some(2)),
        ];
        let ours: Vec<_> = store
            .get_partial_many(&key("c/1"), Box::new(ranges.into_iter()))
            .unwrap()
            .unwrap()
            .map(|r| r.map(|b| b.to_vec()).ok())
            .collect();
        let zarrs: Vec<_> = zarrs_store
            .get_partial_many(&key("c/1"), Box::new(ranges.into_iter()))
            .unwrap()
            .unwrap()
            .map(|r| r.map(|b| b.to_vec()).ok())
            .collect();
        let chunk = |s: &[u8]| Some(s.to_vec());
        let want = [
            chunk(b"chunk"),
            chunk(b""),
            chunk(b"nk"),
            chunk(b"unk"),
            None,
            None,
            None,
            None,
        ];
        assert_eq!(ours, want);
        assert_eq!(zarrs, want);
        // A failure that is not "nothing stored" keeps its error number.
        std::os::unix::fs::symlink("loop", root.join("c/loop")).unwrap();
        let err = store.get(&key("c/loop")).unwrap_err();
        let StorageError::IOError(io) = &err else {
            panic!("{err:?}")
        };
        assert_eq!(io.raw_os_error(), Some(40), "{err}"); // ELOOP
        assert!(store.size_key(&key("c/loop")).is_err());
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn temporary_names_differ() {
        let path = Path::new("/x/c/0");
        let a = temporary_name(path);
        let b = temporary_name(path);
        assert_ne!(a, b);
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("0.") && name.ends_with(".partial"),
            "{name}"
        );
        assert_eq!(a.parent(), path.parent());
    }
}
