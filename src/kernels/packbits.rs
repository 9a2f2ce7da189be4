//! Bit packing for the `packbits` codec.
//!
//! The decoded side is a sequence of *components* of `component_bytes` bytes
//! each, native endian, as zarrs holds them in memory (a complex element is
//! two consecutive components; `int2` / `int4` / `uint2` / `uint4` / `bool`
//! and the 4- and 6-bit floats are one byte each). The encoded side is a bit
//! stream: component `i` occupies bits `[i * bits, (i + 1) * bits)`, bit `j`
//! of the stream being bit `j % 8` (least significant first) of byte `j / 8`.
//!
//! Encoding takes bits `first_bit ..= first_bit + bits - 1` of each component.
//! Decoding puts them back at `first_bit` and then sign-extends (from the last
//! encoded bit) or zero-extends to the component's in-memory width, so `int4`
//! decodes to a sign-extended `i8` and `int32` with `last_bit = 11` to a
//! sign-extended `i32`.
//!
//! # Performance
//!
//! [`pack`] and [`unpack`] pick one path per call:
//! - whole components (`bits == 8 * component_bytes`): a copy (a byte swap
//!   per component on big-endian hosts);
//! - one-byte components with 1, 2 or 4 bits (`bool`, `int2`, `uint4`, ...):
//!   the components of one encoded byte form a little-endian lane (`u64`,
//!   `u32`, `u16`) that shifts and masks gather into, or spread out of, that
//!   byte, the same operations on every lane so that the compiler vectorises
//!   the loop. Unpacking 1 and 2 bits goes through a 256-entry table built
//!   per call instead (one load per 8 or 4 decoded bytes); both apply
//!   `first_bit` and the sign extension;
//! - anything else: a bit stream through a 128-bit accumulator, 8 encoded
//!   bytes per load or store.

use thiserror::Error;

/// Which bits of a component are packed, and how it is stored in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitLayout {
    component_bytes: usize,
    first_bit: u32,
    bits: u32,
    signed: bool,
}

/// An error from the packing kernels: a bad layout or mismatched lengths.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PackBitsError {
    /// The layout cannot be packed.
    #[error(
        "cannot pack bits {first_bit}..={last_bit} of a {component_bytes}-byte component",
        last_bit = i64::from(*first_bit) + i64::from(*bits) - 1
    )]
    Layout {
        /// Bytes per component in memory.
        component_bytes: usize,
        /// The first packed bit.
        first_bit: u32,
        /// The number of packed bits.
        bits: u32,
    },
    /// The decoded bytes are not a whole number of components.
    #[error("{len} decoded bytes are not a whole number of {component_bytes}-byte components")]
    PartialComponent {
        /// The decoded length in bytes.
        len: usize,
        /// Bytes per component in memory.
        component_bytes: usize,
    },
    /// The encoded bytes do not hold exactly the requested components.
    #[error(
        "{len} encoded bytes, expected {} for {components} components of {bits} bits{}",
        expected.map_or_else(|| "more than u64::MAX".to_string(), |e| e.to_string()),
        if *bit_offset == 0 { String::new() } else { format!(" starting at bit {bit_offset}") }
    )]
    EncodedLength {
        /// The encoded length in bytes.
        len: usize,
        /// The expected encoded length in bytes (`None` on overflow).
        expected: Option<u64>,
        /// The number of components.
        components: u64,
        /// Bits per component.
        bits: u32,
        /// The bit of the first encoded byte where the first component starts.
        bit_offset: u32,
    },
}

impl BitLayout {
    /// A layout packing bits `first_bit ..= first_bit + bits - 1` of
    /// components of `component_bytes` bytes (1, 2, 4 or 8); `signed`
    /// components are sign-extended when unpacked.
    ///
    /// # Errors
    /// [`PackBitsError::Layout`] if `component_bytes` is not 1, 2, 4 or 8,
    /// `bits` is 0, or the bits do not fit in the component.
    pub fn new(
        component_bytes: usize,
        first_bit: u32,
        bits: u32,
        signed: bool,
    ) -> Result<Self, PackBitsError> {
        let width = u32::try_from(component_bytes * 8).unwrap_or(u32::MAX);
        let fits = first_bit.checked_add(bits).is_some_and(|end| end <= width);
        if !matches!(component_bytes, 1 | 2 | 4 | 8) || bits == 0 || !fits {
            return Err(PackBitsError::Layout {
                component_bytes,
                first_bit,
                bits,
            });
        }
        Ok(Self {
            component_bytes,
            first_bit,
            bits,
            signed,
        })
    }

