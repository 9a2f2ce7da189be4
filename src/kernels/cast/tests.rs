//! Edge-case tests of the `cast_value` kernels through [`CastPlan`].
//!
//! Every expected value is worked out by hand from the `cast_value` spec and
//! IEEE 754 (the arithmetic is in the comments); none is taken from running
//! this crate. Mode tables list results in the order of [`MODES`]:
//! nearest-even, towards-zero, towards-positive, towards-negative,
//! nearest-away; out-of-range tables in the order of [`OOR`]: none, clamp,
//! wrap.

use std::fmt::Debug;
use std::marker::PhantomData;

use bytemuck::Pod;
use half::{bf16, f16};

use super::{CastFailure, CastPlan, OutOfRangeMode, RoundingMode};
use crate::numeric::{NumericType, Value};

use CastFailure::{NotFinite, OutOfRange};
use NumericType as T;
use OutOfRangeMode::{Clamp, Wrap};
use RoundingMode::{NearestAway, NearestEven, TowardsNegative, TowardsPositive, TowardsZero};

/// The five rounding modes, in the order of the mode tables.
pub(super) const MODES: [RoundingMode; 5] = [
    NearestEven,
    TowardsZero,
    TowardsPositive,
    TowardsNegative,
    NearestAway,
];
const OOR: [Option<OutOfRangeMode>; 3] = [None, Some(Clamp), Some(Wrap)];

type Outcome<D> = Result<D, CastFailure>;

/// `2^e` as `f64`, built from its bits (normal or subnormal).
fn p2(e: i32) -> f64 {
    assert!((-1074..=1023).contains(&e));
    if e >= -1022 {
        f64::from_bits(u64::try_from(e + 1023).unwrap() << 52)
    } else {
        f64::from_bits(1 << (e + 1074))
    }
}

/// `2^e` as `f32`, built from its bits (normal or subnormal).
fn p2f(e: i32) -> f32 {
    assert!((-149..=127).contains(&e));
    if e >= -126 {
        f32::from_bits(u32::try_from(e + 127).unwrap() << 23)
    } else {
        f32::from_bits(1 << (e + 149))
    }
}

fn ok<D>(v: D) -> Outcome<D> {
    Ok(v)
}

/// Out of range (and no out_of_range rule that applies).
fn e<D>() -> Outcome<D> {
    Err(OutOfRange)
}

/// Bit-exact comparison (so `-0.0 != 0.0`; a NaN must match bit for bit,
/// [`Cast::nan`] checks NaN results).
fn same<D: Pod>(a: &Outcome<D>, b: &Outcome<D>) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => bytemuck::bytes_of(x) == bytemuck::bytes_of(y),
        (Err(x), Err(y)) => x == y,
        _ => false,
    }
}

/// Casts from `S` elements of type `s` to `D` elements of type `t` (the
/// element types are the in-memory ones: `i8` for `int4`, ...).
#[derive(Clone, Copy)]
struct Cast<S, D> {
    s: NumericType,
    t: NumericType,
    _types: PhantomData<(S, D)>,
}

fn cast<S, D>(s: NumericType, t: NumericType) -> Cast<S, D> {
    Cast {
        s,
        t,
        _types: PhantomData,
    }
}

impl<S: Pod + Debug, D: Pod + Debug> Cast<S, D> {
    fn plan(self, r: RoundingMode, o: Option<OutOfRangeMode>, map: &[(S, D)]) -> CastPlan {
        let entries = map
            .iter()
            .map(|(k, v)| {
                (
                    bytemuck::bytes_of(k).to_vec(),
                    bytemuck::bytes_of(v).to_vec(),
                )
            })
            .collect();
        CastPlan::new(self.s, self.t, r, o, entries).unwrap()
    }

    /// Cast a slice; the error is `(index, failure)`.
    fn run(
        self,
        r: RoundingMode,
        o: Option<OutOfRangeMode>,
        map: &[(S, D)],
        src: &[S],
    ) -> Result<Vec<D>, (usize, CastFailure)> {
        let out = self
            .plan(r, o, map)
            .cast_to_vec(bytemuck::cast_slice(src))
            .map_err(|e| (e.index, e.failure))?;
        Ok(bytemuck::pod_collect_to_vec(&out))
    }

    #[track_caller]
    fn one(self, r: RoundingMode, o: Option<OutOfRangeMode>, x: S, expect: Outcome<D>) {
        let got = self.run(r, o, &[], &[x]).map(|v| v[0]).map_err(|(_, f)| f);
        let (s, t) = (self.s, self.t);
        assert!(
            same(&got, &expect),
            "{s} -> {t} {r:?} {o:?}: {x:?} gave {got:?}, expected {expect:?}"
        );
    }

    /// One input under the five modes of [`MODES`].
    #[track_caller]
    fn modes(self, o: Option<OutOfRangeMode>, x: S, expect: [Outcome<D>; 5]) {
        for (r, want) in MODES.into_iter().zip(expect) {
            self.one(r, o, x, want);
        }
    }

    /// One input under the three out-of-range settings of [`OOR`].
    #[track_caller]
    fn oor(self, r: RoundingMode, x: S, expect: [Outcome<D>; 3]) {
        for (o, want) in OOR.into_iter().zip(expect) {
            self.one(r, o, x, want);
        }
    }

    /// `x` casts to a NaN (of any payload).
    #[track_caller]
    fn nan(self, r: RoundingMode, o: Option<OutOfRangeMode>, x: S) {
        let got = self
            .plan(r, o, &[])
            .cast_to_vec(bytemuck::bytes_of(&x))
            .unwrap();
        let is_nan = match self.t {
            T::Float16 => f16::from_ne_bytes([got[0], got[1]]).is_nan(),
            T::BFloat16 => bf16::from_ne_bytes([got[0], got[1]]).is_nan(),
            T::Float32 => f32::from_ne_bytes(got[..4].try_into().unwrap()).is_nan(),
            T::Float64 => f64::from_ne_bytes(got[..8].try_into().unwrap()).is_nan(),
            _ => unreachable!(),
        };
        assert!(
            is_nan,
            "{} -> {} {r:?} {o:?}: {x:?} gave {got:?}",
            self.s, self.t
        );
    }
}

// ---------------------------------------------------------------------------
// Rounding: ties under all five modes
// ---------------------------------------------------------------------------

#[test]
fn float_to_int_ties_and_near_ties() {
    // [nearest-even, towards-zero, towards-positive, towards-negative, nearest-away]
    let table: &[(f64, [i32; 5])] = &[
        (0.5, [0, 0, 1, 0, 1]),    // tie 0|1: even is 0, away is 1
        (1.5, [2, 1, 2, 1, 2]),    // tie 1|2: even is 2
        (2.5, [2, 2, 3, 2, 3]),    // tie 2|3: even is 2
        (3.5, [4, 3, 4, 3, 4]),    // tie 3|4: even is 4
        (-0.5, [0, 0, 0, -1, -1]), // tie -1|0 (0 as -0.0 -> 0)
        (-1.5, [-2, -1, -1, -2, -2]),
        (-2.5, [-2, -2, -2, -3, -3]),
        (2.4, [2, 2, 3, 2, 2]),
        (2.6, [3, 2, 3, 2, 3]),
        (-2.6, [-3, -2, -2, -3, -3]),
        // The largest double below 0.5 (0.5 - 2^-54) is not a tie: nearest
        // is 0 in both nearest modes (floor(x + 0.5) would give 1).
        (0.5 - p2(-54), [0, 0, 1, 0, 0]),
    ];
    for &(x, expect) in table {
        cast::<f64, i32>(T::Float64, T::Int32).modes(None, x, expect.map(ok));
        // All but 2.4, 2.6, -2.6 and 0.5 - 2^-54 are exact in the narrower
        // floats too.
        #[allow(clippy::cast_possible_truncation)]
        let x32 = x as f32;
        if f64::from(x32) == x {
            cast::<f32, i32>(T::Float32, T::Int32).modes(None, x32, expect.map(ok));
            let h = f16::from_f32(x32);
            cast::<f16, i32>(T::Float16, T::Int32).modes(None, h, expect.map(ok));
            let b = bf16::from_f32(x32);
            let want = expect.map(|v| ok(i8::try_from(v).unwrap()));
            cast::<bf16, i8>(T::BFloat16, T::Int8).modes(None, b, want);
        }
    }
    // 2^52 + 1 is an integer already (ulp(2^52) = 1): exact in every mode.
    let c = cast::<f64, i64>(T::Float64, T::Int64);
    c.modes(None, p2(52) + 1.0, [ok(4_503_599_627_370_497); 5]);
}

