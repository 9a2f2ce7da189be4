//! Bytes of a shard read with its index
//! ([`RemoteOptions::shard_read_ahead_bytes`](super::RemoteOptions::shard_read_ahead_bytes)),
//! held for the one call that reads its inner chunks next.
//!
//! What an index read fetched beside the index (the whole shard if it is
//! no larger than the read-ahead, else its last or first bytes) is held
//! from that read until the next call of any kind on its key, which takes
//! it: a call for inner chunks that asks for the index range too (the read
//! engine's, which checks that range against the index it used) is
//! answered from it, with no request for the ranges it holds and requests
//! conditional on its version for the others; any other call drops it and
//! goes to the server. So held bytes answer only the call that follows the
//! index read they came with, never a later read of the shard (which
//! starts by reading the index again: kept, with its version, or fetched),
//! and a shard rewritten meanwhile is seen as with no read-ahead. With two
//! readers of one shard at once, that next call may be the other reader's
//! chunk call: it is answered from these bytes only as far as its index
//! range equals the index that reader used (the engine's check), so its
//! chunks sit at the offsets it used; zarrs' own reads never ask for the
//! index range with their chunks, so they are never answered from here.
//!
//! A store also judges, per array, whether its shards are larger than the
//! read-ahead, and then reads their indexes alone: an array of large
//! shards would otherwise pay for bytes it mostly does not use on every
//! first window of a shard. Before any shard is read, from the array's
//! `zarr.json` (read through the store, or noted): a shard whose stored
//! bytes before compression are more than [`ROOM_FOR_COMPRESSION`] times
//! the read-ahead is taken to be larger. Then from what index reads show:
//! once one shard is larger, the array's later index reads fetch the index
//! alone. A shard's array is the noted array its key lies under, else what
//! the key shows of it ([`array_part`]).

use std::collections::{HashMap, HashSet, VecDeque};

use object_store::ObjectMeta;
use zarrs::storage::Bytes;
use zarrs::storage::byte_range::ByteRange;

/// Arrays known to have shards larger than the read-ahead, at most
/// (forgotten all at once past it: at worst one more read-ahead each).
const LARGE_AT_MOST: usize = 4096;

/// How many times the read-ahead a shard's stored bytes before compression
/// may be, for its array to be read ahead before any of its shards is
/// seen: compression of 4:1 or better is a bet this crate does not make
/// for a whole array (the Sentinel-2 layout, 2048 x 2048 `uint16` a shard,
/// is 8 MiB before and 5.5 MiB after zstd).
pub(crate) const ROOM_FOR_COMPRESSION: u64 = 4;

/// A codec's or data type's name: the string itself, or its `name`.
fn name(v: &serde_json::Value) -> Option<&str> {
    v.as_str().or_else(|| v["name"].as_str())
}

/// The size of an element of the data type `data_type` (a metadata value:
/// a Zarr name, or a NumPy type string such as `<u2`, as numcodecs'
/// `astype` takes), if fixed and known here.
fn type_size(data_type: &serde_json::Value) -> Option<u64> {
    let name = name(data_type)?;
    Some(match name {
        "bool" | "int8" | "uint8" => 1,
        "int16" | "uint16" | "float16" | "bfloat16" => 2,
        "int32" | "uint32" | "float32" => 4,
        "int64" | "uint64" | "float64" | "complex64" => 8,
        "complex128" => 16,
        _ => {
            let numpy = name.trim_start_matches(['<', '>', '|', '=']);
            let (kind, digits) = numpy.split_at_checked(1)?;
            if !matches!(kind, "u" | "i" | "f" | "b") {
                return None;
            }
            digits.parse().ok().filter(|&n: &u64| n > 0)?
        }
    })
}

