//! The order of a shard's inner chunks in the shard's bytes.
//!
//! The sharding spec leaves it to the writer; readers find each inner chunk
//! through the index. zarr-python 3.4.2 writes them in Morton (Z) order by
//! default (`ShardingCodec.subchunk_write_order`), so a shard written in the
//! same order with the same codecs is byte for byte the one zarr-python
//! writes. The Morton code of inner chunk `(c0, c1, ...)` interleaves the
//! bits of its coordinates, lowest bit first and dimension 0 first at each
//! bit, leaving out a dimension once its coordinates have no more bits
//! (`(n - 1)` bits wide for `n` chunks along it): a "compressed" Morton
//! code, which for a grid whose sides are not powers of two still visits
//! every chunk once.

use crate::read::engine::shard_index::unravel;

/// The order in which a shard's inner chunks are laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InnerOrder {
    /// Morton (Z) order, zarr-python's default.
    #[default]
    Morton,
    /// C order: the last coordinate varies fastest (zarr-python's
    /// `lexicographic`, zarrs' only order).
    Lexicographic,
    /// Fortran order: the first coordinate varies fastest (zarr-python's
    /// `colexicographic`).
    Colexicographic,
}

impl InnerOrder {
    /// The order zarr-python names `name` (its `subchunk_write_order`;
    /// `unordered` is written in C order there, and here).
    ///
    /// # Errors
    /// For any other name.
    pub fn from_zarr_python(name: &str) -> Result<Self, String> {
        match name {
            "morton" => Ok(Self::Morton),
            "lexicographic" | "unordered" => Ok(Self::Lexicographic),
            "colexicographic" => Ok(Self::Colexicographic),
            _ => Err(format!("unknown subchunk_write_order {name:?}")),
        }
    }

    /// The C-order positions of the inner chunks of a grid of `grid`
    /// chunks, in this order.
    #[must_use]
    pub fn positions(self, grid: &[u64]) -> Vec<usize> {
        let count = grid.iter().product::<u64>() as usize;
        match self {
            Self::Lexicographic => (0..count).collect(),
            Self::Colexicographic => {
                let mut keyed: Vec<(Vec<u64>, usize)> = (0..count)
                    .map(|p| {
                        let mut c = unravel(p, grid);
                        c.reverse();
                        (c, p)
                    })
                    .collect();
                keyed.sort_unstable();
                keyed.into_iter().map(|(_, p)| p).collect()
            }
            Self::Morton => {
                let bits: Vec<u32> = grid
                    .iter()
                    .map(|&n| u64::BITS - n.saturating_sub(1).leading_zeros())
                    .collect();
                let mut keyed: Vec<(Vec<u64>, usize)> = (0..count)
                    .map(|p| (morton_code(&unravel(p, grid), &bits), p))
                    .collect();
                keyed.sort_unstable();
                keyed.into_iter().map(|(_, p)| p).collect()
            }
        }
    }
}

/// The compressed Morton code of `c`, as 64-bit words with the highest
/// bits first (so that the words compare as the code does): the code of a
/// grid of many dimensions may not fit one word.
pub(crate) fn morton_code(c: &[u64], bits: &[u32]) -> Vec<u64> {
    let total: u32 = bits.iter().sum();
    let words = (total as usize).div_ceil(64).max(1);
    let mut code = vec![0u64; words];
    let mut out = 0usize;
    let widest = bits.iter().copied().max().unwrap_or(0);
    for bit in 0..widest {
        for (d, &width) in bits.iter().enumerate() {
            if bit < width {
                let value = (c[d] >> bit) & 1;
                code[words - 1 - out / 64] |= value << (out % 64);
                out += 1;
            }
        }
    }
    code
}