#[test]
fn float64_to_float32_ties() {
    let c = cast::<f64, f32>(T::Float64, T::Float32);
    let u = p2f(-23); // ulp of 1 in f32
    let (one, up, up2) = (ok(1.0), ok(1.0 + u), ok(1.0 + 2.0 * u));
    // 1 + 2^-24 is the midpoint of 1 (even significand) and 1 + 2^-23 (odd).
    c.modes(None, 1.0 + p2(-24), [one, one, up, one, up]);
    // 1 + 3*2^-24 is the midpoint of 1 + 2^-23 (odd) and 1 + 2^-22 (even).
    c.modes(None, 1.0 + 3.0 * p2(-24), [up2, up, up2, up, up2]);
    // -(1 + 2^-24): ties to -1 (even) or away to -(1 + 2^-23).
    let (m_one, m_up) = (ok(-1.0), ok(-1.0 - u));
    c.modes(None, -(1.0 + p2(-24)), [m_one, m_one, m_one, m_up, m_up]);
    // Just above the midpoint: nearest is up in both nearest modes.
    c.modes(None, 1.0 + p2(-24) + p2(-52), [up, one, up, one, up]);
}

#[test]
fn float64_to_float16_ties() {
    let c = cast::<f64, f16>(T::Float64, T::Float16);
    let h = |x: f32| ok(f16::from_f32(x)); // exact for the f16 values used here
    let u = p2f(-10); // ulp of 1 in f16
    let (one, up, up2) = (h(1.0), h(1.0 + u), h(1.0 + 2.0 * u));
    // 1 + 2^-11: midpoint of 1 (even) and 1 + 2^-10 (odd).
    c.modes(None, 1.0 + p2(-11), [one, one, up, one, up]);
    // 1 + 3*2^-11: midpoint of 1 + 2^-10 (odd) and 1 + 2^-9 (even).
    c.modes(None, 1.0 + 3.0 * p2(-11), [up2, up, up2, up, up2]);
    // -2049 (ulp(2048) = 2): midpoint of -2048 (even) and -2050 (odd).
    let (a, b) = (h(-2048.0), h(-2050.0));
    c.modes(None, -2049.0, [a, a, a, b, b]);
    // Double rounding: 1 + 2^-11 + 2^-40 is just above the midpoint, so the
    // nearest f16 is 1 + 2^-10. Through f32 it would first round to the
    // midpoint itself (2^-40 < half an f32 ulp, 2^-24) and then tie to 1.
    c.modes(None, 1.0 + p2(-11) + p2(-40), [up, one, up, one, up]);
    // Just below the midpoint: nearest is 1 in both nearest modes.
    c.modes(None, 1.0 + p2(-11) - p2(-40), [one, one, up, one, one]);
    // The same tie from f32.
    let c32 = cast::<f32, f16>(T::Float32, T::Float16);
    c32.modes(None, 1.0 + p2f(-11), [one, one, up, one, up]);
}

#[test]
fn bfloat16_ties_and_double_rounding() {
    let b = |x: f32| ok(bf16::from_f32(x)); // exact for the bf16 values used here
    let u = p2f(-7); // ulp of 1 in bf16 (8 significant bits)
    let (one, up) = (b(1.0), b(1.0 + u));
    // f32 1 + 2^-8: midpoint of 1 (even) and 1 + 2^-7 (odd).
    let c32 = cast::<f32, bf16>(T::Float32, T::BFloat16);
    c32.modes(None, 1.0 + p2f(-8), [one, one, up, one, up]);
    // f64 1 + 2^-8 + 2^-30: just above the midpoint, so nearest is 1 + 2^-7.
    // Via f32 the 2^-30 is lost (half an f32 ulp is 2^-24) and the tie
    // would go to 1.
    let c64 = cast::<f64, bf16>(T::Float64, T::BFloat16);
    c64.modes(None, 1.0 + p2(-8) + p2(-30), [up, one, up, one, up]);
    // Negative: -(1 + 2^-8 + 2^-30) -> -(1 + 2^-7) nearest; towards-positive -1.
    let (m_one, m_up) = (b(-1.0), b(-1.0 - u));
    c64.modes(
        None,
        -(1.0 + p2(-8) + p2(-30)),
        [m_up, m_one, m_one, m_up, m_up],
    );
    // int32 257 -> bf16 (ulp(256) = 2): midpoint of 256 (even) and 258.
    let (lo, hi) = (b(256.0), b(258.0));
    cast::<i32, bf16>(T::Int32, T::BFloat16).modes(None, 257, [lo, lo, hi, lo, hi]);
    // int64 2^40 + 2^32 + 1 -> bf16: ulp(2^40) = 2^33, midpoint 2^40 + 2^32,
    // so nearest is 2^40 + 2^33 (via f32, whose ulp at 2^40 is 2^17, the +1
    // would be lost and the tie go to 2^40).
    let v: i64 = (1 << 40) + (1 << 32) + 1;
    let (lo, hi) = (b(p2f(40)), b(p2f(40) + p2f(33)));
    cast::<i64, bf16>(T::Int64, T::BFloat16).modes(None, v, [hi, lo, hi, lo, hi]);
}

// ---------------------------------------------------------------------------
// Range boundaries and out_of_range
// ---------------------------------------------------------------------------

#[test]
fn int8_boundaries_from_float() {
    let c = cast::<f64, i8>(T::Float64, T::Int8);
    // Exact bounds: fine in every mode and setting.
    for r in MODES {
        c.oor(r, 127.0, [ok(127); 3]);
        c.oor(r, -128.0, [ok(-128); 3]);
    }
    // Spec example: 128.0 -> int8 fails / clamps to 127 / wraps to -128.
    c.oor(NearestEven, 128.0, [e(), ok(127), ok(-128)]);
    // -129 -> fails / -128 / -129 + 256 = 127.
    c.oor(NearestEven, -129.0, [e(), ok(-128), ok(127)]);
    // 127.4: nearest 127; towards-positive 128 is out of range.
    c.oor(NearestEven, 127.4, [ok(127); 3]);
    c.oor(TowardsPositive, 127.4, [e(), ok(127), ok(-128)]);
    // 127.5 is a tie 127|128: even and away both give 128 -> out of range
    // (rounding happens before out_of_range); towards-zero gives 127.
    c.oor(NearestEven, 127.5, [e(), ok(127), ok(-128)]);
    c.oor(NearestAway, 127.5, [e(), ok(127), ok(-128)]);
    c.oor(TowardsZero, 127.5, [ok(127); 3]);
    // -128.5 is a tie -129|-128: even gives -128 (in range), away -129.
    c.oor(NearestEven, -128.5, [ok(-128); 3]);
    c.oor(NearestAway, -128.5, [e(), ok(-128), ok(127)]);
    c.oor(TowardsNegative, -128.5, [e(), ok(-128), ok(127)]);
    c.oor(TowardsPositive, -128.5, [ok(-128); 3]);
    // Far out of range: clamp saturates; wrap: 1000 = 3 * 256 + 232 ->
    // 232 - 256 = -24; 1e30 in f32 is a multiple of 2^76, so of 256 -> 0.
    let c32 = cast::<f32, i8>(T::Float32, T::Int8);
    c32.oor(NearestEven, 1000.0, [e(), ok(127), ok(-24)]);
    c32.oor(NearestEven, -1e30, [e(), ok(-128), ok(0)]);
}

