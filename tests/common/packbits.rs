//! The `packbits` specification's decode rule, written out independently of
//! the crate, for the tests that compare the codecs with it: take bits
//! `first..=last` of each component, put them back at `first`, sign-extend
//! signed integers from `last`, zero-extend the rest.

/// The lowest `bits` bits set.
pub fn mask(bits: u64) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// A native-endian component of up to 8 bytes as an integer.
pub fn component_from_ne(chunk: &[u8]) -> u64 {
    let mut le = chunk.to_vec();
    if cfg!(target_endian = "big") {
        le.reverse();
    }
    le.iter().rev().fold(0, |acc, &b| (acc << 8) | u64::from(b))
}

/// The low `bytes` bytes of `value`, native endian.
pub fn component_to_ne(value: u64, bytes: usize) -> Vec<u8> {
    let mut out = value.to_le_bytes()[..bytes].to_vec();
    if cfg!(target_endian = "big") {
        out.reverse();
    }
    out
}

/// What the specification decodes `values` (native-endian components of
/// `bits` bits each) to after encoding them with bits `first..=last`.
pub fn spec_round_trip(values: &[u8], bits: u64, signed: bool, first: u64, last: u64) -> Vec<u8> {
    let c = bits.div_ceil(8) as usize;
    let width = 8 * c as u64;
    values
        .chunks_exact(c)
        .flat_map(|chunk| {
            let field = (component_from_ne(chunk) >> first) & mask(last - first + 1);
            let mut out = field << first;
            if signed && (out >> last) & 1 == 1 {
                out |= mask(width) & !mask(last + 1);
            }
            component_to_ne(out, c)
        })
        .collect()
}
