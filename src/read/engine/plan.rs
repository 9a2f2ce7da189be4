//! What a window needs: the arrays the engine reads itself, the chunks or
//! shards ("units") a window touches, and the pieces of each to decode.

use std::collections::VecDeque;
use std::num::NonZeroU64;
use std::sync::{Arc, Mutex};

use zarrs::array::codec::api::CodecError;
use zarrs::array::{
    Array, ArrayError, ArrayMetadata, ArraySubset, BytesRepresentation, CodecChain, DataType,
    FillValue, data_type,
};
use zarrs::array::{ArrayToBytesCodecTraits, CodecTraits};
use zarrs::metadata::v3::MetadataV3;
use zarrs::metadata_ext::codec::sharding::{ShardingCodecConfiguration, ShardingIndexLocation};
use zarrs::plugin::{ExtensionName, ZarrVersion};
use zarrs::storage::StoreKey;

use crate::read::chunk_decode::ChunkDecoder;

/// How the chunks of an array are stored, for the engine.
pub(crate) enum Layout {
    /// One object per chunk, decoded by the array's codec chain.
    Chunks,
    /// One object per shard (`sharding_indexed` as the array's only codec
    /// but for its inner chains): an index, then inner chunks.
    Shards(ShardLayout),
}

/// The parts of a `sharding_indexed` configuration the engine needs.
pub(crate) struct ShardLayout {
    /// The chain of each inner chunk.
    pub(crate) inner_codecs: Arc<CodecChain>,
    /// The shape of an inner chunk.
    pub(crate) subchunk_shape: Vec<NonZeroU64>,
    /// The chain of the index.
    pub(crate) index_codecs: Arc<CodecChain>,
    /// Where the index is.
    pub(crate) index_location: ShardingIndexLocation,
    /// How many bytes an inner chunk has.
    pub(crate) inner_bytes: InnerBytes,
}

/// How many bytes an encoded inner chunk has, from its codecs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum InnerBytes {
    /// Exactly this many (no compression).
    Fixed(u64),
    /// At most this many.
    AtMost(u64),
    /// No bound known.
    Any,
}

/// What the engine knows of one array: its layout, element type and fill
/// value, and the chain of its chunks.
pub(crate) struct Engine {
    pub(crate) layout: Layout,
    pub(crate) codecs: Arc<CodecChain>,
    pub(crate) data_type: DataType,
    pub(crate) fill_value: FillValue,
    pub(crate) element_size: usize,
    /// The array's path, for errors.
    pub(crate) path: String,
    /// Unsharded chunks whose codecs read part of a chunk's bytes (no
    /// compression): a part of such a chunk is read by zarrs' partial
    /// decoder, which fetches only what the part needs.
    partial_chunks: bool,
    /// The decoders made so far, by chunk shape (one for a regular grid;
    /// a decoder's lookup table is made once, not once per chunk, shard or
    /// read).
    decoders: Mutex<Vec<(Vec<NonZeroU64>, Arc<ChunkDecoder>)>>,
}

/// Decoders kept per engine at most (a rectilinear grid has a shape per
/// edge; past this many, a decoder is made for the unit and let go).
const DECODERS_KEPT: usize = 8;

/// Engines of the arrays read lately: the decision "engine or zarrs", the
/// plan and the decoders are made at an array's first read and kept for
/// the next ones.
///
/// An array is known by its codec chain (`Array::codecs()` hands out the
/// array's own `Arc`, the same at every call; zarrs has no setter for an
/// array's codecs, data type or fill value) and its path. The entry holds
/// the chain, so its address cannot be reused by another chain while the
/// entry lives: `Arc::ptr_eq` names one array's chain. Past
/// [`ENGINES_KEPT`] arrays, the least recently read goes first.
static ENGINES: Mutex<VecDeque<KeptEngine>> = Mutex::new(VecDeque::new());

/// Why the engine does not read `array`: [`engine_refusal`](crate::read::engine_refusal).
pub(crate) fn refusal<S: ?Sized>(array: &Array<S>) -> Option<String> {
    Engine::build(array).err()
}

/// Arrays whose engines are kept.
const ENGINES_KEPT: usize = 32;

