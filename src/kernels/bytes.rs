//! The byte-level work of the `bytes` codec: byte order and sub-byte values.
//!
//! The codec stores each element as its fixed-size binary representation.
//! Relative to the in-memory (native-endian) bytes zarrs hands it, there are
//! only three things it may have to do, each described by an
//! [`ElementLayout`]:
//!
//! - **reverse the bytes of each component** of a multi-byte type when the
//!   stored byte order is not the machine's ([`swap_in_place`],
//!   [`swap_to_vec`]). The operation is its own inverse, so encode and decode
//!   are the same pass;
//! - **fix the upper bits of sub-byte values** (`int2`, `int4`, `uint2`,
//!   `uint4`, `float4_e2m1fn`, `float6_*`). Their data-type specifications
//!   store one value per byte in the low bits and say the upper bits are
//!   ignored on read ([`LowBits::canonical`], [`canonicalize`]). In memory
//!   zarrs holds `int2` / `int4` sign-extended in an `i8` and the others
//!   zero-extended, so the same canonical form is also what is written:
//!   encode and decode are again one pass;
//! - **check `bool` bytes**, which must be `0x00` or `0x01`
//!   ([`first_invalid_bool`]).
//!
//! # Performance
//!
//! Nothing is copied when nothing needs to change: a chunk already in the
//! stored byte order is returned as it came (borrowed stays borrowed, owned
//! stays owned), and sub-byte and `bool` chunks are scanned with a
//! branch-free, vectorisable pass before anything is written.
//!
//! Byte swapping reads and writes whole 2-, 8- or 16-byte words (any
//! alignment, no `unsafe`), picked so that the compiled loop keeps up with
//! memory, in a loop compiled for AVX2 (`vpshufb`) where the CPU has it (see
//! the word kernels below). An owned buffer is swapped in place;
//! a borrowed one is swapped straight into a new, uninitialised buffer. Either
//! way memory sees one read and one write of each byte, as in a `memcpy`.

use std::borrow::Cow;

use crate::kernels::simd;

/// How the `bytes` codec stores the elements of one data type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementLayout {
    /// Stored exactly as in memory: single-byte types (`int8`, `uint8`, the
    /// 8-bit floats), raw bits `r*`, and complex types of 8-bit floats.
    Verbatim,
    /// `bool`: one byte, `0x00` for false and `0x01` for true.
    Bool,
    /// One value per byte in its low bits, the upper bits being ignored on
    /// read and written in a canonical form.
    LowBits(LowBits),
    /// Components of this many bytes (2, 4, 8, ...), each stored in the byte
    /// order given by `endian`. Complex types have two components per element.
    Components(usize),
}

/// A sub-byte value held in the low [`bits`](Self::bits) bits of a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LowBits {
    /// The number of significant low bits (1 to 7).
    pub bits: u32,
    /// Sign-extend from the top significant bit (`int2`, `int4`) rather than
    /// clearing the upper bits (unsigned integers and small floats).
    pub signed: bool,
}

impl LowBits {
    /// `int2`: two's complement in the low 2 bits.
    pub const INT2: Self = Self::new(2, true);
    /// `int4`: two's complement in the low 4 bits.
    pub const INT4: Self = Self::new(4, true);
    /// `uint2`: the low 2 bits.
    pub const UINT2: Self = Self::new(2, false);
    /// `uint4`: the low 4 bits.
    pub const UINT4: Self = Self::new(4, false);
    /// `float4_e2m1fn`: `0bXXXXSEEM`.
    pub const FLOAT4: Self = Self::new(4, false);
    /// `float6_e2m3fn` / `float6_e3m2fn`: `0bXXSEEMMM` / `0bXXSEEEMM`.
    pub const FLOAT6: Self = Self::new(6, false);

    /// A layout of `bits` significant bits.
    ///
    /// # Panics
    /// If `bits` is not in `1..=7` (a programming error: the layouts are
    /// constants).
    #[must_use]
    pub const fn new(bits: u32, signed: bool) -> Self {
        assert!(matches!(bits, 1..=7), "sub-byte values have 1 to 7 bits");
        Self { bits, signed }
    }

