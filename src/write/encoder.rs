//! One chunk or shard encoded from the caller's memory.
//!
//! zarrs' `ShardingCodec` encodes a shard from one contiguous copy of it
//! (the caller's window gathered first, a shard-sized buffer), copies each
//! inner chunk out of that copy again, and lays the inner chunks out in C
//! order. [`ChunkEncoder`] gathers each inner chunk straight from the
//! caller's memory into a buffer of its own on the worker that encodes it,
//! encodes the inner chunks in parallel with the inner codecs (the same
//! codecs zarrs runs, so the same bytes per inner chunk), and lays them out
//! in the order asked for: zarr-python's Morton order by default, so that a
//! shard whose codecs do not compress is byte for byte zarr-python's.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::Arc;

use rayon::prelude::*;
use zarrs::array::codec::CodecChain;
use zarrs::array::codec::api::{ArrayToArrayCodecTraits, ArrayToBytesCodecTraits, CodecError};
use zarrs::array::{Array, ArrayBytes, ArrayError, CodecOptions, DataType, FillValue, data_type};
use zarrs::metadata_ext::codec::sharding::ShardingIndexLocation;

use super::damaged::StoredChunkDamaged;
use super::order::InnerOrder;
use super::strided::Strided;
use crate::error_chain;
use crate::numeric::NumericType;
use crate::read::engine::plan::{
    InnerBytes, ShardLayout, inner_bytes, inner_chunks_per_shard, shard_index_size, shard_layout,
};
use crate::read::engine::shard_index::{ShardIndex, unravel};

/// The shard half of a [`ChunkEncoder`].
struct Shards {
    /// The array -> array codecs in front of `sharding_indexed`, run on the
    /// whole shard first.
    before: Vec<Arc<dyn ArrayToArrayCodecTraits>>,
    /// The data type and fill value `sharding_indexed` sees (after
    /// `before`), and the element size.
    data_type: DataType,
    fill_value: FillValue,
    item: usize,
    nan_fill: Option<NumericType>,
    /// The configuration of `sharding_indexed`, as the read engine has it.
    layout: ShardLayout,
}

/// Encodes the chunks (or shards) of one array from strided memory; built
/// once per array.
///
/// Chunks whose elements all are the fill value are not stored (`None`),
/// nor are such inner chunks of a shard, and a shard whose inner chunks
/// all are is not stored either, as zarr-python does unless its
/// `write_empty_chunks` is set ([`keep_fill_chunks`](Self::keep_fill_chunks)).
pub struct ChunkEncoder {
    codecs: Arc<CodecChain>,
    data_type: DataType,
    fill_value: FillValue,
    item: usize,
    nan_fill: Option<NumericType>,
    shards: Option<Shards>,
    order: InnerOrder,
    keep_fill: bool,
}

impl ChunkEncoder {
    /// The encoder of `array`'s chunks. An array whose chain ends in
    /// `sharding_indexed` with no bytes -> bytes codec after it is encoded
    /// shard by shard here (array -> array codecs in front of it run on
    /// the whole shard first; shards within its shards are encoded by
    /// zarrs' codec); other chains, and a sharding configuration the crate
    /// does not read, by their codecs ([`lays_out_shards`](Self::lays_out_shards)
    /// says which).
    ///
    /// # Errors
    /// For a data type without a fixed size.
    pub fn new<S: ?Sized>(array: &Array<S>) -> Result<Self, ArrayError> {
        let item = array.data_type().fixed_size().ok_or_else(|| {
            ArrayError::Other(format!(
                "array {}: data type {} has no fixed size: not written by the crate's encoder",
                array.path(),
                array.data_type()
            ))
        })?;
        let codecs = array.codecs();
        let mut shards = None;
        if let Some(layout) = shard_layout(&codecs)
            && codecs.bytes_to_bytes_codecs().is_empty()
        {
            let before = codecs.array_to_array_codecs().to_vec();
            let (mut data_type, mut fill_value) =
                (array.data_type().clone(), array.fill_value().clone());
            for codec in &before {
                let next = codec.encoded_data_type(&data_type)?;
                fill_value = codec.encoded_fill_value(&data_type, &fill_value)?;
                data_type = next;
            }
            if let Some(item) = data_type.fixed_size() {
                // The stored index entries of the inner chunks a write keeps
                // are checked as a read checks them (a kept entry of the
                // wrong size made a shard no reader opens, the write a
                // success). Codecs that cannot say their size check nothing
                // more here; the read plan refuses such shards.
                let inner_bytes =
                    inner_bytes(&layout, &data_type, &fill_value).unwrap_or(InnerBytes::Any);
                shards = Some(Shards {
                    before,
                    nan_fill: nan_fill(&data_type, &fill_value),
                    data_type,
                    fill_value,
                    item,
                    layout: ShardLayout {
                        inner_bytes,
                        ..layout
                    },
                });
            }
        }
        Ok(Self {
            codecs,
            data_type: array.data_type().clone(),
            fill_value: array.fill_value().clone(),
            item,
            nan_fill: nan_fill(array.data_type(), array.fill_value()),
            shards,
            order: InnerOrder::default(),
            keep_fill: false,
        })
    }

