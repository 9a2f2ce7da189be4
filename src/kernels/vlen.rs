//! The `zarrs.vlen` chunk layout: the index-length field, offsets and their
//! checks, and gathering elements, independent of the codec chains.
//!
//! A chunk of `n` elements is made of
//! - the index: `n + 1` offsets (`uint32` or `uint64`) into the data, in the
//!   Apache Arrow variable-size binary layout: element `j` is
//!   `data[offsets[j]..offsets[j + 1]]`, so `offsets[0] == 0`, the offsets never
//!   decrease and `offsets[n]` is the data length;
//! - the data: the element bytes, concatenated;
//! - an 8-byte little-endian length of the *encoded* index, first (`start`:
//!   `len | index | data`) or last (`end`: `data | index | len`).
//!
//! The index and the data are encoded by their own codec chains; this module
//! sees the index after (or before) that chain, as plain integers.
//!
//! Every function here works on untrusted bytes: a length, range or offset
//! that does not fit is a [`VlenError`], never a panic or an out-of-bounds
//! read.

use std::mem::MaybeUninit;
use std::ops::Range;

use crate::kernels::simd;

/// The size of the encoded-index length field.
pub const INDEX_LEN_SIZE: usize = 8;

/// The integer type of the offsets (`index_data_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexType {
    /// `uint32`
    U32,
    /// `uint64`
    U64,
}

impl IndexType {
    /// The size of one offset in bytes.
    #[must_use]
    pub const fn size(self) -> usize {
        match self {
            Self::U32 => 4,
            Self::U64 => 8,
        }
    }

    /// The largest offset the type holds.
    #[must_use]
    pub const fn max(self) -> u64 {
        match self {
            Self::U32 => u32::MAX as u64,
            Self::U64 => u64::MAX,
        }
    }
}

impl std::fmt::Display for IndexType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::U32 => "uint32",
            Self::U64 => "uint64",
        })
    }
}

/// Where the index and its length field are (`index_location`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexLocation {
    /// `len | index | data`
    Start,
    /// `data | index | len`
    End,
}

/// The byte order of the offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
}

impl Endian {
    /// The byte order of this machine (that of zarrs' decoded array bytes).
    pub const NATIVE: Self = if cfg!(target_endian = "big") {
        Self::Big
    } else {
        Self::Little
    };
}

/// A chunk or index that does not follow the layout.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VlenError {
    /// Fewer bytes than the index-length field.
    #[error("chunk has {len} bytes, fewer than the {INDEX_LEN_SIZE}-byte index length field")]
    TooShort {
        /// The chunk length.
        len: usize,
    },
    /// The index-length field points outside the chunk.
    #[error("index length field is {index_len}, but only {available} bytes follow the field")]
    IndexLenOutOfRange {
        /// The value of the field.
        index_len: u64,
        /// The chunk length without the field.
        available: usize,
    },
    /// The index-length field disagrees with what the index codecs can produce.
    #[error("index length field is {index_len}, but the index codecs produce {expected}")]
    IndexLenMismatch {
        /// The value of the field.
        index_len: u64,
        /// What the index codecs produce, e.g. `exactly 80 bytes`.
        expected: String,
    },
    /// The decoded index does not hold `n + 1` offsets.
    #[error("decoded index has {len} bytes, expected {expected} ({count} {index_type} offsets)")]
    IndexSize {
        /// Decoded index length.
        len: usize,
        /// Expected length.
        expected: usize,
        /// Expected number of offsets.
        count: usize,
        /// Offset type.
        index_type: IndexType,
    },
    /// `offsets[0] != 0`.
    #[error("offset 0 is {value}, but the first offset must be 0")]
    FirstOffset {
        /// The first offset.
        value: u64,
    },
    /// `offsets[position] < offsets[position - 1]`.
    #[error("offset {position} ({value}) is less than offset {} ({previous})", position - 1)]
    Decreasing {
        /// Position of the offending offset.
        position: usize,
        /// Its value.
        value: u64,
        /// The value before it.
        previous: u64,
    },
    /// `offsets[n]` is not the data length.
    #[error("last offset is {last}, but the data has {data_len} bytes")]
    LastOffset {
        /// The last offset.
        last: u64,
        /// The data length.
        data_len: usize,
    },
    /// The input offsets or data do not describe `n` elements.
    #[error("{0}")]
    Input(String),
    /// The data is too long for the offset type.
    #[error("chunk data has {data_len} bytes, more than index_data_type {index_type} can address")]
    DataTooLong {
        /// The data length.
        data_len: usize,
        /// Offset type.
        index_type: IndexType,
    },
}