/// At most how many bytes a shard of the array whose `zarr.json` is
/// `metadata` stores before compression: the elements of its inner chunks
/// that lie inside the array, times the size of the type its inner
/// chunks' `bytes` codec writes (the array's data type, or the last one an
/// array-to-array codec casts to before it: `data_type` as `cast_value`
/// has it, `astype` as numcodecs' codecs), and its index. `None` where the
/// metadata does not say: not `sharding_indexed` (at the top) on a regular
/// grid, a type of no fixed size, or an inner array-to-bytes codec other
/// than `bytes`.
pub(crate) fn stored_shard_bound(metadata: &[u8]) -> Option<u64> {
    let metadata: serde_json::Value = serde_json::from_slice(metadata).ok()?;
    if name(&metadata["chunk_grid"])? != "regular" {
        return None;
    }
    let cast = |size: Option<u64>, codec: &serde_json::Value| {
        let configuration = &codec["configuration"];
        match configuration
            .get("data_type")
            .or(configuration.get("astype"))
        {
            Some(data_type) => type_size(data_type),
            None => size,
        }
    };
    let codecs = metadata["codecs"].as_array()?;
    let at = codecs
        .iter()
        .position(|c| name(c) == Some("sharding_indexed"))?;
    let mut size = type_size(&metadata["data_type"]);
    for codec in &codecs[..at] {
        size = cast(size, codec);
    }
    let sharding = &codecs[at]["configuration"];
    let inner_codecs = sharding["codecs"].as_array()?;
    let bytes = inner_codecs.iter().position(|c| name(c) == Some("bytes"))?;
    for codec in &inner_codecs[..bytes] {
        size = cast(size, codec);
    }
    let dims = |v: &serde_json::Value| -> Option<Vec<u64>> {
        v.as_array()?
            .iter()
            .map(serde_json::Value::as_u64)
            .collect()
    };
    let array = dims(&metadata["shape"])?;
    let shard = dims(&metadata["chunk_grid"]["configuration"]["chunk_shape"])?;
    let inner = dims(&sharding["chunk_shape"])?;
    if array.len() != shard.len() || shard.len() != inner.len() {
        return None;
    }
    // Per dimension: the inner chunks of a shard, and those of them that
    // hold elements of the array (an array smaller than a shard stores
    // only those).
    let mut elements: u64 = 1;
    let mut inner_chunks: u64 = 1;
    for ((&a, &s), &i) in array.iter().zip(&shard).zip(&inner) {
        if i == 0 {
            return None;
        }
        let stored = s.min(a.div_ceil(i).checked_mul(i)?);
        elements = elements.checked_mul(stored)?;
        inner_chunks = inner_chunks.checked_mul(s.div_ceil(i))?;
    }
    elements
        .checked_mul(size?)?
        .checked_add(inner_chunks.checked_mul(16)?.checked_add(4)?)
}

/// Bytes of a shard read with its index: where they lie in the shard, the
/// range of the index they were read for, and the response's version.
pub(crate) struct Held {
    index_range: ByteRange,
    /// The offset of `bytes` in the shard.
    start: u64,
    bytes: Bytes,
    /// The shard's size and version, as the response showed them.
    meta: ObjectMeta,
}

/// What held bytes answer of a call's ranges: each range's bytes if they
/// are held (`None` where a request must fetch them), and the version of
/// the shard they came from.
pub(crate) struct Answer {
    pub(crate) ranges: Vec<Option<Bytes>>,
    pub(crate) meta: ObjectMeta,
}

impl Held {
    /// `bytes` at `start` of a shard of `meta.size` bytes, read with the
    /// index at `index_range`.
    pub(crate) fn new(index_range: ByteRange, start: u64, bytes: Bytes, meta: ObjectMeta) -> Self {
        Self {
            index_range,
            start,
            bytes,
            meta,
        }
    }

