//! Error messages (off the hot path): which step fails for an element, and why.

use super::*;

/// Say which step of the transformation fails for `x`.
pub(super) fn explain(
    direction: Direction,
    data_type: NumericType,
    x: Value,
    off: Value,
    sc: Value,
) -> String {
    match (x, off, sc) {
        (Value::Int(x), Value::Int(off), Value::Int(sc)) => {
            explain_int(direction, data_type, x, off, sc)
        }
        (Value::Float(x), Value::Float(off), Value::Float(sc)) => {
            explain_float(direction, data_type, x, off, sc)
        }
        _ => format!("the result is not representable in {data_type}"),
    }
}

pub(super) fn explain_int(
    direction: Direction,
    data_type: NumericType,
    x: i128,
    off: i128,
    sc: i128,
) -> String {
    let (lo, hi) = data_type.int_range().expect("integer type");
    let check = |step: &str, v: Option<i128>| -> Result<i128, String> {
        match v {
            Some(v) if (lo..=hi).contains(&v) => Ok(v),
            Some(v) => Err(format!(
                "{step} = {v} is outside the range [{lo}, {hi}] of {data_type}"
            )),
            None => Err(format!("{step} overflows {data_type}")),
        }
    };
    let result = match direction {
        Direction::Encode => check("x - offset", x.checked_sub(off))
            .and_then(|d| check("(x - offset) * scale", d.checked_mul(sc))),
        Direction::Decode => {
            if sc != 0 && x % sc != 0 {
                Err(format!(
                    "x / scale = {x} / {sc} is not an integer (decoding is not exact)"
                ))
            } else {
                check("x / scale", x.checked_div(sc))
                    .and_then(|q| check("x / scale + offset", q.checked_add(off)))
            }
        }
    };
    result
        .err()
        .unwrap_or_else(|| format!("the result is not representable in {data_type}"))
}

/// Round `value` to `data_type` (nearest-even); ±infinity if it overflows,
/// `None` if a small float cannot represent it.
#[allow(clippy::cast_possible_truncation)]
pub(super) fn round_float(data_type: NumericType, value: f64) -> Option<f64> {
    match data_type {
        NumericType::Float32 => Some(f64::from(value as f32)),
        // Rounded once from the f64 (see `cast::f16_nearest`).
        NumericType::Float16 => Some(crate::kernels::cast::f16_nearest(value).to_f64()),
        NumericType::BFloat16 => Some(crate::kernels::cast::bf16_nearest(value).to_f64()),
        NumericType::Mini(format) => {
            match format.round_from_f64(value, RoundingMode::NearestEven) {
                MiniRound::Value(bits) => Some(format.to_f64(bits)),
                MiniRound::Overflow { negative } => Some(if negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }),
                MiniRound::NotRepresentable => None,
            }
        }
        _ => Some(value),
    }
}

pub(super) fn explain_float(
    direction: Direction,
    data_type: NumericType,
    x: f64,
    off: f64,
    sc: f64,
) -> String {
    let step = |name: &str, exact: f64| -> Result<f64, String> {
        let shown = Value::Float(exact);
        match round_float(data_type, exact) {
            Some(r) if r.is_finite() || !x.is_finite() => Ok(r),
            _ if exact.is_nan() => Err(format!("{name} is NaN")),
            _ if exact.is_infinite() => Err(format!("{name} overflows {data_type}")),
            Some(_) => Err(format!("{name} = {shown} overflows {data_type}")),
            None => Err(format!(
                "{name} = {shown} is not representable in {data_type}"
            )),
        }
    };
    let result = match direction {
        Direction::Encode => {
            step("x - offset", x - off).and_then(|d| step("(x - offset) * scale", d * sc))
        }
        Direction::Decode => {
            step("x / scale", x / sc).and_then(|q| step("x / scale + offset", q + off))
        }
    };
    result
        .err()
        .unwrap_or_else(|| format!("the result is not representable in {data_type}"))
}
