//! float -> int for targets of at most 16 bits (the common `cast_value` use:
//! floats stored as `uint8` / `int16`), without wrapping.
//!
//! # Clamping first
//!
//! Each value is clamped in the float domain to `[lo - 1, hi + 1]` before it
//! is rounded. Rounding is monotonic and maps `lo - 1` and `hi + 1` to
//! themselves, so a value rounds out of range exactly when its clamped value
//! does. The clamped value is small, so it rounds with a few exact float
//! operations and converts with the truncating instruction (see
//! [`WideFloat::round_small_to_i32`]), instead of the general rounding and a
//! saturating `as`, which LLVM does not vectorise.
//!
//! # Two stages per block
//!
//! Floats are converted to `i32` into a small buffer, which is then narrowed
//! to the target type. Converting straight to bytes made the compiler narrow
//! every vector of four `f64` on its own, with shuffles and a four-byte store
//! each, and bring every mask down to bytes; the `i32` stage keeps whole
//! vectors, and the second stage packs many of them at once.
//!
//! Errors are found without a mask per element: without `out_of_range`, a
//! chunk fails exactly when the minimum or maximum of its rounded values lies
//! outside `[lo, hi]`, so the loop only keeps a running minimum and maximum.
//! With `clamp`, only non-finite values fail (the spec requires a map for
//! them), which is one compare per element.
//!
//! The `scalar_map` is applied first, by replacing a matching source value
//! with its mapped value as a float: that value is an integer within the
//! target's range (`CastPlan::new` checks this), so it rounds to itself and
//! never fails. The map therefore
//! costs a compare and a select in the float lanes.
//!
//! # AVX2 intrinsics
//!
//! For `float32` and `float64` sources on CPUs with AVX2, [`avx2`] converts
//! all whole groups of 16 elements with hand-picked instructions (one-step
//! rounding, packing straight to the target) and the loop here does the
//! rest; see that module for why and how much. Both give the same results.

#[cfg(target_arch = "x86_64")]
mod avx2;

use std::any::TypeId;
use std::mem::MaybeUninit;

use super::IntTarget;
use super::driver::Entry;
use super::elements::{FloatElem, IntElem, WideFloat};
use crate::kernels::simd;

/// Elements per block: the `i32` buffer (4 KiB) stays in L1.
const BLOCK: usize = 1024;

/// Convert floats to an integer type of at most 16 bits, rounding with
/// `MODE`; out-of-range values are clamped if `clamp`, and fail otherwise.
///
/// # Errors
/// The index of the first element that fails and is not mapped.
///
/// # Panics
/// If `src` and `dst` differ in length, or the target is wider than 16 bits.
pub(crate) fn float_to_small_int<S: FloatElem, D: IntElem, const MODE: u8>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    entries: &[Entry<S, D>],
    clamp: bool,
    target: IntTarget,
) -> Result<(), usize> {
    assert_eq!(src.len(), dst.len());
    assert!(
        target.bits <= 16,
        "float_to_small_int: {} bits",
        target.bits
    );
    // |bounds| <= 2^16: exact as i32, f32 and f64.
    #[allow(clippy::cast_possible_truncation)]
    let bounds = Bounds::<S::Wide>::new(target.lo as i32, target.hi as i32);
    // Mapped values are integers of at most 16 bits within the target's
    // range (`CastPlan::new` checks): exact in f32 and f64.
    let map = Map::new(entries.iter().map(|e| Entry {
        key: e.key.widen(),
        value: S::Wide::from_f64_exact(e.value.to_f64()),
    }));
    // Whole groups with the intrinsics loop where there is one; the rest
    // (or everything) with the portable loop.
    let (done, fast_failed) = with_intrinsics::<S, D, MODE>(src, dst, &map, bounds, clamp);
    let (src_rest, dst_rest) = (&src[done..], &mut dst[done..]);
    let failed = fast_failed
        | if clamp {
            simd::dispatch(Blocks::<S, D, MODE, true> {
                src: src_rest,
                dst: dst_rest,
                map: &map,
                bounds,
            })
        } else {
            simd::dispatch(Blocks::<S, D, MODE, false> {
                src: src_rest,
                dst: dst_rest,
                map: &map,
                bounds,
            })
        };
    if !failed {
        return Ok(());
    }
    let index = src.iter().position(|s| {
        let w = map.apply(s.widen());
        if clamp {
            !w.is_finite()
        } else {
            !bounds.contains(bounds.round::<MODE>(w))
        }
    });
    // Both loops and this search apply the same rule to every element.
    debug_assert!(index.is_some(), "a failure was reported but none found");
    Err(index.unwrap_or(0))
}

