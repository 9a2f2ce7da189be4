//! The shard indexes a remote store keeps, each with the version of the
//! object it was read from, within a limit of bytes.
//!
//! What is kept: a read of one range that is a suffix (zarrs reads a shard
//! index at the end of its shard so, and nothing else), or a prefix of the
//! exact length of the shard index of an array whose `zarr.json`, read
//! through the same store, says `index_location: "start"` (an inner chunk
//! at the start of a shard whose index is at the end is read the same way,
//! and must not be kept: it would be served without a request, so without
//! a check of its version); from a response that gave a version (a strong
//! ETag: [`has_version`]). The store makes every later ranged
//! read of that key conditional on the version (see
//! [`AsyncRemoteStore`](super::AsyncRemoteStore)), so an index kept from
//! an older version is never paired with chunks of a newer one.
//!
//! A kept index serves two kinds of reads. A read of the index alone (a
//! reader starting on the shard) is served from here, unless the index
//! marks an inner chunk missing: a window of missing chunks only sends no
//! request at all, so nothing would check that the shard is still this
//! version; such an index is read anew each time, and kept again. And the
//! index range asked for in the same call as inner chunks (the read
//! engine's check that the chunks belong to the index it used) is
//! answered from the very entry whose version the chunk requests carry
//! ([`IndexCache::snapshot`]), indexes with missing chunks too: there the
//! chunk requests do the checking.
//!
//! Past the limit, the oldest indexes are dropped but their versions are
//! kept a while longer ([`VERSION_ONLY_BYTES`] each, within a tenth of the
//! limit or [`VERSIONS_ONLY_AT_LEAST`] versions): a reader that was served an index just before it was dropped
//! reads its inner chunks after, and those reads must still be
//! conditional on the version of that index.

use std::collections::{HashMap, VecDeque};

use object_store::ObjectMeta;
use zarrs::storage::Bytes;
use zarrs::storage::byte_range::ByteRange;

/// Whether `meta` carries a version that can be kept: a strong ETag.
/// A weak ETag (`W/"..."`) or Last-Modified alone is no version here:
/// servers build them from the modification time (in seconds) and the
/// size, so a rewrite of the same size within a second keeps them, and an
/// index kept by them would be paired with the new bytes (wrong values, no
/// error); and `If-Match` never matches a weak ETag (RFC 9110 13.1.1).
/// An ETag longer than [`MAX_ETAG_BYTES`] is not kept either: each version
/// is counted as [`VERSION_ONLY_BYTES`] against the cache's limit, and a
/// server handing out ETags of hundreds of KB would pass it unseen.
pub(crate) fn has_version(meta: &ObjectMeta) -> bool {
    meta.e_tag
        .as_ref()
        .is_some_and(|e| !e.starts_with("W/") && e.len() <= MAX_ETAG_BYTES)
}

/// The longest ETag kept as a version (S3's are 34 bytes, a multipart
/// upload's about 40; GCS's and Azure's shorter).
pub(crate) const MAX_ETAG_BYTES: usize = 192;

/// Whether two responses show the same version of an object: the same
/// ETag and size (what is kept has a strong ETag: [`has_version`]; with
/// no ETag, nothing says two responses are of one version).
pub(crate) fn same_version(a: &ObjectMeta, b: &ObjectMeta) -> bool {
    a.size == b.size && a.e_tag.is_some() && a.e_tag == b.e_tag
}

/// Whether the shard index `index` marks an inner chunk missing (offset
/// and length all ones: the same bytes in either byte order). A trailing
/// checksum (the 4 bytes past the last whole entry) is not looked at.
fn has_missing_chunk(index: &[u8]) -> bool {
    index
        .chunks_exact(16)
        .any(|entry| entry.iter().all(|&b| b == 0xff))
}