    /// Lay out inner chunks in `order` (default: Morton, as zarr-python).
    #[must_use]
    pub fn with_order(mut self, order: InnerOrder) -> Self {
        self.order = order;
        self
    }

    /// Store chunks and inner chunks of fill values too (zarr-python's
    /// `write_empty_chunks`).
    #[must_use]
    pub fn keep_fill_chunks(mut self, keep: bool) -> Self {
        self.keep_fill = keep;
        self
    }

    /// The size of an element, in bytes.
    #[must_use]
    pub fn item(&self) -> usize {
        self.item
    }

    /// Whether shards are laid out here (rather than by zarrs' codecs).
    #[must_use]
    pub fn lays_out_shards(&self) -> bool {
        self.shards.is_some()
    }

    /// The bytes to store for the chunk `key` of `shape`, whose elements
    /// are `source` (of that shape), or `None` when nothing is to be stored
    /// (the key is to be erased). Inner chunks are encoded in parallel on
    /// the current rayon pool; `options` go to the codecs.
    ///
    /// # Errors
    /// When `source` is not of `shape` or of this array's element size, or
    /// a codec fails: the message names `key` and the inner chunk.
    pub fn encode(
        &self,
        key: &str,
        shape: &[NonZeroU64],
        source: &Strided<'_>,
        options: &CodecOptions,
    ) -> Result<Option<Vec<u8>>, ArrayError> {
        let dims: Vec<u64> = shape.iter().map(|n| n.get()).collect();
        if source.shape() != dims.as_slice() || source.item() != self.item {
            return Err(ArrayError::Other(format!(
                "chunk {key}: elements of shape {:?} and {} bytes, the chunk's are {dims:?} and {}",
                source.shape(),
                source.item(),
                self.item
            )));
        }
        let Some(shards) = &self.shards else {
            return self.encode_chunk(key, shape, source.to_c_order(), options);
        };
        if shards.before.is_empty() {
            return self.encode_shard(key, shards, shape, source, options);
        }
        // The codecs in front of the shard run on it whole, as in zarrs.
        let mut bytes = ArrayBytes::new_flen(Cow::Owned(source.to_c_order()));
        let (mut shape, mut data_type, mut fill_value) = (
            shape.to_vec(),
            self.data_type.clone(),
            self.fill_value.clone(),
        );
        let in_front =
            |e: CodecError| ArrayError::Other(format!("shard {key}: {}", error_chain(&e)));
        for codec in &shards.before {
            bytes = codec
                .encode(bytes, &shape, &data_type, &fill_value, options)
                .map_err(in_front)?;
            let next = codec.encoded_data_type(&data_type).map_err(in_front)?;
            fill_value = codec
                .encoded_fill_value(&data_type, &fill_value)
                .map_err(in_front)?;
            data_type = next;
            shape = codec.encoded_shape(&shape).map_err(in_front)?;
        }
        let encoded = bytes
            .into_fixed()
            .map_err(|e| ArrayError::Other(format!("shard {key}: {e}")))?;
        let dims: Vec<u64> = shape.iter().map(|n| n.get()).collect();
        let view = Strided::c_contiguous(&encoded, &dims, shards.item)
            .map_err(|why| ArrayError::Other(format!("shard {key}: {why}")))?;
        self.encode_shard(key, shards, &shape, &view, options)
    }

    /// The shard `key` of `shape` (as `sharding_indexed` sees it) from
    /// `source`.
    fn encode_shard(
        &self,
        key: &str,
        shards: &Shards,
        shape: &[NonZeroU64],
        source: &Strided<'_>,
        options: &CodecOptions,
    ) -> Result<Option<Vec<u8>>, ArrayError> {
        // Every inner chunk is in the box: each is encoded from `source`.
        let origin = vec![0u64; shape.len()];
        self.update_shard(key, shards, shape, None, &origin, source, options)
    }