    /// Bytes per component in memory.
    #[must_use]
    pub fn component_bytes(&self) -> usize {
        self.component_bytes
    }

    /// The first packed bit of a component.
    #[must_use]
    pub fn first_bit(&self) -> u32 {
        self.first_bit
    }

    /// The number of packed bits per component.
    #[must_use]
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Whether unpacked components are sign-extended.
    #[must_use]
    pub fn signed(&self) -> bool {
        self.signed
    }

    /// The number of bytes spanned by `components` packed components whose
    /// first starts `bit_offset` bits into the first byte (`None` on overflow).
    #[must_use]
    pub fn packed_len(&self, components: u64, bit_offset: u32) -> Option<u64> {
        components
            .checked_mul(u64::from(self.bits))?
            .checked_add(u64::from(bit_offset))
            .map(|bits| bits.div_ceil(8))
    }

    /// True if the whole component is packed, so packing is a copy.
    fn is_verbatim(&self) -> bool {
        self.bits as usize == 8 * self.component_bytes
    }

    /// The number of components in `decoded`.
    fn components(&self, decoded: &[u8]) -> Result<u64, PackBitsError> {
        if !decoded.len().is_multiple_of(self.component_bytes) {
            return Err(PackBitsError::PartialComponent {
                len: decoded.len(),
                component_bytes: self.component_bytes,
            });
        }
        Ok((decoded.len() / self.component_bytes) as u64)
    }

    /// Check that `len` encoded bytes hold exactly `components` components.
    fn check_encoded(
        &self,
        components: u64,
        bit_offset: u32,
        len: usize,
    ) -> Result<(), PackBitsError> {
        let expected = if bit_offset < 8 {
            self.packed_len(components, bit_offset)
        } else {
            None
        };
        if expected != Some(len as u64) {
            return Err(PackBitsError::EncodedLength {
                len,
                expected,
                components,
                bits: self.bits,
                bit_offset,
            });
        }
        Ok(())
    }

    /// The in-register value of a component from its packed field: back at
    /// `first_bit`, then sign- or zero-extended to 64 bits (the store keeps
    /// the low `8 * component_bytes` bits).
    #[inline(always)]
    fn unpack_value(&self, field: u64) -> u64 {
        let value = field << self.first_bit;
        if self.signed {
            let shift = 64 - (self.first_bit + self.bits);
            (((value << shift) as i64) >> shift) as u64
        } else {
            value
        }
    }
}

/// Pack every component of `decoded` into `encoded`, which must be exactly
/// [`packed_len`](BitLayout::packed_len)`(components, 0)` bytes long. Every
/// byte of `encoded` is written; the padding bits of the last byte are zero.
///
/// # Errors
/// [`PackBitsError`] if the lengths do not match.
pub fn pack(layout: &BitLayout, decoded: &[u8], encoded: &mut [u8]) -> Result<(), PackBitsError> {
    let components = layout.components(decoded)?;
    layout.check_encoded(components, 0, encoded.len())?;
    match (layout.component_bytes, layout.bits) {
        _ if layout.is_verbatim() => copy_components(layout.component_bytes, decoded, encoded),
        (1, 1 | 2 | 4) => pack_fields(layout, decoded, encoded),
        (1, _) => pack_stream::<1>(layout, decoded, encoded),
        (2, _) => pack_stream::<2>(layout, decoded, encoded),
        (4, _) => pack_stream::<4>(layout, decoded, encoded),
        _ => pack_stream::<8>(layout, decoded, encoded),
    }
    Ok(())
}