/// The length of a shard index at the start of each shard of the array
/// whose `zarr.json` is `metadata`: `None` unless its codecs hold
/// `sharding_indexed` with `index_location: "start"` and index codecs of a
/// fixed size (`bytes`, then `crc32c` or nothing).
pub(crate) fn start_index_len(metadata: &[u8]) -> Option<u64> {
    let metadata: serde_json::Value = serde_json::from_slice(metadata).ok()?;
    let sharding = metadata["codecs"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == "sharding_indexed")?;
    let config = &sharding["configuration"];
    if config["index_location"] != "start" {
        return None;
    }
    let shape = |v: &serde_json::Value| -> Option<Vec<u64>> {
        v.as_array()?
            .iter()
            .map(serde_json::Value::as_u64)
            .collect()
    };
    let shard = shape(&metadata["chunk_grid"]["configuration"]["chunk_shape"])?;
    let inner = shape(&config["chunk_shape"])?;
    if shard.len() != inner.len() {
        return None;
    }
    let mut chunks: u64 = 1;
    for (s, i) in shard.iter().zip(&inner) {
        if *i == 0 || s % i != 0 {
            return None;
        }
        chunks = chunks.checked_mul(s / i)?;
    }
    let names: Vec<&str> = config["index_codecs"]
        .as_array()?
        .iter()
        .map(|c| c["name"].as_str())
        .collect::<Option<_>>()?;
    let checksum = match names.as_slice() {
        ["bytes"] => 0,
        ["bytes", "crc32c"] => 4,
        _ => return None,
    };
    chunks.checked_mul(16)?.checked_add(checksum)
}

/// What one version kept without its ranges is counted as (the key, the
/// version and the map's own share, about).
const VERSION_ONLY_BYTES: usize = 256;

/// Versions kept without their ranges however small the limit.
const VERSIONS_ONLY_AT_LEAST: usize = 256;

/// A range kept of one object.
struct Kept {
    range: ByteRange,
    bytes: Bytes,
    /// Whether a read of this range alone is served from here: not for an
    /// index that marks an inner chunk missing (see the module doc).
    serve: bool,
}

/// What is kept of one object.
struct Entry {
    /// The version the ranges were read from.
    meta: ObjectMeta,
    /// Empty once dropped past the limit: the version alone is kept.
    ranges: Vec<Kept>,
    bytes: usize,
}

/// How to read a shard index alone (see [`IndexCache::index_read`]).
pub(crate) enum IndexRead {
    /// Kept: no request.
    Kept(Bytes),
    /// Read it, on condition that the object is still this version (the
    /// key's version is kept, not this range).
    OnCondition(ObjectMeta),
    /// Read it, with no condition: nothing is kept of the key, or this
    /// range is kept for the check of chunk reads only (an index with a
    /// missing inner chunk, read anew by every reader that starts on the
    /// shard).
    Anew,
}

/// One key's kept version and ranges, taken at once (see
/// [`IndexCache::snapshot`]).
pub(crate) struct Snapshot {
    pub(crate) meta: ObjectMeta,
    ranges: Vec<(ByteRange, Bytes)>,
}

impl Snapshot {
    /// The bytes kept of `range`, read from [`meta`](Self::meta)'s version.
    pub(crate) fn get(&self, range: ByteRange) -> Option<Bytes> {
        self.ranges
            .iter()
            .find(|(r, _)| *r == range)
            .map(|(_, bytes)| bytes.clone())
    }
}

/// Shard indexes by key, oldest dropped first past the limit.
pub(crate) struct IndexCache {
    /// The shard index length of arrays with their index at the start, by
    /// the array's key prefix (`""` at the root, `"a/b/"`).
    start_indexes: HashMap<String, u64>,
    limit: usize,
    /// Bytes of the ranges kept.
    bytes: usize,
    /// Bytes counted for versions kept without their ranges, at most
    /// [`Self::version_limit`].
    version_bytes: usize,
    entries: HashMap<String, Entry>,
    /// Keys in the order their ranges were kept (may hold keys dropped
    /// since, skipped when met).
    order: VecDeque<String>,
    /// Keys whose ranges were dropped, oldest first (likewise).
    versions_only: VecDeque<String>,
}

