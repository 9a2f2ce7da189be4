//! The numcodecs variable-length layout of `vlen-utf8` and `vlen-bytes`:
//! writing and checking the interleaved lengths and element bytes,
//! independent of the zarrs glue.
//!
//! A chunk of `n` elements is a little-endian `u32` item count `n`, then for
//! each element a little-endian `u32` byte length followed by that many
//! bytes. Nothing follows the last element.
//!
//! Every function here works on untrusted bytes: a count, length or range
//! that does not fit is a [`VlenV2Error`], never a panic or an out-of-bounds
//! read.

use std::ops::Range;

/// The size of the item count and of each length field.
pub const LEN_SIZE: usize = 4;

/// A chunk that does not follow the layout, or elements it cannot hold.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VlenV2Error {
    /// Fewer bytes than the item count.
    #[error("chunk has {len} bytes, fewer than the 4-byte item count")]
    TooShort {
        /// The chunk length.
        len: usize,
    },
    /// The item count is not the number of elements of the chunk.
    #[error("item count is {count}, expected {expected} (the chunk's element count)")]
    Count {
        /// The item count in the chunk.
        count: u32,
        /// The chunk's element count.
        expected: u64,
    },
    /// The chunk cannot hold the length fields of its elements.
    #[error(
        "chunk has {len} bytes, fewer than the {expected} that the item count and {count} \
         length fields need"
    )]
    TooShortForCount {
        /// The chunk length.
        len: usize,
        /// The item count.
        count: u64,
        /// The bytes needed for the count and length fields alone.
        expected: u128,
    },
    /// A length field, or its element bytes, past the end of the chunk.
    #[error(
        "length of element {element} is {length} at byte {at}, past the end of the chunk \
         ({available} bytes follow the field)"
    )]
    LengthPastEnd {
        /// The element.
        element: usize,
        /// The value of its length field.
        length: u32,
        /// Where the field is.
        at: usize,
        /// The bytes after the field.
        available: usize,
    },
    /// A length field cut off by the end of the chunk.
    #[error(
        "length field of element {element} at byte {at} is past the end of the chunk ({len} bytes)"
    )]
    FieldPastEnd {
        /// The element.
        element: usize,
        /// Where the field starts.
        at: usize,
        /// The chunk length.
        len: usize,
    },
    /// Bytes after the last element.
    #[error("{trailing} trailing bytes after the last element (chunk has {len} bytes)")]
    Trailing {
        /// The number of trailing bytes.
        trailing: usize,
        /// The chunk length.
        len: usize,
    },
    /// An element that is not UTF-8 (`vlen-utf8` only).
    #[error("element {element} is not valid UTF-8: {reason}")]
    Utf8 {
        /// The element.
        element: usize,
        /// What is wrong with it.
        reason: std::str::Utf8Error,
    },
    /// More elements, or a longer element, than a `u32` length describes.
    #[error("{what} is {value}, more than the u32 length field holds")]
    TooLarge {
        /// What is too large (`item count`, `element 3 length`).
        what: String,
        /// Its value.
        value: u64,
    },
    /// The input offsets do not describe the elements of the data.
    #[error("{0}")]
    Input(String),
}

/// The element ranges `offsets[j]..offsets[j + 1]` into `data`, checked.
fn element_ranges<'o>(
    offsets: &'o [usize],
    data_len: usize,
) -> impl Iterator<Item = Result<Range<usize>, VlenV2Error>> + 'o {
    offsets.windows(2).enumerate().map(move |(j, w)| {
        if w[0] <= w[1] && w[1] <= data_len {
            Ok(w[0]..w[1])
        } else {
            Err(VlenV2Error::Input(format!(
                "element {j} spans offsets {}..{} of data with {data_len} bytes",
                w[0], w[1]
            )))
        }
    })
}

/// Append the encoding of the elements `data[offsets[j]..offsets[j + 1]]` to
/// `out`, in one pass over the offsets that also checks them.
///
/// # Errors
/// [`VlenV2Error::TooLarge`] for more than `u32::MAX` elements or an element
/// longer than `u32::MAX` bytes; [`VlenV2Error::Input`] for offsets outside
/// `data` or decreasing. `out` then holds part of the encoding.
pub fn encode(data: &[u8], offsets: &[usize], out: &mut Vec<u8>) -> Result<(), VlenV2Error> {
    let count = offsets.len().saturating_sub(1);
    let count = u32::try_from(count).map_err(|_| VlenV2Error::TooLarge {
        what: "item count".to_string(),
        value: count as u64,
    })?;
    // The exact size when the offsets are valid (the loop refuses others):
    // the count and a length per element (`offsets`, of `usize`s, is longer
    // in memory, so this cannot overflow), and the bytes they span.
    let (first, last) = (
        offsets.first().map_or(0, |&o| o.min(data.len())),
        offsets.last().map_or(0, |&o| o.min(data.len())),
    );
    out.reserve(offsets.len().max(1) * LEN_SIZE + last.saturating_sub(first));
    out.extend_from_slice(&count.to_le_bytes());
    for (j, range) in element_ranges(offsets, data.len()).enumerate() {
        let range = range?;
        let len = u32::try_from(range.len()).map_err(|_| VlenV2Error::TooLarge {
            what: format!("element {j} length"),
            value: range.len() as u64,
        })?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&data[range]);
    }
    Ok(())
}

