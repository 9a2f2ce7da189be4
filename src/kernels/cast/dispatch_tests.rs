//! Both compiled copies of every dispatched cast loop (AVX2 and baseline
//! x86-64, see [`simd`]) against independent per-element references.
//!
//! For each (source, target) type pair, rounding mode, `out_of_range` rule
//! and `scalar_map`, a buffer of edge values (±0, ties, integer bounds ±1 and
//! ±0.5, 2^53 + 1, NaN, ±infinity, ...) and pseudo-random values is cast
//! twice, once with [`simd::portable`] forcing the baseline copy. Both results
//! must equal what the reference computes element by element with std's
//! rounding functions and `i128` arithmetic (never this crate's kernels): the
//! values of a buffer holding only the elements that succeed, and the index
//! of the first failure of the whole buffer. The buffers are long enough for
//! the vectorised loop bodies, and each value also appears one position
//! later, so it passes through different lanes and through the scalar tail.

use half::{bf16, f16};

use super::tests::MODES;
use super::{CastFailure, CastPlan, OutOfRangeMode, RoundingMode};
use crate::kernels::simd;
use crate::numeric::{NumericType, Value};
use crate::test_support::{self, pow2};

use NumericType as T;
use OutOfRangeMode::{Clamp, Wrap};
use RoundingMode::{NearestAway, NearestEven, TowardsNegative, TowardsPositive, TowardsZero};

const INT_TYPES: [NumericType; 12] = [
    T::Int2,
    T::Int4,
    T::Int8,
    T::Int16,
    T::Int32,
    T::Int64,
    T::UInt2,
    T::UInt4,
    T::UInt8,
    T::UInt16,
    T::UInt32,
    T::UInt64,
];
const FLOAT_TYPES: [NumericType; 4] = [T::Float16, T::BFloat16, T::Float32, T::Float64];

/// The outcome of casting one element.
type Outcome = Result<Value, CastFailure>;

use crate::test_rng::SplitMix64 as Rng;

/// `x` in type `t` (nearest, as Rust and `half` convert), as element bytes.
#[allow(clippy::cast_possible_truncation)]
fn float_bytes(t: NumericType, x: f64) -> Vec<u8> {
    match t {
        T::Float16 => f16::from_f64(x).to_ne_bytes().to_vec(),
        T::BFloat16 => bf16::from_f64(x).to_ne_bytes().to_vec(),
        T::Float32 => (x as f32).to_ne_bytes().to_vec(),
        T::Float64 => x.to_ne_bytes().to_vec(),
        _ => unreachable!(),
    }
}

/// `v` (in the range of `t`) as element bytes of `t`.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn int_bytes(t: NumericType, v: i128) -> Vec<u8> {
    let (lo, hi) = t.int_range().unwrap();
    assert!((lo..=hi).contains(&v));
    let le = v.to_le_bytes();
    let mut b = le[..t.size()].to_vec();
    if cfg!(target_endian = "big") {
        b.reverse();
    }
    b
}

/// A value of `t` as element bytes (for `scalar_map` targets).
fn value_bytes(t: NumericType, v: Value) -> Vec<u8> {
    match v {
        Value::Int(i) => int_bytes(t, i),
        Value::Float(x) => float_bytes(t, x),
    }
}

