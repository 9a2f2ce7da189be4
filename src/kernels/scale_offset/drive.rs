//! The block loops every kernel runs in: blocks of [`BLOCK`] elements
//! through stack buffers, for in-place, out-of-place and uninitialised outputs.

use super::*;

/// Elements per block of the stack buffers.
pub(super) const BLOCK: usize = 512;

/// Where a driver reads the elements and puts the results.
///
/// Every driver, when it returns `Ok`, has written every byte of the output
/// (`InPlace`: the input itself; `Out`: all of `dst`), with initialised
/// values only.
pub(super) enum Io<'a> {
    /// Overwrite the input, a block at a time.
    InPlace(&'a mut [u8]),
    /// Write the results to `dst` and leave `src` alone: one pass over
    /// memory instead of a copy followed by an in-place pass.
    Out {
        /// The input.
        src: &'a [u8],
        /// Where the results go: as many bytes as `src`, not yet written.
        dst: &'a mut [MaybeUninit<u8>],
    },
}

impl Io<'_> {
    /// The same buffers for a shorter time, so that the input can be read
    /// after a driver has consumed the reborrow.
    pub(super) fn reborrow(&mut self) -> Io<'_> {
        match self {
            Io::InPlace(bytes) => Io::InPlace(bytes),
            Io::Out { src, dst } => Io::Out { src, dst },
        }
    }

    /// The whole input; its blocks are intact up to the first bad element.
    #[inline(always)]
    pub(super) fn input(&self) -> &[u8] {
        match self {
            Io::InPlace(bytes) => bytes,
            Io::Out { src, .. } => src,
        }
    }

    /// The identity transformation.
    pub(super) fn copy(self) {
        if let Io::Out { src, dst } = self {
            write_bytes(dst, src);
        }
    }

    /// The input elements in `range` (bytes) as `[T]`: the bytes themselves
    /// if aligned, otherwise copied into `scratch`.
    #[inline(always)]
    pub(super) fn block<'s, T: bytemuck::Pod>(
        &'s self,
        range: std::ops::Range<usize>,
        scratch: &'s mut [T; BLOCK],
    ) -> &'s [T] {
        let bytes = &self.input()[range];
        match bytemuck::try_cast_slice(bytes) {
            Ok(xs) => xs,
            Err(_) => {
                let xs = &mut scratch[..bytes.len() / size_of::<T>()];
                bytemuck::cast_slice_mut(xs).copy_from_slice(bytes);
                xs
            }
        }
    }

    /// Put the results of the block at `range` (bytes).
    #[inline(always)]
    pub(super) fn put<T: bytemuck::Pod>(&mut self, range: std::ops::Range<usize>, out: &[T]) {
        let out: &[u8] = bytemuck::cast_slice(out);
        match self {
            Io::InPlace(bytes) => bytes[range].copy_from_slice(out),
            Io::Out { dst, .. } => write_bytes(&mut dst[range], out),
        }
    }
}

/// `dst = src` for a not yet initialised `dst` of the same length.
#[inline(always)]
pub(super) fn write_bytes(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    // SAFETY: both are `src.len()` bytes long (checked), and `dst` is an
    // exclusive borrow, so they do not overlap; `MaybeUninit<u8>` has the
    // layout of `u8`.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast(), src.len()) };
}

/// Byte ranges of the blocks of `len` bytes of `T`.
#[inline(always)]
pub(super) fn block_ranges<T>(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let step = BLOCK * size_of::<T>();
    (0..len)
        .step_by(step)
        .map(move |start| start..len.min(start + step))
}

/// Map every element through `f` (`(result, bad)`), block by block.
///
/// A block's results are put only if none of its elements is bad; otherwise
/// the index of the first bad element is returned and the block is left
/// intact.
#[inline(always)]
pub(super) fn drive<T: bytemuck::Pod, F: Fn(T) -> (T, bool)>(
    mut io: Io<'_>,
    f: F,
) -> Result<(), usize> {
    let mut scratch = [T::zeroed(); BLOCK];
    let mut buffer = [T::zeroed(); BLOCK];
    for (block_index, range) in block_ranges::<T>(io.input().len()).enumerate() {
        let xs = io.block(range.clone(), &mut scratch);
        let out = &mut buffer[..xs.len()];
        let mut bad = false;
        for (o, &x) in out.iter_mut().zip(xs) {
            let (r, b) = f(x);
            *o = r;
            bad |= b;
        }
        if bad {
            let i = xs.iter().position(|&x| f(x).1).unwrap_or(0);
            return Err(block_index * BLOCK + i);
        }
        io.put(range, out);
    }
    Ok(())
}

