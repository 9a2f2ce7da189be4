//! Differential test of the `cast_value` kernels against `zarr-cast-value`
//! (the Rust kernel behind zarr-python's `cast_value`).
//!
//! For every (source, target) pair both support (int8..uint64, float16,
//! float32, float64), every rounding mode, every valid `out_of_range`
//! setting and three scalar maps (none, a short one, a long one), a
//! deterministic set of inputs is cast element by element by both crates.
//! The results must have the same bits (any NaN equals any NaN) or both be
//! errors of the same kind. Our whole-buffer cast must also agree with our
//! per-element results (the first failing index), and the peer's slice
//! functions with its per-element ones.
//!
//! Known peer deviations are excluded case by case below, each with the
//! spec rule it breaks; `known_peer_deviation` documents them.

use std::any::TypeId;
use std::fmt::Debug;

use bytemuck::Pod;
use half::f16;
use zarr_cast_value as peer;
use zarrs_extension_codecs::kernels::cast::{CastFailure, CastPlan, OutOfRangeMode, RoundingMode};
use zarrs_extension_codecs::numeric::NumericType;

const MODES: [RoundingMode; 5] = [
    RoundingMode::NearestEven,
    RoundingMode::TowardsZero,
    RoundingMode::TowardsPositive,
    RoundingMode::TowardsNegative,
    RoundingMode::NearestAway,
];

fn peer_mode(r: RoundingMode) -> peer::RoundingMode {
    match r {
        RoundingMode::NearestEven => peer::RoundingMode::NearestEven,
        RoundingMode::TowardsZero => peer::RoundingMode::TowardsZero,
        RoundingMode::TowardsPositive => peer::RoundingMode::TowardsPositive,
        RoundingMode::TowardsNegative => peer::RoundingMode::TowardsNegative,
        RoundingMode::NearestAway => peer::RoundingMode::NearestAway,
    }
}

fn peer_oor(o: Option<OutOfRangeMode>) -> Option<peer::OutOfRangeMode> {
    o.map(|o| match o {
        OutOfRangeMode::Clamp => peer::OutOfRangeMode::Clamp,
        OutOfRangeMode::Wrap => peer::OutOfRangeMode::Wrap,
    })
}

/// The outcome of casting one element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fail {
    NotFinite,
    OutOfRange,
}

fn peer_fail(e: peer::CastError) -> Fail {
    match e {
        peer::CastError::NanOrInf { .. } => Fail::NotFinite,
        peer::CastError::OutOfRange { .. } | peer::CastError::FloatOutOfRange { .. } => {
            Fail::OutOfRange
        }
        peer::CastError::LengthMismatch { .. } => panic!("length mismatch"),
    }
}

fn our_fail(f: CastFailure) -> Fail {
    match f {
        CastFailure::NotFinite => Fail::NotFinite,
        CastFailure::OutOfRange => Fail::OutOfRange,
    }
}

// ---------------------------------------------------------------------------
// Deterministic inputs
// ---------------------------------------------------------------------------

/// xorshift64 (Marsaglia), fixed seed per source type.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Uniform in [0, 1) with 53 random bits.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn sign(&mut self) -> f64 {
        if self.next() & 1 == 0 { 1.0 } else { -1.0 }
    }
}

fn p2(e: i32) -> f64 {
    assert!((-1074..=1023).contains(&e));
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (e + 1074))
    }
}

/// Integer landmarks: type bounds and their neighbours, powers of two and
/// their neighbours, float16/float32/float64 rounding midpoints.
fn int_landmarks() -> Vec<i128> {
    let mut v: Vec<i128> = Vec::new();
    let bounds: [(i128, i128); 8] = [
        (i8::MIN.into(), i8::MAX.into()),
        (i16::MIN.into(), i16::MAX.into()),
        (i32::MIN.into(), i32::MAX.into()),
        (i64::MIN.into(), i64::MAX.into()),
        (0, u8::MAX.into()),
        (0, u16::MAX.into()),
        (0, u32::MAX.into()),
        (0, u64::MAX.into()),
    ];
    for (lo, hi) in bounds {
        for d in -2..=2 {
            v.extend([lo + d, hi + d]);
        }
    }
    for k in 0..=64 {
        let t = 1i128 << k;
        for d in -3..=3 {
            v.extend([t + d, -t + d]);
        }
        // Midpoints of float16 (11 bits), float32 (24) and float64 (53)
        // neighbours at this binade, and one either side.
        for bits in [11, 24, 53] {
            if k > bits {
                let mid = t + (1i128 << (k - bits)); // t + ulp/2
                for d in -1..=1 {
                    v.extend([mid + d, -(mid + d)]);
                    let odd = mid + (1i128 << (k - bits + 1)); // next midpoint (odd neighbour below)
                    v.extend([odd + d, -(odd + d)]);
                }
            }
        }
    }
    for x in [
        65504, 65505, 65519, 65520, 65521, 65535, 65536, 2049, 2050, 2051, 300, 255, 256, 7, 0,
    ] {
        v.extend([x, -x]);
    }
    v
}

