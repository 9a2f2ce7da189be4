//! Fetching a unit: a chunk in one `get`; a shard's index, then every inner
//! chunk the window needs in one call at the index's version
//! ([`versioned`](crate::read::versioned)); or, when the window needs every
//! inner chunk, the whole shard in one `get` (its index read from it).
//!
//! The plan ([`ShardRead`]) and the assembly of what came back are shared
//! by the sync fetch here and the async one.

use std::ops::Range;

use zarrs::array::{ArrayError, CodecOptions};
use zarrs::storage::byte_range::ByteRange;
use zarrs::storage::{Bytes, ReadableStorageTraits, StorageError};

use super::plan::{Engine, Layout, Piece, ShardLayout, Unit, index_size, pieces};
use super::shard_index::ShardIndex;
use crate::read::versioned::{At, ObjectChanged, read_at, read_index};
use zarrs::metadata_ext::codec::sharding::ShardingIndexLocation;

/// What was fetched for a unit.
pub(crate) enum Fetched {
    /// No such object: the unit's part is the fill value.
    Missing,
    /// A shard with none of the inner chunks the window needs: the unit's
    /// part is the fill value (filled in one go, however many inner chunks
    /// it spans).
    Absent,
    /// The pieces of the unit with their encoded bytes (`None`: missing).
    Pieces(Vec<(Piece, Option<Bytes>)>),
}

impl Fetched {
    /// Whether the unit's object (chunk or shard) is stored.
    pub(crate) fn stored(&self) -> bool {
        !matches!(self, Fetched::Missing)
    }

    /// The encoded bytes fetched, about (pieces that share one chunk's
    /// bytes count them each: this only decides whether the fetch waited
    /// on I/O, see `workers::is_slow`).
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Fetched::Missing | Fetched::Absent => 0,
            Fetched::Pieces(pieces) => pieces
                .iter()
                .filter_map(|(_, b)| b.as_ref())
                .map(Bytes::len)
                .sum(),
        }
    }
}

/// How a shard is read.
pub(crate) struct ShardRead<'a> {
    pub(crate) layout: &'a ShardLayout,
    /// The inner chunks the window needs (worked out once the shard is
    /// known to exist).
    pub(crate) pieces: Vec<Piece>,
    pub(crate) index_shape: Vec<std::num::NonZeroU64>,
    pub(crate) index_size: u64,
    /// All of the shard inside the array is needed: read it whole.
    pub(crate) whole: bool,
}

/// A shard read once its index is known: the read, the index, and the
/// byte ranges of the inner chunks it needs that are stored.
pub(crate) type ChunkCall<'a> = (ShardRead<'a>, ShardIndex, Vec<ByteRange>);

/// What to fetch for `unit`.
pub(crate) enum Plan<'a> {
    Chunk(Vec<Piece>),
    Shard(ShardRead<'a>),
}

pub(crate) fn plan<'a>(engine: &'a Engine, unit: &Unit) -> Result<Plan<'a>, ArrayError> {
    let Layout::Shards(layout) = &engine.layout else {
        return Ok(Plan::Chunk(pieces(&engine.layout, unit)?));
    };
    let (index_shape, index_size) = index_size(unit, layout)?;
    Ok(Plan::Shard(ShardRead {
        layout,
        whole: unit.whole,
        pieces: Vec::new(),
        index_shape,
        index_size,
    }))
}

impl<'a> ShardRead<'a> {
    /// The byte range of the index within the shard.
    pub(crate) fn index_range(&self) -> ByteRange {
        match self.layout.index_location {
            ShardingIndexLocation::Start => ByteRange::FromStart(0, Some(self.index_size)),
            ShardingIndexLocation::End => ByteRange::Suffix(self.index_size),
        }
    }

