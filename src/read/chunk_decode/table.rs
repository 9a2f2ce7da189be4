//! Lookup tables for the fused path: a stored type of one or two bytes has
//! at most 256 or 65,536 values, so its decode is a table of that many
//! final values, looked up per element.
//!
//! Why: `scale_offset`'s decode divides (`x / scale + offset`, as
//! zarr-python computes it; multiplying by the reciprocal would differ in
//! the last bit), and a division per element is most of a decode from
//! `uint8` or `uint16` to `float64`. A table lookup is a load and a store.
//!
//! The table is made by the same kernels over every stored value, in one
//! block, so each entry is the value those kernels give for that stored
//! value: the kernels are element-wise (no element's result depends on
//! another's or on its position), which makes a lookup bit for bit the
//! kernels' result. If any stored value fails to decode (a `cast_value`
//! with no rule for a value out of range, say), no table is made, and the
//! kernels run per block as before, so the error names the element that
//! fails.
//!
//! Into a large output (at least [`STREAM_FROM_BYTES`]) of 8-byte
//! elements on x86-64, the looked-up values are written with non-temporal
//! stores: such an output does not fit in the caches anyway, and an
//! ordinary store first reads each line it writes from memory, so half the
//! memory traffic of a `uint8` -> `float64` decode was reads of the output
//! it was about to overwrite (a whole read into a reused buffer went from
//! 64 to 43 ms for 256 MiB). Smaller outputs keep ordinary stores, so a
//! window stays in the cache for whoever reads it next. A non-temporal
//! store into a page faulted in just before (the kernel's zeroing left its
//! lines in the cache) is slow, so the reads fault such outputs in before
//! the decode (`read::output::touch`): a 256 MiB read of 32 MiB chunks
//! into a fresh output took 118-148 ms streamed into pages faulted by the
//! decode itself, 87-98 ms with ordinary stores, 75-77 ms streamed into
//! pages faulted first.
//!
//! One-byte types get their table when the decoder is made (256 decodes).
//! Two-byte types get theirs once the decoder has decoded
//! [`TWO_BYTE_AFTER`] elements without one: 65,536 decodes pay off only
//! over a read several times that size, and a decoder is shared by every
//! chunk of a read.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Elements decoded without a table before a two-byte type gets one.
pub(super) const TWO_BYTE_AFTER: usize = 4 << 16;

/// Outputs of at least this many bytes get non-temporal stores (fuzzing
/// builds: every output, so that the fuzz targets reach them).
pub(crate) const STREAM_FROM_BYTES: usize = if cfg!(fuzzing) { 0 } else { 16 << 20 };

/// A stored type's decode as a table, or the way to one.
pub(super) struct Tables {
    /// Bytes of a stored element: 1 or 2 (other sizes get no table).
    stored_size: usize,
    /// Bytes of a final element.
    out_size: usize,
    /// Elements decoded so far without a table (two-byte types).
    decoded: AtomicUsize,
    /// The table, once made (`None`: a value failed, no table).
    table: OnceLock<Option<Vec<u64>>>,
}

impl Tables {
    /// Tables for stored elements of `stored_size` bytes decoding to
    /// `out_size` bytes; `make` decodes one block of stored elements
    /// (native byte order) into as many final elements, or fails.
    pub(super) fn new(
        stored_size: usize,
        out_size: usize,
        make: impl FnOnce(&[u8], &mut [u8]) -> bool,
    ) -> Option<Self> {
        if !matches!(stored_size, 1 | 2) || !matches!(out_size, 1 | 2 | 4 | 8) {
            return None;
        }
        let tables = Self {
            stored_size,
            out_size,
            decoded: AtomicUsize::new(0),
            table: OnceLock::new(),
        };
        if stored_size == 1 {
            let _ = tables.table.set(build(1, out_size, make));
        }
        Some(tables)
    }

    /// The table for a block of `elements` elements about to be decoded, if
    /// there is one (made now if this decode crosses [`TWO_BYTE_AFTER`]).
    pub(super) fn get(
        &self,
        elements: usize,
        make: impl FnOnce(&[u8], &mut [u8]) -> bool,
    ) -> Option<Table<'_>> {
        let table = match self.table.get() {
            Some(table) => table,
            None => {
                let before = self.decoded.fetch_add(elements, Ordering::Relaxed);
                if before + elements < TWO_BYTE_AFTER {
                    return None;
                }
                self.table
                    .get_or_init(|| build(self.stored_size, self.out_size, make))
            }
        };
        table.as_deref().map(|entries| Table {
            entries: bytemuck::cast_slice(entries),
            stored_size: self.stored_size,
            out_size: self.out_size,
        })
    }
}

