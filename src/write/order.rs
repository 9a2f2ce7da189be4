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

use super::strided::next_in_c_order;

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
        if self == Self::Lexicographic {
            return (0..count).collect();
        }
        let bits: Vec<u32> = grid
            .iter()
            .map(|&n| u64::BITS - n.saturating_sub(1).leading_zeros())
            .collect();
        // The chunks visited in C order, their coordinates kept up to date
        // rather than worked out again for each, sorted by their key.
        let origin = vec![0u64; grid.len()];
        let mut c = origin.clone();
        let mut keyed = Vec::with_capacity(count);
        for p in 0..count {
            let key = if self == Self::Morton {
                morton_code(&c, &bits)
            } else {
                // The coordinates from the last to the first, each in the
                // bits its extent needs: Fortran order.
                c.iter()
                    .zip(&bits)
                    .rev()
                    .fold(0u128, |key, (&c, &b)| (key << b) | u128::from(c))
            };
            keyed.push((key, p));
            next_in_c_order(&mut c, &origin, grid);
        }
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, p)| p).collect()
    }
}

/// The compressed Morton code of `c` (whose coordinates need `bits` bits
/// each). It fits 128 bits for any grid whose chunk count fits 64: a
/// coordinate of `n > 1` chunks needs at most `log2(n) + 1` bits, and at
/// most 64 coordinates can have more than one chunk.
pub(crate) fn morton_code(c: &[u64], bits: &[u32]) -> u128 {
    let mut code = 0u128;
    let mut out = 0u32;
    let widest = bits.iter().copied().max().unwrap_or(0);
    for bit in 0..widest {
        for (d, &width) in bits.iter().enumerate() {
            if bit < width {
                code |= u128::from((c[d] >> bit) & 1) << out;
                out += 1;
            }
        }
    }
    code
}