    /// The bytes to store for the chunk `key` of `shape` whose box of
    /// `source`'s shape at `at` is overwritten by `source`, the rest kept
    /// as `stored` (its stored bytes, `None` when nothing is stored: fill
    /// values); `None` when nothing is to be stored.
    ///
    /// Of a shard laid out here with no array -> array codec in front of
    /// `sharding_indexed`, only the inner chunks the box touches are
    /// encoded again (those it covers in part are decoded first); the
    /// others keep their stored bytes as they are, as zarr-python's
    /// sharding codec keeps them. Any other chunk (shards behind array ->
    /// array codecs included) is decoded, merged and encoded whole.
    /// Stored bytes that do not read give a [`StoredChunkDamaged`].
    ///
    /// # Errors
    /// When the box does not fit in the chunk, `stored` does not decode
    /// (its index, or an inner chunk the box covers in part), or a codec
    /// fails: the message names `key` (and the inner chunk).
    pub fn encode_update(
        &self,
        key: &str,
        shape: &[NonZeroU64],
        stored: Option<&[u8]>,
        at: &[u64],
        source: &Strided<'_>,
        options: &CodecOptions,
    ) -> Result<Option<Vec<u8>>, ArrayError> {
        let dims: Vec<u64> = shape.iter().map(|n| n.get()).collect();
        let fits = at.len() == dims.len()
            && source.shape().len() == dims.len()
            && at
                .iter()
                .zip(source.shape())
                .zip(&dims)
                .all(|((&a, &n), &d)| a.checked_add(n).is_some_and(|end| end <= d));
        if !fits || source.item() != self.item {
            return Err(ArrayError::Other(format!(
                "chunk {key}: a box of shape {:?} at {at:?} of {}-byte elements does not fit the chunk's {dims:?} of {}",
                source.shape(),
                source.item(),
                self.item
            )));
        }
        match &self.shards {
            Some(shards) if shards.before.is_empty() => {
                self.update_shard(key, shards, shape, stored, at, source, options)
            }
            _ => {
                // The whole chunk: as stored (or fill values), then the box.
                let mut merged = stored_or_fill(
                    &self.codecs,
                    (&self.data_type, &self.fill_value),
                    shape,
                    stored,
                    options,
                )
                .map_err(|e| StoredChunkDamaged::new(format!("chunk {key}"), error_chain(&e)))?;
                source.overlay(at, &mut merged, &dims, &vec![0; dims.len()]);
                if self.shards.is_none() {
                    return self.encode_chunk(key, shape, merged, options);
                }
                let view = Strided::c_contiguous(&merged, &dims, self.item)
                    .map_err(|why| ArrayError::Other(format!("chunk {key}: {why}")))?;
                self.encode(key, shape, &view, options)
            }
        }
    }

    /// [`encode_update`](Self::encode_update) of a shard: the inner chunks
    /// the box touches encoded again, the others' stored bytes kept.
    #[allow(clippy::too_many_arguments)]
    fn update_shard(
        &self,
        key: &str,
        shards: &Shards,
        shape: &[NonZeroU64],
        stored: Option<&[u8]>,
        at: &[u64],
        source: &Strided<'_>,
        options: &CodecOptions,
    ) -> Result<Option<Vec<u8>>, ArrayError> {
        let grid = inner_chunks_per_shard(shape, &shards.layout.subchunk_shape)
            .map_err(|why| ArrayError::Other(format!("shard {key}: {why}")))?;
        let inner: Vec<u64> = shards
            .layout
            .subchunk_shape
            .iter()
            .map(|n| n.get())
            .collect();
        let count = grid.iter().product::<u64>() as usize;
        let old = match stored {
            Some(bytes) => stored_chunks(key, shards, &grid, bytes, options)?,
            None => vec![None; count],
        };
        let end: Vec<u64> = at.iter().zip(source.shape()).map(|(a, n)| a + n).collect();
        let one = options.with_concurrent_target(1);
        let updated: Vec<Option<Cow<'_, [u8]>>> = (0..count)
            .into_par_iter()
            .map(|p| {
                let c = unravel(p, &grid);
                let start: Vec<u64> = c.iter().zip(&inner).map(|(&c, &n)| c * n).collect();
                let stop: Vec<u64> = start.iter().zip(&inner).map(|(s, n)| s + n).collect();
                let touched = (0..start.len()).all(|d| start[d] < end[d] && at[d] < stop[d]);
                if !touched {
                    return Ok(old[p].map(Cow::Borrowed));
                }
                let covered = (0..start.len()).all(|d| at[d] <= start[d] && stop[d] <= end[d]);
                let encoded = if covered {
                    let relative: Vec<u64> = start.iter().zip(at).map(|(s, a)| s - a).collect();
                    self.encode_inner(shards, source.sub(&relative, &inner).to_c_order(), &one)
                } else {
                    // Part of the inner chunk: as stored (or fill values),
                    // then the box's part of it.
                    let mut merged = stored_or_fill(
                        &shards.layout.inner_codecs,
                        (&shards.data_type, &shards.fill_value),
                        &shards.layout.subchunk_shape,
                        old[p],
                        &one,
                    )
                    .map_err(|e| {
                        StoredChunkDamaged::new(
                            format!("shard {key}"),
                            format!("inner chunk {c:?}: {}", error_chain(&e)),
                        )
                    })?;
                    source.overlay(at, &mut merged, &inner, &start);
                    self.encode_inner(shards, merged, &one)
                };
                encoded.map(|e| e.map(Cow::Owned)).map_err(|e| {
                    ArrayError::Other(format!(
                        "shard {key}: inner chunk {c:?}: {}",
                        error_chain(&e)
                    ))
                })
            })
            .collect::<Result<_, ArrayError>>()?;
        if updated.iter().all(Option::is_none) {
            return Ok(None);
        }
        self.assemble(key, shards, &grid, updated, options)
            .map(Some)
    }