/// Every value of a `stored_size`-byte type, in native byte order, decoded
/// by `make`; `None` if it fails. Both buffers are `u64`s underneath, so
/// the kernels see them aligned for any element type.
fn build(
    stored_size: usize,
    out_size: usize,
    make: impl FnOnce(&[u8], &mut [u8]) -> bool,
) -> Option<Vec<u64>> {
    let count = 1usize << (8 * stored_size);
    let mut values = vec![0u64; (count * stored_size).div_ceil(8)];
    let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut values)[..count * stored_size];
    match stored_size {
        1 => bytes.iter_mut().zip(0..=u8::MAX).for_each(|(b, v)| *b = v),
        _ => bytes
            .chunks_exact_mut(2)
            .zip(0..=u16::MAX)
            .for_each(|(b, v)| b.copy_from_slice(&v.to_ne_bytes())),
    }
    let mut entries = vec![0u64; (count * out_size).div_ceil(8)];
    let made = make(
        &bytemuck::cast_slice::<u64, u8>(&values)[..count * stored_size],
        &mut bytemuck::cast_slice_mut::<u64, u8>(&mut entries)[..count * out_size],
    );
    made.then_some(entries)
}

/// A made table: the final value of every stored value.
pub(super) struct Table<'a> {
    entries: &'a [u8],
    stored_size: usize,
    out_size: usize,
}

impl Table<'_> {
    /// Decode `block` (stored elements, native byte order) into `target`
    /// (as many final elements); `stream`: with non-temporal stores where
    /// the machine has them (8-byte elements, `target` aligned to 8).
    pub(super) fn decode(&self, block: &[u8], target: &mut [u8], stream: bool) {
        match self.out_size {
            1 => self.lookup::<1>(block, target),
            2 => self.lookup::<2>(block, target),
            4 => self.lookup::<4>(block, target),
            _ => {
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                if stream && target.as_ptr().cast::<u64>().is_aligned() {
                    return self.stream8(block, target);
                }
                let _ = stream;
                self.lookup::<8>(block, target);
            }
        }
    }

    fn lookup<const W: usize>(&self, block: &[u8], target: &mut [u8]) {
        // Fixed-size arrays: each entry is one load and one store, whatever
        // the alignment of the output; a table of exactly 256 or 65,536
        // entries indexed by a `u8` or `u16` needs no bounds check.
        let (entries, _) = self.entries.as_chunks::<W>();
        let (out, _) = target.as_chunks_mut::<W>();
        if self.stored_size == 1 {
            let entries: &[[u8; W]; 256] = entries[..256].try_into().expect("256 entries");
            for (dst, &value) in out.iter_mut().zip(block) {
                *dst = entries[usize::from(value)];
            }
        } else {
            let entries: &[[u8; W]; 65536] = entries[..65536].try_into().expect("65,536 entries");
            let (values, _) = block.as_chunks::<2>();
            for (dst, &value) in out.iter_mut().zip(values) {
                *dst = entries[usize::from(u16::from_ne_bytes(value))];
            }
        }
    }

    /// [`lookup`](Self::lookup) of 8-byte values with non-temporal stores,
    /// into `target` aligned to 8 bytes.
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    fn stream8(&self, block: &[u8], target: &mut [u8]) {
        let (entries, _) = self.entries.as_chunks::<8>();
        let (out, _) = target.as_chunks_mut::<8>();
        // One loop per stored size, each indexing a table of exactly its
        // size (no bounds check, nothing to branch on per element).
        if self.stored_size == 1 {
            let entries: &[[u8; 8]; 256] = entries[..256].try_into().expect("256 entries");
            stream_into(out, block.iter().map(|&v| entries[usize::from(v)]));
        } else {
            let entries: &[[u8; 8]; 65536] = entries[..65536].try_into().expect("65,536 entries");
            let (values, _) = block.as_chunks::<2>();
            stream_into(
                out,
                values
                    .iter()
                    .map(|&v| entries[usize::from(u16::from_ne_bytes(v))]),
            );
        }
    }
}