/// The byte ranges of the encoded index and the encoded data in a chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkParts {
    /// The encoded index.
    pub index: Range<usize>,
    /// The encoded data.
    pub data: Range<usize>,
}

/// Find the encoded index and data in `chunk`.
///
/// # Errors
/// [`VlenError::TooShort`] or [`VlenError::IndexLenOutOfRange`].
pub fn split_chunk(chunk: &[u8], location: IndexLocation) -> Result<ChunkParts, VlenError> {
    let len = chunk.len();
    let available = len
        .checked_sub(INDEX_LEN_SIZE)
        .ok_or(VlenError::TooShort { len })?;
    let field = match location {
        IndexLocation::Start => chunk.get(..INDEX_LEN_SIZE),
        IndexLocation::End => chunk.get(available..),
    };
    let index_len = read_index_len(field.unwrap_or_default()).ok_or(VlenError::TooShort { len })?;
    let index_len_usize = usize::try_from(index_len)
        .ok()
        .filter(|&l| l <= available)
        .ok_or(VlenError::IndexLenOutOfRange {
            index_len,
            available,
        })?;
    Ok(match location {
        IndexLocation::Start => ChunkParts {
            index: INDEX_LEN_SIZE..INDEX_LEN_SIZE + index_len_usize,
            data: INDEX_LEN_SIZE + index_len_usize..len,
        },
        IndexLocation::End => ChunkParts {
            index: available - index_len_usize..available,
            data: 0..available - index_len_usize,
        },
    })
}

/// The value of an index-length field (`None` unless `field` has 8 bytes).
#[must_use]
pub fn read_index_len(field: &[u8]) -> Option<u64> {
    <[u8; INDEX_LEN_SIZE]>::try_from(field)
        .ok()
        .map(u64::from_le_bytes)
}

/// Assemble a chunk from its encoded index and data, in one allocation.
#[must_use]
pub fn assemble_chunk(index: &[u8], data: &[u8], location: IndexLocation) -> Vec<u8> {
    let mut chunk = Vec::with_capacity(INDEX_LEN_SIZE + index.len() + data.len());
    let len_field = (index.len() as u64).to_le_bytes();
    match location {
        IndexLocation::Start => {
            chunk.extend_from_slice(&len_field);
            chunk.extend_from_slice(index);
            chunk.extend_from_slice(data);
        }
        IndexLocation::End => {
            chunk.extend_from_slice(data);
            chunk.extend_from_slice(index);
            chunk.extend_from_slice(&len_field);
        }
    }
    chunk
}

/// The element bytes that `offsets` (of an input of `data_len` bytes) cover,
/// as `offsets[0]..offsets[n]`.
///
/// zarrs' variable-length arrays may start with unused bytes (`offsets[0] > 0`)
/// or end with them; the encoded chunk holds only the elements.
///
/// # Errors
/// [`VlenError::Input`] if `offsets` is empty, decreases or exceeds `data_len`.
pub fn element_span(offsets: &[usize], data_len: usize) -> Result<Range<usize>, VlenError> {
    let (Some(&first), Some(&last)) = (offsets.first(), offsets.last()) else {
        return Err(VlenError::Input("no offsets".to_string()));
    };
    if first > last || last > data_len {
        return Err(VlenError::Input(format!(
            "offsets {first}..{last} do not lie within {data_len} bytes of data"
        )));
    }
    Ok(first..last)
}