    /// The canonical byte for the value in the low bits of `byte`: the value
    /// sign-extended to 8 bits if signed (`int4` `0x0f` -> `0xff`, i.e. -1),
    /// else with the upper bits cleared (`uint4` `0xf3` -> `0x03`).
    #[must_use]
    #[inline]
    pub const fn canonical(self, byte: u8) -> u8 {
        let mask = 0xff >> (8 - self.bits);
        // Sign extension without shifts (SSE2 has no byte shifts, but byte
        // and / xor / subtract vectorise): flipping the sign bit and then
        // subtracting its weight leaves 0..2^(bits-1) as they are and maps
        // 2^(bits-1)..2^bits to the negative values below zero. With no sign
        // bit this is the plain mask.
        let sign = if self.signed { 1 << (self.bits - 1) } else { 0 };
        ((byte & mask) ^ sign).wrapping_sub(sign)
    }
}

/// Bytes scanned per step by the branch-free checks: large enough to
/// vectorise well, small enough to stop soon after a difference.
const SCAN_BLOCK: usize = 4096;

/// `true` if every byte already is in canonical form.
#[must_use]
pub fn is_canonical(bytes: &[u8], layout: LowBits) -> bool {
    bytes.chunks(SCAN_BLOCK).all(|block| {
        block
            .iter()
            .fold(0u8, |diff, &b| diff | (b ^ layout.canonical(b)))
            == 0
    })
}

/// Put every byte in canonical form, in place.
pub fn canonicalize(bytes: &mut [u8], layout: LowBits) {
    for b in bytes {
        *b = layout.canonical(*b);
    }
}

/// Canonical bytes, copying only if some byte is not canonical already.
#[must_use]
pub fn canonicalize_cow(bytes: Cow<'_, [u8]>, layout: LowBits) -> Cow<'_, [u8]> {
    if is_canonical(&bytes, layout) {
        return bytes;
    }
    let mut bytes = bytes.into_owned();
    canonicalize(&mut bytes, layout);
    Cow::Owned(bytes)
}

/// The index of the first byte that is neither `0x00` nor `0x01`, if any.
#[must_use]
pub fn first_invalid_bool(bytes: &[u8]) -> Option<usize> {
    let mut offset = 0;
    for block in bytes.chunks(SCAN_BLOCK) {
        if block.iter().fold(0u8, |acc, &b| acc | (b & 0xfe)) != 0 {
            return block.iter().position(|&b| b > 1).map(|i| offset + i);
        }
        offset += block.len();
    }
    None
}

/// Reverse the bytes of every `component`-byte component of `bytes`, in
/// place. A trailing partial component (which the codec never passes) is
/// left as it is.
pub fn swap_in_place(bytes: &mut [u8], component: usize) {
    match component {
        0 | 1 => {}
        2 => swap_words_in_place(bytes, swap_2x1, component),
        4 => swap_words_in_place(bytes, swap_4x2, component),
        8 if simd::avx2_enabled() => swap_words_in_place(bytes, swap_8x1, component),
        8 => swap_words_in_place(bytes, swap_8x2, component),
        n => bytes.chunks_exact_mut(n).for_each(<[u8]>::reverse),
    }
}

/// A copy of `bytes` with the bytes of every `component`-byte component
/// reversed, in one pass over memory. A trailing partial component is
/// copied as it is.
#[must_use]
pub fn swap_to_vec(bytes: &[u8], component: usize) -> Vec<u8> {
    match component {
        0 | 1 => bytes.to_vec(),
        2 => swap_words_to_vec(bytes, swap_2x1, component),
        4 => swap_words_to_vec(bytes, swap_4x2, component),
        8 if simd::avx2_enabled() => swap_words_to_vec(bytes, swap_8x1, component),
        8 => swap_words_to_vec(bytes, swap_8x2, component),
        n => {
            let mut out = bytes.to_vec();
            swap_in_place(&mut out, n);
            out
        }
    }
}

/// Swap the components of `bytes`: in place if owned, into a new buffer if
/// borrowed.
#[must_use]
pub fn swap_cow(bytes: Cow<'_, [u8]>, component: usize) -> Cow<'_, [u8]> {
    if component <= 1 {
        return bytes;
    }
    match bytes {
        Cow::Owned(mut bytes) => {
            swap_in_place(&mut bytes, component);
            Cow::Owned(bytes)
        }
        Cow::Borrowed(bytes) => Cow::Owned(swap_to_vec(bytes, component)),
    }
}

// The word kernels. Each reverses the components inside a `K`-byte word
// read and written as bytes (no alignment needed). The loops over them run
// through `simd::dispatch`, so they get AVX2 code where the CPU has it, and
// the word sizes are chosen for the code the compiler makes of them:
//
// - with AVX2 every form below becomes one `vpshufb` per 32 bytes;
// - on baseline x86-64 (SSE2, no byte shuffle) 2-byte components vectorise
//   as 16-bit shifts, but the compiler's SSE2 vector byte swap of 32- and
//   64-bit lanes is several times slower than memory. 4- and 8-byte
//   components are therefore swapped with scalar `bswap` on 64-bit halves
//   (`swap_4x2`, `swap_8x2`), which the compiler does not vectorise and which
//   keeps up with memory. `swap_4x2` happens to vectorise well with AVX2 too;
//   `swap_8x2` (a `u128`) does not, hence `swap_8x1` for AVX2.

/// One 2-byte component.
#[inline(always)]
fn swap_2x1(word: [u8; 2]) -> [u8; 2] {
    u16::from_ne_bytes(word).swap_bytes().to_ne_bytes()
}

/// Two 4-byte components: reversing all 8 bytes reverses both components
/// and exchanges them; rotating by 32 bits puts them back in place (in
/// either machine byte order, as a rotation by half the width exchanges the
/// halves).
#[inline(always)]
fn swap_4x2(word: [u8; 8]) -> [u8; 8] {
    u64::from_ne_bytes(word)
        .swap_bytes()
        .rotate_left(32)
        .to_ne_bytes()
}

/// One 8-byte component (the AVX2 form: vectorises as `vpshufb`).
#[inline(always)]
fn swap_8x1(word: [u8; 8]) -> [u8; 8] {
    u64::from_ne_bytes(word).swap_bytes().to_ne_bytes()
}

/// Two 8-byte components, likewise with a 128-bit word (the baseline form:
/// stays two scalar `bswap`s).
#[inline(always)]
fn swap_8x2(word: [u8; 16]) -> [u8; 16] {
    u128::from_ne_bytes(word)
        .swap_bytes()
        .rotate_left(64)
        .to_ne_bytes()
}

/// The in-place loop over whole words, for [`simd::dispatch`]. `swap` is a
/// function item (a zero-sized type), so the call is static and inlined.
struct SwapInPlace<'a, const K: usize, F> {
    words: &'a mut [[u8; K]],
    swap: F,
}

impl<const K: usize, F: Fn([u8; K]) -> [u8; K]> simd::Kernel for SwapInPlace<'_, K, F> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        for word in self.words {
            *word = (self.swap)(*word);
        }
    }
}