/// Float landmarks (as f64; narrower sources round them).
fn float_landmarks() -> Vec<f64> {
    let mut v: Vec<f64> = vec![
        0.0,
        -0.0,
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7ff0_0000_0000_0001), // signalling NaN
        f64::from_bits(0xfff8_0000_dead_beef),
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        0.5 - p2(-54),
        65519.0,
        65519.5,
        65519.99,
        65520.0,
        65520.01,
        65535.99,
        300.7,
        -300.7,
    ];
    for i in -20..=20 {
        v.push(f64::from(i) * 0.5);
        v.push(f64::from(i) * 0.25);
    }
    // Integer type bounds and powers of two up to 2^66, with neighbours
    // and ties (the exact integer landmarks matter for integer sources; in
    // a float most of them round to the same few values).
    let mut ints: Vec<i128> = int_landmarks()
        .into_iter()
        .filter(|x| x.unsigned_abs() < 1 << 26)
        .collect();
    for k in 26..=66 {
        ints.extend([1i128 << k, -(1i128 << k)]);
    }
    for (lo, hi) in [
        (-128i128, 127i128),
        (-32768, 32767),
        (-(1 << 31), (1 << 31) - 1),
        (0, 255),
        (0, 65535),
        (0, (1 << 32) - 1),
    ] {
        ints.extend([lo, hi]);
    }
    for x in ints {
        let f = x as f64;
        v.extend([f, f + 0.5, f - 0.5]);
    }
    // Just inside and outside the 64-bit integer ranges.
    for t in [p2(63), p2(64)] {
        for f in [t, -t] {
            v.extend([
                f,
                f64::from_bits(f.to_bits() + 1),
                f64::from_bits(f.to_bits() - 1),
            ]);
        }
    }
    // Powers of two across the whole range, and their neighbours.
    for e in (-1074..=1023).step_by(7).chain([
        -1074, -1022, -150, -149, -134, -133, -126, -25, -24, -14, 127, 128,
    ]) {
        let t = p2(e);
        v.extend([
            t,
            -t,
            t * 1.5,
            -t * 1.75,
            f64::from_bits(t.to_bits() + 1),
            f64::from_bits(t.to_bits() - 1),
        ]);
    }
    // float32 and float16 range ends and subnormal midpoints.
    let f32max = f64::from(f32::MAX);
    v.extend([
        f32max,
        f32max + p2(102),
        f32max + p2(103),
        f32max + p2(103) + p2(60),
        p2(128),
        -f32max - p2(103),
    ]);
    v.extend([
        p2(-150),
        3.0 * p2(-150),
        p2(-151),
        p2(-150) + p2(-200),
        p2(-25),
        3.0 * p2(-25),
        p2(-25) - p2(-60),
    ]);
    v.extend([
        p2(-14) - p2(-25),
        1.0 + p2(-11),
        1.0 + p2(-11) + p2(-40),
        1.0 + 3.0 * p2(-11),
        1.0 + p2(-24),
    ]);
    v
}