#[test]
fn int8_boundaries_from_int() {
    let c = cast::<i16, i8>(T::Int16, T::Int8);
    c.oor(NearestEven, 127, [ok(127); 3]);
    c.oor(NearestEven, -128, [ok(-128); 3]);
    c.oor(NearestEven, 128, [e(), ok(127), ok(-128)]);
    c.oor(NearestEven, -129, [e(), ok(-128), ok(127)]);
    // i16::MIN = -32768 = -128 * 256 -> wraps to 0.
    c.oor(NearestEven, i16::MIN, [e(), ok(-128), ok(0)]);
    // 300 -> uint8: 300 - 256 = 44; -1 -> 255.
    let c = cast::<i16, u8>(T::Int16, T::UInt8);
    c.oor(NearestEven, 300, [e(), ok(255), ok(44)]);
    c.oor(NearestEven, -1, [e(), ok(0), ok(255)]);
    // uint8 200 -> int8: 200 - 256 = -56.
    cast::<u8, i8>(T::UInt8, T::Int8).oor(NearestEven, 200, [e(), ok(127), ok(-56)]);
}

#[test]
fn int16_wrap_spec_examples() {
    // Spec: 32768 -> -32768, 32769 -> -32767, -32769 -> 32767 under wrap.
    let c = cast::<i32, i16>(T::Int32, T::Int16);
    c.oor(NearestEven, 32768, [e(), ok(32767), ok(-32768)]);
    c.oor(NearestEven, 32769, [e(), ok(32767), ok(-32767)]);
    c.oor(NearestEven, -32769, [e(), ok(-32768), ok(32767)]);
    // The same values as floats, in every mode (they are integers).
    let c = cast::<f64, i16>(T::Float64, T::Int16);
    for r in MODES {
        c.oor(r, 32768.0, [e(), ok(32767), ok(-32768)]);
        c.oor(r, 32769.0, [e(), ok(32767), ok(-32767)]);
        c.oor(r, -32769.0, [e(), ok(-32768), ok(32767)]);
    }
    // uint16 65535 -> int16: 65535 - 65536 = -1.
    cast::<u16, i16>(T::UInt16, T::Int16).oor(NearestEven, u16::MAX, [e(), ok(32767), ok(-1)]);
}

#[test]
fn wide_integer_boundaries() {
    // uint64::MAX -> int64: 2^64 - 1 = -1 mod 2^64.
    let c = cast::<u64, i64>(T::UInt64, T::Int64);
    c.oor(NearestEven, u64::MAX, [e(), ok(i64::MAX), ok(-1)]);
    cast::<u64, u64>(T::UInt64, T::UInt64).oor(NearestEven, u64::MAX, [ok(u64::MAX); 3]);
    // int64::MIN -> uint64: -2^63 + 2^64 = 2^63.
    let c = cast::<i64, u64>(T::Int64, T::UInt64);
    c.oor(NearestEven, i64::MIN, [e(), ok(0), ok(1 << 63)]);
    c.oor(NearestEven, -1, [e(), ok(0), ok(u64::MAX)]);
    cast::<i64, i64>(T::Int64, T::Int64).oor(NearestEven, i64::MIN, [ok(i64::MIN); 3]);
    // int64::MIN -> int32: -2^63 is a multiple of 2^32 -> 0.
    let c = cast::<i64, i32>(T::Int64, T::Int32);
    c.oor(NearestEven, i64::MIN, [e(), ok(i32::MIN), ok(0)]);
    // uint64::MAX -> uint32 wraps to 2^32 - 1.
    let c = cast::<u64, u32>(T::UInt64, T::UInt32);
    c.oor(NearestEven, u64::MAX, [e(), ok(u32::MAX), ok(u32::MAX)]);
}

#[test]
fn wide_integer_boundaries_from_float() {
    // 2^64 is just past uint64::MAX: clamp to MAX, wrap to 0.
    let c = cast::<f64, u64>(T::Float64, T::UInt64);
    c.oor(NearestEven, p2(64), [e(), ok(u64::MAX), ok(0)]);
    // The largest double below 2^64 is 2^64 - 2^11 (ulp in [2^63, 2^64) is 2^11).
    c.oor(NearestEven, p2(64) - p2(11), [ok(u64::MAX - 2047); 3]);
    // 1e20 = 2^20 * 5^20 is exact (5^20 < 2^53); 1e20 - 5 * 2^64
    // = 100000000000000000000 - 92233720368547758080 = 7766279631452241920.
    c.oor(
        NearestEven,
        1e20,
        [e(), ok(u64::MAX), ok(7_766_279_631_452_241_920)],
    );
    // -2^63 is int64::MIN exactly; 2^63 is one past int64::MAX.
    let c = cast::<f64, i64>(T::Float64, T::Int64);
    c.oor(NearestEven, -p2(63), [ok(i64::MIN); 3]);
    c.oor(NearestEven, p2(63), [e(), ok(i64::MAX), ok(i64::MIN)]);
    // -2^63 - 2^11 (next double below): wraps to 2^63 - 2^11 =
    // 9223372036854775808 - 2048 = 9223372036854773760.
    let x = -p2(63) - p2(11);
    c.oor(
        NearestEven,
        x,
        [e(), ok(i64::MIN), ok(9_223_372_036_854_773_760)],
    );
    c.oor(
        NearestEven,
        1e20,
        [e(), ok(i64::MAX), ok(7_766_279_631_452_241_920)],
    );
    c.oor(
        NearestEven,
        -1e20,
        [e(), ok(i64::MIN), ok(-7_766_279_631_452_241_920)],
    );
    // f32: the largest f32 below 2^31 is 2^31 - 2^7 (ulp in [2^30, 2^31) is 2^7).
    let c = cast::<f32, i32>(T::Float32, T::Int32);
    c.oor(NearestEven, p2f(31) - p2f(7), [ok(2_147_483_520); 3]);
    c.oor(NearestEven, p2f(31), [e(), ok(i32::MAX), ok(i32::MIN)]);
    // 3e9 = 2^9 * 5859375 is exact in f32; 3e9 - 2^32 = -1294967296.
    c.oor(TowardsZero, 3e9, [e(), ok(i32::MAX), ok(-1_294_967_296)]);
    // f32 -> u64 near 2^64: the largest f32 below 2^64 is 2^64 - 2^40.
    let c = cast::<f32, u64>(T::Float32, T::UInt64);
    c.oor(
        NearestEven,
        p2f(64) - p2f(40),
        [ok(u64::MAX - ((1 << 40) - 1)); 3],
    );
    c.oor(NearestEven, p2f(64), [e(), ok(u64::MAX), ok(0)]);
}

