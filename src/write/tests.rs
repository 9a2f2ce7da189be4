//! The strided view and the inner-chunk orders, against positions worked
//! out by hand.

use super::order::{InnerOrder, morton_code};
use super::strided::Strided;
use crate::read::engine::shard_index::unravel;

#[test]
fn morton_order_of_a_4_by_2_grid() {
    // Bits: 2 for dimension 0, 1 for dimension 1; the code of (c0, c1) is
    // c0's bit 0, then c1's bit 0, then c0's bit 1. Codes 0..8 are
    // (0,0) (1,0) (0,1) (1,1) (2,0) (3,0) (2,1) (3,1); C positions c0*2+c1.
    assert_eq!(
        InnerOrder::Morton.positions(&[4, 2]),
        [0, 2, 1, 3, 4, 6, 5, 7]
    );
}

#[test]
fn morton_order_of_a_3_by_3_grid_skips_codes_outside() {
    // Bits 2 and 2: code = c0b0 | c1b0<<1 | c0b1<<2 | c1b1<<3, so (2,0) is
    // 4, (2,1) 6, (0,2) 8, (1,2) 9, (2,2) 12; C positions c0*3+c1.
    assert_eq!(
        InnerOrder::Morton.positions(&[3, 3]),
        [0, 3, 1, 4, 6, 7, 2, 5, 8]
    );
}

#[test]
fn morton_order_with_a_dimension_of_one_chunk() {
    // A dimension of one chunk has no bits: Morton order of the others.
    assert_eq!(InnerOrder::Morton.positions(&[1, 4]), [0, 1, 2, 3]);
    assert_eq!(InnerOrder::Morton.positions(&[2, 1, 2]), [0, 2, 1, 3]);
}

#[test]
fn morton_order_visits_every_chunk_once() {
    let mut seen = InnerOrder::Morton.positions(&[3, 5, 2, 7]);
    assert_eq!(seen.len(), 3 * 5 * 2 * 7);
    seen.sort_unstable();
    assert!(seen.iter().enumerate().all(|(i, &p)| i == p));
}

#[test]
fn morton_codes_wider_than_64_bits() {
    // 35 dimensions of 3 chunks: 2 bits each, 70 bits of code. Bit 1 of
    // dimension d is bit 35 + d of the code: bit 35 for d = 0, bit 69 for
    // d = 34.
    let bits = [2u32; 35];
    let mut first = [0u64; 35];
    first[0] = 2;
    let mut last = [0u64; 35];
    last[34] = 2;
    assert_eq!(morton_code(&first, &bits), 1 << 35);
    assert_eq!(morton_code(&last, &bits), 1 << 69);
}

#[test]
fn lexicographic_and_colexicographic_orders() {
    assert_eq!(
        InnerOrder::Lexicographic.positions(&[2, 3]),
        [0, 1, 2, 3, 4, 5]
    );
    // Fortran order: (0,0) (1,0) (0,1) (1,1) (0,2) (1,2).
    assert_eq!(
        InnerOrder::Colexicographic.positions(&[2, 3]),
        [0, 3, 1, 4, 2, 5]
    );
    // (0,0,0) (1,0,0) (2,0,0) (0,1,0) ... (2,1,1): C positions c0*4+c1*2+c2.
    assert_eq!(
        InnerOrder::Colexicographic.positions(&[3, 2, 2]),
        [0, 4, 8, 2, 6, 10, 1, 5, 9, 3, 7, 11]
    );
    assert_eq!(
        InnerOrder::from_zarr_python("unordered"),
        Ok(InnerOrder::Lexicographic)
    );
    assert!(InnerOrder::from_zarr_python("hilbert").is_err());
}

#[test]
fn gather_reads_boxes_of_c_order_memory() {
    // 3 x 4 u16 values 0..12.
    let data: Vec<u8> = (0u16..12).flat_map(u16::to_ne_bytes).collect();
    let view = Strided::c_contiguous(&data, &[3, 4], 2).unwrap();
    let mut out = Vec::new();
    view.gather(&[1, 1], &[2, 2], &mut out);
    let got: Vec<u16> = out
        .chunks_exact(2)
        .map(|b| u16::from_ne_bytes([b[0], b[1]]))
        .collect();
    assert_eq!(got, [5, 6, 9, 10]);
    let sub = view.sub(&[1, 2], &[2, 2]);
    let mut out = Vec::new();
    sub.gather(&[0, 0], &[2, 2], &mut out);
    let want: Vec<u8> = [6u16, 7, 10, 11]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    assert_eq!(out, want);
}