struct KeptEngine {
    codecs: Arc<CodecChain>,
    path: String,
    engine: Option<Arc<Engine>>,
}

fn kept_engines() -> std::sync::MutexGuard<'static, VecDeque<KeptEngine>> {
    // A panic while holding it leaves whole entries.
    ENGINES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Engine {
    /// The engine for `array`, or `None` where zarrs' own read is used:
    /// a data type without a fixed size or with a mask, storage
    /// transformers, sharding behind array -> array codecs or in front of
    /// bytes -> bytes codecs (whole shards transformed), and nested
    /// sharding.
    pub(crate) fn for_array<S: ?Sized>(array: &Array<S>) -> Option<Arc<Self>> {
        let codecs = array.codecs();
        let path = array.path().as_str();
        let is_this = |k: &KeptEngine| Arc::ptr_eq(&k.codecs, &codecs) && k.path == path;
        {
            let mut kept = kept_engines();
            if let Some(at) = kept.iter().position(is_this) {
                let entry = kept.remove(at).expect("found above");
                let engine = entry.engine.clone();
                kept.push_back(entry);
                return engine;
            }
        }
        let engine = Self::build(array).ok().map(Arc::new);
        let mut kept = kept_engines();
        // Another read of the array may have made one meanwhile: that one
        // is kept, and used, so that one array has one engine.
        if let Some(other) = kept.iter().find(|k| is_this(k)) {
            return other.engine.clone();
        }
        kept.push_back(KeptEngine {
            codecs,
            path: path.to_string(),
            engine: engine.clone(),
        });
        while kept.len() > ENGINES_KEPT {
            kept.pop_front();
        }
        engine
    }

    /// The decoder of the chunks (of a shard: the inner chunks) of
    /// `shape`, made once.
    pub(crate) fn decoder(&self, shape: &[NonZeroU64]) -> Arc<ChunkDecoder> {
        let codecs = match &self.layout {
            Layout::Chunks => &self.codecs,
            Layout::Shards(shards) => &shards.inner_codecs,
        };
        let make = || {
            Arc::new(ChunkDecoder::new(
                codecs.clone(),
                shape.to_vec(),
                self.data_type.clone(),
                self.fill_value.clone(),
            ))
        };
        let mut decoders = self
            .decoders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, decoder)) = decoders.iter().find(|(s, _)| s.as_slice() == shape) {
            return decoder.clone();
        }
        let decoder = make();
        if decoders.len() < DECODERS_KEPT {
            decoders.push((shape.to_vec(), decoder.clone()));
        }
        decoder
    }

    /// The engine for `array`, made anew (see [`for_array`](Self::for_array)),
    /// or why the engine does not read it (the words finish "the engine
    /// does not read ...").
    fn build<S: ?Sized>(array: &Array<S>) -> Result<Self, String> {
        let data_type = array.data_type().clone();
        let type_name = || {
            data_type
                .name(ZarrVersion::V3)
                .map_or_else(|| data_type.to_string(), |n| n.into_owned())
        };
        if data_type.is_optional() {
            return Err(format!("data types with a mask: {}", type_name()));
        }
        let Some(element_size) = data_type.fixed_size() else {
            return Err(format!("variable-length data types: {}", type_name()));
        };
        if has_storage_transformers(array) {
            return Err("arrays with storage transformers".to_string());
        }
        let codecs = array.codecs();
        let names = |codecs: Vec<Option<std::borrow::Cow<'static, str>>>| {
            codecs
                .into_iter()
                .map(|n| n.map_or_else(|| "(unnamed codec)".to_string(), |n| n.into_owned()))
                .collect::<Vec<_>>()
                .join(" -> ")
        };
        let layout = match sharding(&codecs) {
            Sharding::No => Layout::Chunks,
            Sharding::Yes(layout) => {
                let layout = *layout;
                if !matches!(sharding(&layout.inner_codecs), Sharding::No) {
                    return Err("nested sharding_indexed".to_string());
                }
                let before = codecs.array_to_array_codecs();
                if !before.is_empty() {
                    let before = before.iter().map(|c| c.name(ZarrVersion::V3)).collect();
                    return Err(format!(
                        "sharding_indexed behind array -> array codecs: {}",
                        names(before)
                    ));
                }
                let after = codecs.bytes_to_bytes_codecs();
                if !after.is_empty() {
                    let after = after.iter().map(|c| c.name(ZarrVersion::V3)).collect();
                    return Err(format!(
                        "sharding_indexed in front of bytes -> bytes codecs: {}",
                        names(after)
                    ));
                }
                let inner_bytes =
                    inner_bytes(&layout, &data_type, array.fill_value()).map_err(|e| {
                        format!("inner chunks whose encoded size the codecs cannot say ({e})")
                    })?;
                Layout::Shards(ShardLayout {
                    inner_bytes,
                    ..layout
                })
            }
            Sharding::Unknown => return Err("this sharding_indexed configuration".to_string()),
        };
        let partial_chunks =
            matches!(layout, Layout::Chunks) && codecs.partial_decoder_capability().partial_read;
        Ok(Self {
            partial_chunks,
            decoders: Mutex::new(Vec::new()),
            layout,
            codecs,
            data_type,
            fill_value: array.fill_value().clone(),
            element_size,
            path: array.path().to_string(),
        })
    }
}

