//! The permutation kernels against a naive reference written from the
//! spec's definition.

use super::*;
use crate::test_support;

/// Deterministic pseudo-random bytes (an LCG; any content will do as long
/// as neighbouring elements differ).
fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005) | 1;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 56) as u8
        })
        .collect()
}

/// The definition, one element at a time: output position `p` holds the
/// input element at `q` with `q[perm[i]] = p[i]`.
fn reference(src: &[u8], shape: &[usize], perm: &[usize], es: usize) -> Vec<u8> {
    let out_shape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n * es);
    for linear in 0..n {
        // Unravel the output index (C order).
        let mut p = vec![0; out_shape.len()];
        let mut rest = linear;
        for (d, &extent) in out_shape.iter().enumerate().rev() {
            p[d] = rest % extent;
            rest /= extent;
        }
        let mut q = vec![0; shape.len()];
        for (i, &a) in perm.iter().enumerate() {
            q[a] = p[i];
        }
        // Ravel the input index.
        let src_linear = q.iter().zip(shape).fold(0, |acc, (&i, &e)| acc * e + i);
        out.extend_from_slice(&src[src_linear * es..(src_linear + 1) * es]);
    }
    out
}

/// Every permutation of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut all = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, n - 1);
            all.push(q);
        }
    }
    all
}

fn check(shape: &[usize], perm: &[usize], es: usize) {
    let n: usize = shape.iter().product();
    let src = bytes(n * es, (n * 31 + es) as u64);
    let mut dst = vec![0xAA; n * es];
    permute_bytes(&src, &mut dst, shape, perm, es).unwrap();
    assert_eq!(
        dst,
        reference(&src, shape, perm, es),
        "shape {shape:?} perm {perm:?} element size {es}"
    );
}

#[test]
fn matches_reference_for_every_permutation_up_to_4d() {
    let shapes: &[&[usize]] = &[
        &[],
        &[7],
        &[3, 5],
        &[1, 9],
        &[70, 33],
        &[2, 3, 4],
        &[5, 1, 7],
        &[17, 40, 3],
        &[2, 3, 1, 5],
        &[3, 4, 5, 6],
    ];
    for shape in shapes {
        // Under Miri, the shapes of at most 60 elements.
        if shape.iter().product::<usize>() > test_support::size(usize::MAX, 60) {
            continue;
        }
        for perm in permutations(shape.len()) {
            for es in test_support::first(&[1, 2, 3, 4, 8, 12, 16, 32, 40], 5) {
                check(shape, &perm, es);
            }
        }
    }
}

#[test]
fn matches_reference_across_tile_edges() {
    // Extents that are not multiples of any tile size, larger than one tile.
    // Under Miri, 32-byte elements only, whose tiles (8 x 8, in super-tiles
    // of 4 x 4 tiles) are small enough for extents Miri gets through in
    // minutes to cross both tile and super-tile edges.
    let (plane, cube): (&[usize], &[usize]) = if cfg!(miri) {
        (&[37, 35], &[3, 37, 35])
    } else {
        (&[131, 67], &[19, 70, 41])
    };
    for es in test_support::first(&[32, 16, 1, 2, 4, 8, 6], 1) {
        check(plane, &[1, 0], es);
        check(cube, &[2, 0, 1], es);
        check(cube, &[1, 2, 0], es);
    }
    check(&[3, 4, 5, 6, 7], &[4, 2, 0, 3, 1], 4);
    check(&[2, 3, 2, 3, 2, 3], &[5, 0, 4, 1, 3, 2], 2);
}

#[test]
fn inverse_undoes_the_permutation() {
    let shape = [6, 7, 8, 9];
    let perm = [2, 0, 3, 1];
    let src = bytes(6 * 7 * 8 * 9 * 4, 5);
    let mut encoded = vec![0; src.len()];
    permute_bytes(&src, &mut encoded, &shape, &perm, 4).unwrap();
    let inverse = inverse_permutation(&perm).unwrap();
    assert_eq!(inverse, [1, 3, 0, 2]);
    let encoded_shape = permute_shape(&shape, &perm).unwrap();
    assert_eq!(encoded_shape, [8, 6, 9, 7]);
    let mut decoded = vec![0; src.len()];
    permute_bytes(&encoded, &mut decoded, &encoded_shape, &inverse, 4).unwrap();
    assert_eq!(decoded, src);
}

