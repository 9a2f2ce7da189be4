//! What a `scale_offset` / `cast_value` round trip must give, element by
//! element, worked out with std arithmetic from the specifications
//! (independent of the crate's kernels).
//!
//! `Ok(Some(v))`: decoding the encoded element gives `v`; `Err(())`: the
//! specification makes encoding (or decoding) this element an error;
//! `Ok(None)`: no model for this case (the target then only checks that
//! what was written reads back without a panic).

use super::input::{Dt, Kind};

/// A number: integers exactly, floats (binary32 widened exactly) as `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum V {
    I(i128),
    F(f64),
}

/// The configuration of the chain under test.
#[derive(Clone, Debug)]
pub struct Chain {
    /// `scale_offset`'s `(offset, scale)`, in the source type.
    pub scale_offset: Option<(V, V)>,
    /// `cast_value`'s target, rounding and out_of_range.
    pub cast: Option<(Dt, String, Option<String>)>,
}

pub type Outcome = Result<Option<V>, ()>;

/// Whether `scale_offset`'s `offset` and `scale` are values of `dt`, as its
/// spec requires: for an integer type, within its range (the generator
/// draws them from -20..=20 whatever the type; its floats are finite).
pub fn parameters_valid(dt: Dt, chain: &Chain) -> bool {
    match (chain.scale_offset, dt.kind) {
        (Some((V::I(o), V::I(s))), Kind::Int { bits, signed }) => {
            let (lo, hi) = int_range(bits, signed);
            (lo..=hi).contains(&o) && (lo..=hi).contains(&s)
        }
        _ => true,
    }
}

/// Read element `bytes` (native order) of numeric `dt`.
pub fn read(dt: Dt, bytes: &[u8]) -> V {
    match dt.kind {
        Kind::Int { signed: true, .. } => V::I(match dt.size {
            1 => i128::from(bytes[0] as i8),
            2 => i128::from(i16::from_ne_bytes(bytes.try_into().unwrap())),
            4 => i128::from(i32::from_ne_bytes(bytes.try_into().unwrap())),
            _ => i128::from(i64::from_ne_bytes(bytes.try_into().unwrap())),
        }),
        Kind::Int { signed: false, .. } => V::I(match dt.size {
            1 => i128::from(bytes[0]),
            2 => i128::from(u16::from_ne_bytes(bytes.try_into().unwrap())),
            4 => i128::from(u32::from_ne_bytes(bytes.try_into().unwrap())),
            _ => i128::from(u64::from_ne_bytes(bytes.try_into().unwrap())),
        }),
        Kind::Float { bits: 32 } => V::F(f64::from(f32::from_ne_bytes(bytes.try_into().unwrap()))),
        Kind::Float { .. } => V::F(f64::from_ne_bytes(bytes.try_into().unwrap())),
        _ => unreachable!("not a numeric type: {}", dt.name),
    }
}