    /// A chunk that is not a shard from its `elements` (C order), through
    /// the array's codecs; `None` for fill values not kept.
    fn encode_chunk(
        &self,
        key: &str,
        shape: &[NonZeroU64],
        elements: Vec<u8>,
        options: &CodecOptions,
    ) -> Result<Option<Vec<u8>>, ArrayError> {
        self.encode_one(
            &self.codecs,
            (&self.data_type, &self.fill_value, self.nan_fill),
            shape,
            elements,
            options,
        )
        .map_err(|e| ArrayError::Other(format!("chunk {key}: {}", error_chain(&e))))
    }

    /// An inner chunk from its `elements` (C order), through the inner
    /// codecs; `None` for fill values not kept.
    fn encode_inner(
        &self,
        shards: &Shards,
        elements: Vec<u8>,
        options: &CodecOptions,
    ) -> Result<Option<Vec<u8>>, ArrayError> {
        self.encode_one(
            &shards.layout.inner_codecs,
            (&shards.data_type, &shards.fill_value, shards.nan_fill),
            &shards.layout.subchunk_shape,
            elements,
            options,
        )
    }

    /// `elements` (C order, of `shape`) through `codecs`; `None` for fill
    /// values not kept.
    fn encode_one(
        &self,
        codecs: &CodecChain,
        (data_type, fill_value, nan): (&DataType, &FillValue, Option<NumericType>),
        shape: &[NonZeroU64],
        elements: Vec<u8>,
        options: &CodecOptions,
    ) -> Result<Option<Vec<u8>>, ArrayError> {
        let bytes = ArrayBytes::new_flen(Cow::Owned(elements));
        if !self.keep_fill && is_fill(&bytes, fill_value, nan) {
            return Ok(None);
        }
        let encoded = codecs.encode(bytes, shape, data_type, fill_value, options)?;
        Ok(Some(encoded.into_owned()))
    }

    /// The shard: the index (offsets from the shard's first byte, `u64::MAX`
    /// twice for an inner chunk not stored) and the inner chunks in order.
    fn assemble(
        &self,
        key: &str,
        shards: &Shards,
        grid: &[u64],
        encoded: Vec<Option<Cow<'_, [u8]>>>,
        options: &CodecOptions,
    ) -> Result<Vec<u8>, ArrayError> {
        let (index_shape, index_size) = shard_index_size(key, grid, &shards.layout.index_codecs)?;
        let index_size = index_size as usize;
        let uint64 = data_type::uint64();
        let missing = FillValue::from(u64::MAX);
        let data: usize = encoded.iter().flatten().map(|c| c.len()).sum();
        let mut offset = match shards.layout.index_location {
            ShardingIndexLocation::Start => index_size,
            ShardingIndexLocation::End => 0,
        } as u64;
        let mut index = vec![u64::MAX; encoded.len() * 2];
        let order = self.order.positions(grid);
        for &p in &order {
            if let Some(chunk) = &encoded[p] {
                index[2 * p] = offset;
                index[2 * p + 1] = chunk.len() as u64;
                offset += chunk.len() as u64;
            }
        }
        let index_bytes: Vec<u8> = index.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let index_encoded = shards.layout.index_codecs.encode(
            ArrayBytes::new_flen(Cow::Owned(index_bytes)),
            &index_shape,
            &uint64,
            &missing,
            options,
        )?;
        if index_encoded.len() != index_size {
            return Err(ArrayError::Other(format!(
                "shard {key}: an index of {} bytes, where its codecs said {index_size}",
                index_encoded.len()
            )));
        }
        let mut shard = Vec::with_capacity(index_size + data);
        if shards.layout.index_location == ShardingIndexLocation::Start {
            shard.extend_from_slice(&index_encoded);
        }
        for &p in &order {
            if let Some(chunk) = &encoded[p] {
                shard.extend_from_slice(chunk);
            }
        }
        if shards.layout.index_location == ShardingIndexLocation::End {
            shard.extend_from_slice(&index_encoded);
        }
        Ok(shard)
    }
}