    /// The index inside a whole `shard`.
    pub(crate) fn index_in<'b>(
        &self,
        unit: &Unit,
        shard: &'b [u8],
    ) -> Result<&'b [u8], ArrayError> {
        let len = shard.len() as u64;
        if len < self.index_size {
            return Err(ArrayError::Other(format!(
                "shard {}: {len} bytes, shorter than its index ({} bytes)",
                unit.key, self.index_size
            )));
        }
        let size = self.index_size as usize;
        Ok(match self.layout.index_location {
            ShardingIndexLocation::Start => &shard[..size],
            ShardingIndexLocation::End => &shard[shard.len() - size..],
        })
    }

    pub(crate) fn decode_index(
        &self,
        unit: &Unit,
        encoded: &[u8],
        shard_len: Option<u64>,
        options: &CodecOptions,
    ) -> Result<ShardIndex, ArrayError> {
        ShardIndex::decode(
            unit.key.as_str(),
            encoded,
            &self.index_shape,
            self.index_size,
            shard_len,
            self.layout,
            options,
        )
    }

    /// Work out the inner chunks the window needs.
    pub(crate) fn with_pieces(mut self, engine: &Engine, unit: &Unit) -> Result<Self, ArrayError> {
        self.pieces = pieces(&engine.layout, unit)?;
        Ok(self)
    }

    /// What a read of the whole shard gives: its index read from `shard`
    /// (checked against its length), and every piece's bytes sliced from
    /// it; `None`, a shard that is not stored, is missing.
    pub(crate) fn pieces_of_whole(
        self,
        engine: &Engine,
        unit: &Unit,
        shard: Option<Bytes>,
        options: &CodecOptions,
    ) -> Result<Fetched, ArrayError> {
        let Some(shard) = shard else {
            return Ok(Fetched::Missing);
        };
        let read = self.with_pieces(engine, unit)?;
        let index = read.decode_index(
            unit,
            read.index_in(unit, &shard)?,
            Some(shard.len() as u64),
            options,
        )?;
        Ok(read.sliced_from(&index, &shard))
    }

    /// The pieces with their bytes sliced from the whole `shard`, whose
    /// index has been checked against its length.
    pub(crate) fn sliced_from(self, index: &ShardIndex, shard: &Bytes) -> Fetched {
        Fetched::Pieces(
            self.pieces
                .into_iter()
                .map(|p| {
                    let bytes = p
                        .inner
                        .and_then(|i| index.range(i))
                        .map(|r| shard.slice(r.start as usize..r.end as usize));
                    (p, bytes)
                })
                .collect(),
        )
    }

    /// After the index alone was read (`encoded`): this read with the
    /// inner chunks the window needs, the index, and the byte ranges of
    /// those stored, for [`read_at`]; `None` when none of them is stored
    /// (the unit is absent).
    pub(crate) fn after_index(
        self,
        engine: &Engine,
        unit: &Unit,
        encoded: &[u8],
        options: &CodecOptions,
    ) -> Result<Option<ChunkCall<'a>>, ArrayError> {
        let index = self.decode_index(unit, encoded, None, options)?;
        let read = self.with_pieces(engine, unit)?;
        let ranges: Vec<ByteRange> = read
            .ranges(&index)
            .into_iter()
            .map(ByteRange::new)
            .collect();
        if ranges.is_empty() {
            return Ok(None);
        }
        Ok(Some((read, index, ranges)))
    }

    /// The ranges to fetch: one per piece present in `index`.
    fn ranges(&self, index: &ShardIndex) -> Vec<Range<u64>> {
        self.pieces
            .iter()
            .filter_map(|p| p.inner.and_then(|i| index.range(i)))
            .collect()
    }

    /// The pieces from the bytes [`read_at`] returned for
    /// [`ranges`](Self::ranges) (the index already checked there), each
    /// checked to be as long as asked for.
    pub(crate) fn assemble(
        self,
        unit: &Unit,
        index: &ShardIndex,
        fetched: Vec<Bytes>,
    ) -> Result<Fetched, ArrayError> {
        let mut fetched = fetched.into_iter();
        let mut out = Vec::with_capacity(self.pieces.len());
        for p in self.pieces {
            let Some(range) = p.inner.and_then(|i| index.range(i)) else {
                out.push((p, None));
                continue;
            };
            let want = range.end - range.start;
            match fetched.next() {
                Some(bytes) if bytes.len() as u64 == want => out.push((p, Some(bytes))),
                got => {
                    return Err(ArrayError::Other(format!(
                        "shard {}: inner chunk {:?}: the store returned {} bytes for offset {}, nbytes {want} (past the shard's end?)",
                        unit.key,
                        p.inner_indices,
                        got.map_or(0, |b| b.len()),
                        range.start
                    )));
                }
            }
        }
        Ok(Fetched::Pieces(out))
    }

    /// An error from fetching the inner chunks, naming the first inner
    /// chunk past the shard's end when the store knows its length.
    pub(crate) fn chunks_error(
        &self,
        unit: &Unit,
        index: &ShardIndex,
        shard_len: Option<u64>,
        error: &StorageError,
    ) -> ArrayError {
        let past_end = shard_len.and_then(|len| {
            self.pieces.iter().find_map(|p| {
                let r = p.inner.and_then(|i| index.range(i))?;
                (r.end > len).then(|| {
                    format!(
                        "inner chunk {:?}: offset {}, nbytes {}: ends past the shard's end ({len} bytes): ",
                        p.inner_indices,
                        r.start,
                        r.end - r.start
                    )
                })
            })
        });
        ArrayError::Other(format!(
            "shard {}: {}{}",
            unit.key,
            past_end.unwrap_or_default(),
            crate::error_chain(error)
        ))
    }
}

