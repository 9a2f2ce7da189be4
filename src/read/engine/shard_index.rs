//! A shard's index, decoded through zarrs (its `index_codecs`: `bytes`,
//! `crc32c`, ...) and checked before any inner chunk is fetched by it.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::ops::Range;

use zarrs::array::ArrayToBytesCodecTraits;
use zarrs::array::{ArrayError, CodecOptions, FillValue, data_type};

use super::plan::{InnerBytes, ShardLayout};

/// The `(offset, nbytes)` pair of a missing inner chunk.
const MISSING: u64 = u64::MAX;

/// Where each inner chunk of a shard is: a byte range, or `None` if missing.
pub(crate) struct ShardIndex {
    ranges: Vec<Option<Range<u64>>>,
}

impl ShardIndex {
    /// Decode `encoded` (exactly `index_size` bytes, checked here) of the
    /// shard at `key` with `index_shape` (inner chunks per shard, then 2),
    /// and check every entry: both halves of the missing sentinel or
    /// neither, `offset + nbytes` without overflow, no more bytes than the
    /// inner codecs can write, and, when the shard's length is known, no
    /// range past its end.
    pub(crate) fn decode(
        key: &str,
        encoded: &[u8],
        index_shape: &[NonZeroU64],
        index_size: u64,
        shard_len: Option<u64>,
        layout: &ShardLayout,
        options: &CodecOptions,
    ) -> Result<Self, ArrayError> {
        if encoded.len() as u64 != index_size {
            return Err(index_error(
                key,
                format!(
                    "the index read is {} bytes, index_codecs give {index_size} (is the shard shorter than its index?)",
                    encoded.len()
                ),
            ));
        }
        let decoded = layout
            .index_codecs
            .decode(
                Cow::Borrowed(encoded),
                index_shape,
                &data_type::uint64(),
                &FillValue::from(MISSING),
                options,
            )
            .and_then(|bytes| Ok(bytes.into_fixed()?))
            .map_err(|e| index_error(key, format!("cannot decode it: {e}")))?;
        let values: Vec<u64> = decoded
            .as_chunks::<8>()
            .0
            .iter()
            .map(|v| u64::from_ne_bytes(*v))
            .collect();
        let per_shard = &index_shape[..index_shape.len() - 1];
        let ranges = values
            .as_chunks::<2>()
            .0
            .iter()
            .enumerate()
            .map(|(i, &[offset, nbytes])| {
                check_entry(offset, nbytes, shard_len, layout.inner_bytes)
                    .map_err(|why| entry_error(key, per_shard, i, why))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { ranges })
    }

    /// The byte range of inner chunk `inner` (C order), `None` if missing.
    pub(crate) fn range(&self, inner: usize) -> Option<Range<u64>> {
        self.ranges.get(inner).cloned().flatten()
    }
}

/// One index entry: `None` for the missing sentinel, else its range.
fn check_entry(
    offset: u64,
    nbytes: u64,
    shard_len: Option<u64>,
    inner_bytes: InnerBytes,
) -> Result<Option<Range<u64>>, String> {
    match (offset, nbytes) {
        (MISSING, MISSING) => return Ok(None),
        (MISSING, _) | (_, MISSING) => {
            return Err(format!(
                "offset {offset}, nbytes {nbytes}: half of the missing-chunk marker (both must be 2^64-1)"
            ));
        }
        _ => {}
    }
    let end = offset
        .checked_add(nbytes)
        .ok_or_else(|| format!("offset {offset} + nbytes {nbytes} overflows"))?;
    match inner_bytes {
        InnerBytes::Fixed(n) if nbytes != n => {
            return Err(format!(
                "nbytes {nbytes} is not the {n} bytes the inner codecs write"
            ));
        }
        InnerBytes::AtMost(max) if nbytes > max => {
            return Err(format!(
                "nbytes {nbytes} is more than the inner codecs can write ({max})"
            ));
        }
        _ => {}
    }
    if let Some(len) = shard_len
        && end > len
    {
        return Err(format!(
            "offset {offset}, nbytes {nbytes}: ends at byte {end}, past the shard's end ({len} bytes)"
        ));
    }
    Ok(Some(offset..end))
}

/// The indices of chunk `linear` (C order) in a grid of `grid` chunks (a
/// shard's inner chunks; the write path's inner-chunk orders too).
pub(crate) fn unravel(linear: usize, grid: &[u64]) -> Vec<u64> {
    let mut rest = linear as u64;
    let mut indices = vec![0; grid.len()];
    for (index, &n) in indices.iter_mut().zip(grid).rev() {
        *index = rest % n;
        rest /= n;
    }
    indices
}

fn index_error(key: &str, why: String) -> ArrayError {
    ArrayError::Other(format!("shard {key}: index: {why}"))
}

fn entry_error(key: &str, per_shard: &[NonZeroU64], inner: usize, why: String) -> ArrayError {
    ArrayError::Other(format!(
        "shard {key}: index entry of inner chunk {:?}: {why}",
        unravel(
            inner,
            &per_shard.iter().map(|n| n.get()).collect::<Vec<_>>()
        )
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_checked() {
        let any = InnerBytes::Any;
        assert_eq!(check_entry(MISSING, MISSING, None, any), Ok(None));
        assert_eq!(
            check_entry(3, 4, Some(7), InnerBytes::AtMost(4)),
            Ok(Some(3..7))
        );
        assert_eq!(
            check_entry(3, 4, Some(7), InnerBytes::Fixed(4)),
            Ok(Some(3..7))
        );
        let error =
            |offset, nbytes, len, inner| check_entry(offset, nbytes, len, inner).unwrap_err();
        assert!(error(MISSING, 1, None, any).contains("missing-chunk"));
        assert!(error(2, MISSING - 1, None, any).contains("overflows"));
        assert!(error(3, 5, Some(7), any).contains("past the shard's end"));
        assert!(error(0, 9, None, InnerBytes::AtMost(8)).contains("more than"));
        assert!(error(0, 3, None, InnerBytes::Fixed(4)).contains("not the 4"));
    }

    #[test]
    fn unravel_is_c_order() {
        let shape = [2, 3];
        assert_eq!(unravel(0, &[]), Vec::<u64>::new());
        assert_eq!(unravel(0, &shape), [0, 0]);
        assert_eq!(unravel(4, &shape), [1, 1]);
        assert_eq!(unravel(5, &shape), [1, 2]);
    }
}