impl Engine {
    /// Whether `unit` is read by zarrs: part of an
    /// unsharded chunk whose codecs can read part of its bytes (fetching
    /// the whole chunk would cost more I/O than the window needs).
    /// So is a shard whose shape the inner chunks do not divide (zarrs
    /// reads it if it is absent, and says what is wrong otherwise).
    pub(crate) fn zarrs_reads(&self, unit: &Unit) -> bool {
        match &self.layout {
            Layout::Chunks => self.partial_chunks && !unit.whole,
            Layout::Shards(shards) => chunks_per_shard(unit, shards).is_err(),
        }
    }
}

#[cfg(feature = "async")]
impl Engine {
    /// The stored bytes a fetch of `unit` holds, at most as far as the
    /// codecs tell (a compressor's bound), else the decoded bytes of what
    /// it fetches: what a read budgets for fetched bytes held in memory.
    pub(crate) fn fetched_bytes_bound(&self, unit: &Unit) -> usize {
        let elements = |shape: &[u64]| shape.iter().product::<u64>();
        let decoded = |elements: u64| {
            usize::try_from(elements)
                .unwrap_or(usize::MAX)
                .saturating_mul(self.element_size)
        };
        if self.zarrs_reads(unit) {
            return decoded(unit.part.num_elements());
        }
        match &self.layout {
            Layout::Chunks => {
                let shape: Vec<u64> = unit.shape.iter().map(|s| s.get()).collect();
                match self.codecs.encoded_representation(
                    &unit.shape,
                    &self.data_type,
                    &self.fill_value,
                ) {
                    Ok(BytesRepresentation::FixedSize(n) | BytesRepresentation::BoundedSize(n)) => {
                        usize::try_from(n).unwrap_or(usize::MAX)
                    }
                    _ => decoded(elements(&shape)),
                }
            }
            Layout::Shards(shards) => {
                // The inner chunks the part touches, each at most its bound.
                let sub: Vec<u64> = shards.subchunk_shape.iter().map(|s| s.get()).collect();
                let count = inner_ranges(unit, &sub)
                    .iter()
                    .map(|r| r.end - r.start)
                    .product::<u64>();
                let each = match shards.inner_bytes {
                    InnerBytes::Fixed(n) | InnerBytes::AtMost(n) => {
                        usize::try_from(n).unwrap_or(usize::MAX)
                    }
                    InnerBytes::Any => decoded(elements(&sub)),
                };
                usize::try_from(count)
                    .unwrap_or(usize::MAX)
                    .saturating_mul(each)
            }
        }
    }
}

enum Sharding {
    No,
    Yes(Box<ShardLayout>),
    /// Sharding whose configuration the engine cannot read.
    Unknown,
}

/// Whether `array` has storage transformers, which the crate's read and
/// write paths do not apply (zarrs reads and writes such arrays).
pub(crate) fn has_storage_transformers<S: ?Sized>(array: &Array<S>) -> bool {
    matches!(array.metadata(), ArrayMetadata::V3(m) if !m.storage_transformers.is_empty())
}