/// The piece of a chunk with its bytes (`None`: absent).
pub(crate) fn chunk_pieces(pieces: Vec<Piece>, bytes: Option<Bytes>) -> Fetched {
    match bytes {
        None => Fetched::Missing,
        Some(bytes) => Fetched::Pieces(
            pieces
                .into_iter()
                .map(|p| (p, Some(bytes.clone())))
                .collect(),
        ),
    }
}

/// `error` from reading `unit` (`what`: which read of a shard), naming
/// the key; a change of the object ([`ObjectChanged`]) is passed on as it
/// is, so that the read goes again.
pub(crate) fn storage_error(unit: &Unit, what: &str, error: &StorageError) -> ArrayError {
    if ObjectChanged::in_storage_error(error).is_some() {
        return ArrayError::StorageError(error.clone());
    }
    let kind = if what.is_empty() { "chunk" } else { "shard" };
    // The operating system's refusal keeps its number (`OsReadError`).
    let context = format!("{kind} {}", unit.key);
    let context = match what.strip_suffix(": ") {
        Some(what) => format!("{context}: {what}"),
        None => context,
    };
    let error = ArrayError::StorageError(error.clone());
    crate::read::OsReadError::within(&error, &context).unwrap_or_else(|| {
        ArrayError::Other(format!(
            "{kind} {}: {what}{}",
            unit.key,
            crate::error_chain(&error)
        ))
    })
}

/// Fetch `unit` from a sync store.
pub(crate) fn fetch<S: ?Sized + ReadableStorageTraits>(
    store: &S,
    engine: &Engine,
    unit: &Unit,
    options: &CodecOptions,
) -> Result<Fetched, ArrayError> {
    let read = match plan(engine, unit)? {
        Plan::Chunk(pieces) => {
            let bytes = store
                .get(&unit.key)
                .map_err(|e| storage_error(unit, "", &e))?;
            return Ok(chunk_pieces(pieces, bytes));
        }
        Plan::Shard(read) => read,
    };
    if read.whole {
        let shard = store
            .get(&unit.key)
            .map_err(|e| storage_error(unit, "reading it: ", &e))?;
        return read.pieces_of_whole(engine, unit, shard, options);
    }
    let encoded = read_index(store, &unit.key, read.index_range())
        .map_err(|e| storage_error(unit, "reading its index: ", &e))?;
    let Some(encoded) = encoded else {
        return Ok(Fetched::Missing);
    };
    let Some((read, index, ranges)) = read.after_index(engine, unit, &encoded, options)? else {
        return Ok(Fetched::Absent);
    };
    match read_at(store, &unit.key, read.index_range(), &encoded, ranges) {
        Ok(At::Ranges(bytes)) => read.assemble(unit, &index, bytes),
        Ok(At::Gone) => Ok(Fetched::Missing),
        // Passed on typed, so that the read goes again.
        Err(e) if ObjectChanged::in_storage_error(&e).is_some() => Err(e.into()),
        Err(e) => {
            // On the error path only: the shard's length, to name the inner
            // chunk that reaches past it.
            let len = store.size_key(&unit.key).ok().flatten();
            Err(read.chunks_error(unit, &index, len, &e))
        }
    }
}
