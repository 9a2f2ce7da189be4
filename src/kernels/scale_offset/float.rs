//! `float32` / `float64` arithmetic (IEEE, in the type itself).

use super::*;

pub(super) trait FloatArith:
    bytemuck::Pod
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Add<Output = Self>
{
}

impl FloatArith for f32 {}

impl FloatArith for f64 {}

/// `float32` / `float64`. Every result is the correctly rounded IEEE result
/// of each step, with or without AVX2: the division is a division (never a
/// multiplication by `1 / scale`), except that float64 decoding on CPUs
/// with FMA computes half of the quotients with `divide_fma`, which is
/// proven to give the same correctly rounded quotient.
pub(super) fn float_kernel<T: FloatArith>(
    enc: bool,
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))] mut io: Io<'_>,
    offset: &[u8],
    scale: &[u8],
) -> Result<(), usize> {
    let (off, sc): (T, T) = (read(offset), read(scale));
    // IEEE arithmetic: overflow gives ±infinity, as in zarr-python, so no
    // element fails.
    if enc {
        simd::dispatch(DriveInfallible {
            io,
            f: move |x: T| (x - off) * sc,
            element: std::marker::PhantomData,
        })
    } else {
        #[cfg(target_arch = "x86_64")]
        if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f64>()
            && decode_f64_fma(io.reborrow(), read(offset), read(scale))
        {
            return Ok(());
        }
        simd::dispatch(DriveInfallible {
            io,
            f: move |x: T| x / sc + off,
            element: std::marker::PhantomData,
        })
    }
}

/// float64 decoding through `divide_fma` (the same results, half without the
/// divider), if the CPU and the scale allow; `false` if it did nothing.
#[cfg(target_arch = "x86_64")]
pub(super) fn decode_f64_fma(io: Io<'_>, offset: f64, scale: f64) -> bool {
    if !divide_fma::usable(scale) {
        return false;
    }
    match io {
        Io::InPlace(bytes) => {
            let p = bytes.as_mut_ptr().cast::<f64>();
            // SAFETY: `usable` checked the CPU and the scale; `p` is valid
            // for reading and writing the `len / 8` whole elements of
            // `bytes`, unaligned accesses included.
            unsafe { divide_fma::decode(p, p, bytes.len() / 8, scale, offset) };
        }
        Io::Out { src, dst } => {
            let n = src.len() / 8;
            let out = dst.as_mut_ptr().cast::<f64>();
            // SAFETY: as above for `src`; `out` is `dst`, `src.len()` bytes
            // (see `Io`), written in full.
            unsafe { divide_fma::decode(src.as_ptr().cast(), out, n, scale, offset) };
        }
    }
    true
}