/// How many bytes `layout`'s inner codecs write for one inner chunk of
/// `data_type` (what the index entries are checked against): the read
/// plan's and the write path's one answer.
pub(crate) fn inner_bytes(
    layout: &ShardLayout,
    data_type: &DataType,
    fill_value: &FillValue,
) -> Result<InnerBytes, CodecError> {
    Ok(
        match layout.inner_codecs.encoded_representation(
            &layout.subchunk_shape,
            data_type,
            fill_value,
        )? {
            BytesRepresentation::FixedSize(n) => InnerBytes::Fixed(n),
            BytesRepresentation::BoundedSize(n) => InnerBytes::AtMost(n),
            BytesRepresentation::UnboundedSize => InnerBytes::Any,
        },
    )
}

/// The configuration of `codecs`' `sharding_indexed`, when they end in one
/// whose configuration the engine reads (for the write path, which asks
/// the same question).
pub(crate) fn shard_layout(codecs: &CodecChain) -> Option<ShardLayout> {
    match sharding(codecs) {
        Sharding::Yes(layout) => Some(*layout),
        Sharding::No | Sharding::Unknown => None,
    }
}

/// Whether `codecs` end in `sharding_indexed`, and its configuration.
fn sharding(codecs: &CodecChain) -> Sharding {
    let codec = codecs.array_to_bytes_codec();
    // By name, not by type: zarrs' `ShardingCodec` exists only under its
    // `sharding` feature, which this crate does not turn on.
    if codec.name(ZarrVersion::V3).as_deref() != Some("sharding_indexed") {
        return Sharding::No;
    }
    let Some(configuration) = codec.configuration_v3(&Default::default()) else {
        return Sharding::Unknown;
    };
    let Ok(ShardingCodecConfiguration::V1(configuration)) =
        serde_json::from_value::<ShardingCodecConfiguration>(serde_json::Value::Object(
            configuration.into(),
        ))
    else {
        return Sharding::Unknown;
    };
    let chain = |metadata: &[MetadataV3]| CodecChain::from_metadata(metadata).ok().map(Arc::new);
    let (Some(inner_codecs), Some(index_codecs)) = (
        chain(&configuration.codecs),
        chain(&configuration.index_codecs),
    ) else {
        return Sharding::Unknown;
    };
    Sharding::Yes(Box::new(ShardLayout {
        inner_codecs,
        subchunk_shape: configuration.chunk_shape.to_vec(),
        index_codecs,
        index_location: configuration.index_location,
        inner_bytes: InnerBytes::Any,
    }))
}

/// One chunk or shard a window touches.
pub(crate) struct Unit {
    /// Its key in the store.
    pub(crate) key: StoreKey,
    /// Its shape (not bounded by the array's).
    pub(crate) shape: Vec<NonZeroU64>,
    /// The part of the window inside it, in array coordinates.
    pub(crate) part: ArraySubset,
    /// The part of the window inside it, in the window's coordinates.
    pub(crate) out: ArraySubset,
    /// `part` relative to the unit's origin.
    pub(crate) inside: ArraySubset,
    /// Whether `part` is all of the chunk that lies inside the array.
    pub(crate) whole: bool,
}

/// The chunks (or shards) `window` touches, in C order.
pub(crate) fn units<S: ?Sized>(
    array: &Array<S>,
    window: &ArraySubset,
) -> Result<Vec<Unit>, ArrayError> {
    let Some(grid) = array.chunks_in_array_subset(window)? else {
        return Err(ArrayError::Other(format!(
            "array {}: window {window} does not lie on the chunk grid",
            array.path()
        )));
    };
    let mut units = Vec::with_capacity(usize::try_from(grid.num_elements()).unwrap_or(0));
    for indices in &grid.indices() {
        let chunk = array.chunk_subset(&indices)?;
        let part = chunk.overlap(window)?;
        if part.is_empty() {
            continue;
        }
        units.push(Unit {
            whole: part == array.chunk_subset_bounded(&indices)?,
            key: array.chunk_key(&indices),
            shape: array.chunk_shape(&indices)?.to_vec(),
            out: part.relative_to(window.start())?,
            inside: part.relative_to(chunk.start())?,
            part,
        });
    }
    Ok(units)
}

