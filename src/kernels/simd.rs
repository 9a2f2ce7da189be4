//! Runtime choice of a wider instruction set for the hot loops.
//!
//! Release builds target baseline x86-64 unless the user sets `target-cpu`,
//! so the compiler may only use SSE2: two `f64` or four `f32` lanes, no
//! `roundps`, no byte shuffle. Nearly every x86-64 machine that runs this
//! crate has AVX2, and the kernels are written so that the compiler
//! vectorises them for whatever it is allowed to use. [`dispatch`] therefore
//! compiles the loop it is given a second time with AVX2 enabled and picks
//! that copy, once per call (per chunk, not per element), when the CPU has it.
//!
//! Both copies are the same Rust code: only the instruction selection
//! differs. No fused multiply-add is enabled, and Rust never contracts
//! `a * b + c` on its own, so both give bit-identical results; the tests
//! check that by running kernels under `portable` (a test-only helper) as well.
//! The few kernels written with intrinsics (see [`avx2_enabled`] and
//! [`fma_enabled`]) are held to the same rule: identical results to the
//! portable loop, which the same tests check.
//!
//! # Why a trait and not a closure
//!
//! A loop only gets the AVX2 instructions if it is inlined into the function
//! compiled with AVX2. LLVM decides that by cost, and a large closure called
//! from both copies is left out of line, i.e. compiled once for baseline
//! x86-64 (and, behind the closure's captured references, no longer
//! vectorised at all). A [`Kernel`]'s `run` is `#[inline(always)]`, which
//! LLVM honours across the two copies, and takes its data by value.

/// A loop that [`dispatch`] compiles twice.
pub(crate) trait Kernel {
    /// What the loop returns.
    type Output;
    /// The loop. Implementations must be `#[inline(always)]`, and so must the
    /// per-element functions it calls, or they run their baseline code.
    fn run(self) -> Self::Output;
}

/// Run `kernel`, compiled for AVX2 if the CPU supports it, otherwise as built.
#[inline(always)]
pub(crate) fn dispatch<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    {
        if avx2_enabled() {
            // SAFETY: `avx2_enabled` checked that this CPU executes AVX2.
            return unsafe { x86_64::avx2(kernel) };
        }
    }
    kernel.run()
}

/// Whether [`dispatch`] takes the AVX2 copy on this thread right now.
#[must_use]
pub(crate) fn avx2_enabled() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // `is_x86_feature_detected!` caches the CPUID result: an atomic load.
        !forced_portable() && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether kernels with their own AVX2 + FMA code may use it on this thread:
/// as [`avx2_enabled`], and the CPU has FMA.
#[must_use]
pub(crate) fn fma_enabled() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        avx2_enabled() && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod x86_64 {
    use super::Kernel;

    /// `kernel.run()` inlined into a function compiled with AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn avx2<K: Kernel>(kernel: K) -> K::Output {
        kernel.run()
    }
}

#[cfg(test)]
thread_local! {
    static PORTABLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
fn forced_portable() -> bool {
    PORTABLE.with(std::cell::Cell::get)
}

#[cfg(not(test))]
#[inline(always)]
fn forced_portable() -> bool {
    false
}

/// Run `f` with [`dispatch`] taking the baseline copy on this thread, so a test
/// can compare both copies of a kernel.
#[cfg(test)]
pub(crate) fn portable<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            PORTABLE.with(|p| p.set(self.0));
        }
    }
    let _reset = Reset(PORTABLE.with(|p| p.replace(true)));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_forces_the_baseline_copy_and_restores() {
        let detected = avx2_enabled();
        portable(|| {
            assert!(!avx2_enabled());
            portable(|| assert!(!avx2_enabled()));
            assert!(!avx2_enabled());
        });
        assert_eq!(avx2_enabled(), detected);
    }

    struct Sum<'a>(&'a [u32]);
    impl Kernel for Sum<'_> {
        type Output = u64;
        #[inline(always)]
        fn run(self) -> u64 {
            self.0.iter().map(|&x| u64::from(x) * 3).sum()
        }
    }

    #[test]
    fn dispatch_returns_the_kernel_result() {
        let data: Vec<u32> = (0..1000).collect();
        let fast = dispatch(Sum(&data));
        let slow = portable(|| dispatch(Sum(&data)));
        assert_eq!(fast, slow);
        assert_eq!(fast, 3 * 999 * 1000 / 2);
    }
}