/// Append `offsets`, rebased so that the first is 0, to `out` as `index_type`
/// integers in `endian` byte order.
///
/// The offsets must not decrease (zarrs' `ArrayBytesOffsets` guarantees it);
/// only the largest, the last, is range-checked. Offsets that do decrease give
/// an unspecified index, never a panic.
///
/// # Errors
/// [`VlenError::DataTooLong`] if the last rebased offset does not fit
/// `index_type`, [`VlenError::Input`] if `offsets` is empty or decreasing
/// at its ends.
pub fn encode_offsets(
    offsets: &[usize],
    index_type: IndexType,
    endian: Endian,
    out: &mut Vec<u8>,
) -> Result<(), VlenError> {
    let base = rebase(offsets, index_type)?;
    let len = offsets
        .len()
        .checked_mul(index_type.size())
        .ok_or_else(|| {
            VlenError::Input(format!("{} offsets do not fit in memory", offsets.len()))
        })?;
    if base == 0
        && index_type == IndexType::U64
        && endian == Endian::NATIVE
        && size_of::<usize>() == 8
    {
        // The offsets already are the index: one memcpy.
        out.extend_from_slice(bytemuck::cast_slice(offsets));
        return Ok(());
    }
    // Written in place into the reserved capacity: no zeroing pass first, and
    // no per-byte capacity checks as in `extend` from a flattened iterator.
    out.reserve(len);
    let start = out.len();
    fill(
        offsets,
        base,
        index_type,
        endian,
        &mut out.spare_capacity_mut()[..len],
    );
    // SAFETY: `fill` initialised every one of the `len` bytes after `start`
    // (one word per offset, `len` bytes in all), within the capacity.
    unsafe { out.set_len(start + len) };
    Ok(())
}

/// Write `offsets`, rebased so that the first is 0, into `dst` (exactly
/// `offsets.len()` words) as `index_type` integers in `endian` byte order.
/// As [`encode_offsets`], but in place.
///
/// # Errors
/// As [`encode_offsets`]; [`VlenError::Input`] if `dst` has the wrong length.
pub fn write_offsets(
    offsets: &[usize],
    index_type: IndexType,
    endian: Endian,
    dst: &mut [u8],
) -> Result<(), VlenError> {
    if Some(dst.len()) != offsets.len().checked_mul(index_type.size()) {
        return Err(VlenError::Input(format!(
            "{} bytes for {} offsets of {index_type}",
            dst.len(),
            offsets.len()
        )));
    }
    let base = rebase(offsets, index_type)?;
    // SAFETY: viewed as possibly uninitialised bytes (same layout), so
    // that one kernel serves both this and `encode_offsets`; `fill` only
    // writes initialised values, so `dst` stays initialised.
    let uninit = unsafe { &mut *(std::ptr::from_mut(dst) as *mut [MaybeUninit<u8>]) };
    fill(offsets, base, index_type, endian, uninit);
    Ok(())
}

/// The first of `offsets`, which [`encode_offsets`] subtracts from all of
/// them, after checking that the rebased offsets fit `index_type`.
fn rebase(offsets: &[usize], index_type: IndexType) -> Result<usize, VlenError> {
    let span = element_span(offsets, usize::MAX)?;
    let data_len = span.end - span.start;
    if data_len as u64 > index_type.max() {
        return Err(VlenError::DataTooLong {
            data_len,
            index_type,
        });
    }
    Ok(span.start)
}

/// Write `offsets` minus `base` into `dst` (exactly `offsets.len()` words)
/// as `index_type` words in `endian` byte order, compiled for AVX2 where
/// available. Non-decreasing offsets whose last one passed [`rebase`] all
/// fit, so the casts do not truncate (decreasing ones wrap: a wrong index,
/// never a panic).
fn fill(
    offsets: &[usize],
    base: usize,
    index_type: IndexType,
    endian: Endian,
    dst: &mut [MaybeUninit<u8>],
) {
    macro_rules! words {
        ($word:ty) => {{
            let (dst, _) = dst.as_chunks_mut::<{ size_of::<$word>() }>();
            match endian {
                Endian::Little => simd::dispatch(FillWords {
                    offsets,
                    dst,
                    word: move |o: usize| (o.wrapping_sub(base) as $word).to_le_bytes(),
                }),
                Endian::Big => simd::dispatch(FillWords {
                    offsets,
                    dst,
                    word: move |o: usize| (o.wrapping_sub(base) as $word).to_be_bytes(),
                }),
            }
        }};
    }
    debug_assert_eq!(dst.len(), offsets.len() * index_type.size());
    match index_type {
        IndexType::U32 => words!(u32),
        IndexType::U64 => words!(u64),
    }
}

