//! Integer arithmetic: checked `(x - offset) * scale` and exact `x / scale + offset`.

use super::*;

/// Checked `scale_offset` arithmetic of one integer type. Each function returns
/// the (wrapped) result and whether it is invalid; `lo` / `hi` bound every
/// intermediate and final value. The scale is never zero.
pub(super) trait IntArith: bytemuck::Pod + PartialEq {
    const ONE: Self;
    /// `(x - off) * sc`
    fn enc(x: Self, off: Self, sc: Self, lo: Self, hi: Self) -> (Self, bool);
    /// `x / sc + off`, exact division only
    fn dec(x: Self, off: Self, sc: Self, lo: Self, hi: Self) -> (Self, bool);
    /// `x + off` (decode with a scale of one, no division)
    fn dec_add(x: Self, off: Self, lo: Self, hi: Self) -> (Self, bool);
    const MIN: Self;
    const MAX: Self;
}

/// Signed types up to 32 bits: computed exactly in the wider type `$w`
/// (`|x - off| * |sc|` always fits), which vectorises well.
macro_rules! int_signed_wide {
    ($t:ty, $w:ty) => {
        impl IntArith for $t {
            const ONE: Self = 1;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation)]
            fn enc(x: Self, off: Self, sc: Self, lo: Self, hi: Self) -> (Self, bool) {
                let (lo, hi) = (<$w>::from(lo), <$w>::from(hi));
                let d = <$w>::from(x) - <$w>::from(off);
                let r = d * <$w>::from(sc);
                let bad = (d < lo) | (d > hi) | (r < lo) | (r > hi);
                (r as $t, bad)
            }
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation)]
            fn dec(x: Self, off: Self, sc: Self, lo: Self, hi: Self) -> (Self, bool) {
                let (lo, hi) = (<$w>::from(lo), <$w>::from(hi));
                let (x, sc) = (<$w>::from(x), <$w>::from(sc));
                let q = x / sc;
                let r = q + <$w>::from(off);
                let bad = (x % sc != 0) | (q < lo) | (q > hi) | (r < lo) | (r > hi);
                (r as $t, bad)
            }
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation)]
            fn dec_add(x: Self, off: Self, lo: Self, hi: Self) -> (Self, bool) {
                let r = <$w>::from(x) + <$w>::from(off);
                ((r as $t), (r < <$w>::from(lo)) | (r > <$w>::from(hi)))
            }
        }
    };
}

int_signed_wide!(i8, i16);
int_signed_wide!(i16, i32);
int_signed_wide!(i32, i64);

/// Unsigned types up to 32 bits: the subtraction checks for borrow, the product
/// of two values below `2^n` fits the type `$w` of twice the width.
macro_rules! int_unsigned_wide {
    ($t:ty, $w:ty) => {
        impl IntArith for $t {
            const ONE: Self = 1;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation)]
            fn enc(x: Self, off: Self, sc: Self, _lo: Self, hi: Self) -> (Self, bool) {
                let (d, borrow) = x.overflowing_sub(off);
                let r = <$w>::from(d) * <$w>::from(sc);
                let bad = borrow | (d > hi) | (r > <$w>::from(hi));
                (r as $t, bad)
            }
            #[inline(always)]
            fn dec(x: Self, off: Self, sc: Self, _lo: Self, hi: Self) -> (Self, bool) {
                let q = x / sc;
                let (r, carry) = q.overflowing_add(off);
                let bad = (x % sc != 0) | (q > hi) | carry | (r > hi);
                (r, bad)
            }
            #[inline(always)]
            fn dec_add(x: Self, off: Self, _lo: Self, hi: Self) -> (Self, bool) {
                let (r, carry) = x.overflowing_add(off);
                (r, carry | (r > hi))
            }
        }
    };
}

int_unsigned_wide!(u8, u16);
int_unsigned_wide!(u16, u32);
int_unsigned_wide!(u32, u64);

/// 64-bit types: overflow flags of the native operations (always full range).
macro_rules! int_64 {
    ($t:ty) => {
        impl IntArith for $t {
            const ONE: Self = 1;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn enc(x: Self, off: Self, sc: Self, _lo: Self, _hi: Self) -> (Self, bool) {
                let (d, o1) = x.overflowing_sub(off);
                let (r, o2) = d.overflowing_mul(sc);
                (r, o1 | o2)
            }
            #[inline(always)]
            fn dec(x: Self, off: Self, sc: Self, _lo: Self, _hi: Self) -> (Self, bool) {
                let (q, o1) = x.overflowing_div(sc);
                let (r, o2) = q.overflowing_add(off);
                (r, (x.wrapping_rem(sc) != 0) | o1 | o2)
            }
            #[inline(always)]
            fn dec_add(x: Self, off: Self, _lo: Self, _hi: Self) -> (Self, bool) {
                x.overflowing_add(off)
            }
        }
    };
}

int_64!(i64);
int_64!(u64);

/// Multi-byte integer types (always their full range).
pub(super) fn int_kernel<T: IntArith>(
    enc: bool,
    io: Io<'_>,
    offset: &[u8],
    scale: &[u8],
) -> Result<(), usize> {
    let (off, sc): (T, T) = (read(offset), read(scale));
    let (lo, hi) = (T::MIN, T::MAX);
    if enc {
        drive_simd(io, move |x| T::enc(x, off, sc, lo, hi))
    } else if sc == T::ONE {
        drive_simd(io, move |x| T::dec_add(x, off, lo, hi))
    } else {
        drive_simd(io, move |x| T::dec(x, off, sc, lo, hi))
    }
}