/// The float type of a fill value that is a NaN: zarr-python counts a chunk
/// of any NaNs as fill values then (`chunk_is_empty`), whatever their bits.
fn nan_fill(data_type: &DataType, fill_value: &FillValue) -> Option<NumericType> {
    let kind = NumericType::from_data_type(data_type)?;
    let bytes = fill_value.as_ne_bytes();
    matches!(
        kind,
        NumericType::Float16 | NumericType::BFloat16 | NumericType::Float32 | NumericType::Float64
    )
    .then_some(kind)
    .filter(|&kind| bytes.len() == kind.size() && is_nan(kind, bytes))
}

/// Whether the native-endian float `bytes` of type `kind` is a NaN.
fn is_nan(kind: NumericType, bytes: &[u8]) -> bool {
    match kind {
        NumericType::Float16 => half::f16::from_ne_bytes([bytes[0], bytes[1]]).is_nan(),
        NumericType::BFloat16 => half::bf16::from_ne_bytes([bytes[0], bytes[1]]).is_nan(),
        NumericType::Float32 => {
            f32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]).is_nan()
        }
        NumericType::Float64 => {
            f64::from_ne_bytes(bytes[..8].try_into().expect("8 bytes")).is_nan()
        }
        _ => false,
    }
}

/// Whether `bytes` are fill values as zarr-python counts them: bit for bit,
/// or every element a NaN when the fill value is one (`nan`).
fn is_fill(bytes: &ArrayBytes<'_>, fill_value: &FillValue, nan: Option<NumericType>) -> bool {
    match (nan, bytes) {
        (Some(kind), ArrayBytes::Fixed(elements)) => elements
            .chunks_exact(kind.size())
            .all(|element| is_nan(kind, element)),
        _ => bytes.is_fill_value(fill_value),
    }
}

/// The encoded bytes of each inner chunk of the stored shard `bytes`
/// (`None` for one not stored), from its index, checked as the read engine
/// checks it.
fn stored_chunks<'b>(
    key: &str,
    shards: &Shards,
    grid: &[u64],
    bytes: &'b [u8],
    options: &CodecOptions,
) -> Result<Vec<Option<&'b [u8]>>, ArrayError> {
    let damaged =
        |why: String| ArrayError::from(StoredChunkDamaged::new(format!("shard {key}"), why));
    let (index_shape, index_size) = shard_index_size(key, grid, &shards.layout.index_codecs)?;
    let size = index_size as usize;
    if bytes.len() < size {
        return Err(damaged(format!(
            "{} bytes stored, fewer than its index's {size}",
            bytes.len()
        )));
    }
    let index_bytes = match shards.layout.index_location {
        ShardingIndexLocation::Start => &bytes[..size],
        ShardingIndexLocation::End => &bytes[bytes.len() - size..],
    };
    let index = ShardIndex::decode(
        key,
        index_bytes,
        &index_shape,
        index_size,
        Some(bytes.len() as u64),
        &shards.layout,
        options,
    )
    .map_err(|e| damaged(e.to_string()))?;
    let count = grid.iter().product::<u64>() as usize;
    Ok((0..count)
        .map(|p| {
            index
                .range(p)
                .map(|r| &bytes[r.start as usize..r.end as usize])
        })
        .collect())
}

/// The elements of a chunk of `shape` from its `stored` bytes (decoded by
/// `codecs`), or fill values where nothing is stored.
fn stored_or_fill(
    codecs: &CodecChain,
    (data_type, fill_value): (&DataType, &FillValue),
    shape: &[NonZeroU64],
    stored: Option<&[u8]>,
    options: &CodecOptions,
) -> Result<Vec<u8>, ArrayError> {
    match stored {
        Some(bytes) => Ok(codecs
            .decode(Cow::Borrowed(bytes), shape, data_type, fill_value, options)?
            .into_fixed()?
            .into_owned()),
        None => Ok(fill_value
            .as_ne_bytes()
            .repeat(shape.iter().map(|n| n.get()).product::<u64>() as usize)),
    }
}
