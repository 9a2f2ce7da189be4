//! A small deterministic generator for the unit tests (`SplitMix64`), so that
//! random test data is the same on every run and machine.

/// `SplitMix64`: a 64-bit state advanced by a constant, then mixed.
pub(crate) struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`; the slight bias does not matter here).
    #[allow(clippy::cast_possible_truncation)]
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