/// Write `values` into `out` (aligned to 8 bytes) with non-temporal stores,
/// as many as `out` holds.
#[cfg(all(target_arch = "x86_64", not(miri)))]
fn stream_into(out: &mut [[u8; 8]], values: impl Iterator<Item = [u8; 8]>) {
    use std::arch::x86_64::{_mm_sfence, _mm_stream_si64};
    let len = out.len();
    let first = out.as_mut_ptr().cast::<i64>();
    debug_assert!(first.is_aligned());
    for (i, value) in values.take(len).enumerate() {
        // SAFETY: `i < len`, so `first.add(i)` points at the `i`-th
        // 8-byte element of `out`, which this call borrows mutably;
        // `Table::decode` checked that the output is aligned to 8, so every
        // element is; `movnti` (SSE2, in every x86-64 CPU) has no other
        // requirement.
        unsafe { _mm_stream_si64(first.add(i), i64::from_ne_bytes(value)) };
    }
    // Non-temporal stores are weakly ordered: fence them before the caller
    // (or another thread, after joining) reads the output.
    // SAFETY: `sfence` (SSE, in every x86-64 CPU) touches no memory.
    unsafe { _mm_sfence() };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A decode that doubles a `u8` into a `u16`, and one that refuses
    /// value 200.
    fn double(src: &[u8], dst: &mut [u8]) -> bool {
        for (d, &s) in dst.chunks_exact_mut(2).zip(src) {
            d.copy_from_slice(&(u16::from(s) * 2).to_ne_bytes());
        }
        true
    }

    #[test]
    fn one_byte_tables_are_made_at_once() {
        let tables = Tables::new(1, 2, double).unwrap();
        let table = tables.get(3, |_, _| unreachable!()).unwrap();
        let mut out = [0u8; 6];
        table.decode(&[0, 7, 255], &mut out, false);
        let want: Vec<u8> = [0u16, 14, 510]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(out.as_slice(), want);
    }

    #[test]
    fn a_value_that_fails_gives_no_table() {
        let tables = Tables::new(1, 2, |src, dst| double(src, dst) && !src.contains(&200)).unwrap();
        assert!(tables.get(1, double).is_none());
    }

    #[test]
    fn two_byte_tables_wait_for_enough_elements() {
        let negate = |src: &[u8], dst: &mut [u8]| {
            for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(2)) {
                let v = -i32::from(u16::from_ne_bytes([s[0], s[1]]));
                d.copy_from_slice(&v.to_ne_bytes());
            }
            true
        };
        let tables = Tables::new(2, 4, |_, _| unreachable!()).unwrap();
        assert!(
            tables
                .get(TWO_BYTE_AFTER - 1, |_, _| unreachable!())
                .is_none()
        );
        let table = tables.get(1, negate).unwrap();
        let mut out = [0u8; 8];
        table.decode(&[1, 0, 0xff, 0xff], &mut out, false);
        let first = u16::from_ne_bytes([1, 0]);
        assert_eq!(out[..4], (-i32::from(first)).to_ne_bytes());
        assert_eq!(out[4..], (-65535i32).to_ne_bytes());
    }

    /// 8-byte values streamed (non-temporal stores) into an aligned output
    /// equal the ordinary lookup's, from one- and two-byte stored types;
    /// an unaligned output takes the ordinary stores and is right too.
    #[test]
    fn streamed_values_equal_looked_up_ones() {
        let widen = |size: usize| {
            move |src: &[u8], dst: &mut [u8]| {
                for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(size)) {
                    let mut v = [0u8; 2];
                    v[..size].copy_from_slice(s);
                    let x = f64::from(u16::from_le_bytes(v)) / 3.0 - 7.0;
                    d.copy_from_slice(&x.to_ne_bytes());
                }
                true
            }
        };
        for size in [1, 2] {
            let tables = Tables::new(size, 8, widen(size)).unwrap();
            let table = tables.get(TWO_BYTE_AFTER, widen(size)).unwrap();
            let block: Vec<u8> = (0..1000u32).map(|i| (i * 37 % 251) as u8).collect();
            let n = block.len() / size;
            let mut want = vec![0u64; n];
            table.decode(&block, bytemuck::cast_slice_mut(&mut want), false);
            let mut streamed = vec![0u64; n];
            table.decode(&block, bytemuck::cast_slice_mut(&mut streamed), true);
            assert_eq!(streamed, want);
            let mut unaligned = vec![0u64; n + 1];
            let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut unaligned)[1..1 + 8 * n];
            table.decode(&block, bytes, true);
            assert!(
                bytes
                    .chunks_exact(8)
                    .zip(&want)
                    .all(|(b, w)| b == w.to_ne_bytes())
            );
            let mut reference = vec![0u8; 8 * n];
            assert!(widen(size)(&block, &mut reference));
            assert_eq!(bytemuck::cast_slice::<u64, u8>(&want), reference.as_slice());
        }
    }

    #[test]
    fn other_sizes_get_no_tables() {
        assert!(Tables::new(4, 8, double).is_none());
        assert!(Tables::new(1, 16, double).is_none());
    }
}