    /// What these bytes answer of `ranges`, if one of them is the index
    /// range they were read for (a call for inner chunks that checks the
    /// index) and all of them lie inside the shard; `None` otherwise, for
    /// the server to answer. A range past the end is of another version
    /// of the shard than these bytes (another reader's chunk call, with
    /// the index it read before a rewrite), or of a bad index: the server
    /// answers it as it would with no read-ahead.
    pub(crate) fn answer(&self, ranges: &[ByteRange]) -> Option<Answer> {
        if !ranges.contains(&self.index_range) {
            return None;
        }
        let size = self.meta.size;
        let held = self.start..self.start + self.bytes.len() as u64;
        let answered = ranges
            .iter()
            .map(|&range| {
                let (start, end) = match range {
                    ByteRange::FromStart(start, Some(n)) => (start, start.checked_add(n)?),
                    ByteRange::FromStart(start, None) => (start, size),
                    ByteRange::Suffix(n) => (size.checked_sub(n)?, size),
                };
                if start > end || end > size {
                    return None;
                }
                let bytes = if start == end {
                    Some(Bytes::new())
                } else if held.start <= start && end <= held.end {
                    let at = |offset: u64| (offset - held.start) as usize;
                    Some(self.bytes.slice(at(start)..at(end)))
                } else {
                    None
                };
                Some(bytes)
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Answer {
            ranges: answered,
            meta: self.meta.clone(),
        })
    }
}

/// The part of a shard key that names its array, as far as the key shows
/// it: the key without its trailing chunk-grid segments (numbers separated
/// by `/` or `.`, back to the `c` of the default encoding if there is one),
/// e.g. `band` of `band/c/0/1` and of `band/0.1`, `image/0` of
/// `image/0/c/3/1`.
/// Only a guess for [`ReadAhead`]'s learning, which decides no more than
/// whether to read ahead.
fn array_part(key: &str) -> &str {
    let is_grid = |segment: &str| {
        !segment.is_empty()
            && segment.split('.').enumerate().all(|(i, part)| {
                (i == 0 && part == "c")
                    || (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
            })
    };
    let mut head = key;
    loop {
        let (rest, last) = head.rsplit_once('/').unwrap_or(("", head));
        // The `c` of the default encoding ends the grid: an array may be
        // named by numbers too (`image/0`, a level of a multiscale).
        if last == "c" || last.starts_with("c.") {
            return rest;
        }
        if !is_grid(last) {
            return head;
        }
        if rest.is_empty() {
            return "";
        }
        head = rest;
    }
}

/// Shard bytes held, by key, within a limit of bytes (oldest dropped
/// first: a call for its chunks then goes to the server); the index reads
/// under way that may hold what they read; and the arrays learned to have
/// shards larger than the read-ahead.
pub(crate) struct ReadAhead {
    limit: usize,
    bytes: usize,
    held: HashMap<String, Held>,
    order: VecDeque<String>,
    /// The ticket of the index read of each key that may still hold what
    /// it reads: the last one begun, until another call on the key.
    in_flight: HashMap<String, u64>,
    tickets: u64,
    /// Arrays (key prefixes without their `/`, as [`array_part`] finds
    /// them in shard keys) whose metadata says their shards are larger than
    /// the read-ahead ([`ROOM_FOR_COMPRESSION`]), or with a shard seen to
    /// be.
    large: HashSet<String>,
    /// The server answered a range covering a whole object with 200,
    /// which object_store refuses: no read-ahead from this store.
    refused: bool,
    /// Arrays whose metadata was noted: a shard key under one of them is
    /// that array's, whatever [`array_part`] would guess (an array named
    /// by a number, with chunk keys like `0.0`).
    noted: HashSet<String>,
}

impl ReadAhead {
    /// Nothing held, at most `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            bytes: 0,
            held: HashMap::new(),
            order: VecDeque::new(),
            in_flight: HashMap::new(),
            tickets: 0,
            large: HashSet::new(),
            refused: false,
            noted: HashSet::new(),
        }
    }

    /// The server answered a read-ahead with the whole object and 200,
    /// which object_store refuses: none from now on.
    pub(crate) fn refused(&mut self) {
        self.refused = true;
    }

    /// Note what the metadata document `key` (`.../zarr.json`) says of the
    /// size of its array's shards, against `read_ahead`.
    pub(crate) fn note_metadata(&mut self, key: &str, metadata: &[u8], read_ahead: u64) {
        let Some(prefix) = key.strip_suffix("zarr.json") else {
            return;
        };
        if !(prefix.is_empty() || prefix.ends_with('/')) {
            return;
        }
        let array = prefix.strip_suffix('/').unwrap_or(prefix);
        if self.noted.len() >= LARGE_AT_MOST {
            self.noted.clear();
        }
        self.noted.insert(array.to_string());
        if stored_shard_bound(metadata)
            .is_some_and(|bound| bound > read_ahead.saturating_mul(ROOM_FOR_COMPRESSION))
        {
            self.mark_large(array);
        } else {
            self.large.remove(array);
        }
    }