#[test]
fn clamp_and_wrap_spec_examples() {
    // NumPy example of the spec: float64 -> uint8, towards-zero, wrap, and a
    // map of NaN and ±Infinity to 0. 300.7 -> 300 -> 300 - 256 = 44;
    // -1.5 -> -1 -> 255; 255.9 -> 255; -0.9 -> -0 -> 0; 512 -> 0.
    let c = cast::<f64, u8>(T::Float64, T::UInt8);
    let map = [(f64::NAN, 0u8), (f64::INFINITY, 0), (f64::NEG_INFINITY, 0)];
    let nan = f64::NAN;
    let src = [
        nan,
        f64::INFINITY,
        f64::NEG_INFINITY,
        300.7,
        -1.5,
        255.9,
        -0.9,
        512.0,
    ];
    let got = c.run(TowardsZero, Some(Wrap), &map, &src);
    assert_eq!(got, Ok(vec![0, 0, 0, 44, 255, 255, 0, 0]));
    // Without the map the NaN fails.
    assert_eq!(
        c.run(TowardsZero, Some(Wrap), &[], &src),
        Err((0, NotFinite))
    );
    // Clamp: 300.7 -> 255, -1.5 -> 0; 255.5 ties to 256 (even) -> 255.
    c.one(TowardsZero, Some(Clamp), 300.7, ok(255));
    c.one(TowardsZero, Some(Clamp), -1.5, ok(0));
    c.one(NearestEven, Some(Clamp), 255.5, ok(255));
}

#[test]
fn sub_byte_targets() {
    // int4: [-8, 7], wrap modulo 16. 8 -> -8; -9 -> 7; 16 -> 0; 23 -> 7.
    let c = cast::<i32, i8>(T::Int32, T::Int4);
    c.oor(NearestEven, 7, [ok(7); 3]);
    c.oor(NearestEven, -8, [ok(-8); 3]);
    c.oor(NearestEven, 8, [e(), ok(7), ok(-8)]);
    c.oor(NearestEven, -9, [e(), ok(-8), ok(7)]);
    c.oor(NearestEven, 16, [e(), ok(7), ok(0)]);
    c.oor(NearestEven, 23, [e(), ok(7), ok(7)]);
    c.oor(NearestEven, i32::MIN, [e(), ok(-8), ok(0)]); // -2^31 = 0 mod 16
    // Float -> int4: 7.5 ties to 8 (even) -> out of range; -8.5 ties to -8.
    let c = cast::<f64, i8>(T::Float64, T::Int4);
    c.oor(NearestEven, 7.4, [ok(7); 3]);
    c.oor(NearestEven, 7.5, [e(), ok(7), ok(-8)]);
    c.oor(TowardsZero, 7.5, [ok(7); 3]);
    c.oor(NearestEven, -8.5, [ok(-8); 3]);
    c.oor(NearestAway, -8.5, [e(), ok(-8), ok(7)]); // -9 + 16 = 7
    // int2: [-2, 1]: 2 -> -2, -3 -> 1 under wrap.
    let c = cast::<i8, i8>(T::Int8, T::Int2);
    c.oor(NearestEven, 1, [ok(1); 3]);
    c.oor(NearestEven, 2, [e(), ok(1), ok(-2)]);
    c.oor(NearestEven, -3, [e(), ok(-2), ok(1)]);
    // uint2: [0, 3]: 4 -> 0, 5 -> 1, -1 -> 3 under wrap.
    let c = cast::<i8, u8>(T::Int8, T::UInt2);
    c.oor(NearestEven, 3, [ok(3); 3]);
    c.oor(NearestEven, 4, [e(), ok(3), ok(0)]);
    c.oor(NearestEven, 5, [e(), ok(3), ok(1)]);
    c.oor(NearestEven, -1, [e(), ok(0), ok(3)]);
    cast::<u8, u8>(T::UInt8, T::UInt2).oor(NearestEven, 255, [e(), ok(3), ok(3)]);
    // uint4: 16 -> 15 / 0.
    cast::<u8, u8>(T::UInt8, T::UInt4).oor(NearestEven, 16, [e(), ok(15), ok(0)]);
    // f32 -> uint2: 2.5 ties to 2; 3.5 ties to 4 -> out; -0.5 -> -0 -> 0;
    // -0.7 -> -1 -> out (wraps to 3).
    let c = cast::<f32, u8>(T::Float32, T::UInt2);
    c.oor(NearestEven, 2.5, [ok(2); 3]);
    c.oor(NearestEven, 3.5, [e(), ok(3), ok(0)]);
    c.oor(TowardsZero, 3.5, [ok(3); 3]);
    c.oor(NearestEven, -0.5, [ok(0); 3]);
    c.oor(NearestEven, -0.7, [e(), ok(0), ok(3)]);
}

// ---------------------------------------------------------------------------
// int -> float rounding
// ---------------------------------------------------------------------------

#[test]
fn int64_to_float64_two_pow_53() {
    let c = cast::<i64, f64>(T::Int64, T::Float64);
    let t = 9_007_199_254_740_992i64; // 2^53
    #[allow(clippy::cast_precision_loss)]
    let f = |v: i64| ok(v as f64); // exact: only used on even values below 2^54
    // 2^53 + 1: midpoint of 2^53 (even) and 2^53 + 2 (odd significand).
    let (lo, hi) = (f(t), f(t + 2));
    c.modes(None, t + 1, [lo, lo, hi, lo, hi]);
    // -(2^53 + 1)
    let (lo, hi) = (f(-t - 2), f(-t));
    c.modes(None, -(t + 1), [hi, hi, hi, lo, lo]);
    // 2^53 + 3: midpoint of 2^53 + 2 (odd) and 2^53 + 4 (even).
    let (lo, hi) = (f(t + 2), f(t + 4));
    c.modes(None, t + 3, [hi, lo, hi, lo, hi]);
    // 2^53 - 1 and 2^53 are exact.
    c.modes(None, t, [f(t); 5]);
    c.modes(None, t - 1, [ok(p2(53) - 1.0); 5]);
    // int64::MIN = -2^63 is exact; int64::MAX = 2^63 - 1 rounds to 2^63 or
    // (towards zero / negative) to 2^63 - 2^10 (ulp in [2^62, 2^63) is 2^10).
    c.modes(None, i64::MIN, [ok(-p2(63)); 5]);
    let (lo, hi) = (ok(p2(63) - p2(10)), ok(p2(63)));
    c.modes(None, i64::MAX, [hi, lo, hi, lo, hi]);
}

#[test]
fn int_to_float32_near_two_pow_24() {
    let t = 16_777_216i64; // 2^24, where the f32 ulp becomes 2
    #[allow(clippy::cast_precision_loss)]
    let f = |v: i64| ok(v as f32); // exact for the even values used
    // 2^24 + 1: midpoint of 2^24 (even) and 2^24 + 2 (odd).
    let (lo, hi) = (f(t), f(t + 2));
    cast::<i64, f32>(T::Int64, T::Float32).modes(None, t + 1, [lo, lo, hi, lo, hi]);
    // -(2^24 + 1) from int32.
    let (lo, hi) = (f(-t - 2), f(-t));
    cast::<i32, f32>(T::Int32, T::Float32).modes(None, -16_777_217, [hi, hi, hi, lo, lo]);
    // 2^24 + 3 from uint32: midpoint of 2^24 + 2 (odd) and 2^24 + 4 (even).
    let (lo, hi) = (f(t + 2), f(t + 4));
    cast::<u32, f32>(T::UInt32, T::Float32).modes(None, 16_777_219, [hi, lo, hi, lo, hi]);
    // Double rounding: 2^54 + 2^30 + 1. ulp_f32(2^54) = 2^31, so the midpoint
    // is 2^54 + 2^30 and the value lies just above it: nearest is 2^54 + 2^31.
    // Via f64 (ulp 4 there) the +1 would be lost and the tie go to 2^54.
    let v: i64 = (1 << 54) + (1 << 30) + 1;
    let (lo, hi) = (ok(p2f(54)), ok(p2f(54) + p2f(31)));
    cast::<i64, f32>(T::Int64, T::Float32).modes(None, v, [hi, lo, hi, lo, hi]);
}