/// Midpoint of two adjacent float32 (`k == 24`) or float16 (`k == 11`,
/// normal range) values near `y`, plus an offset of -1, 0 or +1 f64 ulp.
fn narrow_midpoint(rng: &mut Rng) -> f64 {
    let offset = rng.below(3) as i64 - 1;
    let mid = if rng.next() & 1 == 0 {
        // float32: random finite bits, midpoint with the next value up.
        let y = f32::from_bits(rng.next() as u32 & 0x7f7f_ffff);
        let next = f32::from_bits(y.to_bits() + 1);
        (f64::from(y) + f64::from(next)) / 2.0
    } else {
        // float16: the same over all finite f16 values.
        let bits = (rng.next() as u16) & 0x7bff;
        let (y, next) = (f16::from_bits(bits), f16::from_bits(bits + 1));
        (y.to_f64() + next.to_f64()) / 2.0
    };
    let mid = f64::from_bits((mid.to_bits() as i64 + offset).max(0) as u64);
    mid * rng.sign()
}

fn random_float(rng: &mut Rng) -> f64 {
    match rng.below(5) {
        0 => f64::from_bits(rng.next()),
        1 => {
            // log-uniform magnitude over the interesting exponents
            let e = rng.below(240) as i32 - 160;
            rng.sign() * p2(e) * (1.0 + rng.unit())
        }
        2 => {
            // an integer of up to 66 bits plus a fraction that is often a tie
            let bits = rng.below(67) as i32;
            let int = (rng.unit() * p2(bits)).floor();
            let frac = [0.0, 0.5, 0.25, 0.75, rng.unit()][rng.below(5) as usize];
            rng.sign() * (int + frac)
        }
        3 => narrow_midpoint(rng),
        _ => {
            rng.sign() * (rng.below(70_000) as f64 + [0.0, 0.5, rng.unit()][rng.below(3) as usize])
        }
    }
}

fn random_int(rng: &mut Rng) -> i128 {
    match rng.below(4) {
        0 => i128::from(rng.next() as i64),
        1 => i128::from(rng.next()),
        2 => {
            // near a power of two
            let k = rng.below(65) as u32;
            let t = 1i128 << k;
            let d = rng.below(9) as i128 - 4;
            if rng.next() & 1 == 0 { t + d } else { -t + d }
        }
        _ => i128::from(rng.below(140_000) as i64 - 70_000),
    }
}

// ---------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------

trait El: Pod + Debug + PartialEq + 'static {
    const TYPE: NumericType;
    const FLOAT: bool;
    fn bits(self) -> u64;
    fn is_nan(self) -> bool;
    /// Nearest value (saturating for integers, `None` if out of range).
    fn from_i128(v: i128) -> Option<Self>;
    /// Some value of this type near `x` (the rounding does not matter: it
    /// only makes inputs). `None` for integers if not exact.
    fn from_f64(x: f64) -> Option<Self>;
    /// An arbitrary value of this type from random bits.
    fn from_random(bits: u64) -> Self;

    fn inputs(seed: u64) -> Vec<Self> {
        let mut rng = Rng(seed);
        let mut v: Vec<Self> = Vec::new();
        if Self::FLOAT {
            v.extend(float_landmarks().into_iter().filter_map(Self::from_f64));
            v.extend((0..2500).filter_map(|_| Self::from_f64(random_float(&mut rng))));
            v.extend((0..500).map(|_| Self::from_random(rng.next())));
        } else {
            v.extend(int_landmarks().into_iter().filter_map(Self::from_i128));
            v.extend((0..1500).filter_map(|_| Self::from_i128(random_int(&mut rng))));
            // For narrow types most random values are out of range: add
            // uniform in-range values too.
            v.extend((0..500).map(|_| Self::from_random(rng.next())));
        }
        // Deduplicate by bits (NaNs with different payloads stay distinct).
        let mut seen = std::collections::HashSet::new();
        v.retain(|x| seen.insert(x.bits()));
        v
    }
}

macro_rules! int_el {
    ($($t:ty => $nt:ident),*) => {$(
        impl El for $t {
            const TYPE: NumericType = NumericType::$nt;
            const FLOAT: bool = false;
            #[allow(clippy::cast_sign_loss)]
            fn bits(self) -> u64 { self as u64 }
            fn is_nan(self) -> bool { false }
            fn from_i128(v: i128) -> Option<Self> { <$t>::try_from(v).ok() }
            fn from_f64(x: f64) -> Option<Self> {
                #[allow(clippy::cast_possible_truncation)]
                (x.fract() == 0.0 && x.abs() < 1e30).then(|| Self::from_i128(x as i128)).flatten()
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]
            fn from_random(bits: u64) -> Self { bits as $t }
        }
    )*};
}
int_el!(i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64, u8 => UInt8, u16 => UInt16, u32 => UInt32, u64 => UInt64);