    /// The array of shard `key`: the longest noted array it lies under
    /// (arrays hold no other nodes, so that is its array), else what
    /// [`array_part`] makes of it.
    fn array_of<'k>(&self, key: &'k str) -> &'k str {
        let mut head = key;
        while let Some((parent, _)) = head.rsplit_once('/') {
            if self.noted.contains(parent) {
                return parent;
            }
            head = parent;
        }
        if self.noted.contains("") {
            return "";
        }
        array_part(key)
    }

    fn mark_large(&mut self, array: &str) {
        if self.large.len() >= LARGE_AT_MOST {
            self.large.clear();
        }
        self.large.insert(array.to_string());
    }

    /// Whether an index read of shard `key` should read ahead: bytes may
    /// be held, the server has not refused it, and its array is not known
    /// to have shards larger than the read-ahead.
    pub(crate) fn worth_it(&self, key: &str) -> bool {
        self.limit > 0 && !self.refused && !self.large.contains(self.array_of(key))
    }

    /// Learn from a response to an index read of shard `key` that the
    /// shard has `size` bytes, of which `read_ahead` would be read ahead.
    pub(crate) fn learn(&mut self, key: &str, size: u64, read_ahead: u64) {
        if size > read_ahead {
            let array = self.array_of(key).to_string();
            self.mark_large(&array);
        }
    }

    /// An index read of `key` that reads ahead begins: what is held of the
    /// key is dropped; the ticket [`finish`](Self::finish) needs.
    pub(crate) fn begin(&mut self, key: &str) -> u64 {
        self.take(key);
        self.tickets += 1;
        self.in_flight.insert(key.to_string(), self.tickets);
        self.tickets
    }

    /// The index read `ticket` of `key` ended: hold `held` if no other
    /// call on the key came since it began. One that did may have read a
    /// newer version of the shard (another reader's index read, answered
    /// after a rewrite, before this slower answer came): this older answer
    /// must not be the one its call for chunks gets.
    pub(crate) fn finish(&mut self, key: &str, ticket: u64, held: Option<Held>) {
        if self.in_flight.get(key) != Some(&ticket) {
            return;
        }
        self.in_flight.remove(key);
        let Some(held) = held else {
            return;
        };
        let len = held.bytes.len();
        if len > self.limit {
            return;
        }
        while self.bytes + len > self.limit {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            self.drop_held(&oldest);
        }
        self.bytes += len;
        self.order.push_back(key.to_string());
        self.held.insert(key.to_string(), held);
    }

    /// What is held of `key`, no longer held; an index read of the key
    /// under way will not hold what it reads (see [`finish`](Self::finish)).
    pub(crate) fn take(&mut self, key: &str) -> Option<Held> {
        self.in_flight.remove(key);
        self.drop_held(key)
    }

    fn drop_held(&mut self, key: &str) -> Option<Held> {
        let held = self.held.remove(key)?;
        self.bytes -= held.bytes.len();
        if let Some(at) = self.order.iter().position(|k| k == key) {
            self.order.remove(at);
        }
        Some(held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version of a shard of `size` bytes.
    fn meta(size: u64) -> ObjectMeta {
        ObjectMeta {
            location: "s".into(),
            last_modified: Default::default(),
            size,
            e_tag: Some("\"v\"".to_string()),
            version: None,
        }
    }

    /// The 100-byte shard 0, 1, ..., 99, read whole with its last 20 bytes.
    fn whole() -> Held {
        Held::new(
            ByteRange::Suffix(20),
            0,
            Bytes::from((0u8..100).collect::<Vec<_>>()),
            meta(100),
        )
    }

    /// Its last 40 bytes, read with the same index.
    fn last_40() -> Held {
        Held::new(
            ByteRange::Suffix(20),
            60,
            Bytes::from((60u8..100).collect::<Vec<_>>()),
            meta(100),
        )
    }

    fn answered(held: &Held, ranges: &[ByteRange]) -> Vec<Option<Vec<u8>>> {
        let answer = held.answer(ranges).unwrap();
        assert_eq!(answer.meta.e_tag.as_deref(), Some("\"v\""));
        answer
            .ranges
            .into_iter()
            .map(|b| b.map(|b| b.to_vec()))
            .collect()
    }

    #[test]
    fn answers_only_a_call_that_asks_for_the_index_range() {
        assert!(
            whole()
                .answer(&[ByteRange::FromStart(0, Some(4))])
                .is_none()
        );
        let got = answered(
            &whole(),
            &[
                ByteRange::Suffix(20),
                ByteRange::FromStart(10, Some(5)),
                ByteRange::FromStart(95, None),
            ],
        );
        assert_eq!(got[0], Some((80u8..100).collect()));
        assert_eq!(got[1], Some(vec![10, 11, 12, 13, 14]));
        assert_eq!(got[2], Some(vec![95, 96, 97, 98, 99]));
    }

    /// Held bytes that are not the whole shard answer the ranges inside
    /// them; the others are left to requests (`None`), a range across the
    /// start of the held bytes too.
    #[test]
    fn part_of_a_shard_answers_the_ranges_inside_it() {
        let got = answered(
            &last_40(),
            &[
                ByteRange::FromStart(0, Some(10)),
                ByteRange::FromStart(59, Some(2)),
                ByteRange::FromStart(60, Some(2)),
                ByteRange::FromStart(30, Some(0)),
                ByteRange::Suffix(20),
            ],
        );
        assert_eq!(got[0], None);
        assert_eq!(got[1], None);
        assert_eq!(got[2], Some(vec![60, 61]));
        assert_eq!(got[3], Some(vec![]));
        assert_eq!(got[4], Some((80u8..100).collect()));
        // The first bytes of a shard (an index at the start).
        let first = Held::new(
            ByteRange::FromStart(0, Some(8)),
            0,
            Bytes::from((0u8..30).collect::<Vec<_>>()),
            meta(100),
        );
        let got = answered(
            &first,
            &[
                ByteRange::FromStart(0, Some(8)),
                ByteRange::FromStart(20, Some(10)),
                ByteRange::FromStart(25, Some(10)),
                ByteRange::Suffix(5),
            ],
        );
        assert_eq!(got[1], Some((20u8..30).collect()));
        assert_eq!((got[2].is_none(), got[3].is_none()), (true, true));
    }

    /// A range past the end of the shard (a chunk call with the index of
    /// another version) is left to the server, with all the others.
    #[test]
    fn a_call_with_a_range_past_the_shard_is_not_answered() {
        for held in [whole(), last_40()] {
            for bad in [
                ByteRange::FromStart(90, Some(11)),
                ByteRange::FromStart(u64::MAX, Some(2)),
                ByteRange::FromStart(101, None),
                ByteRange::Suffix(101),
            ] {
                assert!(
                    held.answer(&[ByteRange::Suffix(20), bad]).is_none(),
                    "{bad:?}"
                );
            }
        }
    }

    /// Hold `whole()` as `key` through an index read begun and ended.
    fn hold(held: &mut ReadAhead, key: &str) {
        let ticket = held.begin(key);
        held.finish(key, ticket, Some(whole()));
    }

    #[test]
    fn a_shard_is_taken_once_and_the_limit_holds() {
        let mut held = ReadAhead::new(250);
        hold(&mut held, "a");
        hold(&mut held, "b");
        assert!(held.take("a").is_some());
        assert!(held.take("a").is_none());
        hold(&mut held, "c");
        hold(&mut held, "d");
        // 300 bytes asked for, 250 allowed: the oldest ("b") went.
        assert!(held.take("b").is_none());
        assert!(held.take("c").is_some() && held.take("d").is_some());
        assert_eq!(held.bytes, 0);
        let ticket = held.begin("big");
        let big = Held::new(
            ByteRange::Suffix(20),
            0,
            Bytes::from(vec![0u8; 251]),
            meta(251),
        );
        held.finish("big", ticket, Some(big));
        assert!(held.take("big").is_none());
        assert!(held.in_flight.is_empty());
    }

    /// Two index reads of one shard at once, the first answered last (it
    /// may be of an older version than the second, begun after a
    /// rewrite): the second's bytes are the ones held, and the first holds
    /// nothing. A call on the key between an index read's start and end
    /// likewise keeps it from holding.
    #[test]
    fn only_the_last_index_read_begun_holds_its_shard() {
        let mut held = ReadAhead::new(1000);
        let version = |byte: u8| {
            Held::new(
                ByteRange::Suffix(20),
                0,
                Bytes::from(vec![byte; 100]),
                meta(100),
            )
        };
        let first = held.begin("s");
        let second = held.begin("s");
        held.finish("s", second, Some(version(2)));
        held.finish("s", first, Some(version(1)));
        let got = held.take("s").unwrap();
        assert_eq!(
            answered(&got, &[ByteRange::Suffix(20)])[0],
            Some(vec![2; 20])
        );

        let ticket = held.begin("s");
        assert!(held.take("s").is_none());
        held.finish("s", ticket, Some(version(1)));
        assert!(held.take("s").is_none());
        assert!(held.in_flight.is_empty());
        assert_eq!(held.bytes, 0);
    }

    #[test]
    fn the_array_of_a_shard_key() {
        for (key, array) in [
            ("band/c/0/1", "band"),
            ("group/band/c/12/3", "group/band"),
            ("image/0/c/3/1", "image/0"),
            ("band/0.1", "band"),
            ("band/c.0.1", "band"),
            ("c/0/1", ""),
            ("0.1", ""),
            ("band/c12/0", "band/c12"),
            ("band/c/0/x", "band/c/0/x"),
        ] {
            assert_eq!(array_part(key), array, "{key}");
        }
    }

    /// A shard larger than the read-ahead stops read-ahead for the shards
    /// of its array, and for them only; with no bytes allowed to be held,
    /// or once the server refused a read-ahead, nothing is read ahead.
    #[test]
    fn shards_larger_than_the_read_ahead_stop_it_for_their_array() {
        let mut held = ReadAhead::new(1000);
        held.learn("a/c/0/0", 100, 100);
        assert!(held.worth_it("a/c/0/1"));
        held.learn("a/c/0/0", 101, 100);
        assert!(!held.worth_it("a/c/5/1"));
        assert!(held.worth_it("b/c/5/1"));
        assert!(!ReadAhead::new(0).worth_it("b/c/5/1"));
        held.refused();
        assert!(!held.worth_it("b/c/5/1"));
    }

    /// `zarr.json` of a `data_type` array of `shard` shards of `inner`
    /// inner chunks, with `outer` codecs before `sharding_indexed` and
    /// `inner_codecs` inside it.
    fn metadata(
        data_type: &str,
        shard: [u64; 2],
        inner: [u64; 2],
        outer: serde_json::Value,
        inner_codecs: serde_json::Value,
    ) -> Vec<u8> {
        let mut codecs = outer.as_array().unwrap().clone();
        codecs.push(serde_json::json!({
            "name": "sharding_indexed",
            "configuration": {"chunk_shape": inner, "codecs": inner_codecs,
                              "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}]},
        }));
        serde_json::to_vec(&serde_json::json!({
            "zarr_format": 3, "node_type": "array", "shape": [8192, 4096],
            "data_type": data_type,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": shard}},
            "codecs": codecs,
        }))
        .unwrap()
    }

    /// Worked out by hand: elements times the stored type's size, plus 16
    /// bytes an inner chunk and 4 of the index's checksum.
    #[test]
    fn what_a_shard_stores_at_most_before_compression() {
        use serde_json::json;
        let scale_cast = json!([
            {"name": "scale_offset", "configuration": {"offset": 0, "scale": 10000}},
            {"name": "cast_value", "configuration": {"data_type": "uint16"}},
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 3}},
        ]);
        // The Sentinel-2 layout: float64, stored as uint16.
        let sentinel = metadata("float64", [2048, 2048], [256, 256], json!([]), scale_cast);
        assert_eq!(
            stored_shard_bound(&sentinel),
            Some(2048 * 2048 * 2 + 64 * 16 + 4)
        );
        // Stored as the array's type.
        let plain = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
        let small = metadata("float32", [512, 512], [128, 128], json!([]), plain.clone());
        assert_eq!(
            stored_shard_bound(&small),
            Some(512 * 512 * 4 + 16 * 16 + 4)
        );
        // A cast before sharding.
        let outer = json!([{"name": "cast_value", "configuration": {"data_type": "int8"}}]);
        let cast = metadata("float64", [100, 100], [10, 10], outer, plain.clone());
        assert_eq!(stored_shard_bound(&cast), Some(100 * 100 + 100 * 16 + 4));
        // An array smaller than a shard stores only the inner chunks that
        // hold its elements: 300 x 300 in shards of 2048 x 2048, inner
        // chunks of 256 x 256 (2 x 2 of them hold the array; the index
        // has all 8 x 8).
        let mut level: serde_json::Value = serde_json::from_slice(&sentinel).unwrap();
        level["shape"] = json!([300, 300]);
        assert_eq!(
            stored_shard_bound(&serde_json::to_vec(&level).unwrap()),
            Some(512 * 512 * 2 + 64 * 16 + 4)
        );
        // Bare names, a data type given as an object, numcodecs' `astype`.
        let named = json!({
            "zarr_format": 3, "node_type": "array", "shape": [64, 64],
            "data_type": {"name": "float64"},
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [64, 64]}},
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [32, 32],
                "codecs": [{"name": "numcodecs.fixedscaleoffset",
                            "configuration": {"offset": 0, "scale": 10, "dtype": "<f8", "astype": "<u2"}},
                           "bytes"],
                "index_codecs": ["bytes", "crc32c"]}}],
        });
        assert_eq!(
            stored_shard_bound(&serde_json::to_vec(&named).unwrap()),
            Some(64 * 64 * 2 + 4 * 16 + 4)
        );
        // Not said: a type of no fixed size, another array-to-bytes codec,
        // no sharding, bad JSON.
        for unknown in [
            metadata(
                "string",
                [64, 64],
                [8, 8],
                json!([]),
                json!([{"name": "vlen-utf8"}]),
            ),
            metadata(
                "bool",
                [64, 64],
                [8, 8],
                json!([]),
                json!([{"name": "packbits"}]),
            ),
            br#"{"data_type": "uint8", "shape": [4], "chunk_grid": {"name": "regular",
                "configuration": {"chunk_shape": [4]}}, "codecs": [{"name": "bytes"}]}"#
                .to_vec(),
            b"{".to_vec(),
        ] {
            assert_eq!(stored_shard_bound(&unknown), None);
        }
    }

    /// `zarr.json` of an array of 512 x 512 `uint16` shards, stored as they
    /// are: 512 KiB and an index each.
    fn half_mib_shards() -> Vec<u8> {
        use serde_json::json;
        let plain = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
        metadata("uint16", [512, 512], [256, 256], json!([]), plain)
    }

    /// An array whose metadata says its shards store more than four times
    /// the read-ahead is not read ahead; metadata rewritten to small
    /// shards lifts that; other arrays are not concerned.
    #[test]
    fn metadata_of_large_shards_stops_read_ahead_before_any_read() {
        let shards = half_mib_shards();
        let mut held = ReadAhead::new(1 << 30);
        held.note_metadata("band/zarr.json", &shards, 128 << 10);
        assert!(!held.worth_it("band/c/0/0"));
        assert!(held.worth_it("other/c/0/0"));
        held.note_metadata("band/zarr.json", &shards, 1 << 20);
        assert!(held.worth_it("band/c/0/0"));
        held.note_metadata("zarr.json", &shards, 1 << 10);
        assert!(!held.worth_it("c/0/0"));
        assert!(held.worth_it("band/c/0/0"));
        // Not metadata: nothing noted.
        held.note_metadata("band/zarr.jsonx", &shards, 1);
        held.note_metadata("bandzarr.json", &shards, 1);
        assert!(held.worth_it("band/c/0/0"));
    }

    /// An array named by a number with chunk keys of the `v2` encoding
    /// (`image/0/0.0`, which `array_part` reads as array `image`): the
    /// metadata noted for it is found by its shard keys, and what is
    /// learned of it is not taken for its sibling `image/1`.
    #[test]
    fn a_noted_array_is_found_by_its_shard_keys() {
        let shards = half_mib_shards();
        let mut held = ReadAhead::new(1 << 30);
        held.note_metadata("image/0/zarr.json", &shards, 128 << 10);
        assert!(!held.worth_it("image/0/0.0"));
        assert!(held.worth_it("image/1/0.0"));
        held.note_metadata("image/2/zarr.json", &shards, 1 << 20);
        held.learn("image/2/3.1", 2 << 20, 1 << 20);
        assert!(!held.worth_it("image/2/0.0"));
        assert!(held.worth_it("image/1/0.0"));
    }
}