#[test]
fn uint64_max_to_float() {
    // 2^64 - 1: f64 neighbours 2^64 - 2^11 and 2^64 (distances 2047 and 1).
    let (lo, hi) = (ok(p2(64) - p2(11)), ok(p2(64)));
    cast::<u64, f64>(T::UInt64, T::Float64).modes(None, u64::MAX, [hi, lo, hi, lo, hi]);
    // f32 neighbours 2^64 - 2^40 and 2^64.
    let c = cast::<u64, f32>(T::UInt64, T::Float32);
    let (lo, hi) = (ok(p2f(64) - p2f(40)), ok(p2f(64)));
    c.modes(None, u64::MAX, [hi, lo, hi, lo, hi]);
    // 2^63 + 2^39: midpoint of 2^63 (even) and 2^63 + 2^40 in f32.
    let (lo, hi) = (ok(p2f(63)), ok(p2f(63) + p2f(40)));
    c.modes(None, (1 << 63) + (1 << 39), [lo, lo, hi, lo, hi]);
}

#[test]
fn int_to_float16_rounding_and_overflow() {
    let h = |x: f32| ok(f16::from_f32(x));
    let (max, m_max) = (ok(f16::MAX), ok(-f16::MAX)); // ±65504
    let (inf, m_inf) = (ok(f16::INFINITY), ok(f16::NEG_INFINITY));
    let c = cast::<i64, f16>(T::Int64, T::Float16);
    // Exact.
    c.modes(None, 65504, [max; 5]);
    c.modes(None, -65504, [m_max; 5]);
    // 2049 (ulp(2048) = 2): midpoint of 2048 (even) and 2050 (odd).
    let c16 = cast::<i16, f16>(T::Int16, T::Float16);
    let (a, b, d) = (h(2048.0), h(2050.0), h(2052.0));
    c16.modes(None, 2049, [a, a, b, a, b]);
    // 2051: midpoint of 2050 (odd) and 2052 (even).
    c16.modes(None, 2051, [d, b, d, b, d]);
    // 65519: below the midpoint 65520 of 65504 and 65536 (2^16, which is
    // past the finite range): nearest is 65504; towards-positive rounds to
    // 65536 -> out of range.
    c.modes(None, 65519, [max, max, e(), max, max]);
    // 65520 is the midpoint: 65504 = 0x7bff has an odd significand, so ties
    // to even go to 65536 -> overflow; away also overflows; towards zero and
    // negative stay at 65504. Clamp maps overflow to ±infinity.
    c.modes(None, 65520, [e(), max, e(), max, e()]);
    c.modes(Some(Clamp), 65520, [inf, max, inf, max, inf]);
    let c32 = cast::<i32, f16>(T::Int32, T::Float16);
    c32.modes(Some(Clamp), -65520, [m_inf, m_max, m_max, m_inf, m_inf]);
    // 65535 towards zero: 65504 (below 2^16 = 65504 + ulp); 65536 itself is
    // past the finite range in every mode.
    cast::<u16, f16>(T::UInt16, T::Float16).one(TowardsZero, None, 65535, max);
    c32.modes(None, 65536, [e(); 5]);
    c32.modes(Some(Clamp), 65536, [inf; 5]);
    cast::<u64, f16>(T::UInt64, T::Float16).modes(None, u64::MAX, [e(); 5]);
}

// ---------------------------------------------------------------------------
// Signed zero, NaN, infinity
// ---------------------------------------------------------------------------

#[test]
fn negative_zero() {
    for r in MODES {
        for o in [None, Some(Clamp)] {
            cast::<f64, f32>(T::Float64, T::Float32).one(r, o, -0.0, ok(-0.0));
            cast::<f32, f64>(T::Float32, T::Float64).one(r, o, -0.0, ok(-0.0));
            cast::<f64, f16>(T::Float64, T::Float16).one(r, o, -0.0, ok(f16::NEG_ZERO));
            cast::<f32, bf16>(T::Float32, T::BFloat16).one(r, o, -0.0, ok(bf16::NEG_ZERO));
            cast::<f16, f64>(T::Float16, T::Float64).one(r, o, f16::NEG_ZERO, ok(-0.0));
            cast::<f64, f64>(T::Float64, T::Float64).one(r, o, -0.0, ok(-0.0));
        }
        // float -> int: -0.0 is 0 (and in range even for unsigned types).
        cast::<f64, i32>(T::Float64, T::Int32).oor(r, -0.0, [ok(0); 3]);
        cast::<f64, u8>(T::Float64, T::UInt8).oor(r, -0.0, [ok(0); 3]);
        cast::<f16, u64>(T::Float16, T::UInt64).oor(r, f16::NEG_ZERO, [ok(0); 3]);
    }
    // -0.4 rounds to -0 (nearest, towards zero / positive): 0, not an error.
    cast::<f64, u8>(T::Float64, T::UInt8).modes(None, -0.4, [ok(0), ok(0), ok(0), e(), ok(0)]);
    // A negative value too small for f32 rounds to -0.0 (sign kept), or to
    // -2^-149 towards negative.
    let (z, tiny) = (ok(-0.0), ok(-f32::from_bits(1)));
    cast::<f64, f32>(T::Float64, T::Float32).modes(None, -1e-300, [z, z, z, tiny, z]);
}

#[test]
fn nan_propagates_between_floats() {
    let nans64 = [
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7ff0_0000_0000_0001), // signalling
        f64::from_bits(0xfff8_0000_dead_beef), // negative, with a payload
        // All ones: narrowed to f32 it is 0xffff_ffff, whose bits a step
        // towards -infinity would overflow (found by the decode fuzz
        // target: nearest-away stepped from a NaN).
        f64::from_bits(u64::MAX),
        f64::from_bits(0x7fff_ffff_ffff_ffff),
    ];
    for r in MODES {
        for o in [None, Some(Clamp)] {
            for x in nans64 {
                cast::<f64, f32>(T::Float64, T::Float32).nan(r, o, x);
                cast::<f64, f16>(T::Float64, T::Float16).nan(r, o, x);
                cast::<f64, bf16>(T::Float64, T::BFloat16).nan(r, o, x);
                cast::<f64, f64>(T::Float64, T::Float64).nan(r, o, x);
            }
            cast::<f32, f64>(T::Float32, T::Float64).nan(r, o, f32::NAN);
            cast::<f32, f16>(T::Float32, T::Float16).nan(r, o, f32::from_bits(0xff80_0001));
            cast::<f32, f16>(T::Float32, T::Float16).nan(r, o, f32::from_bits(u32::MAX));
            cast::<f32, bf16>(T::Float32, T::BFloat16).nan(r, o, f32::from_bits(u32::MAX));
            cast::<f16, f32>(T::Float16, T::Float32).nan(r, o, f16::NAN);
            cast::<bf16, f16>(T::BFloat16, T::Float16).nan(r, o, bf16::NAN);
        }
    }
}