/// The copying loop over whole words, for [`simd::dispatch`]: appends the
/// swapped `words` to `out`, which has room for them, and returns it.
struct SwapToVec<'a, const K: usize, F> {
    words: &'a [[u8; K]],
    out: Vec<[u8; K]>,
    swap: F,
}

impl<const K: usize, F: Fn([u8; K]) -> [u8; K]> simd::Kernel for SwapToVec<'_, K, F> {
    type Output = Vec<[u8; K]>;

    #[inline(always)]
    fn run(self) -> Vec<[u8; K]> {
        let Self {
            words,
            mut out,
            swap,
        } = self;
        // An iterator of known length over a slice: written once into the
        // reserved, uninitialised memory, and vectorised.
        out.extend(words.iter().map(|&word| swap(word)));
        out
    }
}

/// Swap whole `K`-byte words with `swap`, then the components in the
/// remainder (shorter than a word) one by one.
fn swap_words_in_place<const K: usize, F: Fn([u8; K]) -> [u8; K]>(
    bytes: &mut [u8],
    swap: F,
    component: usize,
) {
    let (words, rest) = bytes.as_chunks_mut::<K>();
    simd::dispatch(SwapInPlace { words, swap });
    rest.chunks_exact_mut(component).for_each(<[u8]>::reverse);
}