#[test]
fn typed_matrix_by_hand() {
    // [[0, 1, 2], [3, 4, 5]] transposed is [[0, 3], [1, 4], [2, 5]].
    let src: Vec<u32> = (0..6).collect();
    let mut dst = vec![0u32; 6];
    permute_elements(&src, &mut dst, &[2, 3], &[1, 0]).unwrap();
    assert_eq!(dst, [0, 3, 1, 4, 2, 5]);
}

#[test]
fn zero_sized_arrays() {
    let mut dst = [];
    permute_bytes(&[], &mut dst, &[0, 5], &[1, 0], 4).unwrap();
    let (bytes, offsets) = permute_variable(&[], &[0], &[3, 0], &[1, 0]).unwrap();
    assert!(bytes.is_empty());
    assert_eq!(offsets, [0]);
}

#[test]
fn errors() {
    let mut dst = [0u8; 6];
    let bad = |perm: &[usize]| permute_bytes(&[0; 6], &mut [0; 6], &[2, 3], perm, 1);
    assert!(matches!(
        bad(&[0, 0]),
        Err(TransposeError::NotAPermutation { .. })
    ));
    assert!(matches!(
        bad(&[0, 2]),
        Err(TransposeError::NotAPermutation { .. })
    ));
    assert_eq!(
        bad(&[0]),
        Err(TransposeError::Dimensionality { perm: 1, shape: 2 })
    );
    assert_eq!(
        permute_bytes(&[0; 5], &mut dst, &[2, 3], &[1, 0], 1),
        Err(TransposeError::Length {
            buffer: "input",
            len: 5,
            expected: 6
        })
    );
    assert_eq!(
        permute_bytes(&[0; 6], &mut [0; 7], &[2, 3], &[1, 0], 1),
        Err(TransposeError::Length {
            buffer: "output",
            len: 7,
            expected: 6
        })
    );
    assert_eq!(
        permute_bytes(&[], &mut [], &[usize::MAX, 3], &[1, 0], 1),
        Err(TransposeError::Overflow)
    );
    assert!(!is_permutation(&[1, 2]));
    assert!(is_permutation(&[]));
}

#[test]
fn variable_length_matches_reference() {
    // Element i of a 3 x 4 array is `i` repeated `i % 3` times.
    let shape = [3, 4];
    let mut bytes = Vec::new();
    let mut offsets = vec![0];
    for i in 0..12u8 {
        bytes.extend(std::iter::repeat_n(i, usize::from(i % 3)));
        offsets.push(bytes.len());
    }
    let (out, out_offsets) = permute_variable(&bytes, &offsets, &shape, &[1, 0]).unwrap();
    // Output element (r, c) is input element (c, r) = c * 4 + r.
    let mut expected = Vec::new();
    let mut expected_offsets = vec![0];
    for r in 0..4u8 {
        for c in 0..3u8 {
            let i = c * 4 + r;
            expected.extend(std::iter::repeat_n(i, usize::from(i % 3)));
            expected_offsets.push(expected.len());
        }
    }
    assert_eq!(out, expected);
    assert_eq!(out_offsets, expected_offsets);
}

#[test]
fn variable_length_rejects_bad_offsets() {
    let bytes = [1, 2, 3];
    for offsets in [
        &[0, 1, 2][..],    // too few
        &[0, 2, 1, 3][..], // decreasing
        &[0, 1, 2, 4][..], // past the end
    ] {
        assert!(matches!(
            permute_variable(&bytes, offsets, &[3], &[0]),
            Err(TransposeError::Offsets(_))
        ));
    }
    // Offsets need not start at zero or end at the buffer's end.
    let (out, offsets) = permute_variable(&[9, 1, 2, 9], &[1, 2, 3], &[2], &[0]).unwrap();
    assert_eq!((out, offsets), (vec![1, 2], vec![0, 1, 2]));
}

#[test]
fn layout_preserving_permutations() {
    assert!(preserves_layout(&[2, 3, 4], &[0, 1, 2]));
    // Axes of extent 1 may move freely.
    assert!(preserves_layout(&[2, 1, 4], &[1, 0, 2]));
    assert!(preserves_layout(&[1, 3, 1], &[2, 1, 0]));
    assert!(!preserves_layout(&[2, 3, 4], &[0, 2, 1]));
    assert!(!preserves_layout(&[2, 1, 4], &[2, 1, 0]));
    // Agrees with the kernel: a layout-preserving permutation copies bytes
    // unchanged.
    for (shape, perm) in [([2, 1, 4], [1, 0, 2]), ([1, 3, 1], [2, 1, 0])] {
        let src = bytes(8 * 3, 1);
        let n = shape.iter().product::<usize>() * 3;
        let mut dst = vec![0; n];
        permute_bytes(&src[..n], &mut dst, &shape, &perm, 3).unwrap();
        assert_eq!(dst, src[..n]);
    }
}