/// `a` and `b` are the same element of `dt`: bit-exact for integers and
/// floats (signed zero included), any NaN equal to any NaN.
pub fn same(a: V, b: V) -> bool {
    match (a, b) {
        (V::F(x), V::F(y)) => (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

/// The range of integer type `dt`.
fn int_range(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

fn round(x: f64, mode: &str) -> f64 {
    match mode {
        "towards-zero" => x.trunc(),
        "towards-positive" => x.ceil(),
        "towards-negative" => x.floor(),
        "nearest-away" => x.round(),
        _ => x.round_ties_even(),
    }
}

/// `i` wrapped into `bits` bits, two's complement when `signed`.
fn wrap(i: i128, bits: u32, signed: bool) -> i128 {
    let m = i.rem_euclid(1i128 << bits);
    if signed && m >= 1i128 << (bits - 1) {
        m - (1i128 << bits)
    } else {
        m
    }
}

/// One element cast from `from` to `to` by `cast_value`'s rules.
pub fn cast(v: V, from: Dt, to: Dt, rounding: &str, oor: Option<&str>) -> Outcome {
    match to.kind {
        Kind::Int { bits, signed } => {
            let (lo, hi) = int_range(bits, signed);
            let i = match v {
                V::I(i) => Some(i),
                V::F(x) if !x.is_finite() => return Err(()),
                V::F(x) => {
                    let r = round(x, rounding);
                    // Beyond 2^126 the value is a multiple of 2^73 or more:
                    // out of every range, and 0 modulo 2^64.
                    (r.abs() < 2f64.powi(126)).then_some(r as i128)
                }
            };
            match (i, oor) {
                (Some(i), _) if (lo..=hi).contains(&i) => Ok(Some(V::I(i))),
                (Some(i), Some("clamp")) => Ok(Some(V::I(i.clamp(lo, hi)))),
                (None, Some("clamp")) => {
                    let V::F(x) = v else { unreachable!() };
                    Ok(Some(V::I(if x < 0.0 { lo } else { hi })))
                }
                (Some(i), Some("wrap")) => Ok(Some(V::I(wrap(i, bits, signed)))),
                (None, Some("wrap")) => Ok(Some(V::I(0))),
                _ => Err(()),
            }
        }
        Kind::Float { bits } => match v {
            V::I(i) => {
                // The two floats around `i` (Rust's `as` gives the nearest,
                // ties to even, in one step), then the rounding mode picks
                // (uint64 2^64 - 1 -> float64 2^64 nearest-even).
                macro_rules! around {
                    ($t:ty) => {{
                        let n = i as $t;
                        let (d, u) = if n as i128 <= i {
                            (n, n.next_up())
                        } else {
                            (n.next_down(), n)
                        };
                        (f64::from(d), f64::from(u))
                    }};
                }
                let (down, up) = if bits == 64 {
                    around!(f64)
                } else {
                    around!(f32)
                };
                // An exactly representable `i` is `down` itself.
                let rounded = if down as i128 == i {
                    down
                } else {
                    match rounding {
                        "towards-positive" => up,
                        "towards-negative" => down,
                        "towards-zero" => {
                            if i > 0 {
                                down
                            } else {
                                up
                            }
                        }
                        "nearest-away" => {
                            let (below, above) = (i - down as i128, up as i128 - i);
                            if below == above {
                                if i > 0 { up } else { down }
                            } else if below < above {
                                down
                            } else {
                                up
                            }
                        }
                        _ if bits == 64 => i as f64,
                        _ => f64::from(i as f32),
                    }
                };
                Ok(Some(V::F(rounded)))
            }
            V::F(x) if bits == 64 || from.kind == (Kind::Float { bits: 32 }) => Ok(Some(V::F(x))),
            V::F(x) => {
                let narrowed = f64::from(x as f32);
                // Exact, non-finite, or rounded to nearest-even within range
                // (what `as f32` does); other modes have no model here.
                let exact = narrowed == x || x.is_nan() || x.is_infinite();
                if exact || (rounding == "nearest-even" && x.abs() <= f64::from(f32::MAX)) {
                    Ok(Some(V::F(narrowed)))
                } else {
                    Ok(None)
                }
            }
        },
        _ => Ok(None),
    }
}

/// `scale_offset` encode `(x - offset) * scale` in the arithmetic of `dt`.
fn so_encode(v: V, dt: Dt, offset: V, scale: V) -> Outcome {
    match (v, offset, scale, dt.kind) {
        (V::I(x), V::I(o), V::I(s), Kind::Int { bits, signed }) => {
            let (lo, hi) = int_range(bits, signed);
            let d = x - o;
            let e = d * s;
            if (lo..=hi).contains(&d) && (lo..=hi).contains(&e) {
                Ok(Some(V::I(e)))
            } else {
                Err(())
            }
        }
        (V::F(x), V::F(o), V::F(s), Kind::Float { bits: 32 }) => {
            Ok(Some(V::F(f64::from((x as f32 - o as f32) * s as f32))))
        }
        (V::F(x), V::F(o), V::F(s), _) => Ok(Some(V::F((x - o) * s))),
        _ => Ok(None),
    }
}

/// `scale_offset` decode `x / scale + offset` in the arithmetic of `dt`.
fn so_decode(v: V, dt: Dt, offset: V, scale: V) -> Outcome {
    match (v, offset, scale, dt.kind) {
        (V::I(x), V::I(o), V::I(s), Kind::Int { bits, signed }) => {
            let (lo, hi) = int_range(bits, signed);
            if x % s != 0 {
                return Err(());
            }
            let r = x / s + o;
            if (lo..=hi).contains(&(x / s)) && (lo..=hi).contains(&r) {
                Ok(Some(V::I(r)))
            } else {
                Err(())
            }
        }
        (V::F(x), V::F(o), V::F(s), Kind::Float { bits: 32 }) => {
            Ok(Some(V::F(f64::from(x as f32 / s as f32 + o as f32))))
        }
        (V::F(x), V::F(o), V::F(s), _) => Ok(Some(V::F(x / s + o))),
        _ => Ok(None),
    }
}

/// Encode then decode one element of `dt` through `chain`.
pub fn round_trip(v: V, dt: Dt, chain: &Chain) -> Outcome {
    let mut x = v;
    if let Some((o, s)) = chain.scale_offset {
        match so_encode(x, dt, o, s)? {
            Some(e) => x = e,
            None => return Ok(None),
        }
    }
    if let Some((target, rounding, oor)) = &chain.cast {
        let Some(e) = cast(x, dt, *target, rounding, oor.as_deref())? else {
            return Ok(None);
        };
        let Some(d) = cast(e, *target, dt, rounding, oor.as_deref())? else {
            return Ok(None);
        };
        x = d;
    }
    if let Some((o, s)) = chain.scale_offset {
        match so_decode(x, dt, o, s)? {
            Some(d) => x = d,
            None => return Ok(None),
        }
    }
    Ok(Some(x))
}