/// One pass writing `word(offset)` for each offset into `dst` (of the same
/// length), for [`simd::dispatch`]. `word` is a closure of plain values held
/// by value, so that the loop vectorises (narrowing and byte swapping with
/// AVX2 shuffles).
struct FillWords<'a, const N: usize, F> {
    offsets: &'a [usize],
    dst: &'a mut [[MaybeUninit<u8>; N]],
    word: F,
}

impl<const N: usize, F: Fn(usize) -> [u8; N]> simd::Kernel for FillWords<'_, N, F> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let Self { offsets, dst, word } = self;
        debug_assert_eq!(offsets.len(), dst.len());
        for (d, &o) in dst.iter_mut().zip(offsets) {
            *d = word(o).map(MaybeUninit::new);
        }
    }
}

/// Check the length of a decoded index of `count` offsets.
///
/// # Errors
/// [`VlenError::IndexSize`].
pub fn check_index_size(
    index: &[u8],
    count: usize,
    index_type: IndexType,
) -> Result<(), VlenError> {
    let expected = count.checked_mul(index_type.size());
    if expected == Some(index.len()) {
        Ok(())
    } else {
        Err(VlenError::IndexSize {
            len: index.len(),
            expected: expected.unwrap_or(usize::MAX),
            count,
            index_type,
        })
    }
}

/// `u64` to `usize`, saturating: a saturated offset can never pass
/// [`validate_offsets`], because the data is shorter than `usize::MAX`.
#[inline]
fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// Convert a decoded index (`index_type` integers in `endian` order, whose
/// length [`check_index_size`] has checked) to offsets. They are not
/// validated here: see [`validate_offsets`].
#[must_use]
pub fn decode_offsets(index: &[u8], index_type: IndexType, endian: Endian) -> Vec<usize> {
    /// Every whole `N`-byte word of `index`, converted by `offset`.
    fn words<const N: usize>(index: &[u8], offset: impl Fn([u8; N]) -> usize) -> Vec<usize> {
        let (words, _) = index.as_chunks::<N>();
        words.iter().map(|&w| offset(w)).collect()
    }
    match (index_type, endian) {
        (IndexType::U64, Endian::Little) => words(index, |w| to_usize(u64::from_le_bytes(w))),
        (IndexType::U64, Endian::Big) => words(index, |w| to_usize(u64::from_be_bytes(w))),
        (IndexType::U32, Endian::Little) => words(index, |w| u32::from_le_bytes(w) as usize),
        (IndexType::U32, Endian::Big) => words(index, |w| u32::from_be_bytes(w) as usize),
    }
}

/// View a decoded index as offsets without copying, when it already has the
/// memory layout of `[usize]`: `uint64` in this machine's byte order on a
/// 64-bit machine, suitably aligned.
#[must_use]
pub fn borrow_offsets(index: &[u8], index_type: IndexType, endian: Endian) -> Option<&[usize]> {
    if index_type == IndexType::U64 && endian == Endian::NATIVE && size_of::<usize>() == 8 {
        bytemuck::try_cast_slice(index).ok()
    } else {
        None
    }
}

/// Check that `offsets` start at 0 and never decrease.
///
/// # Errors
/// [`VlenError::FirstOffset`] or [`VlenError::Decreasing`] (the first one).
pub fn validate_offsets(offsets: &[usize]) -> Result<(), VlenError> {
    if let Some(&first) = offsets.first()
        && first != 0
    {
        return Err(VlenError::FirstOffset {
            value: first as u64,
        });
    }
    // Blocks without an early exit vectorise; only a failing block is
    // scanned again for the position.
    const BLOCK: usize = 256;
    let mut start = 0;
    while start + 1 < offsets.len() {
        let end = (start + BLOCK + 1).min(offsets.len());
        let block = &offsets[start..end];
        let ok = block
            .windows(2)
            .fold(true, |ok, pair| ok & (pair[0] <= pair[1]));
        if !ok {
            let i = block
                .windows(2)
                .position(|pair| pair[0] > pair[1])
                .unwrap_or_default();
            return Err(VlenError::Decreasing {
                position: start + i + 1,
                value: block[i + 1] as u64,
                previous: block[i] as u64,
            });
        }
        start = end - 1;
    }
    Ok(())
}