impl IndexCache {
    /// An empty cache holding at most `limit` bytes of indexes.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            start_indexes: HashMap::new(),
            limit,
            bytes: 0,
            version_bytes: 0,
            entries: HashMap::new(),
            order: VecDeque::new(),
            versions_only: VecDeque::new(),
        }
    }

    /// Note what the metadata document `key` (`.../zarr.json`) says of
    /// where its array's shard indexes are.
    pub(crate) fn note_metadata(&mut self, key: &str, bytes: &[u8]) {
        let Some(prefix) = key.strip_suffix("zarr.json") else {
            return;
        };
        if !(prefix.is_empty() || prefix.ends_with('/')) {
            return;
        }
        match start_index_len(bytes) {
            Some(len) => self.start_indexes.insert(prefix.to_string(), len),
            None => self.start_indexes.remove(prefix),
        };
    }

    /// Whether a read of `range` alone of `key` is a shard index: a
    /// suffix, or the prefix of the exact index length of the array `key`
    /// belongs to (see [`note_metadata`](Self::note_metadata)).
    pub(crate) fn is_index_read(&self, key: &str, range: ByteRange) -> bool {
        match range {
            ByteRange::Suffix(len) => len > 0,
            ByteRange::FromStart(0, Some(len)) if len > 0 => {
                let mut prefix = key;
                while let Some(at) = prefix.rfind('/') {
                    prefix = &prefix[..at];
                    if self.start_indexes.get(&format!("{prefix}/")) == Some(&len) {
                        return true;
                    }
                }
                self.start_indexes.get("") == Some(&len)
            }
            ByteRange::FromStart(..) => false,
        }
    }

    /// The bytes kept of `range` of `key`, if a read of it alone may be
    /// served from here.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &str, range: ByteRange) -> Option<Bytes> {
        let entry = self.entries.get(key)?;
        entry
            .ranges
            .iter()
            .find(|k| k.range == range && k.serve)
            .map(|k| k.bytes.clone())
    }

    /// How a read of `range` alone of `key` (a shard index) goes.
    pub(crate) fn index_read(&self, key: &str, range: ByteRange) -> IndexRead {
        let Some(entry) = self.entries.get(key) else {
            return IndexRead::Anew;
        };
        match entry.ranges.iter().find(|k| k.range == range) {
            Some(kept) if kept.serve => IndexRead::Kept(kept.bytes.clone()),
            Some(_) => IndexRead::Anew,
            None => IndexRead::OnCondition(entry.meta.clone()),
        }
    }

    /// The version of `key` kept and every range kept of it (for chunk
    /// reads also only), taken under one lock: what a call that reads
    /// inner chunks and asks for the index again answers the index from,
    /// and the version its chunk requests are conditional on.
    pub(crate) fn snapshot(&self, key: &str) -> Option<Snapshot> {
        let entry = self.entries.get(key)?;
        Some(Snapshot {
            meta: entry.meta.clone(),
            ranges: entry
                .ranges
                .iter()
                .map(|k| (k.range, k.bytes.clone()))
                .collect(),
        })
    }

    /// The version of `key` that is kept, if any (also after its ranges
    /// were dropped past the limit).
    pub(crate) fn version(&self, key: &str) -> Option<ObjectMeta> {
        self.entries.get(key).map(|e| e.meta.clone())
    }

    /// Forget `key` (it changed).
    pub(crate) fn remove(&mut self, key: &str) {
        if let Some(entry) = self.entries.remove(key) {
            if entry.ranges.is_empty() {
                self.version_bytes -= VERSION_ONLY_BYTES;
            } else {
                self.bytes -= entry.bytes;
            }
        }
    }

    /// Keep `bytes`, read at `range` of `key` from the version `meta`. An
    /// index without a version, or larger than the limit, is not kept;
    /// one of another version than the kept one replaces it. One that
    /// marks an inner chunk missing is kept for the check of chunk reads
    /// only (see [`index_read`](Self::index_read)).
    pub(crate) fn insert(&mut self, key: &str, range: ByteRange, bytes: &Bytes, meta: &ObjectMeta) {
        if self
            .entries
            .get(key)
            .is_some_and(|e| !same_version(&e.meta, meta))
        {
            self.remove(key);
        }
        if !has_version(meta) || bytes.len() > self.limit {
            return;
        }
        match self.entries.get(key) {
            None => {
                self.entries.insert(
                    key.to_string(),
                    Entry {
                        meta: meta.clone(),
                        ranges: Vec::new(),
                        bytes: 0,
                    },
                );
                self.order.push_back(key.to_string());
            }
            // Kept without ranges: it has them again.
            Some(entry) if entry.ranges.is_empty() => {
                self.version_bytes -= VERSION_ONLY_BYTES;
                self.order.push_back(key.to_string());
            }
            Some(_) => {}
        }
        let entry = self.entries.get_mut(key).expect("made above");
        // Two readers that missed the same range at once both insert it:
        // the second replaces the first, whose bytes no longer count.
        if let Some(at) = entry.ranges.iter().position(|k| k.range == range) {
            let old = entry.ranges.swap_remove(at);
            entry.bytes -= old.bytes.len();
            self.bytes -= old.bytes.len();
        }
        entry.ranges.push(Kept {
            range,
            bytes: bytes.clone(),
            serve: !has_missing_chunk(bytes),
        });
        entry.bytes += bytes.len();
        self.bytes += bytes.len();
        self.evict(key);
    }

    /// Bytes of versions kept without their ranges: a tenth of the limit,
    /// or [`VERSIONS_ONLY_AT_LEAST`] versions.
    fn version_limit(&self) -> usize {
        (self.limit / 10).max(VERSIONS_ONLY_AT_LEAST * VERSION_ONLY_BYTES)
    }

    /// Drop the ranges of the oldest entries other than `keep` until
    /// within the limit, keeping their versions (the oldest of those
    /// dropped past a tenth of the limit).
    fn evict(&mut self, keep: &str) {
        // Each key in the queue is looked at once at most: `keep` goes
        // back in, and may be all that is left (entries kept as versions
        // alone are not in the queue).
        let mut to_look_at = self.order.len();
        while self.bytes > self.limit && to_look_at > 0 {
            to_look_at -= 1;
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if oldest == keep {
                self.order.push_back(oldest);
                continue;
            }
            let Some(entry) = self.entries.get_mut(&oldest) else {
                continue;
            };
            if entry.ranges.is_empty() {
                continue;
            }
            entry.ranges = Vec::new();
            self.bytes -= std::mem::take(&mut entry.bytes);
            self.version_bytes += VERSION_ONLY_BYTES;
            self.versions_only.push_back(oldest);
        }
        while self.version_bytes > self.version_limit() {
            let Some(oldest) = self.versions_only.pop_front() else {
                break;
            };
            if self
                .entries
                .get(&oldest)
                .is_some_and(|e| e.ranges.is_empty())
            {
                self.remove(&oldest);
            }
        }
        // Keys of dropped entries pile up in the queues: drop them now
        // and then, so that they stay about as long as the map.
        if self.order.len() + self.versions_only.len() > 2 * self.entries.len() + 16 {
            let entries = &self.entries;
            let mut seen = std::collections::HashSet::new();
            self.order.retain(|k| {
                entries.get(k).is_some_and(|e| !e.ranges.is_empty()) && seen.insert(k.clone())
            });
            let mut seen = std::collections::HashSet::new();
            self.versions_only.retain(|k| {
                entries.get(k).is_some_and(|e| e.ranges.is_empty()) && seen.insert(k.clone())
            });
        }
    }

    /// Bytes kept.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(e_tag: Option<&str>, size: u64) -> ObjectMeta {
        ObjectMeta {
            location: "c/0/0".into(),
            last_modified: Default::default(),
            size,
            e_tag: e_tag.map(str::to_string),
            version: None,
        }
    }

    fn bytes(n: usize, value: u8) -> Bytes {
        Bytes::from(vec![value; n])
    }

    #[test]
    fn only_versioned_indexes_within_the_limit_are_kept() {
        let mut cache = IndexCache::new(100);
        let suffix = ByteRange::Suffix(20);
        cache.insert("a", suffix, &bytes(20, 1), &meta(None, 50));
        assert!(cache.get("a", suffix).is_none(), "no version, kept");
        cache.insert("a", suffix, &bytes(101, 1), &meta(Some("e1"), 500));
        assert!(
            cache.get("a", suffix).is_none(),
            "larger than the limit, kept"
        );
        cache.insert("a", suffix, &bytes(20, 1), &meta(Some("e1"), 500));
        assert_eq!(cache.get("a", suffix).unwrap()[0], 1);
        cache.insert("a", suffix, &bytes(20, 2), &meta(Some("e1"), 500));
        assert_eq!(cache.bytes(), 20, "the same range twice counts once");
        // Another version replaces the entry.
        cache.insert(
            "a",
            ByteRange::Suffix(4),
            &bytes(4, 3),
            &meta(Some("e2"), 500),
        );
        assert!(cache.get("a", suffix).is_none());
        assert_eq!(cache.version("a").unwrap().e_tag.as_deref(), Some("e2"));
        assert_eq!(cache.bytes(), 4);
    }

    #[test]
    fn the_oldest_go_first_past_the_limit() {
        let mut cache = IndexCache::new(100);
        let suffix = ByteRange::Suffix(40);
        for key in ["a", "b", "c"] {
            cache.insert(key, suffix, &bytes(40, 0), &meta(Some(key), 500));
        }
        assert!(cache.get("a", suffix).is_none());
        assert!(cache.get("b", suffix).is_some());
        assert!(cache.get("c", suffix).is_some());
        assert_eq!(cache.bytes(), 80);
        cache.remove("b");
        assert_eq!(cache.bytes(), 40);
        for i in 0..1000 {
            let key = format!("k{}", i % 3);
            cache.insert(&key, suffix, &bytes(40, 0), &meta(Some(&key), 500));
            cache.remove(&key);
        }
        assert!(cache.order.len() + cache.versions_only.len() <= 2 * cache.entries.len() + 17);
    }

    /// One key's ranges alone past the limit, with another key kept as
    /// its version only: eviction stops (it went round for ever).
    #[test]
    fn one_key_past_the_limit_beside_a_version_alone() {
        let mut cache = IndexCache::new(100);
        cache.insert(
            "a",
            ByteRange::Suffix(40),
            &bytes(40, 0),
            &meta(Some("a"), 500),
        );
        cache.insert(
            "b",
            ByteRange::Suffix(80),
            &bytes(80, 0),
            &meta(Some("b"), 500),
        );
        assert!(cache.get("a", ByteRange::Suffix(40)).is_none());
        let prefix = ByteRange::FromStart(0, Some(80));
        cache.insert("b", prefix, &bytes(80, 0), &meta(Some("b"), 500));
        assert!(cache.get("b", prefix).is_some());
        assert_eq!(cache.bytes(), 160);
        assert!(cache.version("a").is_some());
    }

    /// A reader served an index just before it is dropped past the limit
    /// reads its inner chunks after: they must still be conditional on
    /// that index's version, so the version outlives the bytes.
    #[test]
    fn versions_outlive_indexes_dropped_past_the_limit() {
        let mut cache = IndexCache::new(100);
        let suffix = ByteRange::Suffix(40);
        for key in ["a", "b", "c"] {
            cache.insert(key, suffix, &bytes(40, 0), &meta(Some(key), 500));
        }
        assert!(cache.get("a", suffix).is_none());
        assert_eq!(cache.version("a").unwrap().e_tag.as_deref(), Some("a"));
        // Kept again, the same version: its bytes count again.
        cache.insert("a", suffix, &bytes(40, 0), &meta(Some("a"), 500));
        assert!(cache.get("a", suffix).is_some());
        assert!(cache.get("b", suffix).is_none());
        assert_eq!(cache.version("b").unwrap().e_tag.as_deref(), Some("b"));
        assert_eq!(cache.bytes(), 80);
        // Another version drops the kept one.
        cache.insert("b", suffix, &bytes(40, 0), &meta(Some("b2"), 500));
        assert_eq!(cache.version("b").unwrap().e_tag.as_deref(), Some("b2"));
        // Versions alone are bounded too.
        for i in 0..10_000 {
            let key = format!("k{i}");
            cache.insert(&key, suffix, &bytes(40, 0), &meta(Some(&key), 500));
        }
        assert!(cache.version("k0").is_none());
        assert!(cache.version("k9990").is_some());
        assert!(cache.entries.len() <= VERSIONS_ONLY_AT_LEAST + 3);
        assert_eq!(
            cache.version_bytes,
            VERSIONS_ONLY_AT_LEAST * VERSION_ONLY_BYTES
        );
        assert!(cache.order.len() + cache.versions_only.len() <= 2 * cache.entries.len() + 17);
    }

    #[test]
    fn versions_compare_by_etag_else_time_and_size() {
        assert!(same_version(&meta(Some("x"), 5), &meta(Some("x"), 5)));
        assert!(!same_version(&meta(Some("x"), 5), &meta(Some("y"), 5)));
        assert!(!same_version(&meta(Some("x"), 5), &meta(None, 5)));
        assert!(!same_version(&meta(None, 5), &meta(None, 6)));
        assert!(!has_version(&meta(None, 5)));
        assert!(has_version(&meta(Some("x"), 5)));
        assert!(!has_version(&meta(Some("W/\"x\""), 5)), "weak");
        let long = format!("\"{}\"", "e".repeat(MAX_ETAG_BYTES));
        assert!(!has_version(&meta(Some(&long), 5)), "too long to count");
    }

    /// An index that marks an inner chunk missing is not served to a read
    /// of it alone (read anew, unconditionally), but is in the snapshot a
    /// call that reads chunks answers its index range from.
    #[test]
    fn an_index_with_a_missing_chunk_is_kept_for_checks_only() {
        let mut cache = IndexCache::new(1000);
        let suffix = ByteRange::Suffix(32);
        let mut sparse = vec![0u8; 32];
        sparse[..16].fill(0xff);
        let sparse = Bytes::from(sparse);
        cache.insert("a", suffix, &sparse, &meta(Some("e1"), 500));
        assert!(cache.get("a", suffix).is_none());
        assert!(matches!(cache.index_read("a", suffix), IndexRead::Anew));
        let snapshot = cache.snapshot("a").unwrap();
        assert_eq!(snapshot.meta.e_tag.as_deref(), Some("e1"));
        assert_eq!(snapshot.get(suffix), Some(sparse));
        assert!(snapshot.get(ByteRange::Suffix(16)).is_none());
        // Dense: served. Another range of the key: read on condition.
        cache.insert("a", suffix, &bytes(32, 1), &meta(Some("e1"), 500));
        assert!(matches!(cache.index_read("a", suffix), IndexRead::Kept(b) if b[0] == 1));
        assert!(matches!(
            cache.index_read("a", ByteRange::FromStart(0, Some(32))),
            IndexRead::OnCondition(m) if m.e_tag.as_deref() == Some("e1")
        ));
        assert!(matches!(cache.index_read("b", suffix), IndexRead::Anew));
        assert!(cache.snapshot("b").is_none());
    }

    #[test]
    fn missing_chunks_in_an_index() {
        let mut index = vec![0u8; 16 * 3 + 4];
        assert!(!has_missing_chunk(&index));
        index[48..52].fill(0xff); // the checksum
        assert!(!has_missing_chunk(&index));
        index[16..31].fill(0xff);
        assert!(!has_missing_chunk(&index));
        index[31] = 0xff;
        assert!(has_missing_chunk(&index));
    }

    #[test]
    fn prefixes_are_indexes_only_where_the_metadata_says() {
        let metadata = |location: &str, index_codecs: &str| {
            format!(
                r#"{{"zarr_format": 3, "node_type": "array", "shape": [16, 16],
                "chunk_grid": {{"name": "regular", "configuration": {{"chunk_shape": [8, 8]}}}},
                "codecs": [{{"name": "sharding_indexed", "configuration": {{
                    "chunk_shape": [4, 4], "codecs": [{{"name": "bytes"}}],
                    "index_codecs": [{index_codecs}], "index_location": "{location}"}}}}]}}"#
            )
        };
        let crc = r#"{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}"#;
        assert_eq!(start_index_len(metadata("start", crc).as_bytes()), Some(68));
        assert_eq!(
            start_index_len(metadata("start", r#"{"name": "bytes"}"#).as_bytes()),
            Some(64)
        );
        assert_eq!(start_index_len(metadata("end", crc).as_bytes()), None);
        let gzip = r#"{"name": "bytes"}, {"name": "gzip"}"#;
        assert_eq!(start_index_len(metadata("start", gzip).as_bytes()), None);

        let mut cache = IndexCache::new(100);
        let prefix = ByteRange::FromStart(0, Some(68));
        assert!(cache.is_index_read("a/c/0/0", ByteRange::Suffix(68)));
        assert!(!cache.is_index_read("a/c/0/0", prefix));
        cache.note_metadata("a/zarr.json", metadata("start", crc).as_bytes());
        assert!(cache.is_index_read("a/c/0/0", prefix));
        assert!(!cache.is_index_read("a/c/0/0", ByteRange::FromStart(0, Some(64))));
        assert!(!cache.is_index_read("a/c/0/0", ByteRange::FromStart(4, Some(68))));
        assert!(!cache.is_index_read("b/c/0/0", prefix));
        cache.note_metadata("zarr.json", metadata("start", crc).as_bytes());
        assert!(cache.is_index_read("b/c/0/0", prefix));
        // Rewritten with the index at the end: prefixes are chunks again.
        cache.note_metadata("a/zarr.json", metadata("end", crc).as_bytes());
        cache.note_metadata("zarr.json", metadata("end", crc).as_bytes());
        assert!(!cache.is_index_read("a/c/0/0", prefix));
    }
}