/// The cases that reach the 4-byte kernels: the direct AVX2 copy (if the CPU
/// has AVX2) and the buffered SSE2 copy, with full blocks, ragged edges and
/// outer axes.
fn four_byte_cases() {
    // The first four are small enough for Miri, which takes only them.
    let cases: [(&[usize], &[usize]); 13] = [
        (&[8, 8], &[1, 0]),
        (&[13, 9], &[1, 0]),
        (&[5, 6, 9], &[2, 0, 1]),
        (&[2, 3, 2, 5, 3], &[4, 2, 0, 3, 1]),
        (&[131, 67], &[1, 0]),
        (&[67, 131], &[1, 0]),
        (&[300, 260], &[1, 0]),
        (&[19, 70, 41], &[2, 0, 1]),
        (&[19, 70, 41], &[1, 2, 0]),
        (&[5, 24, 33], &[0, 2, 1]),
        (&[3, 4, 5, 6, 7], &[4, 2, 0, 3, 1]),
        // Output rows 4096 elements (16 KiB) apart: left to the buffered
        // path even with AVX2.
        (&[4096, 20], &[1, 0]),
        (&[20, 8, 512], &[2, 0, 1]),
    ];
    for (shape, perm) in test_support::first(&cases, 4) {
        check(shape, perm, 4);
    }
}

#[test]
fn four_byte_elements_match_reference_with_runtime_dispatch() {
    four_byte_cases();
}

#[test]
fn four_byte_elements_match_reference_on_baseline_x86_64() {
    crate::kernels::simd::portable(four_byte_cases);
}

#[test]
fn direct_path_is_chosen_only_with_avx2_and_a_harmless_stride() {
    let plane = |dy| Plane {
        nx: 64,
        sx: 64,
        ny: 64,
        dy,
    };
    let avx2 = crate::kernels::simd::avx2_enabled();
    assert_eq!(direct::suits(&plane(2048)), avx2);
    assert_eq!(direct::suits(&plane(2000)), avx2);
    assert!(!direct::suits(&plane(4096)));
    assert!(!direct::suits(&plane(16384)));
    crate::kernels::simd::portable(|| assert!(!direct::suits(&plane(2048))));
}

#[test]
fn direct_path_matches_reference_on_each_plane() {
    // Called directly, so it is exercised even where `suits` would decline;
    // `run` itself falls back to element copies without AVX2.
    // The first two (a whole block, then ragged edges with padding) are
    // small enough for Miri, which takes only them.
    let planes = [
        (8, 8, 0),
        (5, 11, 1),
        (67, 131, 3),
        (130, 9, 1),
        (3, 200, 0),
    ];
    for (nx, ny, pad) in test_support::first(&planes, 2) {
        let (sx, dy) = (ny + pad, nx + 2 * pad);
        let outer = [Axis {
            extent: 2,
            src_stride: nx * sx,
            dst_stride: ny * dy,
        }];
        let src_bytes = bytes(2 * nx * sx * 4, 9);
        let src: Vec<[u8; 4]> = src_bytes
            .chunks_exact(4)
            .map(|c| c.try_into().unwrap())
            .collect();
        let plane = Plane { nx, sx, ny, dy };
        let run = || {
            let mut dst = vec![MaybeUninit::new([0xAA; 4]); 2 * ny * dy];
            direct::run(&src, &mut dst, &plane, &outer);
            dst.iter()
                // SAFETY: every element was initialised to 0xAA above.
                .map(|e| unsafe { e.assume_init() })
                .collect::<Vec<_>>()
        };
        for got in [run(), crate::kernels::simd::portable(run)] {
            for o in 0..2 {
                for x in 0..nx {
                    for y in 0..ny {
                        assert_eq!(
                            got[o * ny * dy + y * dy + x],
                            src[o * nx * sx + x * sx + y],
                            "nx {nx} ny {ny} pad {pad} at ({o}, {x}, {y})"
                        );
                    }
                }
                // Padding between output rows is left alone.
                for y in 0..ny {
                    for x in nx..dy {
                        assert_eq!(got[o * ny * dy + y * dy + x], [0xAA; 4]);
                    }
                }
            }
        }
    }
}