/// [`swap_words_in_place`] into a new buffer.
///
/// The words are collected into a `Vec<[u8; K]>` from an iterator of known
/// length, which writes each word once into uninitialised memory (no
/// zeroing, no copy before the swap), and that vector is then reinterpreted
/// as bytes without copying (`[u8; K]` and `u8` share alignment 1).
fn swap_words_to_vec<const K: usize, F: Fn([u8; K]) -> [u8; K]>(
    bytes: &[u8],
    swap: F,
    component: usize,
) -> Vec<u8> {
    let (words, rest) = bytes.as_chunks::<K>();
    // One spare word so that the remainder fits without reallocating.
    let out = Vec::with_capacity(words.len() + 1);
    let swapped = simd::dispatch(SwapToVec { words, out, swap });
    let mut out: Vec<u8> = match bytemuck::allocation::try_cast_vec(swapped) {
        Ok(out) => out,
        // Unreachable (same alignment, and a byte length is a whole number
        // of bytes), but a plain copy is always correct.
        Err((_, swapped)) => swapped.concat(),
    };
    let start = out.len();
    out.extend_from_slice(rest);
    out[start..]
        .chunks_exact_mut(component)
        .for_each(<[u8]>::reverse);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;

    #[test]
    fn canonical_sub_byte_values() {
        // int4 -1 as tensorstore writes it: 0b0000_1111. Sign bit (bit 3) set,
        // so sign-extended: 0b1111_1111 = -1.
        assert_eq!(LowBits::INT4.canonical(0x0f), 0xff);
        // int4 -8 = 0b1000, written with arbitrary upper bits 0b0101.
        assert_eq!(LowBits::INT4.canonical(0x58), (-8i8) as u8);
        // int4 7 = 0b0111 with upper bits set: 0xf7 -> 0x07.
        assert_eq!(LowBits::INT4.canonical(0xf7), 0x07);
        // int2 -2 = 0b10 -> 0b1111_1110; int2 1 = 0b01 with junk -> 1.
        assert_eq!(LowBits::INT2.canonical(0x02), (-2i8) as u8);
        assert_eq!(LowBits::INT2.canonical(0xfd), 0x01);
        // Unsigned and small floats: upper bits cleared.
        assert_eq!(LowBits::UINT4.canonical(0xff), 0x0f);
        assert_eq!(LowBits::UINT2.canonical(0xaa), 0x02);
        // float6: 0bXX_SEEMMM, the upper two bits cleared.
        assert_eq!(LowBits::FLOAT6.canonical(0b1110_0101), 0b0010_0101);
        assert_eq!(LowBits::FLOAT4.canonical(0b1010_1001), 0b0000_1001);
    }

    #[test]
    fn canonical_is_idempotent_and_keeps_every_value() {
        for layout in [
            LowBits::INT2,
            LowBits::INT4,
            LowBits::UINT2,
            LowBits::UINT4,
            LowBits::FLOAT6,
        ] {
            let mask = 0xffu8 >> (8 - layout.bits);
            for b in 0..=255u8 {
                let c = layout.canonical(b);
                assert_eq!(layout.canonical(c), c);
                assert_eq!(c & mask, b & mask, "{layout:?} {b:#x}");
            }
        }
    }

    #[test]
    fn cow_is_untouched_when_canonical() {
        let data = [0xffu8, 0x00, 0x07, 0xf8];
        let out = canonicalize_cow(Cow::Borrowed(&data), LowBits::INT4);
        assert!(matches!(out, Cow::Borrowed(_)));
        let dirty = [0x0fu8, 0x00];
        let out = canonicalize_cow(Cow::Borrowed(&dirty), LowBits::INT4);
        assert_eq!(&*out, &[0xff, 0x00]);
    }

    #[test]
    fn bool_check_finds_the_first_bad_byte() {
        let mut bytes = [0u8, 1, 1, 0].repeat(3000);
        assert_eq!(first_invalid_bool(&bytes), None);
        bytes[9000] = 2;
        bytes[11000] = 0x80;
        assert_eq!(first_invalid_bool(&bytes), Some(9000));
    }

    /// The bytes of each component reversed, one element at a time.
    fn reversed(bytes: &[u8], component: usize) -> Vec<u8> {
        bytes
            .chunks_exact(component)
            .flat_map(|c| c.iter().rev().copied())
            .collect()
    }

    #[test]
    fn swap_matches_std_byte_order_conversions() {
        let values: Vec<u32> = (0..1000u32).map(|i| i.wrapping_mul(0x0102_0304)).collect();
        let ne: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let be: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
        let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let swapped = swap_to_vec(&ne, 4);
        let expected = if cfg!(target_endian = "little") {
            be
        } else {
            le
        };
        assert_eq!(swapped, expected);
    }

    #[test]
    fn swap_every_size_count_and_alignment() {
        let storage: Vec<u64> = (0..test_support::size(4_000, 64) as u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let all: &[u8] = bytemuck::cast_slice(&storage);
        for component in [2, 3, 4, 8, 16] {
            // Odd counts leave a component outside the whole words.
            for count in test_support::first(&[0, 1, 2, 3, 5, 17, 1001], 6) {
                for offset in [0, 1, 3] {
                    let len = count * component;
                    let src = &all[offset..offset + len];
                    let expected = reversed(src, component);
                    let what = format!("{count} x {component} bytes at +{offset}");
                    assert_eq!(swap_to_vec(src, component), expected, "{what}");
                    // In place, on a buffer whose start is misaligned by `offset`.
                    let mut buffer = storage.clone();
                    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buffer);
                    let target = &mut bytes[offset..offset + len];
                    swap_in_place(target, component);
                    assert_eq!(target, &expected[..], "in place {what}");
                }
            }
        }
    }

    /// Native-endian bytes of `count` values of a `component`-byte integer
    /// and the same values in the other byte order.
    fn native_and_swapped(component: usize, count: usize) -> (Vec<u8>, Vec<u8>) {
        let values = (0..count as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 3));
        let (mut ne, mut other) = (Vec::new(), Vec::new());
        // Truncating casts on purpose: any bit pattern will do. `swap_bytes`
        // is std's, so the expected order does not come from this crate.
        for v in values {
            match component {
                2 => {
                    ne.extend((v as u16).to_ne_bytes());
                    other.extend((v as u16).swap_bytes().to_ne_bytes());
                }
                4 => {
                    ne.extend((v as u32).to_ne_bytes());
                    other.extend((v as u32).swap_bytes().to_ne_bytes());
                }
                8 => {
                    ne.extend(v.to_ne_bytes());
                    other.extend(v.swap_bytes().to_ne_bytes());
                }
                _ => unreachable!("only 2, 4 and 8"),
            }
        }
        (ne, other)
    }

    /// Both copies of the word loops (AVX2 where the CPU has it, and
    /// baseline) against std, for lengths that leave partial vectors and
    /// partial words, from misaligned starts.
    #[test]
    fn dispatched_and_portable_swaps_match_std() {
        for component in [2, 4, 8] {
            for count in
                test_support::first(&[0, 1, 2, 3, 7, 15, 31, 33, 63, 65, 127, 1001, 4099], 6)
            {
                let (ne, expected) = native_and_swapped(component, count);
                for offset in [0, 1, 3, 5] {
                    // `ne` placed `offset` bytes into a buffer, so that its
                    // start is misaligned for every word size.
                    let mut storage = vec![0xa5u8; offset + ne.len()];
                    storage[offset..].copy_from_slice(&ne);
                    let src = &storage[offset..];
                    let what = format!("{count} x {component} bytes at +{offset}");
                    let fast = swap_to_vec(src, component);
                    let slow = simd::portable(|| swap_to_vec(src, component));
                    assert_eq!(fast, expected, "dispatched to_vec {what}");
                    assert_eq!(slow, expected, "portable to_vec {what}");

                    let mut fast = storage.clone();
                    swap_in_place(&mut fast[offset..], component);
                    let mut slow = storage.clone();
                    simd::portable(|| swap_in_place(&mut slow[offset..], component));
                    assert_eq!(&fast[offset..], &expected[..], "dispatched in place {what}");
                    assert_eq!(&slow[offset..], &expected[..], "portable in place {what}");
                    assert!(fast[..offset].iter().all(|&b| b == 0xa5), "{what}");
                    assert!(slow[..offset].iter().all(|&b| b == 0xa5), "{what}");
                }
            }
        }
    }

    #[test]
    fn swap_cow_keeps_owned_buffers_and_skips_single_bytes() {
        let owned = vec![1u8, 2, 3, 4];
        let pointer = owned.as_ptr();
        let out = swap_cow(Cow::Owned(owned), 2);
        assert_eq!(&*out, &[2, 1, 4, 3]);
        assert_eq!(out.as_ptr(), pointer, "swapped in place");
        let data = [1u8, 2];
        assert!(matches!(
            swap_cow(Cow::Borrowed(&data), 1),
            Cow::Borrowed(_)
        ));
    }
}