#[test]
fn nan_and_infinity_into_int_fail() {
    fn nf<D>() -> Outcome<D> {
        Err(NotFinite)
    }
    for r in MODES {
        // Neither clamp nor wrap applies to NaN or ±Infinity.
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            cast::<f64, i32>(T::Float64, T::Int32).oor(r, x, [nf(); 3]);
            cast::<f64, u8>(T::Float64, T::UInt8).oor(r, x, [nf(); 3]);
            cast::<f64, i8>(T::Float64, T::Int4).oor(r, x, [nf(); 3]);
        }
        cast::<f32, u64>(T::Float32, T::UInt64).oor(r, f32::INFINITY, [nf(); 3]);
        cast::<f16, i16>(T::Float16, T::Int16).oor(r, f16::NEG_INFINITY, [nf(); 3]);
        cast::<bf16, i64>(T::BFloat16, T::Int64).oor(r, bf16::NAN, [nf(); 3]);
    }
}

/// `CastPlan::new` refuses entries that are not one element of their type,
/// and values outside a sub-byte target's range (int4 holds -8..=7, uint2
/// 0..=3) although the storage type could hold them. Edge values of that
/// range are accepted and mapped, also through the AVX2 loop (40 elements).
#[test]
fn cast_plan_refuses_bad_scalar_map_entries() {
    use super::{CastPlanError, ScalarMapBytes};
    let plan =
        |t, entries: ScalarMapBytes| CastPlan::new(T::Float64, t, NearestEven, None, entries);
    let nan = f64::NAN.to_ne_bytes().to_vec();
    assert_eq!(
        plan(T::Int4, vec![(nan.clone(), vec![8])]).unwrap_err(),
        CastPlanError::ValueOutOfRange {
            index: 0,
            value: Value::Int(8),
            data_type: T::Int4
        }
    );
    assert!(matches!(
        plan(
            T::UInt2,
            vec![(nan.clone(), vec![0]), (nan.clone(), vec![4])]
        ),
        Err(CastPlanError::ValueOutOfRange { index: 1, .. })
    ));
    assert!(matches!(
        plan(T::Int16, vec![(nan.clone(), vec![1])]),
        Err(CastPlanError::EntryLength {
            index: 0,
            side: "value",
            len: 1,
            ..
        })
    ));
    assert!(matches!(
        plan(T::Int8, vec![(vec![0; 4], vec![1])]),
        Err(CastPlanError::EntryLength {
            side: "key",
            len: 4,
            ..
        })
    ));

    let c = cast::<f64, i8>(T::Float64, T::Int4);
    let mut src = vec![1.0; 40];
    src[33] = f64::NAN;
    for v in [-8, 7] {
        assert_eq!(
            c.run(NearestEven, None, &[(f64::NAN, v)], &src).unwrap()[33],
            v
        );
    }
}

#[test]
fn scalar_map_rules() {
    let nan = f64::NAN;
    let nan_a = f64::from_bits(0x7ff8_0000_0000_0001); // quiet NaN with a payload
    let nan_b = f64::from_bits(0xfff0_0000_0000_0001); // negative signalling NaN
    let c = cast::<f64, i32>(T::Float64, T::Int32);
    // NaN -> 0 works, and a NaN key matches NaNs with other payloads.
    let got = c.run(NearestEven, None, &[(nan_a, 0)], &[nan, nan_b, -nan, 1.5]);
    assert_eq!(got, Ok(vec![0, 0, 0, 2]));
    // First occurrence wins for a repeated key (short map and long map).
    assert_eq!(
        c.run(NearestEven, None, &[(nan, 1), (nan_b, 2)], &[nan]),
        Ok(vec![1])
    );
    let long = [(2.5, 7), (nan, 1), (9.0, 3), (nan, 2), (2.5, 9), (-1.0, 4)];
    let got = c.run(NearestEven, None, &long, &[nan_a, 2.5, 9.0, -1.0, 3.5]);
    assert_eq!(got, Ok(vec![1, 7, 3, 4, 4]));
    let short = [(2.5, 7), (2.5, 9), (nan, 5)];
    assert_eq!(
        c.run(NearestEven, None, &short, &[2.5, nan]),
        Ok(vec![7, 5])
    );
    // Keys compare numerically: 0.0 matches -0.0 (and the first entry of the
    // two equal keys wins).
    let got = c.run(NearestEven, None, &[(0.0, 5), (-0.0, 6)], &[-0.0, 0.0]);
    assert_eq!(got, Ok(vec![5, 5]));
    // The map is evaluated before everything else: it overrides an exact
    // value, an out-of-range value (no out_of_range set) and ±Infinity.
    let c = cast::<f64, u8>(T::Float64, T::UInt8);
    let map = [(3.0, 9), (300.0, 7), (f64::INFINITY, 1)];
    let got = c.run(NearestEven, None, &map, &[3.0, 300.0, f64::INFINITY, 4.0]);
    assert_eq!(got, Ok(vec![9, 7, 1, 4]));
    // 301 - 256 = 45.
    assert_eq!(
        c.run(NearestEven, Some(Wrap), &map, &[300.0, 301.0]),
        Ok(vec![7, 45])
    );
    // int -> int and int -> float maps.
    let c = cast::<i32, i8>(T::Int32, T::Int8);
    assert_eq!(
        c.run(NearestEven, None, &[(1000, 5), (1000, 6)], &[1000, 100]),
        Ok(vec![5, 100])
    );
    let c = cast::<i64, f16>(T::Int64, T::Float16);
    let got = c.run(NearestEven, None, &[(70000, f16::MAX)], &[70000, 1]);
    assert_eq!(got, Ok(vec![f16::MAX, f16::ONE]));
    // float -> float: NaN mapped to 0.0 instead of propagating, and a value
    // that would overflow mapped to a finite one.
    let c = cast::<f64, f32>(T::Float64, T::Float32);
    let got = c.run(
        NearestEven,
        None,
        &[(nan, 0.0), (1e300, -1.0)],
        &[nan_b, 1e300, 2.0],
    );
    let bits = got.map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    assert_eq!(bits, Ok(vec![0, (-1.0f32).to_bits(), 2f32.to_bits()]));
    // Float16 source keys (0xfe01 is a negative NaN with a payload).
    let c = cast::<f16, u8>(T::Float16, T::UInt8);
    let got = c.run(
        NearestEven,
        None,
        &[(f16::NAN, 3)],
        &[f16::from_bits(0xfe01), f16::ONE],
    );
    assert_eq!(got, Ok(vec![3, 1]));
}

#[test]
fn infinity_between_floats() {
    let (inf64, m_inf64) = (f64::INFINITY, f64::NEG_INFINITY);
    for r in MODES {
        for o in [None, Some(Clamp)] {
            let c = cast::<f64, f32>(T::Float64, T::Float32);
            c.one(r, o, inf64, ok(f32::INFINITY));
            c.one(r, o, m_inf64, ok(f32::NEG_INFINITY));
            cast::<f64, f16>(T::Float64, T::Float16).one(r, o, inf64, ok(f16::INFINITY));
            let c = cast::<f32, bf16>(T::Float32, T::BFloat16);
            c.one(r, o, f32::NEG_INFINITY, ok(bf16::NEG_INFINITY));
            cast::<f16, f64>(T::Float16, T::Float64).one(r, o, f16::NEG_INFINITY, ok(m_inf64));
        }
    }
}