/// Check that the last offset is the data length.
///
/// # Errors
/// [`VlenError::LastOffset`].
pub fn check_last_offset(offsets: &[usize], data_len: usize) -> Result<(), VlenError> {
    let last = offsets.last().copied().unwrap_or_default();
    if last == data_len {
        Ok(())
    } else {
        Err(VlenError::LastOffset {
            last: last as u64,
            data_len,
        })
    }
}

/// The byte range of each run `(first element, count)` of validated
/// `offsets`, and the offsets of the runs' elements concatenated.
///
/// # Errors
/// [`VlenError::Input`] if a run lies outside `offsets`.
pub fn plan_runs(
    offsets: &[usize],
    runs: &[(usize, usize)],
) -> Result<(Vec<Range<usize>>, Vec<usize>), VlenError> {
    let mut ranges = Vec::with_capacity(runs.len());
    let elements = runs
        .iter()
        .fold(0usize, |n, &(_, count)| n.saturating_add(count));
    let mut out_offsets = Vec::with_capacity(elements.saturating_add(1));
    out_offsets.push(0);
    let mut position = 0usize;
    for &(start, count) in runs {
        let range = run_bytes(offsets, start, count).ok_or_else(|| {
            VlenError::Input(format!(
                "elements {start}..{} are outside the chunk of {} elements",
                start.saturating_add(count),
                offsets.len().saturating_sub(1)
            ))
        })?;
        let (from, to) = (range.start, position);
        // In range: checked by `run_bytes`. Wrapping: offsets that decrease
        // inside the run (not validated) give wrong offsets, not a panic.
        out_offsets.extend(
            offsets[start + 1..=start + count]
                .iter()
                .map(|&o| o.wrapping_sub(from).wrapping_add(to)),
        );
        position = position.saturating_add(range.len());
        ranges.push(range);
    }
    Ok((ranges, out_offsets))
}

/// The elements of runs `(first element, count)` of validated `offsets`
/// into `data`, concatenated, with their offsets.
///
/// # Errors
/// [`VlenError::Input`] if a run lies outside `offsets` or `data`.
pub fn gather_runs(
    data: &[u8],
    offsets: &[usize],
    runs: &[(usize, usize)],
) -> Result<(Vec<u8>, Vec<usize>), VlenError> {
    let (ranges, out_offsets) = plan_runs(offsets, runs)?;
    let len = out_offsets.last().copied().unwrap_or_default();
    let mut out = Vec::with_capacity(len);
    for range in ranges {
        let bytes = data.get(range.clone()).ok_or_else(|| {
            VlenError::Input(format!(
                "bytes {range:?} are outside the data of {} bytes",
                data.len()
            ))
        })?;
        out.extend_from_slice(bytes);
    }
    Ok((out, out_offsets))
}

