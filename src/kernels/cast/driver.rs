//! The loop every cast kernel runs in.
//!
//! One pass converts every element with the kernel's per-element function,
//! applies the `scalar_map` as a select (not a branch), and ORs together a
//! "failed" flag. Only if that flag is set does a second pass look for the
//! first failing element to name it in the error. So a map entry, or a rare
//! NaN, costs a compare and a select per element, never a slow path.
//!
//! The output is `MaybeUninit`, so that a fresh buffer need not be zeroed
//! first (a full extra pass over it). Every function here writes every
//! element of `dst` before it returns `Ok`; callers rely on that to treat the
//! output as initialised.

use std::mem::MaybeUninit;

use super::elements::MapKey;
use crate::kernels::simd;

/// A `scalar_map` entry, typed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry<S, D> {
    pub key: S,
    pub value: D,
}

/// `true` if `x` matches `key` (a NaN key matches every NaN).
#[inline(always)]
fn hit<S: MapKey>(x: S, key: S, key_is_nan: bool) -> bool {
    (key_is_nan & x.is_nan_value()) | x.equals(key)
}

#[inline(always)]
fn pass_plain<S: Copy, D: Copy>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    f: &impl Fn(S) -> (D, bool),
) -> bool {
    let mut bad = false;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let (v, b) = f(*s);
        d.write(v);
        bad |= b;
    }
    bad
}

#[inline(always)]
fn pass_mapped<S: MapKey, D: Copy, const N: usize>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    entries: &[Entry<S, D>; N],
    f: &impl Fn(S) -> (D, bool),
) -> bool {
    let nan_keys: [bool; N] = std::array::from_fn(|i| entries[i].key.is_nan_key());
    let mut bad = false;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let (mut v, mut b) = f(*s);
        // Later entries first, so that the first occurrence of a key wins.
        for i in (0..N).rev() {
            let h = hit(*s, entries[i].key, nan_keys[i]);
            v = if h { entries[i].value } else { v };
            b &= !h;
        }
        d.write(v);
        bad |= b;
    }
    bad
}

fn lookup<S: MapKey, D: Copy>(x: S, entries: &[Entry<S, D>]) -> Option<D> {
    entries
        .iter()
        .find(|e| hit(x, e.key, e.key.is_nan_key()))
        .map(|e| e.value)
}

/// The conversion pass over a whole chunk, compiled for AVX2 where available.
struct Passes<'a, S, D, F> {
    src: &'a [S],
    dst: &'a mut [MaybeUninit<D>],
    entries: &'a [Entry<S, D>],
    f: F,
}

impl<S: MapKey, D: Copy, F: Fn(S) -> (D, bool)> simd::Kernel for Passes<'_, S, D, F> {
    type Output = bool;

    #[inline(always)]
    fn run(self) -> bool {
        let Self {
            src,
            dst,
            entries,
            f,
        } = self;
        let f = &f;
        match entries {
            [] => pass_plain(src, dst, f),
            [a] => pass_mapped(src, dst, &[*a], f),
            [a, b] => pass_mapped(src, dst, &[*a, *b], f),
            [a, b, c] => pass_mapped(src, dst, &[*a, *b, *c], f),
            _ => {
                // Long maps are rare: a lookup per element is fine here.
                let mut bad = false;
                for (s, d) in src.iter().zip(dst.iter_mut()) {
                    if let Some(v) = lookup(*s, entries) {
                        d.write(v);
                    } else {
                        let (v, b) = f(*s);
                        d.write(v);
                        bad |= b;
                    }
                }
                bad
            }
        }
    }
}

/// Convert `src` into `dst` with `f` (value, failed) and the map `entries`.
///
/// Every element of `dst` is written, whatever the result.
///
/// # Errors
/// Returns the index of the first element that failed and is not mapped.
///
/// # Panics
/// If `src` and `dst` differ in length (the callers slice both to the same
/// element count; checked because callers trust `Ok` to mean all of `dst`
/// was written).
#[inline(always)]
pub(crate) fn run<S: MapKey, D: Copy>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    entries: &[Entry<S, D>],
    f: impl Fn(S) -> (D, bool) + Copy,
) -> Result<(), usize> {
    assert_eq!(src.len(), dst.len());
    // `f` by value (a `move` closure of plain values): behind a reference the
    // compiler could not tell its captures from `dst`, and would not vectorise.
    let bad = simd::dispatch(Passes {
        src,
        dst,
        entries,
        f,
    });
    if !bad {
        return Ok(());
    }
    let index = src
        .iter()
        .position(|s| lookup(*s, entries).is_none() && f(*s).1)
        .unwrap_or(0);
    Err(index)
}

/// As [`run`] for kernels that cannot be written branch-free (wrapping,
/// small-float targets): `f` returns `None` on failure.
///
/// Stops at the first failure, so on `Err` the elements from that index on
/// are left unwritten; on `Ok` every element of `dst` is written.
///
/// # Panics
/// As [`run`].
pub(crate) fn run_fallible<S: MapKey, D: Copy>(
    src: &[S],
    dst: &mut [MaybeUninit<D>],
    entries: &[Entry<S, D>],
    f: impl Fn(S) -> Option<D>,
) -> Result<(), usize> {
    assert_eq!(src.len(), dst.len());
    for (i, (s, d)) in src.iter().zip(dst.iter_mut()).enumerate() {
        d.write(match lookup(*s, entries) {
            Some(v) => v,
            None => f(*s).ok_or(i)?,
        });
    }
    Ok(())
}