#[test]
fn finite_overflow_into_float16() {
    let c = cast::<f64, f16>(T::Float64, T::Float16);
    let (max, inf, m_inf) = (ok(f16::MAX), ok(f16::INFINITY), ok(f16::NEG_INFINITY));
    // 1e5 is beyond 65520 in every mode (and beyond 2^16 towards zero).
    c.modes(None, 1e5, [e(); 5]);
    c.modes(Some(Clamp), 1e5, [inf; 5]);
    c.modes(Some(Clamp), -1e5, [m_inf; 5]);
    // 65519.5: below the midpoint 65520 -> 65504, except towards positive
    // (65536, out of range).
    c.modes(None, 65519.5, [max, max, e(), max, max]);
    // 65520 (tie, odd 65504 vs even 2^16) overflows to nearest.
    c.modes(None, 65520.0, [e(), max, e(), max, e()]);
    let c32 = cast::<f32, f16>(T::Float32, T::Float16);
    c32.modes(Some(Clamp), 65520.0, [inf, max, inf, max, inf]);
    // Towards zero just above MAX stays 65504 up to 2^16 (exclusive).
    c.one(TowardsZero, None, 65535.99, max);
    c.one(TowardsZero, None, 65536.0, e());
    c.one(TowardsZero, Some(Clamp), 65536.0, inf);
    c.one(TowardsNegative, None, -65535.0, e()); // -> -2^16
    c.one(TowardsPositive, None, -65535.0, ok(-f16::MAX));
    // Rounding comes first, with an unbounded exponent: f64::MAX rounded
    // towards negative is still about 1.8e308, out of range (not 65504).
    c.one(TowardsNegative, None, f64::MAX, e());
    c.one(TowardsZero, None, f64::MAX, e());
    c.one(TowardsNegative, Some(Clamp), f64::MAX, inf);
    // f64 -> f32 overflow: f32::MAX = (2 - 2^-23) 2^127, ulp 2^104; f32::MAX +
    // 2^102 is below the midpoint (f32::MAX + 2^103), which is a tie between
    // the odd f32::MAX and the even 2^128.
    let c = cast::<f64, f32>(T::Float64, T::Float32);
    let (m, max) = (f64::from(f32::MAX), ok(f32::MAX));
    c.modes(None, m + p2(102), [max, max, e(), max, max]);
    c.modes(None, m + p2(103), [e(), max, e(), max, e()]);
    c.modes(Some(Clamp), -1e39, [ok(f32::NEG_INFINITY); 5]);
    c.modes(None, -1e39, [e(); 5]); // |x| >= 2^128 in every mode
    // bf16 shares f32's range: bf16::MAX = 2^128 - 2^120; f32::MAX =
    // 2^128 - 2^104 is above the midpoint 2^128 - 2^119, so it rounds to
    // 2^128 (overflow) to nearest and to bf16::MAX towards zero.
    let c = cast::<f32, bf16>(T::Float32, T::BFloat16);
    let bmax = ok(bf16::MAX);
    c.modes(None, f32::MAX, [e(), bmax, e(), bmax, e()]);
}

// ---------------------------------------------------------------------------
// Subnormals
// ---------------------------------------------------------------------------

#[test]
fn float64_to_float32_subnormals() {
    let c = cast::<f64, f32>(T::Float64, T::Float32);
    let (z, mz) = (ok(0.0), ok(-0.0));
    let (s, ms, s2) = (ok(p2f(-149)), ok(-p2f(-149)), ok(p2f(-148)));
    c.modes(None, p2(-149), [s; 5]);
    // 2^-150 is the midpoint of 0 (even) and 2^-149 (odd).
    c.modes(None, p2(-150), [z, z, s, z, s]);
    c.modes(None, -p2(-150), [mz, mz, mz, ms, ms]);
    // 3 * 2^-150: midpoint of 2^-149 (odd) and 2^-148 (even).
    c.modes(None, 3.0 * p2(-150), [s2, s, s2, s, s2]);
    // 2^-151: a quarter of the smallest subnormal.
    c.modes(None, p2(-151), [z, z, s, z, z]);
    // The smallest f64 subnormal.
    c.modes(None, p2(-1074), [z, z, s, z, z]);
    // The largest f32 subnormal (2^-126 - 2^-149) and the smallest normal.
    c.modes(
        None,
        p2(-126) - p2(-149),
        [ok(f32::from_bits(0x007f_ffff)); 5],
    );
    c.modes(None, p2(-126), [ok(f32::MIN_POSITIVE); 5]);
    // f32 subnormals widen exactly.
    cast::<f32, f64>(T::Float32, T::Float64).modes(None, p2f(-149), [ok(p2(-149)); 5]);
}

#[test]
fn float32_to_float16_subnormals() {
    let c = cast::<f32, f16>(T::Float32, T::Float16);
    let b = |bits: u16| ok(f16::from_bits(bits));
    // f16: smallest subnormal 2^-24 (0x0001), largest 2^-14 - 2^-24 (0x03ff).
    c.modes(None, p2f(-24), [b(1); 5]);
    c.modes(None, p2f(-14) - p2f(-24), [b(0x03ff); 5]);
    // 2^-25: midpoint of 0 and 2^-24.
    c.modes(None, p2f(-25), [b(0), b(0), b(1), b(0), b(1)]);
    let (mz, m1) = (b(0x8000), b(0x8001));
    c.modes(None, -p2f(-25), [mz, mz, mz, m1, m1]);
    // 3 * 2^-25: midpoint of 0x0001 (odd) and 0x0002 (even).
    c.modes(None, 3.0 * p2f(-25), [b(2), b(1), b(2), b(1), b(2)]);
    // 1e-10 is far below 2^-25 (about 3e-8).
    c.modes(None, 1e-10, [b(0), b(0), b(1), b(0), b(0)]);
    // 2^-14 - 2^-25: midpoint of 0x03ff (odd) and the smallest normal 0x0400.
    let (lo, hi) = (b(0x03ff), b(0x0400));
    c.modes(None, p2f(-14) - p2f(-25), [hi, lo, hi, lo, hi]);
}

#[test]
fn float_to_bfloat16_subnormals() {
    let c = cast::<f32, bf16>(T::Float32, T::BFloat16);
    let b = |bits: u16| ok(bf16::from_bits(bits));
    // bf16: 7 fraction bits, smallest subnormal 2^-133 (0x0001).
    c.modes(None, p2f(-133), [b(1); 5]);
    // 2^-134: midpoint of 0 and 2^-133.
    c.modes(None, p2f(-134), [b(0), b(0), b(1), b(0), b(1)]);
    // 3 * 2^-134: midpoint of 0x0001 (odd) and 0x0002 (even).
    c.modes(None, 3.0 * p2f(-134), [b(2), b(1), b(2), b(1), b(2)]);
    // The smallest f32 subnormal, 2^-149.
    c.modes(None, p2f(-149), [b(0), b(0), b(1), b(0), b(0)]);
    // f64 2^-134 + 2^-160: just above the midpoint -> 0x0001 to nearest
    // (an f32 intermediate cannot hold 2^-160, which is below 2^-149).
    let c = cast::<f64, bf16>(T::Float64, T::BFloat16);
    c.modes(None, p2(-134) + p2(-160), [b(1), b(0), b(1), b(0), b(1)]);
}

// ---------------------------------------------------------------------------
// Whole buffers: error index, alignment
// ---------------------------------------------------------------------------