/// One inner chunk of a shard to decode, or the whole chunk of an
/// unsharded unit.
pub(crate) struct Piece {
    /// Its index in the shard's index (C order), if an inner chunk.
    pub(crate) inner: Option<usize>,
    /// Its indices in the shard's grid of inner chunks (for errors).
    pub(crate) inner_indices: Vec<u64>,
    /// The part to decode, relative to the chunk.
    pub(crate) chunk_subset: ArraySubset,
    /// Where it goes, relative to the unit's part of the window.
    pub(crate) out: ArraySubset,
}

/// The pieces of `unit`: one for a chunk; the inner chunks the window
/// needs for a shard, in C order.
pub(crate) fn pieces(layout: &Layout, unit: &Unit) -> Result<Vec<Piece>, ArrayError> {
    let Layout::Shards(shards) = layout else {
        return Ok(vec![Piece {
            inner: None,
            inner_indices: Vec::new(),
            chunk_subset: unit.inside.clone(),
            out: ArraySubset::new_with_shape(unit.part.shape().to_vec()),
        }]);
    };
    let per_shard = chunks_per_shard(unit, shards)?;
    let sub: Vec<u64> = shards.subchunk_shape.iter().map(|s| s.get()).collect();
    let start = unit.inside.start();
    let inner_grid = ArraySubset::new_with_ranges(&inner_ranges(unit, &sub));
    let mut pieces = Vec::with_capacity(usize::try_from(inner_grid.num_elements()).unwrap_or(0));
    for indices in &inner_grid.indices() {
        let origin: Vec<u64> = indices.iter().zip(&sub).map(|(i, s)| i * s).collect();
        let inner = ArraySubset::new_with_start_shape(origin.clone(), sub.clone())?;
        let overlap = inner.overlap(&unit.inside)?;
        let linear = indices
            .iter()
            .zip(&per_shard)
            .fold(0u64, |acc, (&i, &n)| acc * n + i);
        pieces.push(Piece {
            inner: Some(usize::try_from(linear).map_err(|_| too_many(unit))?),
            chunk_subset: overlap.relative_to(&origin)?,
            out: overlap.relative_to(start)?,
            inner_indices: indices.to_vec(),
        });
    }
    Ok(pieces)
}

/// The inner chunks `unit`'s part touches, along each dimension, for inner
/// chunks of shape `sub`.
fn inner_ranges(unit: &Unit, sub: &[u64]) -> Vec<std::ops::Range<u64>> {
    let start = unit.inside.start();
    let end = unit.inside.end_exc();
    start
        .iter()
        .zip(&end)
        .zip(sub)
        .map(|((s, e), c)| s / c..e.saturating_sub(1) / c + 1)
        .collect()
}

fn too_many(unit: &Unit) -> ArrayError {
    ArrayError::Other(format!(
        "shard {}: more inner chunks than this machine can address",
        unit.key
    ))
}

/// Inner chunks along each dimension of `unit`'s shard.
pub(crate) fn chunks_per_shard(unit: &Unit, shards: &ShardLayout) -> Result<Vec<u64>, ArrayError> {
    inner_chunks_per_shard(&unit.shape, &shards.subchunk_shape)
        .map_err(|why| ArrayError::Other(format!("shard {}: {why}", unit.key)))
}

/// Inner chunks of shape `inner` along each dimension of a shard of shape
/// `shard`; why not, when they do not tile it.
pub(crate) fn inner_chunks_per_shard(
    shard: &[NonZeroU64],
    inner: &[NonZeroU64],
) -> Result<Vec<u64>, String> {
    if shard.len() != inner.len() {
        return Err(format!(
            "sharding_indexed chunk_shape {inner:?} has {} dimensions, the shard {}",
            inner.len(),
            shard.len()
        ));
    }
    shard
        .iter()
        .zip(inner)
        .map(|(s, c)| {
            if s.get() % c.get() == 0 {
                Ok(s.get() / c.get())
            } else {
                Err(format!(
                    "sharding_indexed chunk_shape {inner:?} does not divide the shard shape {shard:?}"
                ))
            }
        })
        .collect()
}