impl El for f16 {
    const TYPE: NumericType = NumericType::Float16;
    const FLOAT: bool = true;
    fn bits(self) -> u64 {
        self.to_bits().into()
    }
    fn is_nan(self) -> bool {
        f16::is_nan(self)
    }
    fn from_i128(v: i128) -> Option<Self> {
        Some(f16::from_f64(v as f64))
    }
    fn from_f64(x: f64) -> Option<Self> {
        Some(f16::from_f64(x))
    }
    #[allow(clippy::cast_possible_truncation)]
    fn from_random(bits: u64) -> Self {
        f16::from_bits(bits as u16)
    }
}

impl El for f32 {
    const TYPE: NumericType = NumericType::Float32;
    const FLOAT: bool = true;
    fn bits(self) -> u64 {
        self.to_bits().into()
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn from_i128(v: i128) -> Option<Self> {
        Some(v as f32)
    }
    #[allow(clippy::cast_possible_truncation)]
    fn from_f64(x: f64) -> Option<Self> {
        Some(x as f32)
    }
    #[allow(clippy::cast_possible_truncation)]
    fn from_random(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}

impl El for f64 {
    const TYPE: NumericType = NumericType::Float64;
    const FLOAT: bool = true;
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn from_i128(v: i128) -> Option<Self> {
        Some(v as f64)
    }
    fn from_f64(x: f64) -> Option<Self> {
        Some(x)
    }
    fn from_random(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

fn same_value<D: El>(a: D, b: D) -> bool {
    a.bits() == b.bits() || (a.is_nan() && b.is_nan())
}

fn same_outcome<D: El>(a: &Result<D, Fail>, b: &Result<D, Fail>) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => same_value(*x, *y),
        (Err(x), Err(y)) => x == y,
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// scalar_map variants
// ---------------------------------------------------------------------------

/// Keys of this source type for the maps (they all occur in the inputs).
fn map_keys<S: El>() -> Vec<S> {
    if S::FLOAT {
        [
            f64::NAN,
            300.0,
            2.5,
            f64::INFINITY,
            -1.0,
            f64::NEG_INFINITY,
            65520.0,
            -0.0,
        ]
        .into_iter()
        .filter_map(S::from_f64)
        .collect()
    } else {
        [300, -1, 7, 128, 65520, -129, i128::from(u32::MAX), 0]
            .into_iter()
            .filter_map(S::from_i128)
            .collect()
    }
}

/// Values of the target type for the maps.
fn map_values<D: El>() -> Vec<D> {
    if D::FLOAT {
        [7.0, -0.0, f64::NAN, f64::INFINITY, 0.5, -3.0, 1e4, 0.0]
            .into_iter()
            .filter_map(D::from_f64)
            .collect()
    } else {
        [7, 0, 127, 1, 100, 3, 2, 5]
            .into_iter()
            .filter_map(D::from_i128)
            .collect()
    }
}

/// `None`, a short map with a repeated key (first occurrence wins), and a
/// long map (more entries than the kernels' unrolled select path).
fn maps<S: El, D: El>() -> Vec<(&'static str, Vec<(S, D)>)> {
    let (k, v) = (map_keys::<S>(), map_values::<D>());
    let short = vec![(k[0], v[0]), (k[1], v[1]), (k[0], v[2])];
    let long = (0..k.len().min(v.len()))
        .map(|i| (k[i], v[(i + 3) % v.len()]))
        .chain([(k[1], v[0])])
        .collect();
    vec![("no map", vec![]), ("short map", short), ("long map", long)]
}

// ---------------------------------------------------------------------------
// The two implementations
// ---------------------------------------------------------------------------

/// Per-element outcomes, and the outcome of the peer's slice function.
struct PeerOut<D> {
    each: Vec<Result<D, Fail>>,
    slice: Result<Vec<D>, Fail>,
}

type PeerFn<S, D> = fn(&[S], &[(S, D)], RoundingMode, Option<OutOfRangeMode>) -> PeerOut<D>;

fn entries<S: Copy, D: Copy>(map: &[(S, D)]) -> Vec<peer::MapEntry<S, D>> {
    map.iter()
        .map(|&(src, tgt)| peer::MapEntry { src, tgt })
        .collect()
}

macro_rules! peer_path {
    ($name:ident, $src_bound:path, $dst_bound:path, $config:ident, $each:ident, $slice:ident, $($rounding:ident)?) => {
        fn $name<S: El + $src_bound + peer::CastInto<D>, D: El + $dst_bound>(
            src: &[S],
            map: &[(S, D)],
            _r: RoundingMode,
            o: Option<OutOfRangeMode>,
        ) -> PeerOut<D> {
            let config = peer::$config {
                map_entries: entries(map),
                $($rounding: peer_mode(_r),)?
                out_of_range: peer_oor(o),
            };
            let each = src.iter().map(|&x| peer::$each(x, &config).map_err(peer_fail)).collect();
            let mut dst = vec![D::zeroed(); src.len()];
            let slice = peer::$slice(src, &mut dst, &config).map(|()| dst).map_err(peer_fail);
            PeerOut { each, slice }
        }
    };
}
peer_path!(
    peer_f2i,
    peer::CastFloat,
    peer::CastInt,
    FloatToIntConfig,
    convert_float_to_int,
    convert_slice_float_to_int,
    rounding
);
peer_path!(
    peer_f2f,
    peer::CastFloat,
    peer::CastFloat,
    FloatToFloatConfig,
    convert_float_to_float,
    convert_slice_float_to_float,
    rounding
);
peer_path!(
    peer_i2f,
    peer::CastInt,
    peer::CastFloat,
    IntToFloatConfig,
    convert_int_to_float,
    convert_slice_int_to_float,
    rounding
);
peer_path!(
    peer_i2i,
    peer::CastInt,
    peer::CastInt,
    IntToIntConfig,
    convert_int_to_int,
    convert_slice_int_to_int,
);

/// The outcome of casting a whole buffer: the values, or the index of the
/// first failure and its kind.
type WholeBuffer<D> = Result<Vec<D>, (usize, Fail)>;

/// Our per-element outcomes, and our whole-buffer outcome.
fn ours<S: El, D: El>(
    src: &[S],
    map: &[(S, D)],
    r: RoundingMode,
    o: Option<OutOfRangeMode>,
) -> (Vec<Result<D, Fail>>, WholeBuffer<D>) {
    let entries = map
        .iter()
        .map(|(k, v)| {
            (
                bytemuck::bytes_of(k).to_vec(),
                bytemuck::bytes_of(v).to_vec(),
            )
        })
        .collect();
    let plan = CastPlan::new(S::TYPE, D::TYPE, r, o, entries).unwrap();
    let bytes: &[u8] = bytemuck::cast_slice(src);
    let (ss, ds) = (size_of::<S>(), size_of::<D>());
    let mut out = vec![0u8; ds];
    let each = (0..src.len())
        .map(|i| {
            plan.cast_bytes(&bytes[i * ss..(i + 1) * ss], &mut out)
                .map(|()| bytemuck::pod_read_unaligned(&out))
                .map_err(|e| {
                    assert_eq!(e.index, 0);
                    our_fail(e.failure)
                })
        })
        .collect();
    let whole = plan
        .cast_to_vec(bytes)
        .map(|v| bytemuck::pod_collect_to_vec(&v))
        .map_err(|e| (e.index, our_fail(e.failure)));
    (each, whole)
}

// ---------------------------------------------------------------------------
// Known deviations of the peer
// ---------------------------------------------------------------------------

/// The spacing of float16 values at magnitude `a` (below 65520).
fn f16_ulp(a: f64) -> f64 {
    if a < p2(-14) {
        p2(-24) // subnormals
    } else {
        let exponent = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        p2(exponent - 10)
    }
}

/// `true` if `y` lies exactly halfway between two adjacent float16 values
/// (65520, halfway between float16 MAX and 2^16, counts).
fn is_f16_midpoint(y: f32) -> bool {
    let a = f64::from(y.abs());
    if a >= 65520.0 {
        return a == 65520.0;
    }
    let q = a / (f16_ulp(a) / 2.0); // exact: division by a power of two
    q.fract() == 0.0 && q % 2.0 == 1.0
}

/// The correctly rounded float16 value (nearest-even and nearest-away agree,
/// as it is no tie) of a finite `x` that is not a float32 but whose nearest
/// float32 `y` is a float16 midpoint: `x` lies within half a float32 ulp of
/// `y` and so strictly between the two float16 neighbours of `y`, and its
/// nearest float16 is the neighbour on its side of `y`. Past 65504 + 16 it
/// overflows (an error, or ±infinity under clamp).
fn f16_beside_midpoint(x: f64, clamp: bool) -> Result<f16, Fail> {
    #[allow(clippy::cast_possible_truncation)]
    let a = f64::from((x as f32).abs());
    let half_ulp = if a == 65520.0 { 16.0 } else { f16_ulp(a) / 2.0 };
    let magnitude = if x.abs() > a {
        a + half_ulp
    } else {
        a - half_ulp
    };
    let value = if magnitude >= 65536.0 {
        if !clamp {
            return Err(Fail::OutOfRange);
        }
        f16::INFINITY
    } else {
        f16::from_f64(magnitude) // exact: a float16 value
    };
    Ok(if x < 0.0 { -value } else { value })
}

/// Why the peer's answer for `x` may be wrong, if it is a known deviation.
///
/// On x86-64 CPUs with F16C, `half::f16::from_f64` (which the peer uses for
/// float64 -> float16) converts through `f32` first, rounding twice. When
/// the `f32` value lands exactly on a float16 midpoint the second rounding
/// is a tie that need not agree with the correctly rounded result. The spec
/// defines "nearest-even" as IEEE 754 roundTiesToEven of the value itself
/// (cast_value.md, `rounding`: "Round to the nearest representable value,
/// with ties rounded to the value whose least significant digit is even"),
/// and "nearest-away" likewise; the directed modes are unaffected because
/// both neighbours bracket the value.
fn known_peer_deviation<S: El, D: El>(x: S, r: RoundingMode) -> Option<&'static str> {
    if TypeId::of::<S>() != TypeId::of::<f64>() || TypeId::of::<D>() != TypeId::of::<f16>() {
        return None;
    }
    if !matches!(r, RoundingMode::NearestEven | RoundingMode::NearestAway) {
        return None;
    }
    let x: f64 = bytemuck::pod_read_unaligned(bytemuck::bytes_of(&x));
    #[allow(clippy::cast_possible_truncation)]
    let y = x as f32;
    (x.is_finite() && f64::from(y) != x && is_f16_midpoint(y))
        .then_some("float64 -> float16 double rounding through f32 in half::f16::from_f64 (F16C)")
}

// ---------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------

#[derive(Default)]
struct Report {
    configs: usize,
    elements: usize,
    excluded: Vec<String>,
    disagreements: Vec<String>,
}

impl Report {
    fn finish(self, source: NumericType) {
        eprintln!(
            "{source}: {} configurations, {} element comparisons, {} excluded (known peer deviations), {} disagreements",
            self.configs,
            self.elements,
            self.excluded.len(),
            self.disagreements.len()
        );
        for line in self.excluded.iter().take(5) {
            eprintln!("  excluded: {line}");
        }
        assert!(
            self.disagreements.is_empty(),
            "{} disagreements, first ones:\n{}",
            self.disagreements.len(),
            self.disagreements
                .iter()
                .take(40)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

fn compare_pair<S: El, D: El>(inputs: &[S], peer_fn: PeerFn<S, D>, report: &mut Report) {
    let oors: &[Option<OutOfRangeMode>] = if D::FLOAT {
        // `wrap` is only permitted for integral targets.
        &[None, Some(OutOfRangeMode::Clamp)]
    } else {
        &[
            None,
            Some(OutOfRangeMode::Clamp),
            Some(OutOfRangeMode::Wrap),
        ]
    };
    // Rounding does not apply to int -> int (in-range values are exact, the
    // rest is out_of_range's business): two modes show it is ignored.
    let modes: &[RoundingMode] = if S::FLOAT || D::FLOAT {
        &MODES
    } else {
        &[RoundingMode::NearestEven, RoundingMode::TowardsNegative]
    };
    for (map_name, map) in maps::<S, D>() {
        for &r in modes {
            for &o in oors {
                report.configs += 1;
                let what = format!("{} -> {} {r:?} {o:?} {map_name}", S::TYPE, D::TYPE);
                let (our_each, our_whole) = ours::<S, D>(inputs, &map, r, o);
                let theirs = peer_fn(inputs, &map, r, o);
                let mut any_excluded = false;
                for (i, &x) in inputs.iter().enumerate() {
                    report.elements += 1;
                    let (a, b) = (&our_each[i], &theirs.each[i]);
                    if same_outcome(a, b) {
                        continue;
                    }
                    let line = format!(
                        "{what}: input {x:?} (bits {:#x}): ours {a:?}, peer {b:?}",
                        x.bits()
                    );
                    if let Some(why) = known_peer_deviation::<S, D>(x, r) {
                        any_excluded = true;
                        // Still check ours, against the value worked out
                        // without either implementation.
                        let x64: f64 = bytemuck::pod_read_unaligned(bytemuck::bytes_of(&x));
                        let want = f16_beside_midpoint(x64, o == Some(OutOfRangeMode::Clamp));
                        let ours_f16 =
                            a.map(|v| bytemuck::pod_read_unaligned::<f16>(bytemuck::bytes_of(&v)));
                        if same_outcome(&ours_f16, &want) {
                            report.excluded.push(format!("{line} [{why}]"));
                        } else {
                            report
                                .disagreements
                                .push(format!("{line}: expected {want:?}"));
                        }
                    } else {
                        report.disagreements.push(line);
                    }
                }
                // Our whole-buffer cast agrees with our per-element results.
                let first_err = our_each.iter().position(Result::is_err);
                match (&our_whole, first_err) {
                    (Ok(v), None) => {
                        for (i, (w, e)) in v.iter().zip(&our_each).enumerate() {
                            if !same_outcome(&Ok(*w), e) {
                                report.disagreements.push(format!("{what}: ours whole-buffer element {i} is {w:?}, per element {e:?}"));
                            }
                        }
                    }
                    (Err((index, fail)), Some(i))
                        if *index == i && Err(*fail) == our_each[i].map(|_| ()) => {}
                    (whole, first) => report.disagreements.push(format!(
                        "{what}: ours whole-buffer {:?} vs first per-element error at {first:?}",
                        whole.as_ref().map(|_| ())
                    )),
                }
                // The peer's slice function agrees with its per-element results.
                let peer_first_err = theirs.each.iter().find_map(|r| r.err());
                match (&theirs.slice, peer_first_err) {
                    (Ok(v), None) => {
                        for (i, (w, e)) in v.iter().zip(&theirs.each).enumerate() {
                            if !same_outcome(&Ok(*w), e) {
                                report.disagreements.push(format!(
                                    "{what}: peer slice element {i} is {w:?}, per element {e:?}"
                                ));
                            }
                        }
                    }
                    (Err(f), Some(g)) if *f == g => {}
                    (slice, first) if !any_excluded => report.disagreements.push(format!(
                        "{what}: peer slice {:?} vs its first per-element error {first:?}",
                        slice.as_ref().map(|_| ())
                    )),
                    _ => {}
                }
            }
        }
    }
}

macro_rules! float_source {
    ($name:ident, $s:ty, $seed:expr) => {
        #[test]
        fn $name() {
            let inputs = <$s as El>::inputs($seed);
            let mut report = Report::default();
            compare_pair::<$s, i8>(&inputs, peer_f2i::<$s, i8>, &mut report);
            compare_pair::<$s, i16>(&inputs, peer_f2i::<$s, i16>, &mut report);
            compare_pair::<$s, i32>(&inputs, peer_f2i::<$s, i32>, &mut report);
            compare_pair::<$s, i64>(&inputs, peer_f2i::<$s, i64>, &mut report);
            compare_pair::<$s, u8>(&inputs, peer_f2i::<$s, u8>, &mut report);
            compare_pair::<$s, u16>(&inputs, peer_f2i::<$s, u16>, &mut report);
            compare_pair::<$s, u32>(&inputs, peer_f2i::<$s, u32>, &mut report);
            compare_pair::<$s, u64>(&inputs, peer_f2i::<$s, u64>, &mut report);
            compare_pair::<$s, f16>(&inputs, peer_f2f::<$s, f16>, &mut report);
            compare_pair::<$s, f32>(&inputs, peer_f2f::<$s, f32>, &mut report);
            compare_pair::<$s, f64>(&inputs, peer_f2f::<$s, f64>, &mut report);
            report.finish(<$s as El>::TYPE);
        }
    };
}

macro_rules! int_source {
    ($name:ident, $s:ty, $seed:expr) => {
        #[test]
        fn $name() {
            let inputs = <$s as El>::inputs($seed);
            let mut report = Report::default();
            compare_pair::<$s, i8>(&inputs, peer_i2i::<$s, i8>, &mut report);
            compare_pair::<$s, i16>(&inputs, peer_i2i::<$s, i16>, &mut report);
            compare_pair::<$s, i32>(&inputs, peer_i2i::<$s, i32>, &mut report);
            compare_pair::<$s, i64>(&inputs, peer_i2i::<$s, i64>, &mut report);
            compare_pair::<$s, u8>(&inputs, peer_i2i::<$s, u8>, &mut report);
            compare_pair::<$s, u16>(&inputs, peer_i2i::<$s, u16>, &mut report);
            compare_pair::<$s, u32>(&inputs, peer_i2i::<$s, u32>, &mut report);
            compare_pair::<$s, u64>(&inputs, peer_i2i::<$s, u64>, &mut report);
            compare_pair::<$s, f16>(&inputs, peer_i2f::<$s, f16>, &mut report);
            compare_pair::<$s, f32>(&inputs, peer_i2f::<$s, f32>, &mut report);
            compare_pair::<$s, f64>(&inputs, peer_i2f::<$s, f64>, &mut report);
            report.finish(<$s as El>::TYPE);
        }
    };
}

float_source!(from_float16, f16, 0x1616_1616_1616_1616);
float_source!(from_float32, f32, 0x3232_3232_3232_3232);
float_source!(from_float64, f64, 0x6464_6464_6464_6464);
int_source!(from_int8, i8, 0x0808_0808_0808_0808);
int_source!(from_int16, i16, 0x1616_0000_1616_0001);
int_source!(from_int32, i32, 0x3232_0000_3232_0001);
int_source!(from_int64, i64, 0x6464_0000_6464_0001);
int_source!(from_uint8, u8, 0x0808_0000_0808_0001);
int_source!(from_uint16, u16, 0x1616_0000_0000_0016);
int_source!(from_uint32, u32, 0x3232_0000_0000_0032);
int_source!(from_uint64, u64, 0x6464_0000_0000_0064);

/// The exclusion predicate itself, on values worked out by hand.
#[test]
fn f16_midpoint_predicate() {
    assert!(is_f16_midpoint(1.0 + 2f32.powi(-11))); // 1 | 1 + 2^-10
    assert!(!is_f16_midpoint(1.0 + 2f32.powi(-10))); // a float16 value
    assert!(is_f16_midpoint(65520.0)); // 65504 | 2^16
    assert!(is_f16_midpoint(-2049.0)); // -2048 | -2050
    assert!(!is_f16_midpoint(2050.0));
    assert!(is_f16_midpoint(2f32.powi(-25))); // 0 | 2^-24
    assert!(is_f16_midpoint(3.0 * 2f32.powi(-25)));
    assert!(!is_f16_midpoint(2f32.powi(-24)));
    // 2^-25 + 2^-70 -> 2^-24 (2^-70 is above half an f64 ulp there, 2^-78,
    // and below half an f32 ulp, 2^-49); 65519.99 -> 65504; 65520.01 -> overflow;
    // -(1 + 2^-11 - 2^-40) -> -1.
    assert_eq!(
        f16_beside_midpoint(p2(-25) + p2(-70), false),
        Ok(f16::from_bits(1))
    );
    assert_eq!(f16_beside_midpoint(65_519.999_999_999, false), Ok(f16::MAX));
    assert_eq!(
        f16_beside_midpoint(65_520.000_000_001, false),
        Err(Fail::OutOfRange)
    );
    assert_eq!(
        f16_beside_midpoint(65_520.000_000_001, true),
        Ok(f16::INFINITY)
    );
    assert_eq!(
        f16_beside_midpoint(-(1.0 + p2(-11) - p2(-40)), false),
        Ok(f16::from_f32(-1.0))
    );
}