/// Unpack `decoded.len() / component_bytes` components from `encoded`, the
/// first starting at bit `bit_offset` (0..8) of `encoded[0]`. `encoded` must
/// be exactly [`packed_len`](BitLayout::packed_len)`(components, bit_offset)`
/// bytes long; bits after the last component are ignored.
///
/// # Errors
/// [`PackBitsError`] if the lengths do not match.
pub fn unpack(
    layout: &BitLayout,
    encoded: &[u8],
    bit_offset: u32,
    decoded: &mut [u8],
) -> Result<(), PackBitsError> {
    let components = layout.components(decoded)?;
    layout.check_encoded(components, bit_offset, encoded.len())?;
    match (layout.component_bytes, layout.bits) {
        _ if layout.is_verbatim() && bit_offset == 0 => {
            copy_components(layout.component_bytes, encoded, decoded);
        }
        (1, 1 | 2 | 4) => unpack_fields(layout, encoded, bit_offset, decoded),
        (1, _) => unpack_stream::<1>(layout, encoded, bit_offset, decoded),
        (2, _) => unpack_stream::<2>(layout, encoded, bit_offset, decoded),
        (4, _) => unpack_stream::<4>(layout, encoded, bit_offset, decoded),
        _ => unpack_stream::<8>(layout, encoded, bit_offset, decoded),
    }
    Ok(())
}

/// Native-endian components to little-endian ones, or back (the same
/// operation): a copy on little-endian hosts.
fn copy_components(component_bytes: usize, from: &[u8], to: &mut [u8]) {
    to.copy_from_slice(from);
    if cfg!(target_endian = "big") && component_bytes > 1 {
        to.chunks_exact_mut(component_bytes)
            .for_each(<[u8]>::reverse);
    }
}

/// Low `bits` bits set.
#[inline(always)]
fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// Load one native-endian component of `C` bytes.
#[inline(always)]
fn load<const C: usize>(chunk: &[u8]) -> u64 {
    // `chunk` is always `C` bytes long (from `chunks_exact(C)`), so the
    // conversions cannot fail and compile to a single load.
    match C {
        1 => chunk.first().copied().map_or(0, u64::from),
        2 => u64::from(u16::from_ne_bytes(chunk.try_into().unwrap_or_default())),
        4 => u64::from(u32::from_ne_bytes(chunk.try_into().unwrap_or_default())),
        _ => u64::from_ne_bytes(chunk.try_into().unwrap_or_default()),
    }
}

/// Store the low `C` bytes of `value` as one native-endian component.
#[inline(always)]
fn store<const C: usize>(value: u64, chunk: &mut [u8]) {
    match C {
        1 => chunk.fill(value as u8),
        2 => chunk.copy_from_slice(&(value as u16).to_ne_bytes()),
        4 => chunk.copy_from_slice(&(value as u32).to_ne_bytes()),
        _ => chunk.copy_from_slice(&value.to_ne_bytes()),
    }
}

/// `0x01` in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;

/// Pack one-byte components of 1, 2 or 4 bits: the `8 / bits` components of
/// each encoded byte are loaded as one little-endian lane (`u64`, `u32` or
/// `u16`) and gathered into its low byte with shifts and masks. The same
/// operations on every lane let the compiler vectorise the loop.
fn pack_fields(layout: &BitLayout, decoded: &[u8], encoded: &mut [u8]) {
    let shift = layout.first_bit;
    match layout.bits {
        // Bit 0 of byte i (at 8i) to bit i: each step halves the gap
        // between the bits, ORing bytes i and i+1 (then pairs, then nibbles).
        1 => pack_groups::<8>(layout, decoded, encoded, |group| {
            let v = (u64::from_le_bytes(*group) >> shift) & ONES;
            let v = v | (v >> 7);
            let v = v | (v >> 14);
            (v | (v >> 28)) as u8
        }),
        // 2-bit fields at 0, 8, 16, 24 to 0, 2, 4, 6.
        2 => pack_groups::<4>(layout, decoded, encoded, |group| {
            let v = (u32::from_le_bytes(*group) >> shift) & 0x0303_0303;
            let v = v | (v >> 6);
            (v | (v >> 12)) as u8
        }),
        // Nibbles at 0 and 8 to 0 and 4.
        _ => pack_groups::<2>(layout, decoded, encoded, |group| {
            let v = u16::from_le_bytes(*group) >> shift;
            ((v & 0x000f) | ((v >> 4) & 0x00f0)) as u8
        }),
    }
}

/// Pack `PER` components per encoded byte with `gather`; the last partial
/// byte goes through the bit stream.
#[inline(always)]
fn pack_groups<const PER: usize>(
    layout: &BitLayout,
    decoded: &[u8],
    encoded: &mut [u8],
    gather: impl Fn(&[u8; PER]) -> u8,
) {
    let (groups, tail) = decoded.as_chunks::<PER>();
    let (encoded_groups, encoded_tail) = encoded.split_at_mut(groups.len());
    for (out, group) in encoded_groups.iter_mut().zip(groups) {
        *out = gather(group);
    }
    pack_stream::<1>(layout, tail, encoded_tail);
}