/// Edge values for float sources, as `f64` (each is rounded to the source
/// type before use, and the reference works on what that rounding gave).
fn float_edges() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1), // smallest subnormal
        -f64::from_bits(1),
        1e300,
        -1e300,
        65504.0, // float16 max
        65519.99,
        65520.0, // rounds to float16 infinity
        3.4e38,
        3.5e38,
        pow2(52),
        pow2(52) + 1.0,
        pow2(52) + 0.5,
        pow2(53),
        pow2(53) + 2.0,
        pow2(22) + 0.5,
        pow2(23) + 0.5,
        pow2(24) + 1.0,
        pow2(63),
        -pow2(63),
        pow2(64),
        -pow2(63) - 2048.0,
        pow2(64) - 2048.0,
        pow2(31) - 0.5,
        0.5 - pow2(-54), // largest double below 0.5
        -(0.5 - pow2(-54)),
        1.0 - pow2(-53),
    ];
    for k in -4..=4 {
        let k = f64::from(k);
        v.extend([k + 0.5, k + 0.25, k + 0.75]);
    }
    // Every integer bound b: b - 1, b - 0.5, b, b + 0.5, b + 1 and values
    // just inside and outside the half-way points.
    for t in INT_TYPES {
        let (lo, hi) = t.int_range().unwrap();
        for b in [lo, hi] {
            #[allow(clippy::cast_precision_loss)]
            let b = b as f64;
            for d in [-1.0, -0.5, 0.0, 0.5, 1.0] {
                v.push(b + d);
            }
            for h in [b - 0.5, b + 0.5] {
                v.push(h.next_up());
                v.push(h.next_down());
            }
        }
    }
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for i in 0..test_support::size(200, 4) {
        let r = rng.next();
        #[allow(clippy::cast_precision_loss)]
        let unit = (r >> 11) as f64 / pow2(53);
        v.push(match i % 4 {
            0 => (unit * 2.0 - 1.0) * 70_000.0,
            1 => (unit * 2.0 - 1.0) * 300.0,
            2 => (unit * 2.0 - 1.0) * 5e9,
            _ => f64::from_bits(r),
        });
    }
    v
}

/// Edge values for integer sources (those in the source range are used).
fn int_edges() -> Vec<i128> {
    let mut v = vec![0, 1, -1, 2, -2, 3];
    for e in [11, 24, 53, 63, 64] {
        let p = 1i128 << e;
        v.extend([p - 1, p, p + 1, -p - 1, -p, -p + 1]);
    }
    for t in INT_TYPES {
        let (lo, hi) = t.int_range().unwrap();
        for b in [lo, hi] {
            v.extend([b - 1, b, b + 1]);
        }
    }
    let mut rng = Rng(0xfeed_beef_1234_5678);
    for i in 0..test_support::size(200, 4) {
        let r = i128::from(rng.next());
        v.push(match i % 3 {
            0 => r % 70_000,
            1 => r - (1 << 63),
            _ => r,
        });
    }
    v
}

/// `v` reduced modulo 2^bits into the range of `t` (the `wrap` rule).
fn wrap(v: i128, t: NumericType) -> i128 {
    let bits = t.int_bits().unwrap();
    let (lo, _) = t.int_range().unwrap();
    let m = 1i128 << bits;
    let r = v.rem_euclid(m);
    if lo < 0 && r >= m / 2 { r - m } else { r }
}

/// The `out_of_range` rule applied to an integer result for an integer target.
fn int_rule(v: i128, o: Option<OutOfRangeMode>, t: NumericType) -> Outcome {
    let (lo, hi) = t.int_range().unwrap();
    if (lo..=hi).contains(&v) {
        return Ok(Value::Int(v));
    }
    match o {
        None => Err(CastFailure::OutOfRange),
        Some(Clamp) => Ok(Value::Int(v.clamp(lo, hi))),
        Some(Wrap) => Ok(Value::Int(wrap(v, t))),
    }
}

/// float -> int with std's rounding functions.
#[allow(clippy::cast_possible_truncation)]
fn ref_float_to_int(x: f64, r: RoundingMode, o: Option<OutOfRangeMode>, t: NumericType) -> Outcome {
    if !x.is_finite() {
        return Err(CastFailure::NotFinite);
    }
    let rounded = match r {
        NearestEven => x.round_ties_even(),
        TowardsZero => x.trunc(),
        TowardsPositive => x.ceil(),
        TowardsNegative => x.floor(),
        NearestAway => x.round(),
    };
    if rounded.abs() >= pow2(126) {
        // Far out of every range, and its spacing is at least 2^74: a
        // multiple of 2^64, so it wraps to 0.
        let v = if rounded > 0.0 {
            1i128 << 126
        } else {
            -(1i128 << 126)
        };
        return match o {
            Some(Wrap) => Ok(Value::Int(0)),
            _ => int_rule(v, o, t),
        };
    }
    int_rule(rounded as i128, o, t) // integral and below 2^126: exact
}