/// The encoded size of `unit`'s shard index.
pub(crate) fn index_size(
    unit: &Unit,
    shards: &ShardLayout,
) -> Result<(Vec<NonZeroU64>, u64), ArrayError> {
    let per_shard = chunks_per_shard(unit, shards)?;
    shard_index_size(unit.key.as_str(), &per_shard, &shards.index_codecs)
}

/// The shape of the index of the shard `key`, of `grid` inner chunks, and
/// its size as `index_codecs` encode it (which must be fixed); for reads
/// and writes alike.
pub(crate) fn shard_index_size(
    key: &str,
    grid: &[u64],
    index_codecs: &CodecChain,
) -> Result<(Vec<NonZeroU64>, u64), ArrayError> {
    let mut shape: Vec<NonZeroU64> = grid
        .iter()
        .map(|&n| NonZeroU64::new(n).expect("a shard has at least one inner chunk"))
        .collect();
    shape.push(NonZeroU64::new(2).expect("2 is not zero"));
    match index_codecs.encoded_representation(
        &shape,
        &data_type::uint64(),
        &FillValue::from(u64::MAX),
    )? {
        BytesRepresentation::FixedSize(size) => Ok((shape, size)),
        _ => Err(ArrayError::Other(format!(
            "shard {key}: sharding_indexed index_codecs do not give an index of fixed size"
        ))),
    }
}

#[cfg(test)]
mod kept_engine_tests {
    use std::sync::Arc;

    use zarrs::array::{Array, ArrayBuilder, data_type};
    use zarrs::storage::store::MemoryStore;

    use super::{ENGINES_KEPT, Engine};

    fn array(store: &Arc<MemoryStore>, path: &str) -> Array<MemoryStore> {
        let array = ArrayBuilder::new(vec![8, 8], vec![4, 4], data_type::uint16(), 0u16)
            .build(store.clone(), path)
            .unwrap();
        array.store_metadata().unwrap();
        array
    }

    /// One engine and one decoder per array, for every read of it; an
    /// array opened again (a new chain) gets its own; the kept engines
    /// stay within their number.
    #[test]
    fn an_array_keeps_its_engine_and_decoders() {
        let store = Arc::new(MemoryStore::new());
        let first = array(&store, "/a");
        let engine = Engine::for_array(&first).unwrap();
        assert!(Arc::ptr_eq(&engine, &Engine::for_array(&first).unwrap()));
        let shape = first.chunk_shape(&[0, 0]).unwrap();
        let decoder = engine.decoder(&shape);
        assert!(Arc::ptr_eq(&decoder, &engine.decoder(&shape)));
        // The same metadata opened again: another chain, another engine.
        let again = Array::open(store.clone(), "/a").unwrap();
        assert!(!Arc::ptr_eq(&engine, &Engine::for_array(&again).unwrap()));
        // Past the number kept, the least recently read goes first: the
        // first array's engine is made anew.
        for i in 0..ENGINES_KEPT {
            Engine::for_array(&array(&store, &format!("/n{i}")));
        }
        assert!(!Arc::ptr_eq(&engine, &Engine::for_array(&first).unwrap()));
    }

    /// Arrays at the same path of two stores, of other data types and fill
    /// values, have engines of their own.
    #[test]
    fn arrays_alike_but_for_their_store_have_their_own_engines() {
        let a = array(&Arc::new(MemoryStore::new()), "/");
        let b = ArrayBuilder::new(vec![8, 8], vec![4, 4], data_type::float32(), 1.5f32)
            .build(Arc::new(MemoryStore::new()), "/")
            .unwrap();
        let (ea, eb) = (
            Engine::for_array(&a).unwrap(),
            Engine::for_array(&b).unwrap(),
        );
        assert!(!Arc::ptr_eq(&ea, &eb));
        assert_eq!((ea.element_size, eb.element_size), (2, 4));
    }
}