/// Unpack one-byte components of 1, 2 or 4 bits: each encoded byte is
/// spread into a lane with one field per byte, then every byte is shifted to
/// `first_bit` and sign-extended with the same lane-wide operations (see
/// [`Lane::place`]), so the compiler can vectorise the loop.
fn unpack_fields(layout: &BitLayout, encoded: &[u8], bit_offset: u32, decoded: &mut [u8]) {
    let bits = layout.bits;
    if !bit_offset.is_multiple_of(bits) {
        // Not a component boundary (never the case for a partial decode).
        unpack_stream::<1>(layout, encoded, bit_offset, decoded);
        return;
    }
    // A partial decode may start mid-byte: the components before the next
    // byte boundary go through the bit stream, the rest is byte aligned.
    let (encoded, decoded) = if bit_offset == 0 || decoded.is_empty() {
        (encoded, decoded)
    } else {
        let lead = (((8 - bit_offset) / bits) as usize).min(decoded.len());
        let (head, rest) = decoded.split_at_mut(lead);
        let (first, encoded_rest) = encoded.split_at(1);
        unpack_stream::<1>(layout, first, bit_offset, head);
        (encoded_rest, rest)
    };
    if decoded.len() >= MIN_COMPONENTS_FOR_TABLE {
        match bits {
            1 => return unpack_table::<1>(layout, encoded, decoded),
            2 => return unpack_table::<2>(layout, encoded, decoded),
            _ => {}
        }
    }
    match (bits, layout.signed) {
        (1, false) => unpack_groups::<8>(layout, encoded, decoded, |e| {
            u64::place::<false>(spread_1(e), layout).to_le_bytes()
        }),
        (1, true) => unpack_groups::<8>(layout, encoded, decoded, |e| {
            u64::place::<true>(spread_1(e), layout).to_le_bytes()
        }),
        (2, false) => unpack_groups::<4>(layout, encoded, decoded, |e| {
            u32::place::<false>(spread_2(e), layout).to_le_bytes()
        }),
        (2, true) => unpack_groups::<4>(layout, encoded, decoded, |e| {
            u32::place::<true>(spread_2(e), layout).to_le_bytes()
        }),
        (_, false) => unpack_groups::<2>(layout, encoded, decoded, |e| {
            u16::place::<false>(spread_4(e), layout).to_le_bytes()
        }),
        (_, true) => unpack_groups::<2>(layout, encoded, decoded, |e| {
            u16::place::<true>(spread_4(e), layout).to_le_bytes()
        }),
    }
}

/// Below this many components, building a table costs more than it saves.
const MIN_COMPONENTS_FOR_TABLE: usize = 1024;

/// Unpack 1- or 2-bit components (`B`) through a 256-entry table that maps
/// an encoded byte to its `8 / B` decoded bytes, shift to `first_bit` and
/// sign extension included: one load per 8 or 4 decoded bytes, which beats
/// the lane arithmetic for these widths. Eight decoded bytes (one store)
/// come from `B` encoded bytes.
fn unpack_table<const B: usize>(layout: &BitLayout, encoded: &[u8], decoded: &mut [u8]) {
    let mut table = [0u64; 256];
    for (byte, entry) in table.iter_mut().enumerate() {
        for j in 0..8 / B {
            let field = (byte as u64 >> (j * B)) & low_mask(B as u32);
            *entry |= (layout.unpack_value(field) & 0xff) << (8 * j);
        }
    }
    let (groups, tail) = decoded.as_chunks_mut::<8>();
    let (encoded_groups, encoded_tail) = encoded.split_at(groups.len() * B);
    let (encoded_groups, _) = encoded_groups.as_chunks::<B>();
    for (out, group) in groups.iter_mut().zip(encoded_groups) {
        let mut word = 0u64;
        for (i, &byte) in group.iter().enumerate() {
            word |= table[usize::from(byte)] << (i * 64 / B);
        }
        *out = word.to_le_bytes();
    }
    unpack_stream::<1>(layout, encoded_tail, 0, tail);
}