#[test]
fn gather_reads_reversed_and_spread_strides() {
    // The 3 x 4 u8 values 0..12 viewed transposed and reversed along rows:
    // element (i, j) of the 4 x 3 view is data[(2 - j) * 4 + i].
    let data: Vec<u8> = (0u8..12).collect();
    let view = Strided::new(&data, 8, &[4, 3], &[1, -4], 1).unwrap();
    let mut out = Vec::new();
    view.gather(&[0, 0], &[4, 3], &mut out);
    assert_eq!(out, [8, 4, 0, 9, 5, 1, 10, 6, 2, 11, 7, 3]);
}

#[test]
fn views_reaching_outside_their_memory_are_refused() {
    let data = [0u8; 12];
    assert!(Strided::c_contiguous(&data, &[3, 5], 1).is_err());
    assert!(Strided::new(&data, 0, &[4, 3], &[1, -4], 1).is_err());
    assert!(Strided::new(&data, 4, &[2, 3], &[4, 1], 2).is_ok());
    assert!(Strided::new(&data, 4, &[2, 3], &[4, 2], 2).is_err());
    assert!(Strided::new(&data, 0, &[2], &[1, 1], 1).is_err());
    assert!(Strided::new(&data, 0, &[2], &[1], 0).is_err());
    // Empty views hold nothing to reach.
    assert!(Strided::new(&data, 99, &[0, 3], &[4, 1], 1).is_ok());
}

#[test]
fn scatter_writes_a_box_into_a_c_order_buffer() {
    let data: Vec<u8> = (1u8..=4).collect();
    let view = Strided::c_contiguous(&data, &[2, 2], 1).unwrap();
    let mut dst = vec![0u8; 9];
    view.scatter(&[0, 0], &[2, 2], &mut dst, &[3, 3], &[1, 1]);
    assert_eq!(dst, [0, 0, 0, 0, 1, 2, 0, 3, 4]);
}

#[test]
fn zero_dimensional_views() {
    let data = 7u32.to_ne_bytes();
    let view = Strided::c_contiguous(&data, &[], 4).unwrap();
    let mut out = Vec::new();
    view.gather(&[], &[], &mut out);
    assert_eq!(out, data);
}

/// Random views of random memory, against an element-by-element reading:
/// `new` accepts exactly the views whose every element lies in the memory,
/// and `gather` of any box of an accepted view reads those elements.
#[test]
fn random_views_against_a_naive_reading() {
    use crate::test_rng::SplitMix64;

    let mut rng = SplitMix64(0x57_21DE);
    let mut accepted = 0;
    for _ in 0..4000 {
        let data: Vec<u8> = (0..rng.below(200)).map(|_| rng.next() as u8).collect();
        let ndim = rng.below(4);
        let item = 1 + rng.below(4);
        let shape: Vec<u64> = (0..ndim).map(|_| 1 + rng.below(5) as u64).collect();
        let strides: Vec<isize> = (0..ndim)
            .map(|_| (rng.below(41) as isize - 20) * (1 + rng.below(2) as isize))
            .collect();
        let origin = rng.below(220);
        // Every element's offset, the naive way.
        let count = shape.iter().product::<u64>() as usize;
        let offsets: Vec<isize> = (0..count)
            .map(|p| {
                let at = unravel(p, &shape);
                origin as isize
                    + at.iter()
                        .zip(&strides)
                        .map(|(&i, &s)| i as isize * s)
                        .sum::<isize>()
            })
            .collect();
        let fits = offsets
            .iter()
            .all(|&o| o >= 0 && o as usize + item <= data.len());
        let view = Strided::new(&data, origin, &shape, &strides, item);
        assert_eq!(
            view.is_ok(),
            fits,
            "{shape:?} {strides:?} from {origin} in {}",
            data.len()
        );
        let Ok(view) = view else { continue };
        accepted += 1;
        // A random box of the view.
        let start: Vec<u64> = shape
            .iter()
            .map(|&n| rng.below(n as usize) as u64)
            .collect();
        let size: Vec<u64> = shape
            .iter()
            .zip(&start)
            .map(|(&n, &s)| 1 + rng.below((n - s) as usize) as u64)
            .collect();
        let mut got = Vec::new();
        view.gather(&start, &size, &mut got);
        let mut want = Vec::new();
        for p in 0..size.iter().product::<u64>() as usize {
            let at = unravel(p, &size);
            let whole: Vec<u64> = at.iter().zip(&start).map(|(a, s)| a + s).collect();
            let o = offsets[whole
                .iter()
                .zip(&shape)
                .fold(0usize, |acc, (&i, &n)| acc * n as usize + i as usize)]
                as usize;
            want.extend_from_slice(&data[o..o + item]);
        }
        assert_eq!(got, want, "{shape:?} {strides:?} box {start:?} {size:?}");
    }
    assert!(accepted > 500, "{accepted} views accepted");
}