/// Decode a chunk of `count` elements into the concatenated element bytes
/// and their `count + 1` offsets, in one pass that checks the chunk: the
/// item count, every length field and element within the chunk, nothing
/// after the last.
///
/// # Errors
/// Any [`VlenV2Error`] except [`VlenV2Error::Utf8`], [`VlenV2Error::TooLarge`]
/// and [`VlenV2Error::Input`].
pub fn decode(chunk: &[u8], count: u64) -> Result<(Vec<u8>, Vec<usize>), VlenV2Error> {
    let field = |at: usize| -> Option<u32> {
        let bytes = chunk.get(at..at.checked_add(LEN_SIZE)?)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    };
    let header = field(0).ok_or(VlenV2Error::TooShort { len: chunk.len() })?;
    if u64::from(header) != count {
        return Err(VlenV2Error::Count {
            count: header,
            expected: count,
        });
    }
    // Each element needs at least its length field: refuse an impossible
    // count before allocating for it.
    let needed = (u128::from(count) + 1) * LEN_SIZE as u128;
    if needed > chunk.len() as u128 {
        return Err(VlenV2Error::TooShortForCount {
            len: chunk.len(),
            count,
            expected: needed,
        });
    }
    // `count` fits: the chunk holds `count` length fields, and every other
    // byte of it is element data.
    let mut data = Vec::with_capacity(chunk.len() - needed as usize);
    let mut offsets = Vec::with_capacity(count as usize + 1);
    offsets.push(0);
    let mut at = LEN_SIZE;
    for element in 0..count as usize {
        let length = field(at).ok_or(VlenV2Error::FieldPastEnd {
            element,
            at,
            len: chunk.len(),
        })?;
        let start = at + LEN_SIZE;
        let available = chunk.len() - start;
        if length as usize > available {
            return Err(VlenV2Error::LengthPastEnd {
                element,
                length,
                at,
                available,
            });
        }
        data.extend_from_slice(&chunk[start..start + length as usize]);
        offsets.push(data.len());
        at = start + length as usize;
    }
    if at != chunk.len() {
        return Err(VlenV2Error::Trailing {
            trailing: chunk.len() - at,
            len: chunk.len(),
        });
    }
    Ok((data, offsets))
}

/// Check that every element is UTF-8.
///
/// # Errors
/// [`VlenV2Error::Utf8`] naming the first element that is not.
pub fn check_utf8(data: &[u8], offsets: &[usize]) -> Result<(), VlenV2Error> {
    for (element, range) in element_ranges(offsets, data.len()).enumerate() {
        std::str::from_utf8(&data[range?])
            .map_err(|reason| VlenV2Error::Utf8 { element, reason })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand from the layout: 2 items, "ab" and "".
    const AB_EMPTY: [u8; 14] = [2, 0, 0, 0, 2, 0, 0, 0, b'a', b'b', 0, 0, 0, 0];

    #[test]
    fn encode_by_hand() {
        let mut out = Vec::new();
        encode(b"ab", &[0, 2, 2], &mut out).unwrap();
        assert_eq!(out, AB_EMPTY);
        // Unused bytes before the first element are not written.
        let mut out = Vec::new();
        encode(b"xxab", &[2, 4, 4], &mut out).unwrap();
        assert_eq!(out, AB_EMPTY);
    }

    #[test]
    fn decode_by_hand() {
        assert_eq!(
            decode(&AB_EMPTY, 2).unwrap(),
            (b"ab".to_vec(), vec![0, 2, 2])
        );
        assert_eq!(decode(&[0, 0, 0, 0], 0).unwrap(), (vec![], vec![0]));
    }

    #[test]
    fn corrupt_chunks() {
        assert_eq!(decode(&[2, 0], 2), Err(VlenV2Error::TooShort { len: 2 }));
        assert_eq!(
            decode(&AB_EMPTY, 3),
            Err(VlenV2Error::Count {
                count: 2,
                expected: 3
            })
        );
        let mut huge = AB_EMPTY;
        huge[4] = 0xff;
        assert!(matches!(
            decode(&huge, 2),
            Err(VlenV2Error::LengthPastEnd {
                element: 0,
                length: 255,
                at: 4,
                ..
            })
        ));
        let mut trailing = AB_EMPTY.to_vec();
        trailing.push(7);
        assert_eq!(
            decode(&trailing, 2),
            Err(VlenV2Error::Trailing {
                trailing: 1,
                len: 15
            })
        );
        // The second length field is cut short.
        assert!(matches!(
            decode(&AB_EMPTY[..12], 2),
            Err(VlenV2Error::FieldPastEnd {
                element: 1,
                at: 10,
                len: 12
            })
        ));
        // u32::MAX items in a 4-byte chunk: refused before any allocation.
        assert!(matches!(
            decode(&[0xff; 4], u64::from(u32::MAX)),
            Err(VlenV2Error::TooShortForCount { .. })
        ));
    }

    #[test]
    fn utf8() {
        assert!(check_utf8("é".as_bytes(), &[0, 2]).is_ok());
        // Valid when concatenated, not per element.
        assert!(matches!(
            check_utf8("é".as_bytes(), &[0, 1, 2]),
            Err(VlenV2Error::Utf8 { element: 0, .. })
        ));
    }

    #[test]
    fn bad_offsets_are_errors() {
        let mut out = Vec::new();
        assert!(encode(b"ab", &[0, 3], &mut out).is_err());
        assert!(encode(b"ab", &[2, 1], &mut out).is_err());
    }
}