/// The 8 bits of `e` to bit 0 of 8 bytes: the reverse of the gather in
/// [`pack_fields`] (nibbles to 32-bit halves, pairs to 16-bit quarters,
/// bits to bytes).
#[inline(always)]
fn spread_1(e: u8) -> u64 {
    let v = u64::from(e);
    let v = (v | (v << 28)) & 0x0000_000f_0000_000f;
    let v = (v | (v << 14)) & 0x0003_0003_0003_0003;
    (v | (v << 7)) & ONES
}

/// The four 2-bit fields of `e` to bits 0-1 of 4 bytes.
#[inline(always)]
fn spread_2(e: u8) -> u32 {
    let v = u32::from(e);
    let v = (v | (v << 12)) & 0x000f_000f;
    (v | (v << 6)) & 0x0303_0303
}

/// The two nibbles of `e` to bits 0-3 of 2 bytes.
#[inline(always)]
fn spread_4(e: u8) -> u16 {
    let v = u16::from(e);
    (v & 0x000f) | ((v & 0x00f0) << 4)
}

/// Unpack `PER` components per encoded byte with `spread`; the last partial
/// byte goes through the bit stream.
#[inline(always)]
fn unpack_groups<const PER: usize>(
    layout: &BitLayout,
    encoded: &[u8],
    decoded: &mut [u8],
    spread: impl Fn(u8) -> [u8; PER],
) {
    let (groups, tail) = decoded.as_chunks_mut::<PER>();
    let (encoded_groups, encoded_tail) = encoded.split_at(groups.len());
    for (out, &byte) in groups.iter_mut().zip(encoded_groups) {
        *out = spread(byte);
    }
    unpack_stream::<1>(layout, encoded_tail, 0, tail);
}

/// A little-endian lane of bytes, one decoded component per byte.
trait Lane: Sized {
    /// `0x01` in every byte.
    const ONES: Self;

    /// Move the field in the low bits of every byte to `first_bit`, then
    /// (for signed types) copy bit `last_bit` into the bits above it.
    /// `first_bit + bits <= 8`, so no byte spills into the next.
    fn place<const SIGNED: bool>(self, layout: &BitLayout) -> Self;
}

macro_rules! impl_lane {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            const ONES: Self = ONES as $t;

            #[inline(always)]
            fn place<const SIGNED: bool>(self, layout: &BitLayout) -> Self {
                let v = self << layout.first_bit;
                if !SIGNED {
                    return v;
                }
                let last_bit = layout.first_bit + layout.bits - 1;
                // 1 in the bytes whose sign bit is set, then 0xFF there
                // (x * 255 = (x << 8) - x, per byte as x is 0 or 1; the
                // top byte's carry wraps away), kept above last_bit.
                let negative = (v >> last_bit) & Self::ONES;
                let filled = (negative << 8).wrapping_sub(negative);
                let above = Self::ONES.wrapping_mul(0xff_u8.checked_shl(last_bit + 1).unwrap_or(0).into());
                v | (filled & above)
            }
        }
    )*};
}

impl_lane!(u16, u32, u64);

/// Pack components of `C` bytes through a 128-bit accumulator, flushing eight
/// encoded bytes at a time.
fn pack_stream<const C: usize>(layout: &BitLayout, decoded: &[u8], encoded: &mut [u8]) {
    let mask = low_mask(layout.bits);
    let (shift, bits) = (layout.first_bit, layout.bits);
    let mut acc: u128 = 0;
    let mut filled: u32 = 0;
    let mut pos = 0;
    for chunk in decoded.chunks_exact(C) {
        let field = (load::<C>(chunk) >> shift) & mask;
        acc |= u128::from(field) << filled;
        filled += bits;
        if filled >= 64 {
            if let Some(out) = encoded.get_mut(pos..pos + 8) {
                out.copy_from_slice(&(acc as u64).to_le_bytes());
            }
            pos += 8;
            acc >>= 64;
            filled -= 64;
        }
    }
    // The rest, including the zero padding bits of the last byte.
    for out in encoded.iter_mut().skip(pos) {
        *out = acc as u8;
        acc >>= 8;
    }
}