/// Significand bits (with the implicit one), smallest normal exponent and
/// largest finite value of a float target.
fn format(t: NumericType) -> (u32, i32, f64) {
    match t {
        T::Float16 => (11, -14, 65504.0),
        T::BFloat16 => (8, -126, bf16::MAX.to_f64()),
        T::Float32 => (24, -126, f64::from(f32::MAX)),
        T::Float64 => (53, -1022, f64::MAX),
        _ => unreachable!(),
    }
}

/// `x * 2^k`, exactly (in steps that neither overflow nor underflow for the
/// values used here).
fn scale(mut x: f64, mut k: i32) -> f64 {
    while k > 1000 {
        x *= pow2(1000);
        k -= 1000;
    }
    while k < -1000 {
        x *= pow2(-1000);
        k += 1000;
    }
    x * pow2(k)
}

/// A rounded magnitude beyond the target's largest finite value: an error,
/// or ±infinity under `clamp`.
fn overflow(negative: bool, o: Option<OutOfRangeMode>) -> Outcome {
    match o {
        Some(Clamp) => Ok(Value::Float(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        })),
        _ => Err(CastFailure::OutOfRange),
    }
}

/// int -> float with integer arithmetic: the candidates are `|v|` with its
/// bits below the precision cleared, and that plus one unit.
#[allow(clippy::cast_precision_loss)]
fn ref_int_to_float(
    v: i128,
    r: RoundingMode,
    o: Option<OutOfRangeMode>,
    t: NumericType,
) -> Outcome {
    let (precision, _, max) = format(t);
    let m = v.unsigned_abs();
    let bits = 128 - m.leading_zeros();
    let magnitude = if bits <= precision {
        m
    } else {
        let shift = bits - precision;
        let unit = 1u128 << shift;
        let low = m & (unit - 1);
        let down = m - low;
        let up = down + unit;
        let half = unit / 2;
        let away = low != 0;
        match r {
            TowardsZero => down,
            TowardsPositive if away && v > 0 => up,
            TowardsNegative if away && v < 0 => up,
            TowardsPositive | TowardsNegative => down,
            NearestAway => {
                if low >= half {
                    up
                } else {
                    down
                }
            }
            NearestEven => {
                let odd = (down >> shift) & 1 == 1;
                if low > half || (low == half && odd) {
                    up
                } else {
                    down
                }
            }
        }
    };
    // At most `precision` significant bits (or a power of two): exact.
    let f = magnitude as f64;
    if f > max {
        return overflow(v < 0, o);
    }
    Ok(Value::Float(if v < 0 { -f } else { f }))
}

/// float -> float: scale `x` so that the target's unit in the last place is
/// 1, round that with std's functions, scale back (all exact in `f64`), and
/// apply the overflow rule to that result of unbounded exponent range.
fn ref_float_to_float(
    x: f64,
    r: RoundingMode,
    o: Option<OutOfRangeMode>,
    t: NumericType,
) -> Outcome {
    if !x.is_finite() || x == 0.0 {
        return Ok(Value::Float(x));
    }
    let (precision, emin, max) = format(t);
    let biased = i32::try_from((x.to_bits() >> 52) & 0x7ff).unwrap();
    // A subnormal float64 lies below the normal range of every target.
    let exponent = if biased == 0 { -1023 } else { biased - 1023 };
    let q = exponent.max(emin) - (i32::try_from(precision).unwrap() - 1);
    let scaled = scale(x, -q);
    let rounded = match r {
        NearestEven => scaled.round_ties_even(),
        TowardsZero => scaled.trunc(),
        TowardsPositive => scaled.ceil(),
        TowardsNegative => scaled.floor(),
        NearestAway => scaled.round(),
    };
    let y = scale(rounded, q); // keeps the sign of a zero
    if y.abs() > max {
        return overflow(x < 0.0, o);
    }
    Ok(Value::Float(y))
}