/// The bytes of elements `start..start + count`, if the run lies within
/// `offsets` and they do not decrease at its ends.
#[must_use]
pub fn run_bytes(offsets: &[usize], start: usize, count: usize) -> Option<Range<usize>> {
    let first = *offsets.get(start)?;
    let last = *offsets.get(start.checked_add(count)?)?;
    (first <= last).then_some(first..last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;

    #[test]
    fn split_start_and_end() {
        // start: len field 4 (LE), 4 index bytes, 3 data bytes.
        let chunk = [4, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 1, 2, 3];
        let parts = split_chunk(&chunk, IndexLocation::Start).unwrap();
        assert_eq!(parts.index, 8..12);
        assert_eq!(parts.data, 12..15);
        // end: 3 data bytes, 4 index bytes, len field 4.
        let chunk = [1, 2, 3, 9, 9, 9, 9, 4, 0, 0, 0, 0, 0, 0, 0];
        let parts = split_chunk(&chunk, IndexLocation::End).unwrap();
        assert_eq!(parts.data, 0..3);
        assert_eq!(parts.index, 3..7);
    }

    #[test]
    fn split_refuses_bad_lengths() {
        assert_eq!(
            split_chunk(&[0; 7], IndexLocation::Start),
            Err(VlenError::TooShort { len: 7 })
        );
        assert_eq!(
            split_chunk(&[], IndexLocation::End),
            Err(VlenError::TooShort { len: 0 })
        );
        // Field says 3 bytes but only 2 follow.
        let chunk = [3, 0, 0, 0, 0, 0, 0, 0, 1, 2];
        assert_eq!(
            split_chunk(&chunk, IndexLocation::Start),
            Err(VlenError::IndexLenOutOfRange {
                index_len: 3,
                available: 2
            })
        );
        let mut chunk = vec![1, 2];
        chunk.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            split_chunk(&chunk, IndexLocation::End),
            Err(VlenError::IndexLenOutOfRange { .. })
        ));
    }

    #[test]
    fn offsets_round_trip_every_type_and_order() {
        // Input with 2 unused leading bytes: elements "ab", "", "cde".
        let offsets = [2usize, 4, 4, 7];
        for index_type in [IndexType::U32, IndexType::U64] {
            for endian in [Endian::Little, Endian::Big] {
                let mut out = vec![];
                encode_offsets(&offsets, index_type, endian, &mut out).unwrap();
                check_index_size(&out, 4, index_type).unwrap();
                let decoded = decode_offsets(&out, index_type, endian);
                assert_eq!(decoded, [0, 2, 2, 5]);
                let mut in_place = vec![0; out.len()];
                write_offsets(&offsets, index_type, endian, &mut in_place).unwrap();
                assert_eq!(in_place, out);
                assert!(write_offsets(&offsets, index_type, endian, &mut in_place[1..]).is_err());
            }
        }
        // By hand: uint32 big-endian 0, 2, 2, 5.
        let mut out = vec![];
        encode_offsets(&offsets, IndexType::U32, Endian::Big, &mut out).unwrap();
        assert_eq!(out, [0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 5]);
    }

    /// The index of `offsets` minus `base`, from std's byte order
    /// conversions one offset at a time.
    fn std_index(offsets: &[usize], base: usize, index_type: IndexType, endian: Endian) -> Vec<u8> {
        let mut out = Vec::new();
        for &o in offsets {
            let v = (o - base) as u64;
            match (index_type, endian) {
                (IndexType::U32, Endian::Little) => out.extend((v as u32).to_le_bytes()),
                (IndexType::U32, Endian::Big) => out.extend((v as u32).to_be_bytes()),
                (IndexType::U64, Endian::Little) => out.extend(v.to_le_bytes()),
                (IndexType::U64, Endian::Big) => out.extend(v.to_be_bytes()),
            }
        }
        out
    }

    /// Both copies of the offset loops (AVX2 where the CPU has it, and
    /// baseline) against std, for odd lengths, a non-zero first offset and
    /// output that starts at an odd position.
    #[test]
    fn dispatched_and_portable_offsets_match_std() {
        for count in test_support::first(&[1, 2, 3, 7, 9, 31, 33, 65, 1001, 4099], 5) {
            for base in [0usize, 5] {
                let offsets: Vec<usize> = (0..count).map(|i| base + i * 3 + (i & 1)).collect();
                for index_type in [IndexType::U32, IndexType::U64] {
                    for endian in [Endian::Little, Endian::Big] {
                        let expected = std_index(&offsets, base, index_type, endian);
                        let what = format!("{count} {index_type} {endian:?} base {base}");
                        for portable in [false, true] {
                            let run = |f: &mut dyn FnMut()| {
                                if portable {
                                    simd::portable(f);
                                } else {
                                    f();
                                }
                            };
                            // Appended after 3 bytes: the words are misaligned.
                            let mut out = vec![1u8, 2, 3];
                            run(&mut || {
                                encode_offsets(&offsets, index_type, endian, &mut out).unwrap();
                            });
                            assert_eq!(&out[..3], &[1, 2, 3], "{what}");
                            assert_eq!(&out[3..], &expected[..], "append {what} {portable}");
                            let mut buffer = vec![0xa5u8; expected.len() + 1];
                            run(&mut || {
                                write_offsets(&offsets, index_type, endian, &mut buffer[1..])
                                    .unwrap();
                            });
                            assert_eq!(buffer[0], 0xa5, "{what}");
                            assert_eq!(&buffer[1..], &expected[..], "in place {what} {portable}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn u32_index_refuses_more_than_4_gib() {
        let offsets = [0usize, u32::MAX as usize + 1];
        let mut out = vec![];
        assert!(matches!(
            encode_offsets(&offsets, IndexType::U32, Endian::Little, &mut out),
            Err(VlenError::DataTooLong { .. })
        ));
        // Exactly u32::MAX fits.
        encode_offsets(
            &[0, u32::MAX as usize],
            IndexType::U32,
            Endian::Little,
            &mut out,
        )
        .unwrap();
    }

    #[test]
    fn validation() {
        assert_eq!(validate_offsets(&[0, 1, 1, 5]), Ok(()));
        assert_eq!(
            validate_offsets(&[1, 2]),
            Err(VlenError::FirstOffset { value: 1 })
        );
        assert_eq!(
            validate_offsets(&[0, 3, 2, 5]),
            Err(VlenError::Decreasing {
                position: 2,
                value: 2,
                previous: 3
            })
        );
        // A decrease in a later block, and on a block boundary.
        for at in [255, 256, 257, 600] {
            let mut offsets: Vec<usize> = (0..1000).collect();
            offsets[at] = 0;
            assert_eq!(
                validate_offsets(&offsets),
                Err(VlenError::Decreasing {
                    position: at,
                    value: 0,
                    previous: at as u64 - 1
                }),
                "{at}"
            );
        }
        assert_eq!(check_last_offset(&[0, 5], 5), Ok(()));
        assert!(check_last_offset(&[0, 5], 6).is_err());
    }

    #[test]
    fn borrowed_offsets_are_the_decoded_ones() {
        let offsets: Vec<u64> = vec![0, 3, 3, 10];
        let index: &[u8] = bytemuck::cast_slice(&offsets);
        if let Some(borrowed) = borrow_offsets(index, IndexType::U64, Endian::NATIVE) {
            assert_eq!(
                borrowed,
                decode_offsets(index, IndexType::U64, Endian::NATIVE)
            );
        }
        assert!(borrow_offsets(index, IndexType::U32, Endian::NATIVE).is_none());
    }

    #[test]
    fn gather() {
        // "ab", "", "cde", "f"
        let data = b"abcdef";
        let offsets = [0, 2, 2, 5, 6];
        let (bytes, out) = gather_runs(data, &offsets, &[(1, 2), (0, 1)]).unwrap();
        assert_eq!(bytes, b"cdeab");
        assert_eq!(out, [0, 0, 3, 5]);
        let (ranges, _) = plan_runs(&offsets, &[(1, 2), (0, 1)]).unwrap();
        assert_eq!(ranges, [2..5, 0..2]);
        assert!(gather_runs(data, &offsets, &[(3, 2)]).is_err());
        assert!(gather_runs(data, &offsets, &[(usize::MAX, 2)]).is_err());
        // Offsets that claim more bytes than there are.
        assert!(gather_runs(b"ab", &offsets, &[(0, 4)]).is_err());
    }

    #[test]
    fn assemble_matches_split() {
        for location in [IndexLocation::Start, IndexLocation::End] {
            let chunk = assemble_chunk(&[1, 2, 3], &[4, 5], location);
            let parts = split_chunk(&chunk, location).unwrap();
            assert_eq!(&chunk[parts.index], &[1, 2, 3]);
            assert_eq!(&chunk[parts.data], &[4, 5]);
        }
    }
}