/// Unpack components of `C` bytes through a 128-bit accumulator, loading
/// eight encoded bytes at a time.
fn unpack_stream<const C: usize>(
    layout: &BitLayout,
    encoded: &[u8],
    bit_offset: u32,
    decoded: &mut [u8],
) {
    let mask = low_mask(layout.bits);
    let bits = layout.bits;
    let mut acc: u128 = 0;
    let mut filled: u32 = 0;
    let mut pos = 0;
    if bit_offset != 0 {
        acc = u128::from(encoded.first().copied().unwrap_or(0) >> bit_offset);
        filled = 8 - bit_offset;
        pos = 1;
    }
    for chunk in decoded.chunks_exact_mut(C) {
        // `bits <= 64` and `filled < bits` before a refill, so the
        // accumulator never holds more than 127 bits.
        while filled < bits {
            if let Some(word) = encoded.get(pos..pos + 8) {
                let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
                acc |= u128::from(word) << filled;
                filled += 64;
                pos += 8;
            } else if let Some(&byte) = encoded.get(pos) {
                acc |= u128::from(byte) << filled;
                filled += 8;
                pos += 1;
            } else {
                // Unreachable once the length has been checked; the missing
                // bits read as zero rather than panicking.
                filled = bits;
            }
        }
        let field = (acc as u64) & mask;
        acc >>= bits;
        filled -= bits;
        store::<C>(layout.unpack_value(field), chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;

    fn layout(component_bytes: usize, first_bit: u32, bits: u32, signed: bool) -> BitLayout {
        BitLayout::new(component_bytes, first_bit, bits, signed).unwrap()
    }

    fn packed(layout: &BitLayout, decoded: &[u8]) -> Vec<u8> {
        let components = (decoded.len() / layout.component_bytes()) as u64;
        let mut encoded = vec![0xAA; layout.packed_len(components, 0).unwrap() as usize];
        pack(layout, decoded, &mut encoded).unwrap();
        encoded
    }

    fn unpacked(layout: &BitLayout, encoded: &[u8], bit_offset: u32, n: usize) -> Vec<u8> {
        let mut decoded = vec![0xAA; n * layout.component_bytes()];
        unpack(layout, encoded, bit_offset, &mut decoded).unwrap();
        decoded
    }

    /// A reference packer written bit by bit from the spec's definition.
    fn reference_pack(layout: &BitLayout, decoded: &[u8]) -> Vec<u8> {
        let c = layout.component_bytes();
        let n = decoded.len() / c;
        let total_bits = n * layout.bits() as usize;
        let mut out = vec![0u8; total_bits.div_ceil(8)];
        for i in 0..n {
            let mut le = decoded[i * c..(i + 1) * c].to_vec();
            if cfg!(target_endian = "big") {
                le.reverse();
            }
            for b in 0..layout.bits() as usize {
                let src = layout.first_bit() as usize + b;
                let bit = (le[src / 8] >> (src % 8)) & 1;
                let dst = i * layout.bits() as usize + b;
                out[dst / 8] |= bit << (dst % 8);
            }
        }
        out
    }

    #[test]
    fn uint2_hand_worked() {
        // uint2 [1, 2, 3, 0, 1]: element i at bits [2i, 2i + 2), LSB first.
        //   1 -> bits 0,1 = 1,0     2 -> bits 2,3 = 0,1
        //   3 -> bits 4,5 = 1,1     0 -> bits 6,7 = 0,0
        //   1 -> bits 8,9 = 1,0
        // byte 0 = 2^0 + 2^3 + 2^4 + 2^5 = 1 + 8 + 16 + 32 = 57 = 0x39
        // byte 1 = 2^0 = 0x01; 10 bits used, so 6 padding bits.
        let l = layout(1, 0, 2, false);
        assert_eq!(packed(&l, &[1, 2, 3, 0, 1]), [0x39, 0x01]);
        assert_eq!(unpacked(&l, &[0x39, 0x01], 0, 5), [1, 2, 3, 0, 1]);
    }

    #[test]
    fn int2_sign_extends() {
        // int2 [-2, -1, 0, 1] = fields 10, 11, 00, 01 at bits 0-1, 2-3, 4-5, 6-7:
        // 0b01_00_11_10 = 0x4E. Decoding sign-extends bit 1 to the whole i8.
        let l = layout(1, 0, 2, true);
        let values = [-2i8, -1, 0, 1].map(|v| v as u8);
        assert_eq!(packed(&l, &values), [0x4E]);
        assert_eq!(unpacked(&l, &[0x4E], 0, 4), values);
    }

    #[test]
    fn int4_first_bit_1_last_bit_2() {
        // int4, first_bit = 1, last_bit = 2, so b = 2 bits per element:
        //   6 = 0b0110 -> bits 2..1 = 11;   -3 = 0b1101 -> 10
        //   2 = 0b0010 -> 01;               -8 = 0b1000 -> 00
        // stream 11, 10, 01, 00 (first field lowest) = 0b00_01_10_11 = 0x1B.
        // Decoding shifts each field back to bit 1 and sign-extends from bit 2:
        //   11 -> 0b110 -> ...11110 = -2;   10 -> 0b100 -> ...11100 = -4
        //   01 -> 0b010 = 2;                00 -> 0
        let l = layout(1, 1, 2, true);
        let values = [6i8, -3, 2, -8].map(|v| v as u8);
        assert_eq!(packed(&l, &values), [0x1B]);
        assert_eq!(
            unpacked(&l, &[0x1B], 0, 4),
            [-2i8, -4, 2, 0].map(|v| v as u8)
        );
    }

    #[test]
    fn bool_eight_per_byte() {
        // [T, F, F, T, F, F, T, F, T] -> bits 0, 3, 6 of byte 0 and bit 0 of
        // byte 1: 1 + 8 + 64 = 73 = 0x49, then 0x01 (7 padding bits).
        let l = layout(1, 0, 1, false);
        let values = [1, 0, 0, 1, 0, 0, 1, 0, 1];
        assert_eq!(packed(&l, &values), [0x49, 0x01]);
        assert_eq!(unpacked(&l, &[0x49, 0x01], 0, 9), values);
    }

    #[test]
    fn int32_last_bit_11_sign_extends_to_32_bits() {
        // int32 -5 with bits 0..=11 packed: 12-bit field 0xFFB. Decoding
        // sign-extends from bit 11 through all 32 bits: back to -5.
        // Two fields: 0xFFB, then 7 = 0x007 -> stream 0x007_FFB -> bytes FB 7F 00.
        let l = layout(4, 0, 12, true);
        let values: Vec<u8> = [-5i32, 7].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(packed(&l, &values), [0xFB, 0x7F, 0x00]);
        assert_eq!(unpacked(&l, &[0xFB, 0x7F, 0x00], 0, 2), values);
    }

    #[test]
    fn unsigned_high_bits_zero_extend_after_shift() {
        // uint16 0xABCD with bits 4..=11 packed: field 0xBC; decoded 0x0BC0.
        let l = layout(2, 4, 8, false);
        let encoded = packed(&l, &0xABCDu16.to_ne_bytes());
        assert_eq!(encoded, [0xBC]);
        assert_eq!(unpacked(&l, &encoded, 0, 1), 0x0BC0u16.to_ne_bytes());
    }

    #[test]
    fn float64_whole_is_little_endian() {
        let l = layout(8, 0, 64, false);
        let value = 1.5f64;
        assert_eq!(packed(&l, &value.to_ne_bytes()), value.to_le_bytes());
        assert_eq!(
            unpacked(&l, &value.to_le_bytes(), 0, 1),
            value.to_ne_bytes()
        );
    }

    #[test]
    fn bit_offset_decodes_from_mid_byte() {
        // uint2 [1, 2, 3, 0, 1] packed as 0x39 0x01 (see `uint2_hand_worked`);
        // elements 1..=4 start at bit 2 of byte 0.
        let l = layout(1, 0, 2, false);
        assert_eq!(unpacked(&l, &[0x39, 0x01], 2, 4), [2, 3, 0, 1]);
    }

    #[test]
    fn lengths_are_checked() {
        let l = layout(1, 0, 2, false);
        let mut short = [0u8; 1];
        assert!(matches!(
            pack(&l, &[1, 2, 3, 0, 1], &mut short),
            Err(PackBitsError::EncodedLength {
                len: 1,
                expected: Some(2),
                ..
            })
        ));
        let mut out = [0u8; 5];
        assert!(unpack(&l, &[0x39], 0, &mut out).is_err());
        assert!(unpack(&l, &[0x39, 0x01], 8, &mut out).is_err());
        let l16 = layout(2, 0, 12, false);
        assert!(matches!(
            pack(&l16, &[0; 3], &mut [0; 2]),
            Err(PackBitsError::PartialComponent {
                len: 3,
                component_bytes: 2
            })
        ));
    }

    #[test]
    fn bad_layouts_are_refused() {
        assert!(BitLayout::new(3, 0, 8, false).is_err());
        assert!(BitLayout::new(1, 0, 0, false).is_err());
        assert!(BitLayout::new(1, 5, 4, false).is_err());
        assert!(BitLayout::new(8, u32::MAX, 2, false).is_err());
        assert!(BitLayout::new(8, 0, 64, true).is_ok());
    }

    /// Deterministic pseudo-random bytes.
    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect()
    }

    /// Every layout, through the fast and the stream paths (lengths below and
    /// above the table threshold, with tails), against the bit-by-bit
    /// reference; unpacking restores the packed bits and extends the rest.
    #[test]
    fn all_layouts_match_reference() {
        for component_bytes in [1usize, 2, 4, 8] {
            let width = 8 * component_bytes as u32;
            for first_bit in 0..width {
                for bits in 1..=width - first_bit {
                    // Under Miri, six fields per width: one bit at bit 0,
                    // 1 and the top, two bits at the top, and all the bits
                    // from bit 0 or 1 up.
                    let at_top = first_bit + bits == width;
                    let edge = (first_bit <= 1 && (bits == 1 || at_top)) || (at_top && bits <= 2);
                    if cfg!(miri) && !edge {
                        continue;
                    }
                    for signed in [false, true] {
                        let l = layout(component_bytes, first_bit, bits, signed);
                        // 1100: the table paths (one-byte components), which
                        // Miri runs too; it takes the first sizes only.
                        let (sizes, miri): (&[usize], usize) = if component_bytes == 1 {
                            (&[0, 1, 9, 1100, 7, 263], 4)
                        } else {
                            (&[0, 1, 9, 7, 263], 3)
                        };
                        let sizes = test_support::first(sizes, miri);
                        for n in sizes {
                            let decoded = noise(n * component_bytes, u64::from(bits) + n as u64);
                            let encoded = packed(&l, &decoded);
                            assert_eq!(encoded, reference_pack(&l, &decoded), "{l:?} n={n}");
                            let back = unpacked(&l, &encoded, 0, n);
                            for (i, (orig, got)) in decoded
                                .chunks_exact(component_bytes)
                                .zip(back.chunks_exact(component_bytes))
                                .enumerate()
                            {
                                let orig = load_any(orig);
                                let got = load_any(got);
                                let field = (orig >> first_bit) & low_mask(bits);
                                let mut want = field << first_bit;
                                let top = first_bit + bits - 1;
                                if signed && (want >> top) & 1 == 1 {
                                    want |= low_mask(width) & !low_mask(top + 1);
                                }
                                assert_eq!(got, want, "{l:?} n={n} component {i}");
                            }
                        }
                    }
                }
            }
        }
    }

    fn load_any(chunk: &[u8]) -> u64 {
        match chunk.len() {
            1 => load::<1>(chunk),
            2 => load::<2>(chunk),
            4 => load::<4>(chunk),
            _ => load::<8>(chunk),
        }
    }

    /// Unpacking a run that starts mid-stream gives the same components as
    /// unpacking everything, for every start (fast and stream paths).
    #[test]
    fn unpack_from_every_offset() {
        for (component_bytes, first_bit, bits, signed) in [
            (1, 0, 1, false),
            (1, 0, 2, true),
            (1, 0, 4, false),
            (1, 1, 6, true),
            (2, 3, 11, true),
        ] {
            let l = layout(component_bytes, first_bit, bits, signed);
            let n = test_support::size(1500, 40);
            let encoded = packed(&l, &noise(n * component_bytes, 7));
            let all = unpacked(&l, &encoded, 0, n);
            for start in 0..20 {
                let count = n - start - 3;
                let bit_start = start * bits as usize;
                let bit_end = bit_start + count * bits as usize;
                let bytes = &encoded[bit_start / 8..bit_end.div_ceil(8)];
                let part = unpacked(&l, bytes, (bit_start % 8) as u32, count);
                assert_eq!(
                    part,
                    all[start * component_bytes..(start + count) * component_bytes],
                    "{l:?} start={start}"
                );
            }
        }
    }
}