/// `true` if `x` matches the `scalar_map` key `key`.
fn key_matches(x: Value, key: Value) -> bool {
    match (x, key) {
        (Value::Float(a), Value::Float(k)) => a == k || (a.is_nan() && k.is_nan()),
        _ => x == key,
    }
}

/// Bit-exact equality of outcomes (any NaN equals any NaN).
fn same(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Ok(Value::Float(x)), Ok(Value::Float(y))) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        _ => a == b,
    }
}

/// One source type, one target type: all modes, rules and maps.
struct Case {
    s: NumericType,
    t: NumericType,
    /// Source elements as bytes.
    src: Vec<Vec<u8>>,
    /// `scalar_map`s to try, as values.
    maps: Vec<Vec<(Value, Value)>>,
}

impl Case {
    /// The reference outcome of one element.
    fn reference(
        &self,
        x: Value,
        r: RoundingMode,
        o: Option<OutOfRangeMode>,
        map: &[(Value, Value)],
    ) -> Outcome {
        if let Some((_, v)) = map.iter().find(|(k, _)| key_matches(x, *k)) {
            // The target value, as the target type holds it.
            return Ok(self.t.read_value(&value_bytes(self.t, *v)));
        }
        match (x, self.t.is_float()) {
            (Value::Float(f), false) => ref_float_to_int(f, r, o, self.t),
            (Value::Int(i), false) => int_rule(i, o, self.t),
            (Value::Int(i), true) => ref_int_to_float(i, r, o, self.t),
            (Value::Float(f), true) => ref_float_to_float(f, r, o, self.t),
        }
    }

    fn run_all(&self) {
        let oors: &[Option<OutOfRangeMode>] = if self.t.is_float() {
            &[None, Some(Clamp)]
        } else {
            &[None, Some(Clamp), Some(Wrap)]
        };
        // Under Miri (where both copies are the baseline one), the first 24
        // values, one mode, two `out_of_range` rules and the first two maps:
        // the driver's unsafe code is the same for all, and every type pair
        // still runs (`wrap` and the other maps run in `kernels::cast::tests`).
        let src = test_support::first(&self.src, 24);
        // Each value twice, the second time one position later, so that
        // every value is seen in two lanes.
        let mut elements = src.clone();
        elements.push(src[0].clone());
        elements.extend(src.iter().cloned());
        for r in test_support::first(&MODES, 1) {
            for o in test_support::first(oors, 2) {
                for map in &test_support::first(&self.maps, 2) {
                    self.check(&elements, r, o, map);
                }
            }
        }
    }

    fn check(
        &self,
        elements: &[Vec<u8>],
        r: RoundingMode,
        o: Option<OutOfRangeMode>,
        map: &[(Value, Value)],
    ) {
        let (s, t) = (self.s, self.t);
        let entries = map
            .iter()
            .map(|(k, v)| (value_bytes(s, *k), value_bytes(t, *v)))
            .collect();
        let plan = CastPlan::new(s, t, r, o, entries).unwrap();
        let what = format!("{s} -> {t} {r:?} {o:?} map {map:?}");
        let cast = |bytes: &[u8]| {
            let fast = plan.cast_to_vec(bytes);
            // Without AVX2 (under Miri too) both copies are the baseline one.
            if !simd::avx2_enabled() {
                return fast;
            }
            let slow = simd::portable(|| plan.cast_to_vec(bytes));
            // Errors compare by index and kind (their NaN values never
            // compare equal).
            let key =
                |r: &Result<Vec<u8>, super::CastError>| r.clone().map_err(|e| (e.index, e.failure));
            assert_eq!(
                key(&fast),
                key(&slow),
                "{what}: AVX2 and baseline copies differ"
            );
            fast
        };
        let outcomes: Vec<Outcome> = elements
            .iter()
            .map(|e| self.reference(s.read_value(e), r, o, map))
            .collect();

        // The whole buffer: the first failure.
        let whole = cast(&elements.concat());
        if let Some(i) = outcomes.iter().position(Result::is_err) {
            let failure = outcomes[i].unwrap_err();
            let err = whole.expect_err(&what);
            assert_eq!((err.index, err.failure), (i, failure), "{what}");
        }

        // The elements that succeed: every value.
        let ok: Vec<usize> = (0..elements.len())
            .filter(|&i| outcomes[i].is_ok())
            .collect();
        let bytes: Vec<u8> = ok.iter().flat_map(|&i| elements[i].clone()).collect();
        let out = match cast(&bytes) {
            Ok(out) => out,
            Err(err) => panic!("{what}: {err} (reference: succeeds)"),
        };
        for (j, &i) in ok.iter().enumerate() {
            let want = outcomes[i];
            let got = Ok(t.read_value(&out[j * t.size()..]));
            assert!(
                same(&got, &want),
                "{what}: {:?} gave {got:?}, expected {want:?}",
                s.read_value(&elements[i])
            );
        }
    }
}