#[test]
fn error_index_is_first_failure() {
    let nan = f64::NAN;
    let c = cast::<f64, u8>(T::Float64, T::UInt8);
    let src = [1.0, 2.0, nan, 300.0, f64::INFINITY];
    let err = c
        .plan(NearestEven, None, &[])
        .cast_to_vec(bytemuck::cast_slice(&src))
        .unwrap_err();
    assert_eq!((err.index, err.failure), (2, NotFinite));
    assert!(matches!(err.value, Value::Float(v) if v.is_nan()));
    let src = [1.0, 300.0, nan];
    let err = c
        .plan(NearestEven, None, &[])
        .cast_to_vec(bytemuck::cast_slice(&src))
        .unwrap_err();
    assert_eq!(
        (err.index, err.failure, err.value),
        (1, OutOfRange, Value::Float(300.0))
    );
    // A mapped NaN is skipped; the first unmapped failure is reported (short
    // and long maps).
    let src = [nan, 1.0, 300.0, nan];
    let long = [(nan, 0), (1.0, 1), (2.0, 2), (3.0, 3), (4.0, 4)];
    for map in [&[(nan, 0)][..], &long[..]] {
        assert_eq!(c.run(NearestEven, None, map, &src), Err((2, OutOfRange)));
    }
    // Clamp: only the infinity fails; wrap: the same.
    let src = [1.0, 300.0, -5.0, f64::NEG_INFINITY, nan];
    for o in [Some(Clamp), Some(Wrap)] {
        assert_eq!(c.run(NearestEven, o, &[], &src), Err((3, NotFinite)));
    }
    // Deep inside a long buffer, with later failures too.
    let mut long = vec![1.5f64; 5000];
    long[3001] = 256.0;
    long[4000] = nan;
    assert_eq!(
        c.run(NearestEven, None, &[], &long),
        Err((3001, OutOfRange))
    );
    // int -> int, int -> float16 and float -> float.
    let c = cast::<i32, i8>(T::Int32, T::Int8);
    let src = [0i32, 127, -128, 128, -129];
    let err = c
        .plan(NearestEven, None, &[])
        .cast_to_vec(bytemuck::cast_slice(&src))
        .unwrap_err();
    assert_eq!(
        (err.index, err.failure, err.value),
        (3, OutOfRange, Value::Int(128))
    );
    let c = cast::<i32, f16>(T::Int32, T::Float16);
    assert_eq!(
        c.run(NearestEven, None, &[], &[1, 65504, -70000, 70000]),
        Err((2, OutOfRange))
    );
    let c = cast::<f64, f32>(T::Float64, T::Float32);
    let src = [nan, f64::INFINITY, 1e300, 1e301];
    assert_eq!(c.run(NearestEven, None, &[], &src), Err((2, OutOfRange)));
}

#[test]
fn misaligned_buffers_give_the_same_result() {
    // Inputs with ties, edges and special values for a few typed paths.
    let f64s: Vec<f64> = (-128..=128)
        .map(|i| f64::from(i) * 0.5 + if i % 7 == 0 { 1e-9 } else { 0.0 })
        .collect();
    let i64s: Vec<i64> = (-128..=128).map(|i| (1i64 << 53) + i).collect();
    let cases: [(NumericType, NumericType, &[u8]); 6] = [
        (T::Float64, T::Int16, bytemuck::cast_slice(&f64s)),
        (T::Float64, T::UInt8, bytemuck::cast_slice(&f64s)),
        (T::Float64, T::Float16, bytemuck::cast_slice(&f64s)),
        (T::Int64, T::Float64, bytemuck::cast_slice(&i64s)),
        (T::Int64, T::Int32, bytemuck::cast_slice(&i64s)),
        (T::Int64, T::Float32, bytemuck::cast_slice(&i64s)),
    ];
    for (s, t, src) in cases {
        let n = src.len() / s.size();
        // The same bytes, one byte into a buffer (so misaligned).
        let mut src_buf = vec![0u8; src.len() + 1];
        src_buf[1..].copy_from_slice(src);
        let oors: &[Option<OutOfRangeMode>] = if t.is_float() {
            &[None, Some(Clamp)]
        } else {
            &OOR
        };
        for r in MODES {
            for &o in oors {
                let p = CastPlan::new(s, t, r, o, vec![]).unwrap();
                let mut aligned = vec![0u8; n * t.size()];
                let want = p.cast_bytes(src, &mut aligned);
                let mut dst_buf = vec![0u8; n * t.size() + 1];
                let mut dst = vec![0u8; n * t.size()];
                // Misaligned source and destination, source only, destination only.
                assert_eq!(p.cast_bytes(&src_buf[1..], &mut dst_buf[1..]), want);
                assert_eq!(p.cast_bytes(&src_buf[1..], &mut dst), want);
                if want.is_ok() {
                    assert_eq!(&dst_buf[1..], &aligned[..], "{s} -> {t} {r:?} {o:?}");
                    assert_eq!(dst, aligned, "{s} -> {t} {r:?} {o:?}");
                }
                dst_buf.fill(0);
                assert_eq!(p.cast_bytes(src, &mut dst_buf[1..]), want);
                if want.is_ok() {
                    assert_eq!(&dst_buf[1..], &aligned[..], "{s} -> {t} {r:?} {o:?}");
                }
            }
        }
    }
    // Values checked by hand through the misaligned path: f64 2.5 -> int16
    // ties to 2, 3.5 -> 4, -2.5 -> -2.
    let src = [2.5f64, 3.5, -2.5];
    let mut buf = [0u8; 25];
    buf[1..].copy_from_slice(bytemuck::cast_slice(&src));
    let p = CastPlan::new(T::Float64, T::Int16, NearestEven, None, vec![]).unwrap();
    let out = p.cast_to_vec(&buf[1..]).unwrap();
    assert_eq!(
        bytemuck::pod_collect_to_vec::<u8, i16>(&out),
        vec![2, 4, -2]
    );
}

#[test]
fn partial_trailing_elements_are_ignored() {
    // The output is not zeroed before the cast, so bytes beyond the last
    // whole element must be neither read as output nor overwritten.
    let src = [2.5f64, -3.5, 300.0];
    let mut src_bytes: Vec<u8> = bytemuck::cast_slice(&src).to_vec();
    src_bytes.push(0xEE); // a partial fourth element
    let p = CastPlan::new(T::Float64, T::Int16, NearestEven, None, vec![]).unwrap();
    let out = p.cast_to_vec(&src_bytes).unwrap();
    // 2.5 ties to 2, -3.5 to -4; 300 is in range.
    assert_eq!(
        bytemuck::pod_collect_to_vec::<u8, i16>(&out),
        vec![2, -4, 300]
    );
    // One spare byte after the output, aligned for int16 (`u16` storage)
    // and then misaligned.
    for start in [0, 1] {
        let mut storage = [0xA5A5u16; 5];
        let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut storage);
        let dst = &mut buf[start..start + 3 * 2 + 1];
        p.cast_bytes(&src_bytes, dst).unwrap();
        assert_eq!(&dst[..6], &out[..]);
        assert_eq!(dst[6], 0xA5, "start {start}");
    }
}

#[test]
fn failed_casts_into_fresh_buffers_return_the_error() {
    // A wrap to int8 runs the early-returning loop: NaN (no residue) at
    // index 2 stops it with the rest of the output unwritten. A plain
    // out-of-range value runs the branch-free loop and fails after it.
    let src = [1.0f64, 2.0, f64::NAN, 4.0];
    let wrap = CastPlan::new(T::Float64, T::Int8, NearestEven, Some(Wrap), vec![]).unwrap();
    let error = wrap.cast_to_vec(bytemuck::cast_slice(&src)).unwrap_err();
    assert_eq!((error.index, error.failure), (2, NotFinite));
    let src = [1.0f64, 2.0, 3.0, 400.0];
    let plain = CastPlan::new(T::Float64, T::Int8, NearestEven, None, vec![]).unwrap();
    let error = plain.cast_to_vec(bytemuck::cast_slice(&src)).unwrap_err();
    assert_eq!((error.index, error.failure), (3, OutOfRange));
    // The same through a misaligned destination (the path via a temporary).
    let plain16 = CastPlan::new(T::Float64, T::Int16, NearestEven, None, vec![]).unwrap();
    let src = [1.0f64, 70000.0];
    let mut buf = [0u8; 5];
    let error = plain16
        .cast_bytes(bytemuck::cast_slice(&src), &mut buf[1..])
        .unwrap_err();
    assert_eq!((error.index, error.failure), (1, OutOfRange));
}