/// [`drive`] for an `f` that cannot fail: in place (and aligned) there is no
/// input to keep, so the elements are overwritten directly instead of going
/// through the stack buffer, which saves a copy of every block.
#[inline(always)]
pub(super) fn drive_infallible<T: bytemuck::Pod, F: Fn(T) -> T>(
    io: Io<'_>,
    f: F,
) -> Result<(), usize> {
    match io {
        Io::InPlace(bytes) => {
            if let Ok(data) = bytemuck::try_cast_slice_mut::<u8, T>(&mut *bytes) {
                for x in data {
                    *x = f(*x);
                }
                return Ok(());
            }
            drive(Io::InPlace(bytes), move |x| (f(x), false))
        }
        Io::Out { src, dst } => {
            if let Ok(xs) = bytemuck::try_cast_slice::<u8, T>(src)
                && dst.as_ptr().cast::<T>().is_aligned()
            {
                // SAFETY: `dst` is `src.len()` bytes (see `Io`), aligned for
                // `T` (checked), so it holds `xs.len()` values of `T`, which
                // are plain data; `MaybeUninit<T>` has the layout of `T`.
                let out = unsafe {
                    std::slice::from_raw_parts_mut(
                        dst.as_mut_ptr().cast::<MaybeUninit<T>>(),
                        xs.len(),
                    )
                };
                // Writes every byte of `dst`, as `Io` requires.
                for (o, &x) in out.iter_mut().zip(xs) {
                    o.write(f(x));
                }
                return Ok(());
            }
            drive(Io::Out { src, dst }, move |x| (f(x), false))
        }
    }
}

/// [`drive_infallible`] as a [`simd::Kernel`].
pub(super) struct DriveInfallible<'a, T, F> {
    pub(super) io: Io<'a>,
    pub(super) f: F,
    pub(super) element: std::marker::PhantomData<T>,
}

impl<T: bytemuck::Pod, F: Fn(T) -> T> simd::Kernel for DriveInfallible<'_, T, F> {
    type Output = Result<(), usize>;

    #[inline(always)]
    fn run(self) -> Result<(), usize> {
        drive_infallible(self.io, self.f)
    }
}

/// [`drive`] as a [`simd::Kernel`]: `f` is held by value, so that its
/// captures are known not to alias the output.
pub(super) struct Drive<'a, T, F> {
    io: Io<'a>,
    f: F,
    element: std::marker::PhantomData<T>,
}

impl<T: bytemuck::Pod, F: Fn(T) -> (T, bool)> simd::Kernel for Drive<'_, T, F> {
    type Output = Result<(), usize>;

    #[inline(always)]
    fn run(self) -> Result<(), usize> {
        drive(self.io, self.f)
    }
}

/// [`drive`], compiled for AVX2 where the CPU has it. `f` and what it calls
/// must be `#[inline(always)]` (or trivial) to benefit.
#[inline(always)]
pub(super) fn drive_simd<T: bytemuck::Pod, F: Fn(T) -> (T, bool)>(
    io: Io<'_>,
    f: F,
) -> Result<(), usize> {
    simd::dispatch(Drive {
        io,
        f,
        element: std::marker::PhantomData,
    })
}

/// One-byte types whose arithmetic does not vectorise (division, small
/// floats): through a 256-entry lookup table for large chunks.
#[inline(always)]
pub(super) fn byte_kernel<F: Fn(u8) -> (u8, bool)>(io: Io<'_>, f: F) -> Result<(), usize> {
    if io.input().len() < 256 {
        return drive(io, f);
    }
    let mut values = [0u8; 256];
    let mut bad = [false; 256];
    for b in 0..=255u8 {
        (values[usize::from(b)], bad[usize::from(b)]) = f(b);
    }
    drive_simd(io, move |b: u8| {
        (values[usize::from(b)], bad[usize::from(b)])
    })
}