/// Maps for a float source into `t`: none, NaN only, one ordinary key,
/// three entries (the unrolled select loops) and five (the lookup loops).
fn float_maps(t: NumericType) -> Vec<Vec<(Value, Value)>> {
    let one = if t.is_float() {
        Value::Float(1.0)
    } else {
        Value::Int(1)
    };
    let zero = if t.is_float() {
        Value::Float(-0.0)
    } else {
        Value::Int(0)
    };
    let nan = Value::Float(f64::NAN);
    let f = Value::Float;
    vec![
        vec![],
        vec![(nan, zero)],
        vec![(f(2.5), one)],
        vec![(f(-0.0), one), (f(-1.5), zero)],
        vec![(nan, zero), (f(2.5), one), (f(f64::INFINITY), one)],
        vec![
            (nan, zero),
            (f(-0.0), one),
            (f(0.5), one),
            (f(f64::NEG_INFINITY), zero),
            (f(-1.5), zero),
        ],
    ]
}

/// Maps for an integer source `s` into `t`.
fn int_maps(s: NumericType, t: NumericType) -> Vec<Vec<(Value, Value)>> {
    let (lo, hi) = s.int_range().unwrap();
    let value = |x: f64, i: i128| {
        if t.is_float() {
            Value::Float(x)
        } else {
            Value::Int(i)
        }
    };
    let i = Value::Int;
    vec![
        vec![],
        vec![(i(0), value(f64::NAN, 1))],
        vec![
            (i(lo), value(1.0, 1)),
            (i(hi), value(-0.0, 0)),
            (i(0), value(0.5, 1)),
        ],
        vec![
            (i(hi), value(f64::INFINITY, 0)),
            (i(1), value(1.0, 1)),
            (i(lo), value(2.0, 1)),
            (i(hi - 1), value(3.0, 0)),
        ],
    ]
}

#[test]
fn float_sources_both_copies_match_reference() {
    let edges = float_edges();
    for s in FLOAT_TYPES {
        let src: Vec<Vec<u8>> = edges.iter().map(|&x| float_bytes(s, x)).collect();
        for t in INT_TYPES.into_iter().chain(FLOAT_TYPES) {
            Case {
                s,
                t,
                src: src.clone(),
                maps: float_maps(t),
            }
            .run_all();
        }
    }
}

#[test]
fn int_sources_both_copies_match_reference() {
    let edges = int_edges();
    // Under Miri, three sources (sub-byte, two and eight bytes); every type
    // is still a target.
    let sources: &[NumericType] = if cfg!(miri) {
        &[T::Int4, T::Int16, T::Int64]
    } else {
        &INT_TYPES
    };
    for &s in sources {
        let (lo, hi) = s.int_range().unwrap();
        let src: Vec<Vec<u8>> = edges
            .iter()
            .filter(|v| (lo..=hi).contains(*v))
            .map(|&v| int_bytes(s, v))
            .collect();
        for t in INT_TYPES.into_iter().chain(FLOAT_TYPES) {
            Case {
                s,
                t,
                src: src.clone(),
                maps: int_maps(s, t),
            }
            .run_all();
        }
    }
}

