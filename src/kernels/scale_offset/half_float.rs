//! `float16` / `bfloat16` arithmetic: computed in `f32`, rounded back after each operation.

use super::*;

/// Round `x` to the nearest `bfloat16` value (ties to even), staying in `f32`.
///
/// Branch-free so that it vectorises; equal to `bf16::from_f32(x).to_f32()`
/// (checked against `half` in the tests). NaN is returned unchanged.
#[inline(always)]
pub(super) fn round_bf16(x: f32) -> f32 {
    let bits = x.to_bits();
    // bfloat16 is f32 with 7 mantissa bits: round the low 16 bits away. A carry
    // out of the largest finite value gives infinity, as it should.
    let r = f32::from_bits(bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) & 0xffff_0000);
    if x.is_nan() { x } else { r }
}

/// `float16` / `bfloat16` block operations in `f32`.
pub(super) trait HalfArith: bytemuck::Pod {
    /// `dst[i] = src[i]` as `f32` (exact).
    fn widen(src: &[Self], dst: &mut [f32]);
    /// Round every value of `values` to the nearest value of `Self` (ties to
    /// even), in place; `scratch` has the same length.
    fn round(values: &mut [f32], scratch: &mut [Self]);
    /// `dst[i]` = `src[i]` rounded to the nearest value of `Self`.
    fn narrow(src: &[f32], dst: &mut [Self]);
}

/// `float16` uses the slice conversions of `half`, which use the hardware
/// conversion instructions (F16C, FP16) where available.
impl HalfArith for f16 {
    #[inline(always)]
    fn widen(src: &[Self], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst);
    }
    #[inline(always)]
    fn round(values: &mut [f32], scratch: &mut [Self]) {
        scratch.convert_from_f32_slice(values);
        scratch.convert_to_f32_slice(values);
    }
    #[inline(always)]
    fn narrow(src: &[f32], dst: &mut [Self]) {
        dst.convert_from_f32_slice(src);
    }
}

/// `bfloat16` is the upper half of an `f32`: plain bit arithmetic.
impl HalfArith for bf16 {
    #[inline(always)]
    fn widen(src: &[Self], dst: &mut [f32]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = f32::from_bits(u32::from(s.to_bits()) << 16);
        }
    }
    #[inline(always)]
    fn round(values: &mut [f32], _scratch: &mut [Self]) {
        for v in values {
            *v = round_bf16(*v);
        }
    }
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)]
    fn narrow(src: &[f32], dst: &mut [Self]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            let r = round_bf16(s);
            // Keep a NaN a NaN even if its payload were only in the low bits.
            let quiet = if r.is_nan() { 0x0040 } else { 0 };
            *d = bf16::from_bits((r.to_bits() >> 16) as u16 | quiet);
        }
    }
}

pub(super) fn half_kernel<H: HalfArith>(
    enc: bool,
    io: Io<'_>,
    offset: &[u8],
    scale: &[u8],
) -> Result<(), usize> {
    let mut pair = [0f32; 2];
    H::widen(&[read::<H>(offset), read::<H>(scale)], &mut pair);
    let [off, sc] = pair;
    if enc {
        simd::dispatch(HalfBlocks::<H, true>::new(io, off, sc))
    } else {
        simd::dispatch(HalfBlocks::<H, false>::new(io, off, sc))
    }
}

/// [`half_blocks`] as a [`simd::Kernel`]. `float16`'s conversions are
/// `half`'s own (with their own CPU detection); the arithmetic and
/// `bfloat16`'s rounding get AVX2.
pub(super) struct HalfBlocks<'a, H, const ENC: bool> {
    io: Io<'a>,
    off: f32,
    sc: f32,
    element: std::marker::PhantomData<H>,
}

impl<'a, H, const ENC: bool> HalfBlocks<'a, H, ENC> {
    pub(super) fn new(io: Io<'a>, off: f32, sc: f32) -> Self {
        Self {
            io,
            off,
            sc,
            element: std::marker::PhantomData,
        }
    }
}

impl<H: HalfArith, const ENC: bool> simd::Kernel for HalfBlocks<'_, H, ENC> {
    type Output = Result<(), usize>;

    #[inline(always)]
    fn run(self) -> Result<(), usize> {
        half_blocks::<H, ENC>(self.io, self.off, self.sc)
    }
}

/// `float16` / `bfloat16` through `f32` blocks, rounding to `H` after each
/// operation. `f32` has more than twice the precision of either type, so an
/// `f32` operation followed by rounding to `H` is the correctly rounded `H`
/// operation (and what numpy computes for `float16`).
#[inline(always)]
pub(super) fn half_blocks<H: HalfArith, const ENC: bool>(
    mut io: Io<'_>,
    off: f32,
    sc: f32,
) -> Result<(), usize> {
    let mut scratch = [H::zeroed(); BLOCK];
    let mut xs = [0f32; BLOCK];
    let mut ts = [0f32; BLOCK];
    let mut out = [H::zeroed(); BLOCK];
    for range in block_ranges::<H>(io.input().len()) {
        let block = io.block(range.clone(), &mut scratch);
        let n = block.len();
        let (xs, ts, out) = (&mut xs[..n], &mut ts[..n], &mut out[..n]);
        H::widen(block, xs);
        for (t, &x) in ts.iter_mut().zip(xs.iter()) {
            *t = if ENC { x - off } else { x / sc };
        }
        H::round(ts, out);
        for t in ts.iter_mut() {
            *t = if ENC { *t * sc } else { *t + off };
        }
        // IEEE arithmetic: overflow gives ±infinity, as in zarr-python.
        H::narrow(ts, out);
        io.put(range, out);
    }
    Ok(())
}