/// Convert the leading whole groups of `src` with the AVX2 intrinsics loop
/// ([`avx2`]) if the CPU, types, mode and map allow; returns how many
/// elements were converted and whether any failed.
fn with_intrinsics<S: FloatElem, D: IntElem, const MODE: u8>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    map: &Map<S::Wide>,
    bounds: Bounds<S::Wide>,
    clamp: bool,
) -> (usize, bool) {
    #[cfg(target_arch = "x86_64")]
    {
        if !simd::avx2_enabled() {
            return (0, false);
        }
        let equal: Vec<(f64, f64)> = map
            .equal
            .iter()
            .map(|e| (e.key.to_f64(), e.value.to_f64()))
            .collect();
        let Some(map) = avx2::Map::new(map.nan.map(WideFloat::to_f64), &equal) else {
            return (0, false);
        };
        let (lo, hi) = (bounds.lo, bounds.hi);
        // SAFETY (both calls): `avx2_enabled` checked that the CPU has AVX2.
        let converted = if TypeId::of::<S>() == TypeId::of::<f64>() {
            unsafe {
                avx2::convert::<f64, D, MODE>(bytemuck::cast_slice(src), dst, &map, lo, hi, clamp)
            }
        } else if TypeId::of::<S>() == TypeId::of::<f32>() {
            unsafe {
                avx2::convert::<f32, D, MODE>(
                    bytemuck::cast_slice(src),
                    dst,
                    &map.to_f32(),
                    lo,
                    hi,
                    clamp,
                )
            }
        } else {
            None
        };
        if let Some(c) = converted {
            return (c.done, c.failed);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (src, dst, map, bounds, clamp);
    (0, false)
}

/// The target's bounds, and the values just outside them as floats.
#[derive(Clone, Copy)]
struct Bounds<W> {
    lo: i32,
    hi: i32,
    lo_outside: W,
    hi_outside: W,
}

impl<W: WideFloat> Bounds<W> {
    fn new(lo: i32, hi: i32) -> Self {
        Self {
            lo,
            hi,
            lo_outside: W::from_f64_exact(f64::from(lo - 1)),
            hi_outside: W::from_f64_exact(f64::from(hi + 1)),
        }
    }

    /// `w` rounded with `MODE` and clamped to `[lo - 1, hi + 1]`.
    #[inline(always)]
    fn round<const MODE: u8>(self, w: W) -> i32 {
        // NaN fails the first compare and becomes `lo - 1`: out of range.
        // Strict compares, so that each select is one `maxpd` / `minpd`
        // (which return the second operand for NaN and for equal operands).
        let c = if w > self.lo_outside {
            w
        } else {
            self.lo_outside
        };
        let c = if c < self.hi_outside {
            c
        } else {
            self.hi_outside
        };
        // SAFETY: `c` is not NaN and within [lo - 1, hi + 1], so its
        // magnitude is at most 2^16 + 1 < 2^21.
        unsafe { c.round_small_to_i32::<MODE>() }
    }

    #[inline(always)]
    fn contains(self, r: i32) -> bool {
        (r >= self.lo) & (r <= self.hi)
    }
}

/// The `scalar_map` as substitutions, widened: the value for NaN, if any,
/// and the entries with ordinary keys.
///
/// [`CastPlan::new`](super::CastPlan::new) keeps one entry per key, and a NaN
/// and an ordinary key never match the same value, so the entries are
/// independent and their order does not matter. Splitting off the NaN entry
/// gives each entry a single compare whose mask feeds a select directly;
/// testing "NaN key and NaN value, or equal" per entry made the compiler
/// shuffle masks between lane widths.
struct Map<W> {
    nan: Option<W>,
    equal: Vec<Entry<W, W>>,
}

impl<W: WideFloat> Map<W> {
    fn new(entries: impl Iterator<Item = Entry<W, W>>) -> Self {
        let mut map = Self {
            nan: None,
            equal: Vec::new(),
        };
        for e in entries {
            if e.key.is_nan_key() {
                debug_assert!(map.nan.is_none(), "CastPlan::new keeps one NaN key");
                map.nan = Some(e.value);
            } else {
                debug_assert!(!map.equal.iter().any(|o| o.key.equals(e.key)));
                map.equal.push(e);
            }
        }
        map
    }

    /// `x`, or the mapped value of the entry whose key it matches (a lookup,
    /// for long maps and the error search).
    fn apply(&self, x: W) -> W {
        if x.is_nan_value() {
            return self.nan.unwrap_or(x);
        }
        self.equal
            .iter()
            .find(|e| x.equals(e.key))
            .map_or(x, |e| e.value)
    }
}

/// [`Map`] with `N` ordinary keys in an array, for the unrolled loops.
#[derive(Clone, Copy)]
struct Substitutes<W, const N: usize> {
    nan: Option<W>,
    equal: [Entry<W, W>; N],
}

impl<W: WideFloat, const N: usize> Substitutes<W, N> {
    /// `x`, or the mapped value of the entry whose key it matches.
    #[inline(always)]
    fn apply<const NAN: bool>(&self, x: W) -> W {
        let mut w = x;
        if let (true, Some(v)) = (NAN, self.nan) {
            w = if x.is_nan_value() { v } else { w };
        }
        for e in &self.equal {
            w = if x.equals(e.key) { e.value } else { w };
        }
        w
    }
}

/// The whole conversion, compiled for AVX2 where available; returns whether
/// any element failed.
struct Blocks<'a, S: FloatElem, D, const MODE: u8, const CLAMP: bool> {
    src: &'a [S],
    dst: &'a mut [MaybeUninit<D>],
    map: &'a Map<S::Wide>,
    bounds: Bounds<S::Wide>,
}

impl<S: FloatElem, D: IntElem, const MODE: u8, const CLAMP: bool> simd::Kernel
    for Blocks<'_, S, D, MODE, CLAMP>
{
    type Output = bool;

    #[inline(always)]
    fn run(self) -> bool {
        let Self {
            src,
            dst,
            map,
            bounds,
        } = self;
        let nan = map.nan;
        macro_rules! mapped {
            ($nan:literal, [$($e:ident),*]) => {{
                let subs = Substitutes { nan, equal: [$(*$e),*] };
                blocks::<S, D, MODE, CLAMP>(src, dst, bounds, move |x| subs.apply::<$nan>(x))
            }};
        }
        match (nan.is_some(), &map.equal[..]) {
            (false, []) => blocks::<S, D, MODE, CLAMP>(src, dst, bounds, |x| x),
            (true, []) => mapped!(true, []),
            (false, [a]) => mapped!(false, [a]),
            (true, [a]) => mapped!(true, [a]),
            (false, [a, b]) => mapped!(false, [a, b]),
            (true, [a, b]) => mapped!(true, [a, b]),
            // Long maps are rare: a lookup per element is fine there.
            _ => blocks::<S, D, MODE, CLAMP>(src, dst, bounds, |x| map.apply(x)),
        }
    }
}

/// The two-stage loop; `map` applies the `scalar_map` to a widened value.
#[inline(always)]
fn blocks<S: FloatElem, D: IntElem, const MODE: u8, const CLAMP: bool>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    bounds: Bounds<S::Wide>,
    map: impl Fn(S::Wide) -> S::Wide,
) -> bool {
    let Bounds { lo, hi, .. } = bounds;
    let mut buf = [0i32; BLOCK];
    let (mut min, mut max) = (lo, hi);
    let mut not_finite = false;
    for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
        let buf = &mut buf[..s.len()];
        for (x, b) in s.iter().zip(buf.iter_mut()) {
            let w = map(x.widen());
            let r = bounds.round::<MODE>(w);
            if CLAMP {
                *b = r.max(lo).min(hi);
                not_finite |= !w.is_finite();
            } else {
                // Out-of-range values are written as `lo - 1` or `hi + 1`
                // (wrapped by the narrowing below); the chunk fails then.
                *b = r;
                min = min.min(r);
                max = max.max(r);
            }
        }
        for (b, o) in buf.iter().zip(d.iter_mut()) {
            o.write(D::from_i128_wrapping(i128::from(*b)));
        }
    }
    if CLAMP {
        not_finite
    } else {
        !bounds.contains(min) | !bounds.contains(max)
    }
}