/// The references themselves, on hand-worked values.
#[test]
fn references_agree_with_hand_worked_values() {
    let f = |x: f64| Ok(Value::Float(x));
    // 2^53 + 1 lies half-way between 2^53 and 2^53 + 2 (float64 spacing 2).
    let v = (1i128 << 53) + 1;
    let p = pow2(53);
    let f64_of = |v, r| ref_int_to_float(v, r, None, T::Float64);
    assert_eq!(f64_of(v, NearestEven), f(p)); // even
    assert_eq!(f64_of(v, NearestAway), f(p + 2.0));
    assert_eq!(f64_of(v, TowardsZero), f(p));
    assert_eq!(f64_of(v, TowardsPositive), f(p + 2.0));
    assert_eq!(f64_of(-v, TowardsPositive), f(-p));
    assert_eq!(f64_of(-v, TowardsNegative), f(-p - 2.0));
    // 2^24 + 3 is half-way between 2^24 + 2 and 2^24 + 4: even is + 4.
    let w = (1i128 << 24) + 3;
    let f32_of = ref_int_to_float(w, NearestEven, None, T::Float32);
    assert_eq!(f32_of, f(pow2(24) + 4.0));
    // float16: 65519 rounds to 65504, 65520 (a tie) to 65536: overflow.
    let f16_of = |v, o| ref_int_to_float(v, NearestEven, o, T::Float16);
    assert_eq!(f16_of(65519, None), f(65504.0));
    assert_eq!(f16_of(65520, None), Err(CastFailure::OutOfRange));
    assert_eq!(f16_of(-65520, Some(Clamp)), f(f64::NEG_INFINITY));
    // bfloat16 has 8 significant bits: between 128 and 256 the spacing is 1,
    // so -128.5 - 2^-45 is just past the tie and rounds to -129.
    let x = -128.5 - pow2(-45);
    assert_eq!(
        ref_float_to_float(x, NearestEven, None, T::BFloat16),
        f(-129.0)
    );
    assert_eq!(
        ref_float_to_float(-128.5, NearestEven, None, T::BFloat16),
        f(-128.0)
    );
    assert_eq!(
        ref_float_to_float(x, TowardsZero, None, T::BFloat16),
        f(-128.0)
    );
    // float32: 2^-150 is half the smallest subnormal 2^-149 (tie to 0).
    let sub = ref_float_to_float(pow2(-150), NearestEven, None, T::Float32);
    assert_eq!(sub, f(0.0));
    let sub = ref_float_to_float(pow2(-150), TowardsPositive, None, T::Float32);
    assert_eq!(sub, f(f64::from(f32::from_bits(1))));
    // Beyond float32 max, towards-zero gives max, nearest overflows.
    let big = f64::from(f32::MAX) * (1.0 + pow2(-30));
    let fm = f64::from(f32::MAX);
    assert_eq!(
        ref_float_to_float(big, TowardsZero, None, T::Float32),
        f(fm)
    );
    assert_eq!(
        ref_float_to_float(pow2(128), TowardsZero, None, T::Float32),
        Err(CastFailure::OutOfRange)
    );
    // -2.5 towards-zero is -2; 32767.5 nearest-even is 32768, out of int16.
    let t16 = T::Int16;
    let int = |v| Ok(Value::Int(v));
    assert_eq!(ref_float_to_int(-2.5, TowardsZero, None, t16), int(-2));
    assert_eq!(
        ref_float_to_int(32767.5, NearestEven, None, t16),
        Err(CastFailure::OutOfRange)
    );
    assert_eq!(
        ref_float_to_int(32767.5, NearestEven, Some(Clamp), t16),
        int(32767)
    );
    // 40000 wraps to 40000 - 65536 in int16; 1e300 is a multiple of 2^64.
    assert_eq!(
        ref_float_to_int(40000.0, TowardsZero, Some(Wrap), t16),
        int(-25536)
    );
    assert_eq!(
        ref_float_to_int(1e300, TowardsZero, Some(Wrap), t16),
        int(0)
    );
    assert_eq!(
        ref_float_to_int(f64::NAN, NearestEven, Some(Clamp), t16),
        Err(CastFailure::NotFinite)
    );
}
